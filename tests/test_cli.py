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
    # emotions has 6 labels: edges="auto" keeps the full graph, and says so
    assert "label graph: auto: full graph (15 edges): 6 labels ≤ 16" in out


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
        (["train", "/no/such/file.arff"], "no such file: /no/such/file.arff"),
        (["evaluate", "/no/such/m.bicrit", "./missing.conll"], "no model file"),
        (["train", "--save", "x.bicrit"], "single --surrogate"),
    ],
)
def test_errors_are_one_line_with_nonzero_exit(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


# --- an honest command line ---------------------------------------------------------------------


def test_a_file_without_a_test_set_holds_out_part_of_it(capsys, data_dir, tmp_path) -> None:
    path = data_dir / "conll2002" / "esp.testa"
    argv = ["train", str(path), "--limit", "80", "--epochs", "1", "--surrogate", "margin"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert "test: a held-out 20% of the training data (seed 0, --test-size) (16)" in first
    assert "train: " in first and "(64)" in first
    assert "learner" in out and "bcfw" in out  # SequenceSVM's own default, not an imposed sgd
    assert main([*argv, "--test-split", "testb"]) == 2
    assert "a file has no splits" in capsys.readouterr().err
    test = tmp_path / "t.conll"
    test.write_text("\n".join(path.read_text(encoding="latin-1").splitlines()[:60]) + "\n")
    assert main([*argv, "--test", str(test)]) == 0
    assert "(--test)" in capsys.readouterr().out.splitlines()[0]


def test_every_listed_kind_of_dataset_trains(capsys, data_dir) -> None:
    argv = ["train", "clus_hmc/eisen_FUN", "--limit", "150", "--test-limit", "50"]
    assert main([*argv, "--epochs", "1", "--surrogate", "margin"]) == 0
    out = capsys.readouterr().out
    assert "HierarchicalSVM" in out and "hierarchical F1" in out
    argv = ["train", "nltk_dependency_treebank", "--limit", "30", "--test-limit", "10"]
    assert main([*argv, "--epochs", "1", "--surrogate", "margin"]) == 0
    assert "UAS" in capsys.readouterr().out


def test_tune_prints_the_chosen_c(capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("BICRIT_DATA", str(tmp_path / "none"))
    assert main(["train", "--tune", "--epochs", "3", "--surrogate", "slack", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    c_row = next(line for line in out.splitlines() if line.startswith("C "))
    assert float(c_row.split()[1]) in (0.001, 0.01, 0.1, 1.0, 10.0, 100.0)
    assert "--tune" in out


def test_save_to_a_missing_folder_fails_before_training(capsys, tmp_path) -> None:
    argv = ["train", "--surrogate", "margin", "--save", str(tmp_path / "no" / "m.bicrit")]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "does not exist" in captured.err and captured.out == ""


def test_failed_predict_leaves_the_output_file_as_it_was(capsys, data_dir, tmp_path) -> None:
    model = tmp_path / "m.bicrit"
    argv = ["train", "emotions", "--surrogate", "margin", "--epochs", "1", "--save", str(model)]
    assert main(argv) == 0
    capsys.readouterr()
    out = tmp_path / "pred.jsonl"
    out.write_text("precious\n")
    assert main(["predict", str(model), "yeast", "-o", str(out)]) == 2  # another task shape
    assert out.read_text() == "precious\n"
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_evaluate_on_another_task_names_both(capsys, data_dir, tmp_path) -> None:
    model = tmp_path / "m.bicrit"
    argv = ["train", "emotions", "--surrogate", "margin", "--epochs", "1", "--save", str(model)]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["evaluate", str(model), "ud_english_ewt", "--limit", "5"]) == 2
    err = capsys.readouterr().err
    assert "MultiLabelSVM" in err and "TreebankDataset" in err


def test_reproduce_unknown_is_one_line_exit_2(capsys) -> None:
    assert main(["reproduce", "nosuch"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_reproduce_output_folder_checked_before_the_run(capsys, tmp_path) -> None:
    (tmp_path / "file").write_text("x")
    assert main(["reproduce", "yeast", "--out", str(tmp_path / "file" / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "is a file, not a folder" in captured.err
    assert len(captured.err.strip().splitlines()) == 1


def test_ctrl_c_stops_the_command_marks_it_and_exits_130(capsys, monkeypatch, tmp_path) -> None:
    from bicrit import MultiLabelSVM

    monkeypatch.setenv("BICRIT_DATA", str(tmp_path / "none"))
    original = MultiLabelSVM.fit

    def interrupted_fit(self, X, Y=None, *, callback=None):
        def stop(row):
            if row["epoch"] == 2:
                raise KeyboardInterrupt

        return original(self, X, Y, callback=stop)

    monkeypatch.setattr(MultiLabelSVM, "fit", interrupted_fit)
    assert main(["train", "--epochs", "5"]) == 130
    captured = capsys.readouterr()
    header = next(line for line in captured.out.splitlines() if "margin" in line)
    assert header.split() == ["margin", "(interrupted)"]  # the slack fit never started
    assert "interrupted" in captured.err and len(captured.err.strip().splitlines()) == 2


def test_ctrl_c_before_a_later_fit_s_first_epoch_is_said(capsys, monkeypatch, tmp_path) -> None:
    from bicrit import MultiLabelSVM

    monkeypatch.setenv("BICRIT_DATA", str(tmp_path / "none"))
    original = MultiLabelSVM.fit

    def slack_never_finishes(self, X, Y=None, **kw):
        if self.surrogate == "slack":
            raise KeyboardInterrupt
        return original(self, X, Y, **kw)

    monkeypatch.setattr(MultiLabelSVM, "fit", slack_never_finishes)
    assert main(["train", "--epochs", "2"]) == 130
    captured = capsys.readouterr()
    header = next(line for line in captured.out.splitlines() if "margin" in line)
    assert header.split() == ["margin"]
    assert captured.out.rstrip().endswith(
        "slack (interrupted): stopped before its first epoch finished, not in the table"
    )
    last = captured.err.strip().splitlines()[-1]
    assert last == "bicrit train: interrupted (Ctrl-C): the table shows what finished"


def test_warnings_are_one_line(capsys, monkeypatch, tmp_path) -> None:
    import warnings

    from bicrit import MultiLabelSVM

    monkeypatch.setenv("BICRIT_DATA", str(tmp_path / "none"))
    original = MultiLabelSVM.fit

    def warning_fit(self, X, Y=None, **kw):
        warnings.warn("something to say\nover two lines", UserWarning, stacklevel=2)
        return original(self, X, Y, **kw)

    monkeypatch.setattr(MultiLabelSVM, "fit", warning_fit)
    assert main(["train", "--epochs", "1", "--surrogate", "margin"]) == 0
    err = capsys.readouterr().err
    assert err.strip() == "bicrit train: warning: something to say over two lines"


def test_ctrl_c_before_the_first_epoch_is_one_line_130(capsys, monkeypatch, tmp_path) -> None:
    from bicrit import MultiLabelSVM

    monkeypatch.setenv("BICRIT_DATA", str(tmp_path / "none"))

    def no_epoch(self, X, Y=None, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(MultiLabelSVM, "fit", no_epoch)
    assert main(["train"]) == 130
    err = capsys.readouterr().err
    assert err == "bicrit train: interrupted before the first epoch finished: nothing to report\n"


def test_ctrl_c_landing_in_a_weakref_callback_still_stops_the_command(
    capsys, monkeypatch, tmp_path, ctrl_c
) -> None:
    """A Ctrl-C whose ``KeyboardInterrupt`` is raised inside a weakref callback (as when the
    signal lands in the import system's module-lock callback during a fit's first lazy import)
    cannot propagate: Python reports it as "Exception ignored". The command delivers it again,
    so it still stops, with the usual one line and 130, instead of running on."""
    import time
    import weakref

    from bicrit import MultiLabelSVM

    monkeypatch.setenv("BICRIT_DATA", str(tmp_path / "none"))

    class Referent:
        pass

    def fit(self, X, Y=None, **kw):
        def callback(ref: object) -> None:
            raise KeyboardInterrupt  # what Python's SIGINT handler raises wherever it runs

        referent = Referent()
        ref = weakref.ref(referent, callback)
        del referent  # the callback runs here; its exception cannot propagate
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the work the Ctrl-C should stop
            pass
        raise AssertionError(f"the Ctrl-C was lost ({ref})")

    monkeypatch.setattr(MultiLabelSVM, "fit", fit)
    assert main(["train"]) == 130
    err = capsys.readouterr().err
    assert err == "bicrit train: interrupted before the first epoch finished: nothing to report\n"


@pytest.mark.parametrize("threads", [[], ["--n-jobs", "2"]])
def test_real_ctrl_c_stops_the_whole_default_train(tmp_path, threads: list[str]) -> None:
    """SIGINT sent to a running ``bicrit train`` (a real process, a real signal): exit 130, the
    fit it hit is marked interrupted and is the table's last column (no fit after it), one-line
    messages and no traceback. With ``--n-jobs 2`` the epochs run on the learner's pool and the
    main thread, where Python handles the signal, waits for them.

    The command is the installed ``bicrit`` script, as users run it. Not ``python -m bicrit.cli``:
    under ``-m``, CPython 3.11 reports a handled Ctrl-C as death by SIGINT (-2) whenever the
    signal landed in code run by ``exec``/``eval`` of source text (a dataclass being created by a
    lazy import, say): such a call leaves the interpreter's "unhandled KeyboardInterrupt" flag set
    even though the exception was caught, and ``-m``'s exit path reads it (file scripts exit with
    the code given). A shell shows 130 either way."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    script = Path(sys.executable).with_name("bicrit")
    assert script.exists(), f"the console script is not installed beside {sys.executable}"
    env = {**os.environ, "BICRIT_DATA": str(tmp_path / "none")}
    proc = subprocess.Popen(
        [str(script), "train", "--epochs", "100000", "--tune", *threads],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # Ctrl-C as a terminal delivers it, even when the tests run in a background job
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # the fits start right after this line
    assert first.startswith("train: emotions (bundled)")
    # early, and with --tune (a path of fits per surrogate): the default fits on the bundled set
    # take well under a second on an idle machine (BCFW and the stability stop), so a later
    # signal could find the fits finished and land in the evaluation
    time.sleep(0.15)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert all(line.startswith("bicrit train: ") for line in lines), err
    if "the table shows what finished" not in err:  # the signal came before a fit was reported
        assert lines in (
            ["bicrit train: interrupted before the first epoch finished: nothing to report"],
            ["bicrit train: interrupted while the first fit was evaluated: nothing to report"],
        )
        return
    header = next(line for line in out.splitlines() if "margin" in line or "slack" in line)
    last = out.rstrip().splitlines()[-1]
    if last.startswith("slack (interrupted): "):
        # the slack fit had no finished epoch to show, or its evaluation was cut short
        assert last.endswith(", not in the table")
        assert header.split() == ["margin"]
    else:
        assert header.rstrip().endswith("(interrupted)")
    assert lines[-1] == "bicrit train: interrupted (Ctrl-C): the table shows what finished"


def test_no_test_split_inside_the_training_split(capsys, data_dir) -> None:
    """nltk_dependency_treebank's ``all`` holds its ``test`` files: the default training split
    is ``train``, and ``--split all`` with the official test split is refused."""
    argv = ["train", "nltk_dependency_treebank", "--limit", "20", "--test-limit", "5"]
    assert main([*argv, "--epochs", "1", "--surrogate", "margin"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "nltk_dependency_treebank, train (20)" in first and ", test (5)" in first
    assert main([*argv, "--split", "all"]) == 2
    err = capsys.readouterr().err
    assert "the test split 'test' is part of the training split 'all'" in err
    assert len(err.strip().splitlines()) == 1
