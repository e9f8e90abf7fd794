//! Patterns: `pat ::= name | _ | (pat, ...) | (pat : type) | {field [= pat], ...}`
//! (LANGUAGE.md section 4; records are version 1.1).

use super::*;
use crate::grammar::types;

pub(crate) const PATTERN_START: &[SyntaxKind] = &[IDENT, L_PAREN, L_BRACE];

pub(crate) fn pattern(p: &mut Parser<'_>) {
    if !enter(p) {
        return;
    }
    match p.current() {
        IDENT if p.nth_text(0) == "_" => {
            let m = p.start();
            p.bump(IDENT);
            m.complete(p, WILDCARD_PAT);
        }
        IDENT => {
            let m = p.start();
            name(p, &[]);
            m.complete(p, IDENT_PAT);
        }
        L_PAREN => {
            let m = p.start();
            p.bump(L_PAREN);
            let first = p.start();
            pattern(p);
            let kind = if p.eat(COLON) {
                types::type_(p);
                if p.at(COMMA) {
                    // `(a: f32, i: i64)` (version 1.1): a tuple of ascribed patterns.
                    first.complete(p, ASCRIBED_PAT);
                    while p.eat(COMMA) {
                        let elem = p.start();
                        pattern(p);
                        if p.expect(COLON) {
                            types::type_(p);
                        }
                        elem.complete(p, ASCRIBED_PAT);
                    }
                    TUPLE_PAT
                } else {
                    first.abandon(p);
                    ASCRIBED_PAT
                }
            } else if p.at(COMMA) {
                first.abandon(p);
                while p.eat(COMMA) {
                    if p.at(R_PAREN) {
                        break;
                    }
                    pattern(p);
                }
                TUPLE_PAT
            } else {
                first.abandon(p);
                PAREN_PAT
            };
            p.expect(R_PAREN);
            m.complete(p, kind);
        }
        L_BRACE => {
            let m = p.start();
            p.bump(L_BRACE);
            while p.at(IDENT) {
                let field = p.start();
                name_ref(p);
                if p.eat(EQ) {
                    pattern(p);
                }
                field.complete(p, RECORD_PAT_FIELD);
                if !p.eat(COMMA) {
                    break;
                }
            }
            p.expect(R_BRACE);
            m.complete(p, RECORD_PAT);
        }
        _ => p.err_recover(
            "expected a pattern",
            &[EQ, ARROW, COLON, R_PAREN, COMMA, DEF_KW, ENTRY_KW, TYPE_KW, IMPORT_KW],
        ),
    }
    leave(p);
}
