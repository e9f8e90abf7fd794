//! Diagnostics of a file: `weft_hir::file_diagnostics` (syntax, names, imports, types,
//! sizes, levels) and the memory layer's information diagnostics, one file per code
//! under `diagnostics/`. [`check_file`] is the list `weft check` prints; the language
//! server publishes the same list with file ids turned into paths.
//!
//! Memory diagnostics exist only for files without errors (a file with errors has no
//! memory layout), so they never echo an error.

mod backend_unsupported;
mod forced_copy;

use weft_hir::{Db, RootDatabase, Severity, SourceFile};
use weft_syntax::TextRange;

use crate::memory::file_memory;

/// A diagnostic ready to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable, kebab-case (`size-mismatch`).
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub range: TextRange,
    pub related: Vec<RelatedInfo>,
    pub help: Option<String>,
}

/// Another place that explains a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelatedInfo {
    pub path: String,
    pub range: TextRange,
    pub message: String,
}

/// Every diagnostic of `file`, sorted by position: what `weft check` prints and the
/// language server publishes.
pub fn check_file(db: &dyn Db, file: SourceFile) -> Vec<weft_hir::Diagnostic> {
    if crate::apl::is_apl(file.path(db)) {
        return crate::apl::check_file(db, file);
    }
    let mut out = weft_hir::file_diagnostics(db, file).clone();
    let memory = memory_diagnostics(db, file);
    if !memory.is_empty() {
        out.extend(memory.iter().cloned());
        out.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
    }
    out
}

/// The warnings of the OpenCL back end about `file`'s entries: what it cannot compile
/// yet, where. Not part of [`check_file`], which never compiles kernels (the editor
/// publishes it on every edit): `weft check` adds these, and the language server sends
/// them with the performance diagnostics, which compile entries anyway.
pub fn backend_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<weft_hir::Diagnostic> {
    backend_unsupported::backend_unsupported(db, file, &|_| true)
}

pub(crate) use backend_unsupported::backend_unsupported;

/// Computes [`check_file`]'s queries for every file, spread over the machine's cores
/// (as `weft_hir::check_in_parallel`, whose thread handling this mirrors, does for the
/// HIR diagnostics alone). Afterwards the results are memoized in `db`.
pub fn check_in_parallel(db: &RootDatabase, files: &[SourceFile]) {
    let compute = |db: &RootDatabase, file: SourceFile| {
        if crate::apl::is_apl(file.path(db)) {
            return;
        }
        weft_hir::file_diagnostics(db, file);
        memory_diagnostics(db, file);
    };
    let n_threads =
        std::thread::available_parallelism().map_or(1, |n| n.get()).min(files.len().max(1));
    if n_threads <= 1 {
        for &file in files {
            compute(db, file);
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
                    while let Some(&file) =
                        files.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                    {
                        compute(&db, file);
                    }
                });
            if spawned.is_err() {
                // No thread could be made: the caller's reads compute what is missing.
                break;
            }
        }
    });
}

/// The information diagnostics of the memory layer.
#[salsa::tracked(returns(ref))]
fn memory_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<weft_hir::Diagnostic> {
    match file_memory(db, file) {
        Some(memory) => forced_copy::forced_copies(db, file, memory),
        None => Vec::new(),
    }
}

pub(crate) fn diagnostics(db: &RootDatabase, path: &str) -> Vec<Diagnostic> {
    let Some(file) = db.file(path) else { return Vec::new() };
    convert(db, check_file(db, file))
}

/// File ids to paths.
pub(crate) fn convert(db: &RootDatabase, found: Vec<weft_hir::Diagnostic>) -> Vec<Diagnostic> {
    found
        .into_iter()
        .map(|d| Diagnostic {
            code: d.code,
            severity: d.severity,
            message: d.message,
            range: d.range,
            related: d
                .related
                .iter()
                .map(|r| RelatedInfo {
                    path: r.file.path(db).clone(),
                    range: r.range,
                    message: r.message.clone(),
                })
                .collect(),
            help: d.help,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::tests::check_diagnostics;

    #[test]
    fn reports_type_errors_with_codes() {
        check_diagnostics(
            r#"
def f (x: i32) : i32 = x + 1.5
def g (x: f32) : f32 = x
"#,
            expect![[r#"
                27..30 error[type-mismatch]: type mismatch: expected `i32`, but `1.5` is a float
            "#]],
        );
    }

    #[test]
    fn forced_copies_are_information_with_the_reason_and_size() {
        check_diagnostics(
            r#"
entry f (a: [n][m]i32) : [m*n]i32 = flatten (transpose a)
entry g (a: [n][m]i32) : [n*m]i32 = flatten a
entry h (a: [n][m]f64) : [m][n]f64 = transpose a
"#,
            expect![[r#"
                36..57 info[forced-copy]: `flatten` is not representable as one LMAD here (the outer dimensions do not merge), so the array is copied (4*n*m bytes)
                141..152 info[forced-copy]: an entry result must be row-major at offset 0, so it is copied (8*n*m bytes)
            "#]],
        );
    }

    /// These ran on the interpreter, passed `weft check` and then failed in the compiler
    /// with internal errors (or errors without a position).
    #[test]
    fn constructs_the_backend_lacks_are_warnings_where_they_are() {
        let src = r#"
entry row (zs: [n]f32) : [n]f32 = (replicate 2 zs)[1]
entry choose (xs: [n]f32) (ys: [n]f32) (ks: [m]i64) : [m][n]f32 = map (\k -> if k > 0 then xs else ys) ks
entry sum_rows (a: [m][n]f32) : [n]f32 = reduce (map2 (+)) (replicate n 0f32) a
entry fine (xs: [n]f32) : f32 = reduce (+) 0f32 xs
"#;
        let mut db = weft_hir::RootDatabase::default();
        let file = db.set_file("main.weft", src);
        let mut out = String::new();
        for d in super::backend_diagnostics(&db, file) {
            let snippet = &src[usize::from(d.range.start())..usize::from(d.range.end())];
            out.push_str(&format!(
                "{}[{}] `{snippet}`: {}\n",
                d.severity.as_str(),
                d.code,
                d.message
            ));
        }
        expect![[r#"
            warning[backend-unsupported] `(replicate 2 zs)[1]`: entry `row`: the OpenCL backend does not support an array computed by one work-item (such as a row of an array computed on the host) yet
            warning[backend-unsupported] `if k > 0 then xs else ys`: entry `choose`: the OpenCL backend does not support an array-valued `if`, loop or reduction inside a kernel whose size is not a small constant (outside a `map@group`, or with a size not known at launch) yet
            warning[backend-unsupported] `reduce (map2 (+)) (replicate n 0f32) a`: entry `sum_rows`: the OpenCL backend does not support a reduction or scan whose elements are arrays yet
        "#]]
        .assert_eq(&out);
    }

    #[test]
    fn an_error_in_another_entry_keeps_the_memory_diagnostics() {
        check_diagnostics(
            r#"
entry f (a: [n][m]i32) : [m*n]i32 = flatten (transpose a)
entry g (a: [n][m]i32) : [n]i32 = map (\r -> r[0] + true) a
"#,
            expect![[r#"
                36..57 info[forced-copy]: `flatten` is not representable as one LMAD here (the outer dimensions do not merge), so the array is copied (4*n*m bytes)
                110..114 error[type-mismatch]: type mismatch: expected `i32`, but `true` has type `bool`
            "#]],
        );
    }
}
