//! Code action "Make strategy explicit": on the name of an entry or def, writes the
//! levels the compiler chose into the source (LANGUAGE.md §6, "a code action writes it
//! into the source"): `map` becomes `map@grid`, `reduce` inside it `reduce@seq`.
//!
//! The level of each unannotated combinator comes from the roles the back end gives the
//! expressions its kernels compute ([`kernels_computing`], over every entry of every
//! file that can use the def): a role `@grid: ...` (one work-item per element, a
//! multi-stage reduction or scan) gives `@grid`, `@group: ...` `@group`, `@thread: ...`
//! `@thread` and `@seq: ...` (a loop in each work-item) `@seq`; a host-level producer
//! "fused into this kernel" runs in its consumer's grid and gets `@grid` (LANGUAGE.md
//! §6: annotated producers and consumers at the same level still fuse). A combinator
//! whose uses disagree (a def called at host level by one entry and inside a kernel by
//! another, or a strategy the host picks at run time: code in one of the middle end's
//! versions), the inner dimension of a nest
//! run as a 2-D NDRange, or one that no kernel names, is left alone, as is every
//! annotated one; nothing is offered when an entry using the def is too large to
//! compile for a code action (`IMPLICIT_BUDGET`). Annotations that would break §6's
//! legality rules (only `@grid`/`@group` at host level, only `@seq` inside a `@grid`
//! body, ...) are dropped, so the edited file type-checks; the test over `examples/`
//! checks that it also compiles to the same OpenCL.

use rustc_hash::{FxHashMap, FxHashSet};
use weft_hir::{
    Body, Builtin, DefKind, Expr, ExprId, IndexItem, Level, LevelContext, LoopForm, RootDatabase,
    SourceFile,
};
use weft_syntax::TextRange;

use crate::annotate_type::Assist;
use crate::classify::{DefData, enclosing_def};
use crate::kernels::{IMPLICIT_BUDGET, KernelUse, combinator_calls, kernels_computing};
use crate::{FileRange, SourceChange, TextEdit};

pub(crate) fn assists(db: &RootDatabase, range: &FileRange) -> Vec<Assist> {
    let Some(file) = db.file(&range.path) else { return Vec::new() };
    let Some(data) = enclosing_def(db, file, range.range.start()) else { return Vec::new() };
    let (Some(name_range), Some(def_range)) =
        (data.source_map.name_range(), data.source_map.def_range())
    else {
        return Vec::new();
    };
    // Offered on the declaration's head, up to the end of its name.
    let head = TextRange::new(def_range.start(), name_range.end());
    if !head.contains_inclusive(range.range.start()) || data.loc.kind == DefKind::TypeAlias {
        return Vec::new();
    }
    let levels = chosen_levels(db, &data);
    if levels.is_empty() {
        return Vec::new();
    }
    let text = file.text(db);
    let mut edits: Vec<TextEdit> = Vec::new();
    for (path, level) in levels {
        let Some(path_range) = data.source_map.expr_range(path) else { continue };
        let written = text.get(std::ops::Range::<usize>::from(path_range)).unwrap_or("");
        let Expr::Path { name, .. } = &data.body.exprs[path] else { continue };
        // Only a bare name (`map`, not `(map)`): the level is glued to it.
        if written != name.as_str() {
            continue;
        }
        edits.push(TextEdit {
            range: TextRange::empty(path_range.end()),
            insert: format!("@{}", level.name()),
        });
    }
    if edits.is_empty() {
        return Vec::new();
    }
    edits.sort_by_key(|e| e.range.start());
    let n_edits = edits.len();
    let mut edit = SourceChange::default();
    edit.edits.insert(range.path.clone(), edits);
    vec![Assist {
        id: "make_strategy_explicit",
        label: format!(
            "Make strategy explicit ({n_edits} level{})",
            if n_edits == 1 { "" } else { "s" }
        ),
        target: name_range,
        edit,
    }]
}

/// The level to write on each unannotated combinator of a def (by the expression of
/// its path), legal where it stands.
fn chosen_levels(db: &RootDatabase, data: &DefData) -> Vec<(ExprId, Level)> {
    let search = kernels_computing(db, &data.loc, &|_| true, IMPLICIT_BUDGET);
    // A use that was not compiled could disagree with the others.
    if !search.too_large.is_empty() {
        return Vec::new();
    }
    let uses = search.uses;
    // Code inside the middle end's versions runs with one strategy or another, picked
    // at run time by a threshold: no level written in the source describes it.
    let mut versioned: FxHashSet<&weft_core::Origin> = FxHashSet::default();
    let entries: FxHashSet<(SourceFile, &str)> =
        uses.iter().map(|u| (u.file, u.entry.as_str())).collect();
    for (file, entry) in entries {
        let Some(loc) = weft_hir::item_tree(db, file)
            .defs
            .iter()
            .find(|d| d.kind == weft_hir::DefKind::Entry && d.dup == 0 && d.name.as_str() == entry)
        else {
            continue;
        };
        let id = weft_hir::DefId::new(db, loc.clone());
        versioned.extend(crate::kernels::entry_backend(db, id).versioned.iter());
    }
    let mut by_expr: FxHashMap<ExprId, Vec<&KernelUse>> = FxHashMap::default();
    for use_ in &uses {
        by_expr.entry(use_.origin.expr).or_default().push(use_);
    }
    // The ranges of the nests each kernel runs as a two-dimensional NDRange: their inner
    // combinator is the second grid dimension, which no annotation expresses (only `@seq`
    // is legal in a `@grid` body), so the back end's `@seq` role for it is not written.
    let mut two_d: FxHashMap<(SourceFile, &str, usize), Vec<TextRange>> = FxHashMap::default();
    for use_ in &uses {
        if use_.role.contains("2-D NDRange")
            && let Some(range) = data.source_map.expr_range(use_.origin.expr)
        {
            two_d.entry((use_.file, use_.entry.as_str(), use_.kernel_idx)).or_default().push(range);
        }
    }
    let level_of_use = |use_: &KernelUse| {
        if versioned.contains(&use_.origin) {
            return None;
        }
        let level = level_of_role(&use_.role);
        let range = data.source_map.expr_range(use_.origin.expr);
        let in_2d_nest =
            two_d.get(&(use_.file, use_.entry.as_str(), use_.kernel_idx)).is_some_and(|nests| {
                nests.iter().any(|nest| range.is_some_and(|r| *nest != r && nest.contains_range(r)))
            });
        if level == Some(Level::Seq) && in_2d_nest { None } else { level }
    };
    let mut proposed: FxHashMap<ExprId, Level> = FxHashMap::default();
    for call in combinator_calls(&data.body) {
        if call.level.is_some() {
            continue;
        }
        let roles = std::iter::once(call.path)
            .chain(call.calls.iter().copied())
            .filter_map(|expr| by_expr.get(&expr))
            .flatten()
            .map(|use_| level_of_use(use_));
        let mut agreed: Option<Option<Level>> = None;
        for level in roles {
            agreed = match agreed {
                None => Some(level),
                Some(previous) if previous == level => Some(previous),
                Some(_) => Some(None),
            };
        }
        if let Some(Some(level)) = agreed {
            proposed.insert(call.path, level);
        }
    }
    let Some(root) = data.body.root else { return Vec::new() };
    let start =
        if data.loc.kind == DefKind::Entry { LevelContext::Host } else { LevelContext::AnyLevel };
    // Dropping an illegal annotation makes its body take the enclosing context, which
    // can make another one illegal: repeat until none is (each round drops one or more).
    loop {
        let illegal = illegal_levels(&data.body, root, start, &proposed);
        if illegal.is_empty() {
            break;
        }
        proposed.retain(|path, _| !illegal.contains(path));
    }
    let mut out: Vec<(ExprId, Level)> = proposed.into_iter().collect();
    out.sort_by_key(|(path, _)| path.into_raw());
    out
}

/// The level a kernel's role for an expression stands for; `None` for a role that
/// names none (a scalar computed in each work-item).
fn level_of_role(role: &str) -> Option<Level> {
    if role.starts_with("fused into this kernel") {
        return Some(Level::Grid);
    }
    let name = role.strip_prefix('@')?.split(|c: char| !c.is_ascii_alphabetic()).next()?;
    Level::from_name(name)
}

/// The proposed annotations that would be illegal where they stand, given the
/// annotations already written and the proposed ones.
fn illegal_levels(
    body: &Body,
    root: ExprId,
    start: LevelContext,
    proposed: &FxHashMap<ExprId, Level>,
) -> FxHashSet<ExprId> {
    let level_of = |path: ExprId| -> Option<(Builtin, Level)> {
        match &body.exprs[path] {
            Expr::Path { res: weft_hir::Resolution::Builtin(builtin), level, .. } => {
                level.or_else(|| proposed.get(&path).copied()).map(|level| (*builtin, level))
            }
            _ => None,
        }
    };
    let mut illegal = FxHashSet::default();
    // An explicit stack: bodies may nest deeply. The flag: inside the function of a
    // combinator whose level is neither written nor proposed. Its level stays the
    // compiler's choice, so a level written inside it would not describe the code (a
    // tiled product's `reduce` runs in the grid of the nest around it, which no
    // annotation of the `reduce` alone expresses).
    let mut stack: Vec<(ExprId, LevelContext, bool)> = vec![(root, start, false)];
    while let Some((expr, context, under_chosen)) = stack.pop() {
        if let Expr::Call { callee, args } = &body.exprs[expr] {
            if let Some((builtin, level)) = level_of(*callee) {
                if (under_chosen || !context.allows(builtin, level))
                    && proposed.contains_key(callee)
                {
                    illegal.insert(*callee);
                }
                let inner = LevelContext::enter(builtin, level);
                for (idx, &arg) in args.iter().enumerate() {
                    let arg_context =
                        if Some(idx) == builtin.function_arg() { inner } else { context };
                    stack.push((arg, arg_context, under_chosen));
                }
                continue;
            }
            if let Expr::Path { res: weft_hir::Resolution::Builtin(builtin), .. } =
                &body.exprs[*callee]
                && let Some(function) = builtin.function_arg()
            {
                for (idx, &arg) in args.iter().enumerate() {
                    stack.push((arg, context, under_chosen || idx == function));
                }
                continue;
            }
        }
        for child in children(&body.exprs[expr]) {
            stack.push((child, context, under_chosen));
        }
    }
    illegal
}

fn children(expr: &Expr) -> Vec<ExprId> {
    match expr {
        Expr::Missing | Expr::Literal(_) | Expr::Path { .. } | Expr::OpSection(_) => Vec::new(),
        Expr::Tuple(items) | Expr::Array(items) => items.clone(),
        Expr::Call { callee, args } => {
            std::iter::once(*callee).chain(args.iter().copied()).collect()
        }
        Expr::Binary { lhs, rhs, .. } => vec![*lhs, *rhs],
        Expr::Unary { operand, .. } => vec![*operand],
        Expr::Lambda { body, .. } => vec![*body],
        Expr::LeftSection { lhs: e, .. } | Expr::RightSection { rhs: e, .. } => vec![*e],
        Expr::Let { value, body, .. } => vec![*value, *body],
        Expr::If { cond, then_branch, else_branch } => vec![*cond, *then_branch, *else_branch],
        Expr::Loop { init, form, body, .. } => {
            let bound = match form {
                LoopForm::For { bound, .. } => *bound,
                LoopForm::While { cond } => *cond,
            };
            vec![*init, bound, *body]
        }
        Expr::Index { base, items } => {
            let mut out = vec![*base];
            for item in items {
                match item {
                    IndexItem::Index(e) => out.push(*e),
                    IndexItem::Slice { start, end, stride } => {
                        out.extend([start, end, stride].into_iter().flatten().copied());
                    }
                }
            }
            out
        }
        Expr::Proj { base, .. } | Expr::Field { base, .. } => vec![*base],
        Expr::Record(fields) => fields.iter().map(|(_, e)| *e).collect(),
        Expr::RecordUpdate { base, value, .. } => vec![*base, *value],
        Expr::Ascribe { expr, .. } | Expr::Coerce { expr, .. } => vec![*expr],
        Expr::Update { base, indices, value } => {
            std::iter::once(*base).chain(indices.iter().copied()).chain([*value]).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;
    use std::path::Path;

    use expect_test::{Expect, expect};

    use crate::tests::check_assist;
    use crate::{
        Analysis, AnalysisHost, Change, FilePosition, FileRange, Severity, SymbolKind, TextRange,
    };

    fn check(text: &str, expect: Expect) {
        check_assist(text, "make_strategy_explicit", expect);
    }

    #[test]
    fn segmented_reduction_chosen_per_run_is_left_alone() {
        // Rows go to work-items or to work-groups depending on their length at run time;
        // no annotation states that, so the action offers nothing.
        check(
            r#"
entry row_s$0ums (a: [n][m]f32) : [n]f32 = map (\r -> reduce (+) 0f32 r) a
"#,
            expect![""],
        );
    }

    #[test]
    fn fused_producer_gets_grid_like_its_consumer() {
        check(
            r#"
entry $0dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0f32 (map2 (*) xs ys)
"#,
            expect![[r#"
                Make strategy explicit (2 levels)
                entry dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce@grid (+) 0f32 (map2@grid (*) xs ys)
            "#]],
        );
    }

    #[test]
    fn annotated_combinators_are_left_alone_and_their_bodies_get_seq() {
        check(
            r#"
entry $0f (a: [n][m]f32) : [n]f32 = map@grid (\r -> reduce (+) 0f32 r) a
"#,
            expect![[r#"
                Make strategy explicit (1 level)
                entry f (a: [n][m]f32) : [n]f32 = map@grid (\r -> reduce@seq (+) 0f32 r) a
            "#]],
        );
    }

    #[test]
    fn def_called_at_two_levels_is_left_alone() {
        check(
            r#"
def $0double (xs: [n]f32) : [n]f32 = map (\x -> x + x) xs
entry top (xs: [n]f32) : [n]f32 = double xs
entry nested (a: [n][m]f32) : [n][m]f32 = map (\r -> double r) a
"#,
            expect![[""]],
        );
    }

    #[test]
    fn def_called_from_another_file_at_host_level() {
        check(
            r#"
--- /lib.weft
def $0double (xs: [n]f32) : [n]f32 = map (\x -> x + x) xs
--- /main.weft
import "lib"
entry e (xs: [n]f32) : [n]f32 = double xs
"#,
            expect![[r#"
                Make strategy explicit (1 level)
                def double (xs: [n]f32) : [n]f32 = map@grid (\x -> x + x) xs
            "#]],
        );
    }

    #[test]
    fn not_offered_in_a_body() {
        check(
            r#"
entry f (a: [n][m]f32) : [n]f32 = map (\r -> red$0uce (+) 0f32 r) a
"#,
            expect![[""]],
        );
    }

    /// Examples where making the strategy explicit cannot keep the kernels, and why.
    /// Each must fail as described; every other example must pass.
    const EXCEPTIONS: &[(&str, &str)] = &[];

    fn weft_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        let mut entries: Vec<_> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                weft_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "weft") {
                out.push(path);
            }
        }
    }

    /// The OpenCL program of every entry of `path` ("Show generated kernel" on the
    /// entry's name), by entry.
    fn programs(analysis: &Analysis, path: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for runnable in analysis.runnables(path).unwrap() {
            let position = FilePosition { path: path.to_owned(), offset: runnable.range.start() };
            let text = analysis
                .show_kernel(&position)
                .unwrap()
                .map_or_else(|| "no program (the file has errors)".to_owned(), |view| view.text);
            out.push((runnable.entry, text));
        }
        out
    }

    /// Applies "Make strategy explicit" on every entry and def of `path`, one after the
    /// other as a user would; returns the levels written (`name@level` at `line`).
    fn make_all_explicit(host: &mut AnalysisHost, path: &str) -> Vec<String> {
        let mut written = Vec::new();
        let n_symbols = host.analysis().document_symbols(path).unwrap().len();
        for idx in 0..n_symbols {
            let analysis = host.analysis();
            let symbols = analysis.document_symbols(path).unwrap();
            let symbol = &symbols[idx];
            if !matches!(symbol.kind, SymbolKind::Function | SymbolKind::Entry) {
                continue;
            }
            let range = FileRange {
                path: path.to_owned(),
                range: TextRange::empty(symbol.focus_range.start()),
            };
            let assists = analysis.assists(&range).unwrap();
            let Some(assist) = assists.iter().find(|a| a.id == "make_strategy_explicit") else {
                continue;
            };
            let mut text = analysis.file_text(path).unwrap().unwrap().to_string();
            let index = analysis.line_index(path).unwrap().unwrap();
            let mut levels = Vec::new();
            for edit in assist.edit.edits[path].iter().rev() {
                let line = index.to_chars(&text, edit.range.start()).line + 1;
                let word_start = text[..usize::from(edit.range.start())]
                    .rfind(|c: char| !c.is_ascii_alphanumeric())
                    .map_or(0, |i| i + 1);
                let word = &text[word_start..usize::from(edit.range.start())];
                levels.push(format!("{word}{} (line {line})", edit.insert));
                text.replace_range(std::ops::Range::<usize>::from(edit.range), &edit.insert);
            }
            levels.reverse();
            written.push(format!("{} {}", symbol.name, levels.join(", ")));
            drop(analysis);
            let mut change = Change::default();
            change.set_file(path, text);
            host.apply_change(change);
        }
        written
    }

    #[test]
    fn examples_keep_their_kernels_when_the_strategy_is_made_explicit() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut paths = Vec::new();
        weft_files(&root, &mut paths);
        let mut host = AnalysisHost::new();
        let mut change = Change::default();
        let mut names = Vec::new();
        for path in &paths {
            let name = format!("examples/{}", path.strip_prefix(&root).unwrap().display());
            change.set_file(name.clone(), std::fs::read_to_string(path).unwrap());
            names.push(name);
        }
        host.apply_change(change);
        let mut report = String::new();
        // Every file's programs, before each file's edits (those after the previous
        // file's): an edit of a def can change the files importing it.
        let mut current: Vec<_> = names.iter().map(|n| programs(&host.analysis(), n)).collect();
        for name in &names {
            let before = std::mem::take(&mut current);
            let written = make_all_explicit(&mut host, name);
            let analysis = host.analysis();
            current = names.iter().map(|n| programs(&analysis, n)).collect();
            let mut failures = Vec::new();
            for ((other, before), now) in names.iter().zip(&before).zip(&current) {
                let errors: Vec<String> = analysis
                    .diagnostics(other)
                    .unwrap()
                    .into_iter()
                    .filter(|d| d.severity == Severity::Error)
                    .map(|d| format!("{other}: {}", d.message))
                    .collect();
                failures.extend(errors);
                for ((entry, was), (_, now)) in before.iter().zip(now) {
                    if was != now {
                        failures.push(format!("{other}: entry `{entry}` compiles to other OpenCL"));
                    }
                }
            }
            let exception = EXCEPTIONS.iter().find(|(file, _)| file == name);
            match (exception, failures.is_empty()) {
                (None, true) => {}
                (None, false) => panic!("{name}: {failures:#?}\nwritten: {written:#?}"),
                (Some((_, why)), false) => {
                    let _ = writeln!(report, "{name}: EXCEPTION ({why})");
                    continue;
                }
                (Some(_), true) => panic!("{name} is listed as an exception but passes"),
            }
            if written.is_empty() {
                let _ = writeln!(report, "{name}: nothing to write");
            } else {
                let _ = writeln!(report, "{name}: {}", written.join("; "));
            }
        }
        // What was written, for `cargo test -- --nocapture` (not a snapshot: examples
        // and the back end's choices change often; the fixtures above pin behaviour).
        eprintln!("{report}");
        let n_written = report.lines().filter(|l| l.contains('@')).count();
        assert!(
            2 * n_written >= names.len(),
            "levels were written in only {n_written} of {} examples:\n{report}",
            names.len()
        );
    }
}
