"""bicrit.torch: the losses equal bicrit.scores' (themselves checked against brute force in
tests/scores), gradients pass torch.autograd.gradcheck (finite differences), the custom ops pass
torch.library.opcheck and run under torch.compile, masks and reductions behave as documented, and
bad shapes, dtypes and devices raise clear errors. Skipped when PyTorch is not installed."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import bicrit.torch as bt  # noqa: E402
from bicrit import scores  # noqa: E402
from bicrit.errors import InvalidInputError, InvalidParameterError  # noqa: E402
from bicrit.torch import _ops  # noqa: E402
from bicrit.torch.losses import _config  # noqa: E402

SURROGATES = ["margin", "slack", "probloss", "log", "microf1"]


def _chain(seed=0, b=3, t=4, s=3, per_step=False, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    u = torch.randn(b, t, s, generator=g, dtype=dtype, requires_grad=True)
    shape = (b, t - 1, s, s) if per_step else (s, s)
    tr = torch.randn(*shape, generator=g, dtype=dtype, requires_grad=True)
    gold = torch.randint(0, s, (b, t), generator=g)
    lengths = torch.tensor([t] + [max(1, t - 1 - i) for i in range(b - 1)])
    return u, tr, gold, lengths


@pytest.mark.parametrize("name", SURROGATES)
@pytest.mark.parametrize("search", ["auto", "convex-hull"])
def test_chain_loss_equals_numpy_scores(name, search):
    u, tr, gold, lengths = _chain(1)
    start = torch.randn(3, dtype=torch.float64)
    got = bt.chain_loss(
        u,
        tr,
        gold,
        lengths=lengths,
        start=start,
        surrogate=name,
        search=search,
        reduction="none",
        outside=[0],
    )
    ref = scores.loss(
        "chain",
        {"unary": u.detach().numpy(), "transitions": tr.detach().numpy(), "start": start.numpy()},
        gold.numpy(),
        surrogate=name,
        search=search,
        lengths=lengths.numpy(),
        outside=[0],
    )
    np.testing.assert_allclose(got.detach().numpy(), ref.loss, rtol=1e-12)
    got.sum().backward()
    np.testing.assert_allclose(u.grad.numpy(), ref.grad["unary"], atol=1e-12)
    np.testing.assert_allclose(tr.grad.numpy(), ref.grad["transitions"], atol=1e-12)


@pytest.mark.parametrize("name", ["margin", "slack", "probloss"])
@pytest.mark.parametrize("per_step", [False, True])
def test_chain_gradcheck(name, per_step):
    u, tr, gold, lengths = _chain(2, per_step=per_step)
    start = torch.randn(3, dtype=torch.float64, requires_grad=True)
    end = torch.randn(3, dtype=torch.float64, requires_grad=True)

    def f(u, tr, start, end):
        return bt.chain_loss(
            u, tr, gold, lengths=lengths, start=start, end=end, surrogate=name, reduction="sum"
        )

    assert torch.autograd.gradcheck(f, (u, tr, start, end), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("name", ["margin", "slack", "probloss"])
@pytest.mark.parametrize("projective", [False, True])
def test_tree_gradcheck_and_equals_numpy(name, projective):
    g = torch.Generator().manual_seed(4)
    b, n, r = 2, 4, 3
    arcs = torch.randn(b, n + 1, n + 1, generator=g, dtype=torch.float64, requires_grad=True)
    labels = torch.randn(b, n + 1, n + 1, r, generator=g, dtype=torch.float64, requires_grad=True)
    heads = torch.tensor([[2, 0, 2, 3], [0, 1, 2, 0]])
    rels = torch.randint(0, r, (b, n), generator=g)
    lengths = torch.tensor([4, 3])

    def f(arcs, labels):
        return bt.tree_loss(
            arcs,
            heads,
            lengths=lengths,
            labels=labels,
            rels=rels,
            surrogate=name,
            projective=projective,
            reduction="none",
        )

    ref = scores.loss(
        "tree",
        {"arcs": arcs.detach().numpy(), "labels": labels.detach().numpy()},
        {"heads": heads.numpy(), "rels": rels.numpy()},
        surrogate=name,
        lengths=lengths.numpy(),
        projective=projective,
    )
    np.testing.assert_allclose(f(arcs, labels).detach().numpy(), ref.loss, rtol=1e-12)
    assert torch.autograd.gradcheck(
        lambda a, lab: f(a, lab).sum(), (arcs, labels), eps=1e-6, atol=1e-5
    )


@pytest.mark.parametrize("inference", ["exact", "relaxed"])
def test_multilabel_gradcheck(inference):
    g = torch.Generator().manual_seed(6)
    unary = torch.randn(3, 4, generator=g, dtype=torch.float64, requires_grad=True)
    pair = torch.randn(3, 2, 2, generator=g, dtype=torch.float64, requires_grad=True)
    gold = torch.randint(0, 2, (3, 4), generator=g)
    edges = [[0, 1], [1, 2], [2, 3]]

    def f(unary, pair):
        return bt.multilabel_loss(
            unary,
            gold,
            pairwise=pair,
            edges=edges,
            surrogate="slack",
            inference=inference,
            reduction="sum",
        )

    assert torch.autograd.gradcheck(f, (unary, pair), eps=1e-6, atol=1e-5)
    m = bt.MultiLabelLoss(surrogate="slack", edges=edges, inference=inference, reduction="sum")
    assert float(m(unary, gold, pair).detach()) == pytest.approx(float(f(unary, pair).detach()))


def test_multiclass_gradcheck_and_module():
    g = torch.Generator().manual_seed(8)
    s = torch.randn(5, 4, generator=g, dtype=torch.float64, requires_grad=True)
    gold = torch.randint(0, 4, (5,), generator=g)
    assert torch.autograd.gradcheck(
        lambda s: bt.multiclass_loss(s, gold, surrogate="probloss"), (s,), eps=1e-6, atol=1e-5
    )
    # margin rescaling on multiclass is the Crammer-Singer hinge
    hinge = (s + (torch.arange(4) != gold.unsqueeze(1)).double()).max(1).values - s.gather(
        1, gold[:, None]
    )[:, 0]
    got = bt.MulticlassLoss(reduction="none")(s, gold)
    torch.testing.assert_close(got, hinge)


def test_opcheck_every_op():
    u, tr, gold, lengths = _chain(3)
    cfg = _config("slack", "auto", None, None, task_loss="hamming")
    torch.library.opcheck(
        torch.ops.bicrit.chain_loss.default, (u, tr, None, None, gold, lengths, cfg)
    )
    arcs = torch.randn(2, 4, 4, dtype=torch.float64, requires_grad=True)
    heads = torch.tensor([[0, 1, 2], [2, 0, 0]])
    cfg = _config(
        "probloss", "auto", None, None, projective=False, multi_root=False, label_weight=1.0
    )
    torch.library.opcheck(
        torch.ops.bicrit.tree_loss.default, (arcs, None, heads, None, torch.tensor([3, 2]), cfg)
    )
    unary = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    pair = torch.randn(1, 2, 2, dtype=torch.float64, requires_grad=True)
    cfg = _config("margin", "auto", None, None, inference="exact", solver="qpbo")
    torch.library.opcheck(
        torch.ops.bicrit.multilabel_loss.default,
        (unary, pair, torch.tensor([[1, 0, 1], [0, 1, 1]]), torch.tensor([[0, 2]]), cfg),
    )
    s = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    torch.library.opcheck(
        torch.ops.bicrit.multiclass_loss.default,
        (s, torch.tensor([0, 1, 3]), _config("slack", "auto", None, None)),
    )


def test_torch_compile_smoke():
    u, tr, gold, lengths = _chain(5)
    loss_fn = bt.ChainLoss(surrogate="slack", reduction="mean")

    def step(u, tr):
        return loss_fn(u * 2.0, tr, gold, lengths=lengths)

    eager = step(u, tr)
    compiled = torch.compile(step, backend="eager")(u, tr)
    torch.testing.assert_close(compiled, eager)
    compiled.backward()
    assert u.grad is not None and torch.isfinite(u.grad).all()


def test_float32_and_mask_and_reductions():
    u, tr, gold, lengths = _chain(6, dtype=torch.float32)
    mask = torch.arange(4).unsqueeze(0) < lengths.unsqueeze(1)
    a = bt.chain_loss(u, tr, gold, lengths=lengths, reduction="none")
    b = bt.chain_loss(u, tr, gold, mask=mask, reduction="none")
    assert a.dtype == torch.float32
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(bt.chain_loss(u, tr, gold, mask=mask, reduction="sum"), a.sum())
    torch.testing.assert_close(bt.chain_loss(u, tr, gold, mask=mask, reduction="mean"), a.mean())
    torch.testing.assert_close(
        bt.chain_loss(u, tr, gold, mask=mask, reduction="token_mean"), a.sum() / lengths.sum()
    )
    # gold past a length is ignored, whatever it holds (e.g. −100 padding)
    g2 = gold.clone()
    g2[1, int(lengths[1]) :] = -100
    torch.testing.assert_close(bt.chain_loss(u, tr, g2, mask=mask, reduction="none"), a)


def test_decoders_match_numpy_and_pad_with_minus_one():
    u, tr, _, lengths = _chain(7, b=3, t=5, s=4, per_step=True)
    tags = bt.chain_decode(u, tr, lengths=lengths)
    ref = scores.decode(
        "chain",
        {"unary": u.detach().numpy(), "transitions": tr.detach().numpy()},
        lengths=lengths.numpy(),
    )
    for i, n in enumerate(lengths.tolist()):
        assert tags[i, :n].tolist() == ref["tags"][i, :n].tolist()
        assert (tags[i, n:] == -1).all()
    kt, ks = bt.chain_kbest(u, tr, 3, lengths=lengths)
    assert kt.shape == (3, 3, 5) and ks.shape == (3, 3)
    assert torch.all(ks[:, :-1] >= ks[:, 1:])
    torch.testing.assert_close(kt[:, 0], tags)
    arcs = torch.randn(2, 5, 5, dtype=torch.float64)
    h = bt.tree_decode(arcs, lengths=torch.tensor([4, 2]), projective=True)
    ref = scores.decode("tree", arcs.numpy(), lengths=np.array([4, 2]), projective=True)
    assert h[0].tolist() == ref["heads"][0].tolist()
    assert h[1, 2:].tolist() == [-1, -1]
    s = torch.randn(4, 3)
    assert bt.multiclass_decode(s).tolist() == s.argmax(1).tolist()
    y = bt.multilabel_decode(torch.randn(2, 3), pairwise=torch.randn(1, 2, 2), edges=[[0, 1]])
    assert y.shape == (2, 3) and set(y.unique().tolist()) <= {0, 1}


def test_python_surrogate_object_works():
    class Hinge:
        name = "my-margin"

        def value(self, h, g):
            return h + g

        def grad(self, h, g):
            return (1.0, 1.0)

    u, tr, gold, lengths = _chain(8)
    a = bt.chain_loss(u, tr, gold, lengths=lengths, surrogate=Hinge(), search="convex-hull-ban")
    b = bt.chain_loss(u, tr, gold, lengths=lengths, surrogate="margin")
    torch.testing.assert_close(a, b)


def test_bad_inputs_raise_clear_errors():
    u, tr, gold, _lengths = _chain(9)
    with pytest.raises(InvalidInputError, match="unary must be 3-D"):
        bt.chain_loss(u[0], tr, gold)
    with pytest.raises(InvalidInputError, match="floating-point"):
        bt.chain_loss(gold.unsqueeze(-1), tr, gold)
    with pytest.raises(InvalidInputError, match="transitions must have shape"):
        bt.chain_loss(u, tr[:2], gold)
    with pytest.raises(InvalidInputError, match="dtype"):
        bt.chain_loss(u, tr.float(), gold)
    with pytest.raises(InvalidInputError, match="gold must be an integer tensor"):
        bt.chain_loss(u, tr, gold.double())
    with pytest.raises(InvalidInputError, match="gold must have shape"):
        bt.chain_loss(u, tr, gold[:, :2])
    with pytest.raises(InvalidInputError, match="lengths must be between"):
        bt.chain_loss(u, tr, gold, lengths=torch.tensor([5, 1, 1]))
    with pytest.raises(InvalidInputError, match="prefix"):
        bt.chain_loss(u, tr, gold, mask=torch.tensor([[1, 0, 1, 1]] * 3, dtype=torch.bool))
    with pytest.raises(InvalidInputError, match="tag 7"):
        bt.chain_loss(u, tr, torch.full_like(gold, 7))
    with pytest.raises(InvalidInputError, match="meta"):
        bt.chain_loss(u, tr, gold.to("meta"))
    with pytest.raises(InvalidParameterError, match="reduction"):
        bt.ChainLoss(reduction="avg")
    with pytest.raises(InvalidInputError, match="non-finite"):
        bt.chain_loss(u.detach() * float("nan"), tr, gold)
    with pytest.raises(InvalidInputError, match="arcs must have shape"):
        bt.tree_loss(torch.randn(2, 3, 4, dtype=torch.float64), torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(InvalidInputError, match=r"exactly one root child|cycle|root"):
        bt.tree_loss(torch.randn(1, 3, 3, dtype=torch.float64), torch.tensor([[0, 0]]))
    with pytest.raises(InvalidInputError, match="edges"):
        bt.multilabel_loss(
            torch.randn(2, 3),
            torch.zeros(2, 3, dtype=torch.long),
            pairwise=torch.randn(1, 2, 2),
            edges=[[0, 5]],
        )


def test_objects_registry_is_reused():
    class S:
        def value(self, h, g):
            return (h + 1) * g

        def grad(self, h, g):
            return (g, h + 1)

    s = S()
    assert _ops.register_object(s) == _ops.register_object(s)


@pytest.mark.parametrize("name", ["slack", "probloss"])
def test_chain_and_tree_losses_with_ids_match_the_cold_ones_over_epochs(name):
    """Warm starts across batches (``ids``): the same losses and gradients as without them, in
    a loop whose scores move between visits; the module's cache fills up and is used."""
    u, tr, gold, lengths = _chain(11, b=4, t=5, s=3)
    warm, cold = bt.ChainLoss(surrogate=name), bt.ChainLoss(surrogate=name)
    ids = torch.tensor([10, 11, 12, 13])
    for epoch in range(3):
        with torch.no_grad():
            u.add_(0.3 * torch.randn_like(u))
        got = warm(u, tr, gold, lengths=lengths, ids=ids)
        (gu_w, gt_w) = torch.autograd.grad(got, (u, tr))
        want = cold(u, tr, gold, lengths=lengths)
        (gu_c, gt_c) = torch.autograd.grad(want, (u, tr))
        torch.testing.assert_close(got, want, msg=f"epoch {epoch}")
        torch.testing.assert_close(gu_w, gu_c)
        torch.testing.assert_close(gt_w, gt_c)
    assert len(warm.warm_cache) == 4 and warm.warm_cache.hits == 8
    arcs = torch.randn(3, 5, 5, dtype=torch.float64, requires_grad=True)
    heads = torch.tensor([[0, 1, 2, 3], [2, 0, 2, 3], [0, 1, 1, 3]])
    lens = torch.tensor([4, 3, 4])
    tw = bt.TreeLoss(surrogate=name, projective=True)
    for _ in range(2):
        with torch.no_grad():
            arcs.add_(0.3 * torch.randn_like(arcs))
        got = tw(arcs, heads, lengths=lens, ids=torch.arange(3))
        want = bt.tree_loss(arcs, heads, lengths=lens, surrogate=name, projective=True)
        torch.testing.assert_close(got, want)
    assert tw.warm_cache.hits == 3


def test_ids_without_a_cache_or_of_the_wrong_shape_raise():
    u, tr, gold, _ = _chain(12)
    with pytest.raises(InvalidInputError, match="warm_cache"):
        bt.chain_loss(u, tr, gold, surrogate="slack", ids=torch.arange(3))
    with pytest.raises(InvalidInputError, match=r"ids must have shape \[3\]"):
        bt.ChainLoss(surrogate="slack")(u, tr, gold, ids=torch.arange(2))
    with pytest.raises(InvalidInputError, match="integer"):
        bt.ChainLoss(surrogate="slack")(u, tr, gold, ids=torch.zeros(3))
