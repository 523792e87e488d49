"""Type stubs of the native module ``bicrit._native`` (Rust, pyo3), by family as in
``rust/bicrit-py/src``. Private: use the public API. CI checks them against the compiled module
(``python -m mypy.stubtest bicrit._native``)."""

from collections.abc import Mapping
from typing import Any, Self, final

import numpy as np
from typing_extensions import disjoint_base

__all__ = [
    "LEARNER_NAMES",
    "SEARCH_NAMES",
    "STAT_KEYS",
    "SURROGATE_NAMES",
    "CutCoordinator",
    "HierarchyGraph",
    "InstanceOracle",
    "LearnerSpec",
    "NativeStructure",
    "Nhsvm3Trainer",
    "Partition",
    "PointSetOracle",
    "SearchSpec",
    "Surrogate",
    "Trainer",
    "WarmCache",
    "WarmState",
    "__version__",
    "_error_for_tests",
    "_panic_for_tests",
    "alpha_maxmin",
    "alpha_power",
    "alpha_shared",
    "auto_search",
    "catalog",
    "chain_structure",
    "check_learner",
    "default_threads",
    "dependency_structure",
    "hierarchy_batch_oracle_scores",
    "hierarchy_closure",
    "hierarchy_info",
    "hierarchy_max_marginals",
    "hierarchy_ratio_oracle",
    "hierarchy_ratio_oracle_scores",
    "hierarchy_relaxation",
    "hierarchy_structure",
    "learner_parameters",
    "multiclass_structure",
    "multilabel_chow_liu",
    "multilabel_label_counts",
    "multilabel_structure",
    "platt_fit",
    "python_structure",
    "run_search",
    "scores_decode",
    "scores_loss",
    "surrogate_capabilities",
]

__version__: str

def default_threads() -> int:
    """Number of threads of the native thread pool (what ``n_jobs=-1`` means)."""

def _panic_for_tests(message: str, n_jobs: int = 1) -> None: ...

# --- structures -----------------------------------------------------------------------------

@final
class NativeStructure:
    """A native label structure; see ``bicrit.structures.base.Structure`` for the protocol."""

    name: str
    size_joint_feature: int
    capabilities: dict[str, bool]
    def joint_feature_sparse(self, x: object, y: object) -> tuple[list[int], list[float]]: ...
    def terms(self, y: object, y_true: object) -> dict[str, float]: ...
    def predict_one(self, w: object, x: object) -> object: ...
    def oracle(
        self,
        w: object,
        x: object,
        y_true: object,
        coef: dict[str, float] | None = None,
        *,
        margin_coef: float = 1.0,
        tiebreak: tuple[float, dict[str, float]] | None = None,
        ban: object | None = None,
        k: int = 1,
        cone: tuple[float, bool, float, bool] | None = None,
    ) -> list[tuple[object, float, dict[str, float]]]: ...
    def batch_predict(self, w: object, x: object, n_jobs: int | None = None) -> object: ...
    def batch_oracle(
        self,
        w: object,
        x: object,
        y_true: object,
        coef: dict[str, float] | None = None,
        *,
        margin_coef: float = 1.0,
        tiebreak: tuple[float, dict[str, float]] | None = None,
        k: int = 1,
        cone: tuple[float, bool, float, bool] | None = None,
        n_jobs: int | None = None,
    ) -> list[list[tuple[object, float, dict[str, float]]]]: ...
    def instance_oracle(self, w: object, x: object, y_true: object) -> InstanceOracle: ...

@final
class InstanceOracle:
    """One instance of a native structure as a λ-oracle for ``run_search``."""

    capabilities: dict[str, bool]

def multiclass_structure(n_classes: int, n_features: int) -> NativeStructure: ...
def python_structure(obj: object) -> NativeStructure: ...
def _error_for_tests(kind: str, message: str) -> None: ...

# --- chain structure (issue 4, item 3) ---------------------------------------------------------
def chain_structure(
    n_states: int,
    n_features: int,
    outside: list[int] | None = None,
    loss: str = "hamming",
    tag_names: list[str] | None = None,
    scheme: str = "iob2",
) -> object:
    """A native ``chain`` structure (a ``NativeStructure``); see ``bicrit.structures.Chain``."""

# --- end chain structure -----------------------------------------------------------------------
# --- hierarchy structure -------------------------------------------------------------------------

def hierarchy_structure(
    parents: list[list[int]],
    root: int,
    n_features: int,
    *,
    labels: str = "any",
    multilabel: bool = True,
    loss: str = "node",
    node_scale: list[float] | None = None,
    node_loss_weight: list[float] | None = None,
    node_miss_weight: list[float] | None = None,
    layout: str = "node",
    names: list[str] | None = None,
) -> Any: ...
def hierarchy_info(s: Any) -> dict[str, Any]: ...
def hierarchy_relaxation(
    s: Any,
    w: Any,
    x: Any,
    y_true: Any,
    coef: dict[str, float] | None = None,
    margin_coef: float = 1.0,
) -> tuple[float, Any]: ...
def hierarchy_closure(s: Any, nodes: list[int]) -> Any: ...
def hierarchy_batch_oracle_scores(
    s: Any,
    scores: Any,
    y_true: Any,
    coef: dict[str, float] | None = None,
    *,
    margin_coef: float = 1.0,
    tiebreak: tuple[float, dict[str, float]] | None = None,
    k: int = 1,
    cone: tuple[float, bool, float, bool] | None = None,
    n_jobs: int | None = None,
) -> list[list[tuple[Any, float, dict[str, float]]]]: ...
def hierarchy_max_marginals(
    s: Any, scores: Any, *, n_jobs: int | None = None
) -> tuple[Any, Any]: ...
def hierarchy_ratio_oracle(
    s: Any,
    w: Any,
    x: Any,
    y_true: Any,
    *,
    offset: float = 1.0,
    n_jobs: int | None = None,
) -> tuple[list[Any], Any, Any, Any]: ...
def hierarchy_ratio_oracle_scores(
    s: Any,
    scores: Any,
    y_true: Any,
    *,
    offset: float = 1.0,
    n_jobs: int | None = None,
) -> tuple[list[Any], Any, Any, Any]: ...

# --- end hierarchy structure ---------------------------------------------------------------------
# --- hierarchy: α solvers (rust/bicrit-hierarchy) ------------------------------------------------
def alpha_power(
    parents: list[list[int]],
    root: int,
    rho: float,
    *,
    t: float | None = None,
    directional: bool = False,
    include_root: bool = True,
    method: str = "auto",
    names: list[str] | None = None,
) -> tuple[Any, float, str]: ...
def alpha_maxmin(
    parents: list[list[int]],
    root: int,
    *,
    t: float | None = None,
    directional: bool = True,
    include_root: bool = True,
    tie_break: bool = True,
    names: list[str] | None = None,
) -> tuple[Any, float, str]: ...
def alpha_shared(
    parents: list[list[int]],
    root: int,
    sq_norms: list[float],
    *,
    method: str = "auto",
    names: list[str] | None = None,
) -> tuple[Any, float, str]: ...

@final
class Nhsvm3Trainer:
    """NHSVM3 (thesis eq. ``NHSVM3``) by native Pegasos SGD (``rust/bicrit-hierarchy/src/
    nhsvm3.rs``) on a single-path ``hierarchy`` structure: minimises ½‖w‖² + C·Σ_i ℓ_i with
    η_t = 1/(λ(t + t0)), λ = 1/(n·C), steps of ``batch_size`` instances; the inferences of a
    block of ``block_size`` instances (None: ``batch_size``) run on ``n_jobs`` threads at the
    block's starting weights (the model does not depend on ``n_jobs``), t-weighted averaging.
    ``X`` is a CSR tuple, ``Y`` node-id label sequences with the root. ``epoch()`` runs with the
    GIL released; Ctrl-C or an error leaves the state of the previous epoch."""

    def __new__(
        cls,
        structure: Any,
        x: Any,
        y: Any,
        *,
        C: float = 1.0,
        batch_size: int = 1,
        block_size: int | None = None,
        t0: float = 1.0,
        random_state: int = 0,
        n_jobs: int | None = None,
        w0: np.ndarray | None = None,
    ) -> Nhsvm3Trainer: ...
    def epoch(self) -> dict[str, Any]:
        """Keys: epoch, objective (running), loss, norm_sq, violated, inferences, step_size,
        time."""
    def weights(self, averaged: bool = True) -> np.ndarray: ...
    def objective(self, averaged: bool = True) -> float:
        """Exact ½‖w‖² + C·Σ_i ℓ_i(w) at ``weights(averaged)``."""
    @property
    def n_epochs(self) -> int: ...
    @property
    def n_steps(self) -> int: ...
    @property
    def n_instances(self) -> int: ...
    @property
    def size_joint_feature(self) -> int: ...
    @property
    def n_jobs(self) -> int: ...

# --- end hierarchy: α solvers --------------------------------------------------------------------
# --- structures: dependency ---------------------------------------------------------------------
def dependency_structure(
    n_features: int, projective: bool, labeled: bool, n_relations: int, label_weight: float
) -> object:
    """The native ``dependency`` structure (a ``NativeStructure``); see
    ``bicrit.structures.dependency``."""

# --- end structures: dependency -----------------------------------------------------------------
# --- structures: multilabel -------------------------------------------------------------------

def multilabel_structure(
    n_labels: int,
    n_features: int,
    edges: str | list[tuple[int, int]],
    inference: str = "auto",
    relaxed_solver: str = "qpbo",
) -> object:
    """The ``multilabel`` structure (a ``NativeStructure``); ``edges`` is ``"full"``, ``"chain"``
    or (i, j) pairs; ``inference`` is ``"exact"``, ``"relaxed"``, ``"tree"`` (a forest's exact
    DP) or ``"auto"`` (exact up to 16 labels, tree on a forest beyond, else relaxed)."""

def multilabel_label_counts(
    y: np.ndarray,
) -> tuple[int, np.ndarray, np.ndarray]:
    """``(n, ones (K,), both (K, K))``: label counts of an (n, K) int64 0/1 label matrix (pair
    counts above the diagonal); counts of data parts add."""

def multilabel_chow_liu(n_rows: int, ones: np.ndarray, both: np.ndarray) -> list[tuple[int, int]]:
    """Chow–Liu tree (i < j pairs) learnt from label counts (:func:`multilabel_label_counts`)."""

# --- end multilabel ---------------------------------------------------------------------------
# ---- surrogates and searches (rust/bicrit-py/src/{surrogates,searches}.rs) ----

SURROGATE_NAMES: list[str]
SEARCH_NAMES: list[str]

@disjoint_base
class Surrogate:
    """A built-in surrogate ψ(h, g) by registry name (``bicrit.Surrogate`` subclasses it)."""

    def __new__(cls, name: str, params: dict[str, float] | None = None) -> Self: ...
    @property
    def name(self) -> str: ...
    @property
    def params(self) -> dict[str, float]: ...
    @property
    def product_shift(self) -> float | None: ...
    @property
    def affine_in_h(self) -> bool: ...
    @property
    def convex_in_h(self) -> bool: ...
    def value_array(self, h: np.ndarray, g: np.ndarray) -> np.ndarray: ...
    def grad_array(self, h: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

@disjoint_base
class SearchSpec:
    """A search by name with its options, checked on construction
    (``bicrit.searches.Search`` subclasses it)."""

    def __new__(cls, name: str, options: dict[str, Any] | None = None) -> Self: ...
    @property
    def name(self) -> str: ...
    def requirements(self) -> dict[str, bool]: ...
    def check(self, oracle: Any, surrogate: Any) -> None: ...

@disjoint_base
class PointSetOracle:
    """An explicit point set as an oracle (labels: indices or the given objects)."""

    def __new__(
        cls,
        h: np.ndarray,
        g: np.ndarray,
        labels: list[Any] | None = None,
        gold: int | None = None,
        ban: bool = True,
        kbest: bool = True,
        cone: bool = True,
        frontier: bool = True,
    ) -> Self: ...
    def without_gold(self) -> PointSetOracle: ...
    def __len__(self) -> int: ...
    def points(self) -> tuple[list[float], list[float]]: ...
    @property
    def gold_index(self) -> int | None: ...
    @property
    def calls(self) -> int: ...
    @property
    def capabilities(self) -> dict[str, bool]: ...
    def query(
        self,
        lam: float,
        ban: list[int] = ...,
        k: int = 1,
        cone: tuple[float, bool, float, bool] | None = None,
    ) -> list[tuple[Any, float, float]]: ...
    def frontier(self) -> list[tuple[Any, float, float]]: ...

@final
class WarmState:
    """What a search needs to warm-start the next inference (opaque)."""

    @property
    def lambda_(self) -> float | None: ...
    def __len__(self) -> int: ...

def run_search(
    spec: SearchSpec,
    oracle: Any,
    surrogate: Any,
    warm: WarmState | None = None,
    xi: float | None = None,
) -> dict[str, Any]: ...

# --- learners (rust/bicrit-py/src/learners.rs; contract in bicrit.learners) ---------------------

LEARNER_NAMES: list[str]
STAT_KEYS: list[str]

@disjoint_base
class LearnerSpec:
    """A learner with its parameters, validated once (``bicrit.learners.Learner`` subclasses
    it)."""

    def __new__(cls, name: str, params: dict[str, Any] | None = None) -> Self: ...
    @property
    def name(self) -> str: ...
    @property
    def params(self) -> dict[str, Any]:
        """Every parameter with its effective value."""
    @property
    def given(self) -> dict[str, Any]:
        """The parameters as given."""
    def replace(self, changes: dict[str, Any]) -> LearnerSpec: ...

@final
class Trainer:
    """One training run: a learner on a structure's training set with a surrogate and a search.
    Built once per fit; the combination is checked here (IncompatibleError). ``epoch()`` runs one
    pass with the GIL released; Ctrl-C or an error leaves the state of the previous epoch."""

    def __new__(
        cls,
        structure: Any,
        x: Any,
        y: Any,
        surrogate: Any,
        search: Any,
        learner: str | LearnerSpec,
        params: dict[str, Any] | None = None,
        w0: np.ndarray | None = None,
    ) -> Trainer: ...
    def epoch(self) -> dict[str, Any]: ...
    def weights(self, averaged: bool = True) -> np.ndarray: ...
    def objective(self, averaged: bool = True) -> float: ...
    def evaluate(self, averaged: bool = True, task_loss: bool = True) -> dict[str, Any]: ...
    @property
    def learner(self) -> str: ...
    @property
    def search(self) -> str: ...
    @property
    def surrogate(self) -> str: ...
    @property
    def n_instances(self) -> int: ...
    @property
    def size_joint_feature(self) -> int: ...
    @property
    def n_epochs(self) -> int: ...
    @property
    def C(self) -> float: ...  # noqa: N802 (scikit-learn's name)
    @property
    def params(self) -> dict[str, Any]: ...
    @property
    def totals(self) -> dict[str, Any]: ...

@final
class Partition:
    """One partition of a training set on the machine that holds it, with its learner's
    per-instance state (warm starts, BCFW dual blocks, SGD schedule). ``round(w)`` runs one pass at
    ``w`` with the GIL released: the 1-slack cut, a CoCoA BCFW round or an SGD mixing round."""

    def __new__(
        cls,
        structure: Any,
        x: Any,
        y: Any,
        surrogate: Any,
        search: Any,
        learner: LearnerSpec,
    ) -> Partition: ...
    def round(
        self, w: np.ndarray, scale: float = 1.0, task_loss: bool = False, sigma: float = 1.0
    ) -> Any: ...
    def evaluate(self, w: np.ndarray) -> dict[str, Any]: ...
    def dual_share(self) -> tuple[np.ndarray, float] | None: ...
    @property
    def n_instances(self) -> int: ...
    @property
    def learner(self) -> str: ...

@final
class CutCoordinator:
    """The 1-slack cutting plane without data: adds the partitions' summed cuts and solves the
    QP."""

    def __new__(
        cls, learner: LearnerSpec, n: int, dim: int, w0: np.ndarray | None = None
    ) -> CutCoordinator: ...
    def round(
        self,
        indices: np.ndarray,
        values: np.ndarray,
        intercept: float,
        counts: dict[str, Any],
        task_loss: float | None = None,
    ) -> dict[str, Any]: ...
    def weights(self, averaged: bool = True) -> np.ndarray: ...
    @property
    def n_epochs(self) -> int: ...

def learner_parameters(learner: str) -> list[tuple[str, Any, str]]: ...
def check_learner(
    learner: str, surrogate: Any, search: Any, capabilities: dict[str, bool] | None = None
) -> None: ...

# --- catalog (rust/bicrit-py/src/catalog.rs) ----------------------------------------------------

def catalog() -> dict[str, list[dict[str, Any]]]:
    """Every built-in piece by kind (structure, surrogate, search, learner): name, description,
    capabilities — what the registry, ``bicrit plugins`` and docs/capabilities.md show."""

def surrogate_capabilities(surrogate: Any) -> dict[str, Any]:
    """The capabilities of any surrogate object, computed as for the built-ins."""

def auto_search(
    structure: str, surrogate: Any, capabilities: Mapping[str, Any], integral: bool = False
) -> str:
    """The search ``search="auto"`` runs for ``surrogate`` on the structure ``structure`` whose
    oracle answers ``capabilities`` (the one place the choice is made)."""

# --- hierarchy graph (rust/bicrit-py/src/hierarchy.rs) ------------------------------------------

@final
class HierarchyGraph:
    """A validated rooted tree or DAG (what ``bicrit.hierarchy.Hierarchy`` holds)."""

    def __new__(
        cls, parents: list[list[int]], root: int | None = None, names: list[str] | None = None
    ) -> HierarchyGraph: ...
    @property
    def n_nodes(self) -> int: ...
    @property
    def root(self) -> int: ...
    @property
    def is_tree(self) -> bool: ...
    @property
    def topological_order(self) -> np.ndarray: ...
    @property
    def leaves(self) -> np.ndarray: ...
    @property
    def depth(self) -> np.ndarray: ...
    def parent_csr(self) -> tuple[np.ndarray, np.ndarray]: ...
    def child_csr(self) -> tuple[np.ndarray, np.ndarray]: ...
    def ancestor_csr(self) -> tuple[np.ndarray, np.ndarray]: ...
    def closures(self, sets: list[np.ndarray], include_root: bool) -> list[np.ndarray]: ...

def platt_fit(
    scores: np.ndarray, labels: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Platt's (a, b) of every column of scores (instances × nodes), in parallel."""

# --- score-level structures (rust/bicrit-py/src/scores.rs) ----------------------------------

def scores_loss(
    kind: str,
    arrays: dict[str, Any],
    gold: dict[str, Any],
    options: dict[str, Any],
    surrogate: Any,
    search: SearchSpec | None = None,
    gradient: bool = False,
    cache: WarmCache | None = None,
    ids: Any = None,
) -> dict[str, Any]:
    """The structured loss of every example of a batch of score arrays (bicrit.scores), with
    the gradient of their sum (flat, in the arrays' order) when ``gradient``; warm starts from
    ``cache`` by example ``ids`` (int64 [B])."""

@final
class WarmCache:
    """Warm starts of the score-level searches by example id, across batches (at most
    ``max_bytes`` bytes; least recently used entries dropped past it)."""

    def __new__(cls, max_bytes: int = 67108864) -> WarmCache: ...
    def __len__(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def max_bytes(self) -> int: ...
    @property
    def kind(self) -> str | None: ...
    @property
    def hits(self) -> int: ...
    @property
    def misses(self) -> int: ...
    def clear(self) -> None: ...

def scores_decode(
    kind: str, arrays: dict[str, Any], options: dict[str, Any], k: int | None = None
) -> dict[str, Any]:
    """The best (or k best) labels of every example (bicrit.scores)."""
