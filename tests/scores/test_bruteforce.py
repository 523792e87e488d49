"""bicrit.scores against brute-force enumeration on tiny instances, for every allowed surrogate ×
structure pair: the loss is max_y ψ(h(y), g(y)) over all labels, the gradient matches finite
differences, and the decoders return the best (k best) labels."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bicrit import scores
from bicrit.errors import IncompatibleError

from .brute import SURROGATES, chain_points, chain_score, psi_max, surrogate, tree_score, trees

EXACT_CHAIN = ["auto", "convex-hull-ban", "convex-hull-kbest", "frontier"]


def _chain_case(rng, b=2, t=3, s=3, per_step=False, ends=True):
    u = rng.normal(size=(b, t, s))
    tr = rng.normal(size=(b, t - 1, s, s)) if per_step else rng.normal(size=(s, s))
    start = rng.normal(size=s) if ends else None
    end = rng.normal(size=s) if ends else None
    lengths = rng.integers(1, t + 1, size=b)
    lengths[0] = t
    gold = rng.integers(0, s, size=(b, t))
    arrays = {"unary": u, "transitions": tr}
    if ends:
        arrays.update(start=start, end=end)
    return arrays, gold, lengths


def _chain_brute(name, arrays, gold, lengths, outside):
    out = []
    for i, n in enumerate(lengths):
        tr = arrays["transitions"]
        tr_i = tr if tr.ndim == 2 else tr[i][: n - 1]
        pts = [
            p
            for p, _ in chain_points(
                arrays["unary"][i][:n],
                tr_i,
                arrays.get("start"),
                arrays.get("end"),
                list(gold[i][:n]),
                outside,
            )
        ]
        out.append(psi_max(name, pts))
    return np.array(out)


@pytest.mark.parametrize("name", list(SURROGATES))
@pytest.mark.parametrize("per_step", [False, True])
def test_chain_loss_is_the_brute_force_maximum(name, per_step):
    rng = np.random.default_rng(abs(hash((name, per_step))) % 2**32)
    outside = [0]
    for _ in range(3):
        arrays, gold, lengths = _chain_case(rng, per_step=per_step)
        want = _chain_brute(name, arrays, gold, lengths, outside)
        for search in EXACT_CHAIN:
            if search == "frontier" and name == "microf1":
                with pytest.raises(IncompatibleError):
                    scores.loss(
                        "chain",
                        arrays,
                        gold,
                        surrogate=surrogate(name),
                        search=search,
                        lengths=lengths,
                        outside=outside,
                    )
                continue
            r = scores.loss(
                "chain",
                arrays,
                gold,
                surrogate=surrogate(name),
                search=search,
                lengths=lengths,
                outside=outside,
            )
            np.testing.assert_allclose(r.loss, want, rtol=1e-9, atol=1e-12, err_msg=search)
        # the convex hull's value bounds the integral maximum from above
        r = scores.loss(
            "chain",
            arrays,
            gold,
            surrogate=surrogate(name),
            search="convex-hull",
            lengths=lengths,
            outside=outside,
        )
        assert np.all(r.loss >= want - 1e-9)


def test_chain_segment_loss_is_the_brute_force_maximum():
    names = ["O", "B-PER", "I-PER", "B-LOC"]
    rng = np.random.default_rng(7)

    def chunks(y):
        out, cur = set(), None
        for t, s in enumerate([names[x] for x in y] + ["O"]):
            if cur is not None and not (s.startswith("I-") and s[2:] == cur[2]):
                out.add((cur[0], t - 1, cur[2]))
                cur = None
            if s != "O" and cur is None:
                cur = (t, None, s[2:])
        return out

    for _ in range(4):
        u = rng.normal(size=(1, 4, 4))
        tr = rng.normal(size=(4, 4))
        gold = rng.integers(0, 4, size=(1, 4))
        for name in ["margin", "slack", "probloss"]:
            r = scores.loss(
                "chain",
                {"unary": u, "transitions": tr},
                gold,
                surrogate=name,
                task_loss="segment",
                tag_names=names,
            )
            g0 = chain_score(u[0], tr, None, None, gold[0])
            psi = surrogate(name)
            want = max(
                float(
                    psi.value(
                        chain_score(u[0], tr, None, None, y) - g0, len(chunks(y) ^ chunks(gold[0]))
                    )
                )
                for y in itertools.product(range(4), repeat=4)
            )
            assert r.loss[0] == pytest.approx(want, rel=1e-9, abs=1e-12)


def _tree_case(rng, b=2, n=3, r=0):
    arcs = rng.normal(size=(b, n + 1, n + 1))
    labels = rng.normal(size=(b, n + 1, n + 1, r)) if r else None
    lengths = rng.integers(1, n + 1, size=b)
    lengths[0] = n
    return arcs, labels, lengths


@pytest.mark.parametrize("name", ["margin", "slack", "beta", "probloss", "log", "microf1"])
@pytest.mark.parametrize(
    ("projective", "multi_root", "n_rel"),
    [(False, False, 0), (True, False, 0), (False, True, 2), (True, True, 2)],
)
def test_tree_loss_is_the_brute_force_maximum(name, projective, multi_root, n_rel):
    rng = np.random.default_rng(abs(hash((name, projective, multi_root, n_rel))) % 2**32)
    psi = surrogate(name)
    for _ in range(2):
        arcs, labels, lengths = _tree_case(rng, r=n_rel)
        b, n = arcs.shape[0], arcs.shape[1] - 1
        heads = np.zeros((b, n), dtype=int)
        rels = np.zeros((b, n), dtype=int)
        want = []
        for i, m in enumerate(lengths):
            ts = trees(int(m), not multi_root, projective)
            heads[i, :m] = ts[rng.integers(len(ts))]
            if n_rel:
                rels[i, :m] = rng.integers(0, n_rel, size=m)
            gh, gr = list(heads[i, :m]), list(rels[i, :m])
            g0 = tree_score(arcs[i], labels[i] if n_rel else None, gh, gr)
            best = -np.inf
            for h in ts:
                for rr in itertools.product(range(max(n_rel, 1)), repeat=int(m)):
                    s = tree_score(arcs[i], labels[i] if n_rel else None, h, rr)
                    wrong = sum(a != c for a, c in zip(h, gh, strict=True))
                    wrong_rel = (
                        sum(a == c and x != y for a, c, x, y in zip(h, gh, rr, gr, strict=True))
                        if n_rel
                        else 0
                    )
                    loss = wrong + wrong_rel
                    if name == "microf1":
                        hh, gg = 2 * (wrong + wrong_rel) + s - g0, -2.0 * m
                    else:
                        hh, gg = s - g0, loss
                    best = max(best, float(psi.value(hh, gg)))
            want.append(best)
        arrays = {"arcs": arcs} if not n_rel else {"arcs": arcs, "labels": labels}
        gold = {"heads": heads, "rels": rels} if n_rel else heads
        for search in ["auto", "convex-hull-ban", "convex-hull-kbest"]:
            r = scores.loss(
                "tree",
                arrays,
                gold,
                surrogate=psi,
                search=search,
                lengths=lengths,
                projective=projective,
                multi_root=multi_root,
            )
            np.testing.assert_allclose(r.loss, want, rtol=1e-9, atol=1e-12, err_msg=search)


def _ml_brute(name, unary, pair, edges, gold):
    psi = surrogate(name)
    L = len(unary)

    def score(y):
        return sum(unary[k] * y[k] for k in range(L)) + sum(
            pair[e, y[i], y[j]] for e, (i, j) in enumerate(edges)
        )

    g0 = score(gold)
    best = -np.inf
    for y in itertools.product([0, 1], repeat=L):
        loss = sum(a != c for a, c in zip(y, gold, strict=True))
        m = score(y) - g0
        h, g = (loss + m, -(sum(y) + sum(gold))) if name == "microf1" else (m, loss)
        v = 0.0 if name == "microf1" and g == 0 else float(psi.value(h, g))
        best = max(best, v)
    return best


@pytest.mark.parametrize("name", list(SURROGATES))
def test_multilabel_exact_loss_is_the_brute_force_maximum(name):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    edges = np.array([[0, 1], [1, 2], [0, 3]])
    for shared in [True, False]:
        b, L = 3, 4
        unary = rng.normal(size=(b, L))
        pair = rng.normal(size=(3, 2, 2)) if shared else rng.normal(size=(b, 3, 2, 2))
        gold = rng.integers(0, 2, size=(b, L))
        want = [
            _ml_brute(name, unary[i], pair if shared else pair[i], edges, gold[i]) for i in range(b)
        ]
        searches = ["auto", "convex-hull-ban", "convex-hull-kbest"]
        if name != "microf1":  # g = −(|y| + |y_i|) is not a function of the loss
            searches.append("frontier")
        for search in searches:
            r = scores.loss(
                "multilabel",
                {"unary": unary, "pairwise": pair},
                gold,
                surrogate=surrogate(name),
                search=search,
                edges=edges,
                inference="exact",
            )
            np.testing.assert_allclose(r.loss, want, rtol=1e-9, atol=1e-12)
            if search == "frontier":
                assert np.all(r.calls == 1)
        # the relaxation (local polytope) bounds the integral maximum from above
        r = scores.loss(
            "multilabel",
            {"unary": unary, "pairwise": pair},
            gold,
            surrogate=surrogate(name),
            edges=edges,
            inference="relaxed",
        )
        assert np.all(r.loss >= np.array(want) - 1e-7)


@pytest.mark.parametrize("name", list(SURROGATES))
def test_multiclass_loss_is_the_brute_force_maximum(name):
    rng = np.random.default_rng(3)
    s = rng.normal(size=(5, 4))
    gold = rng.integers(0, 4, size=5)
    psi = surrogate(name)
    want = []
    for i in range(5):
        vals = []
        for k in range(4):
            wrong = float(k != gold[i])
            m = s[i, k] - s[i, gold[i]]
            h, g = (2 * wrong + m, -2.0) if name == "microf1" else (m, wrong)
            vals.append(float(psi.value(h, g)))
        want.append(max(vals))
    for search in ["auto", "convex-hull-ban", "convex-hull-kbest", "angular"]:
        if search == "angular" and psi.product_shift != 1.0:
            continue
        r = scores.loss("multiclass", s, gold, surrogate=psi, search=search)
        np.testing.assert_allclose(r.loss, want, rtol=1e-9, atol=1e-12)


def test_hierarchy_loss_is_the_brute_force_maximum():
    import bicrit

    # root 0 → 1, 2; 1 → 3, 4
    parents = [[], [0], [0], [1], [1]]
    st = bicrit.structure("hierarchy", hierarchy=parents, root=0, n_features=1)
    rng = np.random.default_rng(11)
    labels = [
        y
        for y in itertools.product([0, 1], repeat=5)
        if y[0] == 1 and all(y[p[0]] == 1 for v, p in enumerate(parents) if p and y[v])
    ]
    s = rng.normal(size=(4, 5))
    gold = np.array([labels[i] for i in rng.integers(0, len(labels), size=4)])
    for name in ["margin", "slack", "probloss"]:
        psi = surrogate(name)
        want = []
        for i in range(4):
            g0 = float(s[i] @ gold[i])
            want.append(
                max(
                    float(
                        psi.value(
                            float(s[i] @ np.array(y)) - g0,
                            float(np.sum(np.array(y[1:]) != gold[i][1:])),
                        )
                    )
                    for y in labels
                )
            )
        r = scores.loss("hierarchy", s, gold, surrogate=psi, structure=st)
        np.testing.assert_allclose(r.loss, want, rtol=1e-9, atol=1e-12)


# ---- gradients --------------------------------------------------------------------------------


def _fd_check(kind, arrays, gold, eps=1e-6, **kw):
    r = scores.loss(kind, arrays, gold, **kw)
    for name, a in arrays.items():
        if a is None:
            continue
        g = r.grad[name]
        assert g.shape == a.shape
        for idx in np.ndindex(a.shape):
            plus = {k: (v.copy() if k == name else v) for k, v in arrays.items()}
            minus = {k: (v.copy() if k == name else v) for k, v in arrays.items()}
            plus[name][idx] += eps
            minus[name][idx] -= eps
            fd = (
                scores.loss(kind, plus, gold, **kw).loss.sum()
                - scores.loss(kind, minus, gold, **kw).loss.sum()
            ) / (2 * eps)
            assert g[idx] == pytest.approx(fd, abs=2e-5), (name, idx)


@pytest.mark.parametrize("name", ["margin", "slack", "beta", "probloss", "log", "microf1"])
@pytest.mark.parametrize("search", ["auto", "convex-hull"])
def test_chain_gradient_matches_finite_differences(name, search):
    rng = np.random.default_rng(21)
    arrays, gold, lengths = _chain_case(rng, b=2, t=3, s=3, per_step=(name == "slack"))
    _fd_check(
        "chain",
        arrays,
        gold,
        surrogate=surrogate(name),
        search=search,
        lengths=lengths,
        outside=[0],
    )


@pytest.mark.parametrize("name", ["margin", "slack", "probloss"])
def test_tree_gradient_matches_finite_differences(name):
    rng = np.random.default_rng(5)
    arcs, labels, _lengths = _tree_case(rng, b=2, n=3, r=2)
    heads = np.array([[2, 0, 2], [0, 1, 0]])
    rels = rng.integers(0, 2, size=(2, 3))
    _fd_check(
        "tree",
        {"arcs": arcs, "labels": labels},
        {"heads": heads, "rels": rels},
        surrogate=surrogate(name),
        lengths=np.array([3, 2]),
        projective=True,
    )


@pytest.mark.parametrize("inference", ["exact", "relaxed"])
def test_multilabel_gradient_matches_finite_differences(inference):
    rng = np.random.default_rng(9)
    unary = rng.normal(size=(2, 3))
    pair = rng.normal(size=(2, 2, 2))
    gold = np.array([[1, 0, 1], [0, 0, 1]])
    _fd_check(
        "multilabel",
        {"unary": unary, "pairwise": pair},
        gold,
        surrogate="slack",
        edges=[[0, 1], [1, 2]],
        inference=inference,
    )


def test_multiclass_and_hierarchy_gradients_match_finite_differences():
    import bicrit

    rng = np.random.default_rng(13)
    _fd_check(
        "multiclass", {"scores": rng.normal(size=(3, 4))}, np.array([0, 2, 3]), surrogate="probloss"
    )
    st = bicrit.structure("hierarchy", hierarchy=[[], [0], [0], [1]], root=0, n_features=1)
    gold = np.array([[1, 1, 0, 1], [1, 0, 1, 0]])
    _fd_check(
        "hierarchy", {"scores": rng.normal(size=(2, 4))}, gold, surrogate="slack", structure=st
    )


# ---- decoders ---------------------------------------------------------------------------------


def test_chain_decoders_match_brute_force():
    rng = np.random.default_rng(17)
    arrays, _, lengths = _chain_case(rng, b=3, t=4, s=3, per_step=True)
    best = scores.decode("chain", arrays, lengths=lengths)
    kb = scores.kbest("chain", arrays, 5, lengths=lengths)
    for i, n in enumerate(lengths):
        tr = arrays["transitions"][i][: n - 1]
        all_scores = sorted(
            (
                chain_score(arrays["unary"][i][:n], tr, arrays["start"], arrays["end"], y)
                for y in itertools.product(range(3), repeat=int(n))
            ),
            reverse=True,
        )
        assert best["scores"][i] == pytest.approx(all_scores[0])
        got = chain_score(
            arrays["unary"][i][:n], tr, arrays["start"], arrays["end"], best["tags"][i][:n]
        )
        assert got == pytest.approx(all_scores[0])
        k = min(5, len(all_scores))
        np.testing.assert_allclose(kb["scores"][i][:k], all_scores[:k])
        assert kb["count"][i] == k


@pytest.mark.parametrize(
    ("projective", "multi_root"), [(False, False), (True, False), (False, True), (True, True)]
)
def test_tree_decoders_match_brute_force(projective, multi_root):
    rng = np.random.default_rng(19)
    arcs, _, lengths = _tree_case(rng, b=3, n=4)
    best = scores.decode(
        "tree", arcs, lengths=lengths, projective=projective, multi_root=multi_root
    )
    kb = scores.kbest(
        "tree", arcs, 3, lengths=lengths, projective=projective, multi_root=multi_root
    )
    for i, n in enumerate(lengths):
        all_scores = sorted(
            (tree_score(arcs[i], None, h, None) for h in trees(int(n), not multi_root, projective)),
            reverse=True,
        )
        assert best["scores"][i] == pytest.approx(all_scores[0])
        np.testing.assert_allclose(kb["scores"][i][: min(3, len(all_scores))], all_scores[:3])


def test_multilabel_and_multiclass_decoders_match_brute_force():
    rng = np.random.default_rng(23)
    unary = rng.normal(size=(3, 4))
    pair = rng.normal(size=(2, 2, 2))
    edges = [[0, 1], [2, 3]]
    best = scores.decode(
        "multilabel", {"unary": unary, "pairwise": pair}, edges=edges, inference="exact"
    )
    for i in range(3):
        vals = {
            y: float(unary[i] @ np.array(y)) + pair[0, y[0], y[1]] + pair[1, y[2], y[3]]
            for y in itertools.product([0, 1], repeat=4)
        }
        assert best["scores"][i] == pytest.approx(max(vals.values()))
    s = rng.normal(size=(4, 5))
    np.testing.assert_array_equal(scores.decode("multiclass", s)["labels"], s.argmax(1))


def test_auto_picks_the_documented_exact_method():
    rng = np.random.default_rng(29)
    arrays, gold, lengths = _chain_case(rng)
    kw = {"lengths": lengths}
    assert scores.loss("chain", arrays, gold, surrogate="margin", **kw).method == "loss-augmented"
    assert scores.loss("chain", arrays, gold, surrogate="slack", **kw).method == "convex-hull-ban"
    assert (
        scores.loss("chain", arrays, gold, surrogate="slack", search="frontier", **kw).method
        == "frontier"
    )
    s = rng.normal(size=(3, 4))
    assert scores.loss("multiclass", s, np.array([0, 1, 2]), surrogate="slack").method == "frontier"
    r = scores.loss(
        "multilabel",
        {"unary": rng.normal(size=(2, 3))},
        np.array([[1, 0, 1]] * 2),
        surrogate="slack",
        inference="relaxed",
    )
    assert r.method == "convex-hull"
    # exact multi-label inference enumerates the labels once for the whole frontier
    ml = ({"unary": rng.normal(size=(2, 3))}, np.array([[1, 0, 1]] * 2))
    assert scores.loss("multilabel", *ml, surrogate="slack").method == "frontier"
    assert scores.loss("multilabel", *ml, surrogate="microf1").method == "convex-hull-ban"
