//! What an epoch runs with ([`Context`]): the thread pool of `n_jobs` and the Ctrl-C check.

use std::cell::Cell;
use std::time::{Duration, Instant};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use bicrit_core::{Error, Result};

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

    /// `f(i)` for every index of `idx`, on the calling thread and the pool's threads together
    /// ([`Context::map_owned`]); results in the order of `idx`, the first error (in that order)
    /// if any.
    pub fn map<T: Send>(
        &self,
        idx: &[usize],
        f: impl Fn(usize) -> Result<T> + Sync + Send,
    ) -> Result<Vec<T>> {
        self.map_owned(idx.to_vec(), f).into_iter().collect()
    }

    /// `f(item)` for every item of `items`, consumed (what `f` drops is freed where it ran);
    /// results in the order of `items`. With a pool, the calling thread and the pool's threads
    /// take the next item from a shared counter until none is left: the caller works instead of
    /// sleeping until the pool is done (and is the n_jobs-th thread, see [`Context::pool`]), and
    /// an idle thread takes the next instance, whatever the instances' costs (a sentence of 80
    /// tokens next to one of 5, in a mini-batch of a few). Which thread ran an item never changes
    /// its result.
    pub fn map_owned<T: Send, R: Send>(&self, items: Vec<T>, f: impl Fn(T) -> R + Sync + Send) -> Vec<R> {
        let pool = match self.pool {
            Some(pool) if items.len() > 1 => pool,
            _ => return items.into_iter().map(f).collect(),
        };
        let n = items.len();
        let slots: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
        let out: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        let work = || loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= n {
                break;
            }
            let item = slots[k].lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(item) = item {
                let r = f(item);
                *out[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            }
        };
        let helpers = pool.current_num_threads().min(n - 1);
        pool.in_place_scope(|s| {
            for _ in 0..helpers {
                s.spawn(|_| work());
            }
            work();
        });
        out.into_iter()
            .map(|m| {
                m.into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .expect("every item was taken by one thread and its result stored")
            })
            .collect()
    }

    /// The pool for `n_jobs` threads (−1: all cores, 1: none): n_jobs − 1 threads, the calling
    /// thread being the n_jobs-th ([`Context::map_owned`]).
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
            .num_threads(n - 1)
            .thread_name(|i| format!("bicrit-learner-{i}"))
            .build()
            .map(Some)
            .map_err(|e| Error::solver(format!("cannot start {n} threads: {e}")))
    }
}
