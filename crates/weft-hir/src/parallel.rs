//! Work on many files on several threads. Each thread works on a clone of the
//! database (a salsa handle onto the same storage), so results computed by one are
//! memoized for all; a query two threads need at once is computed once while the
//! other waits.

use crate::{RootDatabase, SourceFile};

/// Runs `work` on every file, spread over the machine's cores, on threads with large
/// stacks (deeply nested programs). `work` computes queries, whose results are then
/// memoized in `db`, so reading them afterwards is cheap (`weft_ide::check_in_parallel`
/// computes every diagnostic of `weft check` so).
pub fn for_each_file_in_parallel(
    db: &RootDatabase,
    files: &[SourceFile],
    work: impl Fn(&RootDatabase, SourceFile) + Sync,
) {
    let n_threads =
        std::thread::available_parallelism().map_or(1, |n| n.get()).min(files.len().max(1));
    if n_threads <= 1 {
        for &file in files {
            work(db, file);
        }
        return;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..n_threads {
            let db = db.clone();
            let (next, work) = (&next, &work);
            let spawned =
                weft_syntax::spawn_scoped_with_large_stack(scope, "weft-check", move || {
                    // Files are handed out one at a time, so a big file does not leave
                    // the other threads idle.
                    while let Some(&file) =
                        files.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        work(&db, file);
                    }
                });
            if spawned.is_err() {
                // No thread could be made: the caller's reads compute what is missing.
                break;
            }
        }
    });
}
