//! Hover: the type (with sizes) of the name or expression under the cursor, in a
//! markdown ```` ```weft ```` block; for defs their scheme and doc comment, for
//! built-ins their scheme and one-line description. An array binding also shows its
//! memory (weft-mem): the block and LMAD as `weft dump --ir mem` prints them, and
//! whether it is a view (no copy) or a fresh allocation with its size in bytes. A
//! built-in's call or any other expression also shows the kernels computing it, with
//! the role it has in each (the strategy the compiler chose, or "fused").

use weft_hir::{
    DefId, DefKind, DefLoc, ExprId, PatId, RootDatabase, Ty, def_scheme, infer, pretty_scheme,
    signature,
};
use weft_mem::{BindingMemory, CopyReason, LeafKind, LeafMemory};
use weft_syntax::TextRange;

use crate::FilePosition;
use crate::classify::{DefData, Definition, classify_at, enclosing_def};
use crate::costs::CostConfig;
use crate::kernels::{HOVER_BUDGET, call_chain, kernels_computing, kernels_materialising};
use crate::memory::{PatMemory, memory_of_pat};
use crate::regions::{describe_region, regions_of};

/// What to show, and the range it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoverResult {
    pub range: TextRange,
    pub markdown: String,
}

pub(crate) fn hover(
    db: &RootDatabase,
    position: &FilePosition,
    costs: &CostConfig,
) -> Option<HoverResult> {
    if crate::apl::is_apl(&position.path) {
        return crate::apl::hover(db, &position.path, position.offset);
    }
    let full = costs.full_hovers;
    let file = db.file(&position.path)?;
    if let Some((token, definition)) = classify_at(db, file, position.offset) {
        let mut parts = describe(db, &definition, costs)?;
        // A built-in's call (`map f xs`): the kernels computing it, and their costs.
        if let Definition::Builtin(_) = definition
            && let Some(data) = enclosing_def(db, file, position.offset)
            && let Some(path) = data.source_map.expr_at(token.text_range())
        {
            parts.gpu.extend(kernel_lines(db, &data, path, Some(costs), full));
        }
        // An entry's name: its cost and predicted time, or what stops its compilation.
        if let Definition::Def(loc) = &definition
            && loc.kind == DefKind::Entry
        {
            if let Some(why) = crate::program::blocked_entry(db, loc) {
                parts.gpu.push(format!("**Kernels**: none: {why}"));
            } else if crate::costs::entry_budget_ok(db, loc)
                && let Some(cost) = crate::costs::entry_section(db, loc, costs)
            {
                parts.gpu.push(cost);
            }
        }
        return Some(HoverResult {
            range: token.text_range(),
            markdown: finish_hover(parts, costs),
        });
    }
    // Any other expression: its type, and the kernels computing it.
    let data = enclosing_def(db, file, position.offset)?;
    let expr = data.source_map.expr_at(TextRange::empty(position.offset))?;
    let range = data.source_map.expr_range(expr)?;
    let ty = infer(db, data.id(db)).expr_ty(expr);
    if ty.is_error() {
        return None;
    }
    let mut parts = Parts { head: code_block(&ty.to_string()), gpu: Vec::new(), doc: None };
    parts.gpu.extend(kernel_lines(db, &data, expr, None, full));
    parts.gpu.extend(space_lines(db, &data, expr, full));
    Some(HoverResult { range, markdown: finish_hover(parts, costs) })
}

/// A hover before it is laid out: the code block (type or scheme), the GPU lines
/// (memory, address space, kernels, prediction, and in the detail view regions and
/// costs) and the documentation.
struct Parts {
    head: String,
    gpu: Vec<String>,
    doc: Option<String>,
}

/// What a short hover leaves to the detail view (the symbolic costs and the regions of
/// what it shows GPU information for), and how to open it in each client; VS Code's
/// makes this line a link that opens it (editors/vscode, `provideHover`).
const DETAILS_HINT: &str =
    "*Derivation: command \"Weft: Show Hover Details\" (Neovim: `:WeftDetails`).*";

/// The lines a short hover may take: an 80x24 float (as Neovim shows it: code fences
/// hidden, each line wrapped at 80 columns).
const FLOAT_LINES: usize = 24;
const FLOAT_COLUMNS: usize = 80;

/// The lines `markdown` takes in an 80-column float.
fn float_lines(markdown: &str) -> usize {
    markdown
        .lines()
        .filter(|l| !l.starts_with("```"))
        .map(|l| l.trim_end().chars().count().div_ceil(FLOAT_COLUMNS).max(1))
        .sum()
}

/// The hover's layout. Short: the code block, then the GPU lines as one paragraph (hard
/// line breaks) with the prediction first, then the documentation, cut to what fits the
/// float with the pointer to the detail view. Full (the detail view): the code block,
/// the documentation, then each GPU section as a paragraph. The sections the settings
/// leave out are removed in both.
fn finish_hover(parts: Parts, costs: &CostConfig) -> String {
    let gpu: Vec<String> = parts
        .gpu
        .iter()
        .map(|g| without_hidden_sections(g, costs))
        .filter(|g| !g.is_empty())
        .collect();
    if costs.full_hovers {
        let mut out = parts.head;
        for part in parts.doc.iter().chain(&gpu) {
            out.push_str("\n\n");
            out.push_str(part);
        }
        return out;
    }
    let mut lines: Vec<&str> =
        gpu.iter().flat_map(|g| g.lines()).filter(|l| !l.is_empty()).collect();
    // The prediction first: it is what a float must not cut off.
    lines.sort_by_key(|l| !l.starts_with("**Predicted**"));
    let mut out = parts.head;
    if !lines.is_empty() {
        out.push_str("\n\n");
        out.push_str(&lines.join("  \n"));
    }
    let hint = (!lines.is_empty()).then_some(DETAILS_HINT);
    if let Some(doc) = parts.doc {
        let left = FLOAT_LINES
            .saturating_sub(float_lines(&out) + 1)
            .saturating_sub(hint.map_or(0, |h| float_lines(h) + 1));
        out.push_str("\n\n");
        out.push_str(&fit_lines(&doc, left));
    }
    if let Some(hint) = hint {
        out.push_str("\n\n");
        out.push_str(hint);
    }
    out
}

/// `text` cut to its lines that fit `left` float lines, with `…` when cut.
fn fit_lines(text: &str, left: usize) -> String {
    if float_lines(text) <= left {
        return text.to_owned();
    }
    let mut kept: Vec<&str> = Vec::new();
    for line in text.lines() {
        if float_lines(&kept.join("\n")) + float_lines(line) + 1 > left {
            break;
        }
        kept.push(line);
    }
    while kept.last().is_some_and(|l| l.trim().is_empty()) {
        kept.pop();
    }
    let mut out = kept.join("\n");
    out.push_str(if out.is_empty() { "…" } else { " …" });
    out
}

/// `markdown` without the lines of the sections `costs.hover_sections` leaves out.
fn without_hidden_sections(markdown: &str, costs: &CostConfig) -> String {
    let hidden: Vec<&str> = crate::costs::HoverSection::ALL
        .into_iter()
        .filter(|s| !costs.hover_sections.contains(s))
        .map(crate::costs::HoverSection::label)
        .collect();
    if hidden.is_empty() {
        return markdown.to_owned();
    }
    let paragraphs: Vec<String> = markdown
        .split("\n\n")
        .map(|p| {
            let kept: Vec<&str> =
                p.lines().filter(|l| !hidden.iter().any(|h| l.starts_with(h))).collect();
            kept.join("\n")
        })
        .filter(|p| !p.is_empty())
        .collect();
    paragraphs.join("\n\n")
}

/// `**Address space**: `local` (`t_3`) — why`, per kernel that materialises the value
/// of `expr` in its own memory (address-space inference, seed 000): one line each in the
/// detail view, the first one (and how many more) in a short hover.
fn space_lines(db: &RootDatabase, data: &DefData, expr: ExprId, full: bool) -> Vec<String> {
    let chain = call_chain(&data.body, expr);
    let search = kernels_materialising(db, &data.loc, &|e| chain.contains(&e), HOVER_BUDGET);
    let mut lines: Vec<String> = Vec::new();
    let mut kernels: Vec<&str> = Vec::new();
    let several = search.uses.iter().any(|u| u.entry != search.uses[0].entry);
    // Kernels for hovers are compiled without positions (so moving text recompiles
    // nothing): the line comes from this def's source map.
    let text = data.loc.file.text(db);
    for use_ in &search.uses {
        let entry = if several { format!(" (entry `{}`)", use_.entry) } else { String::new() };
        let at = data
            .source_map
            .expr_range(use_.origin.expr)
            .and_then(|r| text.get(..usize::from(r.start())))
            .map(|before| format!(" (line {})", before.matches('\n').count() + 1))
            .unwrap_or_default();
        let line =
            format!("**Address space**: {}{at}, in kernel `{}`{entry}", use_.role, use_.kernel);
        if !lines.contains(&line) {
            lines.push(line);
        }
        if !kernels.contains(&use_.kernel.as_str()) {
            kernels.push(&use_.kernel);
        }
    }
    if full {
        lines.truncate(MAX_KERNEL_LINES);
        return lines;
    }
    match lines.first() {
        Some(first) if kernels.len() > 1 => {
            vec![format!("{first} (and {} more kernels)", kernels.len() - 1)]
        }
        Some(first) => vec![first.clone()],
        None => Vec::new(),
    }
}

/// How many kernel lines a detail view shows at most.
const MAX_KERNEL_LINES: usize = 4;

/// How many kernel lines a short hover shows at most.
const MAX_SHORT_KERNEL_LINES: usize = 2;

/// The kernels computing `expr` (or the call it is the function of); nothing when no
/// kernel computes it (a file with errors, a def no entry uses). This compiles the two
/// smallest entries using the def (once per edit of a body, never for diagnostics),
/// none too large to compile in a few milliseconds.
///
/// Short (`!full`): the prediction of the kernels of the first entry that run at its
/// prediction's sizes, then their `**Kernel**: `NAME` — ROLE` lines (at most two), then
/// how many more there are (other versions, other entries). Full: one line per kernel
/// (at most four), with the entry when they come from several and the condition of a
/// version, then with `costs`, each kernel's launch cost and predicted time.
fn kernel_lines(
    db: &RootDatabase,
    data: &DefData,
    expr: ExprId,
    costs: Option<&CostConfig>,
    full: bool,
) -> Vec<String> {
    let chain = call_chain(&data.body, expr);
    let search = kernels_computing(db, &data.loc, &|e| chain.contains(&e), HOVER_BUDGET);
    if search.uses.is_empty()
        && let Some((entry, size)) = search.too_large.first()
    {
        return vec![format!(
            "**Kernel**: not compiled for a hover: entry `{entry}` is too large ({size} core \
             expressions once its calls are inlined)"
        )];
    }
    // Each kernel once: (entry, kernel, role, its index, its file).
    let mut kernels: Vec<(&str, &str, &str, usize, weft_hir::SourceFile)> = Vec::new();
    for use_ in &search.uses {
        let line = (
            use_.entry.as_str(),
            use_.kernel.as_str(),
            use_.role.as_str(),
            use_.kernel_idx,
            use_.file,
        );
        if !kernels.iter().any(|k| (k.0, k.1, k.2) == (line.0, line.1, line.2)) {
            kernels.push(line);
        }
    }
    let Some(&(first_entry, ..)) = kernels.first() else { return Vec::new() };
    let several_entries = kernels.iter().any(|k| k.0 != first_entry);
    let condition = |k: &(&str, &str, &str, usize, weft_hir::SourceFile)| {
        crate::costs::kernel_condition(db, k.4, k.0, k.3)
    };
    let line = |k: &(&str, &str, &str, usize, weft_hir::SourceFile), with_entry: bool| {
        let entry = if with_entry { format!(" (entry `{}`)", k.0) } else { String::new() };
        let when = match condition(k) {
            Some(condition) => format!(" (when {condition})"),
            None => String::new(),
        };
        format!("**Kernel**: `{}`{entry}{when} — {}", k.1, k.2)
    };
    if full {
        let mut out: Vec<String> =
            kernels.iter().take(MAX_KERNEL_LINES).map(|k| line(k, several_entries)).collect();
        if kernels.len() > MAX_KERNEL_LINES {
            out.push(format!("**Kernel**: … and {} more", kernels.len() - MAX_KERNEL_LINES));
        }
        if let Some(config) = costs {
            let mut cost_lines: Vec<String> = Vec::new();
            for k in &kernels {
                if cost_lines.len() >= MAX_KERNEL_LINES {
                    break;
                }
                if let Some(cost) = crate::costs::kernel_line(db, k.4, k.0, k.3, config)
                    && !cost_lines.contains(&cost)
                {
                    cost_lines.push(cost);
                }
            }
            out.extend(cost_lines);
        }
        return out;
    }
    // The first entry's kernels that run at its prediction's sizes (all of its kernels
    // when none is known to).
    let of_first: Vec<&(&str, &str, &str, usize, weft_hir::SourceFile)> =
        kernels.iter().filter(|k| k.0 == first_entry).collect();
    let running: Vec<&(&str, &str, &str, usize, weft_hir::SourceFile)> = of_first
        .iter()
        .copied()
        .filter(|k| {
            costs.is_none_or(|config| {
                crate::costs::kernel_runs(db, k.4, k.0, k.3, config) != Some(false)
            })
        })
        .collect();
    let running = if running.is_empty() { of_first } else { running };
    let mut out = Vec::new();
    if let Some(config) = costs {
        let idxs: Vec<usize> = running.iter().map(|k| k.3).collect();
        if let Some(prediction) =
            crate::costs::kernels_prediction(db, running[0].4, first_entry, &idxs, config)
        {
            out.push(if several_entries {
                prediction.replacen(
                    "**Predicted**:",
                    &format!("**Predicted** (entry `{first_entry}`):"),
                    1,
                )
            } else {
                prediction
            });
        }
    }
    out.extend(running.iter().take(MAX_SHORT_KERNEL_LINES).map(|k| line(k, false)));
    let more = kernels.len() - running.len().min(MAX_SHORT_KERNEL_LINES);
    if more > 0 {
        let mut others: Vec<String> = Vec::new();
        if kernels.iter().any(|k| k.0 == first_entry && !running.contains(&k)) {
            others.push("versions for other sizes".to_owned());
        }
        let mut entries: Vec<&str> =
            kernels.iter().map(|k| k.0).filter(|e| *e != first_entry).collect();
        entries.dedup();
        if !entries.is_empty() {
            let list: Vec<String> = entries.iter().map(|e| format!("`{e}`")).collect();
            others.push(format!(
                "entr{} {}",
                if list.len() == 1 { "y" } else { "ies" },
                list.join(", ")
            ));
        }
        let why =
            if others.is_empty() { String::new() } else { format!(": {}", others.join("; ")) };
        out.push(format!("**Kernel**: … and {more} more{why} (the detail view lists them)"));
    }
    out
}

/// A hover's parts for what the cursor names: its scheme or type, its documentation,
/// and for an array binding its memory, address space and (in the detail view) regions.
fn describe(db: &RootDatabase, definition: &Definition, costs: &CostConfig) -> Option<Parts> {
    let full = costs.full_hovers;
    match definition {
        Definition::Local { def, pat } => {
            let id = DefId::new(db, def.clone());
            let (body, _) = weft_hir::body_with_source_map(db, id);
            let weft_hir::Pat::Bind { name } = &body.pats[*pat] else { return None };
            let ty = infer(db, id).pat_ty(*pat);
            let mut parts =
                Parts { head: code_block(&format!("{name} : {ty}")), gpu: Vec::new(), doc: None };
            if contains_array(&ty)
                && let Some(memory) = memory_section(db, def, *pat)
            {
                parts.gpu.push(memory);
            }
            // An entry's array input: the address space its kernels read it in.
            let param = body.params.contains(pat).then_some(name.as_str());
            if contains_array(&ty)
                && def.kind == DefKind::Entry
                && let Some(name) = param
                && crate::costs::entry_budget_ok(db, def)
                && let Some(space) = crate::costs::input_space(db, def, name)
            {
                parts.gpu.push(space);
            }
            // A let-bound array materialised inside a kernel: its address space.
            let value = body.exprs.iter().find_map(|(_, e)| match e {
                weft_hir::Expr::Let { pat: p, value, .. } if p == pat => Some(*value),
                _ => None,
            });
            if contains_array(&ty)
                && let Some(value) = value
            {
                parts.gpu.extend(space_lines(db, &DefData::new(db, def), value, full));
            }
            // Its region: world, size, lifetime and transfers (the detail view's).
            if contains_array(&ty)
                && full
                && let Some(regions) = region_section(db, def, body, value, param)
            {
                parts.gpu.push(regions);
            }
            Some(parts)
        }
        Definition::SizeParam { name, def } => {
            let sig = signature(db, DefId::new(db, def.clone()));
            let existential = matches!(
                &sig.ret,
                Some(weft_hir::TypeRef::Exist(names, _)) if names.contains(name)
            );
            let what = if existential {
                "existential size: the result's, known only when it runs (each use of the \
                 result has its own)"
            } else {
                "size parameter"
            };
            Some(Parts {
                head: code_block(&format!("{name} : i64")),
                gpu: Vec::new(),
                doc: Some(what.to_owned()),
            })
        }
        Definition::Def(loc) => {
            let id = DefId::new(db, loc.clone());
            let scheme = def_scheme(db, id);
            let sig = signature(db, id);
            let header = match loc.kind {
                DefKind::TypeAlias => match &sig.alias {
                    Some(_) => format!("type {} = {}", loc.name, scheme.ret),
                    None => format!("type {}", loc.name),
                },
                DefKind::Def => format!("def {}", pretty_scheme(loc.name.as_str(), scheme)),
                DefKind::Entry => format!("entry {}", pretty_scheme(loc.name.as_str(), scheme)),
            };
            Some(Parts {
                head: code_block(&header),
                gpu: Vec::new(),
                doc: sig.doc.as_ref().map(|d| d.trim().to_owned()),
            })
        }
        Definition::Builtin(builtin) => Some(Parts {
            head: code_block(&pretty_scheme(&builtin.name(), &builtin.scheme())),
            gpu: Vec::new(),
            doc: Some(builtin.description().to_owned()),
        }),
    }
}

/// `**Region**: ...`, one line per region holding the binding's value (a let's value,
/// or an entry's parameter), at most [`MAX_KERNEL_LINES`].
fn region_section(
    db: &RootDatabase,
    def: &DefLoc,
    body: &weft_hir::Body,
    value: Option<ExprId>,
    param: Option<&str>,
) -> Option<String> {
    let chain = value.map(|v| call_chain(body, v)).unwrap_or_default();
    let found = regions_of(db, def, &|e| chain.contains(&e), param, HOVER_BUDGET);
    let lines: Vec<String> =
        found.iter().take(MAX_KERNEL_LINES).map(|f| describe_region(db, def, f)).collect();
    (!lines.is_empty()).then(|| lines.join("\n\n"))
}

fn contains_array(ty: &Ty) -> bool {
    match ty {
        Ty::Array { .. } => true,
        Ty::Tuple(items) => items.iter().any(contains_array),
        Ty::Record(fields) => fields.iter().any(|(_, t)| contains_array(t)),
        Ty::Scalar(_) | Ty::Fn { .. } | Ty::Param(_) | Ty::Var(_) | Ty::Error => false,
    }
}

/// `**Memory**: `mem_0 -> {offset: ..}`, view of `xs` (no copy)`, one line per array
/// of a tuple; nothing when the file has no memory layout (it has errors).
fn memory_section(db: &RootDatabase, def: &DefLoc, pat: PatId) -> Option<String> {
    let found = match memory_of_pat(db, def, pat) {
        PatMemory::Unknown => return None,
        PatMemory::NotReached => {
            if def.kind == DefKind::Entry
                && let Some(why) = crate::program::blocked_entry(db, def)
            {
                return Some(format!("**Memory**: not laid out: {why}"));
            }
            // An entry an error stops may use it: nothing is known.
            if crate::program::has_blocked_entries(db, def.file) {
                return None;
            }
            return Some(format!(
                "**Memory**: not laid out: no entry of this file uses `{}` (memory is laid out \
                 per use, after specialisation)",
                def.name
            ));
        }
        PatMemory::Found(found) => found,
    };
    let first: &BindingMemory = found.first()?;
    let mut out = match first.leaves.as_slice() {
        [] => return None,
        [leaf] => format!("**Memory**: {}", describe_leaf(db, leaf)),
        leaves => {
            let mut out = "**Memory**:".to_owned();
            for leaf in leaves {
                out.push_str("\n- ");
                out.push_str(&describe_leaf(db, leaf));
            }
            out
        }
    };
    if found.len() > 1 {
        out.push_str(&format!(
            "\n\n(one of {} layouts: `{}` is specialised or inlined per use)",
            found.len(),
            def.name
        ));
    }
    Some(out)
}

fn describe_leaf(db: &RootDatabase, leaf: &LeafMemory) -> String {
    let bytes = |b: &Option<String>| {
        b.as_deref()
            .map_or(" (its size is known at run time)".to_owned(), |b| format!(": {b} bytes"))
    };
    let how = match leaf.kind {
        LeafKind::Input => "the entry's input (no copy)".to_owned(),
        LeafKind::View => match &leaf.owner {
            Some(owner) => format!("view of `{owner}` (no copy)"),
            None => "view (no copy)".to_owned(),
        },
        LeafKind::Fresh => {
            let mut how = format!("fresh allocation{}", bytes(&leaf.bytes));
            if !leaf.expanded.is_empty() {
                how.push_str(&format!(" ({})", leaf.expanded.join(", ")));
            }
            how
        }
        LeafKind::Copy => {
            let mut how = format!("fresh allocation (forced copy){}", bytes(&leaf.bytes));
            // A `with` that copies says why (the update could have been in place).
            if let Some(reason @ CopyReason::UpdateOfLiveArray { .. }) = &leaf.copy_reason {
                how.push_str(&format!("; {}", reason.message()));
            }
            if let Some(position) =
                leaf.used_later.as_ref().and_then(|o| weft_core::origin_position(db, o))
            {
                how.push_str(&format!(" (at {position})"));
            }
            how
        }
        LeafKind::InPlace => match &leaf.owner {
            Some(owner) => format!("in place: the update writes into `{owner}`'s memory (no copy)"),
            None => "in place: the update writes into the array's memory (no copy)".to_owned(),
        },
        LeafKind::Existential => {
            "memory chosen at run time (by the caller, a branch, a loop or a call)".to_owned()
        }
    };
    format!("`{} -> {}`, {how}", leaf.block, leaf.lmad)
}

fn code_block(code: &str) -> String {
    format!("```weft\n{code}\n```")
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::fixture;

    fn check(text: &str, expect: Expect) {
        let fixture = fixture(text);
        let actual = match fixture.analysis.hover_details(&fixture.position).unwrap() {
            Some(hover) => format!(
                "{}\n{}\n",
                fixture.show(&fixture.position.path, hover.range),
                hover.markdown
            ),
            None => "no hover\n".to_owned(),
        };
        expect.assert_eq(&actual);
    }

    #[test]
    fn small_type_builtins_and_prelude() {
        check(
            r#"
def f (p: u8) : u8 = u8.high$0est - p
"#,
            expect![[r#"
                main.weft:24..31 "highest"
                ```weft
                u8.highest : u8
                ```

                the largest value of the type
            "#]],
        );
        check(
            r#"
def f (xs: [n]f16) : f16 = f16.su$0m xs
"#,
            expect![[r#"
                main.weft:31..34 "sum"
                ```weft
                def f16.sum : [n]f16 -> f16
                ```

                The sum of the elements (0 for an empty array).
            "#]],
        );
        check(
            r#"
def f (y: f32) (x: f32) : f32 = f32.ata$0n2 y x
"#,
            expect![[r#"
                main.weft:36..41 "atan2"
                ```weft
                f32.atan2 : f32 -> f32 -> f32
                ```

                `atan2 y x`: the angle of the point (x, y), in [-pi, pi]
            "#]],
        );
    }

    /// The `hoverSections` setting leaves the other sections out, of the hover and of
    /// the detail view.
    #[test]
    fn settings_choose_the_sections() {
        let src = "entry f (xs: [n]f32) : [n]f32 = map (\\x -> x * 2f32) xs\n";
        let mut host = crate::AnalysisHost::new();
        let mut change = crate::Change::default();
        change.set_file("main.weft", src);
        host.apply_change(change);
        let offset = u32::try_from(src.find("map").unwrap()).unwrap();
        let position = crate::FilePosition { path: "main.weft".to_owned(), offset: offset.into() };
        let details = |host: &crate::AnalysisHost| {
            host.analysis().hover_details(&position).unwrap().unwrap().markdown
        };
        let all = details(&host);
        assert!(all.contains("**Kernel**") && all.contains("**Cost** of"), "{all}");
        let sections = vec![crate::HoverSection::Kernels];
        host.set_cost_config(crate::CostConfig { hover_sections: sections, ..Default::default() });
        expect![[r#"
            ```weft
            map : (a -> r) -> [n]a -> [n]r
            ```

            applies a function to every element

            **Kernel**: `f_map_0` — @grid: one work-item per run of 4 elements"#]]
        .assert_eq(&details(&host));
    }

    /// A short hover: the type, then the prediction (interval, device and why, sizes and
    /// where they come from) and the kernel on lines of their own, then the
    /// documentation, cut to fit an 80x24 float, then where the derivation is.
    #[test]
    fn a_short_hover_puts_the_prediction_first_and_fits_a_float() {
        let mut text = String::from("-- | Scales.\n--\n");
        for i in 0..40 {
            text.push_str(&format!("-- Line {i} of a long documentation comment.\n"));
        }
        text.push_str("-- ==\n-- random input { [4096]f32 }\n");
        text.push_str("entry sc$0ale (xs: [n]f32) : [n]f32 = map (\\x -> x * 2f32) xs\n");
        let fixture = fixture(&text);
        let hover = fixture.analysis.hover(&fixture.position).unwrap().unwrap().markdown;
        expect![[r#"
            ```weft
            entry scale : [n]f32 -> [n]f32
            ```

            **Predicted**: 7.45 µs (error not measured) for its kernels (+ 4.79 µs of transfers) on `NVIDIA H100 80GB HBM3` (the default profile) at n = 4096 (the test block's largest `random input`); memory-bound

            Scales.

            Line 0 of a long documentation comment.
            Line 1 of a long documentation comment.
            Line 2 of a long documentation comment.
            Line 3 of a long documentation comment.
            Line 4 of a long documentation comment.
            Line 5 of a long documentation comment.
            Line 6 of a long documentation comment.
            Line 7 of a long documentation comment.
            Line 8 of a long documentation comment.
            Line 9 of a long documentation comment.
            Line 10 of a long documentation comment.
            Line 11 of a long documentation comment.
            Line 12 of a long documentation comment. …

            *Derivation: command "Weft: Show Hover Details" (Neovim: `:WeftDetails`).*"#]]
        .assert_eq(&hover);
        assert!(super::float_lines(&hover) <= 24);
        // On the map: its kernel's prediction and its strategy, on lines of their own.
        let at = text.find("map").unwrap();
        let position = crate::FilePosition {
            path: "main.weft".to_owned(),
            offset: u32::try_from(at - "$0".len()).unwrap().into(),
        };
        let hover = fixture.analysis.hover(&position).unwrap().unwrap().markdown;
        expect![[r#"
            ```weft
            map : (a -> r) -> [n]a -> [n]r
            ```

            **Predicted**: 7.45 µs (error not measured) per launch of its kernel on `NVIDIA H100 80GB HBM3` (the default profile) at n = 4096 (the test block's largest `random input`); memory-bound  
            **Kernel**: `scale_map_0` — @grid: one work-item per run of 4 elements

            applies a function to every element

            *Derivation: command "Weft: Show Hover Details" (Neovim: `:WeftDetails`).*"#]]
        .assert_eq(&hover);
    }

    /// An input every work-item reads alike, of a size known when compiling, is in
    /// constant memory: its hover says so, on one line.
    #[test]
    fn an_input_in_constant_memory_says_so() {
        let fixture = fixture(
            r#"
entry horner8 (c$0: [8]f32) (xs: [n]f32) : [n]f32 =
  map (\x -> loop acc = 0f32 for i < 8 do acc * x + c[i]) xs
"#,
        );
        let hover = fixture.analysis.hover(&fixture.position).unwrap().unwrap().markdown;
        let line = hover.lines().find(|l| l.starts_with("**Address space**")).unwrap_or(&hover);
        expect!["**Address space**: constant memory in kernel `horner8_map_0` (a small input every work-item reads alike: `__constant`)"]
            .assert_eq(line);
    }

    #[test]
    fn local_shows_type_with_sizes() {
        check(
            r#"
def f [n] (xs: [n]f32) : [n]f32 =
  let ys = map (\x -> x * 2f32) xs
  in y$0s
"#,
            expect![[r#"
                main.weft:74..76 "ys"
                ```weft
                ys : [n]f32
                ```

                **Memory**: not laid out: no entry of this file uses `f` (memory is laid out per use, after specialisation)
            "#]],
        );
    }

    #[test]
    fn existential_sizes_show_as_unknown_sizes() {
        check(
            r#"
def evens (xs: [n]i64) : ?[k].[k]i64 = filter (\x -> x % 2 == 0) xs
entry main (xs: [n]i64) : []i64 =
  let e = ev$0ens xs
  in e
"#,
            expect![[r#"
                main.weft:112..117 "evens"
                ```weft
                def evens : [n]i64 -> ?[k].[k]i64
                ```
            "#]],
        );
        check(
            r#"
def evens (xs: [n]i64) : ?[k].[k]i64 = filter (\x -> x % 2 == 0) xs
entry main (xs: [n]i64) : []i64 =
  let e = evens xs
  in e$0
"#,
            expect![[r#"
                main.weft:126..127 "e"
                ```weft
                e : [?1]i64
                ```

                **Memory**: `mem_1 -> {offset: 0; strides: [1]; shape: [?]}`, memory chosen at run time (by the caller, a branch, a loop or a call)
            "#]],
        );
        check(
            r#"
entry main (xs: []i64) : i64 = length x$0s
"#,
            expect![[r#"
                main.weft:38..40 "xs"
                ```weft
                xs : [#1]i64
                ```

                **Memory**: `mem_0 -> {offset: 0; strides: [1]; shape: [#1]}`, the entry's input (no copy)

                **Region**: `r1` (`xs`) on the device, `8*#1` bytes (`#1` × i64), live before step 1 of the plan (no kernel of this file uses it); uploaded from the host (`8*#1` bytes) (entry `main`)
            "#]],
        );
    }

    #[test]
    fn an_existential_size_name_hovers_as_a_size() {
        check(
            r#"
def evens (xs: [n]i64) : ?[k].[k$0]i64 = filter (\x -> x % 2 == 0) xs
"#,
            expect![[r#"
                main.weft:31..32 "k"
                ```weft
                k : i64
                ```

                existential size: the result's, known only when it runs (each use of the result has its own)
            "#]],
        );
    }

    #[test]
    fn def_shows_scheme_and_doc() {
        check(
            r#"
-- | Doubles every element.
def double [n] (xs: [n]f32) = map (\x -> x * 2f32) xs
entry main (xs: [3]f32) : [3]f32 = dou$0ble xs
"#,
            expect![[r#"
                main.weft:117..123 "double"
                ```weft
                def double : [n]f32 -> [n]f32
                ```

                Doubles every element.
            "#]],
        );
    }

    #[test]
    fn builtin_shows_scheme_and_description() {
        check(
            r#"
entry main (xs: [3]f32) : f32 = red$0uce (+) 0f32 xs
"#,
            expect![[r#"
                main.weft:32..38 "reduce"
                ```weft
                reduce : (a -> a -> a) -> a -> [n]a -> a
                ```

                combines all elements with an associative operator and its neutral element

                **Kernel**: `main_reduce_partials_0` — @grid: multi-stage reduction (second stage)

                **Kernel**: `main_reduce_total_1` — @grid: multi-stage reduction (second stage)

                **Cost** of `main_reduce_partials_0` (entry `main`): work `6142`, span `38`; global `1028` bytes, local `4088` bytes; predicted 5.55 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)

                **Cost** of `main_reduce_total_1` (entry `main`): work `4094`, span `30`; global `1028` bytes, local `4088` bytes; predicted 5.55 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)
            "#]],
        );
    }

    #[test]
    fn reduce_by_index_shows_its_atomic_kernel() {
        check(
            r#"
entry h (is: [n]i64) (vs: [n]i32) : [4]i32 = reduce_by_$0index (replicate 4 0) (+) 0 is vs
"#,
            expect![[r#"
                main.weft:45..60 "reduce_by_index"
                ```weft
                reduce_by_index : [m]a -> (a -> a -> a) -> a -> [n]i64 -> [n]a -> [m]a
                ```

                combines each value into the bin its index names, with an associative and commutative operator; out-of-range indices are ignored

                **Kernel**: `h_hist_1` — @grid: one work-item per value, an atomic add into its work-group's bins in local memory, then into the bins

                **Kernel**: `h_hist_2` — @grid: one work-item per value, an atomic add into its bin

                **Cost** of `h_hist_1` (entry `h`): work `4*max(1, min(⌈n/256⌉, 1024)) + 11*n`, span `13*⌈n/(max(256*max(1, min(⌈n/256⌉, 1024)), 1))⌉ + 5`; global `12*n` bytes, local `48*max(1, min(⌈n/256⌉, 1024))` bytes; predicted 13.8 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) at n = 1048576 (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)
            "#]],
        );
    }

    #[test]
    fn update_shows_its_type_and_the_copy() {
        check(
            r#"
entry u (xs: [n]f32) (i: i64) : [n]f32 = xs wi$0th [i] = 1
"#,
            expect![[r#"
                main.weft:41..56 "xs with [i] = 1"
                ```weft
                [n]f32
                ```

                **Kernel**: `u_update_copy_0` — @grid: one work-item per element

                **Kernel**: `u_update_1` — a copy, then one work-item writes
            "#]],
        );
    }

    #[test]
    fn expression_shows_its_type() {
        check(
            r#"
entry main (xs: [3]f32) : [3]f32 = map (\x -> x $0+ 1f32) xs
"#,
            expect![[r#"
                main.weft:46..54 "x + 1f32"
                ```weft
                f32
                ```

                **Kernel**: `main_map_0` — computed in each work-item
            "#]],
        );
    }

    #[test]
    fn works_with_type_errors_elsewhere() {
        check(
            r#"
def broken (x: i32) : i32 = x + true
def ok (x: i64) : i64 = let y = x * 2 in y$0
def also_broken = let in
"#,
            expect![[r#"
                main.weft:78..79 "y"
                ```weft
                y : i64
                ```
            "#]],
        );
    }

    #[test]
    fn non_ascii_text_before_cursor() {
        check(
            r#"
-- | Größe: ∑ 😀
def sum (xs: [n]f32) : f32 = reduce (+) 0f32 x$0s
"#,
            expect![[r#"
                main.weft:68..70 "xs"
                ```weft
                xs : [n]f32
                ```

                **Memory**: not laid out: no entry of this file uses `sum` (memory is laid out per use, after specialisation)
            "#]],
        );
    }

    #[test]
    fn transposed_binding_is_a_view_of_its_operand() {
        check(
            r#"
entry f (a: [n][m]i32) : [m][n]i32 =
  let b$0 = transpose a
  in map (\r -> map (+1) r) b
"#,
            expect![[r#"
                main.weft:43..44 "b"
                ```weft
                b : [m][n]i32
                ```

                **Memory**: `mem_0 -> {offset: 0; strides: [1, m]; shape: [m, n]}`, view of `a` (no copy)
            "#]],
        );
    }

    #[test]
    fn mapped_binding_is_a_fresh_allocation_in_bytes() {
        check(
            r#"
entry f (a: [n][m]f32) : [n][m]f32 =
  let b$0 = map (\r -> map (\x -> x * 2f32) r) a
  in b
"#,
            expect![[r#"
                main.weft:43..44 "b"
                ```weft
                b : [n][m]f32
                ```

                **Memory**: `mem_1 -> {offset: 0; strides: [m, 1]; shape: [n, m]}`, fresh allocation: 4*n*m bytes

                **Region**: `r2` (`outer`) on the device, `4*m*n` bytes (`m*n` × f32), live line 2 (plan: from step 2 to the read-back); read back to the host (`4*m*n` bytes); used by `f_rows_staged_0`, `f_map_1` (entry `f`)

                **Region**: `r4` (`intra`) on the device, `4*m*n` bytes (`m*n` × f32), live line 2 (plan: from step 13 to the read-back); used by `f_group_3` (entry `f`)
            "#]],
        );
    }

    #[test]
    fn flattened_transpose_is_a_forced_copy() {
        check(
            r#"
entry f (a: [n][m]i32) : [m*n]i32 =
  let fl$0at = flatten (transpose a)
  in flat
"#,
            expect![[r#"
                main.weft:42..46 "flat"
                ```weft
                flat : [m*n]i32
                ```

                **Memory**: `mem_1 -> {offset: 0; strides: [1]; shape: [n*m]}`, fresh allocation (forced copy): 4*n*m bytes

                **Region**: `r2` (`flat`) on the device, `4*m*n` bytes (`m*n` × i32), live line 2 (plan: from step 1 to the read-back); read back to the host (`4*m*n` bytes); used by `f_flatten_copy_0` (entry `f`)
            "#]],
        );
    }

    /// The hover of the binding at `$0` in `src`, its memory line only.
    fn memory_line(src: &str) -> String {
        let fixture = fixture(src);
        let hover = fixture.analysis.hover(&fixture.position).unwrap().unwrap();
        hover.markdown.lines().find(|l| l.starts_with("**Memory**")).unwrap_or_default().to_owned()
    }

    #[test]
    fn updates_say_whether_they_are_in_place_or_why_they_copy() {
        let in_place = memory_line(
            "entry f (n: i64) : [n]i64 =
  loop acc = replicate n 0 for i < n do
    let u$0pdated = acc with [i] = i
    in updated",
        );
        assert!(in_place.contains("in place: the update writes into `acc`'s memory"), "{in_place}");
        let copied = memory_line(
            "entry f (n: i64) : [n]i64 =
  loop acc = replicate n 0 for i < n do
    let u$0pdated = acc with [i] = i
    in map2 (+) updated acc",
        );
        assert!(copied.contains("forced copy"), "{copied}");
        assert!(copied.contains("still used after the update (at main.weft:4:"), "{copied}");
    }

    #[test]
    fn entry_parameter_is_the_input() {
        check(
            r#"
entry f (a$0: [n][m]i32) : [n*m]i32 = flatten a
"#,
            expect![[r#"
                main.weft:9..10 "a"
                ```weft
                a : [n][m]i32
                ```

                **Memory**: `mem_0 -> {offset: 0; strides: [m, 1]; shape: [n, m]}`, the entry's input (no copy)

                **Region**: `r1` (`a`) on the device, `4*m*n` bytes (`m*n` × i32), live from the upload to the read-back of the plan (no kernel of this file uses it); uploaded from the host (`4*m*n` bytes); read back to the host (`4*m*n` bytes) (entry `f`)
            "#]],
        );
    }

    #[test]
    fn scanned_binding_shows_its_region_and_lifetime_in_lines() {
        check(
            r#"
entry f (xs: [n]f32) : f32 =
  let y$0s = scan (+) 0f32 xs
  let m = reduce (+) 0f32 ys
  in reduce (+) 0f32 (map (\y -> y * m) ys)
"#,
            expect![[r#"
                main.weft:35..37 "ys"
                ```weft
                ys : [n]f32
                ```

                **Memory**: `mem_1 -> {offset: 0; strides: [1]; shape: [n]}`, fresh allocation: 4*n bytes

                **Region**: `r2` (`ys`) on the device, `4*n` bytes (`n` × f32), live lines 2–4 (plan: from step 1 to step 15); used by `f_scan_tiles_2`, `f_reduce_partials_3`, `f_reduce_partials_5` (entry `f`)

                **Region**: `r3` (`totals`) on the device, `4*max(1, min(((n + 255) / 256), 1024))` bytes (`max(1, min(((n + 255) / 256), 1024))` × f32), live line 2 (plan: from step 4 to step 7); used by `f_scan_chunk_totals_0`, `f_scan_prefixes_1`, `f_scan_tiles_2` (entry `f`)
            "#]],
        );
    }

    #[test]
    fn lambda_parameter_is_a_row_view() {
        check(
            r#"
entry f (a: [n][m]f32) : [n]f32 = map (\r$0 -> reduce (+) 0f32 r) a
"#,
            expect![[r#"
                main.weft:40..41 "r"
                ```weft
                r : [m]f32
                ```

                **Memory**: `mem_0 -> {offset: m*gtid; strides: [1]; shape: [m]}`, view of `a` (no copy)
            "#]],
        );
    }

    #[test]
    fn tuple_pattern_shows_each_component() {
        check(
            r#"
entry f (xs: [n]i32) (ys: [n]f32) : [n]f32 =
  let (a, b$0) = unzip (reverse (zip xs ys))
  in b
"#,
            expect![[r#"
                main.weft:55..56 "b"
                ```weft
                b : [n]f32
                ```

                **Memory**: `mem_1 -> {offset: n - 1; strides: [-1]; shape: [n]}`, view of `ys` (no copy)
            "#]],
        );
    }

    #[test]
    fn use_of_an_alias_shows_the_aliased_memory() {
        check(
            r#"
entry f (xs: [n]i32) : [n]i32 =
  let ys = reverse xs
  let zs = ys
  in z$0s
"#,
            expect![[r#"
                main.weft:73..75 "zs"
                ```weft
                zs : [n]i32
                ```

                **Memory**: `mem_0 -> {offset: n - 1; strides: [-1]; shape: [n]}`, view of `xs` (no copy)
            "#]],
        );
    }

    #[test]
    fn def_parameter_memory_is_chosen_by_the_caller() {
        check(
            r#"
def firsts [n] [m] (a$0: [n][m]i32) : [n]i32 = map (\r -> r[0]) a
entry f (a: [n][m]i32) : [m]i32 = firsts (transpose a)
"#,
            expect![[r#"
                main.weft:20..21 "a"
                ```weft
                a : [n][m]i32
                ```

                **Memory**: `mem_0 -> {offset: ?; strides: [?, ?]; shape: [n, m]}`, memory chosen at run time (by the caller, a branch, a loop or a call)
            "#]],
        );
    }

    #[test]
    fn def_used_by_no_entry_is_not_laid_out() {
        check(
            r#"
def double [n] (xs: [n]f32) : [n]f32 =
  let ys$0 = map (\x -> x * 2f32) xs
  in ys
"#,
            expect![[r#"
                main.weft:45..47 "ys"
                ```weft
                ys : [n]f32
                ```

                **Memory**: not laid out: no entry of this file uses `double` (memory is laid out per use, after specialisation)
            "#]],
        );
    }

    #[test]
    fn an_error_in_another_def_keeps_the_memory() {
        check(
            r#"
entry f (a: [n][m]i32) : [m][n]i32 =
  let b$0 = transpose a
  in b
def broken (x: i32) : i32 = x + true
"#,
            expect![[r#"
                main.weft:43..44 "b"
                ```weft
                b : [m][n]i32
                ```

                **Memory**: `mem_0 -> {offset: 0; strides: [1, m]; shape: [m, n]}`, view of `a` (no copy)

                **Region**: `r2` (`result`) on the device, `4*m*n` bytes (`m*n` × i32), live line 2 (plan: from step 1 to the read-back); read back to the host (`4*m*n` bytes); used by `f_result_copy_0` (entry `f`)
            "#]],
        );
    }

    #[test]
    fn allocation_in_a_map_lambda_shows_its_expansion() {
        check(
            r#"
entry f (a: [n][m]f32) : [n]f32 =
  map (\r -> let s$0 = map (\x -> x * 2f32) r in reduce (+) 0f32 s) a
"#,
            expect![[r#"
                main.weft:51..52 "s"
                ```weft
                s : [m]f32
                ```

                **Memory**: `mem_2 -> {offset: gtid; strides: [n]; shape: [m]}`, fresh allocation: 4*n*m bytes (interleaved over gtid < n)
            "#]],
        );
    }

    #[test]
    fn def_inlined_twice_shows_one_of_its_layouts() {
        check(
            r#"
def rev 'a [n] (f: a -> a) (xs: [n]a) : [n]a =
  let ys$0 = reverse xs
  in map f ys
entry e (a: [n]f32) (b: [n]i32) : ([n]f32, [n]i32) = (rev (\x -> x) a, rev (\x -> x) b)
"#,
            expect![[r#"
                main.weft:53..55 "ys"
                ```weft
                ys : [n]a
                ```

                **Memory**: `mem_0 -> {offset: n - 1; strides: [-1]; shape: [n]}`, view of `a` (no copy)

                (one of 2 layouts: `rev` is specialised or inlined per use)
            "#]],
        );
    }

    #[test]
    fn local_array_shows_its_address_space_and_why() {
        check(
            r#"
def dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)
entry rows (a: [n][m]f32) (v: [m]f32) : [n]f32 =
  map@group (\row -> let t$0 = to_local row in dot t v) a
"#,
            expect![[r#"
                main.weft:146..147 "t"
                ```weft
                t : [m]f32
                ```

                **Memory**: `mem_3 -> {offset: gtid; strides: [n]; shape: [m]}`, fresh allocation: 4*n*m bytes (interleaved over gtid < n)

                **Address space**: `local` (`t_6`) — an array the work-group computes and shares (the body of a group SegOp) (line 3), in kernel `rows_group_0`
            "#]],
        );
    }

    #[test]
    fn private_array_shows_its_address_space() {
        check(
            r#"
entry f (xs: [n][4]f32) : [n]f32 =
  map (\row -> let p$0 = to_private (map (\x -> x * 2f32) row) in p[0] + p[3]) xs
"#,
            expect![[r#"
                main.weft:54..55 "p"
                ```weft
                p : [4]f32
                ```

                **Memory**: `mem_3 -> {offset: gtid; strides: [n]; shape: [4]}`, fresh allocation: 16*n bytes (interleaved over gtid < n)

                **Address space**: `private` (`p_16`) — an array of the work-item's own (its size is a small constant) (line 2), in kernel `f_rows_staged_0`

                **Address space**: `private` (`p_8`) — an array of the work-item's own (its size is a small constant) (line 2), in kernel `f_map_1`

                **Address space**: `local` (`p_13`) — an array the work-group computes and shares (the body of a group SegOp) (line 2), in kernel `f_group_2`

                **Address space**: `private` (`p_12`) — an array of the work-item's own (its size is a small constant) (line 2), in kernel `f_rows_staged_4`
            "#]],
        );
    }

    #[test]
    fn combinator_shows_the_kernel_computing_it() {
        check(
            r#"
entry f (xs: [n]f32) : [n]f32 = m$0ap (\x -> x * 2f32) xs
"#,
            expect![[r#"
                main.weft:32..35 "map"
                ```weft
                map : (a -> r) -> [n]a -> [n]r
                ```

                applies a function to every element

                **Kernel**: `f_map_0` — @grid: one work-item per run of 4 elements

                **Cost** of `f_map_0` (entry `f`): work `17*max((n/4), n % 4) + 768*⌈max((n/4), n % 4)/256⌉`, span `19*⌈(max((n/4), n % 4))/(max(256*⌈max((n/4), n % 4)/256⌉, 1))⌉ + 3`; global `40*max((n/4), n % 4)` bytes; predicted 9.51 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) at n = 1048576 (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)
            "#]],
        );
    }

    #[test]
    fn fused_producer_shows_its_consumer_kernel() {
        check(
            r#"
entry dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0f32 (ma$0p2 (*) xs ys)
"#,
            expect![[r#"
                main.weft:61..65 "map2"
                ```weft
                map2 : (a -> b -> r) -> [n]a -> [n]b -> [n]r
                ```

                applies a function to the elements of several arrays of one size, pairwise

                **Kernel**: `dot_reduce_partials_0` — @grid: multi-stage reduction (work-group trees in local memory, then one group)

                **Kernel**: `dot_reduce_total_1` — @grid: multi-stage reduction (second stage)

                **Cost** of `dot_reduce_partials_0` (entry `dot`): work `15*(n/4) + 5118*max(1, min(⌈n/256⌉, 1024))`, span `17*⌈(n/4)/(max(256*max(1, min(⌈n/256⌉, 1024)), 1))⌉ + 34`; global `32*(n/4) + 2052*max(1, min(⌈n/256⌉, 1024))` bytes, local `4088*max(1, min(⌈n/256⌉, 1024))` bytes; predicted 9.65 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) at n = 1048576 (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)

                **Cost** of `dot_reduce_total_1` (entry `dot`): work `8*((max(1, min(⌈n/256⌉, 1024)))/4) + 4862`, span `10*⌈((max(1, min(⌈n/256⌉, 1024)))/4)/256⌉ + 33`; global `16*((max(1, min(⌈n/256⌉, 1024)))/4) + 1028` bytes, local `4088` bytes; predicted 6.43 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) at n = 1048576 (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)
            "#]],
        );
    }

    #[test]
    fn multi_stage_reduction_shows_both_stages() {
        check(
            r#"
entry sum (xs: [n]f32) : f32 = red$0uce (+) 0f32 xs
"#,
            expect![[r#"
                main.weft:31..37 "reduce"
                ```weft
                reduce : (a -> a -> a) -> a -> [n]a -> a
                ```

                combines all elements with an associative operator and its neutral element

                **Kernel**: `sum_reduce_partials_0` — @grid: multi-stage reduction (work-group trees in local memory, then one group)

                **Kernel**: `sum_reduce_total_1` — @grid: multi-stage reduction (second stage)

                **Cost** of `sum_reduce_partials_0` (entry `sum`): work `8*(n/4) + 4862*max(1, min(⌈n/256⌉, 1024))`, span `10*⌈(n/4)/(max(256*max(1, min(⌈n/256⌉, 1024)), 1))⌉ + 33`; global `16*(n/4) + 1028*max(1, min(⌈n/256⌉, 1024))` bytes, local `4088*max(1, min(⌈n/256⌉, 1024))` bytes; predicted 7.53 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) at n = 1048576 (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)

                **Cost** of `sum_reduce_total_1` (entry `sum`): work `8*((max(1, min(⌈n/256⌉, 1024)))/4) + 4862`, span `10*⌈((max(1, min(⌈n/256⌉, 1024)))/4)/256⌉ + 33`; global `16*((max(1, min(⌈n/256⌉, 1024)))/4) + 1028` bytes, local `4088` bytes; predicted 6.43 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) at n = 1048576 (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)
            "#]],
        );
    }

    #[test]
    fn expression_in_a_kernel_shows_its_role() {
        check(
            r#"
entry f (a: [n][m]f32) : [n]f32 = map (\r -> reduce (+) 0f32 (map (\x -> x $0* x) r)) a
"#,
            expect![[r#"
                main.weft:73..78 "x * x"
                ```weft
                f32
                ```

                **Kernel**: `f_rows_staged_0` (when `n >= 32768` and `m <= 32`) — computed in each work-item

                **Kernel**: `f_map_1` (when `n >= 32768` and `m > 32`) — computed in each work-item

                **Kernel**: `f_group_2` (when `n < 32768` and `n >= 128`) — computed in each work-item

                **Kernel**: `f_segred_3` (when `n < 32768` and `n < 128`) — one work-item per segment folds it in order, with the maps around it in one grid

                **Kernel**: … and 2 more
            "#]],
        );
    }

    #[test]
    fn def_used_by_two_entries_names_them() {
        check(
            r#"
def sq (xs: [n]f32) : [n]f32 = m$0ap (\x -> x * x) xs
entry a (xs: [n]f32) : [n]f32 = sq xs
entry b (xs: [n]f32) : f32 = reduce (+) 0f32 (sq xs)
"#,
            expect![[r#"
                main.weft:31..34 "map"
                ```weft
                map : (a -> r) -> [n]a -> [n]r
                ```

                applies a function to every element

                **Kernel**: `a_map_0` (entry `a`) — @grid: one work-item per run of 4 elements

                **Kernel**: `b_reduce_partials_0` (entry `b`) — @grid: multi-stage reduction (work-group trees in local memory, then one group)

                **Kernel**: `b_reduce_total_1` (entry `b`) — @grid: multi-stage reduction (second stage)

                **Cost** of `a_map_0` (entry `a`): work `17*max((n/4), n % 4) + 768*⌈max((n/4), n % 4)/256⌉`, span `19*⌈(max((n/4), n % 4))/(max(256*⌈max((n/4), n % 4)/256⌉, 1))⌉ + 3`; global `40*max((n/4), n % 4)` bytes; predicted 9.51 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) at n = 1048576 (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)

                **Cost** of `b_reduce_partials_0` (entry `b`): work `12*(n/4) + 5118*max(1, min(⌈n/256⌉, 1024))`, span `14*⌈(n/4)/(max(256*max(1, min(⌈n/256⌉, 1024)), 1))⌉ + 34`; global `16*(n/4) + 1028*max(1, min(⌈n/256⌉, 1024))` bytes, local `4088*max(1, min(⌈n/256⌉, 1024))` bytes; predicted 7.53 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) at n = 1048576 (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)

                **Cost** of `b_reduce_total_1` (entry `b`): work `8*((max(1, min(⌈n/256⌉, 1024)))/4) + 4862`, span `10*⌈((max(1, min(⌈n/256⌉, 1024)))/4)/256⌉ + 33`; global `16*((max(1, min(⌈n/256⌉, 1024)))/4) + 1028` bytes, local `4088` bytes; predicted 6.43 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) at n = 1048576 (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)
            "#]],
        );
    }

    #[test]
    fn an_error_in_another_def_keeps_the_kernels() {
        check(
            r#"
entry f (xs: [n]f32) : [n]f32 = m$0ap (\x -> x * 2f32) xs
def broken (x: i32) : i32 = x + true
"#,
            expect![[r#"
                main.weft:32..35 "map"
                ```weft
                map : (a -> r) -> [n]a -> [n]r
                ```

                applies a function to every element

                **Kernel**: `f_map_0` — @grid: one work-item per run of 4 elements

                **Cost** of `f_map_0` (entry `f`): work `17*max((n/4), n % 4) + 768*⌈max((n/4), n % 4)/256⌉`, span `19*⌈(max((n/4), n % 4))/(max(256*⌈max((n/4), n % 4)/256⌉, 1))⌉ + 3`; global `40*max((n/4), n % 4)` bytes; predicted 9.51 µs (error not measured) per launch on `NVIDIA H100 80GB HBM3` (the default profile) at n = 1048576 (default sizes: no test input) (memory-bound, model weft-cost v2, error not measured)
            "#]],
        );
    }

    #[test]
    fn entry_too_large_for_a_hover_is_not_compiled() {
        // A chain of 800 defs, each calling the previous one: the back end inlines them
        // all into the entry, too much to compile while the mouse waits.
        let mut text = String::from("def f0 (x: f32) : f32 = x * 2f32 + 1f32\n");
        for idx in 1..800 {
            text.push_str(&format!("def f{idx} (x: f32) : f32 = f{} x * 2f32 + 1f32\n", idx - 1));
        }
        text.push_str("entry e (xs: [n]f32) : [n]f32 = m$0ap f799 xs\n");
        // The server's threads have large stacks (deep call chains); so does this one.
        let last = std::thread::Builder::new()
            .stack_size(weft_syntax::LARGE_STACK_BYTES)
            .spawn(move || {
                let fixture = fixture(&text);
                let hover = fixture.analysis.hover_details(&fixture.position).unwrap().unwrap();
                hover.markdown.lines().last().unwrap_or("").to_owned()
            })
            .unwrap()
            .join()
            .unwrap();
        expect!["**Kernel**: not compiled for a hover: entry `e` is too large (2401 core expressions once its calls are inlined)"].assert_eq(&last);
    }

    #[test]
    fn prelude_function_shows_its_documentation() {
        check(
            r#"
entry main (xs: [3]f32) : f32 = f32.max$0imum xs
"#,
            expect![[r#"
                main.weft:36..43 "maximum"
                ```weft
                def f32.maximum : [n]f32 -> f32
                ```

                The largest element (`f32.lowest` for an empty array).
            "#]],
        );
    }

    #[test]
    fn local_function_shows_its_type() {
        check(
            r#"
def f (xs: [3]f32) : [3]f32 =
  let twice (x: f32) = 2 * x
  in xs |> map tw$0ice
"#,
            expect![[r#"
                main.weft:74..79 "twice"
                ```weft
                twice : f32 -> f32
                ```
            "#]],
        );
    }

    #[test]
    fn record_field_shows_its_type() {
        check(
            r#"
def f (p: {x: f32, y: [3]i32}) : [3]i32 = p.$0y
"#,
            expect![[r#"
                main.weft:42..45 "p.y"
                ```weft
                [3]i32
                ```
            "#]],
        );
        check(
            r#"
def f (p: {x: f32, y: [3]i32}) : f32 = let {x$0, y = _} = p in x
"#,
            expect![[r#"
                main.weft:44..45 "x"
                ```weft
                x : f32
                ```
            "#]],
        );
    }
}
