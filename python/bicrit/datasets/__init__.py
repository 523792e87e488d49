"""Data loaders for the formats of the development data.

* :func:`load` / :func:`available` / :func:`load_bundled` — datasets by name (``catalog``);
* :func:`read_mulan` — MULAN multi-label ARFF (dense and sparse) + XML → :class:`MultiLabelDataset`;
* :func:`read_conll` — CoNLL column files (IOB1/IOB2) → :class:`SequenceDataset`;
* :func:`read_conllu` / :func:`read_malt_tab` — dependency treebanks → :class:`TreebankDataset`;
* :func:`read_clus_hmc` — Clus HMC ARFF with its tree or DAG → :class:`HierarchyDataset`;
* :func:`read_arff` — the ARFF reader beneath MULAN and Clus HMC;
* :class:`SequenceFeaturizer` — deterministic hashed token features;
* :func:`synthetic_hierarchy` / :func:`synthetic_lshtc` — the thesis's synthetic hierarchical sets
  and an LSHTC-sized sparse generator; :func:`synthetic_lshtc_parts` generates the latter partition
  by partition on Dask workers (:func:`bicrit.dask.fit`).

Malformed files raise :class:`bicrit.errors.DataFormatError` naming the file and the line.
"""

from __future__ import annotations

from bicrit.datasets.arff import ArffAttribute, ArffData, read_arff
from bicrit.datasets.catalog import (
    DatasetSpec,
    available,
    data_root,
    find_data_root,
    load,
    load_bundled,
    names,
    spec,
)
from bicrit.datasets.clus_hmc import (
    HierarchyDataset,
    column_means,
    impute_mean,
    parse_clus_hierarchy,
    read_clus_hmc,
)
from bicrit.datasets.conll import (
    SequenceDataset,
    detect_tag_scheme,
    read_conll,
    to_iob1,
    to_iob2,
)
from bicrit.datasets.conllu import read_conllu
from bicrit.datasets.featurize import HashedSequences, SequenceFeaturizer, word_shape
from bicrit.datasets.files import read_file
from bicrit.datasets.malt import read_malt_tab
from bicrit.datasets.mulan import MultiLabelDataset, read_mulan, read_mulan_labels
from bicrit.datasets.synthetic import (
    SyntheticHierarchyDataset,
    synthetic_hierarchy,
    synthetic_lshtc,
    synthetic_lshtc_part,
    synthetic_lshtc_parts,
)
from bicrit.datasets.treebank import TreebankDataset

__all__ = [
    "ArffAttribute",
    "ArffData",
    "DatasetSpec",
    "HashedSequences",
    "HierarchyDataset",
    "MultiLabelDataset",
    "SequenceDataset",
    "SequenceFeaturizer",
    "SyntheticHierarchyDataset",
    "TreebankDataset",
    "available",
    "column_means",
    "data_root",
    "detect_tag_scheme",
    "find_data_root",
    "impute_mean",
    "load",
    "load_bundled",
    "names",
    "parse_clus_hierarchy",
    "read_arff",
    "read_clus_hmc",
    "read_conll",
    "read_conllu",
    "read_file",
    "read_malt_tab",
    "read_mulan",
    "read_mulan_labels",
    "spec",
    "synthetic_hierarchy",
    "synthetic_lshtc",
    "synthetic_lshtc_part",
    "synthetic_lshtc_parts",
    "to_iob1",
    "to_iob2",
    "word_shape",
]
