"""
The label plane: ψ level sets and what a search queries
=======================================================

Every label y of one training instance is a point (h, g) = (m(y), L(y, yᵢ)): its margin
against the gold label and its loss (the thesis's figures ``fig:all_points`` and
``fig:contour``). A surrogate ψ(h, g) that is quasi-concave and increasing has convex
super-level sets — the grey curves —, and loss-augmented inference looks for the label on the
highest one. The margin-rescaling oracle can only answer ``argmax h + λ·g``: the top of the
cloud along a direction. Each λ-query is a blue line through its answer; the star is the
search's answer.

The points here are the labels of a small chain (5 tokens, 3 states: 243 labels) with random
scores that favour the gold states (a partly trained model), enumerated exactly, with the
Hamming loss.
"""

import itertools

import matplotlib.pyplot as plt
import numpy as np

import bicrit
from bicrit.searches.plot import plot_search

rng = np.random.default_rng(0)
T, S = 5, 3
unary, trans = rng.normal(size=(T, S)), rng.normal(scale=0.5, size=(S, S))
gold = rng.integers(S, size=T)
unary[np.arange(T), gold] += 2.0  # a partly trained model: the gold states score higher
labels = np.array(list(itertools.product(range(S), repeat=T)))


def score(y):
    return unary[np.arange(T), y].sum() + trans[y[:-1], y[1:]].sum()


h = np.array([score(y) - score(gold) for y in labels])  # the margin m(y)
g = (labels != gold).sum(axis=1).astype(float)  # the Hamming loss L(y, y_i)
gold_index = int(np.flatnonzero(g == 0)[0])

# %%
# Slack rescaling ψ = (h + 1)·g with three searches: the convex hull search (exact over the
# convex hull of the points, possibly a fractional answer on a hull edge), its ban-list
# recovery of the best integral label, and the bisecting search of the thesis.

slack = bicrit.surrogate("slack")
fig, axes = plt.subplots(1, 3, figsize=(14, 4.6), sharey=True)
for ax, name in zip(axes, ["convex-hull", "convex-hull-ban", "bisecting"], strict=True):
    oracle = bicrit.PointSetOracle(h, g, gold=gold_index)
    result = bicrit.search(name, oracle, slack)
    plot_search(oracle, slack, result, ax=ax)
    print(f"{name:16s} value {result.value:.4f}  oracle calls {result.calls['total']}")
fig.tight_layout()

# %%
# The brute-force maximum of ψ over the integral labels, for comparison: the ban-list and
# bisecting searches reach it; the convex hull search's value is above it, at a fractional
# point (the diamond) on the hull edge between two labels — the maximum over the hull.
print("max over the labels:", float(np.max(slack.value(h, g))))

# %%
# ProbLoss has curved level sets; the convex hull search handles any quasi-concave increasing
# ψ with the same queries.

probloss = bicrit.surrogate("probloss")
oracle = bicrit.PointSetOracle(h, g, gold=gold_index)
result = bicrit.search("convex-hull-ban", oracle, probloss)
plot_search(oracle, probloss, result)
plt.show()
