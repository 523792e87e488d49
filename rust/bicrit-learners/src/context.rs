//! What an epoch runs with ([`Context`]): the thread pool of `n_jobs` and the Ctrl-C check.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

    /// `f(i)` for every index of `idx`, in parallel on the pool when there is one
    /// ([`Context::map_owned`]); results in the order of `idx`, the first error in that order if
    /// any.
    pub fn map<T: Send>(
        &self,
        idx: &[usize],
        f: impl Fn(usize) -> Result<T> + Sync + Send,
    ) -> Result<Vec<T>> {
        self.map_owned(idx.to_vec(), f).into_iter().collect()
    }

    /// `f(item)` for every item of `items`, consumed (so what `f` drops is freed on the pool's
    /// threads), in parallel on the pool when there is one; results in the order of `items`.
    /// Every item is taken on its own from a shared counter, so an idle thread takes the next
    /// instance rather than waiting for a chunk: instances differ in cost (a sentence of 80 tokens
    /// next to one of 5), and a mini-batch has only a few of them. Which thread ran an item never
    /// changes its result.
    pub fn map_owned<T: Send, R: Send>(&self, items: Vec<T>, f: impl Fn(T) -> R + Sync + Send) -> Vec<R> {
        match self.pool {
            Some(pool) if items.len() > 1 && pool.current_num_threads() > 1 => {
                pool.install(|| shared_pass(pool.current_num_threads(), items, f))
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

/// Counts an item as finished when dropped, also when `f` panicked on it (the pass then ends,
/// and the scope re-raises the panic).
struct Finished<'a>(&'a AtomicUsize);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// One parallel pass run from a thread of the pool: that thread and up to `threads` − 1 helper
/// jobs (stolen by the pool's other threads) take the next item from a shared counter. When none
/// is left, the calling thread yields until the items the helpers took are finished instead of
/// going to sleep on the scope and being woken for the next step; a helper job no thread has
/// stolen is run by the calling thread at the scope's end (it finds no item left), so a pass
/// never waits for a thread that has no core.
fn shared_pass<T: Send, R: Send>(threads: usize, items: Vec<T>, f: impl Fn(T) -> R + Sync + Send) -> Vec<R> {
    let n = items.len();
    let slots: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let out: Vec<Mutex<Option<R>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let (next, finished) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let work = || loop {
        let k = next.fetch_add(1, Ordering::AcqRel);
        if k >= n {
            break;
        }
        let _done = Finished(&finished);
        let item = slots[k].lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(item) = item {
            let r = f(item);
            *out[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        }
    };
    rayon::scope(|s| {
        for _ in 1..threads.min(n) {
            s.spawn(|_| work());
        }
        work();
        while finished.load(Ordering::Acquire) < next.load(Ordering::Acquire).min(n) {
            std::thread::yield_now();
        }
    });
    out.into_iter()
        .map(|m| {
            m.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every item was taken by one thread and its result stored")
        })
        .collect()
}
