"""The ``bicrit datasets`` command."""

from __future__ import annotations

import pytest

from bicrit.cli import main
from bicrit.datasets import names


def test_lists_every_dataset_with_counts(data_dir, capsys):
    assert main(["datasets", "--root", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"data root: {data_dir}"
    for name in names():
        assert f"\n{name} " in out
    assert "train 1500 / test 917 instances" in out
    assert " no " not in out  # every folder present
    assert str(data_dir / "clus_hmc" / "datasets_GO" / "seq_GO") in out
    assert "bundled: emotions" in out


def test_without_data(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("BICRIT_DATA", str(tmp_path / "absent"))
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("data root: not found (set BICRIT_DATA")
    assert "yeast" in out and "bundled: emotions" in out


def test_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["datasets", "--help"])
    assert exc.value.code == 0
    assert "usage: bicrit datasets" in capsys.readouterr().out
