//! Angular search with the constrained λ-oracle (thesis Alg. `alg:angular`, Theorems
//! `thm:angular_optimal`, `thm:angular_suboptimality`, in certified
//! form): exact for ψ = (h + 1)·g in at most 2M + 1 constrained calls (M labels) after the
//! two calls O(0), O(∞) that fix Ĥ, Ĝ and λ₀ = Ĥ/Ĝ, ε-optimal with `eps > 0`. Given a λ₀ (option
//! or warm start) those two calls are skipped: the first angle is then the whole quadrant, whose
//! answer bounds Ĥ ≤ K and Ĝ ≤ K/λ₀ — enough for the floor below.
//!
//! Points are (H, G) = (h + 1, g); only H, G > 0 can beat the gold label (Φ = 0). An angle is an
//! interval of slopes G/H. For the angle's λ the oracle returns z; every point better than the
//! best Φ̂ lies on or below the line H + λG = K through z and above the hyperbola HG = Φ̂, i.e.
//! strictly between the slopes of their two intersections (z and z′ = (λG(z), H(z)/λ) when z is
//! the best: Lemma `lem:shrink_angel`). That interval is split at the ray of slope 1/λ, which goes
//! to exactly one child; both children get the bound K²/(4λ) (Lemma `lem3`, the best Φ on the
//! oracle's line). Angles are popped by bound from a priority queue; the search stops when the
//! largest remaining bound is ≤ (1 + ε)·Φ̂. The interval's outer ends are open and nudged inward
//! by a few ulps — and cut at z's own slope — so that z cannot come back through rounding: every
//! constrained call returns a new label or closes an angle, hence ≤ 2M + 1 calls.
//!
//! Slips handled: the slope is ∂(a) = a₂/a₁ = G/H and λ₀ = Ĥ/Ĝ (the text and Theorem
//! `thm:angular_running_time` disagree; with this λ₀ the first split ray 1/λ₀ = Ĝ/Ĥ is the
//! diagonal of the box [0, Ĥ] × [0, Ĝ]); "if z₁ = z′₁ return y" closes only that angle.
//! When no label with Φ > 0 is known, the floor τ = 1e-12·ĤĜ (or 1e-12·K²/λ₀ ≥ 1e-12·ĤĜ)
//! stands for Φ̂ so that every later angle is finite (Theorem `thm:angular_running_time`'s φ):
//! labels with 0 < Φ ≤ τ are not looked for, and the reported upper bound includes τ.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use bicrit_core::{Cone, Lambda, LambdaOracle, Result};

use crate::session::Session;
use crate::{Found, Requirements, Search, WarmStart};

/// Angular search.
#[derive(Clone, Debug, PartialEq)]
pub struct Angular {
    /// Relative stop: the search ends when every remaining bound is ≤ (1 + eps)·Φ̂ (0: exact).
    pub eps: f64,
    /// Call budget (including the two extreme calls).
    pub max_calls: usize,
    /// λ₀ of the first angle (default: the warm start's λ, else Ĥ/Ĝ from two extreme calls).
    pub lambda0: Option<f64>,
}

impl Default for Angular {
    fn default() -> Self {
        Angular { eps: 0.0, max_calls: 10_000, lambda0: None }
    }
}

/// The floor τ relative to ĤĜ when no positive Φ is known.
const FLOOR: f64 = 1e-12;
/// Inward nudge of the outer ends of an angle, relative.
const NUDGE: f64 = 64.0 * f64::EPSILON;

/// λ within [1e-150, 1e150] (h + λg neither overflows nor loses h), or `fallback` when NaN/0/∞.
fn clamp_lambda(l: f64, fallback: f64) -> f64 {
    if l.is_finite() && l > 0.0 {
        l.clamp(1e-150, 1e150)
    } else {
        fallback
    }
}

#[derive(Clone, Copy, Debug)]
struct Angle {
    lo: f64,
    lo_closed: bool,
    hi: f64,
    hi_closed: bool,
    bound: f64,
    lambda: f64,
}

impl PartialEq for Angle {
    fn eq(&self, o: &Self) -> bool {
        self.bound.total_cmp(&o.bound) == Ordering::Equal
    }
}
impl Eq for Angle {}
impl PartialOrd for Angle {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Angle {
    fn cmp(&self, o: &Self) -> Ordering {
        self.bound.total_cmp(&o.bound)
    }
}

impl Search for Angular {
    fn name(&self) -> &'static str {
        "angular"
    }

    fn requirements(&self) -> Requirements {
        Requirements { product_form: true, unit_shift: true, cone: true, ..Requirements::default() }
    }

    fn max_calls(&self) -> usize {
        self.max_calls
    }

    fn search<'a, O: LambdaOracle>(
        &self,
        s: &mut Session<'a, O>,
        warm: Option<&'a WarmStart<O::Label>>,
        _xi: Option<f64>,
    ) -> Result<Found<O::Label>> {
        let shift = 1.0;
        let best_phi = |s: &Session<'_, O>| s.best().map_or(0.0, |b| s.known[b].phi.max(0.0));
        let mut lambda0 = self.lambda0;
        if let Some(w) = warm {
            s.warm_points(w)?; // the label cache: a better Φ̂ narrows every angle
            lambda0 = lambda0.or(w.lambda);
        }
        let mut floor = 0.0;
        let start = match lambda0 {
            // With a λ₀ (option or warm start) the first angle is the whole open quadrant of
            // slopes (0, ∞); its answer's line bounds every label, H ≤ K and G ≤ K/λ₀, which is
            // all the floor below needs.
            Some(l) => Angle {
                lo: 0.0,
                lo_closed: false,
                hi: f64::INFINITY,
                hi_closed: false,
                bound: f64::INFINITY,
                lambda: l,
            },
            None => {
                // The thesis's start: O(0), O(∞) fix Ĥ = max H, Ĝ = max G and λ₀ = Ĥ/Ĝ; the first
                // angle is (Φ̂/Ĥ², Ĝ²/Φ̂), outside which nothing beats Φ̂.
                let top_h = s.query(Lambda::Zero, &[], 1, None)?;
                let top_g = s.query(Lambda::Infinity, &[], 1, None)?;
                let (Some(ph), Some(pg)) = (top_h.into_iter().next(), top_g.into_iter().next()) else {
                    return Ok(Found::best_of(s, Some(0.0)));
                };
                let (big_h, big_g) = (ph.h + shift, pg.g);
                s.add(ph)?;
                s.add(pg)?;
                if big_h <= 0.0 || big_g <= 0.0 {
                    return Ok(Found::best_of(s, Some(0.0))); // no label has H, G > 0
                }
                let box_bound = big_h * big_g;
                if best_phi(s) <= 0.0 {
                    floor = FLOOR * box_bound;
                }
                let f = best_phi(s).max(floor);
                if box_bound <= (1.0 + self.eps) * f {
                    return Ok(Found::best_of(s, Some(box_bound)));
                }
                let (lo, hi) = (f / (big_h * big_h), big_g * big_g / f);
                let lambda = clamp_lambda(big_h / big_g, 1.0);
                Angle {
                    lo,
                    lo_closed: false,
                    hi: hi.min(f64::MAX),
                    hi_closed: false,
                    bound: box_bound,
                    lambda,
                }
            }
        };
        let mut heap = BinaryHeap::new();
        heap.push(start);
        let mut upper = 0.0f64;
        while let Some(a) = heap.pop() {
            let phi = best_phi(s);
            if a.bound <= (1.0 + self.eps) * phi.max(floor) || !s.budget_left() {
                upper = upper.max(a.bound); // the largest remaining bound
                break;
            }
            let cone = Cone { lo: a.lo, lo_closed: a.lo_closed, hi: a.hi, hi_closed: a.hi_closed };
            let lambda = a.lambda;
            let Some(z) = s.query(Lambda::Finite(lambda), &[], 1, Some(cone))?.into_iter().next() else {
                continue; // no label in this angle
            };
            let (zh, zg) = (z.h + shift, z.g);
            s.add(z)?;
            let k = zh + lambda * zg;
            if k <= 0.0 {
                continue; // no point with H, G > 0 on or below the line in this angle
            }
            let bound = k * k / (4.0 * lambda);
            if a.hi.is_infinite() && best_phi(s) <= 0.0 {
                // No positive label known: look for labels with Φ > τ = 1e-12·(K²/λ), K²/λ ≥ ĤĜ.
                floor = FLOOR * k * k / lambda;
            }
            let f = best_phi(s).max(floor);
            if bound <= (1.0 + self.eps) * f {
                upper = upper.max(bound);
                continue;
            }
            // Intersections of HG = f with H + λG = K, in stable form: slopes s1 < 1/λ < s2.
            let root = (k * k - 4.0 * lambda * f).max(0.0).sqrt();
            let kp = k + root;
            let s1 = 4.0 * f / (kp * kp);
            let s2 = kp * kp / (4.0 * lambda * lambda * f);
            let (mut lo, mut lo_closed) = (s1 * (1.0 + NUDGE), false);
            if lo <= a.lo {
                (lo, lo_closed) = (a.lo, a.lo_closed);
            }
            let (mut hi, mut hi_closed) = (s2 * (1.0 - NUDGE), false);
            if hi >= a.hi {
                (hi, hi_closed) = (a.hi, a.hi_closed);
            }
            // A finite upper slope keeps every later angle inside the quadrant H, G > 0 (no label
            // with H ≤ 0 satisfies G ≤ hi·H), even when the bounds under- or overflow.
            hi = hi.min(f64::MAX);
            // z itself lies on the line outside the open interval; rounding in the roots above
            // must not let it back in: cut at its own slope, a few ulps inward.
            let zs = zg / zh;
            if zs <= 1.0 / lambda {
                if zs * (1.0 + 8.0 * f64::EPSILON) > lo {
                    (lo, lo_closed) = (zs * (1.0 + 8.0 * f64::EPSILON), false);
                }
            } else if zs * (1.0 - 8.0 * f64::EPSILON) < hi {
                (hi, hi_closed) = (zs * (1.0 - 8.0 * f64::EPSILON), false);
            }
            let split = 1.0 / lambda;
            let mut push = |lo: f64, lo_closed: bool, hi: f64, hi_closed: bool| {
                let nonempty = lo < hi || (lo == hi && lo_closed && hi_closed);
                if nonempty {
                    // λ = 1/√(αβ) (Alg. `alg:angular`), kept in range at extreme magnitudes.
                    let child = clamp_lambda(1.0 / (lo * hi).sqrt(), lambda);
                    heap.push(Angle { lo, lo_closed, hi, hi_closed, bound, lambda: child });
                }
            };
            if split > lo && split < hi {
                push(lo, lo_closed, split, true);
                push(split, false, hi, hi_closed);
            } else {
                push(lo, lo_closed, hi, hi_closed);
            }
        }
        if s.known.is_empty() && s.budget_left() {
            // No gold label and no label in the open quadrant: return the λ₀ answer.
            if let Some(y) = s.query(Lambda::Finite(lambda0.unwrap_or(1.0)), &[], 1, None)?.into_iter().next()
            {
                s.add(y)?;
            }
        }
        let phi = best_phi(s);
        let upper = upper.max(phi).max(floor);
        Ok(Found::best_of(s, upper.is_finite().then_some(upper)))
    }
}
