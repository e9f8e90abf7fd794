//! Declarations: `import`, `def`, `entry`, `type` (LANGUAGE.md section 3).

use super::*;
use crate::grammar::{expressions, patterns, types};

pub(crate) fn source_file(p: &mut Parser<'_>) {
    let m = p.start();
    while !p.at_eof() {
        item(p);
    }
    m.complete(p, SOURCE_FILE);
}

fn item(p: &mut Parser<'_>) {
    // One diagnostic per declaration nested too deeply: declarations parse on their
    // own (`split.rs`), so none depends on what the parser met in another.
    p.too_deep_reported = false;
    p.skipping_too_deep = false;
    match p.current() {
        IMPORT_KW => import(p),
        TYPE_KW => type_alias(p),
        DEF_KW | ENTRY_KW => def(p),
        _ => {
            // Skip to the next declaration in one ERROR node with one error.
            let m = p.start();
            p.error("expected a declaration (`def`, `entry`, `type` or `import`)");
            while !at_declaration_end(p) {
                p.bump_any();
            }
            m.complete(p, ERROR);
        }
    }
}

fn import(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(IMPORT_KW);
    p.expect(STRING);
    m.complete(p, IMPORT);
}

fn type_alias(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(TYPE_KW);
    name(p, ITEM_START);
    while p.at(QUOTE) {
        type_param(p);
    }
    if p.expect(EQ) {
        types::type_(p);
    }
    m.complete(p, TYPE_ALIAS);
}

fn def(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_any(); // `def` or `entry`
    def_name(p);
    loop {
        match p.current() {
            L_BRACK => size_param(p),
            QUOTE => type_param(p),
            L_PAREN => param(p),
            _ => break,
        }
    }
    if p.at(COLON) {
        let ret = p.start();
        p.bump(COLON);
        types::type_(p);
        ret.complete(p, RET_TYPE);
    }
    if p.expect(EQ) {
        expressions::expr(p);
    }
    m.complete(p, DEF);
}

/// A def's name; `f32.sum` (version 1.1) adds `sum` to the namespace of `f32`, as the
/// prelude does. The qualifier is checked by the checker.
fn def_name(p: &mut Parser<'_>) {
    let glued_qualified = p.at(IDENT)
        && p.nth(1) == DOT
        && p.nth(2) == IDENT
        && p.nth_is_glued(1)
        && p.nth_is_glued(2);
    if !glued_qualified {
        name(p, &[L_BRACK, QUOTE, L_PAREN, COLON, EQ, DEF_KW, ENTRY_KW, TYPE_KW, IMPORT_KW]);
        return;
    }
    let m = p.start();
    p.bump(IDENT);
    p.bump(DOT);
    p.bump(IDENT);
    m.complete(p, NAME);
}

/// `[n]`
fn size_param(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(L_BRACK);
    name(p, &[R_BRACK, EQ]);
    p.expect(R_BRACK);
    m.complete(p, SIZE_PARAM);
}

/// `'a`
fn type_param(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(QUOTE);
    name(p, &[L_BRACK, QUOTE, L_PAREN, COLON, EQ]);
    m.complete(p, TYPE_PARAM);
}

/// `(pat: type)`, or (version 1.1) a tuple of ascribed patterns `(d: f32, i: i64)`,
/// parsed as a `TUPLE_PAT` of `ASCRIBED_PAT`s without parentheses of their own: the
/// parameter's type is then the tuple of the ascriptions.
fn param(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(L_PAREN);
    let tuple = p.start();
    let first = p.start();
    patterns::pattern(p);
    if p.expect(COLON) {
        types::type_(p);
    }
    if p.at(COMMA) {
        first.complete(p, ASCRIBED_PAT);
        while p.eat(COMMA) {
            let elem = p.start();
            patterns::pattern(p);
            if p.expect(COLON) {
                types::type_(p);
            }
            elem.complete(p, ASCRIBED_PAT);
        }
        tuple.complete(p, TUPLE_PAT);
    } else {
        first.abandon(p);
        tuple.abandon(p);
    }
    p.expect(R_PAREN);
    m.complete(p, PARAM);
}
