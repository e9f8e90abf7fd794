//! Diagnostics of a file: `weft_hir::file_diagnostics` (syntax, names, imports, types,
//! sizes, levels) and the memory layer's information diagnostics; the back end's and
//! the performance diagnostics (`crate::costs`) have one file per code under
//! `diagnostics/`, as the memory layer's. [`check_file`] is the list `weft check` prints and the language
//! server publishes, as `weft_hir::Diagnostic`s (the one diagnostic type).
//!
//! Memory diagnostics exist only for files without errors (a file with errors has no
//! memory layout), so they never echo an error.

mod backend_unsupported;
pub(crate) mod bank_conflict;
mod forced_copy;
pub(crate) mod local_memory_limit;
pub(crate) mod uncoalesced_access;

use weft_hir::{Db, Diagnostic, RootDatabase, SourceFile};

use crate::memory::file_memory;

/// Every diagnostic of `file`, sorted by position: what `weft check` prints, and what
/// the language server publishes, in two steps ([`front_end_diagnostics`] on every
/// edit, [`layout_diagnostics`] after them).
pub fn check_file(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let mut out = front_end_diagnostics(db, file);
    let memory = layout_diagnostics(db, file);
    if !memory.is_empty() {
        out.extend(memory.iter().cloned());
        out.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
    }
    out
}

/// The diagnostics of the front end (syntax, names, imports, types, sizes, levels; for
/// `.apl` files the APL front end's), sorted by position: what typing needs at once.
pub fn front_end_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    if crate::apl::is_apl(file.path(db)) {
        return crate::apl::check_file(db, file);
    }
    weft_hir::file_diagnostics(db, file).clone()
}

/// The information diagnostics of the memory layer (`forced-copy`), sorted by position.
/// They need the memory layout of every entry of the file, which an edit in a body
/// recomputes (about 90 ms in the 20,000-line file of `bench/lsp`): the language server
/// publishes them after the front end's, with the performance diagnostics.
pub fn layout_diagnostics(db: &dyn Db, file: SourceFile) -> &[Diagnostic] {
    if crate::apl::is_apl(file.path(db)) {
        return &[];
    }
    memory_diagnostics(db, file)
}

/// The warnings of the OpenCL back end about `file`'s entries: what it cannot compile
/// yet, where. Not part of [`check_file`], which never compiles kernels (the editor
/// publishes it on every edit): `weft check` adds these, and the language server sends
/// them with the performance diagnostics, which compile entries anyway.
pub fn backend_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    backend_unsupported::backend_unsupported(db, file, &|_| true)
}

pub(crate) use backend_unsupported::backend_unsupported;

/// Computes [`check_file`]'s queries for every file, spread over the machine's cores
/// (`weft_hir::for_each_file_in_parallel`). Afterwards the results are memoized in `db`.
pub fn check_in_parallel(db: &RootDatabase, files: &[SourceFile]) {
    weft_hir::for_each_file_in_parallel(db, files, |db, file| {
        if crate::apl::is_apl(file.path(db)) {
            return;
        }
        weft_hir::file_diagnostics(db, file);
        memory_diagnostics(db, file);
    });
}

/// The information diagnostics of the memory layer.
#[salsa::tracked(returns(ref))]
fn memory_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    match file_memory(db, file) {
        Some(memory) => forced_copy::forced_copies(db, file, memory),
        None => Vec::new(),
    }
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
    /// with internal errors (or errors without a position). `sum_rows` compiles since
    /// the middle end interchanges reductions of rows (no warning); `pick_row`'s
    /// operator is no map over its arguments, so it is still unsupported.
    #[test]
    fn constructs_the_backend_lacks_are_warnings_where_they_are() {
        let src = r#"
entry row (zs: [n]f32) : [n]f32 = (replicate 2 zs)[1]
entry choose (xs: [n]f32) (ys: [n]f32) (ks: [m]i64) : [m][n]f32 = map (\k -> if k > 0 then xs else ys) ks
entry sizes (ks: [m]i64) : [m]i64 = map (\k -> reduce (+) 0 (if k > 2 then iota k else map (*2) (iota k))) ks
entry sum_rows (a: [m][n]f32) : [n]f32 = reduce (map2 (+)) (replicate n 0f32) a
entry pick_row (a: [m][n]f32) : [n]f32 = reduce (\x y -> if x[0] >= y[0] then x else y) a[0] a
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
            warning[backend-unsupported] `if k > 2 then iota k else map (*2) (iota k)`: entry `sizes`: the OpenCL backend does not support an array-valued `if`, loop or reduction inside a kernel whose size is not known at launch yet
            warning[backend-unsupported] `reduce (\x y -> if x[0] >= y[0] then x else y) a[0] a`: entry `pick_row`: the OpenCL backend does not support a reduction or scan whose elements are arrays yet
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
