//! Checking a file of many ordinary defs costs work linear in its size: a file with 4N
//! declarations executes about 4 times the salsa queries, makes about 4 times the
//! allocations and bytes, and peaks at about 4 times the memory of one with N. Counted,
//! never timed, so the test is the same on every machine. A quadratic pass that
//! allocates, or a query run per pair of defs, multiplies a ratio by about 4.
//!
//! One test in this file: the counting allocator is global, and a second test running
//! beside it would add its allocations to the counts.
#![expect(
    unsafe_code,
    reason = "a global allocator is unsafe to implement; this one forwards to System"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use weft_hir::{RootDatabase, file_diagnostics};

/// The system allocator, counting what goes through it.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);

fn count_allocation(size: usize) {
    let live = LIVE.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(live, Relaxed);
    ALLOCATIONS.fetch_add(1, Relaxed);
    BYTES.fetch_add(size, Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_allocation(layout.size());
        // SAFETY: the caller's contract for `alloc` is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: the caller's contract for `dealloc` is passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_sub(layout.size(), Relaxed);
        count_allocation(new_size);
        // SAFETY: the caller's contract for `realloc` is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What checking one generated file cost.
#[derive(Debug)]
struct Work {
    queries: usize,
    allocations: usize,
    bytes: usize,
    /// The most memory live at once above what was live before the file was loaded.
    peak: usize,
}

/// A file of `n` small declarations: defs that call the one before, a type alias and an
/// entry now and then. Small, so that the per-declaration work is little and anything
/// done per pair of declarations stands out.
fn many_defs(n: usize) -> String {
    let mut text = String::from("def f0 (x: i32) : i32 = x\n");
    let mut last_def = 0;
    for i in 1..n {
        let line = match i % 10 {
            3 => format!("type t{i} = [3]f32\n"),
            7 => format!(
                "-- ==\n-- input {{ [1, 2] }}\nentry e{i} (xs: [n]i32) : i32 = reduce (+) 0 (map f{last_def} xs)\n"
            ),
            _ => {
                let line =
                    format!("def f{i} (x: i32) : i32 = if x > {i} then f{last_def} x else x * 2\n");
                last_def = i;
                line
            }
        };
        text.push_str(&line);
    }
    text
}

fn check_file_of(n: usize) -> Work {
    let text = many_defs(n);
    // Queries, counted in a database of their own: the log allocates.
    let mut db = RootDatabase::default();
    db.enable_log();
    let source = db.set_file("many.weft", &text);
    assert_eq!(file_diagnostics(&db, source).len(), 0, "the generated file checks");
    let queries = db.take_log().len();
    drop(db);

    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let (allocations, bytes) = (ALLOCATIONS.load(Relaxed), BYTES.load(Relaxed));
    let mut db = RootDatabase::default();
    let source = db.set_file("many.weft", &text);
    file_diagnostics(&db, source);
    let work = Work {
        queries,
        allocations: ALLOCATIONS.load(Relaxed) - allocations,
        bytes: BYTES.load(Relaxed) - bytes,
        peak: PEAK.load(Relaxed) - before,
    };
    drop(db);
    work
}

#[test]
fn checking_grows_linearly_with_the_number_of_defs() {
    let (small, big) = weft_syntax::on_large_stack(|| (check_file_of(2_000), check_file_of(8_000)));
    // 4 times the lines; 5 leaves room for what does not scale exactly (hash tables
    // and vectors grow by doubling) and is still far below 16, the quadratic ratio.
    let ratio = |f: fn(&Work) -> usize| f(&big) as f64 / f(&small) as f64;
    for (what, r) in [
        ("queries executed", ratio(|w| w.queries)),
        ("allocations", ratio(|w| w.allocations)),
        ("bytes allocated", ratio(|w| w.bytes)),
        ("peak memory", ratio(|w| w.peak)),
    ] {
        assert!(
            (3.0..5.0).contains(&r),
            "{what}: 4 times the defs cost {r:.2} times as much\n{small:?}\n{big:?}"
        );
    }
}
