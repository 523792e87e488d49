"""The pickle-free model file: bit-identical round trips for every estimator, refusal of newer
versions, corrupted files and missing plugins, and the registration interface."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import bicrit
from bicrit import datasets
from bicrit.errors import InvalidParameterError, ModelFormatError
from bicrit.estimators import (
    DependencySVM,
    MultiLabelSVM,
    SequenceSVM,
    StructuredSVM,
    load_model,
    register_estimator,
)
from bicrit.estimators.model_format import ESTIMATOR_CLASSES, FORMAT_VERSION


def _assert_same_predictions(a, b) -> None:
    if isinstance(a, np.ndarray):
        assert np.array_equal(a, b)
        return
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        if isinstance(x, tuple):
            assert np.array_equal(x[0], y[0]) and list(x[1]) == list(y[1])
        else:
            assert np.array_equal(np.asarray(x), np.asarray(y))


def _round_trip(est, X, tmp_path: Path, cls=None):
    path = tmp_path / "model.bicrit"
    est.save(path)
    with zipfile.ZipFile(path) as zf:  # no pickle anywhere: JSON + .npy
        assert "manifest.json" in zf.namelist()
        for name in zf.namelist():
            if name.endswith(".npy"):
                np.load(io.BytesIO(zf.read(name)), allow_pickle=False)
    loaded = (cls or type(est)).load(path)
    assert type(loaded) is type(est)
    assert loaded.get_params().keys() == est.get_params().keys()
    w0, w1 = np.asarray(est.coef_), np.asarray(loaded.coef_)
    assert w0.dtype == w1.dtype and w0.tobytes() == w1.tobytes()  # bit-identical
    _assert_same_predictions(est.predict(X), loaded.predict(X))
    assert loaded.history_.height == est.history_.height
    return loaded


def test_structured_multiclass_round_trip(iris_scaled, tmp_path):
    X, y = iris_scaled
    names = np.array(["a", "b", "c"])[y]
    est = StructuredSVM(structure="multiclass", surrogate="slack", max_epochs=3, random_state=0)
    loaded = _round_trip(est.fit(X, names), X, tmp_path)
    assert list(loaded.classes_) == ["a", "b", "c"]
    assert bicrit.load(tmp_path / "model.bicrit").score(X, names) == est.score(X, names)


def test_structured_multilabel_tree_edges_round_trip(emotions_scaled, tmp_path):
    X, Y, Xt, _ = emotions_scaled
    est = StructuredSVM(structure_params={"edges": "tree"}, max_epochs=2, random_state=0)
    loaded = _round_trip(est.fit(X, Y), Xt, tmp_path)
    assert np.array_equal(loaded.structure_.edges_, est.structure_.edges_)


def test_structured_with_surrogate_object_round_trip(emotions_scaled, tmp_path):
    X, Y, Xt, _ = emotions_scaled
    est = StructuredSVM(surrogate=bicrit.surrogate("beta", beta=0.5), max_epochs=2)
    loaded = _round_trip(est.set_params(random_state=0).fit(X, Y), Xt, tmp_path)
    assert loaded.surrogate.name == "beta" and loaded.surrogate.params == {"beta": 0.5}


def test_multilabel_round_trip_keeps_scaling(emotions, tmp_path):
    tr, te = emotions
    est = MultiLabelSVM(max_epochs=2, random_state=0).fit(tr)
    loaded = _round_trip(est, te.X, tmp_path)
    assert loaded.scale_std_.tobytes() == est.scale_std_.tobytes()
    assert loaded.label_names_ == tr.label_names


def test_sequence_round_trip(conll_slice, tmp_path):
    tr, te = conll_slice
    est = SequenceSVM(featurizer=datasets.SequenceFeaturizer(2**14), max_epochs=2)
    est.set_params(random_state=0).fit(tr.tokens[:50], tr.tags[:50])
    loaded = _round_trip(est, te.tokens[:20], tmp_path)
    assert loaded.tags_ == est.tags_


def test_dependency_round_trip(ud_slice, tmp_path):
    train, test = ud_slice
    est = DependencySVM(n_features=2**14, max_epochs=2, random_state=0).fit(train[:30])
    _round_trip(est, test[:10], tmp_path)


@pytest.fixture()
def saved(emotions, tmp_path) -> Path:
    tr, _ = emotions
    path = tmp_path / "m.bicrit"
    MultiLabelSVM(max_epochs=1, random_state=0).fit(tr).save(path)
    return path


def _rewrite(path: Path, out: Path, *, manifest=None, drop=None, replace=None) -> Path:
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            if name == drop:
                continue
            data = src.read(name)
            if name == "manifest.json" and manifest is not None:
                data = json.dumps(manifest(json.loads(data))).encode()
            if replace is not None and name == replace[0]:
                data = replace[1](data)
            dst.writestr(name, data)
    return out


def test_newer_format_version_is_refused(saved, tmp_path):
    def newer(m):
        m["format_version"] = FORMAT_VERSION + 1
        return m

    bad = _rewrite(saved, tmp_path / "newer.bicrit", manifest=newer)
    with pytest.raises(ModelFormatError, match="upgrade bicrit"):
        bicrit.load(bad)


def test_checksum_mismatch_is_refused(saved, tmp_path):
    def flip(data: bytes) -> bytes:
        return data[:-1] + bytes([data[-1] ^ 1])

    bad = _rewrite(saved, tmp_path / "flip.bicrit", replace=("arrays/coef.npy", flip))
    with pytest.raises(ModelFormatError, match="checksum"):
        bicrit.load(bad)


def test_missing_entry_is_refused(saved, tmp_path):
    bad = _rewrite(saved, tmp_path / "drop.bicrit", drop="arrays/coef.npy")
    with pytest.raises(ModelFormatError, match="missing"):
        bicrit.load(bad)


def test_truncated_file_is_refused(saved, tmp_path):
    bad = tmp_path / "cut.bicrit"
    bad.write_bytes(saved.read_bytes()[: saved.stat().st_size // 2])
    with pytest.raises(ModelFormatError):
        bicrit.load(bad)


def test_not_a_model_file(tmp_path):
    p = tmp_path / "x.bicrit"
    p.write_text("hello")
    with pytest.raises(ModelFormatError, match="not a bicrit model"):
        bicrit.load(p)
    with pytest.raises(FileNotFoundError):
        bicrit.load(tmp_path / "absent.bicrit")


def test_missing_plugin_is_refused(saved, tmp_path):
    def plugin_surrogate(m):
        m["config"]["params"]["surrogate"] = {
            "piece": "surrogate",
            "name": "not-installed-plugin",
            "params": {},
        }
        return m

    bad = _rewrite(saved, tmp_path / "plugin.bicrit", manifest=plugin_surrogate)
    with pytest.raises(ModelFormatError, match=r"not-installed-plugin.*not installed"):
        bicrit.load(bad)


def test_loading_as_the_wrong_class_is_refused(saved):
    with pytest.raises(ModelFormatError, match="not a SequenceSVM"):
        SequenceSVM.load(saved)


def test_register_estimator_interface(tmp_path, iris_scaled):
    class Custom(StructuredSVM):
        pass

    register_estimator("tests.Custom", Custom)
    try:
        assert ESTIMATOR_CLASSES["tests.Custom"] is Custom
        with pytest.raises(InvalidParameterError, match="taken"):
            register_estimator("tests.Custom", StructuredSVM)
        X, y = iris_scaled
        est = Custom(structure="multiclass", max_epochs=1, random_state=0).fit(X, y)
        est.save(tmp_path / "c.bicrit")
        assert type(load_model(tmp_path / "c.bicrit")) is Custom
        with pytest.raises(InvalidParameterError, match="_export"):
            register_estimator("tests.Bad", object)
    finally:
        ESTIMATOR_CLASSES.pop("tests.Custom", None)


def test_sequence_segment_loss_round_trip(conll_slice, tmp_path):
    tr, te = conll_slice
    est = SequenceSVM(featurizer=datasets.SequenceFeaturizer(2**12), loss="segment")
    est.set_params(max_epochs=1, random_state=0).fit(tr.tokens[:20], tr.tags[:20])
    loaded = _round_trip(est, te.tokens[:10], tmp_path)
    assert loaded.structure_.loss_name == "segment"
