//! A generator of realistic Weft workspaces for benchmarks and tests.
//!
//! [`generate`] writes `files` files of about `lines_per_file` lines each, spread over
//! four directories. Every file imports up to two earlier files (`../libG/mNN`) and
//! calls their defs, so name resolution, imports and inference across files are all
//! exercised. Defs are 5 to 15 lines of `map`, `reduce`, `scan`, `let`, `if`, `loop`,
//! indexing and tuples, with size-polymorphic signatures; every tenth declaration is an
//! `entry` with a test block. The generated code checks without diagnostics (asserted
//! by `tests/generated_workspace.rs`).
//!
//! Shared by `benches/check.rs`, the tests and `examples/gen_workspace.rs` through
//! `#[path]` modules, so it has no crate of its own.

use std::fmt::Write as _;

/// The literal that [`edit_literal`] changes: it appears once per file, inside the
/// body of that file's first def.
pub(crate) const MARKER: &str = "0.125";

/// One generated file: its workspace-relative path and its text.
#[derive(Debug, Clone)]
pub(crate) struct GeneratedFile {
    pub(crate) path: String,
    pub(crate) text: String,
}

/// The standard benchmark workspace: 40 files of about 500 lines (about 20,000 lines).
pub(crate) fn standard() -> Vec<GeneratedFile> {
    generate(40, 500)
}

/// Generates a workspace of `files` files of about `lines_per_file` lines each.
pub(crate) fn generate(files: usize, lines_per_file: usize) -> Vec<GeneratedFile> {
    let mut out = Vec::with_capacity(files);
    // Per file, the names of its defs of each kind, for callers in importing files.
    let mut names: Vec<[Vec<String>; KINDS]> = Vec::with_capacity(files);
    for f in 0..files {
        let mut imports = Vec::new();
        if f > 0 {
            imports.push(f - 1);
        }
        if f > 1 && f / 2 != f - 1 {
            imports.push(f / 2);
        }
        let mut text = String::new();
        let _ = writeln!(text, "-- Generated module {f} of a benchmark workspace.");
        for &i in &imports {
            let _ = writeln!(text, "import \"../{}\"", module_path(i));
        }
        let _ = writeln!(text, "\ntype real{f} = f32\n");
        let mut own: [Vec<String>; KINDS] = Default::default();
        let mut k = 0;
        while text.lines().count() < lines_per_file {
            let kind = k % KINDS;
            let name = format!("{}_{f}_{k}", KIND_NAMES[kind]);
            // Callees: from an imported file on odd rounds, else from this file.
            let pick = |want: usize| -> String {
                let imported = imports.first().map(|&i| &names[i][want]);
                match imported {
                    Some(list) if (k / KINDS) % 2 == 1 && !list.is_empty() => {
                        list[(k * 7 + f) % list.len()].clone()
                    }
                    _ => own[want].last().cloned().expect("kinds 0..4 come first in a file"),
                }
            };
            let c = literal(f, k);
            let body = match kind {
                0 => format!(
                    "-- | Scales and folds every element to a non-negative value.\n\
                     def {name} [n] (xs: [n]f32) (a: real{f}) : [n]f32 =\n  \
                     map (\\x ->\n         \
                     let y = a * x + {c}\n         \
                     in if y > 0 then y else 0 - y)\n      \
                     xs\n"
                ),
                1 => format!(
                    "-- | The sum of squares, shifted.\n\
                     def {name} (xs: [n]f32) : f32 =\n  \
                     let sq = map (\\x -> x * x) xs\n  \
                     let s = reduce (+) 0 sq\n  \
                     in s + {c}\n"
                ),
                2 => format!(
                    "-- | Differences of the prefix sums, offset.\n\
                     def {name} [n] (xs: [n]i64) : [n]i64 =\n  \
                     let ps = scan (+) 0 xs\n  \
                     in map (\\i -> if i == 0 then ps[i] else ps[i] - ps[i - 1] + {ci})\n         \
                     (iota n)\n",
                    ci = f + k
                ),
                3 => format!(
                    "-- | Horner's rule.\n\
                     def {name} [n] (cs: [n]f32) (x: f32) : f32 =\n  \
                     let acc =\n    \
                     loop acc = 0f32 for i < n do\n      \
                     acc * x + cs[i]\n  \
                     in acc * {c}\n"
                ),
                4 => format!(
                    "-- | Scaled row sums.\n\
                     def {name} [n][m] (a: [n][m]f32) : [n]f32 =\n  \
                     map (\\row ->\n         \
                     reduce (+) 0 (map (\\x -> x * {c}) row))\n      \
                     a\n"
                ),
                5 => format!(
                    "-- | Combines a matrix and a vector through other defs.\n\
                     def {name} [n][m] (a: [n][m]f32) (xs: [n]f32) : f32 =\n  \
                     let r = {rows} a\n  \
                     let s = {scale} r {c}\n  \
                     let t = map2 (+) s xs\n  \
                     in {sumsq} t + {horner} t 0.5\n",
                    rows = pick(4),
                    scale = pick(0),
                    sumsq = pick(1),
                    horner = pick(3)
                ),
                6 => format!(
                    "-- | Pairs, mapped over zipped arrays.\n\
                     def {name} [n] (xs: [n]f32) (ys: [n]f32) : [n](f32, f32) =\n  \
                     let zs = zip xs ys\n  \
                     in map (\\(p, q) ->\n           \
                     let s = p + q\n           \
                     let d = p * q - {c}\n           \
                     in (s, d))\n         \
                     zs\n"
                ),
                7 => format!(
                    "-- | Steps of the Collatz iteration, bounded.\n\
                     def {name} (x: i64) : i64 =\n  \
                     let (_, steps) =\n    \
                     loop (v, s) = (x, 0i64) while v > 1 && s < {bound} do\n      \
                     (if v % 2 == 0 then v / 2 else 3 * v + 1, s + 1)\n  \
                     in steps\n",
                    bound = 100 + k
                ),
                8 => format!(
                    "-- | A matrix transformed row by row and flattened.\n\
                     def {name} [n][m] (a: [n][m]f32) : [n*m]f32 =\n  \
                     let b = map (\\row ->\n                 \
                     let t = {scale} row {c}\n                 \
                     in map2 (\\x y -> x + y * 2) t row)\n              \
                     a\n  \
                     in flatten b\n",
                    scale = pick(0)
                ),
                _ => {
                    let sumsq = pick(1);
                    format!(
                        "-- | An entry point over a generated pipeline.\n\
                         -- ==\n\
                         -- random input {{ [1000]f32 [1000][4]f32 }}\n\
                         -- random input {{ [10]f32 [10][100]f32 in -1..1 }}\n\
                         entry {name} (xs: [n]f32) (a: [n][m]f32) : (f32, [n]f32, i64) =\n  \
                         let pairs = {pairs} xs xs\n  \
                         let (ps, qs) = unzip pairs\n  \
                         let total = {sumsq} ps + reduce (+) 0 qs\n  \
                         let steps = {collatz} (length xs)\n  \
                         in (total, {rows} a, steps)\n",
                        pairs = pick(6),
                        collatz = pick(7),
                        rows = pick(4),
                    )
                }
            };
            text.push_str(&body);
            text.push('\n');
            own[kind].push(name);
            k += 1;
        }
        out.push(GeneratedFile { path: format!("{}.weft", module_path(f)), text });
        names.push(own);
    }
    out
}

/// Changes the [`MARKER`] literal in the first def of `text` to a value chosen by
/// `variant` (the same length, so only that def's text changes).
pub(crate) fn edit_literal(text: &str, variant: u32) -> String {
    let replacement = format!("0.{}", 100 + variant % 900);
    text.replacen(MARKER, &replacement, 1)
}

const KINDS: usize = 10;
const KIND_NAMES: [&str; KINDS] =
    ["scale", "sumsq", "diffs", "horner", "rows", "combine", "pairs", "collatz", "flat", "run"];

fn module_path(f: usize) -> String {
    format!("lib{}/m{f:02}", f % 4)
}

fn literal_value(f: usize, k: usize) -> usize {
    (f * 31 + k * 17) % 97 + 1
}

fn literal(f: usize, k: usize) -> String {
    if k == 0 { MARKER.to_owned() } else { format!("{}.5", literal_value(f, k)) }
}
