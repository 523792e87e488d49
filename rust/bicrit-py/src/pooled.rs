//! Native work on the learners' pool (docs/architecture.md, *Learners*, "Both cores"): the
//! epoch runs on one of the pool's threads, so every parallel pass of it (`Context::map`) is
//! shared between that thread and the pool's others by work stealing, and no thread is put to
//! sleep and woken per mini-batch. The calling thread waits with the GIL released and checks for
//! Ctrl-C every 50 ms (Python runs signal handlers on its main thread only); a raised signal
//! stops the epoch at its next block, which rolls it back.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use bicrit_core::{Error, Result};
use bicrit_learners::Context;
use pyo3::prelude::*;

use crate::errors;

/// How often the waiting thread checks for signals.
const TICK: Duration = Duration::from_millis(50);

/// Runs `f` with the GIL released and a context that stops on Ctrl-C, on a thread of `pool` when
/// there is one (else on the calling thread); errors and panics become Python exceptions as in
/// [`errors::native`].
pub fn run<T: Send>(
    py: Python<'_>,
    pool: Option<&rayon::ThreadPool>,
    f: impl FnOnce(&Context<'_>) -> Result<T> + Send,
) -> PyResult<T> {
    let Some(pool) = pool else {
        return errors::native(py, move || {
            let interrupt = || Python::attach(|py| py.check_signals()).map_err(errors::stash);
            f(&Context::new(None, Some(&interrupt)))
        });
    };
    let (out, signal) = py.detach(move || on_pool(pool, f));
    match (out, signal) {
        (Ok(Err(e)), Some(signal)) => {
            drop(errors::to_py(py, e)); // the epoch's error (or its stop): the signal wins
            Err(signal)
        }
        // a signal raised as the epoch ended: the epoch is kept, the signal raised as if it
        // had come just after it
        (Ok(Ok(_)), Some(signal)) => Err(signal),
        (Ok(out), None) => out.map_err(|e| errors::to_py(py, e)),
        (Err(payload), _) => Err(errors::panic_to_py(py, payload)),
    }
}

/// `f` on a thread of `pool`, the calling thread checking for signals until it has finished: its
/// result (or panic) and the signal's exception if a handler raised one.
fn on_pool<T: Send>(
    pool: &rayon::ThreadPool,
    f: impl FnOnce(&Context<'_>) -> Result<T> + Send,
) -> (std::thread::Result<Result<T>>, Option<PyErr>) {
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel();
    let mut signal = None;
    let out = pool.in_place_scope(|s| {
        let stop = &stop;
        s.spawn(move |_| {
            let interrupt = || {
                if stop.load(Ordering::Relaxed) {
                    Err(Error::solver("interrupted")) // replaced by the signal's exception
                } else {
                    Ok(())
                }
            };
            // the check is one atomic load: every block
            let ctx = Context::with_interval(Some(pool), Some(&interrupt), Duration::ZERO);
            let _ = tx.send(catch_unwind(AssertUnwindSafe(|| f(&ctx))));
        });
        loop {
            match rx.recv_timeout(TICK) {
                Ok(out) => return out,
                Err(RecvTimeoutError::Timeout) if signal.is_none() => {
                    if let Err(e) = Python::attach(|py| py.check_signals()) {
                        signal = Some(e);
                        stop.store(true, Ordering::Relaxed);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    let lost: Box<dyn std::any::Any + Send> = Box::new("the pool's thread ended without a result");
                    return Err(lost);
                }
            }
        }
    });
    (out, signal)
}
