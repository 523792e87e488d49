"""Fuzzed data files (``loader_fuzz.py``): every loader, given a mutated slice of a real file,
loads it or raises a one-line ``DataFormatError`` naming the file — ≥ 10⁴ inputs per format in
every test run (the bench runs 10⁵: ``benches/reliability/fuzz_loaders.py``), plus a
Hypothesis test per format whose failures shrink to one mutation; and the cases that escaped
before (a corrupt gzip stream, an XML declaration naming an unknown encoding, a head too
large for an integer or written with digits ``int()`` takes)."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bicrit import datasets
from bicrit.errors import DataFormatError

from .loader_fuzz import MUTATIONS, Format, check, formats, mutate, run, write

#: Inputs per format per test run (the gzip variant gets a fifth: it is CoNLL-U underneath).
N_INPUTS = int(os.environ.get("BICRIT_FUZZ_LOADERS", "10000"))


@pytest.fixture(scope="module")
def fmts(data_dir: Path) -> dict[str, Format]:
    return {f.name: f for f in formats(data_dir)}


def test_slices_of_real_files_load(fmts: dict[str, Format], tmp_path: Path) -> None:
    """The unmutated slices are valid: every refusal below is the mutation's doing."""
    for fmt in fmts.values():
        folder = tmp_path / fmt.name
        folder.mkdir()
        write(fmt, folder)
        data = fmt.load(folder)
        assert len(data) > 0, fmt.name


@pytest.mark.parametrize(
    "name",
    [
        "arff-dense",
        "arff-sparse",
        "mulan-xml",
        "conll",
        "conllu",
        "conllu-gz",
        "malt-tab",
        "clus-tree",
        "clus-dag",
    ],
)
def test_mutated_files_load_or_name_file_and_line(
    fmts: dict[str, Format], tmp_path: Path, name: str
) -> None:
    n = N_INPUTS // 5 if name == "conllu-gz" else N_INPUTS
    tally = run([fmts[name]], n, seed=0, folder=tmp_path)
    assert tally.per_format()[name] >= n
    assert tally.failures == [], tally.failures[:5]
    outcomes = tally.outcomes(name)
    assert outcomes["refused"] + outcomes["refused-file"] > n // 3
    if name != "conllu-gz":  # a line is at fault: the error says which
        assert outcomes["refused-file"] == 0, outcomes
    assert {kind for _, kind, _ in tally.counts} == set(MUTATIONS)  # every mutation ran


@pytest.mark.parametrize(
    "name", ["arff-dense", "arff-sparse", "mulan-xml", "conll", "conllu", "malt-tab", "clus-dag"]
)
@settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_hypothesis_mutations(fmts: dict[str, Format], tmp_path: Path, name: str, data) -> None:
    """One to three mutations chosen by Hypothesis (which shrinks a failure to the fewest)."""
    fmt = fmts[name]
    folder = tmp_path / f"h-{name}"
    folder.mkdir(exist_ok=True)
    write(fmt, folder)
    target = next(iter(fmt.files))
    blob = fmt.files[target]
    for kind in data.draw(st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=3)):
        blob = mutate(blob, kind, lambda n: data.draw(st.integers(0, max(n - 1, 0))))
    check(fmt, folder, target, blob)


# ---------------------------------------------------------------------------- the escapes


def test_corrupt_gzip_stream_names_the_file(tmp_path: Path) -> None:
    p = tmp_path / "t.conllu.gz"
    good = gzip.compress(b"1\tA\ta\tX\tX\t_\t0\troot\t_\t_\n\n", mtime=0)
    p.write_bytes(good[:12] + bytes([good[12] ^ 0x40]) + good[13:])  # inside the deflate data
    with pytest.raises(DataFormatError, match=r"t\.conllu\.gz: cannot read"):
        datasets.read_conllu(p)


def test_xml_declaration_with_unknown_encoding(tmp_path: Path) -> None:
    xml = tmp_path / "l.xml"
    xml.write_text('<?xml version="1.0" encoding="uuf-8"?>\n<labels><label name="a"/></labels>\n')
    with pytest.raises(DataFormatError, match=r"l\.xml, line 1: malformed XML.*uuf-8"):
        datasets.read_mulan_labels(xml)


@pytest.mark.parametrize("head", ["99999999999999999999999", "\u0663", "1_0", " 1", "+1"])
def test_heads_are_plain_integers(tmp_path: Path, head: str) -> None:
    conllu = tmp_path / "t.conllu"
    conllu.write_text(f"1\tA\ta\tX\tX\t_\t0\troot\t_\t_\n2\tB\tb\tX\tX\t_\t{head}\tdep\t_\t_\n\n")
    with pytest.raises(DataFormatError, match=r"t\.conllu, line 2: HEAD .* of word 2 is not an"):
        datasets.read_conllu(conllu)
    malt = tmp_path / "t.dp"
    malt.write_text(f"A\tX\t0\nB\tX\t{head}\n\n")
    with pytest.raises(DataFormatError, match=r"t\.dp, line 2: head .* of word 2 is not an"):
        datasets.read_malt_tab(malt)
