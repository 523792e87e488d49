"""MULAN multi-label datasets: an ARFF file (dense or sparse) plus an XML file naming the labels.

Labels are taken **by name** from the XML, in the XML's order (which may differ from the
ARFF's); every other attribute is a feature, except ``string``/``date`` attributes and those named
in ``drop`` (genbase's ``protein`` identifier), which are left out and listed in
``MultiLabelDataset.dropped``. Values are encoded as :mod:`bicrit.datasets.arff` describes
(nominal → float codes, ``{YES,NO}`` → 1/0). None of the MULAN files here has a missing value,
so ``?`` in a feature is an error by default (``missing="nan"`` keeps NaN); ``?`` in a label is
always an error.
"""

from __future__ import annotations

import xml.parsers.expat
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from bicrit.datasets._io import PathLike
from bicrit.datasets.arff import read_arff
from bicrit.errors import DataFormatError, InvalidInputError

__all__ = ["MultiLabelDataset", "read_mulan", "read_mulan_labels"]


@dataclass(frozen=True)
class MultiLabelDataset:
    """A multi-label dataset: features ``X`` and 0/1 indicators ``Y``."""

    X: np.ndarray | sp.csr_array
    """(n, d) float64: a dense array for dense ARFF, a CSR array (sorted, int32 indices) for
    sparse ARFF."""
    Y: np.ndarray
    """(n, K) int8 0/1, columns in ``label_names`` order (the XML's)."""
    feature_names: list[str]
    label_names: list[str]
    nominal: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Declared values of the nominal features (encoded as in :mod:`bicrit.datasets.arff`)."""
    dropped: tuple[str, ...] = ()
    """Attributes that are neither features nor labels (ids, strings, dates)."""
    path: Path | None = None

    @property
    def n_samples(self) -> int:
        """Number of instances."""
        return int(self.Y.shape[0])

    @property
    def n_features(self) -> int:
        """Number of feature columns."""
        return int(self.X.shape[1])

    @property
    def n_labels(self) -> int:
        """Number of labels K."""
        return int(self.Y.shape[1])

    def __len__(self) -> int:
        return self.n_samples

    def subset(self, indices: Sequence[int] | np.ndarray) -> MultiLabelDataset:
        """The instances ``indices`` (in that order) as a dataset."""
        idx = np.asarray(indices, dtype=np.int64)
        return replace(self, X=self.X[idx], Y=self.Y[idx])

    def context(self, i: int) -> dict[str, Any]:
        """What ``bicrit predict`` writes beside instance ``i``'s prediction (nothing: a
        feature vector)."""
        return {}

    def __repr__(self) -> str:
        kind = "sparse" if sp.issparse(self.X) else "dense"
        return (
            f"MultiLabelDataset({self.n_samples} instances, {self.n_features} {kind} features, "
            f"{self.n_labels} labels)"
        )


def read_mulan_labels(xml_path: PathLike) -> list[tuple[str, int]]:
    """Label names of a MULAN XML file in document order, each with its 1-based line.

    Nested ``<label>`` elements (MULAN's label hierarchies) are flattened in document order.
    """
    p = Path(xml_path)
    out: list[tuple[str, int]] = []
    parser = xml.parsers.expat.ParserCreate()

    def start(tag: str, attrs: dict[str, str]) -> None:
        if tag.rsplit(":", 1)[-1] == "label":
            line = parser.CurrentLineNumber
            if "name" not in attrs:
                raise DataFormatError(p, line, "<label> without a name attribute")
            out.append((attrs["name"], line))

    parser.StartElementHandler = start
    try:
        parser.Parse(p.read_bytes(), True)
    except xml.parsers.expat.ExpatError as exc:
        raise DataFormatError(p, exc.lineno, f"malformed XML: {exc}") from None
    except LookupError as exc:  # the XML declaration names an unknown encoding
        raise DataFormatError(p, parser.CurrentLineNumber, f"malformed XML: {exc}") from None
    seen: dict[str, int] = {}
    for name, line in out:
        if name in seen:
            raise DataFormatError(p, line, f"label {name!r} listed twice (first on {seen[name]})")
        seen[name] = line
    if not out:
        raise DataFormatError(p, None, "no <label> element")
    return out


def read_mulan(
    arff_path: PathLike,
    xml_path: PathLike,
    *,
    drop: Sequence[str] = (),
    missing: Literal["error", "nan"] = "error",
) -> MultiLabelDataset:
    """Read a MULAN dataset (see the module docstring).

    Parameters
    ----------
    arff_path, xml_path
        The ARFF file (``.gz`` too) and the XML label file.
    drop
        Names of further attributes to leave out (identifiers).
    missing
        ``"error"``: a ``?`` among the features raises; ``"nan"``: it is kept as NaN.

    Raises
    ------
    DataFormatError
        Naming the file and line: malformed ARFF or XML, an XML label that is not an ARFF
        attribute, a label attribute that is not ``{0,1}``, a missing label value.
    """
    if missing not in ("error", "nan"):
        raise InvalidInputError(f"missing must be 'error' or 'nan', got {missing!r}")
    xml_p = Path(xml_path)
    labels = read_mulan_labels(xml_p)
    data = read_arff(arff_path)
    path, attrs = data.path, data.attributes
    by_name: dict[str, list[int]] = {}
    for i, a in enumerate(attrs):
        by_name.setdefault(a.name, []).append(i)
    label_cols: list[int] = []
    for name, line in labels:
        cols = by_name.get(name)
        if not cols:
            raise DataFormatError(xml_p, line, f"label {name!r} is not an attribute of {path}")
        if len(cols) > 1:
            raise DataFormatError(path, attrs[cols[1]].line, f"label {name!r} declared twice")
        a = attrs[cols[0]]
        if a.kind != "nominal" or {v for v in a.values} != {"0", "1"}:
            raise DataFormatError(
                path,
                a.line,
                f"label {name!r} must be a nominal {{0,1}} attribute, found {a.kind}"
                + (f" {{{','.join(a.values)}}}" if a.values else ""),
            )
        label_cols.append(cols[0])
    unknown = sorted(set(drop) - set(by_name))
    if unknown:
        raise InvalidInputError(f"drop names attributes that {path} lacks: {unknown}")
    is_label = set(label_cols)
    feat_cols, dropped = [], []
    for i, a in enumerate(attrs):
        if i in is_label:
            continue
        if a.kind in ("numeric", "nominal") and a.name not in drop:
            feat_cols.append(i)
        else:
            dropped.append(a.name)

    X: Any = data.X
    if sp.issparse(X):
        Yf = X[:, label_cols].toarray()
        Xf = _csr32(X[:, feat_cols])
        fvals = Xf.data
    else:
        Yf = X[:, label_cols]
        Xf = np.ascontiguousarray(X[:, feat_cols])
        fvals = Xf
    if np.isnan(Yf).any():
        r, c = np.argwhere(np.isnan(Yf))[0]
        raise DataFormatError(path, int(data.lines[r]), f"label {labels[c][0]!r} is missing ('?')")
    if missing == "error" and np.isnan(fvals).any():
        r, c = _first_nan(Xf)
        raise DataFormatError(
            path,
            int(data.lines[r]),
            f"missing value '?' in feature {attrs[feat_cols[c]].name!r} "
            "(read with missing='nan' to keep NaN)",
        )
    return MultiLabelDataset(
        X=Xf,
        Y=Yf.astype(np.int8),
        feature_names=[attrs[i].name for i in feat_cols],
        label_names=[name for name, _ in labels],
        nominal={attrs[i].name: attrs[i].values for i in feat_cols if attrs[i].kind == "nominal"},
        dropped=tuple(dropped),
        path=path,
    )


def _csr32(X: sp.sparray) -> sp.csr_array:
    X = sp.csr_array(X, dtype=np.float64)
    X.sum_duplicates()
    X.sort_indices()
    return sp.csr_array(
        (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape
    )


def _first_nan(X: Any) -> tuple[int, int]:
    if sp.issparse(X):
        k = int(np.flatnonzero(np.isnan(X.data))[0])
        row = int(np.searchsorted(X.indptr, k, side="right") - 1)
        return row, int(X.indices[k])
    r, c = np.argwhere(np.isnan(X))[0]
    return int(r), int(c)
