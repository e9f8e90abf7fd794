//! Parser tests: trees and errors as snapshots, losslessness, recovery, nesting.

mod sourcegen;

use expect_test::{Expect, expect};
use proptest::prelude::*;

use crate::ast::{self, AstNode};
use crate::test_block::test_block;
use crate::{MAX_NESTING, on_large_stack, parse};

fn check(src: &str, expect: Expect) {
    let parse = parse(src);
    assert_eq!(parse.syntax_node().to_string(), src, "the tree is lossless");
    expect.assert_eq(&parse.debug_dump());
}

/// Only the errors, for recovery tests where the tree is long.
fn check_errors(src: &str, expect: Expect) {
    let parse = parse(src);
    assert_eq!(parse.syntax_node().to_string(), src, "the tree is lossless");
    let errors: Vec<String> =
        parse.errors().iter().map(|e| format!("{:?}: {}", e.range, e.message)).collect();
    let defs: Vec<String> = parse
        .tree()
        .defs()
        .map(|d| format!("def {}", d.name().map(|n| n.text()).unwrap_or_default()))
        .collect();
    expect.assert_eq(&format!("{}\n{}\n", errors.join("\n"), defs.join("\n")));
}

#[test]
fn def_with_size_type_and_value_params() {
    check(
        "def f [n] 'a (xs: [n]a) (k: i64) : [n*2]a = xs",
        expect![[r#"
            SOURCE_FILE@0..46
              DEF@0..46
                DEF_KW@0..3 "def"
                WHITESPACE@3..4 " "
                NAME@4..5
                  IDENT@4..5 "f"
                WHITESPACE@5..6 " "
                SIZE_PARAM@6..9
                  L_BRACK@6..7 "["
                  NAME@7..8
                    IDENT@7..8 "n"
                  R_BRACK@8..9 "]"
                WHITESPACE@9..10 " "
                TYPE_PARAM@10..12
                  QUOTE@10..11 "'"
                  NAME@11..12
                    IDENT@11..12 "a"
                WHITESPACE@12..13 " "
                PARAM@13..23
                  L_PAREN@13..14 "("
                  IDENT_PAT@14..16
                    NAME@14..16
                      IDENT@14..16 "xs"
                  COLON@16..17 ":"
                  WHITESPACE@17..18 " "
                  ARRAY_TYPE@18..22
                    L_BRACK@18..19 "["
                    SIZE_NAME@19..20
                      NAME_REF@19..20
                        IDENT@19..20 "n"
                    R_BRACK@20..21 "]"
                    PATH_TYPE@21..22
                      NAME_REF@21..22
                        IDENT@21..22 "a"
                  R_PAREN@22..23 ")"
                WHITESPACE@23..24 " "
                PARAM@24..32
                  L_PAREN@24..25 "("
                  IDENT_PAT@25..26
                    NAME@25..26
                      IDENT@25..26 "k"
                  COLON@26..27 ":"
                  WHITESPACE@27..28 " "
                  PATH_TYPE@28..31
                    NAME_REF@28..31
                      IDENT@28..31 "i64"
                  R_PAREN@31..32 ")"
                WHITESPACE@32..33 " "
                RET_TYPE@33..41
                  COLON@33..34 ":"
                  WHITESPACE@34..35 " "
                  ARRAY_TYPE@35..41
                    L_BRACK@35..36 "["
                    SIZE_BIN@36..39
                      SIZE_NAME@36..37
                        NAME_REF@36..37
                          IDENT@36..37 "n"
                      STAR@37..38 "*"
                      SIZE_LIT@38..39
                        INT_NUMBER@38..39 "2"
                    R_BRACK@39..40 "]"
                    PATH_TYPE@40..41
                      NAME_REF@40..41
                        IDENT@40..41 "a"
                WHITESPACE@41..42 " "
                EQ@42..43 "="
                WHITESPACE@43..44 " "
                PATH_EXPR@44..46
                  NAME_REF@44..46
                    IDENT@44..46 "xs"
        "#]],
    );
}

/// A compact S-expression of a def body: nodes in parentheses, non-trivia tokens as text.
fn sexp(node: &crate::SyntaxNode) -> String {
    let mut out = format!("({:?}", node.kind());
    for child in node.children_with_tokens() {
        match child {
            rowan::NodeOrToken::Node(n) => {
                out.push(' ');
                out.push_str(&sexp(&n));
            }
            rowan::NodeOrToken::Token(t) if !t.kind().is_trivia() => {
                out.push(' ');
                out.push_str(t.text());
            }
            rowan::NodeOrToken::Token(_) => {}
        }
    }
    out.push(')');
    out
}

fn check_expr(expr: &str, expect: Expect) {
    let src = format!("def x = {expr}");
    let parse = parse(&src);
    assert_eq!(parse.syntax_node().to_string(), src);
    let def = parse.tree().defs().next().unwrap();
    let mut out = def.body().map(|b| sexp(b.syntax())).unwrap_or_default();
    for error in parse.errors() {
        out.push_str(&format!("\nerror {:?}: {}", error.range, error.message));
    }
    expect.assert_eq(&out);
}

#[test]
fn operator_precedence_follows_the_spec() {
    check_expr(
        "a || b && c == d + e * f ** g ** h",
        expect![
            "(BIN_EXPR (PATH_EXPR (NAME_REF a)) || (BIN_EXPR (PATH_EXPR (NAME_REF b)) && (BIN_EXPR (PATH_EXPR (NAME_REF c)) == (BIN_EXPR (PATH_EXPR (NAME_REF d)) + (BIN_EXPR (PATH_EXPR (NAME_REF e)) * (BIN_EXPR (PATH_EXPR (NAME_REF f)) ** (BIN_EXPR (PATH_EXPR (NAME_REF g)) ** (PATH_EXPR (NAME_REF h)))))))))"
        ],
    );
    check_expr(
        "-x ** 2",
        expect!["(PREFIX_EXPR - (BIN_EXPR (PATH_EXPR (NAME_REF x)) ** (LITERAL 2)))"],
    );
    check_expr(
        "a << 1 | b & c ^ d",
        expect![
            "(BIN_EXPR (BIN_EXPR (PATH_EXPR (NAME_REF a)) << (LITERAL 1)) | (BIN_EXPR (BIN_EXPR (PATH_EXPR (NAME_REF b)) & (PATH_EXPR (NAME_REF c))) ^ (PATH_EXPR (NAME_REF d))))"
        ],
    );
    check_expr(
        "!a && f x y",
        expect![
            "(BIN_EXPR (PREFIX_EXPR ! (PATH_EXPR (NAME_REF a))) && (CALL_EXPR (PATH_EXPR (NAME_REF f)) (PATH_EXPR (NAME_REF x)) (PATH_EXPR (NAME_REF y))))"
        ],
    );
}

#[test]
fn application_indexing_and_array_literals() {
    check_expr(
        "f [1, 2] xs[1] m[i, j] xs[a:b] xs[::-1] ys[:n] zs[k:]",
        expect![
            "(CALL_EXPR (PATH_EXPR (NAME_REF f)) (ARRAY_EXPR [ (LITERAL 1) , (LITERAL 2) ]) (INDEX_EXPR (PATH_EXPR (NAME_REF xs)) [ (INDEX (LITERAL 1)) ]) (INDEX_EXPR (PATH_EXPR (NAME_REF m)) [ (INDEX (PATH_EXPR (NAME_REF i))) , (INDEX (PATH_EXPR (NAME_REF j))) ]) (INDEX_EXPR (PATH_EXPR (NAME_REF xs)) [ (SLICE (PATH_EXPR (NAME_REF a)) : (PATH_EXPR (NAME_REF b))) ]) (INDEX_EXPR (PATH_EXPR (NAME_REF xs)) [ (SLICE : : (PREFIX_EXPR - (LITERAL 1))) ]) (INDEX_EXPR (PATH_EXPR (NAME_REF ys)) [ (SLICE : (PATH_EXPR (NAME_REF n))) ]) (INDEX_EXPR (PATH_EXPR (NAME_REF zs)) [ (SLICE (PATH_EXPR (NAME_REF k)) :) ]))"
        ],
    );
    check_expr("x -1", expect!["(BIN_EXPR (PATH_EXPR (NAME_REF x)) - (LITERAL 1))"]);
    check_expr(
        "f (-1)",
        expect![
            "(CALL_EXPR (PATH_EXPR (NAME_REF f)) (PAREN_EXPR ( (PREFIX_EXPR - (LITERAL 1)) )))"
        ],
    );
}

#[test]
fn projections_split_float_like_tokens() {
    check_expr(
        "t.0.1 + (a, b).1",
        expect![
            "(BIN_EXPR (PROJ_EXPR (PROJ_EXPR (PATH_EXPR (NAME_REF t)) . 0) . 1) + (PROJ_EXPR (TUPLE_EXPR ( (PATH_EXPR (NAME_REF a)) , (PATH_EXPR (NAME_REF b)) )) . 1))"
        ],
    );
}

#[test]
fn sections_and_paths() {
    check_expr(
        "reduce (+) 0 (map (*2) (map (2-) xs))",
        expect![
            "(CALL_EXPR (PATH_EXPR (NAME_REF reduce)) (OP_SECTION ( + )) (LITERAL 0) (PAREN_EXPR ( (CALL_EXPR (PATH_EXPR (NAME_REF map)) (RIGHT_SECTION ( * (LITERAL 2) )) (PAREN_EXPR ( (CALL_EXPR (PATH_EXPR (NAME_REF map)) (LEFT_SECTION ( (LITERAL 2) - )) (PATH_EXPR (NAME_REF xs))) ))) )))"
        ],
    );
    check_expr("(- 1)", expect!["(PAREN_EXPR ( (PREFIX_EXPR - (LITERAL 1)) ))"]);
    check_expr(
        "f32.sqrt x + map@group f xs",
        expect![
            "(BIN_EXPR (CALL_EXPR (PATH_EXPR (NAME_REF f32) . (NAME_REF sqrt)) (PATH_EXPR (NAME_REF x))) + (CALL_EXPR (PATH_EXPR (NAME_REF map) (STRATEGY @ (NAME_REF group))) (PATH_EXPR (NAME_REF f)) (PATH_EXPR (NAME_REF xs))))"
        ],
    );
}

#[test]
fn block_forms_extend_right() {
    check_expr(
        "let x: i32 = 1 let (a, _) = p in \\(y, z) w -> if a then x + y else z + w",
        expect![[
            r#"(LET_EXPR let (IDENT_PAT (NAME x)) : (PATH_TYPE (NAME_REF i32)) = (LITERAL 1) (LET_EXPR let (TUPLE_PAT ( (IDENT_PAT (NAME a)) , (WILDCARD_PAT _) )) = (PATH_EXPR (NAME_REF p)) in (LAMBDA_EXPR \ (TUPLE_PAT ( (IDENT_PAT (NAME y)) , (IDENT_PAT (NAME z)) )) (IDENT_PAT (NAME w)) -> (IF_EXPR if (PATH_EXPR (NAME_REF a)) then (BIN_EXPR (PATH_EXPR (NAME_REF x)) + (PATH_EXPR (NAME_REF y))) else (BIN_EXPR (PATH_EXPR (NAME_REF z)) + (PATH_EXPR (NAME_REF w)))))))"#
        ]],
    );
    check_expr(
        "loop acc = 0 for i < n do acc + i",
        expect![
            "(LOOP_EXPR loop (IDENT_PAT (NAME acc)) = (LITERAL 0) (FOR_FORM for (NAME i) < (PATH_EXPR (NAME_REF n))) do (BIN_EXPR (PATH_EXPR (NAME_REF acc)) + (PATH_EXPR (NAME_REF i))))"
        ],
    );
    check_expr(
        "loop (x, i) = (1, 0) while i < 10 do (x * 2, i + 1)",
        expect![
            "(LOOP_EXPR loop (TUPLE_PAT ( (IDENT_PAT (NAME x)) , (IDENT_PAT (NAME i)) )) = (TUPLE_EXPR ( (LITERAL 1) , (LITERAL 0) )) (WHILE_FORM while (BIN_EXPR (PATH_EXPR (NAME_REF i)) < (LITERAL 10))) do (TUPLE_EXPR ( (BIN_EXPR (PATH_EXPR (NAME_REF x)) * (LITERAL 2)) , (BIN_EXPR (PATH_EXPR (NAME_REF i)) + (LITERAL 1)) )))"
        ],
    );
    check_expr(
        "(xs : [n]f32) :> [m]f32",
        expect![
            "(COERCE_EXPR (ASCRIBE_EXPR ( (PATH_EXPR (NAME_REF xs)) : (ARRAY_TYPE [ (SIZE_NAME (NAME_REF n)) ] (PATH_TYPE (NAME_REF f32))) )) :> (ARRAY_TYPE [ (SIZE_NAME (NAME_REF m)) ] (PATH_TYPE (NAME_REF f32))))"
        ],
    );
}

#[test]
fn updates_with_are_loose_and_chain_left_to_right() {
    check_expr(
        "xs with [i + 1] = a + b with [0] = f x",
        expect![
            "(UPDATE_EXPR (UPDATE_EXPR (PATH_EXPR (NAME_REF xs)) with [ (INDEX (BIN_EXPR (PATH_EXPR (NAME_REF i)) + (LITERAL 1))) ] = (BIN_EXPR (PATH_EXPR (NAME_REF a)) + (PATH_EXPR (NAME_REF b)))) with [ (INDEX (LITERAL 0)) ] = (CALL_EXPR (PATH_EXPR (NAME_REF f)) (PATH_EXPR (NAME_REF x))))"
        ],
    );
    check_expr(
        "let ys = m with [i, j] = 0 in ys",
        expect![
            "(LET_EXPR let (IDENT_PAT (NAME ys)) = (UPDATE_EXPR (PATH_EXPR (NAME_REF m)) with [ (INDEX (PATH_EXPR (NAME_REF i))) , (INDEX (PATH_EXPR (NAME_REF j))) ] = (LITERAL 0)) in (PATH_EXPR (NAME_REF ys)))"
        ],
    );
    check_expr(
        "xs with [i] =",
        expect![[r#"
        (UPDATE_EXPR (PATH_EXPR (NAME_REF xs)) with [ (INDEX (PATH_EXPR (NAME_REF i))) ] =)
        error 21..21: expected an expression, found end of file"#]],
    );
}

#[test]
fn types_sizes_and_imports() {
    check(
        "import \"lib/util\"\ntype v3 = (f32, f32, f32)\ndef f (g: f32 -> [n/2][m]i64 -> bool) : i32 = 0",
        expect![[r#"
            SOURCE_FILE@0..91
              IMPORT@0..17
                IMPORT_KW@0..6 "import"
                WHITESPACE@6..7 " "
                STRING@7..17 "\"lib/util\""
              WHITESPACE@17..18 "\n"
              TYPE_ALIAS@18..43
                TYPE_KW@18..22 "type"
                WHITESPACE@22..23 " "
                NAME@23..25
                  IDENT@23..25 "v3"
                WHITESPACE@25..26 " "
                EQ@26..27 "="
                WHITESPACE@27..28 " "
                TUPLE_TYPE@28..43
                  L_PAREN@28..29 "("
                  PATH_TYPE@29..32
                    NAME_REF@29..32
                      IDENT@29..32 "f32"
                  COMMA@32..33 ","
                  WHITESPACE@33..34 " "
                  PATH_TYPE@34..37
                    NAME_REF@34..37
                      IDENT@34..37 "f32"
                  COMMA@37..38 ","
                  WHITESPACE@38..39 " "
                  PATH_TYPE@39..42
                    NAME_REF@39..42
                      IDENT@39..42 "f32"
                  R_PAREN@42..43 ")"
              WHITESPACE@43..44 "\n"
              DEF@44..91
                DEF_KW@44..47 "def"
                WHITESPACE@47..48 " "
                NAME@48..49
                  IDENT@48..49 "f"
                WHITESPACE@49..50 " "
                PARAM@50..81
                  L_PAREN@50..51 "("
                  IDENT_PAT@51..52
                    NAME@51..52
                      IDENT@51..52 "g"
                  COLON@52..53 ":"
                  WHITESPACE@53..54 " "
                  FN_TYPE@54..80
                    PATH_TYPE@54..57
                      NAME_REF@54..57
                        IDENT@54..57 "f32"
                    WHITESPACE@57..58 " "
                    ARROW@58..60 "->"
                    WHITESPACE@60..61 " "
                    FN_TYPE@61..80
                      ARRAY_TYPE@61..72
                        L_BRACK@61..62 "["
                        SIZE_BIN@62..65
                          SIZE_NAME@62..63
                            NAME_REF@62..63
                              IDENT@62..63 "n"
                          SLASH@63..64 "/"
                          SIZE_LIT@64..65
                            INT_NUMBER@64..65 "2"
                        R_BRACK@65..66 "]"
                        ARRAY_TYPE@66..72
                          L_BRACK@66..67 "["
                          SIZE_NAME@67..68
                            NAME_REF@67..68
                              IDENT@67..68 "m"
                          R_BRACK@68..69 "]"
                          PATH_TYPE@69..72
                            NAME_REF@69..72
                              IDENT@69..72 "i64"
                      WHITESPACE@72..73 " "
                      ARROW@73..75 "->"
                      WHITESPACE@75..76 " "
                      PATH_TYPE@76..80
                        NAME_REF@76..80
                          IDENT@76..80 "bool"
                  R_PAREN@80..81 ")"
                WHITESPACE@81..82 " "
                RET_TYPE@82..87
                  COLON@82..83 ":"
                  WHITESPACE@83..84 " "
                  PATH_TYPE@84..87
                    NAME_REF@84..87
                      IDENT@84..87 "i32"
                WHITESPACE@87..88 " "
                EQ@88..89 "="
                WHITESPACE@89..90 " "
                LITERAL@90..91
                  INT_NUMBER@90..91 "0"
        "#]],
    );
}

#[test]
fn comments_above_a_def_belong_to_it() {
    check(
        "-- header\n\n-- | Doc.\n-- ==\n-- input { 1 }\nentry f (x: i32) : i32 = x -- trailing\n",
        expect![[r#"
        SOURCE_FILE@0..81
          COMMENT@0..9 "-- header"
          WHITESPACE@9..11 "\n\n"
          DEF@11..68
            COMMENT@11..20 "-- | Doc."
            WHITESPACE@20..21 "\n"
            COMMENT@21..26 "-- =="
            WHITESPACE@26..27 "\n"
            COMMENT@27..41 "-- input { 1 }"
            WHITESPACE@41..42 "\n"
            ENTRY_KW@42..47 "entry"
            WHITESPACE@47..48 " "
            NAME@48..49
              IDENT@48..49 "f"
            WHITESPACE@49..50 " "
            PARAM@50..58
              L_PAREN@50..51 "("
              IDENT_PAT@51..52
                NAME@51..52
                  IDENT@51..52 "x"
              COLON@52..53 ":"
              WHITESPACE@53..54 " "
              PATH_TYPE@54..57
                NAME_REF@54..57
                  IDENT@54..57 "i32"
              R_PAREN@57..58 ")"
            WHITESPACE@58..59 " "
            RET_TYPE@59..64
              COLON@59..60 ":"
              WHITESPACE@60..61 " "
              PATH_TYPE@61..64
                NAME_REF@61..64
                  IDENT@61..64 "i32"
            WHITESPACE@64..65 " "
            EQ@65..66 "="
            WHITESPACE@66..67 " "
            PATH_EXPR@67..68
              NAME_REF@67..68
                IDENT@67..68 "x"
          WHITESPACE@68..69 " "
          COMMENT@69..80 "-- trailing"
          WHITESPACE@80..81 "\n"
    "#]],
    );
}

#[test]
fn several_syntax_errors_keep_good_defs() {
    check_errors(
        "def a = (1 +\ndef good (x: i32) : i32 = x\ndef b (x: ) = x\n) )\ndef c = let in 1\nentry e (xs: [n]f32) : f32 = xs[0]\n",
        expect![[r#"
            12..12: expected an expression, found `def`
            51..52: expected a type, found `)`
            57..58: expected a declaration (`def`, `entry`, `type` or `import`), found `)`
            73..75: expected a pattern, found `in`
            76..77: expected `=`, found `1`
            def a
            def good
            def b
            def c
            def e
        "#]],
    );
}

#[test]
fn a_declaration_keyword_ends_an_unfinished_name() {
    // Each keyword once went into an `ERROR` node of the rule expecting a name, so the
    // declaration it starts was lost.
    check_errors(
        "def f [\ndef g = 1\ndef h 'entry k = 2\ndef e = loop x = 0 for\ndef z = 1",
        expect![[r#"
            7..7: expected a name, found `def`
            25..30: expected a name, found `entry`
            59..59: expected a pattern, found `def`
            def f
            def g
            def h
            def k
            def e
            def z
        "#]],
    );
}

/// Each declaration's stretch, with the comments attached to it (a doc comment right
/// above it, not a comment a blank line away), the trivia after it and stray tokens.
#[test]
fn a_file_splits_into_declaration_stretches() {
    let src = "import \"lib\"\n\n-- | Doc.\n-- ==\ndef f = 1 )\n\n-- a note\n\nentry g = (\n";
    let spans: Vec<String> = crate::split_items(src)
        .iter()
        .map(|span| format!("{:?} {:?}", span.text(src), &src[span.range]))
        .collect();
    expect![[r#"
        "import \"lib\"\n\n-- | Doc.\n-- ==\ndef" "import \"lib\"\n\n"
        "-- | Doc.\n-- ==\ndef f = 1 )\n\n-- a note\n\nentry" "-- | Doc.\n-- ==\ndef f = 1 )\n\n-- a note\n\n"
        "entry g = (\n" "entry g = (\n"
    "#]]
    .assert_eq(&(spans.join("\n") + "\n"));
    assert_eq!(
        crate::split_items(""),
        [crate::ItemSpan { range: crate::TextRange::empty(0.into()), lookahead_end: 0.into() }]
    );
}

#[test]
fn unterminated_string_and_strange_bytes() {
    check_errors(
        "import \"abc\ndef f = 1 \u{0} ¤ 2\n",
        expect![[r#"
        7..11: unterminated string literal
        22..23: unexpected NUL character
        24..26: unexpected character `¤`
        def f
    "#]],
    );
}

#[test]
fn doc_comment_and_test_block_are_read() {
    let src = "-- | Sums.\n-- Second line.\n-- ==\n-- input { [1f32, 2f32]\n--   [3f32] }\n-- output { 3f32 }\n-- random input { [10]f32 in -1..1 }\n-- input { [1i64] }\n-- error: index .* out of bounds\n-- frobnicate\nentry f (xs: [n]f32) : f32 = xs[0]";
    let parse = parse(src);
    let def = parse.tree().defs().next().unwrap();
    let (block, errors) = test_block(&def);
    let rendered = format!(
        "doc: {:?}\n{}\n{:?}",
        def.doc_comment(),
        block
            .unwrap()
            .cases
            .iter()
            .map(|c| format!("{:?} => {:?}", c.input, c.expected))
            .collect::<Vec<_>>()
            .join("\n"),
        errors
    );
    expect![[r#"
        doc: Some("Sums.\nSecond line.")
        Values(SourceText { text: " [1f32, 2f32]\n   [3f32] ", range: 43..69 }) => Output(SourceText { text: " 3f32 ", range: 82..88 })
        Random(SourceText { text: " [10]f32 in -1..1 ", range: 107..125 }) => Runs
        Values(SourceText { text: " [1i64] ", range: 137..145 }) => Error(SourceText { text: "index .* out of bounds", range: 157..179 })
        [TestBlockError { range: 183..193, message: "expected `input` or `random input` in a test block, found `frobnicate`" }]"#]].assert_eq(&rendered);
    assert!(def.is_entry());
    let body = def.body().unwrap();
    assert!(matches!(body, ast::Expr::IndexExpr(_)), "{}", body.syntax());
}

#[test]
fn bench_lines_are_neither_test_cases_nor_docs() {
    let src = "-- | Identity.\n-- bench: i32\n-- bench small: i32\n-- ==\n-- input { 1i32 }\n-- output { 1i32 }\n-- bench: i32 flops=1\n-- bench large-2: i32\nentry f (x: i32) : i32 = x";
    let parse = parse(src);
    let def = parse.tree().defs().next().unwrap();
    assert_eq!(def.doc_comment().as_deref(), Some("Identity."));
    let (block, errors) = test_block(&def);
    assert_eq!(block.unwrap().cases.len(), 1);
    assert_eq!(errors, []);
}

#[test]
fn bench_comments_name_their_size() {
    use crate::test_block::{BenchComment, bench_comment};
    let main = bench_comment(" bench: [10]f32").unwrap();
    assert_eq!(main, BenchComment { size: None, specs: " [10]f32", specs_offset: 7 });
    let small = bench_comment(" bench small: [10]f32").unwrap();
    assert_eq!(small, BenchComment { size: Some("small"), specs: " [10]f32", specs_offset: 13 });
    assert_eq!(&" bench small: [10]f32"[small.specs_offset..], small.specs);
    // Prose that starts with the word is not a bench line.
    assert_eq!(bench_comment(" bench the kernel: twice"), None);
    assert_eq!(bench_comment(" benchmark: 1"), None);
    assert_eq!(bench_comment(" bench : 1"), None);
}

fn nested(depth: usize, open: &str, close: &str, inner: &str) -> String {
    format!("def x = {}{inner}{}", open.repeat(depth), close.repeat(depth))
}

#[test]
fn nesting_100_000_levels_is_accepted() {
    on_large_stack(|| {
        for src in [
            nested(MAX_NESTING as usize, "(", ")", "1"),
            nested(MAX_NESTING as usize, "let x = 1 in ", "", "x"),
            nested(MAX_NESTING as usize, "\\x -> ", "", "x"),
        ] {
            let parse = parse(&src);
            assert_eq!(parse.errors(), &[], "{}", &src[..40]);
            assert_eq!(parse.syntax_node().text().len(), crate::TextSize::of(src.as_str()));
        }
    });
}

#[test]
fn nesting_deeper_than_the_limit_is_one_diagnostic() {
    on_large_stack(|| {
        let src = format!("{}\ndef ok = 1", nested(MAX_NESTING as usize + 1, "(", ")", "1"));
        let parse = parse(&src);
        let messages: Vec<&str> = parse.errors().iter().map(|e| e.message.as_str()).collect();
        assert_eq!(messages, ["nesting deeper than 100000 levels is not supported, found `1`"]);
        assert_eq!(parse.syntax_node().to_string(), src);
        assert_eq!(parse.tree().defs().count(), 2, "the declaration after the deep one is kept");
    });
}

/// `parse` joins the trees of the declarations' stretches, parsed each on its own
/// (`split.rs`): the tree and errors must be those of parsing the text at once.
fn assert_same_as_whole(text: &str) -> Result<(), TestCaseError> {
    let joined = parse(text);
    let whole = crate::parse_items(text, crate::TextSize::of(text));
    prop_assert_eq!(joined.debug_dump(), whole.debug_dump());
    prop_assert_eq!(joined, whole);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn declarations_parsed_apart_give_the_whole_parse(text in proptest::collection::vec(
        proptest::sample::select(vec![
            "def", "entry", "type", "import", "\"lib\"", "let", "in", "if", "then", "else",
            "loop", "for", "while", "do", "x", "f", "n", "(", ")", "[", "]", "{", "}", ",", ":",
            "=", "with", "->", "\\", ".", ".0", "@", "'", "+", "-", "*", "1", "2.5", "f32",
            " ", "\n", "\n\n", "-- c\n", "-- | doc\n", "-- ==\n", "map@group", "\"s", "?",
            "é", "\0",
        ]), 0..60)) {
        assert_same_as_whole(&text.concat())?;
    }

    #[test]
    fn any_text_parsed_apart_gives_the_whole_parse(text in "\\PC{0,200}") {
        assert_same_as_whole(&text)?;
    }

    #[test]
    fn any_text_round_trips(text in "\\PC{0,200}") {
        let parse = parse(&text);
        prop_assert_eq!(parse.syntax_node().to_string(), text);
    }

    #[test]
    fn weft_like_text_round_trips(text in proptest::collection::vec(
        proptest::sample::select(vec![
            "def", "entry", "let", "in", "if", "then", "else", "loop", "for", "while", "do",
            "x", "f", "(", ")", "[", "]", ",", ":", ":>", "=", "with", "->", "\\", ".", "@", "'",
            "+", "-", "*", "**", "<", "1", "2.5", "0.1", " ", "\n", "-- c\n", "map@group", "\"s\"",
        ]), 0..80)) {
        let text: String = text.concat();
        let parse = parse(&text);
        prop_assert_eq!(parse.syntax_node().to_string(), text);
    }
}

/// Later phases recurse into each operator of a left-nested chain, so a chain counts
/// as nesting: 2.5 million terms once overflowed the stack.
#[test]
fn left_nested_chains_count_as_nesting() {
    on_large_stack(left_nested_chains);
}

fn left_nested_chains() {
    let limit = MAX_NESTING as usize;
    let ok = format!("def x = 1{}", " + 1".repeat(limit - 1));
    assert!(crate::parse(&ok).errors.is_empty());
    for deep in [
        format!("def x = 1{}\ndef ok = 1", " + 1".repeat(limit + 1)),
        format!("def x = xs{}\ndef ok = 1", "[0]".repeat(limit + 1)),
        format!("def x = t{}\ndef ok = 1", ".0".repeat(limit + 1)),
    ] {
        let parse = crate::parse(&deep);
        let messages: Vec<&str> = parse.errors.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(messages[0].starts_with("nesting deeper than 100000 levels"), "{messages:?}");
    }
}

#[test]
fn pipes_are_looser_than_operators() {
    check_expr(
        "xs |> map f |> reduce (+) 0",
        expect![
            "(PIPE_EXPR (PIPE_EXPR (PATH_EXPR (NAME_REF xs)) |> (CALL_EXPR (PATH_EXPR (NAME_REF map)) (PATH_EXPR (NAME_REF f)))) |> (CALL_EXPR (PATH_EXPR (NAME_REF reduce)) (OP_SECTION ( + )) (LITERAL 0)))"
        ],
    );
    check_expr(
        "f <| g <| x + 1",
        expect![
            "(PIPE_EXPR (PATH_EXPR (NAME_REF f)) <| (PIPE_EXPR (PATH_EXPR (NAME_REF g)) <| (BIN_EXPR (PATH_EXPR (NAME_REF x)) + (LITERAL 1))))"
        ],
    );
    check_expr(
        "f <| x |> g",
        expect![
            "(PIPE_EXPR (PIPE_EXPR (PATH_EXPR (NAME_REF f)) <| (PATH_EXPR (NAME_REF x))) |> (PATH_EXPR (NAME_REF g)))"
        ],
    );
    check_expr(
        "xs |>",
        expect![[r#"
        (PIPE_EXPR (PATH_EXPR (NAME_REF xs)) |>)
        error 13..13: expected an expression, found end of file"#]],
    );
}

#[test]
fn local_functions_and_for_in_loops() {
    check_expr(
        "let f x (y: i32) : i32 = x + y in f 1 2",
        expect![
            "(LET_FN_EXPR let (NAME f) (IDENT_PAT (NAME x)) (ASCRIBED_PAT ( (IDENT_PAT (NAME y)) : (PATH_TYPE (NAME_REF i32)) )) (RET_TYPE : (PATH_TYPE (NAME_REF i32))) = (BIN_EXPR (PATH_EXPR (NAME_REF x)) + (PATH_EXPR (NAME_REF y))) in (CALL_EXPR (PATH_EXPR (NAME_REF f)) (LITERAL 1) (LITERAL 2)))"
        ],
    );
    check_expr(
        "let f x = x let g = 2 in f g",
        expect![
            "(LET_FN_EXPR let (NAME f) (IDENT_PAT (NAME x)) = (PATH_EXPR (NAME_REF x)) (LET_EXPR let (IDENT_PAT (NAME g)) = (LITERAL 2) in (CALL_EXPR (PATH_EXPR (NAME_REF f)) (PATH_EXPR (NAME_REF g)))))"
        ],
    );
    check_expr(
        "loop acc = 0 for x in xs do acc + x",
        expect![
            "(LOOP_EXPR loop (IDENT_PAT (NAME acc)) = (LITERAL 0) (FOR_IN_FORM for (IDENT_PAT (NAME x)) in (PATH_EXPR (NAME_REF xs))) do (BIN_EXPR (PATH_EXPR (NAME_REF acc)) + (PATH_EXPR (NAME_REF x))))"
        ],
    );
    check_expr(
        "loop acc = 0 for (a, _) in zip xs ys do acc + a",
        expect![
            "(LOOP_EXPR loop (IDENT_PAT (NAME acc)) = (LITERAL 0) (FOR_IN_FORM for (TUPLE_PAT ( (IDENT_PAT (NAME a)) , (WILDCARD_PAT _) )) in (CALL_EXPR (PATH_EXPR (NAME_REF zip)) (PATH_EXPR (NAME_REF xs)) (PATH_EXPR (NAME_REF ys)))) do (BIN_EXPR (PATH_EXPR (NAME_REF acc)) + (PATH_EXPR (NAME_REF a))))"
        ],
    );
}

#[test]
fn tuple_parameters_of_ascribed_patterns() {
    check_errors(
        "def f (d: f32, i: i64) (_: bool) : f32 = d\ndef g ((a, b): (i32, i32)) = a",
        expect![[r#"

        def f
        def g
    "#]],
    );
    check(
        "def f (d: f32, _: i64) = d",
        expect![[r#"
            SOURCE_FILE@0..26
              DEF@0..26
                DEF_KW@0..3 "def"
                WHITESPACE@3..4 " "
                NAME@4..5
                  IDENT@4..5 "f"
                WHITESPACE@5..6 " "
                PARAM@6..22
                  L_PAREN@6..7 "("
                  TUPLE_PAT@7..21
                    ASCRIBED_PAT@7..13
                      IDENT_PAT@7..8
                        NAME@7..8
                          IDENT@7..8 "d"
                      COLON@8..9 ":"
                      WHITESPACE@9..10 " "
                      PATH_TYPE@10..13
                        NAME_REF@10..13
                          IDENT@10..13 "f32"
                    COMMA@13..14 ","
                    WHITESPACE@14..15 " "
                    ASCRIBED_PAT@15..21
                      WILDCARD_PAT@15..16
                        IDENT@15..16 "_"
                      COLON@16..17 ":"
                      WHITESPACE@17..18 " "
                      PATH_TYPE@18..21
                        NAME_REF@18..21
                          IDENT@18..21 "i64"
                  R_PAREN@21..22 ")"
                WHITESPACE@22..23 " "
                EQ@23..24 "="
                WHITESPACE@24..25 " "
                PATH_EXPR@25..26
                  NAME_REF@25..26
                    IDENT@25..26 "d"
        "#]],
    );
    check_errors(
        "def f (d: f32, i) = d\ndef g = 1",
        expect![[r#"
        16..17: expected `:`, found `)`
        def f
        def g
    "#]],
    );
}

#[test]
fn records_types_expressions_fields_and_patterns() {
    check_expr(
        "let {x, y = (a, _)} : {x: f32, y: (i32, bool)} = {x = 1, y} in (f r).x + r.x.y",
        expect![
            "(LET_EXPR let (RECORD_PAT { (RECORD_PAT_FIELD (NAME_REF x)) , (RECORD_PAT_FIELD (NAME_REF y) = (TUPLE_PAT ( (IDENT_PAT (NAME a)) , (WILDCARD_PAT _) ))) }) : (RECORD_TYPE { (RECORD_TYPE_FIELD (NAME x) : (PATH_TYPE (NAME_REF f32))) , (RECORD_TYPE_FIELD (NAME y) : (TUPLE_TYPE ( (PATH_TYPE (NAME_REF i32)) , (PATH_TYPE (NAME_REF bool)) ))) }) = (RECORD_EXPR { (RECORD_EXPR_FIELD (NAME_REF x) = (LITERAL 1)) , (RECORD_EXPR_FIELD (NAME_REF y)) }) in (BIN_EXPR (FIELD_EXPR (PAREN_EXPR ( (CALL_EXPR (PATH_EXPR (NAME_REF f)) (PATH_EXPR (NAME_REF r))) )) . (NAME_REF x)) + (FIELD_EXPR (PATH_EXPR (NAME_REF r) . (NAME_REF x)) . (NAME_REF y))))"
        ],
    );
    check_expr(
        "\\{x} -> {}",
        expect![[
            r#"(LAMBDA_EXPR \ (RECORD_PAT { (RECORD_PAT_FIELD (NAME_REF x)) }) -> (RECORD_EXPR { }))"#
        ]],
    );
    check_expr(
        "{x = 1, y",
        expect![[r#"
        (RECORD_EXPR { (RECORD_EXPR_FIELD (NAME_REF x) = (LITERAL 1)) , (RECORD_EXPR_FIELD (NAME_REF y)))
        error 17..17: expected `}`, found end of file"#]],
    );
    check_errors(
        "def f (p: {x: f32, y}) = p\ndef g = 1",
        expect![[r#"
        20..21: expected `:`, found `}`
        def f
        def g
    "#]],
    );
}

#[test]
fn namespaced_def_names_and_tuple_patterns_of_ascriptions() {
    check_errors(
        "def f32.sum (xs: [3]f32) : f32 = 0\ndef g = 1",
        expect![[r#"

        def f32.sum
        def g
    "#]],
    );
    check_expr(
        "let f (a: f32, i: i64) = a in \\(x: i32, _: bool) -> x",
        expect![[
            r#"(LET_FN_EXPR let (NAME f) (TUPLE_PAT ( (ASCRIBED_PAT (IDENT_PAT (NAME a)) : (PATH_TYPE (NAME_REF f32))) , (ASCRIBED_PAT (IDENT_PAT (NAME i)) : (PATH_TYPE (NAME_REF i64))) )) = (PATH_EXPR (NAME_REF a)) in (LAMBDA_EXPR \ (TUPLE_PAT ( (ASCRIBED_PAT (IDENT_PAT (NAME x)) : (PATH_TYPE (NAME_REF i32))) , (ASCRIBED_PAT (WILDCARD_PAT _) : (PATH_TYPE (NAME_REF bool))) )) -> (PATH_EXPR (NAME_REF x))))"#
        ]],
    );
}

#[test]
fn field_sections() {
    check_expr(
        "map (.x) ps",
        expect![
            "(CALL_EXPR (PATH_EXPR (NAME_REF map)) (FIELD_SECTION ( . (NAME_REF x) )) (PATH_EXPR (NAME_REF ps)))"
        ],
    );
}

#[test]
fn record_updates_chain_like_array_updates() {
    check_expr(
        "r with a.b = 1 + x with c = 2",
        expect![
            "(RECORD_UPDATE_EXPR (RECORD_UPDATE_EXPR (PATH_EXPR (NAME_REF r)) with (NAME_REF a) . (NAME_REF b) = (BIN_EXPR (LITERAL 1) + (PATH_EXPR (NAME_REF x)))) with (NAME_REF c) = (LITERAL 2))"
        ],
    );
}

/// Found by the property test below: an array literal broken by the next declaration
/// gave "expected an expression" in the whole file but "expected `]`" when its
/// declaration was parsed on its own.
#[test]
fn array_literal_cut_by_a_declaration_is_reported_alike_apart_and_whole() {
    for text in ["\"s\n(def=[def(", "def x = [def y = 1", "def x = [1, def y = 1"] {
        assert_same_as_whole(text).unwrap();
    }
    let messages: Vec<String> =
        parse("def x = [1, 2\ndef y = 1").errors().iter().map(|e| e.message.clone()).collect();
    assert_eq!(messages, ["expected `]`, found `def`"]);
}
