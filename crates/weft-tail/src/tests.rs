//! Tests of the APL front end: types (T17), inference results (T15, T19), the
//! optimiser, errors in APL terms with positions, error tolerance, the display, and
//! programs run through the core IR on the reference interpreter.

use expect_test::expect;
use weft_values::{Scalar, Value};

use crate::ty::{Base, Shape, Ty, join, subtype};
use crate::{compile, line_col};

/// Compiles and runs `text` on the reference interpreter: every result, displayed.
fn run(text: &str) -> Result<Vec<String>, String> {
    let compiled = compile(text);
    if let Some(d) = compiled.diagnostics.first() {
        return Err(d.message.clone());
    }
    let tail = compiled.tail.ok_or("no program")?;
    let mut db = weft_hir::RootDatabase::default();
    let file = db.set_file("test.apl", text);
    let def = weft_hir::DefLoc {
        file,
        name: weft_hir::Name::new("main"),
        dup: 0,
        kind: weft_hir::DefKind::Entry,
    };
    let program = crate::to_core::to_core(&tail, def)?;
    assert_eq!(weft_core::validate(&program), Vec::new());
    let values =
        weft_core::run_entry(&program, program.entries[0], Vec::new()).map_err(|e| e.message)?;
    Ok(values.iter().map(crate::display::display).collect())
}

fn value(text: &str) -> String {
    match run(text) {
        Ok(v) => v.last().cloned().unwrap_or_default(),
        Err(e) => panic!("{text}: {e}"),
    }
}

fn errors(text: &str) -> Vec<String> {
    compile(text)
        .diagnostics
        .iter()
        .map(|d| {
            let (line, col) = line_col(text, d.span.start);
            format!("{line}:{col}: {}", d.message)
        })
        .collect()
}

fn tail(text: &str) -> String {
    let compiled = compile(text);
    assert_eq!(compiled.diagnostics, Vec::new());
    crate::tail::print_program(&compiled.tail.expect("a program"))
}

#[test]
fn t17_subtyping_and_singletons() {
    let vec3 = Ty::Vec(Base::Int, Shape::constant(3));
    let arr1 = Ty::array(Base::Int, 1);
    assert!(subtype(&vec3, &arr1));
    assert!(!subtype(&arr1, &vec3));
    let five = Ty::S(Base::Int, Shape::constant(5));
    assert!(subtype(&five, &Ty::scalar(Base::Int)));
    assert!(!subtype(&five, &arr1));
    let sv = Ty::SV(Base::Int, Shape::var(0));
    assert!(subtype(&sv, &Ty::Vec(Base::Int, Shape::constant(1))));
    assert!(subtype(&sv, &arr1), "transitively, through <int>1");
    assert_eq!(five.to_string(), "S(int,5)");
    assert_eq!(vec3.to_string(), "<int>3");
    assert_eq!(Ty::array(Base::Double, 0).to_string(), "[double]0");
    // Shape terms are equal modulo AC and constant folding.
    let a = Shape::var(1).add(&Shape::var(2)).add(&Shape::constant(1));
    let b = Shape::constant(1).add(&Shape::var(2)).add(&Shape::var(1));
    assert_eq!(a, b);
    assert_eq!(Shape::var(1).add(&Shape::constant(2)).sub(&Shape::var(1)), Shape::constant(2));
    // The least upper bound keeps equal singletons and widens different ones.
    assert_eq!(join(&five, &five), Some(five.clone()));
    assert_eq!(join(&five, &Ty::S(Base::Int, Shape::constant(6))), Some(Ty::scalar(Base::Int)));
    assert_eq!(join(&vec3, &Ty::Vec(Base::Int, Shape::constant(4))), Some(Ty::array(Base::Int, 1)));
    // Literals: `tt : S_bool(1)` and `5 : S_int(5)`; a strand is a sized vector.
    assert_eq!(tail("1=1"), "tt\n", "a comparison of singletons is folded");
    let program = compile("1=1").tail.expect("a program");
    assert_eq!(program.body.ty, Ty::S(Base::Bool, Shape::constant(1)));
    let program = compile("5").tail.expect("a program");
    assert_eq!(program.body.ty, five);
    assert!(tail("x←1 2 3 ⋄ x+1").contains("<int>3 = [1,2,3]"));
}

#[test]
fn t15_signal_types_and_value() {
    let text = "diff ← {1↓⍵-¯1⌽⍵}\nsignal ← {¯50⌈50⌊50×(diff 0,⍵)÷0.01+⍵}\n+/ signal 9 8 6 8 7 4 4 3 2 2 1 2 4 5 6\n";
    let printed = tail(text);
    assert!(printed.contains("let v0:<int>15 = [9,8,6,8,7,4,4,3,2,2,1,2,4,5,6]"), "{printed}");
    // `consV(0,v0)` is folded: its operands are literals.
    assert!(printed.contains(":<int>16 = [0,9,8,6,8,7,4,4,3,2,2,1,2,4,5,6]"), "{printed}");
    assert!(printed.contains("i2d("), "{printed}");
    assert!(printed.contains("reduce(fn") && printed.contains(",0.0,"), "{printed}");
    assert_eq!(value(text), "¯27.870466");
}

#[test]
fn t19_inner_product_is_optimised_to_fig_3_7() {
    let text = "A ← 3 2⍴⍳5\nB ← ⍉A\nR ← A +.× B\n×/ +/ R\n";
    let printed = tail(text);
    expect![[r#"
        let v0:<int>5 = iotaV(5) in
        let v1:<int>2 = [3,2] in
        let v2:[int]2 = reshape(v1,0,v0) in
        let v3:[int]2 = transp(v2) in
        let v7:<int>3 = [3,3,2] in
        let v8:[int]3 = reshape(v7,0,v2) in
        let v9:[int]3 = transp2([2,1,3],v8) in
        let v11:<int>3 = [3,2,3] in
        let v12:[int]3 = reshape(v11,0,v3) in
        let v13:[int]3 = transp2([1,3,2],v12) in
        let v17:[int]3 = zipWith(fn v14:[int]0 v15:[int]0 =>
          let v16:[int]0 = muli(v14,v15) in
          v16,v9,v13) in
        let v21:[int]2 = reduce(fn v18:[int]0 v19:[int]0 =>
          let v20:[int]0 = addi(v18,v19) in
          v20,0,v17) in
        let v25:[int]1 = reduce(fn v22:[int]0 v23:[int]0 =>
          let v24:[int]0 = addi(v22,v23) in
          v24,0,v21) in
        let v29:[int]0 = reduce(fn v26:[int]0 v27:[int]0 =>
          let v28:[int]0 = muli(v26,v27) in
          v28,1,v25) in
        v29
    "#]]
    .assert_eq(&printed);
    assert_eq!(value(text), "65780");
    assert_eq!(value("A ← 3 2⍴⍳5 ⋄ A +.× ⍉A"), " 5 11  7\n11 25 19\n 7 19 26");
}

#[test]
fn a_named_function_has_the_type_of_each_application() {
    let text = "diff ← {1↓⍵-¯1⌽⍵}\ndiff 0,9 8 6\n";
    let compiled = compile(text);
    let at = text.rfind("diff").unwrap_or(0) as u32;
    let (_, ty) = compiled
        .types
        .iter()
        .rfind(|(s, _)| s.start == at && s.end == at + 4)
        .expect("the application of diff has a type");
    assert_eq!(ty.to_string(), "<int>4 -> <int>3");
}

#[test]
fn singleton_values_flow_into_types() {
    let printed = tail("n ← 2+3 ⋄ ⍳n");
    assert!(printed.contains("<int>5 = iotaV(5)"), "{printed}");
    let printed = tail("v ← 1 2 3 4 ⋄ (⍴v), 2↓v");
    assert!(printed.contains("<int>3"), "{printed}");
}

#[test]
fn worked_examples_t18_to_t30() {
    assert_eq!(value("{+/⍺×⍵}/ 1 2 3 ⋄ 1 2 3 {+/⍺×⍵} 4 5 6"), "32");
    assert_eq!(value("(2 3⍴⍳6) {+/⍺×⍵} 2 3⍴1 0 2"), "7 16");
    assert_eq!(value("cube ← 10 20 30⍴⍳6000 ⋄ plane ← cube[;4;] ⋄ plane[1;1]"), "91");
    assert_eq!(value("cube ← 10 20 30⍴⍳6000 ⋄ ⍴cube[;4;]"), "10 30");
    assert_eq!(value("A←1↓⍳100 ⋄ +/(1=+⌿0=A∘.|A)/A"), "1060");
    assert_eq!(value("⍳3"), "1 2 3");
    assert_eq!(value("⍴⍳0"), "0");
    assert_eq!(value("2 3⍴1 2 3 4"), "1 2 3\n4 1 2");
    assert_eq!(value("2⍴0↑1 2 3"), "0 0");
    assert_eq!(value("5↑1 2 3"), "1 2 3 0 0");
    assert_eq!(value("¯2↑1 2 3"), "2 3");
    assert_eq!(value("¯5↑1 2 3"), "0 0 1 2 3");
    assert_eq!(value("1⌽1 2 3"), "2 3 1");
    assert_eq!(value("¯1⌽1 2 3"), "3 1 2");
    assert_eq!(value("1↓1 2 3"), "2 3");
    assert_eq!(value("¯1↓1 2 3"), "1 2");
    assert_eq!(value("⍴2 1 3⍉2 3 4⍴⍳24"), "3 2 4");
    assert_eq!(value("⍴2 3 1⍉2 3 4⍴⍳24"), "4 2 3");
    assert_eq!(value("(2 3 1⍉2 3 4⍴⍳24)[2;1;3]"), "10");
    assert_eq!(value("+/ 2 3⍴⍳6"), "6 15");
    assert_eq!(value("A ← 2 2⍴⍳4 ⋄ A[2;1] ← 9 ⋄ A"), "1 2\n9 4");
    assert_eq!(value("{⍵×2}⍣3 ⊢ 1 2"), "8 16");
    assert_eq!(value("{⍵×2}⍣0 ⊢ 1 2"), "1 2");
}

#[test]
fn run_time_errors() {
    let err = |t: &str| run(t).expect_err(t);
    assert!(err("⍳ -/ 1 4").contains("negative"));
    let e = err("A ← 2 2⍴⍳4 ⋄ A[1;3] ← 9 ⋄ A");
    assert!(e.contains("out of bounds for array `A`"), "the APL name is in the message: {e}");
    assert!(err("+/ (⍳3) × 1 0 1 1 1/⍳5").contains("size"));
}

#[test]
fn apl_semantics() {
    // Right-to-left, with non-associative reductions folding from the right.
    assert_eq!(value("-/ 1 2 3 4"), "¯2");
    assert_eq!(value("÷/ 8 4 2"), "4");
    assert_eq!(value("{⍺+2×⍵}/ 1 2 3"), "17");
    assert_eq!(value("+\\ 1 2 3 4"), "1 3 6 10");
    assert_eq!(value("⌈/ 3 9 2"), "9");
    assert_eq!(value("+/⍳0"), "0");
    assert_eq!(value("×/⍳0"), "1");
    // Residue has the sign of its left argument.
    assert_eq!(value("3|¯7 7"), "2 1");
    assert_eq!(value("¯3|7"), "¯2");
    assert_eq!(value("0|5"), "5");
    // Scalar extension, coercions and display.
    assert_eq!(value("1 2 3 + 0.5"), "1.5 2.5 3.5");
    assert_eq!(value("+/ 1 0 1 = 1 1 1"), "2");
    assert_eq!(value("÷4"), "0.25");
    assert_eq!(value("⌊2.7 ¯2.7"), "2 ¯3");
    // Regressions found by `random_programs_never_panic`: dropping more than there
    // is; `∧` reductions and scans of 0/1 integers; `×` of a double is an integer.
    assert_eq!(value("⍴3↓1 2"), "0");
    assert_eq!(value("×¯3∨¯3"), "1", "a boolean made of ¯3 is 1, not ¯3");
    assert_eq!(value("¯3⍪⍣2 ⊢ 2 3"), "¯3 ¯3 2 3", "an iteration that grows the array");
    assert_eq!(value("∧/1 1 0"), "0");
    assert_eq!(value("∧\\1 1 0"), "1 1 0");
    assert!(errors("(1 2 3)∘.↓¯3")[0].contains("nested arrays"), "{:?}", errors("(1 2 3)∘.↓¯3"));
    assert_eq!(value("|×¯0.2"), "1");
    // Catenation, compress, replicate, first, tally, reverse, first-axis ops.
    assert_eq!(value("0,1 2,3"), "0 1 2 3");
    assert_eq!(value("1 0 1/5 6 7"), "5 7");
    assert_eq!(value("2 0 ¯1 1/5 6 7 8"), "5 5 0 8");
    assert_eq!(value("⊃5 6 7"), "5");
    assert_eq!(value("≢5 6 7"), "3");
    assert_eq!(value("⌽2 3⍴⍳6"), "3 2 1\n6 5 4");
    assert_eq!(value("⊖2 3⍴⍳6"), "4 5 6\n1 2 3");
    assert_eq!(value("+⌿2 3⍴⍳6"), "5 7 9");
    assert_eq!(value("+⍀2 3⍴⍳6"), "1 2 3\n5 7 9");
    assert_eq!(value("(2 2⍴⍳4),2 2⍴5"), "1 2 5 5\n3 4 5 5");
    assert_eq!(value("(2 2⍴⍳4)⍪2 2⍴5"), "1 2\n3 4\n5 5\n5 5");
    assert_eq!(value(",2 2⍴⍳4"), "1 2 3 4");
    assert_eq!(value("1 2 3[2 3]"), "2 3");
    assert_eq!(value("(1 2),3"), "1 2 3");
    assert!(errors("(1 2) 3")[0].contains("nested arrays"), "{:?}", errors("(1 2) 3"));
    assert_eq!(value("⍴⍬"), "0");
    assert_eq!(value("+/⍬"), "0");
    assert_eq!(value("2 5 9∊3 5 7 9"), "0 1 1");
    assert_eq!(value("5∊3 5 7"), "1");
    assert_eq!(value("10 20 30⍳30 10 99"), "3 1 4");
    assert_eq!(value("10 20 30⍳20"), "2");
    // Operators, trains and user operators.
    assert_eq!(value("2 {⍺-⍵}⍨ 5"), "3");
    assert_eq!(value("(+/÷≢) 1 2 3 4"), "2.5");
    assert_eq!(value("twice ← {⍺⍺ ⍺⍺ ⍵} ⋄ {⍵+1} twice 5"), "7");
    assert_eq!(value("f ← +/ ⋄ f 1 2 3"), "6");
    assert_eq!(value("(2∘×) 1 2"), "2 4");
    assert_eq!(value("(1 2∘.+1 2 3)"), "2 3 4\n3 4 5");
    // Output with ⎕←, then the value.
    assert_eq!(run("⎕←1 2 ⋄ 3").expect("runs"), vec!["1 2".to_owned(), "3".to_owned()]);
    // Guards with conditions known when compiling, and decided at run time.
    assert_eq!(value("f ← {⍵=0: 10 ⋄ 20} ⋄ f 0"), "10");
    assert_eq!(value("f ← {⍵>2: ⍵×10 ⋄ ⍵÷2} ⋄ f¨ 1 2 3 4"), "0.5 1 30 40");
    assert_eq!(value("f ← {(+/⍵)>5: 2↑⍵ ⋄ ⍵} ⋄ (f 1 2 3 4), f 1 2"), "1 2 1 2");
    assert_eq!(value("f ← {(+/⍵)>5: 2↑⍵ ⋄ x ← ⍵+1 ⋄ x} ⋄ f 1 2 3"), "1 2");
    assert!(errors("f ← {⍵>2: 1 2 ⋄ 3} ⋄ f +/1 2")[0].contains("RANK ERROR"));
}

#[test]
fn errors_are_in_apl_terms_with_positions() {
    expect![[r#"
        [
            "1:7: LENGTH ERROR: the arguments are an int vector of length 3 and an int vector of length 2",
        ]
    "#]]
    .assert_debug_eq(&errors("1 2 3 + 4 5"));
    expect![[r#"
        [
            "1:9: RANK ERROR: the arguments are an int matrix and an int vector of length 2",
        ]
    "#]]
    .assert_debug_eq(&errors("(2 2⍴1) + 1 2"));
    assert_eq!(errors("⍳¯1"), vec!["1:1: DOMAIN ERROR: `⍳` of the negative number ¯1".to_owned()]);
    assert_eq!(
        errors("¯2 3⍴1"),
        vec!["1:5: DOMAIN ERROR: a shape with a negative extent".to_owned()]
    );
    expect![[r#"
        [
            "1:1: VALUE ERROR: `x` is not defined",
        ]
    "#]]
    .assert_debug_eq(&errors("x+1"));
    expect![[r#"
        [
            "1:1: DOMAIN ERROR: the function gives an int vector of length 2 for one element; nested arrays are not supported",
        ]
    "#]]
    .assert_debug_eq(&errors("{⍵ ⍵}¨ 1 2"));
}

#[test]
fn parse_errors_are_recovered_statement_by_statement() {
    // Three statements with errors; the later good statements are still checked.
    let text = "a ← (1 2\nb ← 3 $ 4\nc ← 1 2 + 1 2 3\nd ← a + 1\n⍵\n";
    expect![[r#"
        [
            "1:9: expected `)`",
            "2:7: `$` is not in the supported APL subset (see docs/apl.md)",
            "3:9: LENGTH ERROR: the arguments are an int vector of length 2 and an int vector of length 3",
            "5:1: `⍺` and `⍵` are only defined inside a dfn `{…}`",
        ]
    "#]]
    .assert_debug_eq(&errors(text));
}

#[test]
fn apl_display() {
    let d = |v: Value| crate::display::display(&v);
    assert_eq!(d(Value::scalar(Scalar::F64(-27.870466000131344))), "¯27.870466");
    assert_eq!(d(Value::scalar(Scalar::F64(3.0))), "3");
    assert_eq!(d(Value::scalar(Scalar::F64(1e-7))), "1E¯7");
    assert_eq!(d(Value::vector(vec![true, false])), "1 0");
    let m = Value::new(vec![2, 2], vec![1i64, -20, 300, 4]).expect("a 2×2 value");
    assert_eq!(d(m), "  1 ¯20\n300   4");
}

/// Random token soups over the APL alphabet: the front end reports errors and never
/// panics, and whatever it accepts translates to valid core IR.
#[test]
fn random_programs_never_panic() {
    const PIECES: &[&str] = &[
        "1", "2", "¯3", "0.5", "x", "f", "⍺", "⍵", "⍺⍺", "+", "-", "×", "÷", "⌈", "⌊", "|", "*",
        "⍟", "○", "<", "=", "≠", "∧", "∨", "~", "⍴", "⍳", ",", "⍪", "⌽", "⊖", "⍉", "↑", "↓", "⊃",
        "≢", "⊢", "/", "\\", "⌿", "⍀", "¨", "⍨", ".", "∘", "∘.", "⍣", "(", ")", "[", "]", ";", "{",
        "}", ":", "←", "⎕←", "⋄", "\n", " ", "x←", "f←", "1 2 3", "2 3⍴", "$",
    ];
    let mut state: u64 = std::env::var("APL_RANDOM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x2545_f491_4f6c_dd1d);
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut accepted = 0;
    for _ in 0..30000 {
        let len = 1 + next() % 12;
        let text: String =
            (0..len).map(|_| PIECES[(next() % PIECES.len() as u64) as usize]).collect();
        let compiled = compile(&text);
        for d in &compiled.diagnostics {
            assert!(d.span.start <= d.span.end && d.span.end as usize <= text.len(), "{text:?}");
            let _ = line_col(&text, d.span.start);
        }
        if let Some(tail) = compiled.tail {
            accepted += 1;
            let _ = crate::tail::print_program(&tail);
            let mut db = weft_hir::RootDatabase::default();
            let file = db.set_file("r.apl", &text);
            let def = weft_hir::DefLoc {
                file,
                name: weft_hir::Name::new("main"),
                dup: 0,
                kind: weft_hir::DefKind::Entry,
            };
            let program =
                crate::to_core::to_core(&tail, def).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(weft_core::validate(&program), Vec::new(), "{text:?}");
            if std::env::var_os("APL_RANDOM_RUN").is_some()
                && let Err(e) = weft_core::run_entry(&program, program.entries[0], Vec::new())
            {
                eprintln!("RUNERR {text:?}: {}", e.message);
            }
        }
    }
    assert!(accepted > 200, "only {accepted} random programs were accepted");
}

#[test]
fn t22_annotations_are_checked_at_each_application() {
    let diff = "diff ← {\n  ⍝: <κ>(ρ+1) → <κ>ρ\n  1↓⍵-¯1⌽⍵\n}\n";
    assert_eq!(value(&format!("{diff}diff 3 1 4 1 5")), "¯2 3 ¯3 4");
    // An empty vector has length 0, which is not ρ+1 for a natural ρ.
    let errs = errors(&format!("{diff}diff 0↑1 2 3"));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with(
            "5:1: DOMAIN ERROR: the annotation `⍝: <κ>(ρ+1) → <κ>ρ` needs `⍵` of type <κ>(ρ+1)"
        ),
        "{errs:?}"
    );
    // The result is checked too, with the variables bound by the arguments.
    let wrong = "f ← {\n⍝: <int>ρ → <int>ρ\n1↓⍵\n}\nf 1 2 3";
    assert!(errors(wrong)[0].contains("gives a result of type <int>ρ"), "{:?}", errors(wrong));
    let signal = "signal ← {\n⍝: <double>ρ → <double>ρ\n¯50⌈50⌊50×⍵\n}\n+/signal 0.5 1.5";
    assert_eq!(value(signal), "75");
    assert!(errors("f ← {\n⍝: int → int\n⍵}\nf 1 2")[0].contains("DOMAIN ERROR"));
    assert_eq!(
        errors("f ← {\n⍝: <int → int\n⍵}\nf 1"),
        vec!["2:1: `<int` is not a base type (int, double, bool or a name)".to_owned()]
    );
}
