//! The HIR printer for `weft dump --ir hir` and tests: every def's type scheme, then
//! every binding's inferred type, in source order.

use std::fmt::Write;

use crate::expr_store::{Expr, Pat, body_with_source_map};
use crate::inference::{def_scheme, infer};
use crate::items::{DefId, DefKind, item_tree};
use crate::ty::Scheme;
use crate::{Db, SourceFile};

/// `name : type`, with size-binding parameters named: `iota : (n: i64) -> [n]i64`.
pub fn pretty_scheme(name: &str, scheme: &Scheme) -> String {
    format!("{name} : {scheme}")
}

pub fn pretty_file(db: &dyn Db, file: SourceFile) -> String {
    let mut out = String::new();
    for loc in item_tree(db, file).defs.iter() {
        let id = DefId::new(db, loc.clone());
        let keyword = match loc.kind {
            DefKind::Def => "def",
            DefKind::Entry => "entry",
            DefKind::TypeAlias => "type",
        };
        let scheme = def_scheme(db, id);
        let _ = writeln!(out, "{keyword} {}", pretty_scheme(loc.name.as_str(), scheme));
        if loc.kind == DefKind::TypeAlias {
            continue;
        }
        let (body, source_map) = body_with_source_map(db, id);
        let result = infer(db, id);
        let mut bindings: Vec<(weft_syntax::TextSize, String)> = Vec::new();
        let lambda_params: Vec<_> = body
            .exprs
            .iter()
            .filter_map(|(_, e)| match e {
                Expr::Lambda { params, .. } => Some(params.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        for (pat, data) in body.pats.iter() {
            let Pat::Bind { name } = data else { continue };
            let kind = if body.params.contains(&pat) {
                "param"
            } else if lambda_params.contains(&pat) {
                "lambda"
            } else {
                "let"
            };
            // Bindings the compiler introduces (a `for x in xs` loop's array and
            // index, a field section's record) have no source and are not shown.
            let Some(start) = source_map.pat_range(pat).map(|r| r.start()) else { continue };
            bindings.push((start, format!("  {kind} {name} : {}", result.pat_ty(pat))));
        }
        bindings.sort_by_key(|(start, _)| *start);
        for (_, line) in bindings {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}
