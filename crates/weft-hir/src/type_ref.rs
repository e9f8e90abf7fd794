//! Types as written (`[n*2]f32`, `v3`, `a -> b`): syntax lowered to position-free
//! data. Resolution of names in them (scalar, type parameter, alias, size variable)
//! happens during inference, where the scopes are known.

use weft_syntax::ast::{self, AstNode, SizeOp};

use crate::Name;

/// A type annotation as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeRef {
    /// A scalar, a type parameter or an alias: resolved later.
    Name(Name),
    Array(SizeRef, Box<TypeRef>),
    Tuple(Vec<TypeRef>),
    /// `{x: f32, y: f32}` (version 1.1), fields as written.
    Record(Vec<(Name, TypeRef)>),
    Fn(Box<TypeRef>, Box<TypeRef>),
    /// `?[k][m].t` (version 1.1): sizes named here are determined by the value, in a
    /// return type.
    Exist(Vec<Name>, Box<TypeRef>),
    /// Missing or malformed (a syntax error was reported).
    Error,
}

/// A size as written in a type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SizeRef {
    Name(Name),
    Literal(i64),
    Binary(SizeOp, Box<SizeRef>, Box<SizeRef>),
    /// `[]t` (version 1.1): a size the program does not name.
    Anonymous,
    Error,
}

impl TypeRef {
    pub fn lower(ty: Option<ast::Type>) -> TypeRef {
        let Some(ty) = ty else { return TypeRef::Error };
        match ty {
            ast::Type::PathType(path) => path
                .name_ref()
                .map_or(TypeRef::Error, |name| TypeRef::Name(Name::new(&name.text()))),
            ast::Type::ArrayType(array) => {
                let size = match array.size() {
                    Some(size) => SizeRef::lower(Some(size)),
                    None if is_empty_brackets(&array) => SizeRef::Anonymous,
                    None => SizeRef::Error,
                };
                TypeRef::Array(size, Box::new(TypeRef::lower(array.ty())))
            }
            ast::Type::ExistType(exist) => TypeRef::Exist(
                exist
                    .size_params()
                    .filter_map(|p| p.name())
                    .map(|n| Name::new(&n.text()))
                    .collect(),
                Box::new(TypeRef::lower(exist.ty())),
            ),
            ast::Type::TupleType(tuple) => {
                TypeRef::Tuple(tuple.tys().map(|t| TypeRef::lower(Some(t))).collect())
            }
            ast::Type::ParenType(paren) => TypeRef::lower(paren.ty()),
            ast::Type::RecordType(record) => TypeRef::Record(
                record
                    .record_type_fields()
                    .filter_map(|field| {
                        Some((Name::new(&field.name()?.text()), TypeRef::lower(field.ty())))
                    })
                    .collect(),
            ),
            ast::Type::FnType(func) => TypeRef::Fn(
                Box::new(TypeRef::lower(func.param_ty())),
                Box::new(TypeRef::lower(func.ret_ty())),
            ),
        }
    }

    /// A parameter's type: its annotation, or for `(d: f32, i: i64)` (version 1.1) the
    /// tuple of its elements' ascriptions.
    pub fn of_param(param: &ast::Param) -> TypeRef {
        match (param.ty(), param.pat()) {
            (Some(ty), _) => TypeRef::lower(Some(ty)),
            (None, Some(pat)) => TypeRef::of_ascribed_pat(pat),
            (None, None) => TypeRef::Error,
        }
    }

    fn of_ascribed_pat(pat: ast::Pat) -> TypeRef {
        match pat {
            ast::Pat::AscribedPat(p) => TypeRef::lower(p.ty()),
            ast::Pat::TuplePat(p) => {
                TypeRef::Tuple(p.pats().map(TypeRef::of_ascribed_pat).collect())
            }
            ast::Pat::ParenPat(p) => p.pat().map_or(TypeRef::Error, TypeRef::of_ascribed_pat),
            // The parser reported the missing `:`.
            ast::Pat::IdentPat(_) | ast::Pat::WildcardPat(_) | ast::Pat::RecordPat(_) => {
                TypeRef::Error
            }
        }
    }

    /// Calls `f` on every size name, outermost first.
    pub fn for_each_size_name(&self, f: &mut dyn FnMut(&Name)) {
        match self {
            TypeRef::Name(_) | TypeRef::Error => {}
            TypeRef::Array(size, elem) => {
                size.for_each_name(f);
                elem.for_each_size_name(f);
            }
            TypeRef::Tuple(elems) => elems.iter().for_each(|e| e.for_each_size_name(f)),
            TypeRef::Record(fields) => fields.iter().for_each(|(_, t)| t.for_each_size_name(f)),
            TypeRef::Fn(param, ret) => {
                param.for_each_size_name(f);
                ret.for_each_size_name(f);
            }
            TypeRef::Exist(names, ty) => ty.for_each_size_name(&mut |name| {
                if !names.contains(name) {
                    f(name);
                }
            }),
        }
    }

    /// Whether the type has sizes that its value determines: `?[k].t` or `[]`.
    pub fn has_existential(&self) -> bool {
        match self {
            TypeRef::Name(_) | TypeRef::Error => false,
            TypeRef::Exist(..) => true,
            TypeRef::Array(size, elem) => *size == SizeRef::Anonymous || elem.has_existential(),
            TypeRef::Tuple(elems) => elems.iter().any(TypeRef::has_existential),
            TypeRef::Record(fields) => fields.iter().any(|(_, t)| t.has_existential()),
            TypeRef::Fn(param, ret) => param.has_existential() || ret.has_existential(),
        }
    }

    /// Names each anonymous size (`[]t`) of a parameter type `#1`, `#2`, ... in order,
    /// continuing from `next`: an implicit size parameter that no source name can refer
    /// to (`#` is not part of a name).
    pub fn name_anonymous_sizes(&mut self, next: &mut u32) {
        match self {
            TypeRef::Name(_) | TypeRef::Error => {}
            TypeRef::Array(size, elem) => {
                if *size == SizeRef::Anonymous {
                    *next += 1;
                    *size = SizeRef::Name(Name::new(&format!("#{next}")));
                }
                elem.name_anonymous_sizes(next);
            }
            TypeRef::Tuple(elems) => elems.iter_mut().for_each(|e| e.name_anonymous_sizes(next)),
            TypeRef::Record(fields) => {
                fields.iter_mut().for_each(|(_, t)| t.name_anonymous_sizes(next))
            }
            TypeRef::Fn(param, ret) => {
                param.name_anonymous_sizes(next);
                ret.name_anonymous_sizes(next);
            }
            TypeRef::Exist(_, ty) => ty.name_anonymous_sizes(next),
        }
    }
}

/// Whether an array type's brackets hold nothing (`[]t`), as opposed to a size the
/// parser could not read (which it reported).
fn is_empty_brackets(array: &ast::ArrayType) -> bool {
    use weft_syntax::SyntaxKind;
    let mut tokens = array
        .syntax()
        .children_with_tokens()
        .filter(|t| !matches!(t.kind(), SyntaxKind::WHITESPACE | SyntaxKind::COMMENT));
    matches!(
        (tokens.next().map(|t| t.kind()), tokens.next().map(|t| t.kind())),
        (Some(SyntaxKind::L_BRACK), Some(SyntaxKind::R_BRACK))
    )
}

impl SizeRef {
    pub fn lower(size: Option<ast::Size>) -> SizeRef {
        let Some(size) = size else { return SizeRef::Error };
        match size {
            ast::Size::SizeName(name) => {
                name.name_ref().map_or(SizeRef::Error, |n| SizeRef::Name(Name::new(&n.text())))
            }
            ast::Size::SizeLit(lit) => lit
                .int_number_token()
                .and_then(|t| crate::expr_store::parse_int_text(t.text()).ok())
                .and_then(|(value, _)| i64::try_from(value).ok())
                .map_or(SizeRef::Error, SizeRef::Literal),
            ast::Size::SizeParen(paren) => SizeRef::lower(paren.size()),
            ast::Size::SizeBin(bin) => match bin.op() {
                Some(op) => SizeRef::Binary(
                    op,
                    Box::new(SizeRef::lower(bin.lhs())),
                    Box::new(SizeRef::lower(bin.rhs())),
                ),
                None => SizeRef::Error,
            },
        }
    }

    pub fn for_each_name(&self, f: &mut dyn FnMut(&Name)) {
        match self {
            SizeRef::Name(name) => f(name),
            SizeRef::Literal(_) | SizeRef::Anonymous | SizeRef::Error => {}
            SizeRef::Binary(_, lhs, rhs) => {
                lhs.for_each_name(f);
                rhs.for_each_name(f);
            }
        }
    }
}
