//! Where a keystroke's time goes in one large file, in process (no LSP, no debounce):
//! `cargo run --release -p weft-ide --example edit_latency -- FILE [EDITS]`.
//!
//! Opens FILE, then edits the occurrence of `2f32` nearest the middle line back and
//! forth (`2f32` / `3f32`, the edit of `bench/lsp`'s measurement) and times, per edit,
//! applying it, the diagnostics the language server publishes first (the front end's),
//! then the memory layer's, then the performance diagnostics, then a hover in the
//! edited def; then hovers at 200 positions spread over the file. Prints medians and the peak resident
//! memory. The figures to report are the language server's, measured over stdio
//! (docs/lsp.md, "Benchmark"); this splits them.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a measurement run from the command line prints its figures"
)]

use std::time::{Duration, Instant};

use weft_ide::{AnalysisHost, Change, CostConfig, FilePosition, TextSize};

// The allocator of `weft lsp`: glibc's changes the figures.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--front-end`: only what the first publication after an edit needs (for profiling).
    let front_end_only = args.iter().any(|a| a == "--front-end");
    let mut args = args.into_iter().filter(|a| !a.starts_with("--"));
    let Some(path) = args.next() else {
        eprintln!("usage: edit_latency FILE [EDITS] [--front-end]");
        std::process::exit(2);
    };
    let edits: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(20);
    let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let key = "main.weft";
    let mut host = AnalysisHost::new();
    let mut change = Change::default();
    change.set_file(key, text.as_str());
    // Imports resolve next to the file, as in a workspace.
    if let Some(dir) = std::path::Path::new(&path).parent() {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = entry.path();
            if p != std::path::Path::new(&path) && p.extension().is_some_and(|e| e == "weft") {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                if let (Some(name), Ok(t)) = (name, std::fs::read_to_string(&p)) {
                    change.set_file(name, t.as_str());
                }
            }
        }
    }
    let t = Instant::now();
    host.apply_change(change);
    let n = host.analysis().front_end_diagnostics(key).map(|d| d.len()).unwrap_or(0);
    println!("open: {n} front-end diagnostics in {:?}", t.elapsed());
    let config = CostConfig::default();
    if !front_end_only {
        let t = Instant::now();
        let _ = host.analysis().layout_diagnostics(key);
        println!("open: memory-layer diagnostics in {:?}", t.elapsed());
        let t = Instant::now();
        let _ = host.analysis().perf_diagnostics(key, &config);
        println!("open: performance diagnostics in {:?}", t.elapsed());
    }

    let middle = text.len() / 2;
    let at = text[middle..].find("2f32").map(|i| i + middle).expect("a `2f32` after the middle");
    let hover_at = text[..at].rfind("let ys").unwrap_or(at) + 4;
    let (mut apply, mut diags, mut layout) = (vec![], vec![], vec![]);
    let (mut perf, mut hover) = (vec![], vec![]);
    for i in 0..edits {
        let literal = if i % 2 == 0 { "3f32" } else { "2f32" };
        text.replace_range(at..at + 4, literal);
        let mut change = Change::default();
        change.set_file(key, text.as_str());
        let t = Instant::now();
        host.apply_change(change);
        apply.push(t.elapsed());
        let analysis = host.analysis();
        let t = Instant::now();
        let _ = analysis.front_end_diagnostics(key);
        diags.push(t.elapsed());
        if front_end_only {
            continue;
        }
        let t = Instant::now();
        let _ = analysis.layout_diagnostics(key);
        layout.push(t.elapsed());
        let t = Instant::now();
        let _ = analysis.perf_diagnostics(key, &config);
        perf.push(t.elapsed());
        let position = FilePosition {
            path: key.to_owned(),
            offset: TextSize::from(u32::try_from(hover_at).unwrap_or(0)),
        };
        let t = Instant::now();
        let _ = analysis.hover(&position);
        hover.push(t.elapsed());
    }
    println!("apply change: median {:?}", median(&mut apply));
    println!("front-end diagnostics: median {:?}", median(&mut diags));
    if front_end_only {
        print_peak_memory();
        return;
    }
    println!("memory-layer diagnostics: median {:?}", median(&mut layout));
    println!("performance diagnostics: median {:?}", median(&mut perf));
    println!("hover in the edited def: median {:?}", median(&mut hover));
    // Hovers where `lsp_latency.py` asks for them: the middle of 200 identifier
    // occurrences spread evenly over the file.
    let analysis = host.analysis();
    let mut hovers = Vec::new();
    for offset in spread_identifiers(&text, 200) {
        let position = FilePosition {
            path: key.to_owned(),
            offset: TextSize::from(u32::try_from(offset).unwrap_or(0)),
        };
        let t = Instant::now();
        let _ = analysis.hover(&position);
        hovers.push(t.elapsed());
    }
    hovers.sort();
    let at_percent = |p: usize| hovers.get((hovers.len() * p / 100).min(hovers.len() - 1));
    println!(
        "200 hovers over the file: median {:?}, p95 {:?}, p99 {:?}, max {:?}",
        at_percent(50).copied().unwrap_or_default(),
        at_percent(95).copied().unwrap_or_default(),
        at_percent(99).copied().unwrap_or_default(),
        hovers.last().copied().unwrap_or_default()
    );
    print_peak_memory();
}

fn print_peak_memory() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(line) = status.lines().find(|l| l.starts_with("VmHWM")) {
        println!("{line}");
    }
}

fn median(xs: &mut [Duration]) -> Duration {
    xs.sort();
    xs.get(xs.len() / 2).copied().unwrap_or_default()
}

/// The byte offsets of the middles of `n` identifier occurrences spread evenly over
/// `text` (an ASCII file), as `lsp_latency.py` picks its positions.
fn spread_identifiers(text: &str, n: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut occurrences = Vec::new();
    let mut idx = 0;
    while idx < bytes.len() {
        let starts_word = bytes[idx].is_ascii_alphabetic() || bytes[idx] == b'_';
        if !starts_word {
            idx += 1;
            continue;
        }
        let start = idx;
        while idx < bytes.len() && (bytes[idx].is_ascii_alphanumeric() || bytes[idx] == b'_') {
            idx += 1;
        }
        occurrences.push(start + (idx - start) / 2);
    }
    let n = n.min(occurrences.len());
    (0..n).map(|k| occurrences[(2 * k + 1) * occurrences.len() / (2 * n)]).collect()
}
