"""The estimators' default stopping rule (``n_iter_no_change``): a probe of training instances
decoded after each epoch; the fit ends once its predictions settle."""

from __future__ import annotations

from bicrit import SequenceSVM
from bicrit.datasets import SequenceFeaturizer


def test_sequences_stop_on_settled_predictions_of_whole_sentences(conll_slice):
    """The stability probe holds sentences (not tokens of the hashed (features, offsets) form):
    the changed share moves in steps of one probe sentence and is not zero from the start."""
    tr, _ = conll_slice
    est = SequenceSVM(featurizer=SequenceFeaturizer(2**14), max_epochs=8, random_state=0).fit(tr)
    changed = est.history_["changed"].drop_nulls().to_list()
    assert changed and changed[0] > 0.0
    assert all(abs(c * len(tr.tokens) - round(c * len(tr.tokens))) < 1e-9 for c in changed)
