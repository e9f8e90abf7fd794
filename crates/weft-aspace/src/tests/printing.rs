//! Printer unit tests: spaces, rows, schemes and the whole dump.

use expect_test::expect;

use crate::{Row, RowVar, Scheme, Space, SpaceSet, minias};

#[test]
fn space_sets_print_in_id_order() {
    let set: SpaceSet = [Space::Constant, Space::Global, Space::Local].into_iter().collect();
    expect![[r#"{global, local, constant} GLC global, local or constant memory {}"#]]
        .assert_eq(&format!("{set} {} {} {}", set.letters(), set.describe(), SpaceSet::EMPTY));
}

#[test]
fn rows_print_closed_open_and_bare_variables() {
    let labels = SpaceSet::single(Space::Global).with(Space::Private);
    let out = format!(
        "{} | {} | {} | {}",
        Row::closed(labels),
        Row::open(labels, RowVar(3)),
        Row::var(RowVar(0)),
        Row::empty()
    );
    expect![[r#"{global, private} | {global, private | r3} | r0 | {}"#]].assert_eq(&out);
}

#[test]
fn schemes_rename_variables_from_one_and_list_every_predicate() {
    let scheme = Scheme {
        vars: vec![
            SpaceSet::single(Space::Constant),
            SpaceSet::single(Space::Global).with(Space::Local),
        ],
        params: vec![
            Row::var(RowVar(0)),
            Row::open(SpaceSet::single(Space::Global).with(Space::Local), RowVar(1)),
        ],
        ret: Some(Row::closed(SpaceSet::single(Space::Global))),
    };
    expect![[r#"∀r1 r2. (r1\constant, r2\global, r2\local) => (ASpace r1, ASpace {global, local | r2}) -> ASpace {global}"#]]
        .assert_eq(&scheme.to_string());
}

#[test]
fn minias_syntax_errors_carry_the_line() {
    let error = minias::parse("kernel void k(global int * g)\n{ g = ; }").unwrap_err();
    expect![[r#"ParseError { line: 2, message: "expected an expression" }"#]]
        .assert_eq(&format!("{error:?}"));
}
