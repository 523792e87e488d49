"""A dataset file read by its extension (``bicrit train FILE`` and partitions given as paths to
:func:`bicrit.dask.fit`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bicrit.errors import InvalidInputError

__all__ = ["read_file"]


def read_file(path: str | Path) -> Any:
    """A dataset file by its extension: ``.conllu`` treebank, ``.arff`` with its MULAN ``.xml``
    beside it, anything else CoNLL columns."""
    from bicrit import datasets

    path = Path(path)
    low = path.name.lower()
    if low.endswith((".conllu", ".conllu.gz")):
        return datasets.read_conllu(path)
    if low.endswith((".arff", ".arff.gz")):
        xmls = sorted(path.parent.glob("*.xml"))
        if len(xmls) != 1:
            raise InvalidInputError(f"{path}: need exactly one MULAN .xml label file beside it")
        return datasets.read_mulan(path, xmls[0])
    return datasets.read_conll(path)
