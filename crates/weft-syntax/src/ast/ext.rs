//! Hand-written AST accessors: children whose role depends on their position, the
//! meaning of operator tokens, literals, and the comments attached to declarations.

use crate::SyntaxKind::{self, *};
use crate::ast::{self, AstNode, support};
use crate::{SyntaxNode, SyntaxToken};

/// A binary operator (LANGUAGE.md section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Neq,
    Lt,
    Le,
    Gt,
    Ge,
    BitOr,
    BitXor,
    BitAnd,
    Shl,
    Shr,
    Add,
    Concat,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
}

impl BinOp {
    pub fn from_kind(kind: SyntaxKind) -> Option<BinOp> {
        let op = match kind {
            PIPE2 => BinOp::Or,
            AMP2 => BinOp::And,
            EQ2 => BinOp::Eq,
            NEQ => BinOp::Neq,
            LT => BinOp::Lt,
            LTEQ => BinOp::Le,
            GT => BinOp::Gt,
            GTEQ => BinOp::Ge,
            PIPE => BinOp::BitOr,
            CARET => BinOp::BitXor,
            AMP => BinOp::BitAnd,
            SHL => BinOp::Shl,
            SHR => BinOp::Shr,
            PLUS => BinOp::Add,
            PLUS2 => BinOp::Concat,
            MINUS => BinOp::Sub,
            STAR => BinOp::Mul,
            SLASH => BinOp::Div,
            PERCENT => BinOp::Rem,
            STAR2 => BinOp::Pow,
            _ => return None,
        };
        Some(op)
    }

    pub fn text(self) -> &'static str {
        match self {
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::Eq => "==",
            BinOp::Neq => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::BitAnd => "&",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Add => "+",
            BinOp::Concat => "++",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Pow => "**",
        }
    }
}

/// `-e` or `!e`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrefixOp {
    Neg,
    Not,
}

/// The operators of size expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SizeOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// What a literal token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiteralKind {
    Int(SyntaxToken),
    Float(SyntaxToken),
    Bool(bool),
}

fn tokens(node: &SyntaxNode) -> impl Iterator<Item = SyntaxToken> {
    node.children_with_tokens().filter_map(|it| it.into_token())
}

fn first_operator(node: &SyntaxNode) -> Option<SyntaxToken> {
    tokens(node).find(|t| BinOp::from_kind(t.kind()).is_some())
}

/// The first child of type `N` that starts after the first token of `kind`.
fn child_after<N: AstNode>(node: &SyntaxNode, kind: SyntaxKind) -> Option<N> {
    let token = support::token(node, kind)?;
    let after = token.text_range().end();
    node.children().filter(|c| c.text_range().start() >= after).find_map(N::cast)
}

fn nth_child<N: AstNode>(node: &SyntaxNode, n: usize) -> Option<N> {
    node.children().filter_map(N::cast).nth(n)
}

impl ast::Def {
    pub fn is_entry(&self) -> bool {
        self.entry_kw_token().is_some()
    }

    /// The comment tokens attached above the declaration (doc comment, test block).
    pub fn leading_comments(&self) -> impl Iterator<Item = SyntaxToken> {
        leading_comments(self.syntax())
    }

    /// The text of the `-- |` doc comment lines, without their markers.
    pub fn doc_comment(&self) -> Option<String> {
        doc_comment(self.syntax())
    }
}

impl ast::TypeAlias {
    pub fn doc_comment(&self) -> Option<String> {
        doc_comment(self.syntax())
    }
}

fn leading_comments(node: &SyntaxNode) -> impl Iterator<Item = SyntaxToken> {
    node.children_with_tokens()
        .map_while(|it| it.into_token())
        .take_while(|t| t.kind().is_trivia())
        .filter(|t| t.kind() == COMMENT)
}

/// Doc comments: a `-- |` line and the comment lines after it, up to a test block,
/// without `-- bench:` lines (the inputs of `weft bench`, of any size).
fn doc_comment(node: &SyntaxNode) -> Option<String> {
    let mut lines = Vec::new();
    let mut inside = false;
    for comment in leading_comments(node) {
        let text = comment.text().strip_prefix("--").unwrap_or(comment.text());
        let trimmed = text.trim_start();
        if let Some(rest) = trimmed.strip_prefix('|') {
            inside = true;
            lines.clear();
            lines.push(rest.strip_prefix(' ').unwrap_or(rest).trim_end().to_owned());
        } else if trimmed.starts_with("==") {
            inside = false;
        } else if inside && crate::test_block::bench_comment(trimmed).is_none() {
            lines.push(text.strip_prefix(' ').unwrap_or(text).trim_end().to_owned());
        }
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

impl ast::PathExpr {
    /// `f32` in `f32.sqrt`.
    pub fn qualifier(&self) -> Option<ast::NameRef> {
        let mut refs = support::children::<ast::NameRef>(self.syntax());
        let first = refs.next()?;
        refs.next().map(|_| first)
    }

    /// The name itself: `sqrt` in `f32.sqrt`, `map` in `map@group`.
    pub fn name_ref(&self) -> Option<ast::NameRef> {
        support::children::<ast::NameRef>(self.syntax()).last()
    }
}

impl ast::NameRef {
    pub fn text(&self) -> String {
        self.ident_token().map(|t| t.text().to_owned()).unwrap_or_default()
    }
}

impl ast::Name {
    /// The name as written: one identifier, or `f32.sum` for a def in a namespace.
    pub fn text(&self) -> String {
        tokens(self.syntax()).map(|t| t.text().to_owned()).collect()
    }
}

impl ast::FnType {
    pub fn param_ty(&self) -> Option<ast::Type> {
        nth_child(self.syntax(), 0)
    }

    pub fn ret_ty(&self) -> Option<ast::Type> {
        child_after(self.syntax(), ARROW)
    }
}

impl ast::SizeBin {
    pub fn lhs(&self) -> Option<ast::Size> {
        nth_child(self.syntax(), 0)
    }

    pub fn rhs(&self) -> Option<ast::Size> {
        let op = self.op_token()?;
        let after = op.text_range().end();
        self.syntax()
            .children()
            .filter(|c| c.text_range().start() >= after)
            .find_map(ast::Size::cast)
    }

    pub fn op_token(&self) -> Option<SyntaxToken> {
        tokens(self.syntax()).find(|t| matches!(t.kind(), PLUS | MINUS | STAR | SLASH))
    }

    pub fn op(&self) -> Option<SizeOp> {
        Some(match self.op_token()?.kind() {
            PLUS => SizeOp::Add,
            MINUS => SizeOp::Sub,
            STAR => SizeOp::Mul,
            _ => SizeOp::Div,
        })
    }
}

impl ast::CallExpr {
    pub fn callee(&self) -> Option<ast::Expr> {
        nth_child(self.syntax(), 0)
    }

    pub fn args(&self) -> impl Iterator<Item = ast::Expr> {
        support::children::<ast::Expr>(self.syntax()).skip(1)
    }
}

impl ast::BinExpr {
    pub fn lhs(&self) -> Option<ast::Expr> {
        let op = self.op_token()?;
        let first: ast::Expr = nth_child(self.syntax(), 0)?;
        (first.syntax().text_range().end() <= op.text_range().start()).then_some(first)
    }

    pub fn rhs(&self) -> Option<ast::Expr> {
        let op = self.op_token()?;
        let after = op.text_range().end();
        self.syntax()
            .children()
            .filter(|c| c.text_range().start() >= after)
            .find_map(ast::Expr::cast)
    }

    pub fn op_token(&self) -> Option<SyntaxToken> {
        first_operator(self.syntax())
    }

    pub fn op(&self) -> Option<BinOp> {
        BinOp::from_kind(self.op_token()?.kind())
    }
}

impl ast::PrefixExpr {
    pub fn op_token(&self) -> Option<SyntaxToken> {
        tokens(self.syntax()).find(|t| matches!(t.kind(), MINUS | BANG))
    }

    pub fn op(&self) -> Option<PrefixOp> {
        Some(if self.op_token()?.kind() == MINUS { PrefixOp::Neg } else { PrefixOp::Not })
    }
}

macro_rules! section_op {
    ($($node:ident),*) => {$(
        impl ast::$node {
            pub fn op_token(&self) -> Option<SyntaxToken> {
                first_operator(self.syntax())
            }

            pub fn op(&self) -> Option<BinOp> {
                BinOp::from_kind(self.op_token()?.kind())
            }
        }
    )*};
}

section_op!(OpSection, LeftSection, RightSection);

impl ast::LetExpr {
    pub fn value(&self) -> Option<ast::Expr> {
        child_after(self.syntax(), EQ)
    }

    pub fn body(&self) -> Option<ast::Expr> {
        let_body(self.syntax(), self.value())
    }
}

impl ast::LetFnExpr {
    pub fn value(&self) -> Option<ast::Expr> {
        child_after(self.syntax(), EQ)
    }

    pub fn body(&self) -> Option<ast::Expr> {
        let_body(self.syntax(), self.value())
    }
}

/// The body of a `let` (of either form): after `in`, or the next `let` of a chain.
fn let_body(node: &SyntaxNode, value: Option<ast::Expr>) -> Option<ast::Expr> {
    if let Some(body) = child_after(node, IN_KW) {
        return Some(body);
    }
    // `let p = e let ...`: the nested `let` is the body.
    let value_end = value?.syntax().text_range().end();
    node.children()
        .filter(|c| c.text_range().start() >= value_end)
        .filter(|c| matches!(c.kind(), LET_EXPR | LET_FN_EXPR))
        .find_map(ast::Expr::cast)
}

/// Which way a pipe applies (version 1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PipeDirection {
    /// `x |> f`
    Forward,
    /// `f <| x`
    Backward,
}

impl ast::PipeExpr {
    pub fn op_token(&self) -> Option<SyntaxToken> {
        tokens(self.syntax()).find(|t| matches!(t.kind(), PIPE_GT | LT_PIPE))
    }

    pub fn direction(&self) -> Option<PipeDirection> {
        match self.op_token()?.kind() {
            PIPE_GT => Some(PipeDirection::Forward),
            _ => Some(PipeDirection::Backward),
        }
    }

    pub fn lhs(&self) -> Option<ast::Expr> {
        let op = self.op_token()?;
        let first: ast::Expr = nth_child(self.syntax(), 0)?;
        (first.syntax().text_range().end() <= op.text_range().start()).then_some(first)
    }

    pub fn rhs(&self) -> Option<ast::Expr> {
        let after = self.op_token()?.text_range().end();
        self.syntax()
            .children()
            .filter(|c| c.text_range().start() >= after)
            .find_map(ast::Expr::cast)
    }

    /// The function applied and its argument, whichever way the pipe points.
    pub fn function_and_argument(&self) -> (Option<ast::Expr>, Option<ast::Expr>) {
        match self.direction() {
            Some(PipeDirection::Forward) => (self.rhs(), self.lhs()),
            _ => (self.lhs(), self.rhs()),
        }
    }
}

impl ast::IfExpr {
    pub fn condition(&self) -> Option<ast::Expr> {
        child_after(self.syntax(), IF_KW)
    }

    pub fn then_branch(&self) -> Option<ast::Expr> {
        child_after(self.syntax(), THEN_KW)
    }

    pub fn else_branch(&self) -> Option<ast::Expr> {
        child_after(self.syntax(), ELSE_KW)
    }
}

impl ast::LoopExpr {
    pub fn init(&self) -> Option<ast::Expr> {
        child_after(self.syntax(), EQ)
    }

    pub fn body(&self) -> Option<ast::Expr> {
        child_after(self.syntax(), DO_KW)
    }
}

impl ast::Slice {
    /// The parts of `start:end:stride`, each possibly absent.
    pub fn parts(&self) -> [Option<ast::Expr>; 3] {
        let mut parts = [None, None, None];
        let mut part = 0;
        for element in self.syntax().children_with_tokens() {
            match element {
                rowan::NodeOrToken::Token(t) if t.kind() == COLON => part += 1,
                rowan::NodeOrToken::Node(n) => {
                    if let (Some(slot), Some(expr)) = (parts.get_mut(part), ast::Expr::cast(n)) {
                        *slot = Some(expr);
                    }
                }
                rowan::NodeOrToken::Token(_) => {}
            }
        }
        parts
    }
}

impl ast::UpdateExpr {
    pub fn base(&self) -> Option<ast::Expr> {
        let with = self.with_kw_token()?;
        let first: ast::Expr = nth_child(self.syntax(), 0)?;
        (first.syntax().text_range().end() <= with.text_range().start()).then_some(first)
    }

    pub fn value(&self) -> Option<ast::Expr> {
        child_after(self.syntax(), EQ)
    }
}

impl ast::RecordUpdateExpr {
    pub fn base(&self) -> Option<ast::Expr> {
        let with = self.with_kw_token()?;
        let first: ast::Expr = nth_child(self.syntax(), 0)?;
        (first.syntax().text_range().end() <= with.text_range().start()).then_some(first)
    }

    pub fn value(&self) -> Option<ast::Expr> {
        child_after(self.syntax(), EQ)
    }
}

impl ast::ProjExpr {
    pub fn index_token(&self) -> Option<SyntaxToken> {
        self.int_number_token()
    }
}

impl ast::Literal {
    pub fn kind(&self) -> Option<LiteralKind> {
        let token = tokens(self.syntax()).next()?;
        Some(match token.kind() {
            INT_NUMBER => LiteralKind::Int(token),
            FLOAT_NUMBER => LiteralKind::Float(token),
            TRUE_KW => LiteralKind::Bool(true),
            _ => LiteralKind::Bool(false),
        })
    }
}

impl ast::Import {
    /// The import path without quotes; escapes `\"` and `\\` resolved.
    pub fn path(&self) -> Option<String> {
        let token = self.string_token()?;
        let text = token.text().strip_prefix('"')?.strip_suffix('"')?;
        Some(text.replace("\\\"", "\"").replace("\\\\", "\\"))
    }
}

/// Items of a file in source order.
impl ast::SourceFile {
    pub fn defs(&self) -> impl Iterator<Item = ast::Def> {
        self.items().filter_map(|item| match item {
            ast::Item::Def(def) => Some(def),
            ast::Item::Import(_) | ast::Item::TypeAlias(_) => None,
        })
    }
}
