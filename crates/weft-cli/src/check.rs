//! `weft check`: the same diagnostics the language server publishes, for terminals
//! (rustc-like, coloured on a terminal) and for CI (`--format json`, one object per
//! line with LSP-style 0-based UTF-16 positions).

use std::io::{IsTerminal, Write};

use weft_hir::{RootDatabase, Severity, SourceFile, TextRange};
use weft_ide::Diagnostic;
use weft_syntax::line_index::LineIndex;

use crate::workspace::{Loaded, load_lossy};
use crate::{CheckArgs, Format};

/// What a file is checked with: the project's `weft.json` (the editor reads the same
/// file) under the command line's flags.
struct Settings {
    perf: bool,
    costs: weft_ide::CostConfig,
}

fn settings(
    args: &CheckArgs,
    project: Option<&weft_lsp::ProjectConfig>,
) -> anyhow::Result<Settings> {
    let mut allow = args.allow.clone();
    allow.extend(project.iter().flat_map(|p| p.allow.iter().cloned()));
    let mut costs = weft_ide::CostConfig { allow, ..Default::default() };
    let profile = args.cost_profile.as_ref().or(project.and_then(|p| p.cost_profile.as_ref()));
    if let Some(name) = profile {
        costs.profile = weft_cost::profile::builtin_profile_named(name).ok_or_else(|| {
            anyhow::anyhow!("no committed profile `{name}` (try `nvidia-h100` or `pocl-cpu`)")
        })?;
    }
    let perf = args.perf || project.and_then(|p| p.perf_diagnostics).unwrap_or(false);
    Ok(Settings { perf, costs })
}

pub(crate) fn run(args: &CheckArgs) -> anyhow::Result<u8> {
    let (db, files) = load_lossy(&args.paths)?;
    // Per folder: its project file's settings.
    let mut by_dir: Vec<(std::path::PathBuf, std::rc::Rc<Settings>)> = Vec::new();
    let mut settings_of = |path: &str| -> anyhow::Result<std::rc::Rc<Settings>> {
        let dir = std::path::Path::new(path)
            .parent()
            .map_or_else(|| std::path::PathBuf::from("."), std::path::Path::to_path_buf);
        let dir = if dir.as_os_str().is_empty() { std::path::PathBuf::from(".") } else { dir };
        if let Some((_, s)) = by_dir.iter().find(|(d, _)| *d == dir) {
            return Ok(std::rc::Rc::clone(s));
        }
        let absolute = std::path::absolute(&dir).unwrap_or_else(|_| dir.clone());
        let project = weft_lsp::find_project_config(&absolute).map_err(anyhow::Error::msg)?;
        let s = std::rc::Rc::new(settings(args, project.as_ref())?);
        by_dir.push((dir, std::rc::Rc::clone(&s)));
        Ok(s)
    };
    let mut n_errors = 0usize;
    let mut n_warnings = 0usize;
    let colour = args.format == Format::Human
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let sources: Vec<_> = files.iter().map(|loaded| loaded.file).collect();
    weft_ide::check_in_parallel(&db, &sources);
    for loaded in &files {
        let settings = settings_of(loaded.file.path(&db))?;
        let mut diagnostics = weft_ide::check_file(&db, loaded.file);
        if settings.perf {
            // With what the back end cannot compile, as the editor shows them.
            diagnostics.extend(weft_ide::perf_diagnostics(&db, loaded.file, &settings.costs));
        } else {
            diagnostics.extend(weft_ide::backend_diagnostics(&db, loaded.file));
        }
        diagnostics.sort_by_key(|d| (d.range.start(), d.range.end(), d.code));
        let allow = &settings.costs.allow;
        diagnostics.retain(|d| d.severity == Severity::Error || !allow.iter().any(|c| c == d.code));
        if let Some(range) = loaded.invalid_utf8 {
            // The replacement characters are reported once, as invalid UTF-8.
            diagnostics.retain(|d| !(d.code == "syntax-error" && d.message.contains('\u{fffd}')));
            diagnostics.insert(0, invalid_utf8(loaded, range));
        }
        for diagnostic in &diagnostics {
            match diagnostic.severity {
                Severity::Error => n_errors += 1,
                Severity::Warning => n_warnings += 1,
                Severity::Info => {}
            }
            let text = match args.format {
                Format::Human => render_human(&db, diagnostic, colour),
                Format::Json => render_json(&db, diagnostic),
            };
            writeln!(out, "{text}")?;
        }
    }
    if args.format == Format::Human {
        let summary = format!(
            "checked {} file{}: {} error{}, {} warning{}",
            files.len(),
            plural(files.len()),
            n_errors,
            plural(n_errors),
            n_warnings,
            plural(n_warnings)
        );
        crate::dump::print_status(&summary);
    }
    let failed = n_errors > 0 || (args.deny_warnings && n_warnings > 0);
    Ok(u8::from(failed))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn invalid_utf8(loaded: &Loaded, range: TextRange) -> Diagnostic {
    Diagnostic {
        code: "invalid-utf8",
        severity: Severity::Error,
        message: "the file is not valid UTF-8; invalid bytes were replaced by U+FFFD".to_owned(),
        file: loaded.file,
        range,
        related: Vec::new(),
        help: None,
    }
}

struct Style {
    on: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.on { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }
}

/// rustc's layout: header, `-->` location, the source line with a caret underline,
/// related notes, and help.
pub(crate) fn render_human(db: &RootDatabase, diagnostic: &Diagnostic, colour: bool) -> String {
    let style = Style { on: colour };
    let (level, level_colour) = match diagnostic.severity {
        Severity::Error => ("error", "1;31"),
        Severity::Warning => ("warning", "1;33"),
        Severity::Info => ("info", "1;36"),
    };
    let mut out = format!(
        "{}{} {}\n",
        style.paint(level_colour, &format!("{level}[{}]", diagnostic.code)),
        style.paint("1", ":"),
        style.paint("1", &diagnostic.message)
    );
    out.push_str(&snippet(db, diagnostic.file, diagnostic.range, &style, level_colour, None));
    for related in &diagnostic.related {
        out.push_str(&format!("{} {}\n", style.paint("1;32", "note:"), related.message));
        out.push_str(&snippet(db, related.file, related.range, &style, "1;32", None));
    }
    if let Some(help) = &diagnostic.help {
        out.push_str(&format!("  {} help: {help}\n", style.paint("1;34", "=")));
    }
    out
}

fn snippet(
    db: &RootDatabase,
    file: SourceFile,
    range: TextRange,
    style: &Style,
    colour: &str,
    label: Option<&str>,
) -> String {
    let text = file.text(db);
    let index = LineIndex::new(text);
    let start = index.to_chars(text, range.start());
    let end = index.to_chars(text, range.end());
    let line_no = (start.line + 1).to_string();
    let gutter = " ".repeat(line_no.len());
    let mut out = format!(
        "{gutter}{} {}:{}:{}\n",
        style.paint("1;34", "-->"),
        file.path(db),
        start.line + 1,
        start.col + 1
    );
    let line_text = index.line_range(start.line as usize, text).map_or("", |r| &text[r]);
    let line_len = u32::try_from(line_text.chars().count()).unwrap_or(u32::MAX);
    let caret_end = if end.line == start.line { end.col } else { line_len };
    let width = caret_end.saturating_sub(start.col).max(1) as usize;
    let bar = style.paint("1;34", "|");
    out.push_str(&format!("{gutter} {bar}\n"));
    out.push_str(&format!(
        "{} {bar} {}\n",
        style.paint("1;34", &line_no),
        line_text.replace('\t', " ")
    ));
    let carets = style.paint(colour, &"^".repeat(width));
    let label = label.map(|l| format!(" {}", style.paint(colour, l))).unwrap_or_default();
    out.push_str(&format!("{gutter} {bar} {}{carets}{label}\n", " ".repeat(start.col as usize)));
    out
}

/// One JSON object: code, severity, message, file, range and related ranges, with
/// 0-based lines and UTF-16 characters as in LSP.
pub(crate) fn render_json(db: &RootDatabase, diagnostic: &Diagnostic) -> String {
    let range_json = |file: SourceFile, range: TextRange| {
        let text = file.text(db);
        let index = LineIndex::new(text);
        let start = index.to_utf16(text, range.start());
        let end = index.to_utf16(text, range.end());
        serde_json::json!({
            "start": { "line": start.line, "character": start.col },
            "end": { "line": end.line, "character": end.col },
        })
    };
    let related: Vec<serde_json::Value> = diagnostic
        .related
        .iter()
        .map(|r| serde_json::json!({ "file": r.file.path(db), "range": range_json(r.file, r.range), "message": r.message }))
        .collect();
    let mut object = serde_json::json!({
        "code": diagnostic.code,
        "severity": diagnostic.severity.as_str(),
        "message": diagnostic.message,
        "file": diagnostic.file.path(db),
        "range": range_json(diagnostic.file, diagnostic.range),
        "related": related,
    });
    if let Some(help) = &diagnostic.help {
        object["help"] = serde_json::Value::String(help.clone());
    }
    object.to_string()
}
