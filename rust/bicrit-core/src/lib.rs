//! Shared vocabulary of bicrit.
//!
//! Every other crate speaks these types:
//! * [`Error`] — the one error type, mapped to Python exceptions in one place (`bicrit-py`).
//! * [`Terms`] / [`Objective`] — the decomposable terms a structure adds to its margin
//!   (docs/architecture.md, Objects).
//! * [`FactorMap`] — how a surrogate's factor functions h and g are built from (m, terms).
//! * [`LambdaOracle`] — the λ-oracle in the (h, g) plane that every search drives
//!   (thesis eq. `lambda_oracle`, constrained form eq. `constrained_oracle`).
//! * [`sparse`] — borrowed CSR views and sparse vectors for feature maps.

pub mod error;
pub mod factor;
pub mod oracle;
pub mod sparse;
pub mod terms;

pub use error::{Error, Result};
pub use factor::{Affine, FactorMap};
pub use oracle::{Capabilities, Cone, Lambda, LambdaOracle, PlaneQuery, Point};
pub use sparse::{CsrMatrix, CsrView, SparseVec};
pub use terms::{Objective, Terms};
