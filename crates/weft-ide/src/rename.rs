//! Rename: locals and defs (across files). `prepare_rename` says what would be
//! renamed, or why nothing can be (built-ins, non-names). A rename that would change
//! what a name refers to is refused, naming the conflicting binding (rust-analyzer's
//! rule): a use of the renamed binding that another binding of the new name would
//! shadow, or a use of another binding of the new name that the renamed one would
//! capture.

use weft_hir::{Pat, RootDatabase, SourceFile, file_scope};
use weft_syntax::{SyntaxKind, TextRange, TextSize};

use crate::classify::{
    DefData, Definition, classify, classify_at, enclosing_def, find_references, locals_in_scope,
    navigation_target,
};
use crate::{FilePosition, SourceChange, TextEdit};

pub(crate) fn prepare_rename(
    db: &RootDatabase,
    position: &FilePosition,
) -> Result<TextRange, String> {
    let file = db.file(&position.path).ok_or_else(|| "no such file".to_owned())?;
    let (token, definition) = classify_at(db, file, position.offset)
        .ok_or_else(|| "no name to rename here".to_owned())?;
    if let Definition::Builtin(builtin) = definition {
        return Err(format!("`{}` is a built-in and cannot be renamed", builtin.name()));
    }
    Ok(token.text_range())
}

pub(crate) fn rename(
    db: &RootDatabase,
    position: &FilePosition,
    new_name: &str,
) -> Result<SourceChange, String> {
    prepare_rename(db, position)?;
    if !is_identifier(new_name) {
        return Err(format!("`{new_name}` is not a valid name"));
    }
    let file = db.file(&position.path).ok_or_else(|| "no such file".to_owned())?;
    let (token, definition) = classify_at(db, file, position.offset)
        .ok_or_else(|| "no name to rename here".to_owned())?;
    let references = find_references(db, &definition, token.text());
    if new_name != token.text() {
        check_conflicts(db, &definition, token.text(), new_name, &references)?;
    }
    let mut change = SourceChange::default();
    for (file, range) in references {
        change
            .edits
            .entry(file.path(db).clone())
            .or_default()
            .push(TextEdit { range, insert: new_name.to_owned() });
    }
    for edits in change.edits.values_mut() {
        edits.sort_by_key(|edit| edit.range.start());
        edits.dedup();
    }
    Ok(change)
}

/// Refuses the rename when a name would then refer to another binding.
fn check_conflicts(
    db: &RootDatabase,
    renamed: &Definition,
    old_name: &str,
    new_name: &str,
    references: &[(SourceFile, TextRange)],
) -> Result<(), String> {
    let refuse = |conflict: &Definition, why: String| {
        format!(
            "cannot rename `{old_name}` to `{new_name}`: {why} {}",
            describe(db, conflict).unwrap_or_else(|| format!("`{new_name}`"))
        )
    };
    // The renamed binding's uses must not fall under another binding of the new name.
    let declaration = navigation_target(db, renamed).map(|t| t.focus_range);
    for &(file, range) in references {
        if Some(range) != declaration
            && let Some(conflict) = binding_of(db, file, range.start(), new_name, renamed)
        {
            let why = format!("its use on line {} would then refer to", line(db, file, range));
            return Err(refuse(&conflict, why));
        }
        if let Definition::Def(loc) = renamed
            && let Some(other) = file_scope(db, file).values.get(new_name)
            && other != loc
        {
            return Err(refuse(&Definition::Def(other.clone()), "it would clash with".to_owned()));
        }
    }
    // Uses of other bindings of the new name must not be captured by the renamed one.
    let files: Vec<SourceFile> = {
        let mut files: Vec<SourceFile> = references.iter().map(|(f, _)| *f).collect();
        files.dedup();
        files
    };
    for file in files {
        let root = weft_hir::parse(db, file).syntax_node();
        for token in root.descendants_with_tokens().filter_map(|e| e.into_token()) {
            if token.kind() != SyntaxKind::IDENT || token.text() != new_name {
                continue;
            }
            let Some(current) = classify(db, file, &token) else { continue };
            if navigation_target(db, &current).is_some_and(|t| t.focus_range == token.text_range())
            {
                continue; // a declaration, not a use
            }
            let offset = token.text_range().start();
            if captures(db, file, offset, renamed, &current) {
                let why = format!(
                    "the use of `{new_name}` on line {} refers to",
                    line(db, file, token.text_range())
                );
                return Err(format!(
                    "{}, which the renamed binding would shadow",
                    refuse(&current, why)
                ));
            }
        }
    }
    Ok(())
}

/// The local binding named `name` that a use at `offset` would refer to, when it is
/// not `expected`, which is nearer (innermost scope first).
fn binding_of(
    db: &RootDatabase,
    file: SourceFile,
    offset: TextSize,
    name: &str,
    expected: &Definition,
) -> Option<Definition> {
    let data = enclosing_def(db, file, offset)?;
    let scope = locals_in_scope(&data, offset);
    let expected_pat = match expected {
        Definition::Local { def, pat } if *def == data.loc => Some(*pat),
        _ => None,
    };
    for pat in scope {
        if Some(pat) == expected_pat {
            return None;
        }
        if matches!(&data.body.pats[pat], Pat::Bind { name: n } if n.as_str() == name) {
            return Some(Definition::Local { def: data.loc.clone(), pat });
        }
    }
    None
}

/// Whether the renamed definition, under the new name, would be found at `offset`
/// before `current` (what the name there refers to now).
fn captures(
    db: &RootDatabase,
    file: SourceFile,
    offset: TextSize,
    renamed: &Definition,
    current: &Definition,
) -> bool {
    match renamed {
        Definition::Local { def, pat } => {
            let Some(data) = enclosing_def(db, file, offset) else { return false };
            if data.loc != *def {
                return false;
            }
            let scope = locals_in_scope(&data, offset);
            let Some(at) = scope.iter().position(|p| p == pat) else { return false };
            match current {
                // Locals listed before the renamed one are nearer and still win.
                Definition::Local { pat: other, .. } => {
                    scope.iter().position(|p| p == other).is_none_or(|o| o > at)
                }
                _ => true,
            }
        }
        // A def is found only where no local of the name is: after the checks above, a
        // use of the new name resolving to another def or a built-in would change.
        Definition::Def(_) => !matches!(current, Definition::Local { .. }),
        Definition::SizeParam { def, .. } => {
            enclosing_def(db, file, offset).is_some_and(|d: DefData| d.loc == *def)
        }
        Definition::Builtin(_) => false,
    }
}

/// `the parameter `xs` declared on line 21` (or another kind of binding).
fn describe(db: &RootDatabase, definition: &Definition) -> Option<String> {
    let target = navigation_target(db, definition)?;
    let kind = match definition {
        Definition::Def(loc) => match loc.kind {
            weft_hir::DefKind::Entry => "entry",
            weft_hir::DefKind::TypeAlias => "type",
            _ => "def",
        },
        Definition::Local { def, pat } => {
            let data = DefData::new(db, def);
            if data.body.params.iter().any(|p| contains_pat(&data, *p, *pat)) {
                "parameter"
            } else {
                "binding"
            }
        }
        Definition::SizeParam { .. } => "size",
        Definition::Builtin(_) => return None,
    };
    let file = db.file(&target.path)?;
    let place = match definition {
        Definition::Def(_) => format!(" of `{}`", target.path),
        _ => String::new(),
    };
    Some(format!(
        "the {kind} `{}` declared on line {}{place}",
        target.name,
        line(db, file, target.focus_range)
    ))
}

fn contains_pat(data: &DefData, root: weft_hir::PatId, pat: weft_hir::PatId) -> bool {
    let mut binds = Vec::new();
    crate::classify::bindings(data, root, &mut binds);
    binds.contains(&pat)
}

/// The 1-based line of a range's start.
fn line(db: &RootDatabase, file: SourceFile, range: TextRange) -> usize {
    let text = file.text(db);
    text.get(..usize::from(range.start())).map_or(0, |before| before.matches('\n').count()) + 1
}

fn is_identifier(name: &str) -> bool {
    let (tokens, errors) = weft_syntax::tokenize(name);
    errors.is_empty()
        && matches!(tokens.as_slice(), [t] if t.kind == SyntaxKind::IDENT)
        && name != "_"
        && weft_hir::Builtin::lookup(name).is_none()
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::{Expect, expect};

    use crate::tests::fixture;

    fn check(text: &str, new_name: &str, expect: Expect) {
        let fixture = fixture(text);
        let mut actual = String::new();
        match fixture.analysis.rename(&fixture.position, new_name).unwrap() {
            Ok(change) => {
                for (path, edits) in &change.edits {
                    let mut text = fixture.text(path).to_owned();
                    for edit in edits.iter().rev() {
                        text.replace_range(
                            std::ops::Range::<usize>::from(edit.range),
                            &edit.insert,
                        );
                    }
                    let _ = write!(actual, "--- /{path}\n{text}");
                }
            }
            Err(error) => actual = format!("error: {error}\n"),
        }
        expect.assert_eq(&actual);
    }

    #[test]
    fn renames_local_and_its_uses() {
        check(
            r#"
def f (x: i32) : i32 = let y = x + 1 in y$0 * y
"#,
            "total",
            expect![[r#"
                --- /main.weft
                def f (x: i32) : i32 = let total = x + 1 in total * total
            "#]],
        );
    }

    #[test]
    fn renames_def_across_files() {
        check(
            r#"
--- /lib.weft
def sq$0r (x: f32) : f32 = x * x
--- /main.weft
import "lib"
entry main (x: f32) : f32 = sqr (sqr x)
"#,
            "square",
            expect![[r#"
                --- /lib.weft
                def square (x: f32) : f32 = x * x
                --- /main.weft
                import "lib"
                entry main (x: f32) : f32 = square (square x)
            "#]],
        );
    }

    #[test]
    fn refuses_builtins() {
        check(
            r#"
entry main (xs: [3]f32) : [3]f32 = ma$0p (\x -> x) xs
"#,
            "apply",
            expect![[r#"
                error: `map` is a built-in and cannot be renamed
            "#]],
        );
    }

    #[test]
    fn refuses_invalid_names() {
        check(
            r#"
def f (x: i32) : i32 = x$0
"#,
            "let",
            expect![[r#"
                error: `let` is not a valid name
            "#]],
        );
    }

    #[test]
    fn refuses_capturing_a_use_of_another_binding() {
        // kmeans: `assign` renamed to `xs` would capture the parameter's later use.
        check(
            r#"
entry e (xs: [n]f32) (ys: [n]f32) : [n]f32 =
  let ass$0ign = map2 (+) xs ys
  in map2 (+) xs assign
"#,
            "xs",
            expect![[r#"
                error: cannot rename `assign` to `xs`: the use of `xs` on line 3 refers to the parameter `xs` declared on line 1, which the renamed binding would shadow
            "#]],
        );
    }

    #[test]
    fn refuses_a_use_shadowed_by_another_binding() {
        check(
            r#"
def f (x$0: i32) : i32 =
  let y = 2
  in x + y
"#,
            "y",
            expect![[r#"
                error: cannot rename `x` to `y`: its use on line 3 would then refer to the binding `y` declared on line 2
            "#]],
        );
    }

    #[test]
    fn refuses_a_def_clashing_with_another_def_or_shadowed_by_a_local() {
        check(
            r#"
def sq$0 (x: i32) : i32 = x * x
def cube (x: i32) : i32 = x * sq x
"#,
            "cube",
            expect![[r#"
                error: cannot rename `sq` to `cube`: it would clash with the def `cube` declared on line 2 of `main.weft`
            "#]],
        );
        check(
            r#"
def sq$0 (x: i32) : i32 = x * x
def f (y: i32) : i32 = let g = 1 in sq y + g
"#,
            "g",
            expect![[r#"
                error: cannot rename `sq` to `g`: its use on line 2 would then refer to the binding `g` declared on line 2
            "#]],
        );
    }

    #[test]
    fn allows_shadowing_that_changes_nothing() {
        // The inner `x` is a different binding, and no use moves between them.
        check(
            r#"
def f (a$0: i32) : i32 =
  let y = a + 1
  in (let x = 2 in x) + y
"#,
            "x",
            expect![[r#"
                --- /main.weft
                def f (x: i32) : i32 =
                  let y = x + 1
                  in (let x = 2 in x) + y
            "#]],
        );
    }

    #[test]
    fn renaming_assign_to_xs_in_the_kmeans_example_is_refused() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/kmeans.weft"),
        )
        .unwrap();
        let at = text.find("let assign").unwrap() + 4;
        let fixture = fixture(&format!("{}$0{}", &text[..at], &text[at..]));
        let error = fixture.analysis.rename(&fixture.position, "xs").unwrap().unwrap_err();
        assert!(
            error.contains(
                "the use of `xs` on line 26 refers to the parameter `xs` declared on line 21"
            ),
            "{error}"
        );
    }
}
