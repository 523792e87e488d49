"""
Per-node norms of a hierarchy under NHSVM
=========================================

The thesis's unbalanced synthetic hierarchy (a chain of cuts: every level splits off one leaf,
so the deepest leaves sit under many ancestors), at a small size. A leaf's score sums the
scores of the nodes on its path. The hierarchical SVM (``hsvm``) regularises every node alike,
so a deep leaf, whose path has many nodes, gets more capacity than a shallow one; the Normalized
Hierarchical SVM (``nhsvm``) weighs each node by α, with the α along every leaf path summing to 1
(thesis eq. ``beta_1``). The figure shows the norm ‖Wₙ‖ of every node's weight vector under both
models (log scale) and NHSVM's α, against node depth.
"""

import matplotlib.pyplot as plt
import numpy as np

import bicrit
from bicrit.datasets import synthetic_hierarchy

ds = synthetic_hierarchy("unbalanced", n=600, d=30, depth=6, seed=3)
train, test = ds.split("train"), ds.split("test")
depth = np.asarray(ds.hierarchy.depth)
models = {}
for name in ["hsvm", "nhsvm"]:
    m = bicrit.HierarchicalSVM(ds.hierarchy, model=name, C=1.0, max_epochs=15, random_state=0)
    models[name] = m.fit(train.X, train.leaf)
    print(name, "test accuracy", round(float(m.score(test.X, test.leaf)), 3))

# %%
# Node norms ‖Wₙ‖ (left) and NHSVM's node weights α (right), nodes ordered by depth.

order = np.argsort(depth, kind="stable")
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
width = 0.4
x = np.arange(len(order))
for k, (name, m) in enumerate(models.items()):
    norms = np.linalg.norm(m.coef_, axis=1)
    ax1.bar(x + (k - 0.5) * width, norms[order], width, label=name)
ax1.set(xlabel="node (by depth)", ylabel="‖W_n‖", title="per-node norms", yscale="log")
ax1.set_xticks(x, [f"{n}\nd={depth[n]}" for n in order], fontsize=7)
ax1.legend()
ax2.bar(x, models["nhsvm"].alpha_[order], color="tab:orange")
ax2.set(xlabel="node (by depth)", ylabel="α_n", title="NHSVM node weights α")
ax2.set_xticks(x, [f"{n}\nd={depth[n]}" for n in order], fontsize=7)
fig.tight_layout()
plt.show()
