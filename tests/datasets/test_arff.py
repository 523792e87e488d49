"""The ARFF reader beneath MULAN and Clus HMC: encoding rules and malformed input."""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest

from bicrit.datasets import read_arff
from bicrit.errors import DataFormatError

HEADER = """% a comment
@relation 'test rel'
@attribute 'a b' numeric
@attribute c {x,y,z}
@attribute d {YES,NO}
@attribute e string
@data
"""


def write(tmp_path, text, name="t.arff"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def raises_at(path, line, pattern):
    """pytest.raises for a DataFormatError located at ``path``, ``line``."""
    return pytest.raises(
        DataFormatError, match=re.escape(f"{path}, line {line}: ") + ".*" + pattern
    )


def test_dense_encoding_quotes_comments_missing(tmp_path):
    p = write(tmp_path, HEADER + "1.5,x,YES,'hello, world'\n% skip\n\n?,z,NO,plain\n")
    d = read_arff(p)
    assert d.relation == "test rel"
    assert [a.name for a in d.attributes] == ["a b", "c", "d", "e"]
    assert [a.kind for a in d.attributes] == ["numeric", "nominal", "nominal", "string"]
    np.testing.assert_array_equal(d.X[:, 1:3], [[0, 1], [2, 0]])  # index; YES=1 NO=0
    assert d.X[0, 0] == 1.5 and np.isnan(d.X[1, 0])
    assert d.text[3] == ["hello, world", "plain"]
    assert d.lines.tolist() == [8, 11]


def test_sparse_rows_and_gzip(tmp_path):
    text = HEADER.replace("@attribute e string\n", "") + "{0 2.5,1 y}\n{}\n{2 YES}\n"
    with pytest.raises(DataFormatError, match=r"line 5: .*first value 'YES'.*'d'"):
        read_arff(write(tmp_path, text))  # {YES,NO}: a left-out value would mean YES
    text = text.replace("{YES,NO}", "{no,yes}").replace("{2 YES}", "{2 yes}")
    p = tmp_path / "t.arff.gz"
    p.write_bytes(gzip.compress(text.encode()))
    d = read_arff(p)
    assert d.sparse and d.X.shape == (3, 3)
    np.testing.assert_array_equal(d.X.toarray(), [[2.5, 1, 0], [0, 0, 0], [0, 0, 1]])


def test_quoted_attribute_names_with_escapes(tmp_path):
    p = write(tmp_path, "@relation r\n@attribute 'Swainson\\'s Thrush' {0,1}\n@data\n1\n")
    assert read_arff(p).attributes[0].name == "Swainson's Thrush"


@pytest.mark.parametrize(
    ("row", "line", "message"),
    [
        ("1.5,x,YES", 8, r"expected 4 comma-separated values, found 3"),  # truncated line
        ("1.5,x,YES,s,extra", 8, r"expected 4 comma-separated values, found 5"),
        ("1.5,w,YES,s", 8, r"attribute 'c': value 'w' is not one of \{x, y, z\}"),
        ("NaN,x,YES,s", 8, r"attribute 'a b': non-finite value 'NaN'"),
        ("-inf,x,YES,s", 8, r"attribute 'a b': non-finite value '-inf'"),
        ("1e999,x,YES,s", 8, r"non-finite value '1e999'"),
        ("1.2.3,x,YES,s", 8, r"attribute 'a b': value '1.2.3' is not a number"),
        ("1,x,YES,'open", 8, r"unterminated quote"),
    ],
)
def test_malformed_dense_rows(tmp_path, row, line, message):
    p = write(tmp_path, HEADER + row + "\n")
    with raises_at(p, line, message):
        read_arff(p)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("{0 1, 1 x", r"without its closing '\}' \(truncated line\?\)"),
        ("{0 1, 7 x}", r"sparse index 7 outside 0..1"),
        ("{0 1, 0 2}", r"attribute 'a b' \(index 0\) given twice"),
        ("{0 1, 1}", r"sparse entry '1' is not 'index value'"),
        ("{0 1 2, 1 x}", r"sparse entry '0 1 2' is not 'index value'"),
        ("{a 1}", r"sparse index 'a' is not an integer"),
        ("{0 nan}", r"non-finite value 'nan'"),
        ("{1 q}", r"value 'q' is not one of"),
    ],
)
def test_malformed_sparse_rows(tmp_path, row, message):
    text = HEADER.replace("@attribute d {YES,NO}\n@attribute e string\n", "")
    p = write(tmp_path, text + "{0 1}\n" + row + "\n")
    with raises_at(p, 7, message):
        read_arff(p)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("@relation r\n@attribute a numeric\n", 2, r"no @data section"),
        ("@relation r\n@attribute a {x,y\n@data\n", 2, r"unterminated nominal list"),
        ("@relation r\n@attribute a blob\n@data\n", 2, r"unknown type 'blob'"),
        ("@relation r\n@attribute a relational\n@data\n", 2, r"relational"),
        ("@relation r\nhello\n@data\n", 2, r"expected @relation, @attribute or @data"),
        ("@relation r\n@data\n1\n", 2, r"no @attribute before @data"),
    ],
)
def test_malformed_headers(tmp_path, text, line, message):
    p = write(tmp_path, text)
    with raises_at(p, line, message):
        read_arff(p)


def test_invalid_utf8_names_the_line(tmp_path):
    p = tmp_path / "t.arff"
    p.write_bytes(b"@relation r\n@attribute a {x,\xe9}\n@data\n")
    with raises_at(p, 2, "not valid utf-8"):
        read_arff(p)


def test_dense_rows_in_a_sparse_file_and_strings(tmp_path):
    head = "@relation r\n@attribute a numeric\n@attribute s string\n@data\n"
    d = read_arff(write(tmp_path, head + "{0 1}\n2,hello\n"))
    np.testing.assert_array_equal(d.X.toarray(), [[1, 0], [2, 0]])
    assert d.text[1] == ["", "hello"]
    p = write(tmp_path, head + "{0 1, 1 x}\n")
    with raises_at(p, 5, "string attribute 's' in a sparse row"):
        read_arff(p)
