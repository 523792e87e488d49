//! `WarmCache`: the warm starts of the score-level searches kept across batches, keyed by an
//! example id the caller passes (`bicrit.scores.loss(..., cache=, ids=)`, `bicrit.torch` losses'
//! `ids=`). A training loop revisits its examples every epoch; the labels an example's last
//! search found (its hull chain) are re-evaluated under the new scores before the search asks the
//! oracle (thesis §`sec:convex_hull_search`, label cache), which saves oracle calls while the
//! scores move little. The cache is only a hint: values are exact with or without it, and labels
//! that do not fit the example (an id reused for another sentence) are ignored.
//!
//! Memory is bounded by `max_bytes` (the labels' sizes plus a fixed overhead per entry and per
//! label); past it the least recently used entries are dropped.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use bicrit_core::Error;
use bicrit_searches::WarmStart;
use pyo3::prelude::*;

use crate::errors::to_py;

/// Bytes counted per entry and per label on top of the labels' own data.
const ENTRY_OVERHEAD: usize = 96;
const LABEL_OVERHEAD: usize = 32;

struct Entry {
    stamp: u64,
    bytes: usize,
    warm: Box<dyn Any + Send + Sync>,
}

#[derive(Default)]
struct Inner {
    kind: Option<String>,
    map: HashMap<i64, Entry>,
    bytes: usize,
    clock: u64,
    hits: u64,
    misses: u64,
}

/// Warm starts of the score-level searches by example id, across batches (see the module).
#[pyclass(name = "WarmCache", module = "bicrit._native", frozen)]
pub struct PyWarmCache {
    max_bytes: usize,
    inner: Mutex<Inner>,
}

impl PyWarmCache {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The warm starts of `ids` (None where unknown), for a batch of kind `kind`.
    pub(crate) fn get<L: Clone + 'static>(
        &self,
        kind: &str,
        ids: &[i64],
    ) -> Result<Vec<Option<WarmStart<L>>>, Error> {
        let mut g = self.lock();
        if let Some(k) = &g.kind {
            if k != kind {
                return Err(Error::input(format!(
                    "this WarmCache holds warm starts of kind '{k}', not '{kind}': use one cache per loss"
                )));
            }
        }
        g.clock += 1;
        let now = g.clock;
        let mut out = Vec::with_capacity(ids.len());
        let (mut hits, mut misses) = (0, 0);
        for id in ids {
            let found = g.map.get_mut(id).and_then(|e| {
                e.stamp = now;
                e.warm.downcast_ref::<WarmStart<L>>().cloned()
            });
            if found.is_some() {
                hits += 1;
            } else {
                misses += 1;
            }
            out.push(found);
        }
        g.hits += hits;
        g.misses += misses;
        Ok(out)
    }

    /// Stores the warm starts of `ids` (None leaves an entry as it is), then drops the least
    /// recently used entries beyond the budget.
    pub(crate) fn put<L: Send + Sync + 'static>(
        &self,
        kind: &str,
        ids: &[i64],
        warm: Vec<Option<WarmStart<L>>>,
        label_bytes: impl Fn(&L) -> usize,
    ) {
        let mut g = self.lock();
        g.kind.get_or_insert_with(|| kind.to_string());
        g.clock += 1;
        let now = g.clock;
        for (&id, w) in ids.iter().zip(warm) {
            let Some(w) = w else { continue };
            let bytes =
                ENTRY_OVERHEAD + w.labels.iter().map(|y| LABEL_OVERHEAD + label_bytes(y)).sum::<usize>();
            g.bytes += bytes;
            if let Some(old) = g.map.insert(id, Entry { stamp: now, bytes, warm: Box::new(w) }) {
                g.bytes -= old.bytes;
            }
        }
        if g.bytes > self.max_bytes {
            // drop the oldest entries down to 3/4 of the budget (amortised: not at every batch)
            let mut order: Vec<(u64, i64)> = g.map.iter().map(|(&id, e)| (e.stamp, id)).collect();
            order.sort_unstable();
            let target = self.max_bytes / 4 * 3;
            for (_, id) in order {
                if g.bytes <= target {
                    break;
                }
                if let Some(e) = g.map.remove(&id) {
                    g.bytes -= e.bytes;
                }
            }
        }
    }
}

#[pymethods]
impl PyWarmCache {
    /// A cache of at most `max_bytes` bytes of labels (default 64 MiB).
    #[new]
    #[pyo3(signature = (max_bytes = 67108864))]
    fn new(py: Python<'_>, max_bytes: i64) -> PyResult<Self> {
        if max_bytes < 1 {
            return Err(to_py(py, Error::param(format!("max_bytes must be at least 1, got {max_bytes}"))));
        }
        Ok(PyWarmCache { max_bytes: max_bytes as usize, inner: Mutex::new(Inner::default()) })
    }

    /// Number of examples held.
    fn __len__(&self) -> usize {
        self.lock().map.len()
    }

    /// Bytes held (labels plus the per-entry and per-label overhead counted against the budget).
    #[getter]
    fn nbytes(&self) -> usize {
        self.lock().bytes
    }

    /// The budget in bytes.
    #[getter]
    fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// The kind of structure whose warm starts the cache holds (None while empty of any).
    #[getter]
    fn kind(&self) -> Option<String> {
        self.lock().kind.clone()
    }

    /// Look-ups that found an entry.
    #[getter]
    fn hits(&self) -> u64 {
        self.lock().hits
    }

    /// Look-ups that found none.
    #[getter]
    fn misses(&self) -> u64 {
        self.lock().misses
    }

    /// Drops every entry (and the kind).
    fn clear(&self) {
        *self.lock() = Inner::default();
    }

    fn __repr__(&self) -> String {
        let g = self.lock();
        format!("WarmCache(examples={}, nbytes={}, max_bytes={})", g.map.len(), g.bytes, self.max_bytes)
    }
}
