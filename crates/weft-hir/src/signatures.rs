//! Def signatures: parameters, size and type parameters, return type, as written.
//! A separate query from the body, so callers depend only on what they can see.

use std::sync::Arc;

use weft_syntax::ast;

use crate::items::{DefId, def_ast};
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
}

#[salsa::tracked(returns(ref))]
pub fn signature<'db>(db: &'db dyn Db, def: DefId<'db>) -> Arc<Signature> {
    let mut sig = Signature::default();
    match def_ast(db, def.loc(db)) {
        Some(ast::Item::Def(node)) => {
            sig.is_entry = node.is_entry();
            sig.doc = node.doc_comment();
            sig.size_params =
                node.size_params().filter_map(|p| p.name()).map(|n| Name::new(&n.text())).collect();
            sig.type_params =
                node.type_params().filter_map(|p| p.name()).map(|n| Name::new(&n.text())).collect();
            for param in node.params() {
                sig.params.push(TypeRef::lower(param.ty()));
                let name = match param.pat() {
                    Some(ast::Pat::IdentPat(p)) => p.name().map(|n| Name::new(&n.text())),
                    _ => None,
                };
                sig.param_names.push(name);
            }
            sig.ret = node.ret_type().map(|r| TypeRef::lower(r.ty()));
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
