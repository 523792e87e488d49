"""Dataset names → files and readers, the data root, ``load``, ``available`` and the bundled set.

Naming: a dataset is called by its folder under the data root (``"yeast"``, ``"wnut17"``); a
folder that holds several datasets is called ``folder/part`` — ``"conll2002/esp"``,
``"conll2002/ned"``, ``"clus_hmc/cellcycle_FUN"``, ``"clus_hmc/Diatoms"``, …. Names are matched
ignoring case. Splits are the official ones of each README, with aliases: CoNLL-2002
``testa``/``testb`` are also ``dev``/``test``; Clus HMC ``valid`` is also ``dev``; Enron_corr's
``trainvalid`` file is the ``train`` split. The NLTK dependency treebank has no official split:
``all`` is every file, and ``train`` (wsj_0001–0179) / ``test`` (wsj_0180–0199) are the
customary, **unofficial** file split its README mentions.

The data root is, in order: ``root=``; the environment variable ``BICRIT_DATA``; ``shared/data``
next to the source checkout bicrit is installed from (``<repo>/../shared/data``), or next to one
of its ancestors (a git worktree); the same search from the current directory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any, Literal

from bicrit.datasets._io import PathLike
from bicrit.datasets.clus_hmc import HierarchyDataset, column_means, read_clus_hmc
from bicrit.datasets.conll import SequenceDataset, read_conll
from bicrit.datasets.conllu import read_conllu
from bicrit.datasets.malt import read_malt_tab
from bicrit.datasets.mulan import MultiLabelDataset, read_mulan
from bicrit.datasets.treebank import TreebankDataset
from bicrit.errors import InvalidParameterError, UnknownNameError

__all__ = [
    "DatasetSpec",
    "available",
    "data_root",
    "find_data_root",
    "load",
    "load_bundled",
    "names",
    "spec",
]

Dataset = MultiLabelDataset | SequenceDataset | TreebankDataset | HierarchyDataset
ENV = "BICRIT_DATA"


@dataclass(frozen=True)
class DatasetSpec:
    """Where a dataset's files are and how to read them; ``counts`` are the README's."""

    name: str
    task: str
    format: str
    folder: str
    """Folder under the data root."""
    files: Mapping[str, tuple[str, ...]]
    """Split → files (relative to ``folder``), a split's files read in this order."""
    reader: Callable[..., Dataset]
    options: Mapping[str, Any] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)
    counts: Mapping[str, int] = field(default_factory=dict)
    """Split → instances (multi-label, hierarchical) or sentences (sequences, treebanks)."""
    unit: str = "instances"
    summary: str = ""
    """Features, labels, nodes… as the README states them."""
    note: str = ""

    @property
    def splits(self) -> list[str]:
        """Split names, in reading order."""
        return list(self.files)

    def resolve_split(self, split: str) -> str:
        """The canonical split name of ``split`` (an alias or a name)."""
        s = self.aliases.get(split, split)
        if s not in self.files:
            known = ", ".join(
                self.splits + [f"{a} (= {t})" for a, t in sorted(self.aliases.items())]
            )
            raise InvalidParameterError(
                f"dataset {self.name!r} has no split {split!r}; splits: {known}"
            )
        return s


# ---------------------------------------------------------------------------- readers


def _mulan(paths: list[Path], xml: str, **kw: Any) -> MultiLabelDataset:
    (arff,) = paths
    return read_mulan(arff, arff.parent / xml, **kw)


def _conll(paths: list[Path], **kw: Any) -> SequenceDataset:
    (path,) = paths
    return read_conll(path, **kw)


def _clus(paths: list[Path], **kw: Any) -> HierarchyDataset:
    (path,) = paths
    return read_clus_hmc(path, **kw)


def _conllu(paths: list[Path]) -> TreebankDataset:
    return read_conllu(paths)


def _malt(paths: list[Path]) -> TreebankDataset:
    return read_malt_tab(paths)


# ---------------------------------------------------------------------------- the catalog

_MULAN = [
    # name, file stem, xml, dense?, features, labels, train, test, options
    ("yeast", "yeast", "yeast.xml", True, 103, 14, 1500, 917, {}),
    ("scene", "scene", "scene.xml", True, 294, 6, 1211, 1196, {}),
    ("emotions", "emotions", "emotions.xml", True, 72, 6, 391, 202, {}),
    ("enron", "enron", "enron.xml", False, 1001, 53, 1123, 579, {}),
    ("medical", "medical", "medical.xml", False, 1449, 45, 333, 645, {}),
    ("birds", "birds", "birds.xml", True, 260, 19, 322, 323, {}),
    ("genbase", "genbase", "genbase.xml", True, 1185, 27, 463, 199, {"drop": ("protein",)}),
    ("delicious", "delicious", "delicious.xml", False, 500, 983, 12920, 3185, {}),
    ("tmc2007-500", "tmc2007-500", "tmc2007-500.xml", False, 500, 22, 21519, 7077, {}),
    ("corel5k", "Corel5k", "Corel5k.xml", False, 499, 374, 4500, 500, {}),
]

# name, hierarchy, nodes, features, train, valid, test
_CLUS_GENOMICS = [
    ("cellcycle", 499, 4125, 77, (1628, 848, 1281), (1625, 848, 1278)),
    ("church", 499, None, 27, (1630, 844, 1281), None),
    ("derisi", 499, 4119, 63, (1608, 842, 1275), (1605, 842, 1272)),
    ("eisen", 461, 3573, 79, (1058, 529, 837), (1055, 528, 835)),
    ("gasch1", 499, 4125, 173, (1634, 846, 1284), (1631, 846, 1281)),
    ("gasch2", 499, 4131, 52, (1639, 849, 1291), (1636, 849, 1288)),
    ("pheno", 455, 3127, 69, (656, 353, 582), (653, 352, 581)),
    ("seq", 499, 4133, 478, (1701, 879, 1339), (1692, 876, 1332)),
    ("spo", 499, 4119, 80, (1600, 837, 1266), (1597, 837, 1263)),
]

# name, train file, test file, nodes, features, train, test
_CLUS_OTHERS = [
    ("Diatoms", "Diatoms_train.arff", "Diatoms_test.arff", 398, 371, 2065, 1054),
    ("Enron_corr", "Enron_corr_trainvalid.arff", "Enron_corr_test.arff", 56, 1001, 988, 660),
    ("ImCLEF07A", "ImCLEF07A_Train.arff", "ImCLEF07A_Test.arff", 96, 80, 10000, 1006),
    ("ImCLEF07D", "ImCLEF07D_Train.arff", "ImCLEF07D_Test.arff", 46, 80, 10000, 1006),
]

_NLTK_DEP_FILES = [f"dependency_treebank/wsj_{i:04d}.dp" for i in range(1, 200)]


def _build() -> dict[str, DatasetSpec]:
    specs: list[DatasetSpec] = []
    for name, stem, xml, dense, d, k, n_tr, n_te, opts in _MULAN:
        suffix = "-sparse" if name == "corel5k" else ""
        specs.append(
            DatasetSpec(
                name=name,
                task="multi-label",
                format=f"MULAN ARFF ({'dense' if dense else 'sparse'}) + XML",
                folder=name,
                files={s: (f"{stem}-{s}{suffix}.arff",) for s in ("train", "test")},
                reader=_mulan,
                options={"xml": xml, **opts},
                counts={"train": n_tr, "test": n_te},
                summary=f"{d} features, {k} labels",
                note="drops the 'protein' id attribute" if name == "genbase" else "",
            )
        )
    for lang, language in (("esp", "Spanish"), ("ned", "Dutch")):
        specs.append(
            DatasetSpec(
                name=f"conll2002/{lang}",
                task=f"NER ({language})",
                format="CoNLL columns word POS NER (IOB2)",
                folder="conll2002",
                files={s: (f"{lang}.{s}",) for s in ("train", "testa", "testb")},
                reader=_conll,
                options={"column_names": ("word", "pos", "ner"), "tag_scheme": "IOB2"},
                aliases={"dev": "testa", "test": "testb"},
                counts=(
                    {"train": 8323, "testa": 1915, "testb": 1517}
                    if lang == "esp"
                    else {"train": 15806, "testa": 2895, "testb": 5195}
                ),
                unit="sentences",
                summary="PER LOC ORG MISC",
                note="research use only",
            )
        )
    specs.append(
        DatasetSpec(
            name="wnut17",
            task="NER (English social media)",
            format="CoNLL columns word<TAB>NER (IOB2)",
            folder="wnut17",
            files={
                "train": ("wnut17train.conll",),
                "dev": ("emerging.dev.conll",),
                "test": ("emerging.test.annotated",),
            },
            reader=_conll,
            options={"column_names": ("word", "ner"), "tag_scheme": "IOB2"},
            counts={"train": 3394, "dev": 1009, "test": 1287},
            unit="sentences",
            summary="6 entity types",
            note="CC BY 4.0",
        )
    )
    specs.append(
        DatasetSpec(
            name="conll2000",
            task="chunking (English)",
            format="CoNLL columns word POS chunk (IOB2)",
            folder="conll2000",
            files={"train": ("train.txt",), "test": ("test.txt",)},
            reader=_conll,
            options={"column_names": ("word", "pos", "chunk"), "tag_scheme": "IOB2"},
            counts={"train": 8936, "test": 2012},
            unit="sentences",
            summary="11 chunk types",
        )
    )
    specs.append(
        DatasetSpec(
            name="ud_english_ewt",
            task="POS tagging + dependency parsing",
            format="CoNLL-U",
            folder="ud_english_ewt",
            files={
                "train": ("en_ewt-ud-train.conllu.gz",),
                "dev": ("en_ewt-ud-dev.conllu",),
                "test": ("en_ewt-ud-test.conllu",),
            },
            reader=_conllu,
            counts={"train": 12544, "dev": 2001, "test": 2077},
            unit="sentences",
            summary="17 UPOS, labelled trees",
            note="CC BY-SA 4.0",
        )
    )
    specs.append(
        DatasetSpec(
            name="nltk_dependency_treebank",
            task="dependency parsing (unlabelled)",
            format="Malt-TAB",
            folder="nltk_dependency_treebank",
            files={
                "all": tuple(_NLTK_DEP_FILES),
                "train": tuple(_NLTK_DEP_FILES[:179]),
                "test": tuple(_NLTK_DEP_FILES[179:]),
            },
            reader=_malt,
            counts={"all": 3914},
            unit="sentences",
            summary="WSJ sample, 199 files",
            note="no official split: train/test = wsj_0001-0179/0180-0199; non-commercial",
        )
    )
    for kind in ("FUN", "GO"):  # the README's order: every FunCat tree, then every GO DAG
        for base, n_fun, n_go, d, c_fun, c_go in _CLUS_GENOMICS:
            nodes, counts = (n_fun, c_fun) if kind == "FUN" else (n_go, c_go)
            if nodes is None or counts is None:
                continue
            name = f"{base}_{kind}"
            specs.append(
                DatasetSpec(
                    name=f"clus_hmc/{name}",
                    task="hierarchical multi-label",
                    format=f"Clus HMC ARFF ({'tree' if kind == 'FUN' else 'DAG'})",
                    folder=f"clus_hmc/datasets_{kind}/{name}",
                    files={s: (f"{name}.{s}.arff",) for s in ("train", "valid", "test")},
                    reader=_clus,
                    aliases={"dev": "valid"},
                    counts=dict(zip(("train", "valid", "test"), counts, strict=True)),
                    summary=f"{d} features, {nodes} nodes",
                    note="missing values",
                )
            )
    for name, tr, te, nodes, d, n_tr, n_te in _CLUS_OTHERS:
        specs.append(
            DatasetSpec(
                name=f"clus_hmc/{name}",
                task="hierarchical multi-label",
                format="Clus HMC ARFF (tree)",
                folder="clus_hmc/others",
                files={"train": (tr,), "test": (te,)},
                reader=_clus,
                aliases={"trainvalid": "train"} if name == "Enron_corr" else {},
                counts={"train": n_tr, "test": n_te},
                summary=f"{d} features, {nodes} nodes",
                note="same e-mails as 'enron'" if name == "Enron_corr" else "",
            )
        )
    return {s.name: s for s in specs}


_SPECS = _build()
_BY_LOWER = {n.lower(): s for n, s in _SPECS.items()}


def names() -> list[str]:
    """Every dataset name :func:`load` accepts (besides the bundled ``emotions``)."""
    return list(_SPECS)


def spec(name: str) -> DatasetSpec:
    """The :class:`DatasetSpec` of ``name``; :class:`UnknownNameError` lists the names."""
    s = _BY_LOWER.get(name.strip().strip("/").lower())
    if s is not None:
        return s
    parts = [n for n in _SPECS if n.lower().startswith(name.lower().rstrip("/") + "/")]
    if parts:
        raise UnknownNameError(f"{name!r} holds several datasets; name one of: {', '.join(parts)}")
    raise UnknownNameError(f"unknown dataset {name!r}; known datasets: {', '.join(_SPECS)}")


# ---------------------------------------------------------------------------- the data root


def _candidates() -> list[Path]:
    out: list[Path] = []
    starts = []
    pkg_repo = Path(__file__).resolve().parents[3]  # python/bicrit/datasets/catalog.py
    if (pkg_repo / "pyproject.toml").is_file():
        starts.append(pkg_repo)
    cwd = Path.cwd().resolve()
    starts.append(next((d for d in (cwd, *cwd.parents) if (d / "pyproject.toml").is_file()), cwd))
    for repo in starts:
        for d in repo.parents:
            out.append(d / "shared" / "data")
    return list(dict.fromkeys(out))


def find_data_root(root: PathLike | None = None) -> Path | None:
    """The data root (see the module docstring), or ``None`` when there is none."""
    if root is not None:
        p = Path(root).expanduser()
        return p if p.is_dir() else None
    env = os.environ.get(ENV)
    if env:
        p = Path(env).expanduser()
        return p if p.is_dir() else None
    return next((c for c in _candidates() if c.is_dir()), None)


def data_root(root: PathLike | None = None) -> Path:
    """Like :func:`find_data_root`, but raises :class:`FileNotFoundError` saying what it tried."""
    found = find_data_root(root)
    if found is not None:
        return found
    if root is not None:
        raise FileNotFoundError(f"data root {root} is not a directory")
    env = os.environ.get(ENV)
    if env:
        raise FileNotFoundError(f"{ENV}={env} is not a directory")
    tried = ", ".join(str(c) for c in _candidates()[:4])
    raise FileNotFoundError(
        f"no data root found (tried {tried}); set {ENV} to the folder holding the datasets "
        "or pass root=. load_bundled() needs no data root."
    )


# ---------------------------------------------------------------------------- loading


def load(
    name: str,
    split: str = "train",
    *,
    root: PathLike | None = None,
    bundled: bool = False,
    impute: Literal["mean"] | None = None,
    **options: Any,
) -> Dataset:
    """Load split ``split`` of dataset ``name`` (see the module docstring for names and splits).

    Parameters
    ----------
    name
        ``"yeast"``, ``"conll2002/esp"``, ``"clus_hmc/cellcycle_FUN"``, … (:func:`names`).
    split
        ``"train"``, ``"test"``, ``"dev"``, ``"valid"``, ``"testa"``, … as the dataset has.
    root
        Data root; default as the module docstring says.
    bundled
        Read the copy shipped inside the package (only ``"emotions"``); needs no data root.
    impute
        Hierarchical datasets only: ``"mean"`` fills missing features with the *training*
        split's column means (for every split); ``None`` keeps NaN.
    **options
        Passed to the reader (``missing="nan"`` for MULAN, ``kind=`` for Clus HMC, …).

    Returns
    -------
    MultiLabelDataset | SequenceDataset | TreebankDataset | HierarchyDataset
    """
    if bundled:
        if name.lower() != "emotions":
            raise UnknownNameError(f"only 'emotions' is bundled, not {name!r}")
        return load_bundled(split, **options)
    s = spec(name)
    canonical = s.resolve_split(split)
    if impute not in (None, "mean"):
        raise InvalidParameterError(f"impute must be None or 'mean', got {impute!r}")
    if impute is not None and s.reader is not _clus:
        raise InvalidParameterError(
            f"impute applies to hierarchical datasets only, and {s.name!r} is {s.task}"
        )
    base = data_root(root)
    folder = base / s.folder
    if not folder.is_dir():
        present = [n for n in _SPECS if (base / _SPECS[n].folder).is_dir()]
        raise FileNotFoundError(
            f"dataset {s.name!r} is not under {base} (no folder {s.folder}); "
            f"present: {', '.join(present) or 'none'}"
        )
    data = s.reader([folder / f for f in s.files[canonical]], **{**s.options, **options})
    if impute == "mean":
        assert isinstance(data, HierarchyDataset)
        train = (
            data
            if canonical == "train"
            else s.reader([folder / f for f in s.files["train"]], **{**s.options, **options})
        )
        assert isinstance(train, HierarchyDataset)
        data = data.impute(column_means(train.X))
    return data


def load_bundled(
    split: str = "train", *, missing: Literal["error", "nan"] = "error"
) -> MultiLabelDataset:
    """The ``emotions`` dataset shipped inside the package (the default of ``bicrit train``)."""
    if split not in ("train", "test"):
        raise InvalidParameterError(f"the bundled emotions has splits train, test, not {split!r}")
    folder = files("bicrit") / "data" / "emotions"
    with (
        as_file(folder / f"emotions-{split}.arff") as arff,
        as_file(folder / "emotions.xml") as xml,
    ):
        return read_mulan(arff, xml, missing=missing)


def available(root: PathLike | None = None) -> Any:
    """A polars DataFrame of every dataset: name, task, format, splits, counts, path, present.

    ``counts`` are the README's numbers per split (instances or sentences); ``present`` says
    whether the folder exists under the data root (``path`` is relative when there is no root).
    """
    import polars as pl

    base = find_data_root(root)
    rows = []
    for s in _SPECS.values():
        folder = base / s.folder if base is not None else Path(s.folder)
        rows.append(
            {
                "name": s.name,
                "task": s.task,
                "format": s.format,
                "splits": "/".join(s.splits),
                "counts": " / ".join(f"{k} {v}" for k, v in s.counts.items()) + f" {s.unit}",
                "summary": s.summary,
                "path": str(folder),
                "present": base is not None and folder.is_dir(),
                "note": s.note,
            }
        )
    return pl.DataFrame(rows)
