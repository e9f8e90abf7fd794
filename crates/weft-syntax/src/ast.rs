//! The typed AST: zero-cost views over CST nodes (rust-analyzer's `syntax::ast`).
//!
//! `generated.rs` is produced from `weft.ungram`; `ext.rs` adds the accessors that
//! need the order of children (which `Expr` of a `BinExpr` is the left operand) and
//! the readers of token text (literals, operators, doc comments).

mod ext;
mod generated;

use std::marker::PhantomData;

pub use self::ext::*;
pub use self::generated::*;
use crate::{SyntaxKind, SyntaxNode, SyntaxToken};

/// A typed view of a CST node.
pub trait AstNode: Sized {
    fn can_cast(kind: SyntaxKind) -> bool;
    fn cast(syntax: SyntaxNode) -> Option<Self>;
    fn syntax(&self) -> &SyntaxNode;
}

/// The children of a node that cast to `N`.
#[derive(Debug, Clone)]
pub struct AstChildren<N> {
    inner: rowan::SyntaxNodeChildren<crate::WeftLanguage>,
    ph: PhantomData<N>,
}

impl<N: AstNode> Iterator for AstChildren<N> {
    type Item = N;
    fn next(&mut self) -> Option<N> {
        self.inner.find_map(N::cast)
    }
}

pub(crate) mod support {
    use super::*;

    pub(crate) fn child<N: AstNode>(parent: &SyntaxNode) -> Option<N> {
        parent.children().find_map(N::cast)
    }

    pub(crate) fn children<N: AstNode>(parent: &SyntaxNode) -> AstChildren<N> {
        AstChildren { inner: parent.children(), ph: PhantomData }
    }

    pub(crate) fn token(parent: &SyntaxNode, kind: SyntaxKind) -> Option<SyntaxToken> {
        parent.children_with_tokens().filter_map(|it| it.into_token()).find(|it| it.kind() == kind)
    }
}
