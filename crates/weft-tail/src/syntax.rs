//! Lexer and error-tolerant parser for the APL subset.
//!
//! APL's grammar depends on whether a name denotes an array, a function or an
//! operator, so the parser tracks the class of every assigned name (`f ← {…}` makes
//! `f` a function, a dfn mentioning `⍵⍵` a dyadic operator). A statement with an
//! error is reported and skipped; parsing resumes at the next `⋄` or line.

use rustc_hash::FxHashMap as HashMap;

/// A byte range in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

/// A problem in the source, with its range.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    Float(f64),
    /// `⍬`, the empty numeric vector.
    Zilde,
    Name(String),
    Alpha,
    Omega,
    AlphaAlpha,
    OmegaOmega,
    /// A primitive function glyph.
    Prim(char),
    /// A monadic operator glyph (`/ \ ⌿ ⍀ ¨ ⍨`); `/ \ ⌿ ⍀` are functions after an array.
    Op1(char),
    /// A dyadic operator glyph (`. ∘ ⍣`).
    Op2(char),
    LParen,
    RParen,
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    Semi,
    Colon,
    Assign,
    Quad,
    /// `⋄` or a line break.
    Sep,
    /// A `⍝:` comment: a type annotation (its text after `⍝:`).
    Annot(String),
}

const PRIMS: &str = "+-×÷⌈⌊|*⍟○!<≤=≥>≠∧∨⍲⍱~⍴⍳,⍪⌽⊖⍉↑↓⊃≢⊣⊢∊";
const OP1: &str = "/\\⌿⍀¨⍨";
const OP2: &str = ".∘⍣";

fn lex(text: &str, diags: &mut Vec<Diagnostic>) -> Vec<(Tok, Span)> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    let at = |k: usize| chars.get(k).map(|&(_, c)| c);
    let pos = |k: usize| chars.get(k).map_or(text.len(), |&(p, _)| p) as u32;
    while i < chars.len() {
        let c = chars[i].1;
        let start = i;
        let span = |end: usize| Span { start: pos(start), end: pos(end) };
        if c == '⍝' {
            let annotation = at(i + 1) == Some(':');
            while i < chars.len() && chars[i].1 != '\n' {
                i += 1;
            }
            if annotation {
                let text: String = chars[start + 2..i].iter().map(|&(_, c)| c).collect();
                out.push((Tok::Annot(text), span(i)));
            }
            continue;
        }
        if c == '\n' || c == '⋄' {
            out.push((Tok::Sep, span(i + 1)));
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let is_num_start = c.is_ascii_digit()
            || (c == '¯' && at(i + 1).is_some_and(|d| d.is_ascii_digit() || d == '.'))
            || (c == '.' && at(i + 1).is_some_and(|d| d.is_ascii_digit()));
        if is_num_start {
            let mut s = String::new();
            if c == '¯' {
                s.push('-');
                i += 1;
            }
            let mut float = false;
            while let Some(d) = at(i) {
                if d.is_ascii_digit() {
                    s.push(d);
                } else if d == '.' && !float && at(i + 1).is_some_and(|e| e.is_ascii_digit()) {
                    float = true;
                    s.push(d);
                } else if (d == 'e' || d == 'E')
                    && at(i + 1).is_some_and(|e| e.is_ascii_digit() || e == '¯')
                {
                    float = true;
                    s.push('e');
                    if at(i + 1) == Some('¯') {
                        s.push('-');
                        i += 1;
                    }
                } else {
                    break;
                }
                i += 1;
            }
            let tok = if float {
                s.parse::<f64>().map(Tok::Float).ok()
            } else {
                s.parse::<i64>().map(Tok::Int).ok()
            };
            match tok {
                Some(t) => out.push((t, span(i))),
                None => diags.push(Diagnostic {
                    span: span(i),
                    message: format!("the number `{s}` is out of range"),
                }),
            }
            continue;
        }
        if c.is_alphabetic() || c == '_' || c == '∆' || c == '⍙' {
            let mut s = String::new();
            while let Some(d) = at(i) {
                if d.is_alphanumeric() || d == '_' || d == '∆' || d == '⍙' || d == '¯' {
                    s.push(d);
                    i += 1;
                } else {
                    break;
                }
            }
            out.push((Tok::Name(s), span(i)));
            continue;
        }
        let tok = match c {
            '⍺' if at(i + 1) == Some('⍺') => {
                i += 1;
                Some(Tok::AlphaAlpha)
            }
            '⍵' if at(i + 1) == Some('⍵') => {
                i += 1;
                Some(Tok::OmegaOmega)
            }
            '⍬' => Some(Tok::Zilde),
            '⍺' => Some(Tok::Alpha),
            '⍵' => Some(Tok::Omega),
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            '[' => Some(Tok::LBrack),
            ']' => Some(Tok::RBrack),
            '{' => Some(Tok::LBrace),
            '}' => Some(Tok::RBrace),
            ';' => Some(Tok::Semi),
            ':' => Some(Tok::Colon),
            '←' => Some(Tok::Assign),
            '⎕' => Some(Tok::Quad),
            '-' | '−' => Some(Tok::Prim('-')),
            '∣' => Some(Tok::Prim('|')),
            '⋆' => Some(Tok::Prim('*')),
            _ if PRIMS.contains(c) => Some(Tok::Prim(c)),
            _ if OP1.contains(c) => Some(Tok::Op1(c)),
            _ if OP2.contains(c) => Some(Tok::Op2(c)),
            _ => None,
        };
        i += 1;
        match tok {
            Some(t) => out.push((t, span(i))),
            None => diags.push(Diagnostic {
                span: span(i),
                message: format!("`{c}` is not in the supported APL subset (see docs/apl.md)"),
            }),
        }
    }
    out
}

/// An array expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Int(i64, Span),
    Float(f64, Span),
    Zilde(Span),
    Name(String, Span),
    Alpha(Span),
    Omega(Span),
    /// Juxtaposed arrays: `1 2 3`, `a b`.
    Strand(Vec<Expr>, Span),
    Monadic(Box<Fun>, Box<Expr>, Span),
    Dyadic(Box<Expr>, Box<Fun>, Box<Expr>, Span),
    /// `A[i;j]`; an elided index is `None`.
    Index(Box<Expr>, Vec<Option<Expr>>, Span),
    Assign(String, Box<Expr>, Span),
    /// `A[i;j] ← v`.
    IndexAssign(String, Vec<Option<Expr>>, Box<Expr>, Span),
    /// `⎕ ← e`.
    Print(Box<Expr>, Span),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Int(_, s)
            | Expr::Float(_, s)
            | Expr::Zilde(s)
            | Expr::Name(_, s)
            | Expr::Alpha(s)
            | Expr::Omega(s)
            | Expr::Strand(_, s)
            | Expr::Monadic(_, _, s)
            | Expr::Dyadic(_, _, _, s)
            | Expr::Index(_, _, s)
            | Expr::Assign(_, _, s)
            | Expr::IndexAssign(_, _, _, s)
            | Expr::Print(_, s) => *s,
        }
    }
}

/// A function expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Fun {
    Prim(char, Span),
    Name(String, Span),
    AlphaAlpha(Span),
    OmegaOmega(Span),
    Dfn(Vec<Stmt>, Span),
    /// A monadic operator applied to its operand: `+/`, `f¨`, `-⍨`.
    Derived1(char, Box<Operand>, Span),
    /// A dyadic operator: `+.×`, `f⍣n`, `2∘×`.
    Derived2(char, Box<Operand>, Box<Operand>, Span),
    /// `∘.f`.
    Outer(Box<Fun>, Span),
    /// A user operator (a dfn with `⍺⍺`) applied to operands.
    UserOp(String, Vec<Operand>, Span),
    /// `(f g)` and `(f g h)`; a longer train is nested forks.
    Atop(Box<Fun>, Box<Fun>, Span),
    Fork(Box<Operand>, Box<Fun>, Box<Fun>, Span),
}

impl Fun {
    pub fn span(&self) -> Span {
        match self {
            Fun::Prim(_, s)
            | Fun::Name(_, s)
            | Fun::AlphaAlpha(s)
            | Fun::OmegaOmega(s)
            | Fun::Dfn(_, s)
            | Fun::Derived1(_, _, s)
            | Fun::Derived2(_, _, _, s)
            | Fun::Outer(_, s)
            | Fun::UserOp(_, _, s)
            | Fun::Atop(_, _, s)
            | Fun::Fork(_, _, _, s) => *s,
        }
    }
}

/// An operand of an operator: a function or an array.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Fun(Fun),
    Val(Expr),
}

/// A statement of a program or a dfn.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    Expr(Expr),
    /// `name ← function`.
    FunDef(String, Fun, Span),
    /// `name ← {… ⍺⍺ …}`: a user operator; `true` when it is dyadic (uses `⍵⍵`).
    OpDef(String, Vec<Stmt>, bool, Span),
    /// `cond : result` in a dfn.
    Guard(Expr, Expr, Span),
    /// `⍝: τ → τ'` in a dfn: its type annotation.
    Annot(crate::annot::Signature, Span),
}

/// A parsed file: its statements and its syntax errors.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedFile {
    pub stmts: Vec<Stmt>,
    pub diagnostics: Vec<Diagnostic>,
    /// Names assigned by statements with syntax errors: their uses are not reported
    /// again.
    pub poisoned: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Fun,
    Op1,
    Op2,
}

/// Parses a whole `.apl` file.
pub fn parse(text: &str) -> ParsedFile {
    let mut diagnostics = Vec::new();
    let toks = lex(text, &mut diagnostics);
    let mut p = Parser {
        toks,
        pos: 0,
        diags: diagnostics,
        scopes: vec![HashMap::default()],
        poisoned: Vec::new(),
    };
    let stmts = p.stmts(false);
    ParsedFile { stmts, diagnostics: p.diags, poisoned: p.poisoned }
}

struct Parser {
    toks: Vec<(Tok, Span)>,
    pos: usize,
    diags: Vec<Diagnostic>,
    scopes: Vec<HashMap<String, Class>>,
    poisoned: Vec<String>,
}

/// One unit of a statement before infix resolution.
#[derive(Debug, Clone)]
enum Unit {
    V(Expr),
    F(Fun),
    Op1(char, Span),
    Op2(char, Span),
    UserOp(String, bool, Span),
    Assign(String, Span),
    Print(Span),
}

type PResult<T> = Result<T, Diagnostic>;

fn err<T>(span: Span, message: impl Into<String>) -> PResult<T> {
    Err(Diagnostic { span, message: message.into() })
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(t, _)| t)
    }

    fn span(&self) -> Span {
        self.toks.get(self.pos).map_or_else(
            || {
                self.toks
                    .last()
                    .map_or(Span::default(), |&(_, s)| Span { start: s.end, end: s.end })
            },
            |&(_, s)| s,
        )
    }

    fn class(&self, name: &str) -> Option<Class> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// Statements up to the end (or the closing `}` of a dfn when `in_dfn`).
    fn stmts(&mut self, in_dfn: bool) -> Vec<Stmt> {
        let mut stmts = Vec::new();
        loop {
            let start_of_stmt = self.pos;
            match self.peek() {
                None => {
                    if in_dfn {
                        self.diags.push(Diagnostic {
                            span: self.span(),
                            message: "this `{` has no matching `}`".to_owned(),
                        });
                    }
                    return stmts;
                }
                Some(Tok::Sep) => {
                    self.pos += 1;
                }
                Some(Tok::Annot(text)) => {
                    let (text, span) = (text.clone(), self.span());
                    self.pos += 1;
                    // Outside a dfn an annotation has nothing to annotate.
                    if in_dfn {
                        match crate::annot::parse_signature(&text) {
                            Ok(sig) => stmts.push(Stmt::Annot(sig, span)),
                            Err(message) => self.diags.push(Diagnostic { span, message }),
                        }
                    }
                }
                Some(Tok::RBrace) if in_dfn => return stmts,
                Some(_) => match self.stmt(in_dfn) {
                    Ok(s) => stmts.push(s),
                    Err(d) => {
                        if let Some(name) = self.assigned_name_at(start_of_stmt) {
                            self.poisoned.push(name);
                        }
                        self.diags.push(d);
                        self.recover(in_dfn);
                    }
                },
            }
        }
    }

    /// The name assigned by the statement starting at token `at` (`name ← …`).
    fn assigned_name_at(&self, at: usize) -> Option<String> {
        match (self.toks.get(at), self.toks.get(at + 1)) {
            (Some((Tok::Name(n), _)), Some((Tok::Assign, _))) => Some(n.clone()),
            _ => None,
        }
    }

    /// Skips to the next statement separator (or the end of the dfn).
    fn recover(&mut self, in_dfn: bool) {
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            match t {
                Tok::Sep if depth == 0 => return,
                Tok::LBrace => depth += 1,
                Tok::RBrace if depth == 0 && in_dfn => return,
                Tok::RBrace => depth -= 1,
                _ => {}
            }
            self.pos += 1;
        }
    }

    fn at_stmt_end(&self) -> bool {
        matches!(self.peek(), None | Some(Tok::Sep | Tok::RBrace | Tok::Annot(_)))
    }

    fn stmt(&mut self, in_dfn: bool) -> PResult<Stmt> {
        let start = self.span();
        // `name ← …` that defines a function or an operator.
        if let (Some(Tok::Name(name)), Some((Tok::Assign, _))) =
            (self.peek().cloned(), self.toks.get(self.pos + 1).cloned())
            && matches!(self.toks.get(self.pos + 2), Some((Tok::LBrace, _)))
        {
            let dfn_start = self.pos + 2;
            if let Some(dyadic) = self.dfn_operator_kind(dfn_start) {
                self.pos = dfn_start + 1;
                self.scopes.push(HashMap::default());
                let body = self.stmts(true);
                self.scopes.pop();
                let end = self.span();
                self.expect_rbrace()?;
                let class = if dyadic { Class::Op2 } else { Class::Op1 };
                self.scopes.last_mut().map(|s| s.insert(name.clone(), class));
                return Ok(Stmt::OpDef(name, body, dyadic, start.to(end)));
            }
        }
        let mut units = self.units(in_dfn)?;
        if in_dfn && matches!(self.peek(), Some(Tok::Colon)) {
            let colon = self.span();
            self.pos += 1;
            let cond = self.resolve_expr(std::mem::take(&mut units), colon)?;
            let units = self.units(in_dfn)?;
            let result = self.resolve_expr(units, self.span())?;
            let span = cond.span().to(result.span());
            return Ok(Stmt::Guard(cond, result, span));
        }
        if !self.at_stmt_end() {
            return err(self.span(), "unexpected symbol");
        }
        // `name ← function`.
        if let [Unit::Assign(name, aspan), rest @ ..] = units.as_slice()
            && !rest.is_empty()
        {
            let (name, aspan) = (name.clone(), *aspan);
            let rest = rest.to_vec();
            match self.resolve(rest)? {
                Unit::F(f) => {
                    self.scopes.last_mut().map(|s| s.insert(name.clone(), Class::Fun));
                    let span = aspan.to(f.span());
                    return Ok(Stmt::FunDef(name, f, span));
                }
                Unit::V(e) => {
                    self.scopes.last_mut().map(|s| s.remove(&name));
                    let span = aspan.to(e.span());
                    return Ok(Stmt::Expr(Expr::Assign(name, Box::new(e), span)));
                }
                _ => return err(aspan, "the right of `←` is not an array or a function"),
            }
        }
        let e = self.resolve_expr(units, start)?;
        Ok(Stmt::Expr(e))
    }

    /// Whether the dfn starting at token `at` is an operator (mentions `⍺⍺` or `⍵⍵`
    /// outside nested dfns): `Some(true)` for a dyadic one.
    fn dfn_operator_kind(&self, at: usize) -> Option<bool> {
        let mut depth = 0;
        let (mut aa, mut ww) = (false, false);
        for (t, _) in &self.toks[at..] {
            match t {
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Tok::AlphaAlpha if depth == 1 => aa = true,
                Tok::OmegaOmega if depth == 1 => ww = true,
                _ => {}
            }
        }
        (aa || ww).then_some(ww)
    }

    fn expect_rbrace(&mut self) -> PResult<()> {
        if matches!(self.peek(), Some(Tok::RBrace)) {
            self.pos += 1;
            Ok(())
        } else {
            err(self.span(), "expected `}`")
        }
    }

    /// The units of a statement or a parenthesised group, up to `)`, `]`, `;`, `:`,
    /// a separator or `}`.
    fn units(&mut self, in_dfn: bool) -> PResult<Vec<Unit>> {
        let mut units: Vec<Unit> = Vec::new();
        loop {
            let span = self.span();
            let Some(tok) = self.peek().cloned() else { break };
            let unit = match tok {
                Tok::Sep
                | Tok::RParen
                | Tok::RBrack
                | Tok::RBrace
                | Tok::Semi
                | Tok::Colon
                | Tok::Annot(_) => {
                    break;
                }
                Tok::Int(n) => {
                    self.pos += 1;
                    Unit::V(Expr::Int(n, span))
                }
                Tok::Float(x) => {
                    self.pos += 1;
                    Unit::V(Expr::Float(x, span))
                }
                Tok::Zilde => {
                    self.pos += 1;
                    Unit::V(Expr::Zilde(span))
                }
                Tok::Alpha | Tok::Omega if !in_dfn => {
                    return err(span, "`⍺` and `⍵` are only defined inside a dfn `{…}`");
                }
                Tok::Alpha => {
                    self.pos += 1;
                    Unit::V(Expr::Alpha(span))
                }
                Tok::Omega => {
                    self.pos += 1;
                    Unit::V(Expr::Omega(span))
                }
                Tok::AlphaAlpha => {
                    self.pos += 1;
                    Unit::F(Fun::AlphaAlpha(span))
                }
                Tok::OmegaOmega => {
                    self.pos += 1;
                    Unit::F(Fun::OmegaOmega(span))
                }
                Tok::Quad => {
                    self.pos += 1;
                    if !matches!(self.peek(), Some(Tok::Assign)) {
                        return err(span, "only `⎕ ←` (output) is supported of `⎕`");
                    }
                    self.pos += 1;
                    Unit::Print(span)
                }
                Tok::Name(name) => {
                    self.pos += 1;
                    if matches!(self.peek(), Some(Tok::Assign)) {
                        self.pos += 1;
                        Unit::Assign(name, span)
                    } else if matches!(self.peek(), Some(Tok::LBrack))
                        && self.class(&name).is_none()
                        && self.index_assign_follows()
                    {
                        let idx = self.index_list()?;
                        self.pos += 1; // `←`
                        let rest = self.units(in_dfn)?;
                        let value = self.resolve_expr(rest, span)?;
                        let s = span.to(value.span());
                        return Ok(vec![Unit::V(Expr::IndexAssign(name, idx, Box::new(value), s))]);
                    } else {
                        match self.class(&name) {
                            Some(Class::Fun) => Unit::F(Fun::Name(name, span)),
                            Some(Class::Op1) => Unit::UserOp(name, false, span),
                            Some(Class::Op2) => Unit::UserOp(name, true, span),
                            None => Unit::V(Expr::Name(name, span)),
                        }
                    }
                }
                Tok::Prim(c) => {
                    self.pos += 1;
                    Unit::F(Fun::Prim(c, span))
                }
                Tok::Op1(c) => {
                    self.pos += 1;
                    // `/` after an array (or first) is the replicate function.
                    let after_fun = matches!(units.last(), Some(Unit::F(_)));
                    if "/\\⌿⍀".contains(c) && !after_fun {
                        Unit::F(Fun::Prim(c, span))
                    } else {
                        Unit::Op1(c, span)
                    }
                }
                Tok::Op2(c) => {
                    self.pos += 1;
                    if c == '∘' && matches!(self.peek(), Some(Tok::Op2('.'))) {
                        self.pos += 1;
                        let f = self.operand_fun()?;
                        let s = span.to(f.span());
                        Unit::F(Fun::Outer(Box::new(f), s))
                    } else {
                        Unit::Op2(c, span)
                    }
                }
                Tok::LParen => {
                    self.pos += 1;
                    let inner = self.units(in_dfn)?;
                    if !matches!(self.peek(), Some(Tok::RParen)) {
                        return err(self.span(), "expected `)`");
                    }
                    self.pos += 1;
                    if inner.is_empty() {
                        return err(span, "empty parentheses");
                    }
                    let unit = self.resolve(inner)?;
                    match unit {
                        // A parenthesised strand spans its parentheses, which closes it:
                        // `(1 2) 3` is a strand of two items (a nested array), not
                        // `1 2 3`.
                        Unit::V(Expr::Strand(items, s)) => {
                            let close = self.toks[self.pos - 1].1;
                            Unit::V(Expr::Strand(items, span.to(s).to(close)))
                        }
                        other => other,
                    }
                }
                Tok::LBrace => {
                    self.pos += 1;
                    self.scopes.push(HashMap::default());
                    let body = self.stmts(true);
                    self.scopes.pop();
                    let end = self.span();
                    self.expect_rbrace()?;
                    Unit::F(Fun::Dfn(body, span.to(end)))
                }
                Tok::LBrack => {
                    let Some(Unit::V(target)) = units.pop() else {
                        return err(span, "`[` must follow an array to index it");
                    };
                    let idx = self.index_list()?;
                    let s = target.span().to(self.toks[self.pos - 1].1);
                    Unit::V(Expr::Index(Box::new(target), idx, s))
                }
                Tok::Assign => return err(span, "`←` must follow a name"),
            };
            // Strands: adjacent arrays form one vector.
            match (units.last_mut(), unit) {
                (Some(Unit::V(prev)), Unit::V(next)) if !matches!(next, Expr::Index(..)) => {
                    let s = prev.span().to(next.span());
                    let prev_owned = std::mem::replace(prev, Expr::Int(0, s));
                    *prev = match prev_owned {
                        Expr::Strand(mut items, old) if is_strand_open(&items, old) => {
                            items.push(next);
                            Expr::Strand(items, s)
                        }
                        p => Expr::Strand(vec![p, next], s),
                    };
                }
                (_, unit) => units.push(unit),
            }
        }
        Ok(units)
    }

    /// After `name`, whether `[…] ←` follows.
    fn index_assign_follows(&self) -> bool {
        let mut depth = 0;
        for (k, (t, _)) in self.toks[self.pos..].iter().enumerate() {
            match t {
                Tok::LBrack => depth += 1,
                Tok::RBrack => {
                    depth -= 1;
                    if depth == 0 {
                        return matches!(self.toks.get(self.pos + k + 1), Some((Tok::Assign, _)));
                    }
                }
                Tok::Sep => return false,
                _ => {}
            }
        }
        false
    }

    /// `[i;j;…]`, the current token being `[`.
    fn index_list(&mut self) -> PResult<Vec<Option<Expr>>> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            let units = self.units(inside_dfn(&self.scopes))?;
            if units.is_empty() {
                items.push(None);
            } else {
                items.push(Some(self.resolve_expr(units, self.span())?));
            }
            match self.peek() {
                Some(Tok::Semi) => self.pos += 1,
                Some(Tok::RBrack) => {
                    self.pos += 1;
                    return Ok(items);
                }
                _ => return err(self.span(), "expected `;` or `]` in an index"),
            }
        }
    }

    /// The function right after `∘.`.
    fn operand_fun(&mut self) -> PResult<Fun> {
        let span = self.span();
        match self.peek().cloned() {
            Some(Tok::Prim(c)) => {
                self.pos += 1;
                Ok(Fun::Prim(c, span))
            }
            Some(Tok::Name(n)) if self.class(&n) == Some(Class::Fun) => {
                self.pos += 1;
                Ok(Fun::Name(n, span))
            }
            Some(Tok::LBrace) => {
                self.pos += 1;
                self.scopes.push(HashMap::default());
                let body = self.stmts(true);
                self.scopes.pop();
                let end = self.span();
                self.expect_rbrace()?;
                Ok(Fun::Dfn(body, span.to(end)))
            }
            Some(Tok::LParen) => {
                self.pos += 1;
                let inner = self.units(inside_dfn(&self.scopes))?;
                if !matches!(self.peek(), Some(Tok::RParen)) {
                    return err(self.span(), "expected `)`");
                }
                self.pos += 1;
                match self.resolve(inner)? {
                    Unit::F(f) => Ok(f),
                    _ => err(span, "`∘.` needs a function"),
                }
            }
            _ => err(span, "`∘.` needs a function on its right"),
        }
    }

    fn resolve_expr(&mut self, units: Vec<Unit>, at: Span) -> PResult<Expr> {
        if units.is_empty() {
            return err(at, "expected an expression");
        }
        match self.resolve(units)? {
            Unit::V(e) => Ok(e),
            Unit::F(f) => err(f.span(), "a function where an array is expected"),
            _ => err(at, "expected an expression"),
        }
    }

    /// Binds operators, then resolves the infix structure right to left.
    fn resolve(&mut self, units: Vec<Unit>) -> PResult<Unit> {
        // Operators bind to their left operand, the longest function on their left.
        let mut items: Vec<Unit> = Vec::new();
        let mut it = units.into_iter().peekable();
        while let Some(u) = it.next() {
            match u {
                Unit::Op1(c, span) => match items.pop() {
                    Some(Unit::F(f)) => {
                        let s = f.span().to(span);
                        items.push(Unit::F(Fun::Derived1(c, Box::new(Operand::Fun(f)), s)));
                    }
                    _ => {
                        return err(
                            span,
                            format!("the operator `{c}` needs a function on its left"),
                        );
                    }
                },
                Unit::Op2(c, span) => {
                    let left = match items.pop() {
                        Some(Unit::F(f)) => Operand::Fun(f),
                        Some(Unit::V(v)) => Operand::Val(v),
                        _ => return err(span, format!("the operator `{c}` needs a left operand")),
                    };
                    let right = match it.next() {
                        Some(Unit::F(f)) => Operand::Fun(f),
                        Some(Unit::V(Expr::Strand(mut strand, s))) => {
                            // `f⍣2 3`: the operand is the first item only; the rest is
                            // the argument.
                            let first = strand.remove(0);
                            let rest = if strand.len() == 1 {
                                strand.remove(0)
                            } else {
                                Expr::Strand(strand, s)
                            };
                            let dspan = operand_span(&left).to(first.span());
                            let d = Fun::Derived2(
                                c,
                                Box::new(left),
                                Box::new(Operand::Val(first)),
                                dspan,
                            );
                            let mut units = std::mem::take(&mut items);
                            units.push(Unit::F(d));
                            units.push(Unit::V(rest));
                            units.extend(it);
                            return self.resolve(units);
                        }
                        Some(Unit::V(v)) => Operand::Val(v),
                        _ => return err(span, format!("the operator `{c}` needs a right operand")),
                    };
                    let s = operand_span(&left).to(operand_span(&right));
                    items.push(Unit::F(Fun::Derived2(c, Box::new(left), Box::new(right), s)));
                }
                Unit::UserOp(name, dyadic, span) => {
                    let left = match items.pop() {
                        Some(Unit::F(f)) => Operand::Fun(f),
                        Some(Unit::V(v)) => Operand::Val(v),
                        _ => {
                            return err(
                                span,
                                format!("the operator `{name}` needs a left operand"),
                            );
                        }
                    };
                    let mut operands = vec![left];
                    if dyadic {
                        match it.next() {
                            Some(Unit::F(f)) => operands.push(Operand::Fun(f)),
                            Some(Unit::V(v)) => operands.push(Operand::Val(v)),
                            _ => {
                                return err(
                                    span,
                                    format!("the operator `{name}` needs a right operand"),
                                );
                            }
                        }
                    }
                    let s = operand_span(&operands[0]).to(span);
                    items.push(Unit::F(Fun::UserOp(name, operands, s)));
                }
                other => items.push(other),
            }
        }
        self.infix(items)
    }

    /// Right-to-left resolution of arrays, functions and assignments.
    fn infix(&mut self, items: Vec<Unit>) -> PResult<Unit> {
        let mut items = items;
        if let Some(Unit::F(_)) = items.last() {
            // A train: every item must be a function (an array may start a fork).
            return self.train(items);
        }
        let mut right = match items.pop() {
            Some(Unit::V(v)) => v,
            Some(other) => return err(unit_span(&other), "expected an array"),
            None => return err(Span::default(), "empty expression"),
        };
        while let Some(u) = items.pop() {
            match u {
                Unit::F(f) => {
                    if let Some(Unit::V(left)) = items.pop_if(|u| matches!(u, Unit::V(_))) {
                        let s = left.span().to(right.span());
                        right = Expr::Dyadic(Box::new(left), Box::new(f), Box::new(right), s);
                    } else {
                        let s = f.span().to(right.span());
                        right = Expr::Monadic(Box::new(f), Box::new(right), s);
                    }
                }
                Unit::Assign(name, span) => {
                    let s = span.to(right.span());
                    self.scopes.last_mut().map(|sc| sc.remove(&name));
                    right = Expr::Assign(name, Box::new(right), s);
                }
                Unit::Print(span) => {
                    let s = span.to(right.span());
                    right = Expr::Print(Box::new(right), s);
                }
                Unit::V(v) => {
                    return err(v.span(), "two arrays side by side here are not a strand");
                }
                Unit::Op1(c, s) | Unit::Op2(c, s) => {
                    return err(s, format!("the operator `{c}` has no operand"));
                }
                Unit::UserOp(n, _, s) => {
                    return err(s, format!("the operator `{n}` has no operand"));
                }
            }
        }
        Ok(Unit::V(right))
    }

    fn train(&mut self, mut items: Vec<Unit>) -> PResult<Unit> {
        let Some(Unit::F(mut right)) = items.pop() else { return err(Span::default(), "empty") };
        loop {
            match items.pop() {
                None => return Ok(Unit::F(right)),
                Some(Unit::F(g)) => match items.pop() {
                    None => {
                        let s = g.span().to(right.span());
                        return Ok(Unit::F(Fun::Atop(Box::new(g), Box::new(right), s)));
                    }
                    Some(Unit::F(f)) => {
                        let s = f.span().to(right.span());
                        right =
                            Fun::Fork(Box::new(Operand::Fun(f)), Box::new(g), Box::new(right), s);
                    }
                    Some(Unit::V(v)) => {
                        let s = v.span().to(right.span());
                        right =
                            Fun::Fork(Box::new(Operand::Val(v)), Box::new(g), Box::new(right), s);
                    }
                    Some(other) => return err(unit_span(&other), "unexpected item in a train"),
                },
                Some(other) => return err(unit_span(&other), "unexpected item in a train"),
            }
        }
    }
}

/// Whether the parser is inside a dfn (more scopes than the file's), where `⍺`/`⍵`
/// may occur in indices and operands too.
fn inside_dfn(scopes: &[HashMap<String, Class>]) -> bool {
    scopes.len() > 1
}

/// A strand built by juxtaposition ends where its last item ends; a parenthesised one
/// ends at its `)` and takes no more items.
fn is_strand_open(items: &[Expr], span: Span) -> bool {
    items.last().is_some_and(|last| last.span().end == span.end)
}

fn operand_span(o: &Operand) -> Span {
    match o {
        Operand::Fun(f) => f.span(),
        Operand::Val(v) => v.span(),
    }
}

fn unit_span(u: &Unit) -> Span {
    match u {
        Unit::V(e) => e.span(),
        Unit::F(f) => f.span(),
        Unit::Op1(_, s)
        | Unit::Op2(_, s)
        | Unit::UserOp(_, _, s)
        | Unit::Assign(_, s)
        | Unit::Print(s) => *s,
    }
}
