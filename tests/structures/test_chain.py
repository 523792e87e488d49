"""The chain oracles equal brute-force enumeration through the public API (Viterbi, k-best order,
ban lists, λ = 0/∞ lexicographic queries, both losses); the terms equal an independent port of
conlleval's chunk rules; bad input raises clear errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import bicrit
from bicrit import registry
from bicrit.errors import InvalidInputError, InvalidParameterError, UnsupportedQueryError
from tests.structures.brute import assert_matches, brute_force

IOB_POOL = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "I-MISC"]
IOBES_POOL = ["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "S-LOC"]


# --- independent references -----------------------------------------------------------------


def _split(name: str) -> tuple[str, str]:
    return ("O", "") if name == "O" else (name[0], name[2:])


def conlleval_chunks(names: list[str]) -> set[tuple[int, int, str]]:
    """Chunks by the start/end rules of CoNLL's conlleval script (B/I/O tags), ported literally."""

    def start_of_chunk(pt: str, t: str, ptype: str, ty: str) -> bool:
        return (
            (pt == "B" and t == "B")
            or (pt == "I" and t == "B")
            or (pt == "O" and t == "B")
            or (pt == "O" and t == "I")
            or (t != "O" and ptype != ty)
        )

    def end_of_chunk(pt: str, t: str, ptype: str, ty: str) -> bool:
        return (
            (pt == "B" and t == "B")
            or (pt == "B" and t == "O")
            or (pt == "I" and t == "B")
            or (pt == "I" and t == "O")
            or (pt != "O" and ptype != ty)
        )

    chunks, start = set(), None
    prev_tag, prev_type = "O", ""
    for i, name in enumerate([*names, "O"]):
        tag, ty = _split(name)
        if start is not None and end_of_chunk(prev_tag, tag, prev_type, ty):
            chunks.add((start, i - 1, prev_type))
            start = None
        if start_of_chunk(prev_tag, tag, prev_type, ty):
            start = i
        prev_tag, prev_type = tag, ty
    return chunks


def iobes_chunks(names: list[str]) -> set[tuple[int, int, str]]:
    """IOBES chunks: B/S open; I/E continue an open B/I chunk of the same type, else open one;
    E and S close."""
    chunks, open_ = set(), None  # open_ = (start, type) of a chunk that may continue
    for i, name in enumerate(names):
        tag, ty = _split(name)
        if tag in ("I", "E") and open_ is not None and open_[1] == ty:
            start = open_[0]
        elif tag == "O":
            open_ = None
            continue
        else:
            start = i
        if tag in ("E", "S"):
            chunks.add((start, i, ty))
            open_ = None
        else:
            open_ = (start, ty)
            # provisional end: record when the chunk closes
        nxt = names[i + 1] if i + 1 < len(names) else "O"
        ntag, nty = _split(nxt)
        if open_ is not None and not (ntag in ("I", "E") and nty == ty):
            chunks.add((start, i, ty))
            open_ = None
    return chunks


def reference_terms(y, g, names, outside, loss, scheme) -> dict[str, float]:
    out = set(outside)
    size = sum(1 for s in y if s not in out)
    ham = 0
    for a, b in zip(y, g, strict=True):
        A = set() if a in out else {a}
        B = set() if b in out else {b}
        ham += len(A ^ B)
    if loss == "hamming":
        lv = sum(int(a != b) for a, b in zip(y, g, strict=True))
    else:
        dec = iobes_chunks if scheme == "iobes" else conlleval_chunks
        lv = len(dec([names[s] for s in y]) ^ dec([names[s] for s in g]))
    return {"loss": float(lv), "size": float(size), "hamming": float(ham)}


# --- random problems ------------------------------------------------------------------------


@st.composite
def setups(draw: st.DrawFn, max_states: int = 4) -> dict:
    scheme = draw(st.sampled_from(["iob1", "iob2", "iobes", None]))
    S = draw(st.integers(1, max_states))
    if scheme is None:
        names = None
        outside = draw(st.lists(st.integers(0, S - 1), max_size=2, unique=True))
        loss = "hamming"
    else:
        pool = IOBES_POOL if scheme == "iobes" else IOB_POOL
        names = draw(st.lists(st.sampled_from(pool), min_size=S, max_size=S, unique=True))
        outside = [i for i, n in enumerate(names) if n == "O"]
        loss = draw(st.sampled_from(["hamming", "segment"]))
    max_t = {1: 6, 2: 6, 3: 5, 4: 4}[S]
    T = draw(st.integers(1, max_t))
    d = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    return dict(scheme=scheme, S=S, names=names, outside=outside, loss=loss, T=T, d=d, seed=seed)


def make(p: dict):
    kw = dict(n_states=p["S"], n_features=p["d"], outside=p["outside"], loss=p["loss"])
    if p["names"] is not None:
        kw.update(tag_names=p["names"], scheme=p["scheme"])
    return bicrit.structure("chain", **kw)


def queries(draw: st.DrawFn) -> tuple[dict, float, tuple | None]:
    mode = draw(st.sampled_from(["lam0", "laminf", "finite", "microf1", "lex"]))
    if mode == "lam0":
        return {}, 1.0, (0.0, {"loss": 1.0})
    if mode == "laminf":
        return {"loss": 1.0}, 0.0, (1.0, {})
    if mode == "microf1":
        lam = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0]))
        return {"hamming": 1.0, "size": -lam}, 1.0, None
    coef = {
        "loss": draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])),
        "size": draw(st.sampled_from([0.0, -0.5, -1.0])),
        "hamming": draw(st.sampled_from([0.0, 1.0])),
    }
    if mode == "lex":
        return coef, 1.0, (0.0, {"loss": 1.0, "size": draw(st.sampled_from([0.0, -1.0]))})
    return coef, 1.0, None


@settings(max_examples=400, deadline=None)
@given(setups(), st.data())
def test_oracle_equals_brute_force(p: dict, data: st.DataObject) -> None:
    s = make(p)
    rng = np.random.default_rng(p["seed"])
    S, T, d = p["S"], p["T"], p["d"]
    # small integer weights and features make exact ties frequent
    w = rng.integers(-2, 3, size=s.size_joint_feature).astype(float)
    x = rng.integers(-2, 3, size=(T, d)).astype(float)
    x[rng.random((T, d)) < 0.3] = 0.0
    if data.draw(st.booleans()):
        x = sp.csr_matrix(x)
    labels = [np.array(y) for y in itertools.product(range(S), repeat=T)]
    y_true = labels[int(rng.integers(len(labels)))]
    coef, margin_coef, tiebreak = queries(data.draw)
    n_all = len(labels)
    k = data.draw(st.integers(1, min(8, n_all + 1)))
    ban_idx = data.draw(st.lists(st.integers(0, n_all - 1), max_size=3))
    ban = [labels[i] for i in ban_idx]
    if data.draw(st.booleans()):  # ban the unbanned argmax too, so that bans bite
        top = s.oracle(w, x, y_true, coef, margin_coef=margin_coef, tiebreak=tiebreak)
        ban.append(top[0].label)
    found = s.oracle(w, x, y_true, coef, margin_coef=margin_coef, tiebreak=tiebreak, ban=ban, k=k)
    expected = brute_force(
        s, w, x, y_true, labels, coef, margin_coef=margin_coef, tiebreak=tiebreak, ban=ban
    )
    assert_matches(found, expected, k, coef, margin_coef, tiebreak)
    seen = set()
    for a in found:
        key = tuple(int(v) for v in a.label)
        assert key not in seen, "k-best returned a label twice"
        seen.add(key)
        assert not any(np.array_equal(a.label, b) for b in ban)
        # the reported margin and terms are the label's own
        m = float(np.dot(w, s.joint_feature(x, a.label) - s.joint_feature(x, y_true)))
        assert abs(m - a.margin) <= 1e-9 * (1 + abs(m))
        assert a.terms == s.terms(a.label, y_true)


@settings(max_examples=300, deadline=None)
@given(setups(max_states=4), st.data())
def test_terms_match_independent_reference(p: dict, data: st.DataObject) -> None:
    s = make(p)
    T = data.draw(st.integers(1, 8))
    y = np.array(data.draw(st.lists(st.integers(0, p["S"] - 1), min_size=T, max_size=T)))
    g = np.array(data.draw(st.lists(st.integers(0, p["S"] - 1), min_size=T, max_size=T)))
    expected = reference_terms(y, g, p["names"], p["outside"], p["loss"], p["scheme"])
    assert s.terms(y, g) == expected
    assert s.loss(y, g) == expected["loss"]
    assert s.terms(g, g)["loss"] == 0.0


def test_kbest_enumerates_every_label_in_order() -> None:
    names = ["O", "B-PER", "I-PER"]
    s = bicrit.structure("chain", tag_names=names, n_features=2, loss="segment")
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 2))
    w = rng.normal(size=s.size_joint_feature)
    y = np.array([1, 2, 0, 1])
    found = s.oracle(w, x, y, {"loss": 0.7, "hamming": 0.3}, k=100)
    assert len(found) == 3**4
    assert len({tuple(a.label) for a in found}) == 3**4
    vals = [a.margin + 0.7 * a.terms["loss"] + 0.3 * a.terms["hamming"] for a in found]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(vals))


def test_lambda_oracle_extremes() -> None:
    s = bicrit.structure("chain", tag_names=["O", "B-A", "I-A"], n_features=1, loss="segment")
    w = np.zeros(s.size_joint_feature)
    x = np.ones((3, 1))
    y = np.array([0, 1, 2])
    # all margins tie at 0: λ = 0 takes the largest loss among them, λ = ∞ the largest loss
    # (then margin); the gold label itself has loss 0
    for lam in (0.0, math.inf):
        a = s.oracle(w, x, y, **bicrit.structures.base.lambda_query(lam))[0]
        assert a.terms["loss"] == max(
            s.loss(np.array(c), y) for c in itertools.product(range(3), repeat=3)
        )
    # with a strong margin for the gold label, λ = 0 returns it
    w2 = s.joint_feature(x, y) * 10
    assert list(s.lambda_oracle(w2, x, y, 0.0)) == [0, 1, 2]


def _dataset(rng: np.random.Generator, n: int, d: int, S: int):
    lens = rng.integers(1, 9, size=n)
    X = [sp.random(int(t), d, density=0.3, random_state=rng, format="csr") for t in lens]
    Y = [rng.integers(0, S, size=int(t)) for t in lens]
    return X, Y


def test_batch_equals_one_by_one_and_threads_agree() -> None:
    rng = np.random.default_rng(1)
    X, Y = _dataset(rng, 40, 20, 5)
    s = bicrit.structure("chain", tag_names=["O", "B-A", "I-A", "B-B", "I-B"], loss="segment")
    s.initialize(X, Y)
    assert (s.n_states, s.n_features) == (5, 20)
    w = rng.normal(size=s.size_joint_feature)
    offsets = np.concatenate([[0], np.cumsum([x.shape[0] for x in X])])
    M = sp.vstack(X, format="csr")
    for n_jobs in (1, 2):
        preds = s.batch_predict(w, (M, offsets), n_jobs=n_jobs)
        assert [p.tolist() for p in preds] == [s.predict_one(w, x).tolist() for x in X]
        ans = s.batch_oracle(w, X, np.concatenate(Y), {"loss": 1.0}, k=3, n_jobs=n_jobs)
        for a, x, y in zip(ans, X, Y, strict=True):
            one = s.oracle(w, x, y, {"loss": 1.0}, k=3)
            assert [b.label.tolist() for b in a] == [b.label.tolist() for b in one]
            assert [b.margin for b in a] == [b.margin for b in one]


def test_initialize_learns_sizes_and_joint_feature_layout() -> None:
    X = [np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([[3.0, 0.0]])]
    Y = [np.array([1, 0]), np.array([2])]
    s = bicrit.structure("chain").initialize(X, Y)
    assert (s.n_states, s.n_features) == (3, 2)
    assert s.size_joint_feature == 2 * 3 + 9 + 3 + 3
    phi = s.joint_feature(X[0], Y[0])
    expected = np.zeros(21)
    expected[0 * 3 + 1] = 1.0  # token 0, feature 0, state 1 (feature-major)
    expected[1 * 3 + 0] = 2.0  # token 1, feature 1, state 0
    expected[6 + 1 * 3 + 0] = 1.0  # transition 1 → 0
    expected[15 + 1] = 1.0  # start in 1
    expected[18 + 0] = 1.0  # end in 0
    np.testing.assert_array_equal(phi, expected)
    # default outside is state 0
    assert s.terms(np.array([0, 2]), np.array([1, 0])) == {
        "loss": 2.0,
        "size": 1.0,
        "hamming": 2.0,
    }


def test_registered_with_capabilities() -> None:
    c = registry.get("structure", "chain")
    assert c.capabilities == {
        "ban": True,
        "kbest": True,
        "cone": False,
        "relaxed": False,
        "frontier": True,
    }
    s = bicrit.structure("chain", n_states=3, n_features=2)
    assert s.capabilities == c.capabilities


# --- bad input ------------------------------------------------------------------------------


@pytest.fixture
def chain():
    s = bicrit.structure("chain", tag_names=["O", "B-A", "I-A"], n_features=2, loss="segment")
    return s, np.ones(s.size_joint_feature)


X3 = np.ones((3, 2))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda s, w: s.oracle(w, X3, np.array([0, 1]), {"loss": 1.0}), "length 2 but"),
        (lambda s, w: s.oracle(w, X3, np.array([0, 1, 7]), {"loss": 1.0}), "state 7 at position 2"),
        (lambda s, w: s.oracle(w, X3, np.array([0, -1, 0]), {"loss": 1.0}), "state -1"),
        (lambda s, w: s.oracle(w, X3, np.array([0.5, 1, 0]), {"loss": 1.0}), "integer"),
        (lambda s, w: s.oracle(w, np.ones((0, 2)), np.array([], int), {}), "empty"),
        (lambda s, w: s.oracle(w, np.ones((3, 3)), np.array([0, 1, 2]), {}), "features"),
        (lambda s, w: s.predict_one(w, np.ones(2)), "2-D"),
        (lambda s, w: s.batch_predict(w, [X3, np.ones((0, 2))]), r"X\[1\] is an empty"),
        (lambda s, w: s.batch_predict(w, [X3, np.ones((2, 3))]), r"X\[1\] has 3 features"),
        (lambda s, w: s.batch_predict(w, (np.ones((5, 2)), [0, 2, 2, 5])), "sequence 1 is empty"),
        (lambda s, w: s.batch_predict(w, (np.ones((5, 2)), [0, 3, 2, 5])), "must increase"),
        (lambda s, w: s.batch_predict(w, (np.ones((5, 2)), [0, 3])), "5 rows"),
        (lambda s, w: s.batch_predict(w, (np.ones((5, 2)), [1, 5])), "start at 0"),
        (lambda s, w: s.batch_predict(w, (np.ones((5, 3)), [0, 5])), "features"),
        (
            lambda s, w: s.batch_oracle(w, [X3, X3], [np.zeros(3, int)], {"loss": 1.0}),
            "2 sequences but Y has 1",
        ),
        (
            lambda s, w: s.batch_oracle(w, [X3, X3], np.zeros(5, int), {"loss": 1.0}),
            "5 tokens but X has 6",
        ),
        (
            lambda s, w: s.batch_oracle(w, [X3], [np.array([0, 1, 9])], {}),
            "state 9",
        ),
        (
            lambda s, w: s.oracle(w, X3, np.zeros(3, int), {}, ban=[np.zeros(2, int)]),
            r"ban\[0\] has length 2",
        ),
        (lambda s, w: s.oracle(w[:-1], X3, np.zeros(3, int), {}), "shape"),
        (lambda s, w: s.terms(np.zeros(3, int), np.zeros(2, int)), "different lengths"),
    ],
)
def test_bad_input(chain, call, match: str) -> None:
    s, w = chain
    with pytest.raises(InvalidInputError, match=match):
        call(s, w)


def test_cone_is_unsupported(chain) -> None:
    s, w = chain
    with pytest.raises(UnsupportedQueryError, match="cone"):
        s.oracle(w, X3, np.zeros(3, int), {"loss": 1.0}, cone=(0.0, 1.0))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        (dict(n_states=3, n_features=2, loss="segment"), "needs tag_names"),
        (dict(n_states=3, n_features=2, loss="f1"), "loss must be"),
        (dict(tag_names=["O", "PER"], n_features=2), r"tag_names\[1\]"),
        (dict(tag_names=["O", "S-PER"], n_features=2, scheme="iob2"), r"tag_names\[1\]"),
        (dict(tag_names=["O", "B-A"], n_features=2, scheme="bilou"), "scheme must be"),
        (dict(tag_names=["O", "B-A"], n_states=3, n_features=2), "2 names but n_states = 3"),
        (dict(tag_names=["O", "B-A"], outside=[1], n_features=2), "disagrees"),
        (dict(n_states=3, n_features=2, outside=[3]), "not a state"),
        (dict(n_states=0, n_features=2), "n_states"),
    ],
)
def test_bad_parameters(params: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        bicrit.structure("chain", **params)


@pytest.mark.parametrize(
    ("X", "Y", "match"),
    [
        ((np.ones((5, 2)), [0, 2, 2, 5]), [np.zeros(2, int)] * 3, "sequence 1 is empty"),
        ((np.ones((5, 2)), [0, 3, 2, 5]), [np.zeros(2, int)] * 3, "decrease"),
        ((np.ones((5, 2)), [0, 4]), [np.zeros(4, int)], "5 rows"),
        ((np.ones((5, 2)), [1, 5]), [np.zeros(4, int)], "start at 0"),
        (
            [np.ones((2, 2)), np.ones((3, 2))],
            [np.zeros(2, int), np.zeros(2, int)],
            r"Y\[1\] has length 2",
        ),
        ([np.ones((2, 2))], [np.array([0, -1])], "state -1"),
        ([np.ones((2, 2))], [np.zeros(2, int), np.zeros(2, int)], "1 sequences but Y has 2"),
        ([np.ones((2, 2))], ["ab"], "integer"),
        (np.ones((2, 2)), [np.zeros(2, int)], "list of per-sequence"),
    ],
)
def test_initialize_rejects_bad_data(X, Y, match: str) -> None:
    with pytest.raises(InvalidInputError, match=match):
        bicrit.structure("chain").initialize(X, Y)
    s = bicrit.structure("chain", n_states=3)
    with pytest.raises(InvalidInputError):
        s.initialize([np.ones((2, 2))], [np.array([0, 3])])
    assert s._native is None  # nothing half-built


def test_uninitialised_is_a_clear_error() -> None:
    with pytest.raises(InvalidInputError, match="initialize"):
        bicrit.structure("chain").predict_one(np.ones(4), np.ones((2, 2)))
