//! The kinds of tokens and nodes in Weft's concrete syntax tree.
//!
//! One flat enum for both, as rowan wants. Token kinds come first and end at
//! `__LAST_TOKEN`; node kinds follow. The `T!` macro names punctuation and keywords
//! by their text, as rust-analyzer does.

/// A token or node kind. `#[repr(u16)]` so it converts to rowan's raw kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u16)]
#[expect(non_camel_case_types, reason = "kinds are named in SCREAMING_CASE like rust-analyzer's")]
pub enum SyntaxKind {
    // Trivia.
    WHITESPACE = 0,
    COMMENT,
    // Tokens with text.
    IDENT,
    INT_NUMBER,
    FLOAT_NUMBER,
    STRING,
    /// A character the lexer does not know; the lexer reports it.
    ERROR_TOKEN,
    // Keywords.
    DEF_KW,
    ENTRY_KW,
    LET_KW,
    IN_KW,
    IF_KW,
    THEN_KW,
    ELSE_KW,
    LOOP_KW,
    FOR_KW,
    WHILE_KW,
    DO_KW,
    TRUE_KW,
    FALSE_KW,
    TYPE_KW,
    IMPORT_KW,
    WITH_KW,
    // Punctuation.
    L_PAREN,
    R_PAREN,
    L_BRACK,
    R_BRACK,
    COMMA,
    COLON,
    COLON_GT,
    EQ,
    ARROW,
    BACKSLASH,
    DOT,
    AT,
    QUOTE,
    // Operators.
    PIPE2,
    AMP2,
    EQ2,
    NEQ,
    LT,
    LTEQ,
    GT,
    GTEQ,
    PIPE,
    CARET,
    AMP,
    SHL,
    SHR,
    PLUS,
    PLUS2,
    MINUS,
    STAR,
    SLASH,
    PERCENT,
    STAR2,
    BANG,
    PIPE_GT,
    LT_PIPE,
    QUESTION,
    L_BRACE,
    R_BRACE,
    EOF,
    __LAST_TOKEN,

    // Nodes.
    SOURCE_FILE,
    IMPORT,
    DEF,
    TYPE_ALIAS,
    NAME,
    NAME_REF,
    SIZE_PARAM,
    TYPE_PARAM,
    PARAM,
    RET_TYPE,
    // Types.
    PATH_TYPE,
    ARRAY_TYPE,
    TUPLE_TYPE,
    PAREN_TYPE,
    FN_TYPE,
    // Sizes.
    SIZE_NAME,
    SIZE_LIT,
    SIZE_BIN,
    SIZE_PAREN,
    // Patterns.
    IDENT_PAT,
    WILDCARD_PAT,
    TUPLE_PAT,
    PAREN_PAT,
    ASCRIBED_PAT,
    // Expressions.
    LITERAL,
    PATH_EXPR,
    STRATEGY,
    PAREN_EXPR,
    TUPLE_EXPR,
    ARRAY_EXPR,
    CALL_EXPR,
    BIN_EXPR,
    PREFIX_EXPR,
    LAMBDA_EXPR,
    OP_SECTION,
    LEFT_SECTION,
    RIGHT_SECTION,
    LET_EXPR,
    IF_EXPR,
    LOOP_EXPR,
    FOR_FORM,
    WHILE_FORM,
    INDEX_EXPR,
    INDEX,
    SLICE,
    PROJ_EXPR,
    ASCRIBE_EXPR,
    COERCE_EXPR,
    UPDATE_EXPR,
    PIPE_EXPR,
    LET_FN_EXPR,
    FOR_IN_FORM,
    RECORD_TYPE,
    RECORD_TYPE_FIELD,
    RECORD_EXPR,
    RECORD_EXPR_FIELD,
    FIELD_EXPR,
    RECORD_PAT,
    RECORD_PAT_FIELD,
    FIELD_SECTION,
    RECORD_UPDATE_EXPR,
    EXIST_TYPE,
    /// Tokens that could not be parsed, kept so the tree stays lossless.
    ERROR,
    __LAST,
}

use SyntaxKind::*;

impl SyntaxKind {
    pub fn is_trivia(self) -> bool {
        matches!(self, WHITESPACE | COMMENT)
    }

    pub fn is_keyword(self) -> bool {
        (DEF_KW as u16..=WITH_KW as u16).contains(&(self as u16))
    }

    pub fn is_token(self) -> bool {
        (self as u16) < (__LAST_TOKEN as u16)
    }

    pub fn from_keyword(ident: &str) -> Option<SyntaxKind> {
        let kw = match ident {
            "def" => DEF_KW,
            "entry" => ENTRY_KW,
            "let" => LET_KW,
            "in" => IN_KW,
            "if" => IF_KW,
            "then" => THEN_KW,
            "else" => ELSE_KW,
            "loop" => LOOP_KW,
            "for" => FOR_KW,
            "while" => WHILE_KW,
            "do" => DO_KW,
            "true" => TRUE_KW,
            "false" => FALSE_KW,
            "type" => TYPE_KW,
            "import" => IMPORT_KW,
            "with" => WITH_KW,
            _ => return None,
        };
        Some(kw)
    }

    /// The fixed text of a keyword, punctuation or operator token, for messages.
    pub fn fixed_text(self) -> Option<&'static str> {
        let text = match self {
            DEF_KW => "def",
            ENTRY_KW => "entry",
            LET_KW => "let",
            IN_KW => "in",
            IF_KW => "if",
            THEN_KW => "then",
            ELSE_KW => "else",
            LOOP_KW => "loop",
            FOR_KW => "for",
            WHILE_KW => "while",
            DO_KW => "do",
            TRUE_KW => "true",
            FALSE_KW => "false",
            TYPE_KW => "type",
            IMPORT_KW => "import",
            WITH_KW => "with",
            L_PAREN => "(",
            R_PAREN => ")",
            L_BRACK => "[",
            R_BRACK => "]",
            COMMA => ",",
            COLON => ":",
            COLON_GT => ":>",
            EQ => "=",
            ARROW => "->",
            BACKSLASH => "\\",
            DOT => ".",
            AT => "@",
            QUOTE => "'",
            PIPE2 => "||",
            AMP2 => "&&",
            EQ2 => "==",
            NEQ => "!=",
            LT => "<",
            LTEQ => "<=",
            GT => ">",
            GTEQ => ">=",
            PIPE => "|",
            CARET => "^",
            AMP => "&",
            SHL => "<<",
            SHR => ">>",
            PLUS => "+",
            PLUS2 => "++",
            MINUS => "-",
            STAR => "*",
            SLASH => "/",
            PERCENT => "%",
            STAR2 => "**",
            BANG => "!",
            PIPE_GT => "|>",
            LT_PIPE => "<|",
            QUESTION => "?",
            L_BRACE => "{",
            R_BRACE => "}",
            _ => return None,
        };
        Some(text)
    }

    /// A human name for "expected X" messages.
    pub fn describe(self) -> &'static str {
        match self {
            IDENT => "a name",
            INT_NUMBER => "an integer literal",
            FLOAT_NUMBER => "a float literal",
            STRING => "a string",
            EOF => "end of file",
            _ => self.fixed_text().unwrap_or("a token"),
        }
    }

    /// Binary operators: (left binding power, right binding power), loosest first
    /// (LANGUAGE.md section 4). `**` is right-associative, the others left.
    pub fn infix_binding_power(self) -> Option<(u8, u8)> {
        let bp = match self {
            PIPE2 => (5, 6),
            AMP2 => (7, 8),
            EQ2 | NEQ | LT | LTEQ | GT | GTEQ => (9, 10),
            PIPE => (11, 12),
            CARET => (13, 14),
            AMP => (15, 16),
            SHL | SHR => (17, 18),
            PLUS | PLUS2 | MINUS => (19, 20),
            STAR | SLASH | PERCENT => (21, 22),
            STAR2 => (24, 23),
            _ => return None,
        };
        Some(bp)
    }

    /// Pipes (version 1.1), looser than every binary operator as in Futhark: `|>` is
    /// left-associative, `<|` right-associative and binds tighter, so
    /// `f <| x |> g` is `g (f x)`. Not operators: they have no sections.
    pub fn pipe_binding_power(self) -> Option<(u8, u8)> {
        match self {
            PIPE_GT => Some((1, 2)),
            LT_PIPE => Some((4, 3)),
            _ => None,
        }
    }
}

/// Binding power of the operand of unary `-` and `!`: tighter than every binary
/// operator except `**`, so `-x ** 2` is `-(x ** 2)`.
pub const PREFIX_BINDING_POWER: u8 = 23;

impl From<SyntaxKind> for rowan::SyntaxKind {
    fn from(kind: SyntaxKind) -> Self {
        rowan::SyntaxKind(kind as u16)
    }
}

impl SyntaxKind {
    pub fn from_raw(raw: u16) -> SyntaxKind {
        assert!(raw < __LAST as u16, "invariant: raw kind {raw} out of range");
        // Safe alternative to transmute: a table built once.
        ALL_KINDS[raw as usize]
    }
}

macro_rules! all_kinds {
    ($($k:ident),* $(,)?) => { const ALL_KINDS: &[SyntaxKind] = &[$($k),*]; };
}

all_kinds![
    WHITESPACE,
    COMMENT,
    IDENT,
    INT_NUMBER,
    FLOAT_NUMBER,
    STRING,
    ERROR_TOKEN,
    DEF_KW,
    ENTRY_KW,
    LET_KW,
    IN_KW,
    IF_KW,
    THEN_KW,
    ELSE_KW,
    LOOP_KW,
    FOR_KW,
    WHILE_KW,
    DO_KW,
    TRUE_KW,
    FALSE_KW,
    TYPE_KW,
    IMPORT_KW,
    WITH_KW,
    L_PAREN,
    R_PAREN,
    L_BRACK,
    R_BRACK,
    COMMA,
    COLON,
    COLON_GT,
    EQ,
    ARROW,
    BACKSLASH,
    DOT,
    AT,
    QUOTE,
    PIPE2,
    AMP2,
    EQ2,
    NEQ,
    LT,
    LTEQ,
    GT,
    GTEQ,
    PIPE,
    CARET,
    AMP,
    SHL,
    SHR,
    PLUS,
    PLUS2,
    MINUS,
    STAR,
    SLASH,
    PERCENT,
    STAR2,
    BANG,
    PIPE_GT,
    LT_PIPE,
    QUESTION,
    L_BRACE,
    R_BRACE,
    EOF,
    __LAST_TOKEN,
    SOURCE_FILE,
    IMPORT,
    DEF,
    TYPE_ALIAS,
    NAME,
    NAME_REF,
    SIZE_PARAM,
    TYPE_PARAM,
    PARAM,
    RET_TYPE,
    PATH_TYPE,
    ARRAY_TYPE,
    TUPLE_TYPE,
    PAREN_TYPE,
    FN_TYPE,
    SIZE_NAME,
    SIZE_LIT,
    SIZE_BIN,
    SIZE_PAREN,
    IDENT_PAT,
    WILDCARD_PAT,
    TUPLE_PAT,
    PAREN_PAT,
    ASCRIBED_PAT,
    LITERAL,
    PATH_EXPR,
    STRATEGY,
    PAREN_EXPR,
    TUPLE_EXPR,
    ARRAY_EXPR,
    CALL_EXPR,
    BIN_EXPR,
    PREFIX_EXPR,
    LAMBDA_EXPR,
    OP_SECTION,
    LEFT_SECTION,
    RIGHT_SECTION,
    LET_EXPR,
    IF_EXPR,
    LOOP_EXPR,
    FOR_FORM,
    WHILE_FORM,
    INDEX_EXPR,
    INDEX,
    SLICE,
    PROJ_EXPR,
    ASCRIBE_EXPR,
    COERCE_EXPR,
    UPDATE_EXPR,
    PIPE_EXPR,
    LET_FN_EXPR,
    FOR_IN_FORM,
    RECORD_TYPE,
    RECORD_TYPE_FIELD,
    RECORD_EXPR,
    RECORD_EXPR_FIELD,
    FIELD_EXPR,
    RECORD_PAT,
    RECORD_PAT_FIELD,
    FIELD_SECTION,
    RECORD_UPDATE_EXPR,
    EXIST_TYPE,
    ERROR,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_table_matches_discriminants() {
        for (idx, kind) in ALL_KINDS.iter().enumerate() {
            assert_eq!(*kind as usize, idx, "{kind:?}");
        }
        assert_eq!(ALL_KINDS.len(), __LAST as usize);
    }
}
