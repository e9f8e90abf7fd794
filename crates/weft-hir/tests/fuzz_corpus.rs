//! The stable-Rust stand-in for `fuzz/fuzz_targets/check.rs`: the repository's `.weft`
//! files, mutated at random (bytes flipped, inserted, deleted, duplicated, spliced
//! from other files) and read as lossy UTF-8, through `file_diagnostics` in one
//! long-lived database, so incremental re-checks are exercised too. Deterministic
//! (a fixed seed; `WEFT_FUZZ_SEED` and `WEFT_FUZZ_ITERS` override) and bounded.

#![expect(clippy::unwrap_used, reason = "a broken checkout should fail the test loudly")]

use std::path::{Path, PathBuf};

use weft_hir::{RootDatabase, file_diagnostics};

/// xorshift64*: enough randomness for mutations, with no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

const INTERESTING: &[&[u8]] = &[
    b"(",
    b")",
    b"[",
    b"]",
    b"\\x -> ",
    b"let x = 1 in ",
    b"\"",
    b"--",
    b"\0",
    b"\xff",
    b"\xe2\x82",
    b"@group",
    b".0",
    b":>",
    b"**",
    b"99999999999999999999999",
    b"1e999",
    b"0x",
    b"'a",
    b"\n",
    b"def ",
    b"entry ",
    b"import \"",
    b"loop ",
    b"-- ==\n-- input { ",
];

fn corpus() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["examples", "tests"] {
        let mut stack: Vec<PathBuf> = vec![root.join(dir)];
        while let Some(path) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&path) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "weft") {
                    let relative = path.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
                    files.push((relative.replace('\\', "/"), std::fs::read(&path).unwrap()));
                }
            }
        }
    }
    files.sort();
    files
}

fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>, corpus: &[(String, Vec<u8>)]) {
    for _ in 0..=rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        match rng.below(6) {
            0 if at < bytes.len() => bytes[at] ^= 1 << rng.below(8),
            1 => bytes.insert(at, rng.next() as u8),
            2 => {
                let end = (at + rng.below(64)).min(bytes.len());
                bytes.drain(at..end);
            }
            3 => {
                let end = (at + rng.below(64)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                let to = rng.below(bytes.len() + 1);
                bytes.splice(to..to, copy);
            }
            4 => {
                let token = INTERESTING[rng.below(INTERESTING.len())];
                bytes.splice(at..at, token.iter().copied());
            }
            _ => {
                let other = &corpus[rng.below(corpus.len())].1;
                let start = rng.below(other.len());
                let end = (start + rng.below(200)).min(other.len());
                bytes.splice(at..at, other[start..end].iter().copied());
            }
        }
    }
}

#[test]
fn mutated_corpus_gives_diagnostics_not_panics() {
    let corpus = corpus();
    assert!(corpus.len() >= 30, "found {} .weft files", corpus.len());
    let seed = std::env::var("WEFT_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed);
    let iters: usize =
        std::env::var("WEFT_FUZZ_ITERS").ok().and_then(|s| s.parse().ok()).unwrap_or(1500);
    weft_syntax::on_large_stack(move || {
        let mut rng = Rng(seed | 1);
        let mut db = RootDatabase::default();
        for (path, bytes) in &corpus {
            db.set_file(path, &String::from_utf8_lossy(bytes));
        }
        for iter in 0..iters {
            let (path, original) = &corpus[rng.below(corpus.len())];
            let mut bytes = original.clone();
            mutate(&mut rng, &mut bytes, &corpus);
            let text = String::from_utf8_lossy(&bytes);
            let file = db.set_file(path, &text);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                file_diagnostics(&db, file).len()
            }));
            assert!(result.is_ok(), "iteration {iter} (seed {seed}) panicked on {path}:\n{text}");
            db.set_file(path, &String::from_utf8_lossy(original));
        }
    });
}
