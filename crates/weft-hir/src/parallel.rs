//! Checking many files on several threads. Each thread works on a clone of the
//! database (a salsa handle onto the same storage), so results computed by one are
//! memoized for all; a query two threads need at once is computed once while the
//! other waits.

use crate::{RootDatabase, SourceFile, file_diagnostics};

/// Computes `file_diagnostics` for every file, spread over the machine's cores, on
/// threads with large stacks (deeply nested programs). Afterwards the results are
/// memoized in `db`, so reading them is cheap.
pub fn check_in_parallel(db: &RootDatabase, files: &[SourceFile]) {
    let n_threads =
        std::thread::available_parallelism().map_or(1, |n| n.get()).min(files.len().max(1));
    if n_threads <= 1 {
        for &file in files {
            file_diagnostics(db, file);
        }
        return;
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..n_threads {
            let db = db.clone();
            let next = &next;
            let spawned =
                weft_syntax::spawn_scoped_with_large_stack(scope, "weft-check", move || {
                    // Files are handed out one at a time, so a big file does not leave
                    // the other threads idle.
                    while let Some(&file) =
                        files.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        file_diagnostics(&db, file);
                    }
                });
            if spawned.is_err() {
                // No thread could be made: the caller's reads compute what is missing.
                break;
            }
        }
    });
}
