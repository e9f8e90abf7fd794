//! Code action "Materialise `xs` in local memory" (docs/costs.md, "Costs in the
//! editor"): on the use of an array inside the body of an explicit `map@group` lambda
//! (or on the lambda's parameter), when the kernel computing that `map@group` re-reads
//! the array from global memory, binds `let xs = to_local xs in` at the start of the
//! lambda's body, so that the work-group copies it once, cooperatively, and its
//! work-items read the copy.
//!
//! The array is a parameter of the lambda (a row of the `map@group`'s input, when that
//! input is a name) or an array the lambda captures. The evidence comes from the
//! kernel's accesses (`weft-lower`'s costs, the salsa query `entry_costs`), not from a
//! second analysis: among the global reads of the pointer that holds the array (matched
//! by its source name, as the performance diagnostics name pointers), one whose stride
//! is uniform (every work-item of a SIMD group reads the same address: an array read
//! whole by each iteration of a `map@thread`, a `reduce@seq` inside one), or reads that
//! add up, at the entry's sizes, to more than the array's elements per work-group (each
//! work-item reading its elements again), where the array is an entry input whose sizes
//! are known. Not offered outside a `map@group`, for arrays bound inside its body (an
//! array already made local among them), when no kernel re-reads the array, or when the
//! edited file would not type-check: the array must not become the body's result (a
//! local array cannot outlive its work-group; LANGUAGE.md §6), which the check finds
//! wherever the array flows. Entries over `IMPLICIT_BUDGET` are not compiled for it.

use weft_cost::model::{self, Dir, MemSpace, Stride};
use weft_hir::{
    Builtin, DefId, DefKind, Expr, ExprId, Level, Pat, PatId, Resolution, RootDatabase, Severity,
    Ty,
};
use weft_plan::{Input, Var};
use weft_syntax::TextRange;

use crate::annotate_type::Assist;
use crate::classify::{DefData, enclosing_def};
use crate::costs::{entry_costs, size_env};
use crate::kernels::{IMPLICIT_BUDGET, combinator_calls, kernels_computing};
use crate::{FileRange, SourceChange, TextEdit};

/// An explicit `map@group` applied to a lambda: `map@group (\p1 .. pk -> body) a1 .. ak`.
struct GroupMap {
    /// The path and the calls applying it (what kernels name as origins).
    exprs: Vec<ExprId>,
    lambda: ExprId,
    params: Vec<PatId>,
    body: ExprId,
    /// The array arguments, one per parameter.
    arrays: Vec<ExprId>,
}

/// Where the array to materialise comes from.
enum Source {
    /// A parameter of the lambda; `root` names the `map@group`'s input it is a row of.
    Param { root: String },
    /// Captured from outside the lambda.
    Captured,
}

pub(crate) fn assists(db: &RootDatabase, range: &FileRange) -> Vec<Assist> {
    let Some(file) = db.file(&range.path) else { return Vec::new() };
    let offset = range.range.start();
    let Some(data) = enclosing_def(db, file, offset) else { return Vec::new() };
    let Some((pat, target)) = array_at(&data, range.range) else { return Vec::new() };
    let Some(name) = bound_name(&data, pat) else { return Vec::new() };
    let groups = group_maps(&data);
    // The `map@group` whose lambda holds the cursor (they do not nest).
    let Some(group) = groups
        .iter()
        .find(|g| data.source_map.expr_range(g.lambda).is_some_and(|r| r.contains_range(target)))
    else {
        return Vec::new();
    };
    let (Some(lambda_range), Some(body_range)) =
        (data.source_map.expr_range(group.lambda), data.source_map.expr_range(group.body))
    else {
        return Vec::new();
    };
    let source = if let Some(idx) = group.params.iter().position(|&p| binds(&data, p) == Some(pat))
    {
        let Some(root) = group.arrays.get(idx).and_then(|&a| path_name(&data, a)) else {
            return Vec::new();
        };
        Source::Param { root }
    } else {
        match data.source_map.pat_range(pat) {
            Some(r) if !lambda_range.contains_range(r) => Source::Captured,
            // Bound inside the body (a `let`, an inner lambda): not the group's input.
            _ => return Vec::new(),
        }
    };
    // Offered at a use inside the body, or on the parameter.
    if !body_range.contains_range(target) && !matches!(source, Source::Param { .. }) {
        return Vec::new();
    }
    if !matches!(weft_hir::infer(db, data.id(db)).pat_ty(pat), Ty::Array { .. }) {
        return Vec::new();
    }
    if !re_read(db, &data, group, &name, &source) {
        return Vec::new();
    }
    let text = file.text(db);
    let body_start = usize::from(body_range.start());
    let line_start = text[..body_start].rfind('\n').map_or(0, |i| i + 1);
    let indent = &text[line_start..body_start];
    let insert = if indent.chars().all(|c| c == ' ' || c == '\t') {
        format!("let {name} = to_local {name}\n{indent}in ")
    } else {
        format!("let {name} = to_local {name} in ")
    };
    let edit = TextEdit { range: TextRange::empty(body_range.start()), insert };
    let mut edited = text.to_string();
    edited.insert_str(body_start, &edit.insert);
    if !type_checks(db, &range.path, &edited) {
        return Vec::new();
    }
    let mut change = SourceChange::default();
    change.edits.insert(range.path.clone(), vec![edit]);
    vec![Assist {
        id: "materialise_in_local_memory",
        label: format!("Materialise `{name}` in local memory"),
        target,
        edit: change,
    }]
}

/// The binding of the array under the cursor: a path resolving to a local binding, or a
/// binding pattern; with the range the action is about.
fn array_at(data: &DefData, range: TextRange) -> Option<(PatId, TextRange)> {
    if let Some(expr) = data.source_map.expr_at(range)
        && let Expr::Path { res: Resolution::Local(pat), .. } = &data.body.exprs[expr]
    {
        return Some((*pat, data.source_map.expr_range(expr)?));
    }
    let pat = data.source_map.pat_at(range)?;
    match &data.body.pats[pat] {
        Pat::Bind { .. } => Some((pat, data.source_map.pat_range(pat)?)),
        _ => None,
    }
}

/// The name a binding pattern binds.
fn bound_name(data: &DefData, pat: PatId) -> Option<String> {
    match &data.body.pats[pat] {
        Pat::Bind { name } => Some(name.as_str().to_owned()),
        _ => None,
    }
}

/// The binding a lambda parameter's pattern makes (through a type ascription).
fn binds(data: &DefData, pat: PatId) -> Option<PatId> {
    match &data.body.pats[pat] {
        Pat::Bind { .. } => Some(pat),
        Pat::Ascribed { pat, .. } => binds(data, *pat),
        _ => None,
    }
}

/// The name an expression is, when it is a name of a local binding (a parameter of the
/// def, a `let`).
fn path_name(data: &DefData, expr: ExprId) -> Option<String> {
    match &data.body.exprs[expr] {
        Expr::Path { name, res: Resolution::Local(_), .. } => Some(name.as_str().to_owned()),
        _ => None,
    }
}

/// Every explicit `map@group` (`map2@group`, ...) of the def applied to a lambda and
/// its arrays in one call.
fn group_maps(data: &DefData) -> Vec<GroupMap> {
    let mut out = Vec::new();
    for call in combinator_calls(&data.body) {
        if call.level != Some(Level::Group) {
            continue;
        }
        let Expr::Path { res: Resolution::Builtin(Builtin::Map(k)), .. } =
            &data.body.exprs[call.path]
        else {
            continue;
        };
        let Some(&first) = call.calls.first() else { continue };
        let Expr::Call { args, .. } = &data.body.exprs[first] else { continue };
        if args.len() != usize::from(*k) + 1 {
            continue;
        }
        let Expr::Lambda { params, body } = &data.body.exprs[args[0]] else { continue };
        out.push(GroupMap {
            exprs: std::iter::once(call.path).chain(call.calls.iter().copied()).collect(),
            lambda: args[0],
            params: params.clone(),
            body: *body,
            arrays: args[1..].to_vec(),
        });
    }
    out
}

/// Whether a kernel computing the `map@group` re-reads the array `name` from global
/// memory (module docs).
fn re_read(
    db: &RootDatabase,
    data: &DefData,
    group: &GroupMap,
    name: &str,
    source: &Source,
) -> bool {
    let pointer_name = match source {
        Source::Param { root } => root.as_str(),
        Source::Captured => name,
    };
    let search = kernels_computing(db, &data.loc, &|e| group.exprs.contains(&e), IMPLICIT_BUDGET);
    for use_ in &search.uses {
        let Some(entry) = weft_hir::item_tree(db, use_.file)
            .defs
            .iter()
            .find(|l| l.kind == DefKind::Entry && l.name.as_str() == use_.entry)
            .cloned()
        else {
            continue;
        };
        let Some(costs) = entry_costs(db, DefId::new(db, entry.clone())) else { continue };
        let Some(kernel) = costs.kernels.get(use_.kernel_idx) else { continue };
        let env = size_env(db, &entry, &costs.inputs, None);
        let sizes = |v: Var| env.get(v);
        for launch in costs.costs.launches.iter().filter(|l| l.kernel as usize == use_.kernel_idx) {
            let reads: Vec<_> = launch
                .cost
                .accesses
                .iter()
                .filter(|a| {
                    a.space == MemSpace::Global
                        && a.dir == Dir::Read
                        && kernel.source_name(&a.ptr, a.space) == pointer_name
                })
                .collect();
            if reads.iter().any(|a| a.stride == Stride::Uniform) {
                return true;
            }
            // Reads beyond the array's elements per work-group, where the sizes are
            // those of entry inputs.
            if data.loc != entry {
                continue;
            }
            let Some(elements) = input_elements(data, &costs.inputs, pointer_name, &sizes) else {
                continue;
            };
            let per_group_copies = match source {
                Source::Param { .. } => Some(1),
                Source::Captured => group
                    .arrays
                    .first()
                    .and_then(|&a| path_name(data, a))
                    .and_then(|outer| input_dims(data, &costs.inputs, &outer))
                    .and_then(|dims| dims.first().and_then(|&d| sizes(d))),
            };
            let Some(copies) = per_group_copies else { continue };
            let total: Option<i64> = reads
                .iter()
                .map(|a| model::eval_i64(&a.count, &sizes).ok())
                .try_fold(0i64, |acc, n| n.map(|n| acc.saturating_add(n)));
            if total.is_some_and(|t| t > elements.saturating_mul(copies)) {
                return true;
            }
        }
    }
    false
}

/// The dimension variables of the entry input `name`.
fn input_dims(data: &DefData, inputs: &[Input], name: &str) -> Option<Vec<Var>> {
    if data.body.params.len() != inputs.len() {
        return None;
    }
    let idx = data.body.params.iter().position(|&p| {
        binds(data, p).and_then(|b| bound_name(data, b)).is_some_and(|n| n == name)
    })?;
    match &inputs[idx] {
        Input::Array { dims, .. } => Some(dims.clone()),
        Input::Scalar { .. } => None,
    }
}

/// The elements of the entry input `name` at the sizes.
fn input_elements(
    data: &DefData,
    inputs: &[Input],
    name: &str,
    sizes: &dyn Fn(Var) -> Option<i64>,
) -> Option<i64> {
    input_dims(data, inputs, name)?
        .iter()
        .try_fold(1i64, |acc, &d| sizes(d).map(|n| acc.saturating_mul(n)))
}

/// Whether the workspace, with `path` holding `text`, has no errors in `path`.
fn type_checks(db: &RootDatabase, path: &str, text: &str) -> bool {
    let mut scratch = RootDatabase::default();
    for file in db.files() {
        let p = file.path(db).clone();
        if p != path {
            scratch.set_file(&p, file.text(db));
        }
    }
    let file = scratch.set_file(path, text);
    crate::check_file(&scratch, file).iter().all(|d| d.severity != Severity::Error)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::{Expect, expect};

    use crate::tests::{check_assist, fixture};
    use crate::{AnalysisHost, Change, FileRange, Severity, TextRange};

    fn check(text: &str, expect: Expect) {
        check_assist(text, "materialise_in_local_memory", expect);
    }

    #[test]
    fn row_read_whole_by_every_work_item() {
        // `reduce@seq` over the row inside `map@thread`: every work-item reads all of it
        // (a uniform global load).
        check(
            r#"
entry dist (a: [n][m]f32) : [n][m]f32 =
  map@group (\row ->
      map@thread (\x -> reduce@seq (+) 0f32 (map@seq (\y -> x - y) r$0ow)) row)
    a
"#,
            expect![[r#"
                Materialise `row` in local memory
                entry dist (a: [n][m]f32) : [n][m]f32 =
                  map@group (\row ->
                      let row = to_local row
                      in map@thread (\x -> reduce@seq (+) 0f32 (map@seq (\y -> x - y) row)) row)
                    a
            "#]],
        );
    }

    #[test]
    fn offered_on_the_lambda_parameter() {
        check(
            r#"
entry dist (a: [n][m]f32) : [n][m]f32 =
  map@group (\r$0ow -> map@thread (\x -> x * reduce@seq (+) 0f32 row) row) a
"#,
            expect![[r#"
                Materialise `row` in local memory
                entry dist (a: [n][m]f32) : [n][m]f32 =
                  map@group (\row -> let row = to_local row in map@thread (\x -> x * reduce@seq (+) 0f32 row) row) a
            "#]],
        );
    }

    #[test]
    fn captured_array_read_by_every_iteration() {
        check(
            r#"
entry weights (a: [n][m]f32) (w: [k]f32) : [n][m]f32 =
  map@group (\row ->
      map@thread (\x -> x * reduce@seq (+) 0f32 $0w) row)
    a
"#,
            expect![[r#"
                Materialise `w` in local memory
                entry weights (a: [n][m]f32) (w: [k]f32) : [n][m]f32 =
                  map@group (\row ->
                      let w = to_local w
                      in map@thread (\x -> x * reduce@seq (+) 0f32 w) row)
                    a
            "#]],
        );
    }

    #[test]
    fn own_elements_read_again_by_each_work_item() {
        // Each work-item reads its own element `m` times: coalesced, but the reads add
        // up to more than the row's elements.
        check(
            r#"
-- ==
-- input { [[1f32, 2f32], [3f32, 4f32]] }
entry again (a: [n][m]f32) : [n][m]f32 =
  map@group (\row ->
      map@thread (\i -> loop acc = 0f32 for j < m do acc + r$0ow[i]) (iota m))
    a
"#,
            expect![[r#"
                Materialise `row` in local memory
                -- ==
                -- input { [[1f32, 2f32], [3f32, 4f32]] }
                entry again (a: [n][m]f32) : [n][m]f32 =
                  map@group (\row ->
                      let row = to_local row
                      in map@thread (\i -> loop acc = 0f32 for j < m do acc + row[i]) (iota m))
                    a
            "#]],
        );
    }

    #[test]
    fn not_offered_outside_map_group() {
        check(
            r#"
entry dist (a: [n][m]f32) : [n][m]f32 =
  map (\row -> map (\x -> reduce (+) 0f32 (map (\y -> x - y) r$0ow)) row) a
"#,
            expect![""],
        );
        check(
            r#"
entry dist (a: [n][m]f32) : [n][m]f32 =
  map@group (\row -> map@thread (\x -> x * reduce@seq (+) 0f32 row) row) $0a
"#,
            expect![""],
        );
    }

    #[test]
    fn not_offered_when_already_local() {
        check(
            r#"
entry dist (a: [n][m]f32) : [n][m]f32 =
  map@group (\row ->
      let l = to_local row
      in map@thread (\x -> x * reduce@seq (+) 0f32 $0l) l)
    a
"#,
            expect![""],
        );
        check(
            r#"
entry dist (a: [n][m]f32) : [n][m]f32 =
  map@group (\row ->
      let l = to_local r$0ow
      in map@thread (\x -> x * reduce@seq (+) 0f32 l) l)
    a
"#,
            expect![[r#"
                Materialise `row` in local memory
                entry dist (a: [n][m]f32) : [n][m]f32 =
                  map@group (\row ->
                      let row = to_local row
                      in let l = to_local row
                      in map@thread (\x -> x * reduce@seq (+) 0f32 l) l)
                    a
            "#]],
        );
    }

    #[test]
    fn not_offered_when_each_element_is_read_once() {
        check(
            r#"
entry scale (a: [n][m]f32) : [n][m]f32 =
  map@group (\row -> map@thread (\x -> x * 2f32) r$0ow) a
"#,
            expect![""],
        );
    }

    #[test]
    fn not_offered_when_the_array_is_the_body_result() {
        // The kernel re-reads `row`, but it can also be the body's result: a local
        // array would outlive its work-group, so the edit would not type-check.
        let text = r#"
entry pick (a: [n][m]f32) (c: bool) : [n][m]f32 =
  map@group (\row ->
      if c then row else map@thread (\x -> x * reduce@seq (+) 0f32 r$0ow) row)
    a
"#;
        check(text, expect![""]);
        // It is the type check that refuses it: the kernel does re-read the row.
        let fixture = fixture(text);
        let edited = fixture
            .text("main.weft")
            .replace("      if c", "      let row = to_local row\n      in if c");
        let mut host = AnalysisHost::new();
        let mut change = Change::default();
        change.set_file("main.weft", edited);
        host.apply_change(change);
        let errors: Vec<String> = host
            .analysis()
            .diagnostics("main.weft")
            .unwrap()
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.code.to_owned())
            .collect();
        assert_eq!(errors, ["local-escapes-group"]);
    }

    /// Applies the action at the cursor, then shows the edited file's diagnostics (none),
    /// its kernel's global accesses (the input read once, coalesced) and whether the
    /// action is offered again on the now local row (it is not).
    #[test]
    fn applied_edit_type_checks_and_reads_the_row_once() {
        let text = r#"
-- ==
-- input { [[1f32, 2f32], [3f32, 4f32]] }
entry dist (a: [n][m]f32) : [n][m]f32 =
  map@group (\row ->
      map@thread (\x -> reduce@seq (+) 0f32 (map@seq (\y -> x - y) r$0ow)) row)
    a
"#;
        let fixture = fixture(text);
        let range = FileRange {
            path: "main.weft".to_owned(),
            range: TextRange::empty(fixture.position.offset),
        };
        let assists = fixture.analysis.assists(&range).unwrap();
        let assist = assists.iter().find(|a| a.id == "materialise_in_local_memory").unwrap();
        let mut edited = fixture.text("main.weft").to_owned();
        for edit in assist.edit.edits["main.weft"].iter().rev() {
            edited.replace_range(std::ops::Range::<usize>::from(edit.range), &edit.insert);
        }
        let mut host = AnalysisHost::new();
        let mut change = Change::default();
        change.set_file("main.weft", edited.clone());
        host.apply_change(change);
        let analysis = host.analysis();
        let mut out = String::new();
        for d in analysis.diagnostics("main.weft").unwrap() {
            let _ = writeln!(out, "{}[{}]: {}", d.severity.as_str(), d.code, d.message);
        }
        let db_reads = analysis
            .with_db(|db| {
                let file = db.file("main.weft").unwrap();
                let loc = weft_hir::item_tree(db, file).defs[0].clone();
                let costs =
                    super::entry_costs(db, weft_hir::DefId::new(db, loc)).as_ref().unwrap().clone();
                costs.costs.launches[0]
                    .cost
                    .accesses
                    .iter()
                    .filter(|a| a.space == weft_cost::model::MemSpace::Global)
                    .map(|a| format!("{:?} {} {:?}", a.dir, a.ptr, a.stride))
                    .collect::<Vec<_>>()
            })
            .unwrap();
        for line in db_reads {
            let _ = writeln!(out, "{line}");
        }
        let offset = edited.find("y) row").unwrap() + 3;
        let again = analysis
            .assists(&FileRange {
                path: "main.weft".to_owned(),
                range: TextRange::empty(crate::TextSize::try_from(offset).unwrap()),
            })
            .unwrap()
            .iter()
            .any(|a| a.id == "materialise_in_local_memory");
        let _ = writeln!(out, "offered again: {again}");
        expect![[r#"
            Read a_3 Uniform
            Write buf_8 Elems(I64(1))
            offered again: false
        "#]]
        .assert_eq(&out);
    }
}
