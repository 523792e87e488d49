"""A Weka ARFF reader for dense and sparse rows (scipy's ``loadarff`` reads no sparse ARFF).

Encoding, the same for every bicrit loader built on it:

* numeric (``numeric``, ``real``, ``integer``) values become float64;
* nominal values become float64 codes: a two-valued attribute whose values are, ignoring case,
  ``{0,1}``, ``{no,yes}``, ``{false,true}``, ``{n,y}`` or ``{f,t}`` (in any order) is encoded by
  meaning (``yes`` = 1); any other nominal attribute by the 0-based position of the value in its
  declaration, as Weka does internally (``ArffAttribute.values`` keeps the declaration, so a
  caller can one-hot encode);
* ``?`` (missing) becomes NaN; the literals ``NaN`` and ``inf`` (any case) and values that
  overflow to infinity are rejected with :class:`~bicrit.errors.DataFormatError`, because
  bicrit's estimators refuse non-finite input and ARFF spells missing as ``?``;
* ``string``, ``date`` and Clus ``hierarchical`` attributes are not encoded: their raw values are
  in ``ArffData.text`` and their column of ``X`` holds 0 (sparse rows may not give them values);
* in sparse rows (``{index value, ...}``, 0-based indices) a value left out is 0. Weka's rule
  is that it is the *first* declared nominal value, so a sparse file whose nominal attribute has a
  first value that does not encode as 0 (e.g. ``{YES,NO}``) is rejected rather than misread.

``relational`` attributes and instance weights (``{w}`` after a row) are not supported.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import compress
from pathlib import Path
from typing import Literal

import numpy as np
import scipy.sparse as sp

from bicrit.datasets._io import PathLike, read_lines
from bicrit.errors import DataFormatError

__all__ = ["ArffAttribute", "ArffData", "read_arff"]

AttributeKind = Literal["numeric", "nominal", "string", "date", "hierarchical"]

_NUMERIC_TYPES = {"numeric", "real", "integer"}
_BINARY_PAIRS = [("0", "1"), ("no", "yes"), ("false", "true"), ("n", "y"), ("f", "t")]
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "%": "%"}


@dataclass(frozen=True)
class ArffAttribute:
    """One ``@attribute`` declaration."""

    name: str
    kind: AttributeKind
    values: tuple[str, ...] = ()
    """Nominal values in declaration order; for ``hierarchical``, the declared items."""
    line: int = 0
    """1-based line of the declaration."""

    @property
    def codes(self) -> dict[str, float]:
        """Nominal value → its float code (see the module docstring)."""
        if self.kind != "nominal":
            return {}
        if len(self.values) == 2:
            low = tuple(v.lower() for v in self.values)
            for no, yes in _BINARY_PAIRS:
                if low in ((no, yes), (yes, no)):
                    return {v: float(v.lower() == yes) for v in self.values}
        return {v: float(i) for i, v in enumerate(self.values)}


@dataclass
class ArffData:
    """The content of an ARFF file, every attribute a column of ``X``."""

    path: Path
    relation: str
    attributes: list[ArffAttribute]
    X: np.ndarray | sp.csr_array
    """(n_rows, n_attributes) float64: dense ndarray, or CSR when the rows are sparse."""
    lines: np.ndarray
    """1-based file line of every row (int64), for error messages."""
    text: dict[int, list[str]] = field(default_factory=dict)
    """Raw values of the string/date/hierarchical columns, by column index."""

    @property
    def sparse(self) -> bool:
        """True when the rows were written sparse."""
        return bool(sp.issparse(self.X))

    def column(self, name: str) -> int:
        """Index of the (first) attribute called ``name``.

        ARFF names should be unique, but real files repeat some (gasch1 in Clus HMC declares
        ``Heat_Shock_000_minutes__hs_2`` twice); the reader accepts that and keeps both columns.
        """
        for i, a in enumerate(self.attributes):
            if a.name == name:
                return i
        raise KeyError(name)


# ---------------------------------------------------------------------------- tokenizing


def _unquote(tok: str, path: Path, line: int) -> str:
    q = tok[0]
    out: list[str] = []
    i = 1
    while i < len(tok):
        c = tok[i]
        if c == "\\" and i + 1 < len(tok):
            out.append(_ESCAPES.get(tok[i + 1], tok[i + 1]))
            i += 2
            continue
        if c == q:
            if i != len(tok) - 1:
                raise DataFormatError(path, line, f"text after the closing quote in {tok!r}")
            return "".join(out)
        out.append(c)
        i += 1
    raise DataFormatError(path, line, f"unterminated quote in {tok!r}")


def _split_quoted(text: str, path: Path, line: int, sep: str = ",") -> list[str]:
    """Split on ``sep`` outside quotes; strip and unquote each field."""
    fields: list[str] = []
    cur: list[str] = []
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            cur.append(c)
            if c == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
            cur.append(c)
        elif c == sep:
            fields.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if quote:
        raise DataFormatError(path, line, "unterminated quote")
    fields.append("".join(cur))
    out = []
    for f in fields:
        f = f.strip()
        out.append(_unquote(f, path, line) if f[:1] in ("'", '"') else f)
    return out


def _take_name(text: str, path: Path, line: int) -> tuple[str, str]:
    """The first (possibly quoted) token of ``text`` and the rest, stripped."""
    text = text.strip()
    if not text:
        raise DataFormatError(path, line, "missing name")
    if text[0] in "'\"":
        q = text[0]
        i = 1
        while i < len(text):
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == q:
                return _unquote(text[: i + 1], path, line), text[i + 1 :].strip()
            i += 1
        raise DataFormatError(path, line, "unterminated quote in a name")
    parts = text.split(None, 1)
    return parts[0], (parts[1].strip() if len(parts) > 1 else "")


def _parse_attribute(text: str, path: Path, line: int) -> ArffAttribute:
    name, rest = _take_name(text, path, line)
    low = rest.lower()
    if not rest:
        raise DataFormatError(path, line, f"attribute {name!r} has no type")
    if rest.startswith("{"):
        if not rest.endswith("}"):
            raise DataFormatError(path, line, f"attribute {name!r}: unterminated nominal list")
        values = _split_quoted(rest[1:-1], path, line)
        if values == [""]:
            raise DataFormatError(path, line, f"attribute {name!r}: empty nominal list")
        if len(set(values)) != len(values):
            raise DataFormatError(path, line, f"attribute {name!r}: a nominal value repeats")
        return ArffAttribute(name, "nominal", tuple(values), line)
    word = low.split(None, 1)[0]
    if word in _NUMERIC_TYPES:
        return ArffAttribute(name, "numeric", (), line)
    if word in ("string", "date"):
        return ArffAttribute(name, word, (), line)  # type: ignore[arg-type]
    if word == "hierarchical":
        parts = rest.split(None, 1)
        items = tuple(v.strip() for v in parts[1].split(",")) if len(parts) > 1 else ()
        return ArffAttribute(name, "hierarchical", items, line)
    if word == "relational":
        raise DataFormatError(path, line, f"attribute {name!r}: relational attributes unsupported")
    raise DataFormatError(path, line, f"attribute {name!r}: unknown type {rest.split()[0]!r}")


# ---------------------------------------------------------------------------- reading


def _counts_up(a: ArffAttribute) -> bool:
    """True when the nominal values are "0", "1", … in order, each its own code."""
    return all(v == str(i) for i, v in enumerate(a.values)) or a.values == ("1", "0")


def read_arff(path: PathLike) -> ArffData:
    """Read an ARFF file (``.gz`` too) with dense and/or sparse rows; see the module docstring.

    Raises :class:`~bicrit.errors.DataFormatError` naming the file and the 1-based line for a
    malformed header, a row with the wrong number of values (a truncated line), an unknown
    nominal value, a value that is not a number, a sparse index out of range, or NaN/inf.
    """
    p = Path(path)
    lines = read_lines(p)
    relation = ""
    attributes: list[ArffAttribute] = []
    data_start = -1
    for i, raw in enumerate(lines):
        s = raw.strip()
        if not s or s[0] == "%":
            continue
        key = s.split(None, 1)[0].lower()
        if key == "@relation":
            relation = _take_name(s[9:], p, i + 1)[0] if s[9:].strip() else ""
        elif key == "@attribute":
            attributes.append(_parse_attribute(s[10:], p, i + 1))
        elif key == "@data":
            data_start = i + 1
            break
        else:
            raise DataFormatError(p, i + 1, f"expected @relation, @attribute or @data: {s[:40]!r}")
    if data_start < 0:
        raise DataFormatError(p, len(lines), "no @data section (truncated file?)")
    if not attributes:
        raise DataFormatError(p, data_start, "no @attribute before @data")
    return _Reader(p, relation, attributes).read(lines, data_start)


class _Reader:
    def __init__(self, path: Path, relation: str, attributes: list[ArffAttribute]) -> None:
        self.path = path
        self.relation = relation
        self.attrs = attributes
        kinds = [a.kind for a in attributes]
        self.n = len(attributes)
        self.num_cols = [i for i, k in enumerate(kinds) if k in ("numeric", "nominal")]
        self.text_cols = [i for i, k in enumerate(kinds) if k not in ("numeric", "nominal")]
        self.is_numeric = np.array([k == "numeric" for k in kinds], dtype=bool)
        self.is_encoded = np.array([k in ("numeric", "nominal") for k in kinds], dtype=bool)
        self.codes = [a.codes for a in attributes]
        # Nominal attributes whose values are the numbers 0..k-1 (e.g. {0,1}) parse as numbers,
        # then are checked against 0..k-1: much faster on large sparse files.
        self.n_values = np.array([len(a.values) for a in attributes], dtype=np.float64)
        self.as_number = np.array(
            [
                k == "numeric" or (k == "nominal" and _counts_up(a))
                for k, a in zip(kinds, attributes, strict=True)
            ],
            dtype=bool,
        )

    def err(self, line: int, msg: str) -> DataFormatError:
        return DataFormatError(self.path, line, msg)

    def read(self, lines: list[str], start: int) -> ArffData:
        dense_vals: list[str] = []
        dense_rows: list[int] = []  # row index of each dense row
        sp_rows: list[int] = []
        sp_cols: list[str] = []
        sp_vals: list[str] = []
        sp_count: list[int] = []
        row_lines: list[int] = []
        text: dict[int, list[str]] = {c: [] for c in self.text_cols}
        pick = self._picker(self.num_cols)
        pick_text = [(c, operator.itemgetter(c)) for c in self.text_cols]
        for i in range(start, len(lines)):
            s = lines[i]
            if not s or s[0] == "%" or s.isspace():
                continue
            s = s.strip()
            if s[0] == "%":
                continue
            lineno = i + 1
            row = len(row_lines)
            row_lines.append(lineno)
            if s[0] == "{":
                self._sparse_row(s, lineno, row, sp_rows, sp_cols, sp_vals, sp_count, text)
                continue
            if "'" in s or '"' in s:
                fields = _split_quoted(s, self.path, lineno)
            else:
                fields = s.split(",")
                if " " in s or "\t" in s:
                    fields = [f.strip() for f in fields]
            if len(fields) != self.n:
                raise self.err(
                    lineno, f"expected {self.n} comma-separated values, found {len(fields)}"
                )
            dense_rows.append(row)
            dense_vals.extend(pick(fields))
            for c, get in pick_text:
                text[c].append(get(fields))
        n_rows = len(row_lines)
        lines_arr = np.asarray(row_lines, dtype=np.int64)
        self.row_lines = lines_arr
        if sp_count:
            X = self._build_sparse(n_rows, sp_rows, sp_cols, sp_vals, dense_rows, dense_vals)
        else:
            X = np.zeros((n_rows, self.n), dtype=np.float64)
            if self.num_cols and n_rows:
                cols = np.tile(np.asarray(self.num_cols, dtype=np.int64), n_rows)
                rows = np.repeat(np.arange(n_rows, dtype=np.int64), len(self.num_cols))
                X[:, self.num_cols] = self._encode(dense_vals, cols, rows).reshape(
                    n_rows, len(self.num_cols)
                )
        return ArffData(self.path, self.relation, self.attrs, X, lines_arr, text)

    @staticmethod
    def _picker(cols: list[int]) -> Callable[[list[str]], Sequence[str]]:
        if not cols:
            return lambda fields: ()
        if cols == list(range(len(cols))):
            k = len(cols)
            return lambda fields: fields[:k]
        if len(cols) == 1:
            c = cols[0]
            return lambda fields: (fields[c],)
        return operator.itemgetter(*cols)

    def _sparse_row(
        self,
        s: str,
        lineno: int,
        row: int,
        rows: list[int],
        cols: list[str],
        vals: list[str],
        count: list[int],
        text: dict[int, list[str]],
    ) -> None:
        if not s.endswith("}"):
            raise self.err(lineno, "sparse row without its closing '}' (truncated line?)")
        inner = s[1:-1]
        before = len(cols)
        if "'" in inner or '"' in inner:
            for item in _split_quoted(inner, self.path, lineno):
                idx, rest = _take_name(item, self.path, lineno)
                if rest[:1] in ("'", '"'):
                    rest = _unquote(rest, self.path, lineno)
                if not rest or not idx:
                    raise self.err(lineno, f"sparse entry {item.strip()!r} is not 'index value'")
                cols.append(idx)
                vals.append(rest)
        elif inner and not inner.isspace():
            # One split per row: index, value, ",", index, value, ... — so every item has
            # exactly two tokens iff the length is 3k - 1 with a comma at every third place.
            toks = inner.replace(",", " , ").split()
            n_items = inner.count(",") + 1
            if len(toks) != 3 * n_items - 1 or toks[2::3].count(",") != n_items - 1:
                bad = next(
                    (it for it in inner.split(",") if len(it.split()) != 2), inner.split(",")[0]
                )
                raise self.err(lineno, f"sparse entry {bad.strip()!r} is not 'index value'")
            cols.extend(toks[0::3])
            vals.extend(toks[1::3])
        rows.extend([row] * (len(cols) - before))
        count.append(len(cols) - before)
        for c in self.text_cols:  # string values of sparse rows: found below, else empty
            text[c].append("")

    def _build_sparse(
        self,
        n_rows: int,
        sp_rows: list[int],
        sp_cols: list[str],
        sp_vals: list[str],
        dense_rows: list[int],
        dense_vals: list[str],
    ) -> sp.csr_array:
        rows = np.asarray(sp_rows, dtype=np.int64)
        try:
            cols = np.fromiter(map(int, sp_cols), dtype=np.int64, count=len(sp_cols))
        except ValueError:
            k = next(k for k, c in enumerate(sp_cols) if not c.lstrip("-").isdigit())
            raise self.err(
                int(self.row_lines[rows[k]]), f"sparse index {sp_cols[k]!r} is not an integer"
            ) from None
        bad = (cols < 0) | (cols >= self.n)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise self.err(
                int(self.row_lines[rows[k]]),
                f"sparse index {cols[k]} outside 0..{self.n - 1}",
            )
        for a in self.attrs:  # Weka: a value left out is the first nominal value
            if a.kind == "nominal" and a.codes[a.values[0]] != 0.0:
                raise self.err(
                    a.line,
                    f"sparse rows leave out the first value {a.values[0]!r} of nominal attribute "
                    f"{a.name!r}, which bicrit encodes as {a.codes[a.values[0]]:g}, not 0",
                )
        vals_list = list(sp_vals)
        text_mask = ~self.is_encoded[cols]
        if text_mask.any():
            k = int(np.flatnonzero(text_mask)[0])
            a = self.attrs[int(cols[k])]
            raise self.err(
                int(self.row_lines[rows[k]]), f"{a.kind} attribute {a.name!r} in a sparse row"
            )
        if dense_rows:  # dense rows inside a sparse file
            nc = len(self.num_cols)
            rows = np.concatenate([rows, np.repeat(np.asarray(dense_rows, dtype=np.int64), nc)])
            cols = np.concatenate(
                [cols, np.tile(np.asarray(self.num_cols, dtype=np.int64), len(dense_rows))]
            )
            vals_list = vals_list + list(dense_vals)
        key = rows * self.n + cols
        uniq, first = np.unique(key, return_index=True)
        if len(uniq) != len(key):
            dup = np.setdiff1d(np.arange(len(key)), first)[0]
            raise self.err(
                int(self.row_lines[rows[dup]]),
                f"attribute {self.attrs[int(cols[dup])].name!r} (index {int(cols[dup])}) "
                "given twice in one row",
            )
        data = self._encode(vals_list, cols, rows)
        X = sp.coo_array((data, (rows, cols)), shape=(n_rows, self.n)).tocsr()
        X.sum_duplicates()
        X.sort_indices()
        return X

    def _encode(self, values: list[str], cols: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Float codes of ``values`` (strings) of columns ``cols`` in rows ``rows``."""
        num = self.as_number[cols]
        if num.all():
            return self._numbers(values, cols, rows)
        out = np.empty(len(values), dtype=np.float64)
        nom = ~num
        if num.any():
            out[num] = self._numbers(list(compress(values, num.tolist())), cols[num], rows[num])
        out[nom] = self._nominals(list(compress(values, nom.tolist())), cols[nom], rows[nom])
        return out

    def _numbers(self, values: list[str], cols: np.ndarray, rows: np.ndarray) -> np.ndarray:
        miss: list[int] = []
        if "?" in values:
            values = list(values)
            k = values.index("?")
            while True:
                miss.append(k)
                values[k] = "0"
                try:
                    k = values.index("?", k + 1)
                except ValueError:
                    break
        try:
            x = np.fromiter(map(float, values), dtype=np.float64, count=len(values))
        except ValueError:
            for k, v in enumerate(values):
                try:
                    float(v)
                except ValueError:
                    raise self._bad(k, cols, rows, f"value {v!r} is not a number") from None
            raise
        bad = ~np.isfinite(x)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise self._bad(
                k, cols, rows, f"non-finite value {values[k]!r} (write missing values as '?')"
            )
        coded = ~self.is_numeric[cols]
        if coded.any():  # nominal values 0..k-1 read as numbers
            xc = x[coded]
            bad = (xc != np.floor(xc)) | (xc < 0) | (xc >= self.n_values[cols[coded]])
            if bad.any():
                k = int(np.flatnonzero(coded)[np.flatnonzero(bad)[0]])
                allowed = ", ".join(self.attrs[int(cols[k])].values[:10])
                raise self._bad(k, cols, rows, f"value {values[k]!r} is not one of {{{allowed}}}")
        x[miss] = np.nan
        return x

    def _nominals(self, values: list[str], cols: np.ndarray, rows: np.ndarray) -> np.ndarray:
        uv, vinv = np.unique(np.asarray(values), return_inverse=True)
        key = cols * len(uv) + vinv.reshape(-1)
        uk, kinv = np.unique(key, return_inverse=True)
        codes = np.empty(len(uk), dtype=np.float64)
        for j, k in enumerate(uk.tolist()):
            col, v = divmod(k, len(uv))
            value = str(uv[v])
            code = self.codes[col].get(value)
            if code is None:
                if value != "?":
                    k0 = int(np.flatnonzero(key == k)[0])
                    allowed = ", ".join(self.attrs[col].values[:10])
                    raise self._bad(k0, cols, rows, f"value {value!r} is not one of {{{allowed}}}")
                code = np.nan
            codes[j] = code
        return codes[kinv.reshape(-1)]

    def _bad(self, k: int, cols: np.ndarray, rows: np.ndarray, msg: str) -> DataFormatError:
        name = self.attrs[int(cols[k])].name
        return self.err(int(self.row_lines[rows[k]]), f"attribute {name!r}: {msg}")
