//! Types and size expressions (LANGUAGE.md section 2).

use super::*;

/// `type ::= scalar | a | [size]type | (type, ...) | type -> type | name`
pub(crate) fn type_(p: &mut Parser<'_>) {
    if !enter(p) {
        return;
    }
    if let Some(lhs) = type_atom(p)
        && p.at(ARROW)
    {
        let m = lhs.precede(p);
        p.bump(ARROW);
        type_(p);
        m.complete(p, FN_TYPE);
    }
    leave(p);
}

fn type_atom(p: &mut Parser<'_>) -> Option<crate::parser::CompletedMarker> {
    let m = p.start();
    let kind = match p.current() {
        IDENT => {
            name_ref(p);
            PATH_TYPE
        }
        L_BRACK => {
            p.bump(L_BRACK);
            // `[]t`: an anonymous size (version 1.1).
            if !p.at(R_BRACK) {
                size(p);
            }
            p.expect(R_BRACK);
            if enter(p) {
                type_atom(p);
                leave(p);
            }
            ARRAY_TYPE
        }
        L_PAREN => {
            p.bump(L_PAREN);
            type_(p);
            let mut n_elems = 1;
            while p.eat(COMMA) {
                if p.at(R_PAREN) {
                    break;
                }
                type_(p);
                n_elems += 1;
            }
            p.expect(R_PAREN);
            if n_elems == 1 { PAREN_TYPE } else { TUPLE_TYPE }
        }
        L_BRACE => {
            record_type(p);
            RECORD_TYPE
        }
        QUESTION => {
            exist_type(p);
            EXIST_TYPE
        }
        _ => {
            m.abandon(p);
            p.err_recover(
                "expected a type",
                &[R_PAREN, R_BRACK, COMMA, EQ, DEF_KW, ENTRY_KW, TYPE_KW, IMPORT_KW],
            );
            return None;
        }
    };
    Some(m.complete(p, kind))
}

/// `?[k][m].t` (version 1.1): sizes that the value itself determines.
fn exist_type(p: &mut Parser<'_>) {
    p.bump(QUESTION);
    if !p.at(L_BRACK) {
        p.error("expected `[` and the name of an existential size after `?`");
    }
    while p.at(L_BRACK) {
        let size = p.start();
        p.bump(L_BRACK);
        name(p, &[R_BRACK, DOT]);
        p.expect(R_BRACK);
        size.complete(p, SIZE_PARAM);
    }
    if p.expect(DOT) && enter(p) {
        type_(p);
        leave(p);
    }
}

/// `{x: f32, y: f32}` (version 1.1), possibly empty.
fn record_type(p: &mut Parser<'_>) {
    p.bump(L_BRACE);
    while p.at(IDENT) {
        let field = p.start();
        name(p, &[]);
        if p.expect(COLON) {
            type_(p);
        }
        field.complete(p, RECORD_TYPE_FIELD);
        if !p.eat(COMMA) {
            break;
        }
    }
    p.expect(R_BRACE);
}

/// `size ::= name | intlit | size + size | size - size | size * size | size / size | (size)`
pub(crate) fn size(p: &mut Parser<'_>) {
    size_bp(p, 0);
}

fn size_bp(p: &mut Parser<'_>, min_bp: u8) {
    if !enter(p) {
        return;
    }
    let Some(mut lhs) = size_atom(p) else {
        leave(p);
        return;
    };
    loop {
        let (l_bp, r_bp) = match p.current() {
            PLUS | MINUS => (1, 2),
            STAR | SLASH => (3, 4),
            _ => break,
        };
        if l_bp < min_bp {
            break;
        }
        let m = lhs.precede(p);
        p.bump_any();
        size_bp(p, r_bp);
        lhs = m.complete(p, SIZE_BIN);
    }
    leave(p);
}

fn size_atom(p: &mut Parser<'_>) -> Option<crate::parser::CompletedMarker> {
    let m = p.start();
    let kind = match p.current() {
        IDENT => {
            name_ref(p);
            SIZE_NAME
        }
        INT_NUMBER => {
            p.bump(INT_NUMBER);
            SIZE_LIT
        }
        L_PAREN => {
            p.bump(L_PAREN);
            size(p);
            p.expect(R_PAREN);
            SIZE_PAREN
        }
        _ => {
            m.abandon(p);
            p.err_recover(
                "expected a size",
                &[R_BRACK, R_PAREN, EQ, DEF_KW, ENTRY_KW, TYPE_KW, IMPORT_KW],
            );
            return None;
        }
    };
    Some(m.complete(p, kind))
}
