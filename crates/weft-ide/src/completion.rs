//! Completion: locals in scope (and size names), defs the file sees, built-ins with
//! their schemes, a scalar type's namespace after `f32.`, strategy levels after `@`,
//! and declaration keywords at top level.

use weft_hir::{
    Builtin, Db as _, Pat, RootDatabase, ScalarTy, UNQUALIFIED_BUILTINS, def_scheme, file_scope,
    infer, pretty_scheme, signature,
};
use weft_syntax::{SyntaxKind, TextSize};

use crate::FilePosition;
use crate::classify::{DefData, locals_in_scope};

/// What a completion inserts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CompletionKind {
    Local,
    SizeParam,
    Function,
    Builtin,
    Level,
    Keyword,
    /// A record's field, after `r.` (version 1.1).
    Field,
}

/// One completion candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionItem {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: Option<String>,
    pub documentation: Option<String>,
}

const LEVELS: [(&str, &str); 4] = [
    ("grid", "one work-item per element across the whole device"),
    ("group", "one work-group per element; the body runs on the group's work-items"),
    ("thread", "one work-item per element within a work-group"),
    ("seq", "a sequential loop in the enclosing work-item"),
];

pub(crate) fn completions(db: &RootDatabase, position: &FilePosition) -> Vec<CompletionItem> {
    let Some(file) = db.file(&position.path) else { return Vec::new() };
    let root = weft_hir::parse(db, file).syntax_node();
    let offset = position.offset.min(root.text_range().end());
    // The token just before the cursor, skipping the identifier being typed.
    let mut before = root.token_at_offset(offset).left_biased();
    if let Some(token) = &before
        && token.kind() == SyntaxKind::IDENT
    {
        before = token.prev_token();
    }
    if before.as_ref().is_some_and(|t| t.kind() == SyntaxKind::AT) {
        return LEVELS
            .iter()
            .map(|(name, doc)| CompletionItem {
                label: (*name).to_owned(),
                kind: CompletionKind::Level,
                detail: Some("strategy level".to_owned()),
                documentation: Some((*doc).to_owned()),
            })
            .collect();
    }
    // After `f32.`: the type's namespace, built-ins and prelude (or file) defs.
    if let Some(dot) = before.as_ref().filter(|t| t.kind() == SyntaxKind::DOT)
        && let Some(scalar) = dot
            .prev_token()
            .filter(|t| t.kind() == SyntaxKind::IDENT)
            .and_then(|t| ScalarTy::from_name(t.text()))
    {
        let mut out: Vec<CompletionItem> = Builtin::in_namespace(scalar)
            .into_iter()
            .map(|builtin| {
                let name = builtin.name();
                CompletionItem {
                    detail: Some(pretty_scheme(&name, &builtin.scheme())),
                    label: name.split_once('.').map_or(name.as_str(), |(_, n)| n).to_owned(),
                    kind: CompletionKind::Builtin,
                    documentation: Some(builtin.description().to_owned()),
                }
            })
            .collect();
        let prefix = format!("{}.", scalar.name());
        let prelude = db.prelude();
        for (name, loc) in &file_scope(db, file).values {
            let Some(short) = name.strip_prefix(&prefix) else { continue };
            if out.iter().any(|i| i.label == short) {
                continue;
            }
            let id = weft_hir::DefId::new(db, loc.clone());
            out.push(CompletionItem {
                label: short.to_owned(),
                kind: if loc.file == prelude {
                    CompletionKind::Builtin
                } else {
                    CompletionKind::Function
                },
                detail: Some(pretty_scheme(name, def_scheme(db, id))),
                documentation: signature(db, id).doc.clone(),
            });
        }
        out.sort_by(|a, b| a.label.cmp(&b.label));
        return out;
    }
    if let Some(fields) = record_fields_after_dot(db, file, before.as_ref(), offset) {
        return fields;
    }
    let Some(data) = def_at(db, file, offset) else {
        return ["def", "entry", "type", "import"]
            .iter()
            .map(|kw| CompletionItem {
                label: (*kw).to_owned(),
                kind: CompletionKind::Keyword,
                detail: None,
                documentation: None,
            })
            .collect();
    };
    let mut out: Vec<CompletionItem> = Vec::new();
    let push = |item: CompletionItem, out: &mut Vec<CompletionItem>| {
        if !out.iter().any(|i| i.label == item.label) {
            out.push(item);
        }
    };
    let result = infer(db, data.id(db));
    // Typing at the end of a def: its scopes extend to the cursor.
    let scope_offset = data.source_map.def_range().map_or(offset, |r| offset.min(r.end()));
    for pat in locals_in_scope(&data, scope_offset) {
        if let Pat::Bind { name } = &data.body.pats[pat] {
            let item = CompletionItem {
                label: name.as_str().to_owned(),
                kind: CompletionKind::Local,
                detail: Some(result.pat_ty(pat).to_string()),
                documentation: None,
            };
            push(item, &mut out);
        }
    }
    for name in &def_scheme(db, data.id(db)).size_params {
        let item = CompletionItem {
            label: name.as_str().to_owned(),
            kind: CompletionKind::SizeParam,
            detail: Some("i64 (size)".to_owned()),
            documentation: None,
        };
        push(item, &mut out);
    }
    let prelude = db.prelude();
    for (name, loc) in &file_scope(db, file).values {
        // The prelude's `f32.sum` and the like are offered after their namespace
        // (`f32.`, above); its plain names are library functions.
        let from_prelude = loc.file == prelude;
        if from_prelude && name.contains('.') {
            continue;
        }
        let id = weft_hir::DefId::new(db, loc.clone());
        let item = CompletionItem {
            label: name.clone(),
            kind: if from_prelude { CompletionKind::Builtin } else { CompletionKind::Function },
            detail: Some(pretty_scheme(name, def_scheme(db, id))),
            documentation: signature(db, id).doc.clone(),
        };
        push(item, &mut out);
    }
    let conversions = ScalarTy::ALL.map(Builtin::Convert);
    for builtin in UNQUALIFIED_BUILTINS.iter().map(|(_, b)| *b).chain(conversions) {
        let name = builtin.name();
        let item = CompletionItem {
            detail: Some(pretty_scheme(&name, &builtin.scheme())),
            label: name,
            kind: CompletionKind::Builtin,
            documentation: Some(builtin.description().to_owned()),
        };
        push(item, &mut out);
    }
    out
}

/// After `r.` (or `r.pa`) where `r` is a record: its fields.
fn record_fields_after_dot(
    db: &RootDatabase,
    file: weft_hir::SourceFile,
    before: Option<&weft_syntax::SyntaxToken>,
    offset: TextSize,
) -> Option<Vec<CompletionItem>> {
    let dot = before.filter(|t| t.kind() == SyntaxKind::DOT)?;
    let record = dot.prev_token().filter(|t| t.kind() == SyntaxKind::IDENT)?;
    let data = def_at(db, file, offset)?;
    let expr = data.source_map.expr_at(record.text_range())?;
    let weft_hir::Ty::Record(fields) = infer(db, data.id(db)).expr_ty(expr) else {
        return None;
    };
    let items = fields
        .iter()
        .map(|(name, ty)| CompletionItem {
            label: name.as_str().to_owned(),
            kind: CompletionKind::Field,
            detail: Some(ty.to_string()),
            documentation: None,
        })
        .collect();
    Some(items)
}

/// The def the cursor is in, or at the end of: the last def starting before the
/// cursor, unless the cursor's line starts at column 0 after that def's end (a new
/// top-level declaration).
fn def_at(db: &RootDatabase, file: weft_hir::SourceFile, offset: TextSize) -> Option<DefData> {
    let defs = crate::classify::file_defs(db, file);
    let data = defs.into_iter().rev().find(|d| {
        d.source_map.name_range().is_some_and(|name| name.end() < offset)
            && d.source_map.def_range().is_some_and(|range| range.start() < offset)
    })?;
    let end = data.source_map.def_range()?.end();
    if offset > end {
        let text = file.text(db);
        let between = text.get(usize::from(end)..usize::from(offset)).unwrap_or("");
        if let Some(last_line) = between.rsplit_once('\n').map(|(_, line)| line)
            && !last_line.starts_with([' ', '\t'])
        {
            return None;
        }
    }
    Some(data)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::{Expect, expect};

    use crate::tests::fixture;

    fn check(text: &str, filter: &[crate::CompletionKind], expect: Expect) {
        let fixture = fixture(text);
        let mut actual = String::new();
        for item in fixture.analysis.completions(&fixture.position).unwrap() {
            if filter.contains(&item.kind) {
                let _ = writeln!(actual, "{:?} {} {:?}", item.kind, item.label, item.detail);
            }
        }
        expect.assert_eq(&actual);
    }

    use crate::CompletionKind::{Builtin, Function, Keyword, Level, Local, SizeParam};

    #[test]
    fn locals_in_scope_only() {
        check(
            r#"
def f (xs: [n]f32) : f32 =
  let a = 1f32
  let g = \y -> y + a
  in reduce (+) 0f32 (map g xs) + $0
def other (q: i32) : i32 = q
"#,
            &[Local, SizeParam, Function],
            expect![[r#"
                Local g Some("f32 -> f32")
                Local a Some("f32")
                Local xs Some("[n]f32")
                SizeParam n Some("i64 (size)")
                Function f Some("f : [n]f32 -> f32")
                Function other Some("other : i32 -> i32")
            "#]],
        );
    }

    #[test]
    fn for_in_loops_offer_their_element_not_their_hidden_index() {
        check(
            r#"
def f (xs: [n]f32) : f32 =
  let inc x = x + 1
  in loop acc = 0 for x in xs do acc + $0
"#,
            &[Local],
            expect![[r#"
                Local x Some("f32")
                Local acc Some("f32")
                Local inc Some("i32 -> i32")
                Local xs Some("[n]f32")
            "#]],
        );
    }

    #[test]
    fn a_scalar_types_namespace_after_its_dot() {
        use crate::CompletionKind::Builtin;
        check(
            "def f (x: u8) : u8 = u8.$0\n",
            &[Builtin, Local],
            expect![[r#"
            Builtin abs Some("u8.abs : u8 -> u8")
            Builtin argmax Some("u8.argmax : [n]u8 -> i64")
            Builtin argmin Some("u8.argmin : [n]u8 -> i64")
            Builtin bool Some("u8.bool : bool -> u8")
            Builtin f16 Some("u8.f16 : f16 -> u8")
            Builtin f32 Some("u8.f32 : f32 -> u8")
            Builtin f64 Some("u8.f64 : f64 -> u8")
            Builtin highest Some("u8.highest : u8")
            Builtin i16 Some("u8.i16 : i16 -> u8")
            Builtin i32 Some("u8.i32 : i32 -> u8")
            Builtin i64 Some("u8.i64 : i64 -> u8")
            Builtin i8 Some("u8.i8 : i8 -> u8")
            Builtin lowest Some("u8.lowest : u8")
            Builtin max Some("u8.max : u8 -> u8 -> u8")
            Builtin maximum Some("u8.maximum : [n]u8 -> u8")
            Builtin min Some("u8.min : u8 -> u8 -> u8")
            Builtin minimum Some("u8.minimum : [n]u8 -> u8")
            Builtin product Some("u8.product : [n]u8 -> u8")
            Builtin sum Some("u8.sum : [n]u8 -> u8")
            Builtin u16 Some("u8.u16 : u16 -> u8")
            Builtin u32 Some("u8.u32 : u32 -> u8")
            Builtin u64 Some("u8.u64 : u64 -> u8")
        "#]],
        );
        check(
            "def f (x: f32) : f32 = f32.sq$0\n",
            &[Builtin, Local],
            expect![[r#"
            Builtin abs Some("f32.abs : f32 -> f32")
            Builtin argmax Some("f32.argmax : [n]f32 -> i64")
            Builtin argmin Some("f32.argmin : [n]f32 -> i64")
            Builtin atan2 Some("f32.atan2 : f32 -> f32 -> f32")
            Builtin bool Some("f32.bool : bool -> f32")
            Builtin ceil Some("f32.ceil : f32 -> f32")
            Builtin cos Some("f32.cos : f32 -> f32")
            Builtin exp Some("f32.exp : f32 -> f32")
            Builtin f16 Some("f32.f16 : f16 -> f32")
            Builtin f64 Some("f32.f64 : f64 -> f32")
            Builtin floor Some("f32.floor : f32 -> f32")
            Builtin highest Some("f32.highest : f32")
            Builtin i16 Some("f32.i16 : i16 -> f32")
            Builtin i32 Some("f32.i32 : i32 -> f32")
            Builtin i64 Some("f32.i64 : i64 -> f32")
            Builtin i8 Some("f32.i8 : i8 -> f32")
            Builtin inf Some("f32.inf : f32")
            Builtin isinf Some("f32.isinf : f32 -> bool")
            Builtin isnan Some("f32.isnan : f32 -> bool")
            Builtin log Some("f32.log : f32 -> f32")
            Builtin lowest Some("f32.lowest : f32")
            Builtin max Some("f32.max : f32 -> f32 -> f32")
            Builtin maximum Some("f32.maximum : [n]f32 -> f32")
            Builtin mean Some("f32.mean : [n]f32 -> f32")
            Builtin min Some("f32.min : f32 -> f32 -> f32")
            Builtin minimum Some("f32.minimum : [n]f32 -> f32")
            Builtin nan Some("f32.nan : f32")
            Builtin pi Some("f32.pi : f32")
            Builtin pow Some("f32.pow : f32 -> f32 -> f32")
            Builtin product Some("f32.product : [n]f32 -> f32")
            Builtin round Some("f32.round : f32 -> f32")
            Builtin sgn Some("f32.sgn : f32 -> f32")
            Builtin sin Some("f32.sin : f32 -> f32")
            Builtin sqrt Some("f32.sqrt : f32 -> f32")
            Builtin sum Some("f32.sum : [n]f32 -> f32")
            Builtin tan Some("f32.tan : f32 -> f32")
            Builtin tanh Some("f32.tanh : f32 -> f32")
            Builtin trunc Some("f32.trunc : f32 -> f32")
            Builtin u16 Some("f32.u16 : u16 -> f32")
            Builtin u32 Some("f32.u32 : u32 -> f32")
            Builtin u64 Some("f32.u64 : u64 -> f32")
            Builtin u8 Some("f32.u8 : u8 -> f32")
        "#]],
        );
    }

    #[test]
    fn record_fields_after_a_dot() {
        use crate::CompletionKind::Field;
        check(
            "def f (p: {pos: {x: f32, y: f32}, mass: f32}) : f32 = p.$0\n",
            &[Field, Local],
            expect![[r#"
                Field mass Some("f32")
                Field pos Some("{x: f32, y: f32}")
            "#]],
        );
        check(
            "def f (p: {pos: {x: f32, y: f32}, mass: f32}) : f32 = p.pos.$0\n",
            &[Field, Local],
            expect![[r#"
                Field x Some("f32")
                Field y Some("f32")
            "#]],
        );
    }

    #[test]
    fn builtins_with_schemes() {
        let fixture = fixture("def f (x: i32) : i32 = i$0\n");
        let items = fixture.analysis.completions(&fixture.position).unwrap();
        let iota = items.iter().find(|i| i.label == "iota").unwrap();
        expect![[r#"
            Builtin Some("iota : (n: i64) -> [n]i64")
        "#]]
        .assert_eq(&format!("{:?} {:?}\n", iota.kind, iota.detail));
        assert!(items.iter().any(|i| i.kind == Builtin && i.label == "f32"));
        // The small types of issue 15 are conversions too.
        for ty in ["i8", "i16", "u8", "u16", "f16"] {
            assert!(items.iter().any(|i| i.kind == Builtin && i.label == ty), "{ty}");
        }
        let u8_ = items.iter().find(|i| i.label == "u8").unwrap();
        assert!(u8_.detail.as_deref().unwrap_or("").starts_with("u8 : "), "{:?}", u8_.detail);
        // The prelude's functions come with their documentation.
        let rotate = items.iter().find(|i| i.label == "rotate").unwrap();
        assert_eq!(rotate.kind, Builtin);
        assert!(rotate.documentation.as_deref().unwrap_or("").contains("rotated left"));
    }

    #[test]
    fn levels_after_at() {
        check(
            r#"
def f (xs: [n]f32) : [n]f32 = map@$0 (\x -> x) xs
"#,
            &[Level],
            expect![[r#"
                Level grid Some("strategy level")
                Level group Some("strategy level")
                Level thread Some("strategy level")
                Level seq Some("strategy level")
            "#]],
        );
    }

    #[test]
    fn keywords_at_top_level() {
        check(
            r#"
def f (x: i32) : i32 = x
$0
"#,
            &[Keyword, Local],
            expect![[r#"
                Keyword def None
                Keyword entry None
                Keyword type None
                Keyword import None
            "#]],
        );
    }
}
