//! The one error type of the Rust core. `bicrit-py` maps each variant to a Python exception
//! class (see `python/bicrit/errors.py`); no path that input can reach may panic instead.

use thiserror::Error;

/// Errors raised anywhere in the Rust core.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// Input data is malformed: wrong shape, NaN/inf, label outside the structure, empty sequence…
    #[error("{0}")]
    InvalidInput(String),
    /// A parameter is outside its admissible domain (e.g. a surrogate that would not be quasi-concave).
    #[error("{0}")]
    InvalidParameter(String),
    /// Two pieces that do not combine (docs/architecture.md, Which pieces combine), refused at
    /// construction.
    #[error("{0}")]
    Incompatible(String),
    /// An oracle was asked for a capability it does not declare (ban list, k-best, cone).
    #[error("{0}")]
    Unsupported(String),
    /// A numerical solver (LP/QP/IP, max-flow) failed or reported infeasibility.
    #[error("{0}")]
    Solver(String),
    /// An error raised by user code called back from Rust (a Python plugin). The bindings keep
    /// the original Python exception under `id` and re-raise it at the boundary.
    #[error("{message}")]
    Callback {
        /// Key of the stashed original exception.
        id: u64,
        /// Its formatted message, for Rust-only callers.
        message: String,
    },
}

/// Result alias used across the workspace.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Shorthand for [`Error::InvalidInput`].
    pub fn input(msg: impl Into<String>) -> Self {
        Error::InvalidInput(msg.into())
    }
    /// Shorthand for [`Error::InvalidParameter`].
    pub fn param(msg: impl Into<String>) -> Self {
        Error::InvalidParameter(msg.into())
    }
    /// Shorthand for [`Error::Incompatible`].
    pub fn incompatible(msg: impl Into<String>) -> Self {
        Error::Incompatible(msg.into())
    }
    /// Shorthand for [`Error::Unsupported`].
    pub fn unsupported(msg: impl Into<String>) -> Self {
        Error::Unsupported(msg.into())
    }
    /// Shorthand for [`Error::Solver`].
    pub fn solver(msg: impl Into<String>) -> Self {
        Error::Solver(msg.into())
    }
}

/// Fails with [`Error::InvalidInput`] naming `what` when any value is NaN or infinite.
pub fn check_finite(what: &str, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => {
            Err(Error::input(format!("{what} contains a non-finite value ({}) at position {i}", values[i])))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_finite_names_position() {
        assert!(check_finite("w", &[1.0, 2.0]).is_ok());
        let e = check_finite("w", &[1.0, f64::NAN]).unwrap_err();
        assert!(e.to_string().contains("w contains a non-finite value"));
        assert!(e.to_string().contains("position 1"));
    }
}
