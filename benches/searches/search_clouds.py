"""Point clouds for the search benchmarks: simulated multi-label training snapshots, and the
optional recorded format that the learners will write.

Simulated clouds (``simulated``): an instance with K binary labels and per-label scores s_j; each
of the 2^K labels y is the point (h, g) = (m(y), L(y)) with m(y) = Σ_j (y_j − y_ij)·s_j and
L = Hamming(y, y_i) — the shape of the thesis's Figure `fig:all_points` (yeast, 2^14 labels).
``stage`` sets how separated the gold label is: "early" (margins ~ N(0, 1)), "mid", "late"
(most labels with m < −1, as late in training). The gold label is the point (0, 0).

Recorded clouds (``recorded``): a ``.npz`` file given by ``BICRIT_RECORDED_CLOUDS`` with
* ``h``, ``g``: float arrays, the points of all instances concatenated, in the surrogate's
  coordinates (h = m, g = L for margin/slack/β/ProbLoss);
* ``offsets``: int array of length n_instances + 1; instance i is ``[offsets[i], offsets[i+1])``;
* ``gold`` (optional): int array, index of the gold label within each instance (−1: none;
  default: the point (0, 0) if present);
* ``epoch`` (optional): int array, the epoch of each snapshot; snapshots of the same
  ``instance`` id (optional int array ``instance``) in increasing epoch order are warm-started
  from each other, with labels matched by position within the instance.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

STAGES = {"early": (0.0, 1.0), "mid": (-0.6, 0.8), "late": (-1.5, 0.6)}


@dataclass
class Cloud:
    """One instance: the label points and the gold index."""

    h: np.ndarray
    g: np.ndarray
    gold: int | None
    instance: int = 0
    epoch: int = 0


def _labels(k: int) -> np.ndarray:
    return np.array(list(itertools.product((0, 1), repeat=k)), dtype=float)


def simulated(n: int, k: int = 10, stage: str = "mid", seed: int = 0) -> list[Cloud]:
    """``n`` simulated instances with 2^k labels each."""
    rng = np.random.default_rng(seed)
    ys = _labels(k)
    mu, sd = STAGES[stage]
    out = []
    for i in range(n):
        gold = rng.integers(0, 2, k).astype(float)
        # A label's per-position score difference: negative mean = the gold bit is preferred.
        diff = rng.normal(mu, sd, k)
        flips = np.abs(ys - gold)
        m = flips @ diff
        loss = flips.sum(axis=1)
        gi = int(np.flatnonzero(loss == 0)[0])
        out.append(Cloud(h=m, g=loss, gold=gi, instance=i))
    return out


def uniform(n: int, m: int = 200, seed: int = 0) -> list[Cloud]:
    """``n`` unstructured instances: ``m`` points uniform in [−2, 1] × [0, 5], and gold (0, 0)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        h = np.append(rng.uniform(-2.0, 1.0, m), 0.0)
        g = np.append(rng.uniform(0.0, 5.0, m), 0.0)
        out.append(Cloud(h=h, g=g, gold=m, instance=i))
    return out


def perturbed(clouds: list[Cloud], noise: float, seed: int = 1) -> list[Cloud]:
    """The same instances one SGD step later: every per-position score moves by N(0, noise)."""
    rng = np.random.default_rng(seed)
    out = []
    for c in clouds:
        k = round(np.log2(len(c.h)))
        ys = _labels(k)
        gold = ys[c.gold]
        flips = np.abs(ys - gold)
        dm = flips @ rng.normal(0.0, noise, k)
        out.append(Cloud(h=c.h + dm, g=c.g, gold=c.gold, instance=c.instance, epoch=c.epoch + 1))
    return out


def recorded(path: str | os.PathLike | None = None) -> list[Cloud] | None:
    """The clouds of the file in ``BICRIT_RECORDED_CLOUDS`` (or ``path``), or None."""
    path = path or os.environ.get("BICRIT_RECORDED_CLOUDS")
    if not path or not Path(path).is_file():
        return None
    z = np.load(path)
    h, g, off = z["h"], z["g"], z["offsets"]
    n = len(off) - 1
    gold = z["gold"] if "gold" in z else np.full(n, -2)
    epoch = z["epoch"] if "epoch" in z else np.zeros(n, int)
    inst = z["instance"] if "instance" in z else np.arange(n)
    out = []
    for i in range(n):
        hi, gi = h[off[i] : off[i + 1]], g[off[i] : off[i + 1]]
        if gold[i] == -2:
            zero = np.flatnonzero((hi == 0) & (gi == 0))
            gidx = int(zero[0]) if len(zero) else None
        else:
            gidx = None if gold[i] < 0 else int(gold[i])
        out.append(Cloud(h=hi, g=gi, gold=gidx, instance=int(inst[i]), epoch=int(epoch[i])))
    return out
