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

/// Most labels a multi-label structure takes: beyond this a label count is a corrupted input
/// (a damaged model file), not a data set, and is refused before anything is allocated.
pub const MAX_LABELS: usize = 1 << 24;

/// Most label-pair edges (each holds four weights, thesis eq. for the pairwise multi-label
/// model's joint feature map).
pub const MAX_EDGES: usize = 1 << 27;

/// Checks a label count, the edge count a graph kind would give (`"full"`: K(K−1)/2, otherwise
/// `n_edges`) and the weight dimension K·d + 4·|E| against [`MAX_LABELS`], [`MAX_EDGES`] and
/// the addressable memory, before anything is built.
pub fn check_size(n_labels: usize, n_features: usize, full: bool, n_edges: usize) -> Result<()> {
    if n_labels > MAX_LABELS {
        return Err(Error::param(format!("n_labels must be at most {MAX_LABELS}, got {n_labels}")));
    }
    let edges = if full { n_labels * n_labels.saturating_sub(1) / 2 } else { n_edges };
    if edges > MAX_EDGES {
        return Err(Error::param(format!(
            "a label graph of {edges} edges is more than {MAX_EDGES}: use edges='auto' or 'tree'"
        )));
    }
    let dim = n_labels.checked_mul(n_features).and_then(|kd| kd.checked_add(4 * edges));
    match dim {
        Some(d) if d <= isize::MAX as usize / 8 => Ok(()),
        _ => Err(Error::param(format!(
            "{n_labels} labels × {n_features} features is more weights than memory can hold"
        ))),
    }
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

/// Label counts of 0/1 training labels, all the Chow–Liu tree needs: `n_rows`, `ones[i]` (rows
/// with y_i = 1) and `both[i·K + j]`, i < j (rows with y_i = y_j = 1). Counts of several data
/// parts add ([`LabelCounts::add`]), so a tree can be learnt from data spread over machines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelCounts {
    pub n_rows: u64,
    pub ones: Vec<u64>,
    pub both: Vec<u64>,
}

impl LabelCounts {
    /// Counts of `y` (`n_rows × n_labels`, row-major), O(n·a²) for a active labels per row.
    pub fn of(y: &[u8], n_rows: usize, n_labels: usize) -> Result<Self> {
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
        let mut c = LabelCounts { n_rows: n_rows as u64, ones: vec![0; k], both: vec![0; k * k] };
        let mut active = Vec::with_capacity(k);
        for row in y.chunks_exact(k.max(1)).take(n_rows) {
            active.clear();
            active.extend((0..k).filter(|&i| row[i] == 1));
            for (a, &i) in active.iter().enumerate() {
                c.ones[i] += 1;
                for &j in &active[a + 1..] {
                    c.both[i * k + j] += 1;
                }
            }
        }
        Ok(c)
    }

    /// Checks that the arrays fit one label count K and that the counts are consistent.
    pub fn new(n_rows: u64, ones: Vec<u64>, both: Vec<u64>) -> Result<Self> {
        let k = ones.len();
        if k > MAX_LABELS || both.len() != k * k {
            return Err(Error::input(format!(
                "label counts: {} pair counts for {k} labels, expected {}",
                both.len(),
                k.saturating_mul(k)
            )));
        }
        if ones.iter().any(|&o| o > n_rows) {
            return Err(Error::input("label counts: a label is on in more rows than there are"));
        }
        Ok(LabelCounts { n_rows, ones, both })
    }

    /// The counts of two data parts together.
    pub fn add(&mut self, other: &LabelCounts) -> Result<()> {
        if other.ones.len() != self.ones.len() {
            return Err(Error::input(format!(
                "label counts of {} and {} labels cannot be added",
                self.ones.len(),
                other.ones.len()
            )));
        }
        self.n_rows += other.n_rows;
        self.ones.iter_mut().zip(&other.ones).for_each(|(a, b)| *a += b);
        self.both.iter_mut().zip(&other.both).for_each(|(a, b)| *a += b);
        Ok(())
    }

    /// The Chow–Liu tree: the maximum spanning tree of the empirical pairwise mutual
    /// information (Prim's algorithm on the dense MI matrix, O(K²); ties go to the smaller label
    /// index, so the tree is deterministic). Labels independent of all others still get an edge
    /// (MI 0), so the result always has K − 1 edges.
    pub fn chow_liu(&self) -> Result<Vec<(usize, usize)>> {
        if self.n_rows == 0 {
            return Err(Error::input("the Chow–Liu tree needs at least one training label (Y is empty)"));
        }
        let (k, ones, both) = (self.ones.len(), &self.ones, &self.both);
        let n = self.n_rows as f64;
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
}

/// The Chow–Liu tree of 0/1 training labels `y` (`n_rows × n_labels`, row-major):
/// [`LabelCounts::of`] then [`LabelCounts::chow_liu`].
pub fn chow_liu_tree(y: &[u8], n_rows: usize, n_labels: usize) -> Result<Vec<(usize, usize)>> {
    LabelCounts::of(y, n_rows, n_labels)?.chow_liu()
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

    #[test]
    fn counts_of_parts_add_up_to_the_counts_of_the_whole() {
        let y = [1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1];
        let whole = LabelCounts::of(&y, 4, 3).unwrap();
        let mut parts = LabelCounts::of(&y[..6], 2, 3).unwrap();
        parts.add(&LabelCounts::of(&y[6..], 2, 3).unwrap()).unwrap();
        assert_eq!(parts, whole);
        assert_eq!(parts.chow_liu().unwrap(), chow_liu_tree(&y, 4, 3).unwrap());
        assert!(parts.add(&LabelCounts::of(&[1, 0], 1, 2).unwrap()).is_err());
    }
}
