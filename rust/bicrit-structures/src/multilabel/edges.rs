//! Edge sets of the pairwise multi-label MRF: the fully pairwise model of the thesis (§ multi-label
//! experiments, after Finley & Joachims 2008), a chain in label order, an explicit list, and the
//! Chow–Liu tree (maximum spanning tree of the pairwise mutual information of the training labels).
//!
//! Edges are stored as `(i, j)` with `i < j`; the state index of an edge is `2·y_i + y_j`.

use bicrit_core::{Error, Result};

/// All K(K−1)/2 pairs, in lexicographic order.
pub fn full_edges(n_labels: usize) -> Vec<(usize, usize)> {
    let mut e = Vec::with_capacity(n_labels * n_labels.saturating_sub(1) / 2);
    for i in 0..n_labels {
        for j in i + 1..n_labels {
            e.push((i, j));
        }
    }
    e
}

/// (0, 1), (1, 2), …: a chain in label order.
pub fn chain_edges(n_labels: usize) -> Vec<(usize, usize)> {
    (1..n_labels).map(|j| (j - 1, j)).collect()
}

/// Validates an explicit edge list: endpoints in `0..n_labels`, no self-loops, no pair given twice
/// (in either orientation). Returns the edges oriented `i < j`, in the order given.
pub fn validate_edges(n_labels: usize, pairs: &[(i64, i64)]) -> Result<Vec<(usize, usize)>> {
    let mut seen = std::collections::HashSet::with_capacity(pairs.len());
    let mut out = Vec::with_capacity(pairs.len());
    for (pos, &(a, b)) in pairs.iter().enumerate() {
        for v in [a, b] {
            if v < 0 || v as u64 >= n_labels as u64 {
                return Err(Error::input(format!(
                    "edge {pos} = ({a}, {b}) has an endpoint outside the labels 0..{n_labels}"
                )));
            }
        }
        if a == b {
            return Err(Error::input(format!("edge {pos} = ({a}, {b}) is a self-loop")));
        }
        let e = (a.min(b) as usize, a.max(b) as usize);
        if !seen.insert(e) {
            return Err(Error::input(format!(
                "edge {pos} = ({a}, {b}) duplicates an earlier edge between labels {} and {}",
                e.0, e.1
            )));
        }
        out.push(e);
    }
    Ok(out)
}

/// The Chow–Liu tree of 0/1 training labels `y` (`n_rows × n_labels`, row-major): the maximum
/// spanning tree of the empirical pairwise mutual information (Prim's algorithm on the dense MI
/// matrix, O(K²) after O(n·K²) counting; ties go to the smaller label index, so the tree is
/// deterministic). Labels that are independent of all others still get an edge (MI 0), so the
/// result always has K − 1 edges.
pub fn chow_liu_tree(y: &[u8], n_rows: usize, n_labels: usize) -> Result<Vec<(usize, usize)>> {
    if n_rows == 0 {
        return Err(Error::input("the Chow–Liu tree needs at least one training label (Y is empty)"));
    }
    if y.len() != n_rows * n_labels {
        return Err(Error::input(format!("Y has {} values, expected {n_rows} × {n_labels}", y.len())));
    }
    if let Some(p) = y.iter().position(|&v| v > 1) {
        return Err(Error::input(format!(
            "Y holds {} at row {}, label {}: labels must be 0 or 1",
            y[p],
            p / n_labels.max(1),
            p % n_labels.max(1)
        )));
    }
    let k = n_labels;
    // ones[i], both[i][j]: counts of y_i = 1 and of y_i = y_j = 1.
    let mut ones = vec![0u64; k];
    let mut both = vec![0u64; k * k];
    let mut active = Vec::with_capacity(k);
    for r in 0..n_rows {
        let row = &y[r * k..(r + 1) * k];
        active.clear();
        active.extend((0..k).filter(|&i| row[i] == 1));
        for (a, &i) in active.iter().enumerate() {
            ones[i] += 1;
            for &j in &active[a + 1..] {
                both[i * k + j] += 1;
            }
        }
    }
    let n = n_rows as f64;
    let mi = |i: usize, j: usize| -> f64 {
        let (i, j) = (i.min(j), i.max(j));
        let n11 = both[i * k + j] as f64;
        let n1x = ones[i] as f64;
        let nx1 = ones[j] as f64;
        let cells = [
            (n - n1x - nx1 + n11, n - n1x, n - nx1),
            (nx1 - n11, n - n1x, nx1),
            (n1x - n11, n1x, n - nx1),
            (n11, n1x, nx1),
        ];
        cells
            .iter()
            .filter(|c| c.0 > 0.0)
            .map(|&(nab, na, nb)| nab / n * (nab * n / (na * nb)).ln())
            .sum::<f64>()
            .max(0.0)
    };
    // Prim from label 0 on the complete graph weighted by MI (maximum spanning tree).
    let mut in_tree = vec![false; k];
    let mut best = vec![f64::NEG_INFINITY; k];
    let mut parent = vec![usize::MAX; k];
    let mut edges = Vec::with_capacity(k.saturating_sub(1));
    if k == 0 {
        return Ok(edges);
    }
    in_tree[0] = true;
    for j in 1..k {
        best[j] = mi(0, j);
        parent[j] = 0;
    }
    for _ in 1..k {
        let mut pick = usize::MAX;
        for j in 0..k {
            if !in_tree[j] && (pick == usize::MAX || best[j] > best[pick]) {
                pick = j;
            }
        }
        in_tree[pick] = true;
        let p = parent[pick];
        edges.push((p.min(pick), p.max(pick)));
        for j in 0..k {
            if !in_tree[j] {
                let v = mi(pick, j);
                if v > best[j] {
                    best[j] = v;
                    parent[j] = pick;
                }
            }
        }
    }
    Ok(edges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_edge_sets() {
        assert_eq!(full_edges(3), vec![(0, 1), (0, 2), (1, 2)]);
        assert_eq!(chain_edges(3), vec![(0, 1), (1, 2)]);
        assert!(full_edges(1).is_empty() && chain_edges(1).is_empty());
    }

    #[test]
    fn explicit_edges_are_validated() {
        assert_eq!(validate_edges(3, &[(2, 0), (1, 2)]).unwrap(), vec![(0, 2), (1, 2)]);
        assert!(validate_edges(3, &[(0, 3)]).unwrap_err().to_string().contains("outside"));
        assert!(validate_edges(3, &[(-1, 0)]).unwrap_err().to_string().contains("outside"));
        assert!(validate_edges(3, &[(1, 1)]).unwrap_err().to_string().contains("self-loop"));
        assert!(validate_edges(3, &[(0, 1), (1, 0)]).unwrap_err().to_string().contains("duplicates"));
    }

    #[test]
    fn chow_liu_links_dependent_labels() {
        // label 2 copies label 0, label 3 negates label 1, labels 0 and 1 independent
        let rows: Vec<[u8; 4]> = vec![[0, 0, 0, 1], [0, 1, 0, 0], [1, 0, 1, 1], [1, 1, 1, 0]];
        let y: Vec<u8> = rows.iter().flatten().copied().collect();
        let t = chow_liu_tree(&y, 4, 4).unwrap();
        assert_eq!(t.len(), 3);
        assert!(t.contains(&(0, 2)));
        assert!(t.contains(&(1, 3)));
        assert!(chow_liu_tree(&[0, 2], 1, 2).is_err());
        assert!(chow_liu_tree(&[], 0, 2).is_err());
        assert!(chow_liu_tree(&[1], 1, 1).unwrap().is_empty());
    }
}
