"""An opt-in check of a structure written in Python (a plugin): its oracle's answers agree with
its own joint feature map and terms (``StructuredSVM(check_oracle=True)`` runs it before the
first epoch).

For a sample of training instances, random weights ``w`` and several weights λ of the loss, each
answer ``(y, m, terms)`` of ``oracle(w, x, y_i, {"loss": λ})`` must have the margin
``m = w·(φ(x, y) − φ(x, y_i))`` (thesis §"Structured Prediction": m(y) = w·φ(x, y) − w·φ(x, y_i)),
the terms ``terms(y, y_i)``, and a loss ≥ 0; and the gold label must have loss 0. The first wrong
answer is a :class:`~bicrit.errors.PluginError` naming the plugin, the instance, λ and both
values. The built-in structures are checked against brute-force enumeration in the test suite
and are not sampled here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bicrit.errors import PluginError

__all__ = ["check_oracle"]

#: Weights of the loss the oracle is asked with.
LAMBDAS = (0.0, 1.0, 10.0)


def _dot(w: np.ndarray, sparse: tuple[list[int], list[float]]) -> float:
    idx, val = sparse
    return float(np.dot(w[np.asarray(idx, dtype=np.int64)], np.asarray(val, dtype=np.float64)))


def check_oracle(
    structure: Any, X: Any, Y: Any, *, n: int = 20, seed: int = 0, rtol: float = 1e-6
) -> int:
    """Checks the answers of ``structure``'s oracle on up to ``n`` instances of ``(X, Y)``
    (inputs in the structure's form, after :meth:`~bicrit.structures.Structure.initialize`);
    returns the number of answers checked (0 for a built-in structure)."""
    from bicrit.structures.base import as_native

    if getattr(structure, "_native", None) is not None:
        return 0
    native = as_native(structure)
    xs, ys = structure.native_inputs(X, Y)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(int(native.size_joint_feature))
    name = getattr(structure, "name", type(structure).__name__)
    picked = rng.choice(len(xs), size=min(n, len(xs)), replace=False)
    checked = 0
    for i in sorted(int(i) for i in picked):
        x, y_true = xs[i], ys[i]
        where = f"plugin structure {name!r}, instance {i}"
        gold = native.terms(y_true, y_true).get("loss", 0.0)
        if gold != 0:
            raise PluginError(f"{where}: terms(y_i, y_i) gives the gold label a loss of {gold}")
        phi_true = _dot(w, native.joint_feature_sparse(x, y_true))
        for lam in LAMBDAS:
            for label, margin, terms in native.oracle(w, x, y_true, {"loss": lam}, k=1):
                at = f"{where}, oracle with loss weight {lam}: answer {label!r}"
                expected = _dot(w, native.joint_feature_sparse(x, label)) - phi_true
                if not math.isclose(margin, expected, rel_tol=rtol, abs_tol=rtol):
                    raise PluginError(
                        f"{at} has margin {margin:.6g}, but w·(φ(x, y) − φ(x, y_i)) = "
                        f"{expected:.6g} from joint_feature"
                    )
                own = native.terms(label, y_true)
                for term, value in terms.items():
                    if not math.isclose(value, own.get(term, 0.0), rel_tol=rtol, abs_tol=rtol):
                        raise PluginError(
                            f"{at} has {term} {value:.6g}, but terms(y, y_i) gives "
                            f"{own.get(term, 0.0):.6g}"
                        )
                if terms.get("loss", 0.0) < 0:
                    raise PluginError(f"{at} has a negative loss {terms['loss']:.6g}")
                checked += 1
    return checked
