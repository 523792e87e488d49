//! What each built-in surrogate is, in words: its formula and the admissible domain of its
//! parameters (thesis table `table:surrogate`). Its capabilities (affine or convex in h, product
//! form, g a function of the loss) are read off an instance ([`Info::example`]), so they are
//! decided once, by the implementation. The Python registry, `bicrit plugins` and the
//! documentation's tables are generated from this catalog.

use bicrit_core::Result;

/// One built-in surrogate, described.
#[derive(Clone, Copy, Debug)]
pub struct Info {
    /// Registry name.
    pub name: &'static str,
    /// ψ(h, g) and its factor functions.
    pub formula: &'static str,
    /// Parameters with their admissible (quasi-concave, increasing) domain.
    pub params: &'static [(&'static str, &'static str)],
    /// Parameters of an instance whose capabilities stand for the surrogate's.
    pub example: &'static [(&'static str, f64)],
    /// For parameterised surrogates, the parameters under which ψ has the product form
    /// (h + 1)·g; empty otherwise (the instance says).
    pub product_form_when: &'static str,
}

/// The built-in surrogates, in the order of table `table:surrogate`.
pub const INFO: [Info; 8] = [
    Info {
        name: "margin",
        formula: "margin rescaling ψ = h + g",
        params: &[],
        example: &[],
        product_form_when: "",
    },
    Info {
        name: "slack",
        formula: "slack rescaling ψ = (h + 1)·g",
        params: &[],
        example: &[],
        product_form_when: "",
    },
    Info {
        name: "generalized",
        formula: "generalized scaling ψ = h·g^β + g^α",
        params: &[("alpha", "β ≤ α ≤ β + 1"), ("beta", "β ≥ 0")],
        example: &[("alpha", 1.5), ("beta", 0.5)],
        product_form_when: "α = β = 1",
    },
    Info {
        name: "beta",
        formula: "β-scaling ψ = h·g^β + g",
        params: &[("beta", "[0, 1]")],
        example: &[("beta", 0.5)],
        product_form_when: "β = 1",
    },
    Info {
        name: "log",
        formula: "loss-scaled log loss ψ = g·log(1 + e^h)",
        params: &[],
        example: &[],
        product_form_when: "",
    },
    Info {
        name: "probloss",
        formula: "ProbLoss ψ = 2g·Φ_N(h/σ), σ² = 2g/π",
        params: &[],
        example: &[],
        product_form_when: "",
    },
    Info {
        name: "probloss-convex",
        formula: "ProbLoss with its convex extension g + √g·h for h > 0",
        params: &[],
        example: &[],
        product_form_when: "",
    },
    Info {
        name: "microf1",
        formula: "Micro-F1 surrogate ψ = h/(−g), h = H + m, g = −(|y| + |y_i|)",
        params: &[],
        example: &[],
        product_form_when: "",
    },
];

/// The description of the built-in surrogate `name`.
pub fn info(name: &str) -> Result<&'static Info> {
    INFO.iter().find(|i| i.name == name).ok_or_else(|| crate::unknown(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_is_described_and_its_example_builds() {
        assert_eq!(INFO.map(|i| i.name), crate::NAMES);
        for i in INFO {
            let s = crate::by_name(i.name, i.example).unwrap();
            assert_eq!(s.name(), i.name);
            let declared: Vec<&str> = crate::parameters(i.name).unwrap().iter().map(|(k, _)| *k).collect();
            let described: Vec<&str> = i.params.iter().map(|(k, _)| *k).collect();
            assert_eq!(declared, described, "{}", i.name);
        }
    }
}
