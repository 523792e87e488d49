//! Sparse accumulation through a reusable dense buffer.
//!
//! Feature differences φ(x_i, y) − φ(x_i, y_i), BCFW blocks and cutting-plane slopes are sums of
//! sparse vectors with heavy cancellation (a multi-label block cancels wherever y and y_i agree).
//! [`Scratch`] adds them into a dense buffer of the joint-feature size, remembering which entries
//! were touched, and hands back the sum as a [`SparseVec`] with unique indices in first-touch
//! order — O(entries) work, no sorting. One buffer per thread is allocated once and reused
//! ([`with_scratch`]); nothing D-sized is allocated per instance. The vectors handed back reuse
//! the buffers of spent ones ([`recycle`]).

use std::cell::RefCell;
use std::sync::Mutex;

use bicrit_core::SparseVec;

/// A dense accumulator with the list of touched entries.
#[derive(Debug, Default)]
pub struct Scratch {
    acc: Vec<f64>,
    mark: Vec<bool>,
    touched: Vec<usize>,
}

impl Scratch {
    /// An accumulator for vectors of length `dim`.
    pub fn new(dim: usize) -> Self {
        Scratch { acc: vec![0.0; dim], mark: vec![false; dim], touched: Vec::new() }
    }

    fn ensure(&mut self, dim: usize) {
        if self.acc.len() < dim {
            self.acc.resize(dim, 0.0);
            self.mark.resize(dim, false);
        }
    }

    /// Adds `value` at `index`.
    #[inline]
    pub fn add(&mut self, index: usize, value: f64) {
        if !self.mark[index] {
            self.mark[index] = true;
            self.touched.push(index);
        }
        self.acc[index] += value;
    }

    /// Adds `scale · v`.
    pub fn add_sparse(&mut self, v: &SparseVec, scale: f64) {
        for (&i, &x) in v.indices.iter().zip(&v.values) {
            self.add(i, scale * x);
        }
    }

    /// The sum so far (unique indices, first-touch order, exact zeros dropped); resets the buffer.
    pub fn take(&mut self) -> SparseVec {
        let mut out = pooled(self.touched.len());
        for &i in &self.touched {
            let v = self.acc[i];
            if v != 0.0 {
                out.indices.push(i);
                out.values.push(v);
            }
            self.acc[i] = 0.0;
            self.mark[i] = false;
        }
        self.touched.clear();
        out
    }

    /// Discards the sum so far.
    pub fn clear(&mut self) {
        for &i in &self.touched {
            self.acc[i] = 0.0;
            self.mark[i] = false;
        }
        self.touched.clear();
    }

    /// Scatters `v` into the buffer (to dot many vectors against it with [`Scratch::dot`]).
    pub fn load(&mut self, v: &SparseVec) {
        self.clear();
        self.add_sparse(v, 1.0);
    }

    /// Dot product of the buffer with `v`.
    pub fn dot(&self, v: &SparseVec) -> f64 {
        v.indices.iter().zip(&v.values).map(|(&i, &x)| self.acc[i] * x).sum()
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Spent vectors whose buffers [`Scratch::take`] fills again. A feature difference on the Gene
/// Ontology DAGs holds up to M·d entries (megabytes); allocating and freeing one per SGD step
/// made the allocator hand its pages back to the kernel and fault them in again at every step, a
/// quarter of an NHSVM epoch (benches/hierarchy/RESULTS.md). Shared by the threads: a block's
/// inferences run on the workers, its steps (which recycle) on the caller.
static POOL: Mutex<Vec<SparseVec>> = Mutex::new(Vec::new());

/// At most this many spent vectors, holding at most [`POOL_MAX_ENTRIES`] entries in all, wait in
/// the pool (what a block of SGD steps had alive at once, at most).
const POOL_MAX_VECTORS: usize = 64;
const POOL_MAX_ENTRIES: usize = 1 << 24;

/// Returns a spent vector's buffers to the pool [`Scratch::take`] draws from (its contents are
/// dropped). Optional: a vector not recycled is simply freed.
pub fn recycle(mut v: SparseVec) {
    if v.indices.capacity() == 0 {
        return;
    }
    v.indices.clear();
    v.values.clear();
    if let Ok(mut pool) = POOL.lock() {
        let held: usize = pool.iter().map(|p| p.indices.capacity()).sum();
        if pool.len() < POOL_MAX_VECTORS && held + v.indices.capacity() <= POOL_MAX_ENTRIES {
            pool.push(v);
        }
    }
}

/// An empty vector with room for `n` entries, from the pool when it has one.
pub fn pooled(n: usize) -> SparseVec {
    let mut v = POOL.lock().ok().and_then(|mut pool| pool.pop()).unwrap_or_default();
    v.indices.reserve(n);
    v.values.reserve(n);
    v
}

/// Runs `f` with this thread's accumulator, grown to at least `dim` entries and empty. A nested
/// call on the same thread (a Python plugin training another model from inside a callback) gets a
/// fresh buffer instead of panicking.
pub fn with_scratch<R>(dim: usize, f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => {
            s.ensure(dim);
            s.clear();
            let r = f(&mut s);
            s.clear();
            r
        }
        Err(_) => f(&mut Scratch::new(dim)),
    })
}

/// w · v for a dense `w` and a sparse `v`.
pub fn dot(w: &[f64], v: &SparseVec) -> f64 {
    v.indices.iter().zip(&v.values).map(|(&i, &x)| w[i] * x).sum()
}

/// w += scale · v.
pub fn axpy(w: &mut [f64], v: &SparseVec, scale: f64) {
    for (&i, &x) in v.indices.iter().zip(&v.values) {
        w[i] += scale * x;
    }
}

/// ‖v‖² of a vector with unique indices.
pub fn norm_sq(v: &SparseVec) -> f64 {
    v.values.iter().map(|x| x * x).sum()
}

/// ‖w‖² of a dense vector.
pub fn dense_norm_sq(w: &[f64]) -> f64 {
    w.iter().map(|x| x * x).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulates_with_cancellation() {
        let mut a = SparseVec::new();
        a.push(3, 1.0);
        a.push(5, 2.0);
        let mut b = SparseVec::new();
        b.push(5, 2.0);
        b.push(1, 4.0);
        let v = with_scratch(8, |s| {
            s.add_sparse(&a, 1.0);
            s.add_sparse(&b, -1.0);
            s.take()
        });
        assert_eq!(v.indices, vec![3, 1]);
        assert_eq!(v.values, vec![1.0, -4.0]);
        // the buffer is clean afterwards, also when grown by a later call
        let again = with_scratch(16, |s| {
            s.add(12, 1.0);
            s.take()
        });
        assert_eq!(again.indices, vec![12]);
        let mut s = Scratch::new(8);
        s.load(&a);
        assert_eq!(s.dot(&b), 4.0);
        assert_eq!(norm_sq(&v), 17.0);
    }

    #[test]
    fn recycled_buffers_give_the_same_vectors() {
        let mut a = SparseVec::new();
        a.push(2, 1.5);
        a.push(7, -2.0);
        a.push(2, -1.5);
        let fresh = with_scratch(8, |s| {
            s.add_sparse(&a, 1.0);
            s.take()
        });
        // a spent vector with stale contents and a larger capacity must not leak into the next
        let mut spent = SparseVec::new();
        for k in 0..100 {
            spent.push(k, 9.0);
        }
        recycle(spent);
        recycle(SparseVec::new()); // no buffer: ignored
        let again = with_scratch(8, |s| {
            s.add_sparse(&a, 1.0);
            s.take()
        });
        assert_eq!(fresh, again);
        assert_eq!(again.indices, vec![7]);
        assert_eq!(again.values, vec![-2.0]);
    }

    #[test]
    fn nested_use_gets_a_fresh_buffer() {
        let v = with_scratch(4, |s| {
            s.add(0, 1.0);
            let inner = with_scratch(4, |t| {
                t.add(0, 5.0);
                t.take()
            });
            assert_eq!(inner.values, vec![5.0]);
            s.take()
        });
        assert_eq!(v.values, vec![1.0]);
    }
}
