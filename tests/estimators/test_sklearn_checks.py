"""scikit-learn's full estimator checks (``parametrize_with_checks``) on every estimator.

The checks generate 2-D numeric ``X`` and 1-D class targets. Where an estimator's inputs or
outputs are of another kind, the check cannot apply; each such check is listed below with the
reason. Every other check runs and must pass.
"""

from __future__ import annotations

import warnings

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import bicrit
from bicrit.hierarchy import Hierarchy

#: A flat hierarchy whose leaves are the class ids the checks generate (0 … 29), so that the
#: checks' 1-D targets are terminal node ids.
_FLAT = Hierarchy([f"c{i}" for i in range(30)] + ["root"], [[30]] * 30 + [[]], root=30)

ESTIMATORS = [
    bicrit.StructuredSVM(structure="multiclass", max_epochs=3, random_state=0),
    bicrit.MultiLabelSVM(max_epochs=3, random_state=0),
    bicrit.SequenceSVM(max_epochs=2, random_state=0),
    bicrit.DependencySVM(max_epochs=2, random_state=0, n_features=2**10),
    bicrit.HierarchicalSVM(_FLAT, max_epochs=2, random_state=0),
]

_LABEL_MATRIX = (
    "MultiLabelSVM's targets are (n, K) 0/1 label-indicator matrices; the check gives class ids"
)

#: Checks that cannot apply, per estimator class, with the reason.
NOT_APPLICABLE: dict[str, dict[str, str]] = {
    "StructuredSVM": {},
    "MultiLabelSVM": {
        name: _LABEL_MATRIX
        for name in (
            "check_fit_score_takes_y",
            "check_estimators_overwrite_params",
            "check_dont_overwrite_parameters",
            "check_estimators_fit_returns_self",
            "check_readonly_memmap_input",
            "check_n_features_in_after_fitting",
            "check_positive_only_tag_during_fit",
            "check_estimators_dtypes",
            "check_dtype_object",
            "check_estimator_sparse_tag",
            "check_estimator_sparse_array",
            "check_estimator_sparse_matrix",
            "check_f_contiguous_array_estimator",
            "check_methods_sample_order_invariance",
            "check_methods_subset_invariance",
            "check_fit2d_1feature",
            "check_dict_unchanged",
            "check_fit2d_predict1d",
        )
    },
    # SequenceSVM and DependencySVM take token sequences and sentences, not 2-D arrays: their
    # tags say so (input_tags.two_d_array=False), and scikit-learn then runs only the checks
    # that need no data (it warns that it cannot generate inputs for the rest)
    "SequenceSVM": {},
    "DependencySVM": {},
    "HierarchicalSVM": {
        name: "predictions are label sets (node-id arrays of different lengths), not an array"
        for name in ("check_estimator_sparse_array", "check_estimator_sparse_matrix")
    },
}


def _expected(est):
    return NOT_APPLICABLE[type(est).__name__]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected)
def test_scikit_learn_checks(estimator, check) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bicrit.estimators.FeatureScaleWarning)
        check(estimator)


def test_the_list_of_checks_that_do_not_apply_is_current() -> None:
    # a check listed as not applicable that passes must be removed from the list
    from sklearn.utils.estimator_checks import check_estimator

    for est in ESTIMATORS:
        listed = _expected(est)
        if not listed:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = check_estimator(est, on_fail=None, expected_failed_checks={})
        failed = {r["check_name"] for r in results if r["status"] == "failed"}
        assert set(listed) <= failed, sorted(set(listed) - failed)
        assert failed <= set(listed), sorted(failed - set(listed))


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_every_estimator_is_checked(est) -> None:
    assert type(est).__name__ in NOT_APPLICABLE
