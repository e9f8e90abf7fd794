//! A fixed pool of analysis threads with large stacks (deeply nested programs
//! recurse deeply; `weft_syntax::LARGE_STACK_BYTES`).

use crossbeam_channel::{Sender, unbounded};

type Job = Box<dyn FnOnce() + Send>;

/// Runs jobs on `n` threads; jobs start in submission order.
#[derive(Clone)]
pub(crate) struct Pool {
    sender: Sender<Job>,
}

impl Pool {
    pub(crate) fn new(n_threads: usize) -> Pool {
        let (sender, receiver) = unbounded::<Job>();
        for idx in 0..n_threads.max(1) {
            let receiver = receiver.clone();
            weft_syntax::spawn_with_large_stack(&format!("weft-analysis-{idx}"), move || {
                for job in receiver {
                    job();
                }
            })
            .expect("invariant: the OS can start an analysis thread");
        }
        Pool { sender }
    }

    pub(crate) fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        // Fails only when every worker is gone, i.e. the process is ending.
        let _ = self.sender.send(Box::new(job));
    }
}
