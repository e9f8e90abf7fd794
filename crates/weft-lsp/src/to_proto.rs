//! weft-ide to LSP: byte offsets to UTF-16 positions, plain data to LSP types.

use std::str::FromStr as _;

use lsp_types::Uri;
use tower_lsp_server::UriExt as _;
use weft_ide::{Severity, TextRange, TextSize};
use weft_syntax::line_index::LineIndex;

/// A file's text and line index, for conversions.
pub(crate) struct FileText<'a> {
    pub(crate) text: &'a str,
    pub(crate) index: &'a LineIndex,
}

impl FileText<'_> {
    pub(crate) fn position(&self, offset: TextSize) -> lsp_types::Position {
        let lc = self.index.to_utf16(self.text, offset);
        lsp_types::Position { line: lc.line, character: lc.col }
    }

    pub(crate) fn range(&self, range: TextRange) -> lsp_types::Range {
        lsp_types::Range { start: self.position(range.start()), end: self.position(range.end()) }
    }
}

/// The URI of a database path (inverse of `from_proto::path`). The prelude lives in
/// the compiler, not on disk: its URI is a copy written once per version, so that
/// go-to-definition opens it.
pub(crate) fn uri(path: &str) -> Option<Uri> {
    if path == weft_hir::PRELUDE_PATH {
        return Uri::from_file_path(prelude_copy()?);
    }
    if path.starts_with('/') || std::path::Path::new(path).is_absolute() {
        Uri::from_file_path(path)
    } else {
        Uri::from_str(path).ok()
    }
}

/// `$TMPDIR/weft-VERSION/prelude.weft`, written if missing or different.
fn prelude_copy() -> Option<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("weft-{}", env!("CARGO_PKG_VERSION")));
    let path = dir.join("prelude.weft");
    let current = std::fs::read_to_string(&path).ok();
    if current.as_deref() != Some(weft_hir::PRELUDE_TEXT) {
        std::fs::create_dir_all(&dir).ok()?;
        std::fs::write(&path, weft_hir::PRELUDE_TEXT).ok()?;
    }
    Some(path)
}

pub(crate) fn severity(severity: Severity) -> lsp_types::DiagnosticSeverity {
    match severity {
        Severity::Error => lsp_types::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp_types::DiagnosticSeverity::WARNING,
        Severity::Info => lsp_types::DiagnosticSeverity::INFORMATION,
    }
}

pub(crate) fn symbol_kind(kind: weft_ide::SymbolKind) -> lsp_types::SymbolKind {
    match kind {
        weft_ide::SymbolKind::Function => lsp_types::SymbolKind::FUNCTION,
        weft_ide::SymbolKind::Entry => lsp_types::SymbolKind::METHOD,
        weft_ide::SymbolKind::TypeAlias => lsp_types::SymbolKind::TYPE_PARAMETER,
        weft_ide::SymbolKind::Parameter => lsp_types::SymbolKind::VARIABLE,
        weft_ide::SymbolKind::Import => lsp_types::SymbolKind::MODULE,
    }
}

pub(crate) fn completion_kind(kind: weft_ide::CompletionKind) -> lsp_types::CompletionItemKind {
    match kind {
        weft_ide::CompletionKind::Local => lsp_types::CompletionItemKind::VARIABLE,
        weft_ide::CompletionKind::SizeParam => lsp_types::CompletionItemKind::TYPE_PARAMETER,
        weft_ide::CompletionKind::Function => lsp_types::CompletionItemKind::FUNCTION,
        weft_ide::CompletionKind::Builtin => lsp_types::CompletionItemKind::FUNCTION,
        weft_ide::CompletionKind::Level => lsp_types::CompletionItemKind::ENUM_MEMBER,
        weft_ide::CompletionKind::Field => lsp_types::CompletionItemKind::FIELD,
        weft_ide::CompletionKind::Keyword => lsp_types::CompletionItemKind::KEYWORD,
    }
}

/// The semantic token legend: indices are what `semantic_tokens` encodes.
pub(crate) const TOKEN_TYPES: [lsp_types::SemanticTokenType; 13] = [
    lsp_types::SemanticTokenType::KEYWORD,
    lsp_types::SemanticTokenType::NUMBER,
    lsp_types::SemanticTokenType::STRING,
    lsp_types::SemanticTokenType::COMMENT,
    lsp_types::SemanticTokenType::OPERATOR,
    lsp_types::SemanticTokenType::FUNCTION,
    lsp_types::SemanticTokenType::VARIABLE,
    lsp_types::SemanticTokenType::PARAMETER,
    lsp_types::SemanticTokenType::TYPE,
    lsp_types::SemanticTokenType::TYPE_PARAMETER,
    lsp_types::SemanticTokenType::NAMESPACE,
    lsp_types::SemanticTokenType::ENUM_MEMBER,
    lsp_types::SemanticTokenType::PROPERTY,
];

pub(crate) const TOKEN_MODIFIERS: [lsp_types::SemanticTokenModifier; 3] = [
    lsp_types::SemanticTokenModifier::DECLARATION,
    lsp_types::SemanticTokenModifier::DOCUMENTATION,
    lsp_types::SemanticTokenModifier::DEFAULT_LIBRARY,
];

fn token_type(tag: weft_ide::HighlightTag) -> u32 {
    use weft_ide::HighlightTag as T;
    match tag {
        T::Keyword => 0,
        T::Number => 1,
        T::String => 2,
        T::Comment => 3,
        T::Operator => 4,
        T::Function => 5,
        T::Variable => 6,
        T::Parameter => 7,
        T::Type => 8,
        T::TypeParameter => 9,
        T::Namespace => 10,
        T::EnumMember => 11,
        T::Property => 12,
    }
}

fn token_modifier_bit(modifier: weft_ide::HighlightModifier) -> u32 {
    match modifier {
        weft_ide::HighlightModifier::Declaration => 1,
        weft_ide::HighlightModifier::Documentation => 2,
        weft_ide::HighlightModifier::DefaultLibrary => 4,
    }
}

/// Encodes tokens as LSP's relative five-tuples (UTF-16 lengths; one line each).
pub(crate) fn semantic_tokens(
    file: &FileText<'_>,
    tokens: &[weft_ide::HighlightedRange],
) -> Vec<lsp_types::SemanticToken> {
    let mut out = Vec::with_capacity(tokens.len());
    let (mut prev_line, mut prev_start) = (0u32, 0u32);
    for token in tokens {
        let range = file.range(token.range);
        if range.start.line != range.end.line || range.end.character <= range.start.character {
            continue;
        }
        let delta_line = range.start.line - prev_line;
        let delta_start = if delta_line == 0 {
            range.start.character - prev_start
        } else {
            range.start.character
        };
        out.push(lsp_types::SemanticToken {
            delta_line,
            delta_start,
            length: range.end.character - range.start.character,
            token_type: token_type(token.tag),
            token_modifiers_bitset: token.modifiers.iter().map(|m| token_modifier_bit(*m)).sum(),
        });
        prev_line = range.start.line;
        prev_start = range.start.character;
    }
    out
}

/// A byte offset within `label` as a UTF-16 offset (signature help parameters).
pub(crate) fn utf16_len(text: &str) -> u32 {
    u32::try_from(text.chars().map(char::len_utf16).sum::<usize>()).unwrap_or(u32::MAX)
}
