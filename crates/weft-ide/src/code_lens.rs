//! Code lens "Run": one per `entry`, with the first `input { ... }` of its test
//! block as the input to feed `weft run` (no input: the entry is run without stdin).

use weft_hir::{DefKind, DefLoc, RootDatabase, def_ast};
use weft_syntax::TextRange;
use weft_syntax::ast;
use weft_syntax::test_block::{Expected, TestInput, test_block};

use crate::classify::file_defs;

/// An entry that can be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runnable {
    pub entry: String,
    /// The entry's name.
    pub range: TextRange,
    /// Values to feed on stdin, from the test block's first `input { ... }`.
    pub input: Option<String>,
}

pub(crate) fn runnables(db: &RootDatabase, path: &str) -> Vec<Runnable> {
    if crate::apl::is_apl(path) {
        return crate::apl::runnables(db, path);
    }
    let Some(file) = db.file(path) else { return Vec::new() };
    let mut out = Vec::new();
    for data in file_defs(db, file) {
        if data.loc.kind != DefKind::Entry {
            continue;
        }
        let Some(range) = data.source_map.name_range() else { continue };
        let input = test_inputs(db, &data.loc).values;
        out.push(Runnable { entry: data.loc.name.as_str().to_owned(), range, input });
    }
    out
}

/// The first inputs of each kind in the test block above an entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TestInputs {
    /// The text between the braces of the first `input { ... }`.
    pub(crate) values: Option<String>,
    /// The text between the braces of the first `random input { ... }`.
    pub(crate) random: Option<String>,
    /// The `output { ... }` expected of the first `input { ... }`, when it has one.
    pub(crate) expected: Option<String>,
    /// The text of every `input { ... }`, in order.
    pub(crate) all_values: Vec<String>,
    /// The text of every `random input { ... }`, in order.
    pub(crate) all_random: Vec<String>,
}

pub(crate) fn test_inputs(db: &RootDatabase, loc: &DefLoc) -> TestInputs {
    let mut inputs = TestInputs::default();
    let Some(ast::Item::Def(def)) = def_ast(db, loc) else { return inputs };
    let Some(block) = test_block(&def).0 else { return inputs };
    for case in block.cases {
        match case.input {
            TestInput::Values(values) => {
                inputs.all_values.push(values.text.clone());
                if inputs.values.is_none() {
                    inputs.values = Some(values.text);
                    if let Expected::Output(output) = case.expected {
                        inputs.expected = Some(output.text);
                    }
                }
            }
            TestInput::Random(specs) => {
                inputs.all_random.push(specs.text.clone());
                inputs.random.get_or_insert(specs.text);
            }
        }
    }
    inputs
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::tests::fixture;

    #[test]
    fn one_runnable_per_entry_with_test_input() {
        let fixture = fixture(
            r#"
-- ==
-- input { [1f32, 2f32] [3f32, 4f32] }
-- output { 11f32 }
entry dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0f32 (map2 (*) xs ys)
def helper (x: i32) : i32 = x
entry plain (x: i32) : i32 = helper x
"#,
        );
        let actual = format!("{:#?}", fixture.analysis.runnables("main.weft").unwrap());
        expect![[r#"
            [
                Runnable {
                    entry: "dot",
                    range: 71..74,
                    input: Some(
                        " [1f32, 2f32] [3f32, 4f32] ",
                    ),
                },
                Runnable {
                    entry: "plain",
                    range: 178..183,
                    input: None,
                },
            ]"#]]
        .assert_eq(&actual);
    }
}
