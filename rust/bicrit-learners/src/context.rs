//! What an epoch runs with ([`Context`]): the thread pool of `n_jobs` and the Ctrl-C check.

use std::cell::Cell;
use std::time::{Duration, Instant};

use bicrit_core::{Error, Result};
use rayon::prelude::*;

/// Callback the driver calls between blocks (at most every 50 ms); an error aborts the epoch. The
/// bindings check for Ctrl-C there.
pub type Interrupt<'a> = &'a (dyn Fn() -> Result<()> + Sync);

/// What an epoch runs with: the thread pool of `n_jobs` and the interrupt check.
pub struct Context<'a> {
    pool: Option<&'a rayon::ThreadPool>,
    interrupt: Option<Interrupt<'a>>,
    last_check: Cell<Instant>,
    interval: Duration,
}

impl<'a> Context<'a> {
    /// A context; `pool` None runs everything on the calling thread.
    pub fn new(pool: Option<&'a rayon::ThreadPool>, interrupt: Option<Interrupt<'a>>) -> Self {
        Self::with_interval(pool, interrupt, Duration::from_millis(50))
    }

    /// A context whose interrupt check runs at most every `interval`.
    pub fn with_interval(
        pool: Option<&'a rayon::ThreadPool>,
        interrupt: Option<Interrupt<'a>>,
        interval: Duration,
    ) -> Self {
        Context { pool, interrupt, last_check: Cell::new(Instant::now()), interval }
    }

    /// A sequential context without interrupts (tests, Rust callers).
    pub fn sequential() -> Context<'static> {
        Context::with_interval(None, None, Duration::from_millis(50))
    }

    /// Calls the interrupt check if the interval has passed since the last one.
    pub fn check(&self) -> Result<()> {
        if let Some(f) = self.interrupt {
            if self.last_check.get().elapsed() >= self.interval {
                self.last_check.set(Instant::now());
                f()?;
            }
        }
        Ok(())
    }

    /// `f(i)` for every index of `idx`, in parallel on the pool when there is one; results in the
    /// order of `idx`. Every item is a task of its own (`with_max_len(1)`), so an idle thread
    /// steals the next instance rather than waiting for a chunk: instances differ in cost (a
    /// sentence of 80 tokens next to one of 5), and a mini-batch has only a few of them.
    pub fn map<T: Send>(
        &self,
        idx: &[usize],
        f: impl Fn(usize) -> Result<T> + Sync + Send,
    ) -> Result<Vec<T>> {
        match self.pool {
            Some(pool) if idx.len() > 1 && pool.current_num_threads() > 1 => {
                pool.install(|| idx.par_iter().with_max_len(1).map(|&i| f(i)).collect())
            }
            _ => idx.iter().map(|&i| f(i)).collect(),
        }
    }

    /// `f(item)` for every item of `items`, consumed (so what `f` drops is freed on the pool's
    /// threads), in parallel on the pool when there is one; results in the order of `items`.
    pub fn map_owned<T: Send, R: Send>(&self, items: Vec<T>, f: impl Fn(T) -> R + Sync + Send) -> Vec<R> {
        match self.pool {
            Some(pool) if items.len() > 1 && pool.current_num_threads() > 1 => {
                pool.install(|| items.into_par_iter().with_max_len(1).map(f).collect())
            }
            _ => items.into_iter().map(f).collect(),
        }
    }

    /// Builds a pool of `n_jobs` threads (−1: all cores, 1: none).
    pub fn pool(n_jobs: i64) -> Result<Option<rayon::ThreadPool>> {
        let n = match n_jobs {
            1 => return Ok(None),
            -1 => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            n if n > 1 => n as usize,
            n => {
                return Err(Error::param(format!(
                    "n_jobs = {n} must be a positive number of threads or -1 (all cores)"
                )))
            }
        };
        if n == 1 {
            return Ok(None);
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("bicrit-learner-{i}"))
            .build()
            .map(Some)
            .map_err(|e| Error::solver(format!("cannot start {n} threads: {e}")))
    }
}
