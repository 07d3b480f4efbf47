//! The threads that render reader pages: a few, for the life of the process.
//!
//! Rendering is CPU work with a few megabytes of short-lived memory (the parsed document, the
//! sidebar, the template's values, the HTML). On tokio's blocking pool it ran on whichever of
//! its dozen or more threads was free, and the allocator (mimalloc, a heap per thread) kept
//! pages of every size class in each of them: the bench's reader phase grew the server by about
//! 15 MB before its cache held 2 MB of pages. On one thread per processor the same pages are
//! used again by the next render, and no more renders run at once than there are processors to
//! run them.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

type Job = Box<dyn FnOnce() + Send>;

pub struct RenderPool {
    jobs: Sender<Job>,
}

impl RenderPool {
    /// A pool of one thread per processor.
    pub fn new() -> RenderPool {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let (jobs, waiting) = channel::<Job>();
        let waiting = Arc::new(Mutex::new(waiting));
        for i in 0..threads {
            let waiting = waiting.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("quire-render-{i}"))
                .spawn(move || work(&waiting));
            if let Err(e) = spawned {
                tracing::error!(error = %e, "cannot start a render thread");
            }
        }
        RenderPool { jobs }
    }

    /// `f`'s result, computed on one of the pool's threads; an error when it panicked or no
    /// thread could be started.
    pub async fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
        let (done, result) = tokio::sync::oneshot::channel();
        self.jobs
            .send(Box::new(move || {
                let _ = done.send(f());
            }))
            .map_err(|_| "no render thread".to_string())?;
        result.await.map_err(|_| "the render panicked".to_string())
    }
}

/// Runs jobs until the pool is dropped; a job that panics is dropped with its answer channel
/// (its caller gets an error) and the thread goes on.
fn work(waiting: &Mutex<Receiver<Job>>) {
    loop {
        let job = {
            let waiting = waiting.lock().unwrap_or_else(|p| p.into_inner());
            waiting.recv()
        };
        match job {
            Ok(job) => {
                let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
            }
            Err(_) => return,
        }
    }
}
