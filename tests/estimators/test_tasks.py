"""Task conveniences on small real data: MultiLabelSVM (emotions, yeast), SequenceSVM
(CoNLL-2002), DependencySVM (UD English EWT); the loaders' outputs taken directly; headline
metrics checked against independent computations (scikit-learn, seqeval, by hand)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import accuracy_score

import bicrit
from bicrit import datasets
from bicrit.errors import InvalidInputError
from bicrit.estimators import DependencySVM, MultiLabelSVM, SequenceSVM

# ----------------------------------------------------------------------------- multi-label


def test_multilabel_on_the_bundled_dataset_beats_the_empty_prediction(emotions):
    tr, te = emotions
    est = MultiLabelSVM(surrogate="slack", max_epochs=10, random_state=0).fit(tr)
    P = est.predict(te)
    assert P.shape == te.Y.shape
    # subset accuracy, as scikit-learn computes it for indicator matrices
    assert est.score(te) == pytest.approx(accuracy_score(te.Y, P))
    report = est.report(te)
    assert report["hamming_loss"] == pytest.approx(float(np.mean(P != te.Y)))
    # better than predicting no label at all (Hamming loss = label density)
    assert report["hamming_loss"] < float(np.mean(te.Y)) - 0.03


def test_multilabel_slack_does_not_collapse_with_many_labels(data_dir):
    """medical (45 labels, sparse text): slack rescaling's subgradients are scaled by the task
    loss (up to 45), which threw SGD's Pegasos steps far out (test micro-F1 .11 at C = 1, where
    margin rescaling scores ~.75). The default learner (BCFW's line search) must keep slack within
    reach of margin at the same C."""
    from sklearn.metrics import f1_score

    tr, te = datasets.load("medical", "train"), datasets.load("medical", "test")
    f1 = {}
    for surrogate in ("margin", "slack"):
        est = MultiLabelSVM(surrogate=surrogate, C=1.0, max_epochs=15, random_state=0).fit(tr)
        assert est.learner_ == "bcfw"
        f1[surrogate] = f1_score(te.Y, est.predict(te.X), average="micro")
    assert f1["margin"] > 0.6  # a model, not the empty prediction
    assert f1["slack"] >= 0.9 * f1["margin"]


def test_multilabel_scaling_default_avoids_divergence(emotions):
    """Unscaled emotions; the default scale=True must not be worse than the
    hand-standardized features with scale=False (identical transform, so identical model)."""
    tr, _ = emotions
    mu, sd = tr.X.mean(0), tr.X.std(0)
    a = MultiLabelSVM(max_epochs=5, random_state=0).fit(tr.X, tr.Y)
    b = MultiLabelSVM(scale=False, max_epochs=5, random_state=0).fit((tr.X - mu) / sd, tr.Y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("kind", ["dense64", "dense32", "csr32", "csr64"])
def test_multilabel_accepts_dense_and_csr_float32_float64(emotions, kind):
    tr, _ = emotions
    X = tr.X[:120]
    X = {
        "dense64": X,
        "dense32": X.astype(np.float32),
        "csr32": sp.csr_array(X.astype(np.float32)),
        "csr64": sp.csr_matrix(X),
    }[kind]
    est = MultiLabelSVM(scale=False, max_epochs=2, random_state=0).fit(X / 300.0, tr.Y[:120])
    assert est.predict(X[:5] / 300.0).shape == (5, tr.Y.shape[1])


def test_multilabel_on_a_yeast_slice(yeast_slice):
    tr, te = yeast_slice
    est = MultiLabelSVM(inference="relaxed", max_epochs=3, random_state=0).fit(tr)
    P = est.predict(te)
    assert set(np.unique(P)) <= {0, 1}
    assert est.score(te.X, te.Y) == pytest.approx(accuracy_score(te.Y, P))


def test_multilabel_bad_labels(emotions):
    tr, _ = emotions
    Y = tr.Y.astype(float).copy()
    Y[3, 1] = np.nan
    with pytest.raises(InvalidInputError, match="0 or 1"):
        MultiLabelSVM(max_epochs=1).fit(tr.X, Y)
    with pytest.raises(InvalidInputError, match="rows"):
        MultiLabelSVM(max_epochs=1).fit(tr.X, tr.Y[:-1])


# ----------------------------------------------------------------------------- sequences


def test_sequence_svm_on_a_conll_slice(conll_slice):
    from seqeval.metrics import f1_score

    tr, te = conll_slice
    f = datasets.SequenceFeaturizer(n_features=2**16)
    est = SequenceSVM(featurizer=f, max_epochs=5, random_state=0).fit(tr)
    P = est.predict(te)
    assert all(len(p) == len(t) for p, t in zip(P, te.tokens, strict=True))
    assert set(est.tags_) == set(tr.tag_names)
    # entity micro-F1 as conlleval/seqeval computes it
    assert est.score(te) == pytest.approx(f1_score(te.tags, P), abs=1e-9)
    assert est.score(te) > 0.2


def test_sequence_svm_takes_every_input_form(conll_slice):
    tr, _ = conll_slice
    tr_small = tr.tokens[:40], tr.tags[:40]
    f = datasets.SequenceFeaturizer(n_features=2**14)
    hs = f.transform(tr_small[0])
    forms = {
        "tokens": tr_small[0],
        "hashed": hs,
        "pair": (hs.X, hs.offsets),
        "list": [hs.sentence(i) for i in range(hs.n_sentences)],
        "dense list": [hs.sentence(i).toarray().astype(np.float32) for i in range(10)],
    }
    ref = None
    for name, X in forms.items():
        Y = tr_small[1][:10] if name == "dense list" else tr_small[1]
        est = SequenceSVM(featurizer=f, max_epochs=2, random_state=0).fit(X, Y)
        if name == "dense list":
            continue
        ref = est.coef_ if ref is None else ref
        assert np.array_equal(est.coef_, ref), name


def test_sequence_svm_integer_tags_score_token_accuracy(conll_slice):
    tr, te = conll_slice
    f = datasets.SequenceFeaturizer(n_features=2**14)
    names = sorted({t for s in tr.tags for t in s} | {t for s in te.tags for t in s})
    ids = [np.array([names.index(t) for t in s]) for s in tr.tags[:60]]
    est = SequenceSVM(featurizer=f, max_epochs=2, random_state=0).fit(tr.tokens[:60], ids)
    gold = [np.array([names.index(t) for t in s]) for s in te.tags[:30]]
    P = est.predict(te.tokens[:30])
    acc = np.mean(np.concatenate(gold) == np.concatenate(P))
    assert est.score(te.tokens[:30], gold) == pytest.approx(acc)


def test_sequence_svm_bad_input(conll_slice):
    tr, _ = conll_slice
    est = SequenceSVM(featurizer=datasets.SequenceFeaturizer(2**12), max_epochs=1)
    with pytest.raises(InvalidInputError):
        est.fit(tr.tokens[:5], tr.tags[:4])
    with pytest.raises(InvalidInputError, match="empty"):
        est.fit([["a", "b"], []], [["O", "O"], []])
    est.fit(tr.tokens[:5], tr.tags[:5])
    with pytest.raises(InvalidInputError, match="unseen"):
        est._encode([["B-NOPE"]])


# ----------------------------------------------------------------------------- dependency


def test_dependency_svm_on_a_ud_slice(ud_slice):
    train, test = ud_slice
    est = DependencySVM(n_features=2**16, max_epochs=3, random_state=0).fit(train)
    P = est.predict(test)
    gold = np.concatenate([np.asarray(s["heads"]) for s in test])
    pred = np.concatenate([h for h, _ in P])
    assert est.score(test) == pytest.approx(float(np.mean(gold == pred)))
    assert est.score(test) > 0.4
    assert all(r in est.relations_ for _, rels in P for r in rels)


def test_dependency_svm_takes_the_treebank_dataset(data_dir):
    tb = datasets.load("ud_english_ewt", "dev", root=data_dir)
    small = datasets.TreebankDataset(
        words=tb.words[:30],
        heads=tb.heads[:30],
        deprels=tb.deprels[:30],
        upos=tb.upos[:30],
        xpos=tb.xpos[:30],
        lemmas=tb.lemmas[:30],
    )
    est = DependencySVM(n_features=2**14, labeled=False, max_epochs=2, random_state=0)
    est.fit(small)
    heads = est.predict(small)
    assert [len(h) for h in heads] == [len(w) for w in small.words]


def test_dependency_svm_bad_input():
    with pytest.raises(InvalidInputError, match="empty"):
        DependencySVM(max_epochs=1).fit([])
    with pytest.raises(InvalidInputError, match="upos"):
        DependencySVM(max_epochs=1).fit([{"words": ["a"], "heads": [0], "deprels": ["root"]}])


def test_top_level_exports():
    for name in ("StructuredSVM", "MultiLabelSVM", "SequenceSVM", "DependencySVM", "load"):
        assert getattr(bicrit, name) is getattr(bicrit.estimators, name)


def test_structured_svm_generic_chain_and_dependency_headlines(conll_slice, ud_slice):
    from bicrit.estimators import StructuredSVM

    tr, _ = conll_slice
    hs = datasets.SequenceFeaturizer(n_features=2**12).transform(tr.tokens[:40])
    names = tr.tag_names
    Y = [np.array([names.index(t) for t in s]) for s in tr.tags[:40]]
    est = StructuredSVM(structure="chain", max_epochs=2, random_state=0).fit((hs.X, hs.offsets), Y)
    P = est.predict((hs.X, hs.offsets))
    acc = float(np.mean(np.concatenate(Y) == np.concatenate(P)))
    assert est.score((hs.X, hs.offsets), Y) == pytest.approx(acc)

    train, _ = ud_slice
    gold = [(np.asarray(s["heads"]), list(s["deprels"])) for s in train[:20]]
    dep = StructuredSVM(structure="dependency", structure_params={"n_features": 2**12})
    dep.set_params(max_epochs=1, random_state=0).fit(train[:20], gold)
    heads = [h for h, _ in dep.predict(train[:20])]
    uas = float(np.mean(np.concatenate([g[0] for g in gold]) == np.concatenate(heads)))
    assert dep.score(train[:20], gold) == pytest.approx(uas)
