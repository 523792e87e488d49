"""The command line: every command has --help; plugins lists the built-ins."""

from __future__ import annotations

import pytest

from bicrit.cli import build_parser, main


def test_plugins_lists_builtins(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "multiclass" in out and "bicrit" in out


@pytest.mark.parametrize(
    "command", [[], *[[c] for c in build_parser()._subparsers._group_actions[0].choices]]
)
def test_help_everywhere(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([*command, "--help"])
    assert info.value.code == 0
    assert "usage: bicrit" in capsys.readouterr().out


def test_train_default_compares_margin_and_slack_on_the_bundled_set(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("BICRIT_DATA", str(tmp_path / "no-data-here"))  # bundled data only
    assert main(["train", "--epochs", "3"]) == 0
    out = capsys.readouterr().out
    assert "emotions (bundled)" in out
    header = next(line for line in out.splitlines() if "margin" in line)
    assert header.split() == ["margin", "slack"]
    for row in ("test subset acc", "test Hamming loss", "fit time", "calls per inference"):
        assert row in out


def test_train_evaluate_predict_on_a_named_dataset(
    capsys: pytest.CaptureFixture[str], data_dir, tmp_path
) -> None:
    import json

    import numpy as np

    from bicrit import datasets

    model = tmp_path / "m.bicrit"
    args = ["train", "emotions", "--surrogate", "slack", "--epochs", "2", "--save", str(model)]
    assert main(args) == 0
    assert "saved" in capsys.readouterr().out and model.is_file()
    assert main(["evaluate", str(model), "emotions", "--split", "test"]) == 0
    assert "Hamming loss" in capsys.readouterr().out
    out = tmp_path / "pred.jsonl"
    assert main(["predict", str(model), "emotions", "--limit", "7", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    test = datasets.load("emotions", "test", root=data_dir)
    assert [r["index"] for r in rows] == list(range(7))
    for r in rows:
        assert set(r["y"]) <= {0, 1} and len(r["y"]) == test.Y.shape[1]
        assert r["labels"] == [n for n, v in zip(test.label_names, r["y"], strict=True) if v]
    import bicrit

    P = bicrit.load(model).predict(test.X[:7])
    assert np.array_equal(P, np.array([r["y"] for r in rows]))


def test_train_and_predict_sequences(capsys: pytest.CaptureFixture[str], data_dir, tmp_path):
    import json

    model = tmp_path / "ner.bicrit"
    args = ["train", "conll2002/esp", "--split", "testa", "--limit", "60", "--test-limit", "30"]
    assert main([*args, "--epochs", "2", "--surrogate", "margin", "--save", str(model)]) == 0
    assert "entity micro-F1" in capsys.readouterr().out
    out = tmp_path / "ner.jsonl"
    assert main(["predict", str(model), "conll2002/esp", "--limit", "3", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3 and all(len(r["tokens"]) == len(r["tags"]) for r in rows)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["evaluate", "/nonexistent/model.bicrit", "emotions"], "no model file"),
        (["train", "no-such-dataset"], "unknown dataset"),
        (["train", "--save", "x.bicrit"], "single --surrogate"),
    ],
)
def test_errors_are_one_line_with_nonzero_exit(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
