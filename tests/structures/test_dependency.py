"""The dependency oracles equal brute-force enumeration through the public API (hashed features,
projective and non-projective, labeled and unlabeled, ban lists, k-best order, λ = 0 / ∞);
real sentences decode to valid trees; bad input raises clear errors.

The enumeration here is independent of the native code: trees are every head vector that passes
a Python tree check (one root child, acyclic), projectivity is checked in Python, scores come from
the structure's ``joint_feature`` and ``terms``."""

from __future__ import annotations

import functools
import itertools
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bicrit
from bicrit.errors import InvalidInputError, InvalidParameterError, UnsupportedQueryError
from bicrit.structures import Cone
from tests.structures.brute import assert_matches, brute_force

# -- independent tree enumeration ---------------------------------------------------------------


def is_tree(heads: tuple[int, ...]) -> bool:
    """One child of the root (0) and every token reaches it."""
    n = len(heads)
    if sum(1 for h in heads if h == 0) != 1:
        return False
    for d in range(1, n + 1):
        v, steps = d, 0
        while v != 0:
            if heads[v - 1] == v:
                return False
            v = heads[v - 1]
            steps += 1
            if steps > n:
                return False
    return True


def is_projective(heads: tuple[int, ...]) -> bool:
    def descends(v: int, h: int) -> bool:
        while v != 0:
            if v == h:
                return True
            v = heads[v - 1]
        return h == 0

    for d in range(1, len(heads) + 1):
        h = heads[d - 1]
        lo, hi = min(h, d), max(h, d)
        if not all(descends(b, h) for b in range(lo + 1, hi)):
            return False
    return True


@functools.cache
def trees(n: int, projective: bool) -> list[tuple[int, ...]]:
    out = [
        hs
        for hs in itertools.product(range(n + 1), repeat=n)
        if all(h != j + 1 for j, h in enumerate(hs)) and is_tree(hs)
    ]
    return [t for t in out if is_projective(t)] if projective else out


def test_tree_counts() -> None:
    # n^(n-1) single-root trees (Cayley); projective: 1, 2, 7, 30, 143 (OEIS A006013)
    for n in range(1, 6):
        assert len(trees(n, False)) == n ** (n - 1)
    assert [len(trees(n, True)) for n in range(1, 6)] == [1, 2, 7, 30, 143]


# -- random problems ------------------------------------------------------------------------------

WORDS = ["a", "dog", "Dog", "runs"]
TAGS = ["NOUN", "VERB", "DET"]
RELS = ["nsubj", "obj", "root"]


def sentence(rng: np.random.Generator, n: int) -> dict:
    words = [WORDS[i] for i in rng.integers(len(WORDS), size=n)]
    s = {"words": words, "upos": [TAGS[i] for i in rng.integers(len(TAGS), size=n)]}
    if rng.random() < 0.5:
        s["lemmas"] = [w.lower() for w in words]
        s["xpos"] = list(s["upos"])
    return s


def labels_of(n: int, n_rel: int, projective: bool) -> list:
    hs = trees(n, projective)
    if n_rel == 0:
        return [np.asarray(h) for h in hs]
    return [
        (np.asarray(h), np.asarray(r))
        for h in hs
        for r in itertools.product(range(n_rel), repeat=n)
    ]


def same(a, b) -> bool:
    if isinstance(a, tuple):
        return bool(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]))
    return bool(np.array_equal(a, b))


@st.composite
def problems(draw: st.DrawFn) -> dict:
    labeled = draw(st.booleans())
    n_rel = draw(st.integers(1, 2)) if labeled else 0
    n = draw(st.integers(1, 3 if labeled else 5))
    projective = draw(st.booleans())
    d = draw(st.sampled_from([5, 16, 64]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    w = rng.integers(-2, 3, size=d).astype(float)  # small integers: frequent exact ties
    x = sentence(rng, n)
    every_tree = labels_of(n, n_rel, False)
    y_true = every_tree[int(rng.integers(len(every_tree)))]  # gold may be non-projective
    space = labels_of(n, n_rel, projective)
    lam = draw(st.sampled_from([0.0, 0.5, 1.0, 2.0, math.inf]))
    coef_size = draw(st.sampled_from([0.0, -0.5]))
    coef_ham = draw(st.sampled_from([0.0, 1.0]))
    k = draw(st.integers(1, 6))
    n_ban = draw(st.integers(0, 2))
    ban = [space[int(i)] for i in rng.integers(len(space), size=n_ban)]
    label_weight = draw(st.sampled_from([1.0, 0.5]))
    return dict(
        labeled=labeled,
        n_rel=n_rel,
        projective=projective,
        d=d,
        w=w,
        x=x,
        y_true=y_true,
        space=space,
        lam=lam,
        coef_size=coef_size,
        coef_ham=coef_ham,
        k=k,
        ban=ban,
        label_weight=label_weight,
    )


def make(p: dict):
    return bicrit.structure(
        "dependency",
        n_features=p["d"],
        projective=p["projective"],
        labeled=p["labeled"],
        relations=RELS[: p["n_rel"]] if p["labeled"] else None,
        label_weight=p["label_weight"],
    )


@settings(max_examples=250, deadline=None)
@given(problems())
def test_oracle_equals_brute_force(p: dict) -> None:
    s = make(p)
    if math.isinf(p["lam"]):
        coef, margin_coef, tiebreak = {"loss": 1.0}, 0.0, (1.0, {})
    elif p["lam"] == 0.0:
        coef, margin_coef, tiebreak = {}, 1.0, (0.0, {"loss": 1.0})
    else:
        coef = {"loss": p["lam"], "size": p["coef_size"], "hamming": p["coef_ham"]}
        margin_coef, tiebreak = 1.0, None
    found = s.oracle(
        p["w"],
        p["x"],
        p["y_true"],
        coef,
        margin_coef=margin_coef,
        tiebreak=tiebreak,
        ban=p["ban"],
        k=p["k"],
    )
    expected = brute_force(
        s,
        p["w"],
        p["x"],
        p["y_true"],
        p["space"],
        coef,
        margin_coef=margin_coef,
        tiebreak=tiebreak,
        ban=p["ban"],
        same=same,
    )
    assert_matches(found, expected, p["k"], coef, margin_coef, tiebreak)
    gold = float(p["w"] @ s.joint_feature(p["x"], p["y_true"]))
    for i, a in enumerate(found):
        assert any(same(a.label, y) for y in p["space"])  # a (projective) tree of the space
        assert not any(same(a.label, b) for b in p["ban"])
        assert not any(same(a.label, b.label) for b in found[:i])
        assert a.margin == pytest.approx(float(p["w"] @ s.joint_feature(p["x"], a.label)) - gold)
        assert a.terms == s.terms(a.label, p["y_true"])


@settings(max_examples=100, deadline=None)
@given(problems())
def test_predict_equals_brute_force(p: dict) -> None:
    s = make(p)
    y = s.predict_one(p["w"], p["x"])
    best = max(float(p["w"] @ s.joint_feature(p["x"], c)) for c in p["space"])
    assert float(p["w"] @ s.joint_feature(p["x"], y)) == pytest.approx(best)
    assert any(same(y, c) for c in p["space"])


def test_terms_and_loss() -> None:
    s = bicrit.structure("dependency", n_features=32, relations=RELS, label_weight=0.5)
    gold = ([2, 0, 2], ["nsubj", "root", "obj"])
    # token 1: wrong head (1); token 3: right head, wrong relation (0.5); token 2 right
    y = ([3, 0, 2], ["nsubj", "root", "nsubj"])
    assert s.terms(y, gold) == {"loss": 1.5, "size": 3.0, "hamming": 4.0}
    assert s.loss(gold, gold) == 0.0
    u = bicrit.structure("dependency", n_features=32, labeled=False)
    assert u.terms([3, 0, 2], [2, 0, 2]) == {"loss": 1.0, "size": 3.0, "hamming": 2.0}
    # an unlabeled structure accepts (heads, rels) pairs and ignores rels
    assert u.loss(([2, 0, 2], ["x", "y", "z"]), [2, 0, 2]) == 0.0


def test_batches_and_threads_agree() -> None:
    rng = np.random.default_rng(3)
    X = [sentence(rng, int(n)) for n in rng.integers(1, 12, size=40)]
    for projective in (True, False):
        s = bicrit.structure("dependency", n_features=4096, projective=projective, labeled=False)
        Y = [np.asarray(trees_random(rng, len(x["words"]))) for x in X]
        s.initialize(X, Y)
        w = rng.normal(size=4096)
        one = [s.oracle(w, x, y, {"loss": 1.0}, k=3) for x, y in zip(X, Y, strict=True)]
        for n_jobs in (1, 2):
            batch = s.batch_oracle(w, X, Y, {"loss": 1.0}, k=3, n_jobs=n_jobs)
            for x, a, b in zip(X, batch, one, strict=True):
                # 1 tree of one token, 2 of two, at least 3 otherwise
                assert len(a) == len(b) == min(3, len(x["words"]))
                assert all(same(u.label, v.label) for u, v in zip(a, b, strict=True))
                assert [u.margin for u in a] == [v.margin for v in b]
            preds = s.batch_predict(w, s.prepare(X), n_jobs=n_jobs)
            assert all(same(p, s.predict_one(w, x)) for p, x in zip(preds, X, strict=True))


def trees_random(rng: np.random.Generator, n: int) -> list[int]:
    """A random single-root tree: a random order, each token attached to an earlier one."""
    order = rng.permutation(n) + 1
    heads = [0] * n
    for i, tok in enumerate(order[1:], start=1):
        heads[tok - 1] = int(order[rng.integers(i)])
    return heads


# -- real sentences -------------------------------------------------------------------------------


def read_conllu(path: Path, limit: int) -> list[dict]:
    """Minimal CoNLL-U reader: skips comments, multiword ranges and empty nodes."""
    out: list[dict] = []
    cur: dict[str, list] = {k: [] for k in ("words", "lemmas", "upos", "xpos", "heads", "deprels")}
    with path.open(encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if cur["words"]:
                    out.append(cur)
                    if len(out) == limit:
                        break
                cur = {k: [] for k in cur}
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if "-" in cols[0] or "." in cols[0]:
                continue
            cur["words"].append(cols[1])
            cur["lemmas"].append(cols[2])
            cur["upos"].append(cols[3])
            cur["xpos"].append(cols[4])
            cur["heads"].append(int(cols[6]))
            cur["deprels"].append(cols[7])
    return out


def test_ewt_sentences_decode_to_valid_trees(data_dir: Path) -> None:
    path = data_dir / "ud_english_ewt" / "en_ewt-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found")
    X = read_conllu(path, 150)
    eis = bicrit.structure("dependency", n_features=2**18).initialize(X)
    cle = bicrit.structure("dependency", n_features=2**18, projective=False).initialize(X)
    assert "nsubj" in eis.relations and eis.relations == cle.relations
    Y = eis.gold_labels(X)
    rng = np.random.default_rng(0)
    w = rng.normal(size=2**18)
    answers_e = eis.batch_oracle(w, X, Y, {"loss": 1.0}, k=3, n_jobs=2)
    answers_c = cle.batch_oracle(w, X, Y, {"loss": 1.0}, k=3, n_jobs=2)
    for x, ae, ac in zip(X, answers_e, answers_c, strict=True):
        n = len(x["words"])
        for ans, projective in ((ae, True), (ac, False)):
            values = [a.margin + a.terms["loss"] for a in ans]
            assert values == sorted(values, reverse=True)
            for a in ans:
                heads = tuple(int(h) for h in a.label[0])
                assert len(heads) == n and is_tree(heads)
                assert not projective or is_projective(heads)
                assert len(a.label[1]) == n
        # the non-projective optimum is at least the projective one, equal when projective
        best_e = ae[0].margin + ae[0].terms["loss"]
        best_c = ac[0].margin + ac[0].terms["loss"]
        assert best_c >= best_e - 1e-9
        if is_projective(tuple(int(h) for h in ac[0].label[0])):
            assert best_c == pytest.approx(best_e)
    # w = 0 ties every tree at margin 0: λ = 0 (margin, then loss) and λ = ∞ (loss, then margin)
    # both reach the largest loss
    zero = np.zeros(2**18)
    lex = eis.oracle(zero, X[0], Y[0], {}, tiebreak=(0.0, {"loss": 1.0}))[0]
    assert lex.margin == 0.0
    inf = eis.lambda_oracle(zero, X[0], Y[0], math.inf)
    assert eis.loss(inf, Y[0]) == lex.terms["loss"]


def test_hashing_is_deterministic_across_processes() -> None:
    code = (
        "import bicrit;"
        "s = bicrit.structure('dependency', n_features=2**20, relations=['a', 'b']);"
        "x = {'words': ['The', 'dog'], 'upos': ['DET', 'NOUN']};"
        "print(sorted(map(int, s.joint_feature(x, ([2, 0], ['a', 'b'])).nonzero()[0])))"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    ]
    runs.append(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True))
    assert runs[0].stdout == runs[1].stdout and runs[0].stdout.strip() != "[]"


def test_registered_with_its_capabilities() -> None:
    c = bicrit.registry.get("structure", "dependency")
    s = bicrit.structure("dependency", labeled=False)
    assert c.capabilities == s.capabilities
    assert s.capabilities == {
        "ban": True,
        "kbest": True,
        "cone": False,
        "relaxed": False,
        "frontier": False,
    }


# -- bad input ------------------------------------------------------------------------------------

X1 = {"words": ["a", "b", "c"], "upos": ["X", "Y", "Z"]}


@pytest.mark.parametrize(
    ("y", "match"),
    [
        (([0, 1, 9], ["a", "a", "a"]), "outside 0..=3"),
        (([0, 3, 2], ["a", "a", "a"]), "cycle"),
        (([0, 0, 1], ["a", "a", "a"]), "exactly one root child"),
        (([2, 3, 1], ["a", "a", "a"]), "no token attaches to the root"),
        (([0, 1, 2], ["a", "a"]), "rels has 2 entries"),
        (([0, 1], ["a", "a"]), "heads has 2 entries"),
        (([0, 1, 1], ["a", "zzz", "a"]), "unknown relation 'zzz'"),
        (([0, 1, 1], [0, 7, 0]), "not a relation id"),
        (([0, -1, 1], [0, 0, 0]), "negative"),
        (([0.5, 1, 1], [0, 0, 0]), "integers"),
        ([0, 1, 1], "pair \\(heads, rels\\)"),
    ],
)
def test_bad_labels(y, match: str) -> None:
    s = bicrit.structure("dependency", n_features=16, relations=["a", "b"])
    with pytest.raises(InvalidInputError, match=match):
        s.oracle(np.zeros(16), X1, y, {"loss": 1.0})


@pytest.mark.parametrize(
    ("x", "match"),
    [
        ({"words": [], "upos": []}, "empty"),
        ({"words": ["a", "b"], "upos": ["X"]}, "upos has 1 entries"),
        ({"words": ["a"]}, "no 'upos'"),
        ({"upos": ["X"]}, "no 'words'"),
        ({"words": ["a", 3], "upos": ["X", "Y"]}, "not a str"),
    ],
)
def test_bad_sentences(x, match: str) -> None:
    s = bicrit.structure("dependency", n_features=16, labeled=False)
    with pytest.raises(InvalidInputError, match=match):
        s.predict_one(np.zeros(16), x)


def test_other_bad_input() -> None:
    s = bicrit.structure("dependency", n_features=16, relations=["a", "b"])
    y = ([0, 1, 1], ["a", "b", "b"])
    with pytest.raises(UnsupportedQueryError, match="cone"):
        s.oracle(np.zeros(16), X1, y, {"loss": 1.0}, cone=Cone(0.0, 1.0))
    with pytest.raises(InvalidInputError, match="shape"):
        s.oracle(np.zeros(15), X1, y, {"loss": 1.0})
    with pytest.raises(InvalidInputError, match="single sentence"):
        s.batch_predict(np.zeros(16), X1)
    with pytest.raises(InvalidInputError, match="sentence 1: heads form a cycle"):
        s.initialize([X1, X1], [y, ([0, 3, 2], ["a", "a", "a"])])
    with pytest.raises(InvalidInputError, match="no 'heads'"):
        bicrit.structure("dependency").initialize([X1])
    with pytest.raises(InvalidInputError, match="initialize"):
        bicrit.structure("dependency").predict_one(np.zeros(2**20), X1)
    with pytest.raises(InvalidParameterError, match="n_features"):
        bicrit.structure("dependency", n_features=0, labeled=False)
    with pytest.raises(InvalidParameterError, match="label_weight"):
        bicrit.structure("dependency", relations=["a"], label_weight=-1.0)
    with pytest.raises(InvalidParameterError, match="distinct"):
        bicrit.structure("dependency", relations=["a", "a"])
