//! Expressions (LANGUAGE.md section 4): a Pratt loop for binary operators over
//! prefix operators, block-like forms (`let`, `if`, `loop`, `\`), application and
//! postfix indexing and projection.
//!
//! Two layout rules come from the spec: `[` glued to an atom indexes it while `[`
//! after a space starts an array literal (`xs[1]` vs `f [1, 2]`), and the bodies of
//! `let`, `if`, `loop` and `\` extend as far right as possible.

use super::*;
use crate::grammar::{patterns, types};
use crate::parser::CompletedMarker;
use crate::syntax_kind::PREFIX_BINDING_POWER;

/// Tokens that can start an argument of an application.
const ATOM_START: &[SyntaxKind] =
    &[INT_NUMBER, FLOAT_NUMBER, TRUE_KW, FALSE_KW, IDENT, L_PAREN, L_BRACK, L_BRACE];

/// Tokens an expression rule leaves for an enclosing rule instead of skipping.
const EXPR_RECOVERY: &[SyntaxKind] = &[
    R_PAREN, R_BRACK, COMMA, COLON, IN_KW, THEN_KW, ELSE_KW, DO_KW, FOR_KW, WHILE_KW, LET_KW, EQ,
    DEF_KW, ENTRY_KW, TYPE_KW, IMPORT_KW,
];

pub(crate) fn expr(p: &mut Parser<'_>) {
    expr_bp(p, 0);
}

fn expr_bp(p: &mut Parser<'_>, min_bp: u8) -> Option<CompletedMarker> {
    if !enter(p) {
        return None;
    }
    let result = expr_bp_inner(p, min_bp);
    leave(p);
    result
}

fn expr_bp_inner(p: &mut Parser<'_>, min_bp: u8) -> Option<CompletedMarker> {
    let lhs = lhs(p)?;
    let mut chain = Chain::default();
    let result = binary_chain(p, min_bp, lhs, &mut chain);
    chain.leave(p);
    result
}

/// Levels of a left-nested chain (`x + 1 + 1 ...`, `xs[0][0]...`): the parser loops
/// over them, but later phases recurse into each, so each is a level of nesting.
#[derive(Default)]
struct Chain(u32);

impl Chain {
    /// Enters one more level; `false` when the input nests too deep (`enter`).
    fn enter(&mut self, p: &mut Parser<'_>) -> bool {
        if !enter(p) {
            return false;
        }
        self.0 += 1;
        true
    }

    fn leave(self, p: &mut Parser<'_>) {
        for _ in 0..self.0 {
            leave(p);
        }
    }
}

fn binary_chain(
    p: &mut Parser<'_>,
    min_bp: u8,
    mut lhs: CompletedMarker,
    chain: &mut Chain,
) -> Option<CompletedMarker> {
    loop {
        let op = p.current();
        if op == COLON_GT {
            // `e :> t` is the loosest form: it applies to the whole expression so far.
            if min_bp > 0 {
                break;
            }
            if !chain.enter(p) {
                return None;
            }
            let m = lhs.precede(p);
            p.bump(COLON_GT);
            types::type_(p);
            lhs = m.complete(p, COERCE_EXPR);
            continue;
        }
        if op == WITH_KW {
            // `xs with [i] = v` is as loose as `:>`; the value stops before another
            // `with`, so `xs with [0] = a with [1] = b` updates twice, left to right.
            if min_bp > 0 {
                break;
            }
            let m = lhs.precede(p);
            p.bump(WITH_KW);
            if p.at(IDENT) {
                // `r with x.y = v` (version 1.1): a record with one field replaced.
                name_ref(p);
                while p.at(DOT) && p.nth(1) == IDENT {
                    p.bump(DOT);
                    name_ref(p);
                }
                if p.expect(EQ) {
                    expr_bp(p, 1);
                }
                lhs = m.complete(p, RECORD_UPDATE_EXPR);
                continue;
            }
            if p.expect(L_BRACK) {
                index(p);
                while p.eat(COMMA) {
                    index(p);
                }
                p.expect(R_BRACK);
            }
            if p.expect(EQ) {
                expr_bp(p, 1);
            }
            lhs = m.complete(p, UPDATE_EXPR);
            continue;
        }
        if let Some((l_bp, r_bp)) = op.pipe_binding_power() {
            if l_bp < min_bp {
                break;
            }
            if !chain.enter(p) {
                return None;
            }
            let m = lhs.precede(p);
            p.bump_any();
            let rhs = expr_bp(p, r_bp);
            lhs = m.complete(p, PIPE_EXPR);
            rhs?;
            continue;
        }
        let Some((l_bp, r_bp)) = op.infix_binding_power() else { break };
        if l_bp < min_bp {
            break;
        }
        // `(e op)` is a left section: leave `op )` for the parenthesis rule.
        if p.nth(1) == R_PAREN {
            break;
        }
        if !chain.enter(p) {
            return None;
        }
        let m = lhs.precede(p);
        p.bump_any();
        if expr_bp(p, r_bp).is_none() {
            m.complete(p, BIN_EXPR);
            return None;
        }
        lhs = m.complete(p, BIN_EXPR);
    }
    Some(lhs)
}

fn lhs(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let m = p.start();
    let kind = match p.current() {
        MINUS | BANG => {
            p.bump_any();
            if expr_bp(p, PREFIX_BINDING_POWER).is_none() {
                m.complete(p, PREFIX_EXPR);
                return None;
            }
            PREFIX_EXPR
        }
        BACKSLASH => {
            p.bump(BACKSLASH);
            let mut n_params = 0;
            while patterns::PATTERN_START.contains(&p.current()) {
                patterns::pattern(p);
                n_params += 1;
            }
            if n_params == 0 {
                p.error("expected a lambda parameter");
            }
            if p.expect(ARROW) {
                expr(p);
            }
            LAMBDA_EXPR
        }
        LET_KW => {
            m.abandon(p);
            return Some(let_expr(p));
        }
        IF_KW => {
            p.bump(IF_KW);
            expr(p);
            if p.expect(THEN_KW) {
                expr(p);
            }
            if p.expect(ELSE_KW) {
                expr(p);
            }
            IF_EXPR
        }
        LOOP_KW => {
            loop_expr(p);
            LOOP_EXPR
        }
        _ => {
            m.abandon(p);
            return application(p);
        }
    };
    Some(m.complete(p, kind))
}

/// `let pat [: type] = expr (let ... | in expr)`; a chain of `let`s nests. A name
/// followed by parameters is a local function (version 1.1):
/// `let name pat... [: type] = expr in expr`.
fn let_expr(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    p.bump(LET_KW);
    let is_function =
        p.at(IDENT) && p.nth_text(0) != "_" && patterns::PATTERN_START.contains(&p.nth(1));
    if is_function {
        name(p, &[]);
        while patterns::PATTERN_START.contains(&p.current()) {
            patterns::pattern(p);
        }
        if p.at(COLON) {
            let ret = p.start();
            p.bump(COLON);
            types::type_(p);
            ret.complete(p, RET_TYPE);
        }
    } else {
        patterns::pattern(p);
        if p.eat(COLON) {
            types::type_(p);
        }
    }
    if p.expect(EQ) {
        expr(p);
    }
    let kind = if is_function { LET_FN_EXPR } else { LET_EXPR };
    if p.at(LET_KW) {
        if enter(p) {
            let_expr(p);
            leave(p);
        }
    } else if p.expect(IN_KW) {
        expr(p);
    }
    m.complete(p, kind)
}

/// `loop pat = expr for name < expr do expr` or `loop pat = expr while expr do expr`
fn loop_expr(p: &mut Parser<'_>) {
    p.bump(LOOP_KW);
    patterns::pattern(p);
    if p.expect(EQ) {
        expr(p);
    }
    match p.current() {
        // `for x in xs` (version 1.1) takes a pattern; `for i < n` a name.
        FOR_KW if p.nth(1) != IDENT || p.nth(2) == IN_KW => {
            let m = p.start();
            p.bump(FOR_KW);
            patterns::pattern(p);
            if p.expect(IN_KW) {
                expr(p);
            }
            m.complete(p, FOR_IN_FORM);
        }
        FOR_KW => {
            let m = p.start();
            p.bump(FOR_KW);
            name(p, &[LT, DO_KW]);
            if p.expect(LT) {
                expr(p);
            }
            m.complete(p, FOR_FORM);
        }
        WHILE_KW => {
            let m = p.start();
            p.bump(WHILE_KW);
            expr(p);
            m.complete(p, WHILE_FORM);
        }
        _ => p.error("expected `for` or `while`"),
    }
    if p.expect(DO_KW) {
        expr(p);
    }
}

/// `f a b c`: one `CALL_EXPR` whose first child is the function.
fn application(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let callee = postfix(p)?;
    if !ATOM_START.contains(&p.current()) {
        return Some(callee);
    }
    let m = callee.precede(p);
    while ATOM_START.contains(&p.current()) {
        if postfix(p).is_none() {
            break;
        }
    }
    Some(m.complete(p, CALL_EXPR))
}

/// An atom followed by glued indexing `xs[i]` and projections `t.0`.
fn postfix(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let lhs = atom(p)?;
    let mut chain = Chain::default();
    let result = postfix_chain(p, lhs, &mut chain);
    chain.leave(p);
    result
}

fn postfix_chain(
    p: &mut Parser<'_>,
    mut lhs: CompletedMarker,
    chain: &mut Chain,
) -> Option<CompletedMarker> {
    loop {
        let continues = match p.current() {
            L_BRACK => p.nth_is_glued(0),
            DOT => p.nth(1) == INT_NUMBER || is_glued_field(p),
            _ => false,
        };
        if continues && !chain.enter(p) {
            return None;
        }
        match p.current() {
            L_BRACK if p.nth_is_glued(0) => {
                let m = lhs.precede(p);
                p.bump(L_BRACK);
                index(p);
                while p.eat(COMMA) {
                    index(p);
                }
                p.expect(R_BRACK);
                lhs = m.complete(p, INDEX_EXPR);
            }
            DOT if p.nth(1) == INT_NUMBER => {
                let m = lhs.precede(p);
                p.bump(DOT);
                p.bump(INT_NUMBER);
                lhs = m.complete(p, PROJ_EXPR);
            }
            DOT if is_glued_field(p) => {
                let m = lhs.precede(p);
                p.bump(DOT);
                name_ref(p);
                lhs = m.complete(p, FIELD_EXPR);
            }
            _ => return Some(lhs),
        }
    }
}

/// `.x` glued on both sides: a record field (version 1.1), as in `(f r).x` or `r.x.y`.
fn is_glued_field(p: &Parser<'_>) -> bool {
    p.nth(1) == IDENT && p.nth_is_glued(0) && p.nth_is_glued(1)
}

/// `i` or `[start] : [end] [: stride]` inside `[...]`.
fn index(p: &mut Parser<'_>) {
    let m = p.start();
    if !p.at(COLON) {
        expr(p);
    }
    if !p.at(COLON) {
        m.complete(p, INDEX);
        return;
    }
    p.bump(COLON);
    if !matches!(p.current(), COLON | COMMA | R_BRACK) {
        expr(p);
    }
    if p.eat(COLON) && !matches!(p.current(), COMMA | R_BRACK) {
        expr(p);
    }
    m.complete(p, SLICE);
}

fn atom(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    // Characters the lexer rejected (and reported) are skipped like trivia.
    while p.at(ERROR_TOKEN) {
        let m = p.start();
        p.bump_any();
        m.complete(p, ERROR);
    }
    let m = p.start();
    let kind = match p.current() {
        INT_NUMBER | FLOAT_NUMBER | TRUE_KW | FALSE_KW => {
            p.bump_any();
            LITERAL
        }
        IDENT => {
            path_expr(p);
            PATH_EXPR
        }
        L_PAREN => paren_expr(p),
        L_BRACE => {
            // `{x = e, y}` (version 1.1); `y` alone is `y = y`.
            p.bump(L_BRACE);
            while p.at(IDENT) {
                let field = p.start();
                name_ref(p);
                if p.eat(EQ) {
                    expr(p);
                }
                field.complete(p, RECORD_EXPR_FIELD);
                if !p.eat(COMMA) {
                    break;
                }
            }
            p.expect(R_BRACE);
            RECORD_EXPR
        }
        L_BRACK => {
            p.bump(L_BRACK);
            while !p.at(R_BRACK) && !at_declaration_end(p) {
                expr(p);
                if !p.eat(COMMA) {
                    break;
                }
            }
            p.expect(R_BRACK);
            ARRAY_EXPR
        }
        _ => {
            m.abandon(p);
            p.err_recover("expected an expression", EXPR_RECOVERY);
            return None;
        }
    };
    Some(m.complete(p, kind))
}

/// `x`, `f32.sqrt` (a name in a type's namespace), `map@group` (a strategy annotation).
fn path_expr(p: &mut Parser<'_>) {
    name_ref(p);
    if p.at(DOT) && p.nth(1) == IDENT && p.nth_is_glued(0) && p.nth_is_glued(1) {
        p.bump(DOT);
        name_ref(p);
    }
    if p.at(AT) && p.nth_is_glued(0) {
        let m = p.start();
        p.bump(AT);
        if p.at(IDENT) && p.nth_is_glued(0) {
            name_ref(p);
        } else {
            p.error("expected a level (`grid`, `group`, `thread` or `seq`)");
        }
        m.complete(p, STRATEGY);
    }
}

/// Parenthesised forms: `(e)`, `(e, ...)`, `(e : t)`, and operator sections `(+)`,
/// `(* 2)`, `(2 -)`. `(- e)` is negation: there is no right section of `-`.
fn paren_expr(p: &mut Parser<'_>) -> SyntaxKind {
    p.bump(L_PAREN);
    // `(.x)` (version 1.1): the function taking a record's field `x`.
    if p.at(DOT) && p.nth(1) == IDENT && p.nth(2) == R_PAREN {
        p.bump(DOT);
        name_ref(p);
        p.bump(R_PAREN);
        return FIELD_SECTION;
    }
    let op = p.current();
    if op.infix_binding_power().is_some() {
        if p.nth(1) == R_PAREN {
            p.bump_any();
            p.bump(R_PAREN);
            return OP_SECTION;
        }
        if op != MINUS {
            p.bump_any();
            expr(p);
            p.expect(R_PAREN);
            return RIGHT_SECTION;
        }
    }
    expr(p);
    if p.current().infix_binding_power().is_some() && p.nth(1) == R_PAREN {
        p.bump_any();
        p.bump(R_PAREN);
        return LEFT_SECTION;
    }
    let kind = match p.current() {
        COLON => {
            p.bump(COLON);
            types::type_(p);
            ASCRIBE_EXPR
        }
        COMMA => {
            while p.eat(COMMA) {
                if p.at(R_PAREN) {
                    break;
                }
                expr(p);
            }
            TUPLE_EXPR
        }
        _ => PAREN_EXPR,
    };
    p.expect(R_PAREN);
    kind
}
