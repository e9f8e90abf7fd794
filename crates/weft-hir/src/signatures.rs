//! Def signatures: parameters, size and type parameters, return type, as written.
//! A separate query from the body, so callers depend only on what they can see.

use std::sync::Arc;

use weft_syntax::ast::{self, AstNode};

use crate::items::{DefId, def_item, def_item_ast};
use crate::type_ref::TypeRef;
use crate::{Db, Name};

/// What a def's header says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Signature {
    pub is_entry: bool,
    /// Explicit `[n]` parameters.
    pub size_params: Vec<Name>,
    /// Declared `'a` parameters.
    pub type_params: Vec<Name>,
    /// Parameter types, one per `(pat: type)`.
    pub params: Vec<TypeRef>,
    /// The simple name of each parameter, if its pattern is a name.
    pub param_names: Vec<Option<Name>>,
    pub ret: Option<TypeRef>,
    /// For a `type` alias: the aliased type.
    pub alias: Option<TypeRef>,
    pub doc: Option<String>,
    /// A syntax error between the name and the `=`: the parameters or the return type
    /// may be cut short, so callers see every parameter and the result as the error
    /// type rather than report mismatches against a signature nobody wrote.
    pub malformed_header: bool,
}

#[salsa::tracked(returns(ref))]
pub fn signature<'db>(db: &'db dyn Db, def: DefId<'db>) -> Arc<Signature> {
    let mut sig = Signature::default();
    match def_item_ast(db, def.loc(db)) {
        Some(ast::Item::Def(node)) => {
            sig.is_entry = node.is_entry();
            sig.doc = node.doc_comment();
            sig.size_params =
                node.size_params().filter_map(|p| p.name()).map(|n| Name::new(&n.text())).collect();
            sig.type_params =
                node.type_params().filter_map(|p| p.name()).map(|n| Name::new(&n.text())).collect();
            let mut anonymous = 0;
            for param in node.params() {
                let mut ty = TypeRef::of_param(&param);
                ty.name_anonymous_sizes(&mut anonymous);
                sig.params.push(ty);
                let name = match param.pat() {
                    Some(ast::Pat::IdentPat(p)) => p.name().map(|n| Name::new(&n.text())),
                    _ => None,
                };
                sig.param_names.push(name);
            }
            sig.ret = node.ret_type().map(|r| TypeRef::lower(r.ty()));
            sig.malformed_header = header_has_syntax_error(db, def, &node);
        }
        Some(ast::Item::TypeAlias(node)) => {
            sig.doc = node.doc_comment();
            sig.type_params =
                node.type_params().filter_map(|p| p.name()).map(|n| Name::new(&n.text())).collect();
            sig.alias = Some(TypeRef::lower(node.ty()));
        }
        Some(ast::Item::Import(_)) | None => {}
    }
    Arc::new(sig)
}

fn header_has_syntax_error(db: &dyn Db, def: DefId<'_>, node: &ast::Def) -> bool {
    let Some(name) = node.name() else { return true };
    let after_name = name.syntax().text_range().end();
    let header_end =
        node.eq_token().map_or(node.syntax().text_range().end(), |t| t.text_range().end());
    // An error at the next declaration's keyword ("expected `)`, found `def`") lies at
    // this node's end, within the header when `=` is missing.
    let Some(item) = def_item(db, def) else { return false };
    crate::items::parse_item(db, item)
        .errors()
        .iter()
        .any(|e| e.range.start() >= after_name && e.range.start() < header_end)
}
