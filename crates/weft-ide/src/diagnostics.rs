//! Diagnostics of a file, worded: the front end's (`weft_hir::file_diagnostics`:
//! syntax, names, imports, types, sizes, levels), the memory layer's information
//! diagnostics, and the back end's and the performance diagnostics (`crate::costs`).
//! Each code has one file under `diagnostics/`, with a `// Diagnostic:` header that says
//! when it is shown, as rust-analyzer's `ide-diagnostics` does. [`check_file`] is the
//! list `weft check` prints and the language server publishes.
//!
//! Memory diagnostics exist only for files without errors (a file with errors has no
//! memory layout), so they never echo an error.

mod alias_type_params;
mod apl_error;
mod aspace_explanation;
mod backend_unsupported;
mod bad_literal;
mod bad_namespace;
mod bad_projection;
pub(crate) mod bank_conflict;
mod cannot_infer;
mod duplicate_definition;
mod duplicate_field;
mod entry_type;
mod forced_copy;
#[cfg(test)]
mod front_end_tests;
mod function_not_allowed;
mod illegal_level;
mod import_cycle;
mod level_not_allowed;
mod literal_out_of_range;
mod local_escapes_group;
pub(crate) mod local_memory_limit;
mod misplaced_existential;
mod missing_return_type;
mod no_such_field;
mod not_a_function;
mod not_a_record;
mod not_a_tuple;
mod not_an_array;
mod projection_out_of_range;
mod recursion_cycle;
mod sites;
mod size_mismatch;
mod slice_in_update;
mod syntax_error;
mod test_block;
mod to_local_outside_group;
mod too_many_indices;
mod type_mismatch;
mod unbound_size_param;
pub(crate) mod uncoalesced_access;
mod uninferable_size;
mod unknown_level;
mod unknown_size;
mod unknown_type;
mod unresolved_import;
mod unresolved_name;

use std::sync::Arc;

use weft_hir::{
    BodyDiagnostic, Db, HirDiagnostic, HirDiagnosticKind, InferDiagnostic, RootDatabase, Severity,
    SourceFile,
};
use weft_syntax::TextRange;

use crate::diagnostics::sites::Sites;
use crate::memory::function_copies;
use crate::program::file_functions;

/// A diagnostic ready to show: the one diagnostic type of `weft check` and the
/// language server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// Stable, kebab-case (`size-mismatch`).
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub file: SourceFile,
    pub range: TextRange,
    pub related: Vec<RelatedInfo>,
    /// A separate suggestion, shown after the message.
    pub help: Option<String>,
}

/// Another place that explains a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RelatedInfo {
    pub file: SourceFile,
    pub range: TextRange,
    pub message: String,
}

/// What one handler under `diagnostics/` says about a front-end diagnostic.
struct Words {
    message: String,
    related: Vec<RelatedInfo>,
    help: Option<String>,
}

impl Words {
    fn message(message: String) -> Words {
        Words { message, related: Vec::new(), help: None }
    }
}

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
        return apl_error::apl_errors(db, file);
    }
    front_end(db, file).clone()
}

/// The front end's diagnostics of a `.weft` file, worded: the file's syntax and import
/// errors, and each declaration's ([`def_front_end`]) moved to where it is now. After an
/// edit inside one declaration only that one's are computed and worded again; the
/// others' are memoized, position-independent, and only moved.
#[salsa::tracked(returns(ref))]
fn front_end(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> =
        weft_hir::file_level_diagnostics(db, file).iter().map(|d| render(db, d)).collect();
    for def in weft_hir::item_tree(db, file).defs.iter() {
        let offset = weft_hir::def_offset(db, def).unwrap_or_default();
        let id = weft_hir::DefId::new(db, def.clone());
        out.extend(def_front_end(db, id).iter().map(|d| d.moved_by(offset)));
    }
    weft_hir::sort_and_merge(&mut out, |d| (d.range, d.severity, d.code));
    out
}

/// One declaration's front-end diagnostics (`weft_hir::def_diagnostics`), worded, with
/// positions from the start of its stretch of text.
#[salsa::tracked(returns(ref))]
fn def_front_end<'db>(db: &'db dyn Db, def: weft_hir::DefId<'db>) -> Vec<Diagnostic> {
    weft_hir::def_diagnostics(db, def).iter().map(|d| render(db, d)).collect()
}

impl Diagnostic {
    /// The diagnostic with its place and its related places `offset` further on.
    fn moved_by(&self, offset: weft_syntax::TextSize) -> Diagnostic {
        let mut moved = self.clone();
        moved.range += offset;
        for related in &mut moved.related {
            related.range += offset;
        }
        moved
    }
}

/// A front-end diagnostic in words, at its place. A declaration's diagnostic
/// (`weft_hir::def_diagnostics`) has its related places in the same positions, from the
/// start of its stretch; a file's (`weft_hir::file_level_diagnostics`) has none.
pub(crate) fn render(db: &dyn Db, d: &HirDiagnostic) -> Diagnostic {
    let Words { message, related, help } = words(db, d);
    Diagnostic {
        code: d.code(),
        severity: d.severity(),
        message,
        file: d.file,
        range: d.range,
        related,
        help,
    }
}

/// The words of a front-end diagnostic: each code's handler.
fn words(db: &dyn Db, d: &HirDiagnostic) -> Words {
    match &d.kind {
        HirDiagnosticKind::Syntax { message } => syntax_error::words(message),
        HirDiagnosticKind::UnresolvedImport { target, path } => {
            unresolved_import::words(target, path)
        }
        HirDiagnosticKind::ImportCycle { chain } => import_cycle::words(chain),
        HirDiagnosticKind::DuplicateDefinition { name } => duplicate_definition::words(name),
        HirDiagnosticKind::BadNamespace { name, namespace } => {
            bad_namespace::words(name, namespace)
        }
        HirDiagnosticKind::TestBlock { message } => test_block::words(message),
        HirDiagnosticKind::Body(body) => match body {
            BodyDiagnostic::UnresolvedName { name, .. } => unresolved_name::words(db, d.file, name),
            BodyDiagnostic::UnknownLevel { level, .. } => unknown_level::words(level),
            BodyDiagnostic::LevelNotAllowed { .. } => level_not_allowed::words(),
            BodyDiagnostic::BadLiteral { message, .. } => bad_literal::words(message),
            BodyDiagnostic::BadProjection { .. } => bad_projection::words(),
            BodyDiagnostic::SliceInUpdate { .. } => slice_in_update::words(),
            BodyDiagnostic::DuplicateField { name, .. } => duplicate_field::in_record(name),
        },
        HirDiagnosticKind::Infer { def, diagnostic } => {
            infer_words(&Sites::new(db, d.file, def), diagnostic)
        }
    }
}

fn infer_words(sites: &Sites<'_>, diagnostic: &InferDiagnostic) -> Words {
    match diagnostic {
        InferDiagnostic::TypeMismatch { site, expected, found } => {
            type_mismatch::words(sites, site, expected, found)
        }
        InferDiagnostic::ClassMismatch { site, class, found, expected_side } => {
            type_mismatch::class_words(sites, site, class, found, *expected_side)
        }
        InferDiagnostic::SizeMismatch { site, expected, found, origin } => {
            size_mismatch::words(sites, site, expected, found, *origin)
        }
        InferDiagnostic::NotAFunction { site, ty } => not_a_function::words(sites, site, ty),
        InferDiagnostic::NotAnArray { site, ty } => not_an_array::words(sites, site, ty),
        InferDiagnostic::TooManyIndices { ty, n_indices, .. } => {
            too_many_indices::words(ty, *n_indices)
        }
        InferDiagnostic::NotARecord { site, ty, field } => {
            not_a_record::words(sites, site, ty, field)
        }
        InferDiagnostic::NoSuchField { ty, field, .. } => no_such_field::words(ty, field),
        InferDiagnostic::DuplicateField { name, .. } => duplicate_field::in_record_type(name),
        InferDiagnostic::NotATuple { site, ty } => not_a_tuple::words(sites, site, ty),
        InferDiagnostic::ProjectionOutOfRange { ty, index, .. } => {
            projection_out_of_range::words(ty, *index)
        }
        InferDiagnostic::CannotInfer { site } => cannot_infer::words(sites, site),
        InferDiagnostic::UnknownType { name, .. } => unknown_type::words(name),
        InferDiagnostic::UnknownSize { name, .. } => unknown_size::words(name),
        InferDiagnostic::LiteralOutOfRange { site, ty } => {
            literal_out_of_range::words(sites, site, *ty)
        }
        InferDiagnostic::FunctionNotAllowed { context, .. } => function_not_allowed::words(context),
        InferDiagnostic::EntryType { ty, .. } => entry_type::words(ty),
        InferDiagnostic::RecursionCycle { cycle } => recursion_cycle::words(cycle),
        InferDiagnostic::ExistentialOutsideReturn { .. } => misplaced_existential::words(),
        InferDiagnostic::AliasTypeParams => alias_type_params::words(),
        InferDiagnostic::IllegalLevel { found, context, legal, .. } => {
            illegal_level::words(found, context, legal)
        }
        InferDiagnostic::LocalEscapesGroup { site, via, group } => {
            local_escapes_group::words(sites, site, via, group)
        }
        InferDiagnostic::EntryWithoutReturnType => missing_return_type::words(),
        InferDiagnostic::UninferableParamSize { name, .. } => uninferable_size::words(name),
        InferDiagnostic::UnboundSizeParam { name } => unbound_size_param::words(name),
        InferDiagnostic::ToLocalOutsideGroup { site, context } => {
            to_local_outside_group::words(sites, site, context.as_ref())
        }
    }
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
    backend_unsupported::backend_unsupported(db, file, &|entry| {
        crate::kernels::entry_compile_error(db, entry).clone()
    })
}

pub(crate) use backend_unsupported::backend_unsupported;

/// Computes [`check_file`]'s queries for every file, spread over the machine's cores
/// (`weft_hir::for_each_file_in_parallel`). Afterwards the results are memoized in `db`.
pub fn check_in_parallel(db: &RootDatabase, files: &[SourceFile]) {
    weft_hir::for_each_file_in_parallel(db, files, |db, file| {
        if crate::apl::is_apl(file.path(db)) {
            return;
        }
        front_end(db, file);
        memory_diagnostics(db, file);
    });
}

/// The information diagnostics of the memory layer: the forced copies of the functions
/// of the file's entries, each laid out on its own (`memory::function_copies`), so an
/// edit lays out again only the functions it changed.
#[salsa::tracked(returns(ref))]
fn memory_diagnostics(db: &dyn Db, file: SourceFile) -> Vec<Diagnostic> {
    let Some(functions) = file_functions(db, file) else { return Vec::new() };
    let copies: Vec<(&weft_hir::DefLoc, Arc<[weft_mem::CopyInfo]>)> = functions
        .order
        .iter()
        .map(|&key| (key.def(db), Arc::clone(function_copies(db, key))))
        .collect();
    let copies = copies.iter().flat_map(|(def, copies)| copies.iter().map(move |c| (*def, c)));
    forced_copy::forced_copies(db, file, copies)
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

    /// The diagnostics published on every keystroke are worded per declaration and
    /// moved: an edit in `g` checks and words `g`'s alone, and those of `h` below it
    /// move with their text (`f`'s, none, are checked again and compare equal).
    #[test]
    fn an_edit_in_one_def_rewords_only_its_diagnostics_and_moves_the_others() {
        let src = "def f (x: i32) : i32 = x + 1\ndef g (x: i32) : i32 = x + 1.5\n\
                   def h (x: f32) : f32 = x + true\n";
        let mut db = weft_hir::RootDatabase::default();
        let file = db.set_file("main.weft", src);
        let shown = |db: &weft_hir::RootDatabase, text: &str| -> Vec<String> {
            super::front_end_diagnostics(db, file)
                .iter()
                .map(|d| format!("{} {}", &text[d.range], d.message))
                .collect()
        };
        let before = shown(&db, src);
        assert_eq!(before.len(), 2, "{before:?}");
        let edited = src.replacen("x + 1.5", "x  +  1.5", 1);
        db.enable_log();
        db.set_file("main.weft", &edited);
        let after = shown(&db, &edited);
        let log = db.take_log();
        assert_eq!(after, before);
        for query in ["def_front_end(", "def_diagnostics("] {
            let runs = log.iter().filter(|q| q.starts_with(query)).count();
            assert_eq!(runs, 1, "{query} {log:#?}");
        }
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
    /// the middle end interchanges reductions of rows (no warning), `pick_row` since
    /// reductions of arrays are folded in chunks; a scan of arrays whose operator is
    /// no map over its arguments is still unsupported.
    #[test]
    fn constructs_the_backend_lacks_are_warnings_where_they_are() {
        let src = r#"
entry row (zs: [n]f32) : [n]f32 = (replicate 2 zs)[1]
entry choose (xs: [n]f32) (ys: [n]f32) (ks: [m]i64) : [m][n]f32 = map (\k -> if k > 0 then xs else ys) ks
entry sizes (ks: [m]i64) : [m]i64 = map (\k -> reduce (+) 0 (if k > 2 then iota k else map (*2) (iota k))) ks
entry sum_rows (a: [m][n]f32) : [n]f32 = reduce (map2 (+)) (replicate n 0f32) a
entry pick_row (a: [m][n]f32) : [n]f32 = reduce (\x y -> if x[0] >= y[0] then x else y) a[0] a
entry best_rows (a: [m][n]f32) : [m][n]f32 = scan (\x y -> if x[0] >= y[0] then x else y) a[0] a
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
            warning[backend-unsupported] `scan (\x y -> if x[0] >= y[0] then x else y) a[0] a`: entry `best_rows`: the OpenCL backend does not support a reduction or scan whose elements are arrays yet
        "#]]
        .assert_eq(&out);
    }

    /// `weft check` compiles every entry for the `backend-unsupported` warning: each
    /// entry's program and code are made and dropped, not memoized (a file of thousands
    /// of entries kept them all), and only the error is kept.
    #[test]
    fn backend_warnings_keep_no_entry_code() {
        let src = "entry a (xs: [n]f32) : [n]f32 = map (\\x -> x + 1f32) xs\n\
                   entry b (a: [m][n]f32) : [m][n]f32 = scan (\\x y -> if x[0] >= y[0] then x else y) a[0] a\n";
        let mut db = weft_hir::RootDatabase::default();
        let file = db.set_file("main.weft", src);
        db.enable_log();
        let warnings = super::backend_diagnostics(&db, file);
        let log = db.take_log();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let checked = log.iter().filter(|q| q.starts_with("entry_compile_error(")).count();
        assert_eq!(checked, 2, "{log:#?}");
        assert!(
            log.iter()
                .all(|q| !q.starts_with("entry_backend(") && !q.starts_with("entry_program(")),
            "{log:#?}"
        );
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
