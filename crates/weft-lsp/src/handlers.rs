//! Read handlers: LSP params in, `weft-ide` call, LSP result out. They run on a
//! pool thread with a snapshot and return owned data.

use std::sync::Arc;

use lsp_types as lsp;
use weft_ide::{Analysis, Cancelled, FilePosition, FileRange};
use weft_syntax::line_index::LineIndex;

use crate::from_proto;
use crate::to_proto::{self, FileText};

/// Why a read produced no answer.
pub(crate) enum HandlerError {
    /// An edit arrived while it ran: ContentModified.
    Cancelled,
    /// The request was wrong: InvalidParams.
    Invalid(String),
}

impl From<Cancelled> for HandlerError {
    fn from(_: Cancelled) -> HandlerError {
        HandlerError::Cancelled
    }
}

pub(crate) type Result<T> = std::result::Result<T, HandlerError>;

/// A file's text and index in the snapshot, or `None` for unknown documents.
struct File {
    path: String,
    text: Arc<str>,
    index: Arc<LineIndex>,
}

impl File {
    fn get(analysis: &Analysis, uri: &lsp::Uri) -> Result<Option<File>> {
        let path = from_proto::path(uri);
        let (Some(text), Some(index)) = (analysis.file_text(&path)?, analysis.line_index(&path)?)
        else {
            return Ok(None);
        };
        Ok(Some(File { path, text, index }))
    }

    fn conv(&self) -> FileText<'_> {
        FileText { text: &self.text, index: &self.index }
    }

    fn position(&self, position: lsp::Position) -> FilePosition {
        FilePosition {
            path: self.path.clone(),
            offset: from_proto::offset(&self.index, &self.text, position),
        }
    }
}

/// Conversions for ranges in other files (references, rename, related info).
fn location(
    analysis: &Analysis,
    path: &str,
    range: weft_ide::TextRange,
) -> Result<Option<lsp::Location>> {
    let (Some(text), Some(index), Some(uri)) =
        (analysis.file_text(path)?, analysis.line_index(path)?, to_proto::uri(path))
    else {
        return Ok(None);
    };
    let range = FileText { text: &text, index: &index }.range(range);
    Ok(Some(lsp::Location { uri, range }))
}

/// The front end's diagnostics of a file, published on every edit.
pub(crate) fn front_end_diagnostics(
    analysis: &Analysis,
    path: &str,
) -> Result<Option<Vec<lsp::Diagnostic>>> {
    let found = analysis.front_end_diagnostics(path)?;
    convert_diagnostics(analysis, path, found)
}

/// The diagnostics published after the front end's: the memory layer's, and when
/// `perf` is given the performance and back-end diagnostics under those settings.
pub(crate) fn later_diagnostics(
    analysis: &Analysis,
    path: &str,
    perf: Option<&weft_ide::CostConfig>,
) -> Result<Option<Vec<lsp::Diagnostic>>> {
    let mut found = analysis.layout_diagnostics(path)?;
    if let Some(config) = perf {
        found.extend(analysis.perf_diagnostics(path, config)?);
    }
    convert_diagnostics(analysis, path, found)
}

fn convert_diagnostics(
    analysis: &Analysis,
    path: &str,
    found: Vec<weft_ide::Diagnostic>,
) -> Result<Option<Vec<lsp::Diagnostic>>> {
    let (Some(text), Some(index)) = (analysis.file_text(path)?, analysis.line_index(path)?) else {
        return Ok(None);
    };
    let conv = FileText { text: &text, index: &index };
    let mut out = Vec::new();
    for d in found {
        let mut related = Vec::new();
        for r in &d.related {
            if let Some(location) = location(analysis, &analysis.path(r.file)?, r.range)? {
                related.push(lsp::DiagnosticRelatedInformation {
                    location,
                    message: r.message.clone(),
                });
            }
        }
        let message = match &d.help {
            Some(help) => format!("{}\nhelp: {help}", d.message),
            None => d.message.clone(),
        };
        out.push(lsp::Diagnostic {
            range: conv.range(d.range),
            severity: Some(to_proto::severity(d.severity)),
            code: Some(lsp::NumberOrString::String(d.code.to_owned())),
            source: Some("weft".to_owned()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            ..lsp::Diagnostic::default()
        });
    }
    Ok(Some(out))
}

pub(crate) fn hover(analysis: &Analysis, params: &lsp::HoverParams) -> Result<Option<lsp::Hover>> {
    let doc = &params.text_document_position_params;
    let Some(file) = File::get(analysis, &doc.text_document.uri)? else { return Ok(None) };
    let Some(hover) = analysis.hover(&file.position(doc.position))? else { return Ok(None) };
    Ok(Some(lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: hover.markdown,
        }),
        range: Some(file.conv().range(hover.range)),
    }))
}

pub(crate) fn goto_definition(
    analysis: &Analysis,
    params: &lsp::GotoDefinitionParams,
) -> Result<Option<lsp::GotoDefinitionResponse>> {
    let doc = &params.text_document_position_params;
    let Some(file) = File::get(analysis, &doc.text_document.uri)? else { return Ok(None) };
    let mut out = Vec::new();
    for target in analysis.goto_definition(&file.position(doc.position))? {
        if let Some(location) = location(analysis, &target.path, target.focus_range)? {
            out.push(location);
        }
    }
    Ok((!out.is_empty()).then_some(lsp::GotoDefinitionResponse::Array(out)))
}

pub(crate) fn references(
    analysis: &Analysis,
    params: &lsp::ReferenceParams,
) -> Result<Option<Vec<lsp::Location>>> {
    let doc = &params.text_document_position;
    let Some(file) = File::get(analysis, &doc.text_document.uri)? else { return Ok(None) };
    let position = file.position(doc.position);
    let Some(refs) = analysis.references(&position)? else { return Ok(None) };
    let declaration = analysis.goto_definition(&position)?;
    let mut out = Vec::new();
    for r in refs {
        let is_declaration =
            declaration.iter().any(|d| d.path == r.path && d.focus_range == r.range);
        if is_declaration && !params.context.include_declaration {
            continue;
        }
        if let Some(location) = location(analysis, &r.path, r.range)? {
            out.push(location);
        }
    }
    Ok(Some(out))
}

pub(crate) fn prepare_rename(
    analysis: &Analysis,
    params: &lsp::TextDocumentPositionParams,
) -> Result<Option<lsp::PrepareRenameResponse>> {
    let Some(file) = File::get(analysis, &params.text_document.uri)? else { return Ok(None) };
    match analysis.prepare_rename(&file.position(params.position))? {
        Ok(range) => Ok(Some(lsp::PrepareRenameResponse::Range(file.conv().range(range)))),
        Err(message) => Err(HandlerError::Invalid(message)),
    }
}

pub(crate) fn rename(
    analysis: &Analysis,
    params: &lsp::RenameParams,
) -> Result<Option<lsp::WorkspaceEdit>> {
    let doc = &params.text_document_position;
    let Some(file) = File::get(analysis, &doc.text_document.uri)? else { return Ok(None) };
    let change = analysis
        .rename(&file.position(doc.position), &params.new_name)?
        .map_err(HandlerError::Invalid)?;
    Ok(Some(workspace_edit(analysis, &change)?))
}

#[expect(
    clippy::disallowed_types,
    clippy::mutable_key_type,
    reason = "lsp-types' WorkspaceEdit holds a std HashMap keyed by Uri"
)]
fn workspace_edit(
    analysis: &Analysis,
    change: &weft_ide::SourceChange,
) -> Result<lsp::WorkspaceEdit> {
    let mut changes = std::collections::HashMap::default();
    for (path, edits) in &change.edits {
        let (Some(text), Some(index), Some(uri)) =
            (analysis.file_text(path)?, analysis.line_index(path)?, to_proto::uri(path))
        else {
            continue;
        };
        let conv = FileText { text: &text, index: &index };
        let edits = edits
            .iter()
            .map(|e| lsp::TextEdit { range: conv.range(e.range), new_text: e.insert.clone() })
            .collect();
        changes.insert(uri, edits);
    }
    Ok(lsp::WorkspaceEdit { changes: Some(changes), ..lsp::WorkspaceEdit::default() })
}

#[expect(deprecated, reason = "lsp-types requires the deprecated `deprecated` field")]
pub(crate) fn document_symbols(
    analysis: &Analysis,
    params: &lsp::DocumentSymbolParams,
) -> Result<Option<lsp::DocumentSymbolResponse>> {
    let Some(file) = File::get(analysis, &params.text_document.uri)? else { return Ok(None) };
    fn convert(conv: &FileText<'_>, node: weft_ide::StructureNode) -> lsp::DocumentSymbol {
        lsp::DocumentSymbol {
            name: node.name,
            detail: node.detail,
            kind: to_proto::symbol_kind(node.kind),
            tags: None,
            deprecated: None,
            range: conv.range(node.full_range),
            selection_range: conv.range(node.focus_range),
            children: Some(node.children.into_iter().map(|c| convert(conv, c)).collect()),
        }
    }
    let conv = file.conv();
    let symbols =
        analysis.document_symbols(&file.path)?.into_iter().map(|n| convert(&conv, n)).collect();
    Ok(Some(lsp::DocumentSymbolResponse::Nested(symbols)))
}

#[expect(deprecated, reason = "lsp-types requires the deprecated `deprecated` field")]
pub(crate) fn workspace_symbols(
    analysis: &Analysis,
    params: &lsp::WorkspaceSymbolParams,
) -> Result<Option<Vec<lsp::SymbolInformation>>> {
    let mut out = Vec::new();
    for symbol in analysis.workspace_symbols(&params.query)? {
        let Some(location) = location(analysis, &symbol.target.path, symbol.target.focus_range)?
        else {
            continue;
        };
        out.push(lsp::SymbolInformation {
            name: symbol.target.name,
            kind: to_proto::symbol_kind(symbol.kind),
            tags: None,
            deprecated: None,
            location,
            container_name: None,
        });
    }
    Ok(Some(out))
}

pub(crate) fn semantic_tokens(
    analysis: &Analysis,
    params: &lsp::SemanticTokensParams,
) -> Result<Option<lsp::SemanticTokensResult>> {
    let Some(file) = File::get(analysis, &params.text_document.uri)? else { return Ok(None) };
    let tokens = analysis.semantic_tokens(&file.path)?;
    let data = to_proto::semantic_tokens(&file.conv(), &tokens);
    Ok(Some(lsp::SemanticTokensResult::Tokens(lsp::SemanticTokens { result_id: None, data })))
}

pub(crate) fn completion(
    analysis: &Analysis,
    params: &lsp::CompletionParams,
) -> Result<Option<lsp::CompletionResponse>> {
    let doc = &params.text_document_position;
    let Some(file) = File::get(analysis, &doc.text_document.uri)? else { return Ok(None) };
    let items = analysis
        .completions(&file.position(doc.position))?
        .into_iter()
        .map(|item| lsp::CompletionItem {
            label: item.label,
            kind: Some(to_proto::completion_kind(item.kind)),
            detail: item.detail,
            documentation: item.documentation.map(lsp::Documentation::String),
            ..lsp::CompletionItem::default()
        })
        .collect();
    Ok(Some(lsp::CompletionResponse::Array(items)))
}

pub(crate) fn signature_help(
    analysis: &Analysis,
    params: &lsp::SignatureHelpParams,
) -> Result<Option<lsp::SignatureHelp>> {
    let doc = &params.text_document_position_params;
    let Some(file) = File::get(analysis, &doc.text_document.uri)? else { return Ok(None) };
    let Some(help) = analysis.signature_help(&file.position(doc.position))? else {
        return Ok(None);
    };
    let label_offset = |offset: weft_ide::TextSize| {
        to_proto::utf16_len(help.label.get(..usize::from(offset)).unwrap_or(""))
    };
    let parameters = help
        .parameters
        .iter()
        .map(|range| lsp::ParameterInformation {
            label: lsp::ParameterLabel::LabelOffsets([
                label_offset(range.start()),
                label_offset(range.end()),
            ]),
            documentation: None,
        })
        .collect();
    let active = help.active_parameter.and_then(|a| u32::try_from(a).ok());
    Ok(Some(lsp::SignatureHelp {
        signatures: vec![lsp::SignatureInformation {
            label: help.label.clone(),
            documentation: help.documentation.clone().map(lsp::Documentation::String),
            parameters: Some(parameters),
            active_parameter: active,
        }],
        active_signature: Some(0),
        active_parameter: active,
    }))
}

pub(crate) fn inlay_hints(
    analysis: &Analysis,
    params: &lsp::InlayHintParams,
) -> Result<Option<Vec<lsp::InlayHint>>> {
    let Some(file) = File::get(analysis, &params.text_document.uri)? else { return Ok(None) };
    let wanted = from_proto::range(&file.index, &file.text, params.range);
    let conv = file.conv();
    let hints = analysis
        .inlay_hints(&file.path)?
        .into_iter()
        .filter(|hint| wanted.contains_inclusive(hint.offset))
        .map(|hint| lsp::InlayHint {
            position: conv.position(hint.offset),
            label: lsp::InlayHintLabel::String(hint.label),
            kind: Some(match hint.kind {
                weft_ide::InlayKind::Type => lsp::InlayHintKind::TYPE,
                weft_ide::InlayKind::SizeParameters => lsp::InlayHintKind::PARAMETER,
                weft_ide::InlayKind::AddressSpace => lsp::InlayHintKind::TYPE,
            }),
            text_edits: None,
            tooltip: None,
            padding_left: None,
            padding_right: None,
            data: None,
        })
        .collect();
    Ok(Some(hints))
}

pub(crate) fn folding_ranges(
    analysis: &Analysis,
    params: &lsp::FoldingRangeParams,
) -> Result<Option<Vec<lsp::FoldingRange>>> {
    let Some(file) = File::get(analysis, &params.text_document.uri)? else { return Ok(None) };
    let conv = file.conv();
    let folds = analysis
        .folding_ranges(&file.path)?
        .into_iter()
        .filter_map(|fold| {
            let range = conv.range(fold.range);
            (range.end.line > range.start.line).then_some(lsp::FoldingRange {
                start_line: range.start.line,
                start_character: None,
                end_line: range.end.line,
                end_character: None,
                kind: Some(match fold.kind {
                    weft_ide::FoldKind::Comment => lsp::FoldingRangeKind::Comment,
                    weft_ide::FoldKind::Imports => lsp::FoldingRangeKind::Imports,
                    weft_ide::FoldKind::Region => lsp::FoldingRangeKind::Region,
                }),
                collapsed_text: None,
            })
        })
        .collect();
    Ok(Some(folds))
}

pub(crate) fn code_actions(
    analysis: &Analysis,
    params: &lsp::CodeActionParams,
) -> Result<Option<lsp::CodeActionResponse>> {
    let Some(file) = File::get(analysis, &params.text_document.uri)? else { return Ok(None) };
    let range = FileRange {
        path: file.path.clone(),
        range: from_proto::range(&file.index, &file.text, params.range),
    };
    let mut out = Vec::new();
    for assist in analysis.assists(&range)? {
        out.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: assist.label,
            kind: Some(lsp::CodeActionKind::REFACTOR_REWRITE),
            edit: Some(workspace_edit(analysis, &assist.edit)?),
            ..lsp::CodeAction::default()
        }));
    }
    // On an entry's name: run it on the GPU (a command, executed by the server).
    for runnable in analysis.runnables(&file.path)? {
        if runnable.range.contains_inclusive(range.range.start()) {
            out.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: format!("Run `{}` on GPU", runnable.entry),
                command: Some(run_on_gpu_command(&params.text_document.uri, &runnable.entry)),
                ..lsp::CodeAction::default()
            }));
            out.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                title: format!("Profile `{}` (cost graph)", runnable.entry),
                command: Some(profile_command(&params.text_document.uri, &runnable.entry)),
                ..lsp::CodeAction::default()
            }));
        }
    }
    Ok(Some(out))
}

/// Names of the server's commands (editors/README.md): `weft.server.*`, never a name the
/// VS Code client registers itself (`weft.*`).
pub(crate) const RUN_ENTRY: &str = "weft.server.runEntry";
pub(crate) const RUN_ON_GPU: &str = "weft.server.runOnGpu";
pub(crate) const SHOW_KERNEL: &str = "weft.server.showKernel";
pub(crate) const PROFILE: &str = "weft.server.profile";
pub(crate) const HOVER_DETAILS: &str = "weft.server.hoverDetails";

fn profile_command(uri: &lsp::Uri, entry: &str) -> lsp::Command {
    lsp::Command {
        title: "Profile".to_owned(),
        command: PROFILE.to_owned(),
        arguments: Some(vec![serde_json::json!({ "uri": uri.as_str(), "entry": entry })]),
    }
}

fn run_on_gpu_command(uri: &lsp::Uri, entry: &str) -> lsp::Command {
    lsp::Command {
        title: "▶ Run on GPU".to_owned(),
        command: RUN_ON_GPU.to_owned(),
        arguments: Some(vec![serde_json::json!({ "uri": uri.as_str(), "entry": entry })]),
    }
}

pub(crate) fn code_lenses(
    analysis: &Analysis,
    params: &lsp::CodeLensParams,
) -> Result<Option<Vec<lsp::CodeLens>>> {
    let Some(file) = File::get(analysis, &params.text_document.uri)? else { return Ok(None) };
    let conv = file.conv();
    let uri = &params.text_document.uri;
    let mut lenses = Vec::new();
    for runnable in analysis.runnables(&file.path)? {
        let range = conv.range(runnable.range);
        let lens =
            |command: lsp::Command| lsp::CodeLens { range, command: Some(command), data: None };
        lenses.push(lens(lsp::Command {
            title: "▶ Run".to_owned(),
            command: RUN_ENTRY.to_owned(),
            arguments: Some(vec![serde_json::json!({
                "uri": uri.as_str(),
                "entry": runnable.entry,
            })]),
        }));
        lenses.push(lens(run_on_gpu_command(uri, &runnable.entry)));
        lenses.push(lens(lsp::Command {
            title: "Show kernels".to_owned(),
            command: SHOW_KERNEL.to_owned(),
            arguments: Some(vec![serde_json::json!({
                "textDocument": { "uri": uri.as_str() },
                "position": range.start,
            })]),
        }));
        lenses.push(lens(profile_command(uri, &runnable.entry)));
    }
    // The predicted time: a title without a command (nothing to run).
    for (range, title) in analysis.entry_predictions(&file.path)? {
        lenses.push(lsp::CodeLens {
            range: conv.range(range),
            command: Some(lsp::Command { title, command: String::new(), arguments: None }),
            data: None,
        });
    }
    Ok(Some(lenses))
}

/// `weft/showKernel` (and the `weft.server.showKernel` command): `{ uri, text, links,
/// lines }` with a `weft-kernel:///` URI, or `null` where no kernel computes the code.
/// `links`: per kernel, its lines in `text` (`{ start, end }`, 0-based, end exclusive)
/// and the locations of the source expressions it computes; `lines`: per line of `text`
/// that computes part of the source, `{ line, source }`, the location of the expression
/// it computes.
pub(crate) fn show_kernel(
    analysis: &Analysis,
    params: &lsp::TextDocumentPositionParams,
) -> Result<Option<serde_json::Value>> {
    let Some(file) = File::get(analysis, &params.text_document.uri)? else { return Ok(None) };
    let Some(view) = analysis.show_kernel(&file.position(params.position))? else {
        return Ok(None);
    };
    let mut links = Vec::new();
    for link in &view.links {
        let mut sources = Vec::new();
        for source in &link.sources {
            if let Some(location) = location(analysis, &source.path, source.range)? {
                sources.push(location);
            }
        }
        links.push(serde_json::json!({
            "kernel": link.kernel,
            "lines": { "start": link.lines.start, "end": link.lines.end },
            "sources": sources,
        }));
    }
    let mut lines = Vec::new();
    let mut locations: Vec<(&weft_ide::FileRange, Option<lsp::Location>)> = Vec::new();
    for link in &view.lines {
        let known = locations.iter().find(|(source, _)| **source == link.source);
        let source = match known {
            Some((_, location)) => location.clone(),
            None => {
                let found = location(analysis, &link.source.path, link.source.range)?;
                locations.push((&link.source, found.clone()));
                found
            }
        };
        if let Some(source) = source {
            lines.push(serde_json::json!({ "line": link.line, "source": source }));
        }
    }
    Ok(Some(serde_json::json!({
        "uri": format!("weft-kernel:///{}", view.name),
        "text": view.text,
        "links": links,
        "lines": lines,
    })))
}

/// The detail view of a hover (`weft.server.hoverDetails`): its whole derivation as a
/// markdown document, `{ uri: "weft-kernel:///details/FILE-LINE.md", text }`, or `null`.
pub(crate) fn hover_details(
    analysis: &Analysis,
    params: &lsp::TextDocumentPositionParams,
) -> Result<Option<serde_json::Value>> {
    let Some(file) = File::get(analysis, &params.text_document.uri)? else { return Ok(None) };
    let Some(hover) = analysis.hover_details(&file.position(params.position))? else {
        return Ok(None);
    };
    let stem = std::path::Path::new(&file.path)
        .file_stem()
        .map_or_else(|| "weft".to_owned(), |s| s.to_string_lossy().into_owned());
    let line = params.position.line + 1;
    Ok(Some(serde_json::json!({
        "uri": format!("weft-kernel:///details/{stem}-{line}.md"),
        "text": hover.markdown,
    })))
}

/// What "Run on GPU" needs from the snapshot: the entry's host plan and inputs, or why
/// it cannot run.
pub(crate) fn gpu_run(
    analysis: &Analysis,
    uri: &lsp::Uri,
    entry: &str,
) -> Result<std::result::Result<weft_ide::GpuRun, String>> {
    Ok(analysis.gpu_run(&from_proto::path(uri), entry)?)
}

/// The edits formatting makes, and what it says about what it left alone: the
/// declarations with syntax errors it kept as written, or why nothing was formatted.
pub(crate) fn formatting(
    analysis: &Analysis,
    params: &lsp::DocumentFormattingParams,
) -> Result<(Option<Vec<lsp::TextEdit>>, Option<String>)> {
    let Some(file) = File::get(analysis, &params.text_document.uri)? else {
        return Ok((None, None));
    };
    let formatted = match analysis.format(&file.path)? {
        Some(Ok(formatted)) => formatted,
        Some(Err(why)) => return Ok((None, Some(why))),
        None => return Ok((None, None)),
    };
    let note = (!formatted.left.is_empty()).then(|| {
        let list: Vec<String> = formatted
            .left
            .iter()
            .map(|(range, why)| {
                format!("line {} ({why})", file.conv().position(range.start()).line + 1)
            })
            .collect();
        format!("formatted all but the declarations with syntax errors: {}", list.join(", "))
    });
    if *formatted.text == *file.text {
        return Ok((Some(Vec::new()), note));
    }
    let whole = weft_ide::TextRange::up_to(weft_ide::TextSize::of(&*file.text));
    let edit = lsp::TextEdit { range: file.conv().range(whole), new_text: formatted.text };
    Ok((Some(vec![edit]), note))
}

/// What "Profile" needs from the snapshot: the entry's inputs, or why it cannot run.
pub(crate) fn entry_input(
    analysis: &Analysis,
    uri: &lsp::Uri,
    entry: &str,
) -> Result<std::result::Result<weft_ide::GpuInput, String>> {
    Ok(analysis.entry_input(&from_proto::path(uri), entry)?)
}

/// What "Run" needs from the snapshot: the entry's test input, if any.
/// What "Run" runs: the entry's inputs and the editor's texts of its file and imports.
pub(crate) fn entry_run(
    analysis: &Analysis,
    uri: &lsp::Uri,
    entry: &str,
) -> Result<std::result::Result<weft_ide::EntryRun, String>> {
    Ok(analysis.entry_run(&from_proto::path(uri), entry)?)
}

/// The server's text of a document (debug builds only; for tests).
#[cfg(debug_assertions)]
pub(crate) fn document_text(analysis: &Analysis, uri: &lsp::Uri) -> Result<Option<String>> {
    Ok(analysis.file_text(&from_proto::path(uri))?.map(|t| t.to_string()))
}
