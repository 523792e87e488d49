"""
Convergence against epochs and against oracle calls
===================================================

Slack rescaling on the bundled multi-label set ``emotions`` (6 labels, 72 features), trained
by the three learners that accept it. Each fit's ``history_`` has one row per epoch with the
primal objective ½‖w‖² + C·Σᵢ ℓᵢ and the oracle calls the epoch's searches made. The objective
is measured exactly after each epoch (``objective="exact"``: one more inference pass, not
counted as the learner's calls), so the curves compare like with like.
"""

import matplotlib.pyplot as plt
import numpy as np

import bicrit

train = bicrit.datasets.load_bundled("train")
EPOCHS = 12
histories = {}
for learner in ["sgd", "bcfw", "cutting-plane"]:
    params = {} if learner == "cutting-plane" else {"objective": "exact"}
    model = bicrit.MultiLabelSVM(
        surrogate="slack",
        learner=learner,
        learner_params=params,
        C=0.1,
        max_epochs=EPOCHS,
        tol=None,
        n_iter_no_change=None,
        random_state=0,
    ).fit(train)
    histories[learner] = model.history_
    print(
        learner,
        "epochs:",
        model.history_.height,
        "final objective:",
        round(float(model.history_["objective"][-1]), 3),
    )

# %%
# The objective against epochs, and against the cumulative number of oracle calls.

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
for learner, hist in histories.items():
    objective = hist["objective"].to_numpy()
    calls = np.cumsum(hist["calls"].to_numpy())
    ax1.plot(hist["epoch"].to_numpy(), objective, marker="o", ms=3, label=learner)
    ax2.plot(calls, objective, marker="o", ms=3, label=learner)
ax1.set(xlabel="epoch", ylabel="primal objective", yscale="log", title="against epochs")
ax2.set(
    xlabel="oracle calls (cumulative)",
    ylabel="primal objective",
    yscale="log",
    title="against oracle calls",
)
for ax in (ax1, ax2):
    ax.legend()
fig.tight_layout()
plt.show()
