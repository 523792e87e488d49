"""Training end to end on the synthetic assignment data: the native searches drive the Python
oracle during training, every answer is re-checked against enumeration of the permutations, and
the model learns (position accuracy far above chance, 1/n).

* ``test_subgradient_training_with_native_searches`` — a plain Pegasos loop written here around
  ``bicrit.search`` (always runs): the search runs in Rust over ``instance_oracle``.
* ``test_estimator_learns_*`` — the same through bicrit's estimator and a built-in learner
  (``bicrit.StructuredSVM(learner="sgd")``); skipped while this bicrit has no estimator.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import bicrit
import numpy as np
import pytest

from bicrit_assignment import Assignment, make_assignment_data, position_accuracy
from bicrit_assignment.reference import brute_force_ranking, label_points

N_ITEMS = 5
CHANCE = 1.0 / N_ITEMS


def psi_values(surrogate: str, w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """ψ at every permutation's point (m, L): slack (m + 1)·L or margin m + L."""
    _, m, L = label_points(w, x, y)
    return (m + 1.0) * L if surrogate == "slack" else m + L


def brute_optimum(surrogate: str, w: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """max over permutations of ψ (the gold label scores 0, so the optimum is ≥ 0)."""
    return max(0.0, float(np.max(psi_values(surrogate, w, x, y))))


@pytest.fixture(scope="module")
def data() -> tuple[list, list, list, list]:
    X, Y, _ = make_assignment_data(220, N_ITEMS, 6, noise=0.3, random_state=0)
    return X[:140], Y[:140], X[140:], Y[140:]


def test_synthetic_data_is_well_formed() -> None:
    X, Y, w_true = make_assignment_data(10, (3, 6), 4, random_state=1)
    assert len(X) == len(Y) == 10 and w_true.shape == (4,)
    for x, y in zip(X, Y, strict=True):
        n = len(y)
        assert 3 <= n <= 6 and x.shape == (n, n, 4) and sorted(y) == list(range(n))
    Assignment().initialize(X, Y)  # every label is a permutation of its instance
    with pytest.raises(ValueError, match="n_items"):
        make_assignment_data(5, (4, 2))


def test_subgradient_training_with_native_searches(data) -> None:
    Xtr, Ytr, Xte, Yte = data
    s = bicrit.structure("assignment").initialize(Xtr, Ytr)
    psi = bicrit.surrogate("slack")
    rng = np.random.default_rng(0)
    lam, t = 1e-2, 0
    w = np.zeros(s.size_joint_feature)
    warm: list[Any] = [None] * len(Xtr)
    for _ in range(3):
        for i in rng.permutation(len(Xtr)):
            t += 1
            x, y = Xtr[i], Ytr[i]
            r = bicrit.search("convex-hull-kbest", s.instance_oracle(w, x, y), psi, warm=warm[i])
            warm[i] = r
            best = brute_optimum("slack", w, x, y)
            assert r.value == pytest.approx(best, abs=1e-9 * max(1.0, best))
            step = lam * w
            if not r.is_gold:  # ∂ψ/∂h = L at the answer: the slack-rescaled subgradient
                yh = r.label
                step = step + s.loss(yh, y) * (s.joint_feature(x, yh) - s.joint_feature(x, y))
            w = w - step / (lam * (t + 10))
    acc = position_accuracy(Yte, [s.predict_one(w, x) for x in Xte])
    assert acc >= 3 * CHANCE, acc


# --- through the estimator and a built-in learner ------------------------------------------------


@pytest.fixture
def estimator() -> Any:
    cls = getattr(bicrit, "StructuredSVM", None)
    if cls is None:
        pytest.skip("estimator not available in this bicrit")
    return cls


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Records every call the native code makes into the plugin's oracle during training, with a
    copy of the weights it was called with (the learner's current w)."""
    calls: list[dict[str, Any]] = []
    original = Assignment.oracle

    def recording(self: Assignment, w: np.ndarray, x: Any, y_true: Any, coef=None, **query):  # type: ignore[no-untyped-def]
        answers = original(self, w, x, y_true, coef, **query)
        calls.append(
            {
                "w": np.array(w, copy=True),
                "x": x,
                "y": np.asarray(y_true),
                "coef": dict(coef or {}),
                "query": dict(query),
                "answers": answers,
            }
        )
        return answers

    monkeypatch.setattr(Assignment, "oracle", recording)
    yield calls


def _check_recorded_oracle_calls(calls: list[dict[str, Any]], limit: int = 600) -> None:
    """Each recorded oracle answer equals enumeration: values of the k best (after the ban list)
    under the query's primary and tie-break objectives."""
    assert calls, "training never called the plugin's oracle"
    rng = np.random.default_rng(0)
    for c in rng.permutation(len(calls))[:limit]:
        rec = calls[int(c)]
        q = rec["query"]
        perms, p, sec = brute_force_ranking(
            rec["w"],
            rec["x"],
            rec["y"],
            rec["coef"],
            margin_coef=q.get("margin_coef", 1.0),
            tiebreak=q.get("tiebreak"),
        )
        banned = {tuple(int(v) for v in b) for b in q.get("ban") or ()}
        keep = [i for i, perm in enumerate(perms) if tuple(perm) not in banned]
        p, sec = p[keep], sec[keep]
        answers = rec["answers"]
        assert len(answers) == min(q.get("k", 1), len(keep))
        S = rec["x"] @ rec["w"]
        rows = np.arange(len(rec["y"]))
        for rank, a in enumerate(answers):
            m = float(S[rows, a.label].sum() - S[rows, rec["y"]].sum())
            terms = a.terms
            mc = q.get("margin_coef", 1.0)
            got = mc * m + sum(v * terms[t] for t, v in rec["coef"].items())
            assert got == pytest.approx(p[rank], abs=1e-9 * max(1.0, abs(p[rank])))


def _check_searches_at_recorded_weights(
    calls: list[dict[str, Any]], surrogate: str, search: str, limit: int = 150
) -> None:
    """At the (w, x, y) the learner queried, the same native search returns the brute-force
    optimum over all permutations."""
    s = bicrit.structure("assignment")
    seen: set[tuple[bytes, bytes]] = set()
    for rec in list(calls):  # a snapshot: the searches below are recorded too
        key = (rec["w"].tobytes(), np.asarray(rec["x"]).tobytes())
        if key in seen:
            continue
        seen.add(key)
        s.n_features = rec["w"].shape[0]
        r = bicrit.search(search, s.instance_oracle(rec["w"], rec["x"], rec["y"]), surrogate)
        best = brute_optimum(surrogate, rec["w"], rec["x"], rec["y"])
        assert r.value == pytest.approx(best, abs=1e-9 * max(1.0, best))
        if len(seen) >= limit:
            break


@pytest.mark.parametrize(
    ("surrogate", "search"), [("slack", "convex-hull-kbest"), ("margin", "convex-hull")]
)
def test_estimator_learns_with_a_builtin_learner_and_search(
    estimator: Any, recorded: list[dict[str, Any]], data, surrogate: str, search: str
) -> None:
    Xtr, Ytr, Xte, Yte = data
    model = estimator(
        structure="assignment",
        surrogate=surrogate,
        search=search,
        learner="sgd",
        C=1.0,
        max_epochs=10,
        random_state=0,
    )
    assert model.fit(Xtr, Ytr) is model
    pred = model.predict(Xte)
    assert len(pred) == len(Xte)
    assert all(sorted(int(v) for v in p) == list(range(N_ITEMS)) for p in pred)
    acc = position_accuracy(Yte, list(pred))
    assert acc >= 3 * CHANCE, f"{surrogate}/{search}: position accuracy {acc:.3f}"
    float(model.score(Xte, Yte))  # defined for a plugin structure
    _check_recorded_oracle_calls(recorded)
    _check_searches_at_recorded_weights(recorded, surrogate, search)
