"""Mutated data files for the loader fuzz tests (``test_loader_fuzz.py``: ≥ 10⁴ inputs per
format in every test run, and a Hypothesis test per format that shrinks a failure to one
mutation) and the bench (``benches/reliability/fuzz_loaders.py``: 10⁵ per format).

Every format starts from a slice of a real file of the development data (a few rows or
sentences; ARFF files keep a few of their features, MULAN files all their labels, Clus HMC
files a part of their hierarchy that contains every label of the rows kept), so that a load
takes about a millisecond. One mutation — bit flips, random bytes, truncation, inserted or
deleted bytes, lines dropped, repeated, swapped or copied, a field replaced by a nasty token
or dropped or repeated, CRLF line ends, a byte-order mark, Latin-1 text, an empty file — is
applied to one of the format's files; the loader must then load or raise ``DataFormatError``
naming the file (one line; with the line number where a line is at fault).
"""

from __future__ import annotations

import gzip
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bicrit import datasets
from bicrit.errors import DataFormatError

#: choose(n) -> an int in [0, n): a seeded generator in the fast loop, Hypothesis's draws in
#: the shrinking test.
Choose = Callable[[int], int]

MUTATIONS = (
    "flip",
    "bytes",
    "truncate",
    "insert",
    "delete",
    "drop-line",
    "repeat-line",
    "swap-lines",
    "copy-line",
    "field",
    "drop-field",
    "repeat-field",
    "crlf",
    "bom",
    "latin1",
    "empty",
)

#: What a field is replaced by: numbers at the edges, missing values, ARFF/CoNLL syntax.
TOKENS = (
    "", "?", "nan", "NaN", "inf", "-inf", "1e999", "-1e999", "-1", "0", "1", "2", "-0",
    "999999999999999999999", "1.5", "0x10", "1_0", "x", "{", "}", "{}", "{0 1}", "{99999 1}",
    "'", '"', "'a", "%", "@data", "@attribute a numeric", "@relation r", "\t", " ", ",", "@",
    "/", "//", "root", "root/root", "a/b/c", "01/01", "_", "é", "\x00", "\ufeff", "#", "# c",
    "-", "B-", "I-", "B-X", "O", "1-2", "2.1", "0\t0", "a b", "\u2028", "GO0003674",
)  # fmt: skip
SEPARATORS = (",", "\t", " ", "@", "/", "{", "}", "|")


@dataclass
class Format:
    """A loader and the files it reads (``name -> bytes``); ``load(folder)`` reads them from
    ``folder``."""

    name: str
    files: dict[str, bytes]
    load: Callable[[Path], Any]


@dataclass
class Tally:
    """Outcomes by (format, mutation): ``loaded``, ``refused`` (DataFormatError with a line
    number), ``refused-file`` (DataFormatError about the whole file); escapes in ``failures``."""

    counts: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    failures: list[tuple[str, str, str]] = field(default_factory=list)

    def per_format(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for (fmt, _, _), n in self.counts.items():
            out[fmt] += n
        return out

    def outcomes(self, fmt: str | None = None) -> Counter[str]:
        out: Counter[str] = Counter()
        for (f, _, o), n in self.counts.items():
            if fmt is None or f == fmt:
                out[o] += n
        return out


# ---------------------------------------------------------------------------- real slices


def _lines(path: Path) -> list[str]:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8").split("\n")


def _attribute_name(line: str) -> str:
    rest = line.split(None, 1)[1].strip()
    if rest[0] in "'\"":
        return rest[1 : rest.index(rest[0], 1)]
    return rest.split()[0]


def arff_slice(
    src: Path,
    *,
    features: int,
    rows: int,
    keep: Callable[[str], bool],
    label_filter: Callable[[str], str | None] | None = None,
    hierarchy: Callable[[str], str] | None = None,
) -> str:
    """The first ``features`` attributes of ``src`` that ``keep`` does not single out, every
    attribute it does (labels, the class), and the first ``rows`` data rows on them (dense or
    sparse; ``label_filter`` rewrites the last value of a dense row, None drops the row;
    ``hierarchy`` rewrites a ``hierarchical`` attribute line)."""
    lines = _lines(src)
    start = next(i for i, ln in enumerate(lines) if ln.strip().lower() == "@data")
    header, kept_cols, n_feat = [], [], 0
    col = 0
    for ln in lines[:start]:
        if not ln.lower().startswith("@attribute"):
            header.append(ln)
            continue
        name = _attribute_name(ln)
        if keep(name) or n_feat < features:
            if not keep(name):
                n_feat += 1
            kept_cols.append(col)
            if hierarchy is not None and " hierarchical " in ln:
                ln = hierarchy(ln)
            header.append(ln)
        col += 1
    remap = {c: i for i, c in enumerate(kept_cols)}
    out = [*header, lines[start]]
    for ln in lines[start + 1 :]:
        if len(out) - len(header) - 1 >= rows:
            break
        s = ln.strip()
        if not s or s.startswith("%"):
            continue
        if s.startswith("{"):
            pairs = [p.split() for p in s[1:-1].split(",") if p.strip()]
            kept = [f"{remap[int(i)]} {v}" for i, v in pairs if int(i) in remap]
            out.append("{" + ",".join(kept) + "}")
            continue
        values = s.split(",")
        kept = [values[c] for c in kept_cols]
        if label_filter is not None:
            last = label_filter(kept[-1])
            if last is None:
                continue
            kept[-1] = last
        out.append(",".join(kept))
    return "\n".join(out) + "\n"


def _tree_part(line: str, n: int) -> tuple[str, set[str]]:
    """A ``hierarchical`` line with the first ``n`` paths of its tree (a preorder prefix:
    ancestors come first)."""
    head, _, items = line.rpartition(" ")
    kept = items.split(",")[:n]
    return f"{head} {','.join(kept)}", set(kept)


def _dag_part(line: str, n: int) -> tuple[str, set[str]]:
    """A ``hierarchical`` line with the ``n`` nodes nearest ``root`` (breadth first) and
    every edge between them."""
    head, _, items = line.rpartition(" ")
    edges = [tuple(e.split("/")) for e in items.split(",")]
    children: dict[str, list[str]] = {}
    for p, c in edges:
        children.setdefault(p, []).append(c)
    kept, queue = {"root"}, ["root"]
    while queue and len(kept) < n:
        for c in children.get(queue.pop(0), []):
            if c not in kept and len(kept) < n:
                kept.add(c)
                queue.append(c)
    part = [f"{p}/{c}" for p, c in edges if p in kept and c in kept]
    return f"{head} {','.join(part)}", kept - {"root"}


def clus_slice(src: Path, *, dag: bool, nodes: int, features: int, rows: int) -> str:
    lines = _lines(src)
    [hline] = [ln for ln in lines if " hierarchical " in ln]
    _, kept_nodes = (_dag_part if dag else _tree_part)(hline, nodes)

    def labels(value: str) -> str | None:
        kept = [v for v in value.split("@") if v in kept_nodes]
        return "@".join(kept) or None

    return arff_slice(
        src,
        features=features,
        rows=rows,
        keep=lambda name: name.lower() == "class",
        label_filter=labels,
        hierarchy=lambda ln: (_dag_part if dag else _tree_part)(ln, nodes)[0],
    )


def sentences(src: Path, n: int, *, skip_comments: bool = False) -> str:
    """The first ``n`` blank-line separated blocks of a column file."""
    out, blocks = [], 0
    for ln in _lines(src):
        out.append(ln)
        if not ln.strip():
            blocks += 1
            if blocks >= n:
                break
    return "\n".join(out).rstrip("\n") + "\n\n"


def formats(data: Path) -> list[Format]:
    """The fuzzed formats, each from a slice of a real file under ``data``."""
    from bicrit.datasets.mulan import read_mulan_labels

    yeast_labels = {n for n, _ in read_mulan_labels(data / "yeast" / "yeast.xml")}
    medical_labels = {n for n, _ in read_mulan_labels(data / "medical" / "medical.xml")}
    dense = arff_slice(
        data / "yeast" / "yeast-train.arff", features=8, rows=12, keep=yeast_labels.__contains__
    )
    sparse = arff_slice(
        data / "medical" / "medical-train.arff",
        features=40,
        rows=12,
        keep=medical_labels.__contains__,
    )
    yeast_xml = (data / "yeast" / "yeast.xml").read_bytes()
    medical_xml = (data / "medical" / "medical.xml").read_bytes()
    clus = data / "clus_hmc"
    tree = clus_slice(
        clus / "datasets_FUN" / "eisen_FUN" / "eisen_FUN.train.arff",
        dag=False,
        nodes=60,
        features=8,
        rows=12,
    )
    dag = clus_slice(
        clus / "datasets_GO" / "eisen_GO" / "eisen_GO.train.arff",
        dag=True,
        nodes=60,
        features=8,
        rows=12,
    )
    conll = sentences(data / "conll2002" / "esp.train", 4)
    conllu = sentences(data / "ud_english_ewt" / "en_ewt-ud-dev.conllu", 2)
    malt = sentences(data / "nltk_dependency_treebank" / "dependency_treebank" / "wsj_0001.dp", 2)

    def mulan(folder: Path) -> Any:
        return datasets.read_mulan(folder / "d.arff", folder / "d.xml")

    return [
        Format("arff-dense", {"d.arff": dense.encode(), "d.xml": yeast_xml}, mulan),
        Format("arff-sparse", {"d.arff": sparse.encode(), "d.xml": medical_xml}, mulan),
        Format("mulan-xml", {"d.xml": yeast_xml, "d.arff": dense.encode()}, mulan),
        Format("conll", {"d.conll": conll.encode()}, lambda f: datasets.read_conll(f / "d.conll")),
        Format(
            "conllu", {"d.conllu": conllu.encode()}, lambda f: datasets.read_conllu(f / "d.conllu")
        ),
        Format(
            "conllu-gz",
            {"d.conllu.gz": gzip.compress(conllu.encode(), mtime=0)},
            lambda f: datasets.read_conllu(f / "d.conllu.gz"),
        ),
        Format("malt-tab", {"d.dp": malt.encode()}, lambda f: datasets.read_malt_tab(f / "d.dp")),
        Format(
            "clus-tree", {"d.arff": tree.encode()}, lambda f: datasets.read_clus_hmc(f / "d.arff")
        ),
        Format(
            "clus-dag", {"d.arff": dag.encode()}, lambda f: datasets.read_clus_hmc(f / "d.arff")
        ),
    ]


# ---------------------------------------------------------------------------- mutations


def _split_lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def mutate(data: bytes, kind: str, choose: Choose) -> bytes:
    """``data`` with one mutation of ``kind``; every random choice goes through ``choose``."""
    n = len(data)
    if kind == "empty" or n == 0:
        return b""
    if kind == "flip":
        b = bytearray(data)
        b[choose(n)] ^= 1 << choose(8)
        return bytes(b)
    if kind == "bytes":
        at, k = choose(n), 1 + choose(8)
        junk = bytes(choose(256) for _ in range(k))
        return data[:at] + junk + data[at + k :]
    if kind == "truncate":
        return data[: choose(n)]
    if kind == "insert":
        at = choose(n + 1)
        return data[:at] + bytes(choose(256) for _ in range(1 + choose(16))) + data[at:]
    if kind == "delete":
        at = choose(n)
        return data[:at] + data[at + 1 + choose(64) :]
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n")
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind == "latin1":
        return data.decode("utf-8", "replace").encode("latin-1", "replace") + "é\n".encode(
            "latin-1"
        )
    lines = _split_lines(data)
    i = choose(len(lines))
    if kind == "drop-line":
        del lines[i]
    elif kind == "repeat-line":
        lines.insert(i, lines[i])
    elif kind == "swap-lines":
        j = choose(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "copy-line":
        lines[i] = lines[choose(len(lines))]
    elif kind in ("field", "drop-field", "repeat-field"):
        lines[i] = _mutate_field(lines[i], kind, choose)
    else:
        raise ValueError(f"unknown mutation {kind!r}")
    return b"\n".join(lines)


def _mutate_field(line: bytes, kind: str, choose: Choose) -> bytes:
    text = line.decode("utf-8", "surrogateescape")
    sep = SEPARATORS[choose(len(SEPARATORS))]
    if sep not in text:
        sep = next((s for s in SEPARATORS if s in text), " ")
    parts = re.split(f"({re.escape(sep)})", text)
    fields = parts[0::2]
    k = choose(len(fields))
    if kind == "field":
        fields[k] = TOKENS[choose(len(TOKENS))]
    elif kind == "drop-field":
        del fields[k]
    else:
        fields.insert(k, fields[k])
    return sep.join(fields).encode("utf-8", "surrogateescape")


# ---------------------------------------------------------------------------- checking


def write(fmt: Format, folder: Path, target: str | None = None, blob: bytes = b"") -> None:
    """Writes ``fmt``'s files into ``folder`` (``target`` replaced by ``blob``)."""
    for name, data in fmt.files.items():
        p = folder / name
        p.unlink(missing_ok=True)  # a new file: truncating one in place is slow on ext4
        p.write_bytes(blob if name == target else data)


def check(fmt: Format, folder: Path, target: str, blob: bytes) -> str:
    """Loads ``fmt`` with ``target`` replaced by ``blob``: "loaded", "refused" (a
    DataFormatError with a line), "refused-file" (one about the whole file). Any other
    exception propagates; a DataFormatError that does not name the mutated file or spans
    lines fails an assertion."""
    p = folder / target
    p.unlink(missing_ok=True)
    p.write_bytes(blob)
    try:
        fmt.load(folder)
    except DataFormatError as exc:
        message = str(exc)
        assert "\n" not in message, message
        assert exc.path.startswith(str(folder)), message
        return "refused" if exc.line is not None else "refused-file"
    return "loaded"


def run(fmts: list[Format], per_format: int, seed: int, folder: Path) -> Tally:
    """``per_format`` mutated inputs of every format, every mutation in turn, seeded."""
    import warnings

    rng = np.random.default_rng(seed)

    def choose(n: int) -> int:
        return int(rng.integers(n))

    tally = Tally()
    for fmt in fmts:
        sub = folder / fmt.name
        sub.mkdir(exist_ok=True)
        write(fmt, sub)
        targets = [next(iter(fmt.files))]  # the format's own file; mulan-xml: the XML
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(per_format):
                kind = MUTATIONS[i % len(MUTATIONS)]
                target = targets[0]
                blob = mutate(fmt.files[target], kind, choose)
                try:
                    outcome = check(fmt, sub, target, blob)
                except Exception as exc:
                    outcome = "escaped"
                    tally.failures.append((fmt.name, kind, f"{type(exc).__name__}: {exc}"[:300]))
                tally.counts[(fmt.name, kind, outcome)] += 1
        (sub / target).write_bytes(fmt.files[target])
    return tally
