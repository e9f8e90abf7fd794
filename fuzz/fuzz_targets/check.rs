//! Fuzzes the whole checker: bytes, read as lossy UTF-8 (as the loader does), through
//! `file_diagnostics` beside a small library file. Any panic or stack overflow is a
//! bug. Run with `cargo +nightly fuzz run check` from the repository root; the
//! stable-Rust equivalent is `crates/weft-hir/tests/fuzz_corpus.rs`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use weft_hir::{RootDatabase, file_diagnostics};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    weft_syntax::on_large_stack(move || {
        let mut db = RootDatabase::default();
        db.set_file("lib.weft", "def helper (x: i32) : i32 = x + 1\n");
        let file = db.set_file("main.weft", &text);
        let _ = file_diagnostics(&db, file);
    });
});
