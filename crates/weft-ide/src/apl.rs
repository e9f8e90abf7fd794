//! `.apl` buffers (docs/apl.md): diagnostics and hovers with TAIL types, from the
//! APL front end (`weft-tail`). APL files are small and whole-program (every dfn is
//! inlined), so each request compiles the buffer's text afresh.

use weft_hir::RootDatabase;
use weft_syntax::{TextRange, TextSize};

use crate::hover::HoverResult;

/// Whether `path` names an APL file.
pub(crate) fn is_apl(path: &str) -> bool {
    path.ends_with(".apl")
}

/// The range of an APL front end span.
pub(crate) fn range(span: weft_tail::Span) -> TextRange {
    TextRange::new(TextSize::from(span.start), TextSize::from(span.end.max(span.start)))
}

/// The TAIL type of the innermost named value or application at the offset.
pub(crate) fn hover(db: &RootDatabase, path: &str, offset: TextSize) -> Option<HoverResult> {
    let file = db.file(path)?;
    let compiled = weft_tail::compile(file.text(db));
    let at = u32::from(offset);
    let (span, ty) = compiled
        .types
        .iter()
        .filter(|(s, _)| s.start <= at && at < s.end.max(s.start + 1))
        .min_by_key(|(s, _)| s.end - s.start)?;
    let markdown = format!("```tail\n{ty}\n```\nTAIL type: {}", weft_tail::ty::describe(ty));
    Some(HoverResult { range: range(*span), markdown })
}

/// The core program of an `.apl` file (one entry, `main`), for the features that
/// compile entries (Run on GPU, kernels, costs); `None` when it has errors.
pub(crate) fn core_program(
    db: &dyn weft_hir::Db,
    file: weft_hir::SourceFile,
) -> Option<weft_core::Program> {
    let tail = weft_tail::compile(file.text(db)).tail?;
    let def = weft_hir::DefLoc {
        file,
        name: weft_hir::Name::new("main"),
        dup: 0,
        kind: weft_hir::DefKind::Entry,
    };
    weft_tail::to_core::to_core(&tail, def).ok()
}

/// An APL program is one entry, `main`: runnable from its first line when it has no
/// errors.
pub(crate) fn runnables(db: &RootDatabase, path: &str) -> Vec<crate::code_lens::Runnable> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let text = file.text(db);
    if weft_tail::compile(text).tail.is_none() {
        return Vec::new();
    }
    let first_line = text.find('\n').unwrap_or(text.len());
    let end = TextSize::from(u32::try_from(first_line).unwrap_or(0));
    vec![crate::code_lens::Runnable {
        entry: "main".to_owned(),
        range: TextRange::new(TextSize::from(0), end),
        input: None,
    }]
}

/// "Show kernels" on an `.apl` buffer: the TAIL program and the core IR it becomes, as
/// comments, then the OpenCL program of `main`.
pub(crate) fn show_program(
    db: &RootDatabase,
    file: weft_hir::SourceFile,
) -> Option<crate::show_kernel::KernelView> {
    let tail = weft_tail::compile(file.text(db)).tail?;
    let program = crate::program::file_program(db, file).as_ref()?;
    let comment = |text: &str| text.lines().map(|l| format!("// {l}\n")).collect::<String>();
    let mut text = format!("// Weft: `{}` (APL through TAIL)\n//\n// TAIL:\n", file.path(db));
    text.push_str(&comment(&weft_tail::tail::print_program(&tail)));
    text.push_str("//\n// core IR:\n");
    text.push_str(&comment(&weft_core::pretty_program(program)));
    match crate::kernels::compile_entry(db, file, "main")? {
        Ok(compiled) => {
            text.push_str(&format!("\n// OpenCL: {} kernels\n\n", compiled.kernels.len()));
            text.push_str(&compiled.plan.source);
        }
        Err(message) => text.push_str(&format!("\n// `main` cannot be compiled: {message}\n")),
    }
    let stem =
        file.path(db).rsplit('/').next().unwrap_or("main").trim_end_matches(".apl").to_owned();
    // The APL front end records no origins to link kernels to.
    Some(crate::show_kernel::KernelView {
        name: format!("{stem}/main.cl"),
        text,
        links: Vec::new(),
        lines: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_and_tail_types_of_an_apl_buffer() {
        let mut db = RootDatabase::default();
        let text = "v ← 9 8 6\nn ← ⍴v\nv + 1 2\n";
        let s = db.set_file("s.apl", text);
        let found = crate::front_end_diagnostics(&db, s);
        assert!(crate::layout_diagnostics(&db, s).is_empty());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].message.starts_with("LENGTH ERROR"), "{}", found[0].message);
        assert_eq!(u32::from(found[0].range.start()), text.find("+ 1 2").map_or(0, |i| i as u32));
        let hover_at = |needle: &str| {
            let offset = TextSize::from(text.find(needle).map_or(0, |i| i as u32));
            hover(&db, "s.apl", offset).map(|h| h.markdown)
        };
        let on_v = hover_at("v ←").expect("a hover on `v`");
        assert!(on_v.starts_with("```tail\n<int>3\n```"), "{on_v}");
        let on_n = hover_at("n ←").expect("a hover on `n`");
        assert!(on_n.starts_with("```tail\nSV(int,3)\n```"), "{on_n}");
        // A file with errors has no program and nothing to run.
        assert_eq!(runnables(&db, "s.apl"), Vec::new());
        let file = db.set_file("ok.apl", "+/ 1 2 3\n");
        assert_eq!(runnables(&db, "ok.apl").len(), 1);
        let program = core_program(&db, file).expect("a core program");
        assert_eq!(program.entries.len(), 1);
        assert!(crate::program::file_program(&db, file).is_some());
        // "Run on GPU" compiles it: a plan with kernels, no inputs.
        let run = crate::gpu_run::gpu_run(&db, "ok.apl", "main").expect("compiles for OpenCL");
        assert!(run.n_kernels >= 1, "{}", run.n_kernels);
        assert_eq!(run.input, crate::GpuInput::None);
        // "Show kernels": TAIL, core and OpenCL.
        let view = show_program(&db, file).expect("a program to show");
        assert_eq!(view.name, "ok/main.cl");
        assert!(view.text.contains("// TAIL:\n// let v"), "{}", view.text);
        assert!(view.text.contains("// core IR:"), "{}", view.text);
        assert!(view.text.contains("__kernel"), "{}", view.text);
    }

    #[test]
    fn weft_only_features_answer_nothing_for_apl() {
        let mut host = crate::AnalysisHost::new();
        let mut change = crate::Change::default();
        change.set_file("s.apl", "x ← 1 2 3\n+/x\n");
        host.apply_change(change);
        let analysis = host.analysis();
        assert_eq!(analysis.semantic_tokens("s.apl").unwrap(), Vec::new());
        assert_eq!(analysis.folding_ranges("s.apl").unwrap(), Vec::new());
        assert_eq!(analysis.format("s.apl").unwrap(), None);
        assert_eq!(analysis.diagnostics("s.apl").unwrap(), Vec::new());
        assert_eq!(analysis.runnables("s.apl").unwrap().len(), 1);
    }
}
