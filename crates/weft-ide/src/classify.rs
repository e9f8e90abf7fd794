//! What a name in the source is: the one question every navigation feature asks.
//!
//! [`classify`] maps an identifier token to a [`Definition`] using the HIR: name
//! resolution of path expressions (through the body source map), bindings of
//! patterns, declarations' names, type names (file scope) and size names. Features
//! compare definitions for equality to find references, so a definition is
//! identified without positions where possible (`DefLoc`, `PatId`).

use std::sync::Arc;

use weft_hir::{
    Body, Builtin, DefId, DefLoc, DefSourceMap, Expr, LoopForm, Name, Pat, PatId, Resolution,
    RootDatabase, SourceFile, file_scope, item_tree,
};
use weft_syntax::ast::{self, AstNode};
use weft_syntax::{SyntaxKind, SyntaxNode, SyntaxToken, TextRange, TextSize};

use crate::NavigationTarget;

/// What a name refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Definition {
    /// A binding of a pattern (parameters, `let`, lambda and loop variables).
    Local {
        def: DefLoc,
        pat: PatId,
    },
    /// A `def`, `entry` or `type` declaration.
    Def(DefLoc),
    Builtin(Builtin),
    /// A size name of a def (`[n]`, or implicit in a parameter type) not bound by a
    /// parameter pattern.
    SizeParam {
        def: DefLoc,
        name: Name,
    },
}

/// A def's body and source map, as the features need them together.
pub(crate) struct DefData {
    pub(crate) loc: DefLoc,
    pub(crate) body: Arc<Body>,
    pub(crate) source_map: DefSourceMap,
}

impl DefData {
    pub(crate) fn new(db: &RootDatabase, loc: &DefLoc) -> DefData {
        let id = DefId::new(db, loc.clone());
        let body = Arc::clone(weft_hir::body(db, id));
        DefData { loc: loc.clone(), body, source_map: weft_hir::source_map(db, id) }
    }

    pub(crate) fn id<'db>(&self, db: &'db RootDatabase) -> DefId<'db> {
        DefId::new(db, self.loc.clone())
    }
}

/// Every declaration of a file, in source order.
pub(crate) fn file_defs(db: &RootDatabase, file: SourceFile) -> Vec<DefData> {
    item_tree(db, file).defs.iter().map(|loc| DefData::new(db, loc)).collect()
}

/// The declaration whose text contains `offset` (its end included).
pub(crate) fn enclosing_def(
    db: &RootDatabase,
    file: SourceFile,
    offset: TextSize,
) -> Option<DefData> {
    item_tree(db, file).defs.iter().find_map(|loc| {
        let data = DefData::new(db, loc);
        let range = data.source_map.def_range()?;
        range.contains_inclusive(offset).then_some(data)
    })
}

/// The identifier token at `offset`, preferring one that ends or starts there.
pub(crate) fn ident_at(root: &SyntaxNode, offset: TextSize) -> Option<SyntaxToken> {
    if offset > root.text_range().end() {
        return None;
    }
    root.token_at_offset(offset).find(|t| t.kind() == SyntaxKind::IDENT)
}

/// Classifies the identifier at `offset`: its range and what it refers to.
pub(crate) fn classify_at(
    db: &RootDatabase,
    file: SourceFile,
    offset: TextSize,
) -> Option<(SyntaxToken, Definition)> {
    let root = weft_hir::parse(db, file).syntax_node();
    let token = ident_at(&root, offset)?;
    let def = classify(db, file, &token)?;
    Some((token, def))
}

/// Classifies an identifier token of `file`.
pub(crate) fn classify(
    db: &RootDatabase,
    file: SourceFile,
    token: &SyntaxToken,
) -> Option<Definition> {
    let parent = token.parent()?;
    let range = token.text_range();
    let text = token.text();
    match parent.kind() {
        SyntaxKind::NAME => {
            let grand = parent.parent()?;
            match grand.kind() {
                SyntaxKind::DEF | SyntaxKind::TYPE_ALIAS => {
                    item_tree(db, file).defs.iter().find_map(|loc| {
                        let data = DefData::new(db, loc);
                        (data.source_map.name_range() == Some(range))
                            .then(|| Definition::Def(loc.clone()))
                    })
                }
                SyntaxKind::SIZE_PARAM => {
                    let data = enclosing_def(db, file, range.start())?;
                    Some(size_definition(&data, text))
                }
                _ => {
                    let data = enclosing_def(db, file, range.start())?;
                    let pat = bind_pat_at(&data, range)?;
                    Some(Definition::Local { def: data.loc.clone(), pat })
                }
            }
        }
        SyntaxKind::NAME_REF => {
            let grand = parent.parent()?;
            match grand.kind() {
                SyntaxKind::PATH_EXPR | SyntaxKind::RECORD_EXPR_FIELD => {
                    let data = enclosing_def(db, file, range.start())?;
                    // The token's own range: in `r.x`, `r` is a path of its own and
                    // `x` a field (version 1.1), which defines nothing.
                    let expr = data.source_map.expr_at(range)?;
                    let Expr::Path { res, .. } = &data.body.exprs[expr] else { return None };
                    match res {
                        Resolution::Local(pat) => {
                            Some(Definition::Local { def: data.loc.clone(), pat: *pat })
                        }
                        Resolution::SizeParam(name) => Some(size_definition(&data, name.as_str())),
                        Resolution::Def(loc) => Some(Definition::Def(loc.clone())),
                        Resolution::Builtin(builtin) => Some(Definition::Builtin(*builtin)),
                        Resolution::Unresolved => None,
                    }
                }
                // `{x}` in a pattern binds `x` (version 1.1).
                SyntaxKind::RECORD_PAT_FIELD => {
                    let data = enclosing_def(db, file, range.start())?;
                    let pat = bind_pat_at(&data, range)?;
                    Some(Definition::Local { def: data.loc.clone(), pat })
                }
                SyntaxKind::PATH_TYPE => {
                    file_scope(db, file).types.get(text).map(|loc| Definition::Def(loc.clone()))
                }
                SyntaxKind::SIZE_NAME => {
                    let data = enclosing_def(db, file, range.start())?;
                    Some(size_definition(&data, text))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Bindings visible at `offset`: parameters, and the patterns of every `let`, lambda
/// and loop whose body holds the offset (innermost first).
pub(crate) fn locals_in_scope(data: &DefData, offset: TextSize) -> Vec<PatId> {
    let mut scoped: Vec<(TextRange, PatId)> = Vec::new();
    let body_range = |expr| data.source_map.expr_range(expr);
    for (_, expr) in data.body.exprs.iter() {
        let (pats, body): (Vec<PatId>, _) = match expr {
            Expr::Let { pat, body, .. } => (vec![*pat], *body),
            Expr::Lambda { params, body } => (params.clone(), *body),
            Expr::Loop { pat, form, body, .. } => {
                let mut pats = vec![*pat];
                if let LoopForm::For { var, .. } = form {
                    pats.push(*var);
                }
                (pats, *body)
            }
            _ => continue,
        };
        let Some(range) = body_range(body) else { continue };
        if range.contains_inclusive(offset) {
            for pat in pats {
                let mut binds = Vec::new();
                bindings(data, pat, &mut binds);
                scoped.extend(binds.into_iter().map(|b| (range, b)));
            }
        }
    }
    scoped.sort_by_key(|(range, _)| range.len());
    let mut out: Vec<PatId> = scoped.into_iter().map(|(_, pat)| pat).collect();
    for &param in &data.body.params {
        bindings(data, param, &mut out);
    }
    out
}

pub(crate) fn bindings(data: &DefData, pat: PatId, out: &mut Vec<PatId>) {
    match &data.body.pats[pat] {
        // Bindings the compiler introduces (a `for x in xs` loop's array and index)
        // have no source and cannot be named.
        Pat::Bind { .. } if data.source_map.pat_range(pat).is_none() => {}
        Pat::Bind { .. } => out.push(pat),
        Pat::Tuple(pats) => pats.iter().for_each(|&p| bindings(data, p, out)),
        Pat::Ascribed { pat, .. } => bindings(data, *pat, out),
        Pat::Record(fields) => fields.iter().for_each(|(_, p)| bindings(data, *p, out)),
        Pat::Missing | Pat::Wild => {}
    }
}

/// A size name in a def: the parameter that binds it (`(n: i64)`), if any, else the
/// size parameter itself.
fn size_definition(data: &DefData, name: &str) -> Definition {
    for &param in &data.body.params {
        if let Some(pat) = find_binding(&data.body, param, name) {
            return Definition::Local { def: data.loc.clone(), pat };
        }
    }
    Definition::SizeParam { def: data.loc.clone(), name: Name::new(name) }
}

fn find_binding(body: &Body, pat: PatId, name: &str) -> Option<PatId> {
    match &body.pats[pat] {
        Pat::Bind { name: bound } if bound.as_str() == name => Some(pat),
        Pat::Bind { .. } | Pat::Missing | Pat::Wild => None,
        Pat::Tuple(pats) => pats.iter().find_map(|&p| find_binding(body, p, name)),
        Pat::Ascribed { pat, .. } => find_binding(body, *pat, name),
        Pat::Record(fields) => fields.iter().find_map(|(_, p)| find_binding(body, *p, name)),
    }
}

/// The binding pattern whose name is exactly `range`.
pub(crate) fn bind_pat_at(data: &DefData, range: TextRange) -> Option<PatId> {
    data.source_map.pat_ranges().find_map(|(pat, r)| {
        (r == range && matches!(data.body.pats[pat], Pat::Bind { .. })).then_some(pat)
    })
}

/// Where a definition is declared.
pub(crate) fn navigation_target(
    db: &RootDatabase,
    definition: &Definition,
) -> Option<NavigationTarget> {
    match definition {
        Definition::Def(loc) => {
            let data = DefData::new(db, loc);
            let focus_range = data.source_map.name_range()?;
            Some(NavigationTarget {
                path: loc.file.path(db).clone(),
                name: loc.name.as_str().to_owned(),
                full_range: data.source_map.def_range().unwrap_or(focus_range),
                focus_range,
            })
        }
        Definition::Local { def, pat } => {
            let data = DefData::new(db, def);
            let range = data.source_map.pat_range(*pat)?;
            let name = match &data.body.pats[*pat] {
                Pat::Bind { name } => name.as_str().to_owned(),
                _ => String::new(),
            };
            Some(NavigationTarget {
                path: def.file.path(db).clone(),
                name,
                full_range: range,
                focus_range: range,
            })
        }
        Definition::SizeParam { def, name } => {
            let item = weft_hir::def_ast(db, def)?;
            let ast::Item::Def(node) = item else { return None };
            // The explicit `[n]`, else the first mention in a parameter type.
            let token =
                node.syntax().descendants_with_tokens().filter_map(|e| e.into_token()).find(
                    |t| {
                        t.kind() == SyntaxKind::IDENT
                            && t.text() == name.as_str()
                            && t.parent().and_then(|p| p.parent()).is_some_and(|g| {
                                matches!(g.kind(), SyntaxKind::SIZE_PARAM | SyntaxKind::SIZE_NAME)
                            })
                    },
                )?;
            Some(NavigationTarget {
                path: def.file.path(db).clone(),
                name: name.as_str().to_owned(),
                full_range: token.text_range(),
                focus_range: token.text_range(),
            })
        }
        Definition::Builtin(_) => None,
    }
}

/// The files in which `definition` may be referred to.
pub(crate) fn search_scope(db: &RootDatabase, definition: &Definition) -> Vec<SourceFile> {
    match definition {
        Definition::Local { def, .. } | Definition::SizeParam { def, .. } => vec![def.file],
        Definition::Def(loc) => db
            .files()
            .into_iter()
            .filter(|&file| {
                if file == loc.file {
                    return true;
                }
                let scope = file_scope(db, file);
                let map = if loc.kind == weft_hir::DefKind::TypeAlias {
                    &scope.types
                } else {
                    &scope.values
                };
                map.get(loc.name.as_str()) == Some(loc)
            })
            .collect(),
        Definition::Builtin(_) => db.files(),
    }
}

/// Every identifier token with `name`'s text in the search scope that refers to
/// `definition`, the declaration included, by file.
pub(crate) fn find_references(
    db: &RootDatabase,
    definition: &Definition,
    name: &str,
) -> Vec<(SourceFile, TextRange)> {
    let mut out = Vec::new();
    for file in search_scope(db, definition) {
        if !file.text(db).contains(name) {
            continue;
        }
        let root = weft_hir::parse(db, file).syntax_node();
        for token in root.descendants_with_tokens().filter_map(|e| e.into_token()) {
            if token.kind() != SyntaxKind::IDENT || token.text() != name {
                continue;
            }
            if classify(db, file, &token).as_ref() == Some(definition) {
                out.push((file, token.text_range()));
            }
        }
    }
    out
}
