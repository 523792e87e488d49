//! Dependency trees as head vectors: validation (range, self-loops, single root child, cycles) and
//! projectivity. `heads[j]` is the head of token `j + 1`; 0 is the artificial root.

use bicrit_core::{Error, Result};

/// Checks that `heads` is a dependency tree over `heads.len()` tokens with exactly one child of the
/// root (UD's convention, enforced by both decoders). Errors name the offending token.
pub fn check_tree(heads: &[u32]) -> Result<()> {
    check_tree_roots(heads, true)
}

/// Like [`check_tree`], with several children of the root allowed when `single_root` is false.
pub fn check_tree_roots(heads: &[u32], single_root: bool) -> Result<()> {
    let n = heads.len();
    if n == 0 {
        return Err(Error::input("empty sentence: a dependency tree needs at least one token"));
    }
    let mut root_children = Vec::new();
    for (j, &h) in heads.iter().enumerate() {
        let tok = j + 1;
        if h as usize > n {
            return Err(Error::input(format!(
                "heads[{j}] = {h} is outside 0..={n} (token {tok} of a {n}-token sentence)"
            )));
        }
        if h as usize == tok {
            return Err(Error::input(format!("token {tok} is its own head (heads[{j}] = {h})")));
        }
        if h == 0 {
            root_children.push(tok);
        }
    }
    if root_children.is_empty() {
        return Err(Error::input(
            "no token attaches to the root (head 0): the heads form a cycle or a forest without root",
        ));
    }
    if single_root && root_children.len() > 1 {
        return Err(Error::input(format!(
            "tokens {:?} all attach to the root (head 0); exactly one root child is required",
            root_children
        )));
    }
    // Cycle detection: colour 0 = unseen, 1 = on the current walk, 2 = known to reach the root.
    let mut colour = vec![0u8; n + 1];
    colour[0] = 2;
    let mut path = Vec::new();
    for start in 1..=n {
        let mut v = start;
        path.clear();
        while colour[v] == 0 {
            colour[v] = 1;
            path.push(v);
            v = heads[v - 1] as usize;
        }
        if colour[v] == 1 {
            // v is on the current walk: the cycle is the part of the path from v on.
            let pos = path.iter().position(|&u| u == v).unwrap_or(0);
            let cycle: Vec<usize> = path[pos..].to_vec();
            return Err(Error::input(format!("heads form a cycle through tokens {cycle:?}")));
        }
        for &u in &path {
            colour[u] = 2;
        }
    }
    Ok(())
}

/// Is the tree projective? An arc (h, d) is projective when every token strictly between h and d
/// descends from h; with the root at position 0 this is the same as "no two arcs cross". `heads`
/// must be a valid tree ([`check_tree`]).
pub fn is_projective(heads: &[u32]) -> bool {
    let n = heads.len();
    let parent = |v: usize| heads[v - 1] as usize;
    let descends = |mut v: usize, h: usize| {
        // walks up at most n steps (the tree is acyclic)
        while v != 0 {
            if v == h {
                return true;
            }
            v = parent(v);
        }
        h == 0
    };
    for d in 1..=n {
        let h = parent(d);
        let (lo, hi) = if h < d { (h, d) } else { (d, h) };
        if ((lo + 1)..hi).any(|b| !descends(b, h)) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_trees_pass() {
        assert!(check_tree(&[0]).is_ok());
        assert!(check_tree(&[2, 0, 2]).is_ok());
        assert!(is_projective(&[2, 0, 2]));
    }

    #[test]
    fn errors_name_the_problem() {
        let msg = |h: &[u32]| check_tree(h).unwrap_err().to_string();
        assert!(msg(&[]).contains("empty"));
        assert!(msg(&[0, 5]).contains("outside 0..=2"));
        assert!(msg(&[0, 2]).contains("its own head"));
        assert!(msg(&[0, 0]).contains("exactly one root child"));
        assert!(msg(&[2, 1]).contains("no token attaches to the root"));
        assert!(msg(&[0, 3, 2]).contains("cycle through tokens"), "{}", msg(&[0, 3, 2]));
    }

    #[test]
    fn crossing_arcs_are_not_projective() {
        // 1 → 3 and 2 → 4 cross; root child 1.
        assert!(!is_projective(&[0, 4, 1, 1]));
        // an arc passing over the root child: root child 2, arc 1 → 3 spans token 2.
        assert!(check_tree(&[2, 0, 1]).is_ok());
        assert!(!is_projective(&[2, 0, 1]));
        assert!(is_projective(&[2, 0, 2, 3]));
    }
}
