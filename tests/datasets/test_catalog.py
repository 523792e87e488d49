"""bicrit.datasets.load / available / names: naming, splits, roots, errors."""

from __future__ import annotations

import numpy as np
import pytest

from bicrit.datasets import available, data_root, find_data_root, load, names, spec
from bicrit.errors import InvalidParameterError, UnknownNameError

CLUS = [
    "cellcycle_FUN", "church_FUN", "derisi_FUN", "eisen_FUN", "gasch1_FUN", "gasch2_FUN",
    "pheno_FUN", "seq_FUN", "spo_FUN", "cellcycle_GO", "derisi_GO", "eisen_GO", "gasch1_GO",
    "gasch2_GO", "pheno_GO", "seq_GO", "spo_GO", "Diatoms", "Enron_corr", "ImCLEF07A",
    "ImCLEF07D",
]  # fmt: skip
ALL = [
    "yeast", "scene", "emotions", "enron", "medical", "birds", "genbase", "delicious",
    "tmc2007-500", "corel5k", "conll2002/esp", "conll2002/ned", "wnut17", "conll2000",
    "ud_english_ewt", "nltk_dependency_treebank", *(f"clus_hmc/{c}" for c in CLUS),
]  # fmt: skip


def test_every_folder_has_names():
    assert names() == ALL


def test_every_folder_of_the_data_root_is_known(data_dir):
    folders = {p.name for p in data_dir.iterdir() if p.is_dir()}
    known = {spec(n).folder.split("/")[0] for n in names()}
    assert folders <= known


def test_available_lists_everything_present(data_dir):
    table = available(data_dir)
    assert table["name"].to_list() == ALL
    assert table["present"].all()
    row = table.row(ALL.index("conll2002/esp"), named=True)
    assert row["splits"] == "train/testa/testb"
    assert row["counts"] == "train 8323 / testa 1915 / testb 1517 sentences"
    assert row["path"] == str(data_dir / "conll2002")


def test_available_without_data(tmp_path):
    table = available(tmp_path / "absent")
    assert not table["present"].any() and table["path"][0] == "yeast"


def test_unknown_names_list_the_known_ones():
    with pytest.raises(UnknownNameError, match=r"unknown dataset 'nope'; known datasets: yeast"):
        spec("nope")
    with pytest.raises(UnknownNameError, match="name one of: conll2002/esp, conll2002/ned"):
        load("conll2002")
    with pytest.raises(UnknownNameError, match="clus_hmc/cellcycle_FUN, clus_hmc/church_FUN"):
        spec("clus_hmc")
    assert spec("CLUS_HMC/cellcycle_fun").name == "clus_hmc/cellcycle_FUN"


def test_bad_splits_and_options(data_dir):
    with pytest.raises(InvalidParameterError, match="no split 'dev'; splits: train, test"):
        load("yeast", "dev", root=data_dir)
    with pytest.raises(InvalidParameterError, match=r"dev \(= valid\)"):
        spec("clus_hmc/seq_GO").resolve_split("validation")
    assert spec("clus_hmc/Enron_corr").resolve_split("trainvalid") == "train"
    with pytest.raises(InvalidParameterError, match="impute applies to hierarchical"):
        load("yeast", root=data_dir, impute="mean")
    with pytest.raises(UnknownNameError, match="only 'emotions' is bundled"):
        load("yeast", bundled=True)


def test_roots(data_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("BICRIT_DATA", str(data_dir))
    assert data_root() == data_dir == find_data_root()
    assert load("emotions", "test").n_samples == 202
    monkeypatch.setenv("BICRIT_DATA", str(tmp_path / "absent"))
    assert find_data_root() is None
    with pytest.raises(FileNotFoundError, match=r"BICRIT_DATA=.*absent is not a directory"):
        load("emotions")
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        load("emotions", root=tmp_path / "absent")
    with pytest.raises(FileNotFoundError, match=r"'yeast' is not under .*present: none"):
        load("yeast", root=tmp_path)
    monkeypatch.delenv("BICRIT_DATA")
    found = find_data_root()
    assert found is None or found.is_dir()


def test_reader_options_pass_through(data_dir):
    ds = load("yeast", "test", root=data_dir, missing="nan")
    assert ds.n_samples == 917 and not np.isnan(ds.X).any()
