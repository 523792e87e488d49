//! Multi-label oracles of the `hierarchy` structure: the tree DP, the maximum-weight closure
//! (one min-cut) of ancestor-closed DAG spaces, and the LP relaxation with the integer program
//! for leaf-terminated DAG spaces (thesis eq. `integerprogram`).

use bicrit_core::{CsrMatrix, Error, Objective, Result};

use super::value::Lex;
use super::{
    closure, lawler, lp, tree, with_scratch, HierLabel, HierarchyStructure, LabelSpace, LpSolution,
    OracleKind, Scratch,
};

/// Relative tolerance of the LP/IP two-phase lexicographic queries and the integrality test.
const LP_TOL: f64 = 1e-9;

fn label_value(y: &[u32], g1: &[f64], g2: &[f64]) -> Lex {
    let mut v = Lex(0.0, 0.0);
    for &n in y {
        v = v + Lex(g1[n as usize], g2[n as usize]);
    }
    v
}

impl HierarchyStructure {
    pub(super) fn answer_multi(
        &self,
        g1: &[f64],
        g2: &[f64],
        lex: bool,
        kk: usize,
        sc: &mut Scratch,
    ) -> Result<Vec<HierLabel>> {
        let g = &self.graph;
        let leaf_terminated = self.space == LabelSpace::Leaves;
        match self.oracle_kind() {
            OracleKind::TreeDp => {
                if lex {
                    sc.gl.clear();
                    sc.gl.extend(g1.iter().zip(g2).map(|(&a, &b)| Lex(a, b)));
                    let gl = std::mem::take(&mut sc.gl);
                    let out = if kk == 1 {
                        vec![tree::tree_best(g, &gl, leaf_terminated, &mut sc.tree_l).1]
                    } else {
                        tree::tree_kbest(g, &gl, leaf_terminated, kk, &mut sc.tree_l)
                            .into_iter()
                            .map(|p| p.1)
                            .collect()
                    };
                    sc.gl = gl;
                    Ok(out)
                } else if kk == 1 {
                    Ok(vec![tree::tree_best(g, g1, leaf_terminated, &mut sc.tree_f).1])
                } else {
                    Ok(tree::tree_kbest(g, g1, leaf_terminated, kk, &mut sc.tree_f)
                        .into_iter()
                        .map(|p| p.1)
                        .collect())
                }
            }
            OracleKind::MinCut => {
                if kk == 1 {
                    let y = if lex {
                        sc.gl.clear();
                        sc.gl.extend(g1.iter().zip(g2).map(|(&a, &b)| Lex(a, b)));
                        closure::max_closure(g, &sc.gl, None, &mut sc.flow_l)
                    } else {
                        closure::max_closure(g, g1, None, &mut sc.flow_f)
                    };
                    return Ok(vec![y.ok_or_else(|| Error::solver("max-closure flow is unbounded"))?]);
                }
                sc.gl.clear();
                sc.gl.extend(g1.iter().zip(g2).map(|(&a, &b)| Lex(a, b)));
                let gl = std::mem::take(&mut sc.gl);
                let flow = &mut sc.flow_l;
                let res = lawler::lawler_kbest(
                    g.n_nodes(),
                    g.root(),
                    kk,
                    |fixed| {
                        if self.fixed_conflict(fixed) {
                            return Ok(None);
                        }
                        Ok(closure::max_closure(g, &gl, Some(fixed), flow))
                    },
                    |y| label_value(y, g1, g2),
                );
                sc.gl = gl;
                Ok(res?.into_iter().map(|p| p.1).collect())
            }
            OracleKind::LpIp => {
                if kk == 1 {
                    return Ok(vec![self.lp_ip_best(g1, g2, lex)?]);
                }
                let res = lawler::lawler_kbest(
                    g.n_nodes(),
                    g.root(),
                    kk,
                    |fixed| {
                        if self.fixed_conflict(fixed) {
                            return Ok(None);
                        }
                        self.ip_lex(g1, g2, lex, Some(fixed))
                    },
                    |y| label_value(y, g1, g2),
                )?;
                Ok(res.into_iter().map(|p| p.1).collect())
            }
            OracleKind::Enumeration => unreachable!("single-label spaces are enumerated"),
        }
    }

    /// Forced-in nodes (with their ancestors) meeting forced-out nodes (with their descendants)?
    pub(super) fn fixed_conflict(&self, fixed: &[i8]) -> bool {
        let g = &self.graph;
        let m = g.n_nodes();
        let mut up = vec![false; m];
        let mut stack: Vec<usize> = (0..m).filter(|&v| fixed[v] > 0).collect();
        stack.push(g.root());
        while let Some(v) = stack.pop() {
            if !up[v] {
                up[v] = true;
                stack.extend(g.parents(v).iter().map(|&p| p as usize));
            }
        }
        let mut down = vec![false; m];
        let mut stack: Vec<usize> = (0..m).filter(|&v| fixed[v] < 0).collect();
        while let Some(v) = stack.pop() {
            if up[v] {
                return true;
            }
            if !down[v] {
                down[v] = true;
                stack.extend(g.children(v).iter().map(|&c| c as usize));
            }
        }
        false
    }

    /// The integer program, with its answer checked to be a label of the space (microlp warns
    /// that it "may lose precision on some hard problems": an infeasible answer is an error,
    /// never a silent wrong label).
    pub(super) fn ip_checked(
        &self,
        gain: &[f64],
        fixed: Option<&[i8]>,
        side: Option<lp::SideRow<'_>>,
    ) -> Result<Option<HierLabel>> {
        let lt = self.space == LabelSpace::Leaves;
        let y = lp::ip_solve(&self.graph, gain, lt, fixed, side)?;
        if let Some(y) = &y {
            self.check(y)
                .map_err(|e| Error::solver(format!("the integer program returned a non-label: {e}")))?;
            if let Some(f) = fixed {
                let ok = (0..f.len()).all(|v| f[v] == 0 || (f[v] > 0) == Self::has(y, v as u32));
                if !ok {
                    return Err(Error::solver("the integer program ignored fixed nodes"));
                }
            }
        }
        Ok(y)
    }

    /// Two-phase integer program (best primary, then best secondary among primary-optimal labels).
    pub(super) fn ip_lex(
        &self,
        g1: &[f64],
        g2: &[f64],
        lex: bool,
        fixed: Option<&[i8]>,
    ) -> Result<Option<HierLabel>> {
        let Some(y1) = self.ip_checked(g1, fixed, None)? else { return Ok(None) };
        if !lex {
            return Ok(Some(y1));
        }
        self.second_phase(g1, g2, fixed, y1).map(Some)
    }

    pub(super) fn second_phase(
        &self,
        g1: &[f64],
        g2: &[f64],
        fixed: Option<&[i8]>,
        y1: HierLabel,
    ) -> Result<HierLabel> {
        let p1: f64 = y1.iter().map(|&v| g1[v as usize]).sum();
        let scale: f64 = 1.0 + g1.iter().map(|x| x.abs()).sum::<f64>();
        let side = lp::SideRow { coef: g1, rhs: p1 - LP_TOL * scale };
        Ok(self.ip_checked(g2, fixed, Some(side))?.unwrap_or(y1))
    }

    /// The LP relaxation first; the integer program when its answer is not integral
    /// (thesis §"Calculating the most violating label": "we rely on the binary integer
    /// programming only if the solution to LP is not integral").
    pub(super) fn lp_ip_best(&self, g1: &[f64], g2: &[f64], lex: bool) -> Result<HierLabel> {
        let lt = self.space == LabelSpace::Leaves;
        let sol = lp::lp_relaxation(&self.graph, g1, lt)?;
        let rounded = lp::round_integral(&sol.z, 1e-6).filter(|y| {
            let val: f64 = y.iter().map(|&v| g1[v as usize]).sum();
            let scale = 1.0 + sol.value.abs();
            self.check(y).is_ok() && val >= sol.value - 1e-7 * scale
        });
        let y1 = match rounded {
            Some(y) => y,
            None => self
                .ip_checked(g1, None, None)?
                .ok_or_else(|| Error::solver("the hierarchy integer program is infeasible"))?,
        };
        if lex {
            self.second_phase(g1, g2, None, y1)
        } else {
            Ok(y1)
        }
    }

    /// The LP relaxation of the multi-label space for objective `o` on instance `i` (tests and
    /// benchmarks; for `Any` the polytope is integral and the max-closure min-cut solves it).
    pub fn relaxation(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &[u32],
        o: &Objective,
    ) -> Result<LpSolution> {
        if !self.multilabel {
            return Err(Error::unsupported("the LP relaxation is defined for the multi-label spaces"));
        }
        self.check_width(data)?;
        self.check(y_true)?;
        let gains = with_scratch(|sc| {
            self.node_scores(w, &data.view(), i, &mut sc.sigma);
            sc.mask.clear();
            sc.mask.resize(self.n_nodes(), false);
            for &v in y_true {
                sc.mask[v as usize] = true;
            }
            let mut out = Vec::new();
            self.gains(&sc.sigma, &sc.mask, o, &mut out);
            out
        });
        lp::lp_relaxation(&self.graph, &gains, self.space == LabelSpace::Leaves)
    }
}
