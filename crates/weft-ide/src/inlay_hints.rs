//! Inlay hints: inferred types of unannotated `let` bindings and lambda parameters,
//! a def's inferred (implicit) size parameters after its name, and the address space
//! (`@local`, `@private`) of let-bound arrays a kernel keeps in its own memory.

use weft_hir::{Expr, Pat, PatId, RootDatabase, def_scheme, infer, signature};
use weft_syntax::TextSize;

use crate::classify::{DefData, file_defs};
use crate::kernels::{HOVER_BUDGET, call_chain, kernels_materialising};

/// What a hint shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InlayKind {
    Type,
    SizeParameters,
    /// `@local` / `@private`: where a kernel keeps a let-bound array.
    AddressSpace,
}

/// A hint shown at `offset`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayHint {
    pub offset: TextSize,
    pub label: String,
    pub kind: InlayKind,
}

pub(crate) fn inlay_hints(db: &RootDatabase, path: &str) -> Vec<InlayHint> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let mut out = Vec::new();
    for data in file_defs(db, file) {
        if data.loc.kind == weft_hir::DefKind::TypeAlias {
            continue;
        }
        size_param_hint(db, &data, &mut out);
        let result = infer(db, data.id(db));
        let hint_pat = |pat: PatId, out: &mut Vec<InlayHint>| {
            let mut binds = Vec::new();
            bindings(&data, pat, &mut binds);
            for pat in binds {
                let ty = result.pat_ty(pat);
                if ty.contains_error() {
                    continue;
                }
                if let Some(range) = data.source_map.pat_range(pat) {
                    out.push(InlayHint {
                        offset: range.end(),
                        label: format!(": {ty}"),
                        kind: InlayKind::Type,
                    });
                }
            }
        };
        for (_, expr) in data.body.exprs.iter() {
            match expr {
                Expr::Let { pat, ty: None, .. } => hint_pat(*pat, &mut out),
                Expr::Lambda { params, .. } => {
                    for &pat in params {
                        hint_pat(pat, &mut out);
                    }
                }
                _ => {}
            }
            // After the type hint at the same offset: `t: [m]f32 @local`.
            if let Expr::Let { pat, value, .. } = expr
                && matches!(data.body.pats[*pat], Pat::Bind { .. })
                && matches!(result.pat_ty(*pat), weft_hir::Ty::Array { .. })
            {
                space_hint(db, &data, *pat, *value, &mut out);
            }
        }
    }
    out.sort_by_key(|hint| hint.offset);
    out
}

/// Bound names of a pattern that have no type annotation.
fn bindings(data: &DefData, pat: PatId, out: &mut Vec<PatId>) {
    match &data.body.pats[pat] {
        Pat::Bind { .. } => out.push(pat),
        Pat::Tuple(pats) => pats.iter().for_each(|&p| bindings(data, p, out)),
        Pat::Record(fields) => fields.iter().for_each(|(_, p)| bindings(data, *p, out)),
        Pat::Ascribed { .. } | Pat::Missing | Pat::Wild => {}
    }
}

/// ` @local` after a let-bound array that a kernel materialises in local (or private)
/// memory; nothing for global arrays (the default) or where no kernel is compiled
/// within the hover budget.
fn space_hint(
    db: &RootDatabase,
    data: &DefData,
    pat: PatId,
    value: weft_hir::ExprId,
    out: &mut Vec<InlayHint>,
) {
    let chain = call_chain(&data.body, value);
    let search = kernels_materialising(db, &data.loc, &|e| chain.contains(&e), HOVER_BUDGET);
    let mut spaces: Vec<&str> = Vec::new();
    for use_ in &search.uses {
        // The role starts with the space in backquotes (`kernels.rs`).
        let space = use_.role.split('`').nth(1).unwrap_or("");
        if matches!(space, "local" | "private" | "constant") && !spaces.contains(&space) {
            spaces.push(space);
        }
    }
    if spaces.is_empty() {
        return;
    }
    if let Some(range) = data.source_map.pat_range(pat) {
        let label: Vec<String> = spaces.iter().map(|s| format!("@{s}")).collect();
        out.push(InlayHint {
            offset: range.end(),
            label: format!(" {}", label.join(" ")),
            kind: InlayKind::AddressSpace,
        });
    }
}

fn size_param_hint(db: &RootDatabase, data: &DefData, out: &mut Vec<InlayHint>) {
    let id = data.id(db);
    let sig = signature(db, id);
    let scheme = def_scheme(db, id);
    let implicit: Vec<String> = scheme
        .size_params
        .iter()
        .filter(|name| !sig.size_params.contains(name))
        .map(|name| format!("[{name}]"))
        .collect();
    if implicit.is_empty() {
        return;
    }
    if let Some(range) = data.source_map.name_range() {
        out.push(InlayHint {
            offset: range.end(),
            label: format!(" {}", implicit.join(" ")),
            kind: InlayKind::SizeParameters,
        });
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::tests::fixture;

    #[test]
    fn arrays_kept_in_local_or_private_memory_get_their_space() {
        let fixture = fixture(
            r#"
entry f (a: [n][m]f32) (w: [n][4]f32) : [n]f32 =
  map@group (\row -> let t = to_local row in reduce@group (+) 0 t) a
entry g (w: [n][4]f32) : [n]f32 =
  map (\row -> let p = to_private (map (\x -> x) row) in p[0] + p[3]) w
"#,
        );
        let mut text = fixture.text("main.weft").to_owned();
        for hint in fixture.analysis.inlay_hints("main.weft").unwrap().iter().rev() {
            text.insert_str(usize::from(hint.offset), &format!("〈{}〉", hint.label));
        }
        expect![[r#"
            entry f〈 [n] [m]〉 (a: [n][m]f32) (w: [n][4]f32) : [n]f32 =
              map@group (\row〈: [m]f32〉 -> let t〈: [m]f32〉〈 @local〉 = to_local row in reduce@group (+) 0 t) a
            entry g〈 [n]〉 (w: [n][4]f32) : [n]f32 =
              map (\row〈: [4]f32〉 -> let p〈: [4]f32〉〈 @private @local〉 = to_private (map (\x〈: f32〉 -> x) row) in p[0] + p[3]) w
        "#]]
        .assert_eq(&text);
    }

    #[test]
    fn types_of_lets_and_lambda_params_and_implicit_sizes() {
        let fixture = fixture(
            r#"
def f (xs: [n]f32) (k: i64) =
  let ys = map (\x -> x * 2f32) xs
  let (a, b) = (k, 1.5f64)
  let z: i64 = a
  in (ys, b, z)
"#,
        );
        let mut text = fixture.text("main.weft").to_owned();
        for hint in fixture.analysis.inlay_hints("main.weft").unwrap().iter().rev() {
            text.insert_str(usize::from(hint.offset), &format!("〈{}〉", hint.label));
        }
        expect![[r#"
            def f〈 [n]〉 (xs: [n]f32) (k: i64) =
              let ys〈: [n]f32〉 = map (\x〈: f32〉 -> x * 2f32) xs
              let (a〈: i64〉, b〈: f64〉) = (k, 1.5f64)
              let z: i64 = a
              in (ys, b, z)
        "#]]
        .assert_eq(&text);
    }
}
