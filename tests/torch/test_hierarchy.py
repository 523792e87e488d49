"""bicrit.torch's hierarchy loss and the MLP trained with it (issue 18, item 4): the loss is the
brute-force maximum of ψ over every ancestor-closed node set of tiny trees and DAGs (with
asymmetric per-node costs), its gradient passes finite differences and equals bicrit.scores',
the op passes ``torch.library.opcheck``; the MLP's node scores are coherent with the hierarchy
and its training learns a non-linear rule that no linear node score can, above the frequency
prior. Skipped when PyTorch is not installed."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import bicrit  # noqa: E402
import bicrit.torch as bt  # noqa: E402
from bicrit import scores  # noqa: E402
from bicrit.errors import InvalidInputError, InvalidParameterError  # noqa: E402
from bicrit.hierarchy import Hierarchy  # noqa: E402
from bicrit.metrics.hierarchy import au_prc  # noqa: E402
from bicrit.torch import _ops  # noqa: E402
from bicrit.torch.hierarchical_mlp import HierarchicalMLP  # noqa: E402
from bicrit.torch.losses import _config  # noqa: E402

from ..scores.brute import surrogate  # noqa: E402


@pytest.fixture(autouse=True)
def _one_torch_thread():
    # tiny networks: OpenMP barriers of several threads cost far more than they save, and on a
    # loaded machine spinning threads turn a 2 s fit into a minute
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


TREE = [[], [0], [0], [1], [1], [2]]
# a DAG: node 3 has two parents (1 and 2); 5 hangs under 3
DAG = [[], [0], [0], [1, 2], [2], [3]]


def _closed_sets(parents):
    """Every ancestor-closed node set containing the root 0, as 0/1 tuples."""
    M = len(parents)
    return [
        y
        for y in itertools.product([0, 1], repeat=M)
        if y[0] == 1 and all(all(y[p] for p in parents[v]) for v in range(M) if y[v])
    ]


def _case(parents, seed, b=4):
    rng = np.random.default_rng(seed)
    M = len(parents)
    lam = rng.uniform(0.2, 2.0, size=M)
    mu = rng.uniform(0.2, 2.0, size=M)
    st = bicrit.structure(
        "hierarchy",
        hierarchy=parents,
        root=0,
        node_loss_weight=lam,
        node_miss_weight=mu,
        n_features=1,
    )
    labels = _closed_sets(parents)
    gold = np.array([labels[i] for i in rng.integers(0, len(labels), size=b)])
    S = rng.normal(size=(b, M))
    return st, labels, gold, S, lam, mu


def _brute(name, labels, gold, S, lam, mu):
    psi = surrogate(name)
    out = []
    for s, g in zip(S, gold, strict=True):
        best = -np.inf
        for y in labels:
            yv = np.array(y)
            m = float(s @ yv - s @ g)
            # costs of the non-root nodes: λ for a node wrongly in y, μ for a missed one
            loss = float(np.sum((lam * (yv > g) + mu * (yv < g))[1:]))
            best = max(best, float(psi.value(m, loss)))
        out.append(best)
    return np.array(out)


@pytest.mark.parametrize("parents", [TREE, DAG], ids=["tree", "dag"])
@pytest.mark.parametrize("name", ["margin", "slack", "probloss"])
def test_hierarchy_loss_is_the_brute_force_maximum(parents, name):
    st, labels, gold, S, lam, mu = _case(parents, hash((len(parents[3]), name)) % 2**32)
    t = torch.tensor(S, requires_grad=True)
    got = bt.hierarchy_loss(t, torch.tensor(gold), structure=st, surrogate=name, reduction="none")
    np.testing.assert_allclose(
        got.detach().numpy(), _brute(name, labels, gold, S, lam, mu), rtol=1e-9, atol=1e-12
    )
    # and the gradient is bicrit.scores' (checked against finite differences in tests/scores)
    got.sum().backward()
    ref = scores.loss("hierarchy", S, gold, surrogate=name, structure=st)
    np.testing.assert_allclose(t.grad.numpy(), ref.grad["scores"], atol=1e-12)


@pytest.mark.parametrize("parents", [TREE, DAG], ids=["tree", "dag"])
def test_hierarchy_gradcheck(parents):
    st, _, gold, S, _, _ = _case(parents, 7)
    t = torch.tensor(S, requires_grad=True)
    g = torch.tensor(gold)
    for name in ("margin", "slack"):
        assert torch.autograd.gradcheck(
            lambda s, name=name: bt.hierarchy_loss(
                s, g, structure=st, surrogate=name, reduction="sum"
            ),
            (t,),
            eps=1e-6,
            atol=1e-5,
        )


def test_hierarchy_opcheck_module_and_errors():
    st, _, gold, S, _, _ = _case(DAG, 3)
    t = torch.tensor(S, requires_grad=True)
    cfg = _config("margin", "auto", None, None, structure=_ops.register_object(st._native))
    torch.library.opcheck(torch.ops.bicrit.hierarchy_loss.default, (t, torch.tensor(gold), cfg))
    mod = bt.HierarchyLoss(st, reduction="sum")
    torch.testing.assert_close(
        mod(t, torch.tensor(gold)),
        bt.hierarchy_loss(t, torch.tensor(gold), structure=st, reduction="sum"),
    )
    with pytest.raises(InvalidInputError, match="one column per node"):
        bt.hierarchy_loss(t[:, :4], torch.tensor(gold)[:, :4], structure=st)
    with pytest.raises(InvalidInputError, match="hierarchy structure"):
        bt.hierarchy_loss(t, torch.tensor(gold), structure=None)
    with pytest.raises(InvalidInputError, match="gold"):
        bt.hierarchy_loss(t, torch.tensor(gold)[:2], structure=st)


def _xor_data(n, seed):
    """Two features; node 1 "same sign" (XOR: no linear score ranks it), node 2 "different
    signs" and its child 3 "different signs, first feature positive"."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    Y = [[1] if a * b > 0 else ([2, 3] if a > 0 else [2]) for a, b in X]
    return X, [np.array(y) for y in Y]


def test_mlp_learns_a_rule_no_linear_node_score_can():
    h = Hierarchy(["root", "same", "diff", "first"], [(), (0,), (0,), (2,)], root=0)
    X, Y = _xor_data(400, 0)
    Xt, Yt = _xor_data(400, 1)
    m = HierarchicalMLP(
        h, hidden=(32,), dropout=0.0, max_epochs=20, patience=20, lr=1e-2, random_state=0
    ).fit(X, Y)
    S = m.node_scores(Xt)
    excl = np.array([0])
    ap = au_prc(Yt, S, exclude=excl)
    freq = np.zeros(4)
    for y in Y:
        freq[y] += 1
    prior = au_prc(Yt, np.tile(freq / len(Y), (len(Yt), 1)), exclude=excl)
    # the linear HSVM on the same data: the gap the encoder closes
    lin = bicrit.HierarchicalSVM(h, model="hsvm", C=1.0, max_epochs=20, random_state=0).fit(X, Y)
    ap_lin = au_prc(Yt, lin.node_scores(Xt), exclude=excl)
    assert ap > 0.95 and prior < 0.6
    assert ap > ap_lin + 0.1
    # the training loss went down, and the kept epoch is the best held-out one
    losses = [r["loss"] for r in m.history_]
    assert losses[-1] < 0.5 * losses[0]
    assert m.best_epoch_ == 1 + int(np.argmax([r["stop_au_prc"] for r in m.history_]))
    # predictions are the labels the node scores say (δ > 0), ancestor-closed
    P = m.predict(Xt)
    assert np.mean([np.array_equal(p, y) for p, y in zip(P, Yt, strict=True)]) > 0.9


@pytest.mark.parametrize("parents", [TREE, DAG], ids=["tree", "dag"])
def test_mlp_node_scores_are_coherent(parents):
    M = len(parents)
    names = [f"n{v}" for v in range(M)]
    h = Hierarchy(names, [tuple(p) for p in parents], root=0)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 3))
    labels = [np.flatnonzero(np.array(y))[1:] for y in _closed_sets(parents)]
    labels = [y for y in labels if y.size]
    Y = [labels[i] for i in rng.integers(0, len(labels), size=80)]
    m = HierarchicalMLP(h, hidden=(8,), max_epochs=3, multilabel_loss="weighted").fit(X, Y)
    S = m.node_scores(X)
    assert np.isposinf(S[:, 0]).all()
    for v, ps in enumerate(parents):
        for p in ps:
            assert (S[:, p] >= S[:, v] - 1e-9).all()
    # the calibration works on it as on the linear models
    from bicrit.hierarchy import NodeCalibration

    P = NodeCalibration(m).fit_scores(m.stop_scores_, m.stop_labels_).predict_proba_scores(S)
    assert P.shape == S.shape and np.all((P >= 0) & (P <= 1))


def test_mlp_parameter_errors():
    h = Hierarchy(["r", "a"], [(), (0,)], root=0)
    X = np.zeros((4, 2))
    Y = [np.array([1])] * 4
    with pytest.raises(InvalidParameterError, match="multilabel_loss"):
        HierarchicalMLP(h, multilabel_loss="leaf").fit(X, Y)
    with pytest.raises(InvalidParameterError, match="stop_fraction"):
        HierarchicalMLP(h, stop_fraction=0.0).fit(X, Y)
    with pytest.raises(InvalidInputError, match="labels"):
        HierarchicalMLP(h).fit(X, Y[:3])
