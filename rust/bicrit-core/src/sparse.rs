//! Borrowed CSR matrices and sparse vectors. Feature inputs reach Rust as CSR (dense input is
//! converted in Python), validated once per call; inner loops then index without checks on bounds
//! that validation already established.

use crate::error::{Error, Result};

/// A borrowed CSR matrix (scipy layout: `indptr` of length rows + 1, `indices`, `data`).
#[derive(Clone, Copy, Debug)]
pub struct CsrView<'a> {
    indptr: &'a [i64],
    indices: &'a [i32],
    data: &'a [f64],
    n_cols: usize,
}

impl<'a> CsrView<'a> {
    /// Validates the layout: monotone `indptr` starting at 0 and ending at nnz, column indices in
    /// `0..n_cols`, finite data. Errors name `what` and the offending row.
    pub fn new(
        what: &str,
        indptr: &'a [i64],
        indices: &'a [i32],
        data: &'a [f64],
        n_cols: usize,
    ) -> Result<Self> {
        if indptr.is_empty() {
            return Err(Error::input(format!("{what}: indptr is empty")));
        }
        if indices.len() != data.len() {
            return Err(Error::input(format!(
                "{what}: indices ({}) and data ({}) differ in length",
                indices.len(),
                data.len()
            )));
        }
        if indptr[0] != 0 || *indptr.last().unwrap() as usize != data.len() {
            return Err(Error::input(format!(
                "{what}: indptr must start at 0 and end at nnz = {}",
                data.len()
            )));
        }
        for r in 0..indptr.len() - 1 {
            let (a, b) = (indptr[r], indptr[r + 1]);
            if b < a {
                return Err(Error::input(format!("{what}: indptr decreases at row {r}")));
            }
            for k in a as usize..b as usize {
                let c = indices[k];
                if c < 0 || c as usize >= n_cols {
                    return Err(Error::input(format!(
                        "{what}: row {r} has column index {c} outside 0..{n_cols}"
                    )));
                }
                if !data[k].is_finite() {
                    return Err(Error::input(format!(
                        "{what}: row {r}, column {c} holds a non-finite value ({})",
                        data[k]
                    )));
                }
            }
        }
        Ok(CsrView { indptr, indices, data, n_cols })
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.indptr.len() - 1
    }

    /// Number of columns.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.data.len()
    }

    /// Column indices and values of row `r` (panics if `r >= n_rows`, a caller bug).
    pub fn row(&self, r: usize) -> (&'a [i32], &'a [f64]) {
        let (a, b) = (self.indptr[r] as usize, self.indptr[r + 1] as usize);
        (&self.indices[a..b], &self.data[a..b])
    }

    /// Dot product of row `r` with the block `w[offset .. offset + n_cols]`.
    pub fn row_dot(&self, r: usize, w: &[f64], offset: usize) -> f64 {
        let (idx, val) = self.row(r);
        let block = &w[offset..offset + self.n_cols];
        idx.iter().zip(val).map(|(&c, &v)| v * block[c as usize]).sum()
    }
}

/// A sparse vector as (index, value) pairs; indices may repeat until [`SparseVec::compact`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseVec {
    /// Indices into the joint feature space.
    pub indices: Vec<usize>,
    /// Values, one per index.
    pub values: Vec<f64>,
}

impl SparseVec {
    /// An empty vector.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends `value` at `index`.
    pub fn push(&mut self, index: usize, value: f64) {
        self.indices.push(index);
        self.values.push(value);
    }

    /// Appends row `r` of `x`, scaled by `scale`, at column offset `offset`.
    pub fn push_row(&mut self, x: &CsrView<'_>, r: usize, offset: usize, scale: f64) {
        let (idx, val) = x.row(r);
        for (&c, &v) in idx.iter().zip(val) {
            self.push(offset + c as usize, scale * v);
        }
    }

    /// Appends all entries of `other`, scaled.
    pub fn extend_scaled(&mut self, other: &SparseVec, scale: f64) {
        self.indices.extend_from_slice(&other.indices);
        self.values.extend(other.values.iter().map(|v| v * scale));
    }

    /// Sorts by index, sums duplicates and drops exact zeros.
    pub fn compact(&mut self) {
        let mut pairs: Vec<(usize, f64)> =
            self.indices.iter().copied().zip(self.values.iter().copied()).collect();
        pairs.sort_by_key(|p| p.0);
        self.indices.clear();
        self.values.clear();
        for (i, v) in pairs {
            match self.indices.last() {
                Some(&last) if last == i => *self.values.last_mut().unwrap() += v,
                _ => {
                    self.indices.push(i);
                    self.values.push(v);
                }
            }
        }
        let (mut idx, mut val) = (Vec::new(), Vec::new());
        for (i, v) in self.indices.iter().zip(&self.values) {
            if *v != 0.0 {
                idx.push(*i);
                val.push(*v);
            }
        }
        self.indices = idx;
        self.values = val;
    }

    /// w · self.
    pub fn dot(&self, w: &[f64]) -> f64 {
        self.indices.iter().zip(&self.values).map(|(&i, &v)| w[i] * v).sum()
    }

    /// w += scale · self.
    pub fn add_to(&self, w: &mut [f64], scale: f64) {
        for (&i, &v) in self.indices.iter().zip(&self.values) {
            w[i] += scale * v;
        }
    }

    /// Squared Euclidean norm (after summing duplicate indices).
    pub fn norm_sq(&self) -> f64 {
        let mut c = self.clone();
        c.compact();
        c.values.iter().map(|v| v * v).sum()
    }

    /// Largest index + 1 (0 when empty).
    pub fn dim_lower_bound(&self) -> usize {
        self.indices.iter().max().map_or(0, |m| m + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csr_validation_names_the_row() {
        let indptr = [0i64, 2, 3];
        let indices = [0i32, 2, 5];
        let data = [1.0, 2.0, 3.0];
        let e = CsrView::new("X", &indptr, &indices, &data, 3).unwrap_err();
        assert!(e.to_string().contains("row 1"), "{e}");
        let x = CsrView::new("X", &indptr, &[0, 2, 1], &data, 3).unwrap();
        assert_eq!(x.n_rows(), 2);
        assert_eq!(x.row_dot(0, &[0.0, 10.0, 1.0, 2.0, 3.0], 2), 1.0 + 6.0);
        let bad = [1.0, f64::NAN, 3.0];
        assert!(CsrView::new("X", &indptr, &[0, 2, 1], &bad, 3).is_err());
    }

    #[test]
    fn sparse_vec_compacts_and_dots() {
        let mut v = SparseVec::new();
        v.push(3, 1.0);
        v.push(1, 2.0);
        v.push(3, -1.0);
        v.push(0, 0.5);
        v.compact();
        assert_eq!(v.indices, vec![0, 1]);
        assert_eq!(v.dot(&[2.0, 3.0, 0.0, 0.0]), 1.0 + 6.0);
        let mut w = vec![0.0; 4];
        v.add_to(&mut w, 2.0);
        assert_eq!(w, vec![1.0, 4.0, 0.0, 0.0]);
        assert_eq!(v.norm_sq(), 4.25);
    }
}

/// An owned CSR matrix (a copy of scipy's arrays), validated on construction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CsrMatrix {
    /// Row pointers, length rows + 1.
    pub indptr: Vec<i64>,
    /// Column indices.
    pub indices: Vec<i32>,
    /// Values.
    pub data: Vec<f64>,
    /// Number of columns.
    pub n_cols: usize,
}

impl CsrMatrix {
    /// Validates (see [`CsrView::new`]) and takes ownership.
    pub fn new(
        what: &str,
        indptr: Vec<i64>,
        indices: Vec<i32>,
        data: Vec<f64>,
        n_cols: usize,
    ) -> Result<Self> {
        CsrView::new(what, &indptr, &indices, &data, n_cols)?;
        Ok(CsrMatrix { indptr, indices, data, n_cols })
    }

    /// Builds a matrix from dense rows (tests and small inputs).
    pub fn from_dense(rows: &[Vec<f64>], n_cols: usize) -> Result<Self> {
        let mut m = CsrMatrix { indptr: vec![0], n_cols, ..Default::default() };
        for (r, row) in rows.iter().enumerate() {
            if row.len() != n_cols {
                return Err(Error::input(format!("row {r} has {} values, expected {n_cols}", row.len())));
            }
            for (c, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    m.indices.push(c as i32);
                    m.data.push(v);
                }
            }
            m.indptr.push(m.data.len() as i64);
        }
        CsrView::new("dense rows", &m.indptr, &m.indices, &m.data, n_cols)?;
        Ok(m)
    }

    /// A borrowed view (already validated).
    pub fn view(&self) -> CsrView<'_> {
        CsrView { indptr: &self.indptr, indices: &self.indices, data: &self.data, n_cols: self.n_cols }
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.indptr.len().saturating_sub(1)
    }
}
