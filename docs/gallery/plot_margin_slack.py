"""
Margin against slack rescaling on a real set
============================================

The two classic surrogates on the bundled multi-label set ``emotions`` (391 training and 202
test songs, 6 emotions), across a small grid of C, with the full pairwise graph and exact
inference. Each fit is scored on the test split with every multi-label metric of
``model.report``.
"""

import matplotlib.pyplot as plt
import polars as pl

import bicrit

train = bicrit.datasets.load_bundled("train")
test = bicrit.datasets.load_bundled("test")
Cs = [0.01, 0.1, 1.0]
reports = {}
for surrogate in ["margin", "slack"]:
    for C in Cs:
        model = bicrit.MultiLabelSVM(surrogate=surrogate, C=C, max_epochs=20, random_state=0)
        reports[surrogate, C] = model.fit(train).report(test)
print(reports["slack", 0.1])

# %%
# Test metrics against C: higher is better except for the Hamming loss.

metrics = ["subset_accuracy", "jaccard_accuracy", "micro_f1", "hamming_loss"]
fig, axes = plt.subplots(1, len(metrics), figsize=(14, 3.4))
for ax, metric in zip(axes, metrics, strict=True):
    for surrogate, marker in [("margin", "o"), ("slack", "s")]:
        ax.plot(Cs, [reports[surrogate, C][metric] for C in Cs], marker=marker, label=surrogate)
    ax.set(xscale="log", xlabel="C", title=metric)
    ax.legend(fontsize=8)
fig.tight_layout()

# %%
# Every fit's test metrics in one table (C is not chosen here: that would be tuning on the
# test set; ``C="auto"`` chooses it on held-out training data).

table = pl.DataFrame(
    [
        {"surrogate": s, "C": C, **{m: round(float(reports[s, C][m]), 3) for m in metrics}}
        for s, C in reports
    ]
)
print(table)
plt.show()
