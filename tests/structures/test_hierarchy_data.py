"""The hierarchy structure on real Clus HMC data (``$BICRIT_DATA/clus_hmc``): the FunCat tree and
the Gene Ontology DAG of ``cellcycle``. The ARFF files are parsed minimally here (the loaders are
another module's job). Checks: every training label is an ancestor-closed set of the ``any`` space,
most FunCat labels end at an internal node (so ``labels="leaves"`` refuses them, naming the node),
and on the ~4,000-node GO DAG the min-cut oracle's answers beat every gold label and equal the
value of the (integral) closure LP solved by clarabel."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import bicrit
from bicrit.errors import InvalidInputError


def read_hmc(path: Path, max_rows: int) -> tuple[list[str], list[list[int]], np.ndarray, list]:
    """(node names, parents, features with '?' → 0, labels as lists of node ids) of a Clus HMC
    ARFF file; node 0 is the root."""
    names = ["root"]
    index = {"root": 0}
    parents: list[list[int]] = [[]]

    def node(name: str) -> int:
        if name not in index:
            index[name] = len(names)
            names.append(name)
            parents.append([])
        return index[name]

    rows, labels = [], []
    in_data = False
    with path.open() as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            if in_data:
                fields = line.split(",")
                rows.append([0.0 if v == "?" else float(v) for v in fields[:-1]])
                labels.append([index[c] for c in fields[-1].split("@")])
                if len(rows) >= max_rows:
                    break
            elif line.upper().startswith("@ATTRIBUTE CLASS"):
                items = line.split(None, 3)[3].split(",")
                if "/" in items[0] and items[0].startswith("root/"):  # DAG: parent/child edges
                    for edge in items:
                        p, c = edge.split("/")
                        parents[node(c)].append(node(p))
                else:  # tree: full paths
                    for item in items:
                        parent = item.rsplit("/", 1)[0] if "/" in item else "root"
                        parents[node(item)].append(node(parent))
            elif line.upper().startswith("@DATA"):
                in_data = True
    return names, parents, np.asarray(rows), labels


def closure(parents: list[list[int]], nodes: list[int]) -> np.ndarray:
    out, stack = set(), [0, *nodes]
    while stack:
        v = stack.pop()
        if v not in out:
            out.add(v)
            stack.extend(parents[v])
    return np.array(sorted(out))


class Hier:
    def __init__(self, names, parents) -> None:
        self.names, self.parents, self.root = names, parents, 0


def test_funcat_tree_labels_and_internal_terminals(data_dir: Path) -> None:
    path = data_dir / "clus_hmc/datasets_FUN/cellcycle_FUN/cellcycle_FUN.train.arff"
    if not path.exists():
        pytest.skip(f"{path} not found")
    names, parents, X, raw = read_hmc(path, max_rows=300)
    Y = [closure(parents, y) for y in raw]
    s = bicrit.structure("hierarchy", hierarchy=Hier(names, parents), labels="any")
    s.initialize(X, Y)
    assert s.oracle_kind == "tree_dp" and s.n_nodes == len(names)
    children = [[] for _ in parents]
    for v, ps in enumerate(parents):
        for p in ps:
            children[p].append(v)
    internal_end = sum(
        any(children[t] and not any(c in set(y) for c in children[t]) for t in y) for y in Y
    )
    assert internal_end > len(Y) // 3  # real labels often end at internal nodes
    leaves_only = bicrit.structure("hierarchy", hierarchy=Hier(names, parents), labels="leaves")
    with pytest.raises(InvalidInputError, match=r"Y\[\d+\]: label ends at node \d+ \(\""):
        leaves_only.initialize(X, Y)
    rng = np.random.default_rng(0)
    w = rng.normal(size=s.size_joint_feature) * 0.1
    answers = s.batch_oracle(w, X, Y, {"loss": 1.0}, n_jobs=2)
    for i in range(5):
        assert_equals_lp(s, w, X[i], Y[i], answers[i][0])


def assert_equals_lp(s, w: np.ndarray, x: np.ndarray, y_true: np.ndarray, answer) -> None:
    """The oracle's answer has the value of the closure LP's (integral) optimum."""
    _, z = s.relaxation(w, x, y_true, {"loss": 1.0})
    assert np.all((z < 1e-6) | (z > 1 - 1e-6))  # the closure polytope is integral
    y_lp = np.flatnonzero(z > 0.5)
    m_lp = float(np.dot(w, s.joint_feature(x, y_lp) - s.joint_feature(x, y_true)))
    value_lp = m_lp + s.loss(y_lp, y_true)
    value = answer.margin + answer.terms["loss"]
    assert abs(value - value_lp) < 1e-6 * (1 + abs(value)), (value, value_lp)
    assert value >= -1e-9  # never below the gold label (value 0)


def test_gene_ontology_dag_min_cut_equals_lp(data_dir: Path) -> None:
    path = data_dir / "clus_hmc/datasets_GO/cellcycle_GO/cellcycle_GO.train.arff"
    if not path.exists():
        pytest.skip(f"{path} not found")
    names, parents, X, raw = read_hmc(path, max_rows=200)
    assert sum(len(p) > 1 for p in parents) > 1000  # a real DAG
    Y = [closure(parents, y) for y in raw]
    s = bicrit.structure("hierarchy", hierarchy=Hier(names, parents), labels="any")
    s.initialize(X, Y)
    assert s.oracle_kind == "min_cut"
    rng = np.random.default_rng(1)
    w = rng.normal(size=s.size_joint_feature) * 0.05
    answers = s.batch_oracle(w, X, Y, {"loss": 1.0}, n_jobs=2)
    for per in answers:
        assert per[0].margin + per[0].terms["loss"] >= -1e-9  # never below the gold label
    for i in range(3):
        assert_equals_lp(s, w, X[i], Y[i], answers[i][0])
