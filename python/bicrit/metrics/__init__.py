"""Evaluation metrics for the structures bicrit learns, one module per task.

* :mod:`bicrit.metrics.multilabel` — subset, example-based (Jaccard) accuracy, Hamming loss,
  micro-, macro- and example-based F1 on 0/1 indicator matrices.
* :mod:`bicrit.metrics.sequence` — token accuracy and CoNLL entity scores (IOB1/IOB2), and the
  per-sentence entity F1 averaged over sentences.
* :mod:`bicrit.metrics.dependency` — unlabelled and labelled attachment scores.
* :mod:`bicrit.metrics.hierarchy` — hierarchical precision/recall/F1, exact-match, per-level and
  leaf accuracy, AU(PRC) on ancestor-closed node sets.

Where the thesis's names differ from common usage: its multi-label "Acc" is
:func:`jaccard_accuracy`; its surrogate chapter's "Micro-F1" is :func:`example_f1`; its NER
"Micro-F1" is :func:`sentence_f1`. The hierarchy's exact-match :func:`hierarchy.accuracy` is
exported here as :func:`hierarchical_accuracy`.
"""

from __future__ import annotations

from bicrit.metrics import dependency, hierarchy, multilabel, sequence
from bicrit.metrics.dependency import PUNCT_TAGS, dependency_report, las, uas
from bicrit.metrics.hierarchy import (
    HierarchicalScores,
    au_prc,
    hierarchical_f1,
    hierarchical_scores,
    leaf_accuracy,
    per_level_accuracy,
)
from bicrit.metrics.hierarchy import accuracy as hierarchical_accuracy
from bicrit.metrics.multilabel import (
    example_f1,
    hamming_loss,
    jaccard_accuracy,
    macro_f1,
    micro_f1,
    multilabel_report,
    subset_accuracy,
)
from bicrit.metrics.sequence import (
    SCHEMES,
    Entity,
    EntityScores,
    PRFScores,
    TypeScores,
    entity_scores,
    extract_entities,
    sentence_f1,
    sequence_report,
    token_accuracy,
)

__all__ = [
    "PUNCT_TAGS",
    "SCHEMES",
    "Entity",
    "EntityScores",
    "HierarchicalScores",
    "PRFScores",
    "TypeScores",
    "au_prc",
    "dependency",
    "dependency_report",
    "entity_scores",
    "example_f1",
    "extract_entities",
    "hamming_loss",
    "hierarchical_accuracy",
    "hierarchical_f1",
    "hierarchical_scores",
    "hierarchy",
    "jaccard_accuracy",
    "las",
    "leaf_accuracy",
    "macro_f1",
    "micro_f1",
    "multilabel",
    "multilabel_report",
    "per_level_accuracy",
    "sentence_f1",
    "sequence",
    "sequence_report",
    "subset_accuracy",
    "token_accuracy",
    "uas",
]
