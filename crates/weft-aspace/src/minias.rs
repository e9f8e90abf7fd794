//! MiniAS: a front end for the C-like notation of the digest's examples (digest 2.1), used by
//! the tests and by anyone who wants to try the inference on a small program.
//!
//! Accepted: `kernel`/`__kernel` functions and helpers, with or without a body (a prototype
//! gives a helper without facts); parameters and locals `global int * x`, `int * p` (generic),
//! `generic int * p`, arrays `local int tile[16];`; statements `p = q;`, `*p = *q;`, `p[i] = e;`,
//! `if/else`, `while`, `return e;`, blocks, expression statements; expressions with calls,
//! `&x`, `&p[i]`, `p + i`, comparisons, `NULL`, `dynamic_cast<global int *>(p)`, and the test
//! hook `__bound(p, global, local);` (a [`Fact::Bound`]). Calls to names that are not functions
//! of the program (`get_global_id`) are builtins without pointer effects.
//!
//! The digest's star-placement typo (8.21) is tolerated: `global * int g` reads as
//! `global int * g`. Declarations inside conditions (E12's `if ((T x = e) != NULL)`) are not;
//! the E12 test transcribes them as declarations before the `if`.
//!
//! Every [`Site`] is a 1-based line number. Pointer facts are emitted in source order; the
//! inference is flow-insensitive, so `if` and `while` only matter for their sub-statements.

use std::collections::BTreeMap;

use crate::program::{Decl, Fact, Func, FuncId, FuncKind, Program, Ptr, PtrId, Reason, Site};
use crate::space::{Space, SpaceSet};

/// A syntax error at a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: u32,
    pub message: String,
}

/// Parses a MiniAS translation unit.
pub fn parse(src: &str) -> Result<Program, ParseError> {
    let tokens = lex(src)?;
    let headers = scan_headers(&tokens)?;
    let mut program = Program::default();
    let index: BTreeMap<String, usize> =
        headers.iter().enumerate().map(|(idx, header)| (header.name.clone(), idx)).collect();
    for header in &headers {
        let func = FuncParser::new(&tokens, header, &headers, &index).parse()?;
        program.funcs.push(func);
    }
    Ok(program)
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Num,
    Punct(&'static str),
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    line: u32,
}

const PUNCTS: [&str; 30] = [
    "==", "!=", "<=", ">=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=", "<<", ">>", "->", "(",
    ")", "{", "}", "[", "]", ";", ",", "=", "<", ">", "+", "-", "*", "/",
];
const PUNCTS1: [&str; 8] = ["%", "&", "|", "^", "!", "~", "?", ":"];

fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    let mut line = 1u32;
    while pos < bytes.len() {
        let byte = bytes[pos];
        if byte == b'\n' {
            line += 1;
            pos += 1;
        } else if byte.is_ascii_whitespace() {
            pos += 1;
        } else if src[pos..].starts_with("//") {
            while pos < bytes.len() && bytes[pos] != b'\n' {
                pos += 1;
            }
        } else if src[pos..].starts_with("/*") {
            pos += 2;
            while pos < bytes.len() && !src[pos..].starts_with("*/") {
                if bytes[pos] == b'\n' {
                    line += 1;
                }
                pos += 1;
            }
            pos = (pos + 2).min(bytes.len());
        } else if byte.is_ascii_alphabetic() || byte == b'_' {
            let start = pos;
            while pos < bytes.len() && (bytes[pos].is_ascii_alphanumeric() || bytes[pos] == b'_') {
                pos += 1;
            }
            out.push(Token { tok: Tok::Ident(src[start..pos].to_owned()), line });
        } else if byte.is_ascii_digit() {
            while pos < bytes.len() && (bytes[pos].is_ascii_alphanumeric() || bytes[pos] == b'.') {
                pos += 1;
            }
            out.push(Token { tok: Tok::Num, line });
        } else if let Some(punct) =
            PUNCTS.iter().chain(&PUNCTS1).find(|punct| src[pos..].starts_with(**punct))
        {
            pos += punct.len();
            out.push(Token { tok: Tok::Punct(punct), line });
        } else {
            let ch = src[pos..].chars().next().unwrap_or('?');
            return Err(ParseError { line, message: format!("unexpected character `{ch}`") });
        }
    }
    Ok(out)
}

fn space_keyword(word: &str) -> Option<Option<Space>> {
    match word {
        "global" | "__global" => Some(Some(Space::Global)),
        "local" | "__local" => Some(Some(Space::Local)),
        "private" | "__private" => Some(Some(Space::Private)),
        "constant" | "__constant" => Some(Some(Space::Constant)),
        "generic" | "__generic" | "const" | "volatile" | "restrict" | "unsigned" | "signed" => {
            Some(None)
        }
        _ => None,
    }
}

fn is_base_type(word: &str) -> bool {
    matches!(
        word,
        "int"
            | "void"
            | "float"
            | "char"
            | "bool"
            | "uint"
            | "long"
            | "short"
            | "double"
            | "half"
            | "size_t"
    )
}

#[derive(Clone, Copy, Debug)]
struct Ty {
    space: Option<Space>,
    is_ptr: bool,
}

#[derive(Clone, Debug)]
struct Param {
    name: String,
    ty: Ty,
}

#[derive(Clone, Debug)]
struct Header {
    name: String,
    kind: FuncKind,
    ret: Ty,
    params: Vec<Param>,
    /// Token index of the body's `{`, if the function has a body.
    body: Option<usize>,
    /// The line of the function's name (the site of its parameters).
    line: u32,
}

struct Cursor<'t> {
    tokens: &'t [Token],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos).map(|token| &token.tok)
    }

    fn peek_at(&self, ahead: usize) -> Option<&Tok> {
        self.tokens.get(self.pos + ahead).map(|token| &token.tok)
    }

    fn line(&self) -> u32 {
        self.tokens.get(self.pos).or(self.tokens.last()).map_or(1, |token| token.line)
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError { line: self.line(), message: message.into() })
    }

    fn eat(&mut self, punct: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(found)) if *found == punct) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, punct: &str) -> Result<(), ParseError> {
        if self.eat(punct) { Ok(()) } else { self.error(format!("expected `{punct}`")) }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Ident(found)) if found == word) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn ident(&mut self) -> Result<String, ParseError> {
        match self.peek() {
            Some(Tok::Ident(name)) => {
                let name = name.clone();
                self.pos += 1;
                Ok(name)
            }
            _ => self.error("expected a name"),
        }
    }

    fn at_type(&self) -> bool {
        matches!(self.peek(), Some(Tok::Ident(word)) if space_keyword(word).is_some() || is_base_type(word))
    }

    /// `quals* base *...`, also the typo form `quals * base` (digest 8.21).
    fn ty(&mut self) -> Result<Ty, ParseError> {
        let mut space = None;
        while let Some(Tok::Ident(word)) = self.peek() {
            match space_keyword(word) {
                Some(found) => {
                    space = space.or(found);
                    self.pos += 1;
                }
                None => break,
            }
        }
        let mut n_stars = 0;
        while self.eat("*") {
            n_stars += 1;
        }
        if !matches!(self.peek(), Some(Tok::Ident(word)) if is_base_type(word)) {
            return self.error("expected a type");
        }
        self.pos += 1;
        while self.eat("*") {
            n_stars += 1;
        }
        Ok(Ty { space, is_ptr: n_stars > 0 })
    }

    /// Skips a balanced `{ ... }` starting at the current `{`.
    fn skip_block(&mut self) -> Result<(), ParseError> {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => return self.error("unclosed `{`"),
                Some(Tok::Punct("{")) => depth += 1,
                Some(Tok::Punct("}")) => {
                    depth -= 1;
                    if depth == 0 {
                        self.pos += 1;
                        return Ok(());
                    }
                }
                Some(_) => {}
            }
            self.pos += 1;
        }
    }
}

fn scan_headers(tokens: &[Token]) -> Result<Vec<Header>, ParseError> {
    let mut cursor = Cursor { tokens, pos: 0 };
    let mut headers: Vec<Header> = Vec::new();
    while cursor.peek().is_some() {
        let kind = if cursor.eat_word("kernel") || cursor.eat_word("__kernel") {
            FuncKind::Kernel
        } else {
            FuncKind::Helper
        };
        let ret = cursor.ty()?;
        let line = cursor.line();
        let name = cursor.ident()?;
        cursor.expect("(")?;
        let mut params = Vec::new();
        if !(matches!(cursor.peek(), Some(Tok::Ident(word)) if word == "void")
            && matches!(cursor.peek_at(1), Some(Tok::Punct(")")))
            && cursor.eat_word("void"))
        {
            while !cursor.eat(")") {
                if !params.is_empty() {
                    cursor.expect(",")?;
                }
                let mut ty = cursor.ty()?;
                let name = match cursor.peek() {
                    Some(Tok::Ident(_)) => cursor.ident()?,
                    _ => format!("arg{}", params.len()),
                };
                if cursor.eat("[") {
                    cursor.expect("]")?;
                    ty.is_ptr = true;
                }
                params.push(Param { name, ty });
            }
        } else {
            cursor.expect(")")?;
        }
        let body = if cursor.eat(";") {
            None
        } else if matches!(cursor.peek(), Some(Tok::Punct("{"))) {
            let start = cursor.pos;
            cursor.skip_block()?;
            Some(start)
        } else {
            return cursor.error("expected `;` or a body");
        };
        let header = Header { name, kind, ret, params, body, line };
        match headers.iter_mut().find(|old| old.name == header.name) {
            // A definition replaces its prototype.
            Some(old) if old.body.is_none() => *old = header,
            Some(_) => return cursor.error(format!("`{}` is defined twice", header.name)),
            None => headers.push(header),
        }
    }
    Ok(headers)
}

/// What an expression evaluates to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val {
    Ptr(PtrId),
    Null,
    Other,
}

/// Where an expression can be assigned to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    None,
    /// A pointer variable.
    Var(PtrId),
    /// `*p` or `p[i]`: reading it loads through `p`, writing it stores through `p`.
    Deref(PtrId),
}

#[derive(Clone, Copy, Debug)]
struct Expr {
    val: Val,
    place: Place,
}

const MAX_DEPTH: u32 = 200;

struct FuncParser<'t> {
    cursor: Cursor<'t>,
    header: &'t Header,
    headers: &'t [Header],
    index: &'t BTreeMap<String, usize>,
    ptrs: Vec<Ptr>,
    facts: Vec<Fact>,
    /// Pointer variables in scope (one flat scope: a redeclaration shadows).
    vars: BTreeMap<String, PtrId>,
    /// Non-pointer variables with their space (for `&x`).
    scalars: BTreeMap<String, Space>,
    ret: Option<PtrId>,
    depth: u32,
}

impl<'t> FuncParser<'t> {
    fn new(
        tokens: &'t [Token],
        header: &'t Header,
        headers: &'t [Header],
        index: &'t BTreeMap<String, usize>,
    ) -> FuncParser<'t> {
        FuncParser {
            cursor: Cursor { tokens, pos: header.body.unwrap_or(tokens.len()) },
            header,
            headers,
            index,
            ptrs: Vec::new(),
            facts: Vec::new(),
            vars: BTreeMap::new(),
            scalars: BTreeMap::new(),
            ret: None,
            depth: 0,
        }
    }

    fn site(&self) -> Option<Site> {
        Some(Site(self.cursor.line()))
    }

    fn reason(&self, text: String) -> Reason {
        Reason { text, site: self.site() }
    }

    fn new_ptr(&mut self, name: String, decl: Decl, text: String) -> PtrId {
        let reason = self.reason(text);
        self.new_ptr_at(name, decl, reason)
    }

    fn new_ptr_at(&mut self, name: String, decl: Decl, reason: Reason) -> PtrId {
        let id = PtrId(self.ptrs.len() as u32);
        self.ptrs.push(Ptr { name, decl, reason });
        id
    }

    fn name(&self, ptr: PtrId) -> String {
        self.ptrs.get(ptr.0 as usize).map_or_else(|| "?".to_owned(), |ptr| ptr.name.clone())
    }

    fn decl_of(space: Option<Space>) -> Decl {
        space.map_or(Decl::Generic, Decl::In)
    }

    fn parse(mut self) -> Result<Func, ParseError> {
        let header = self.header;
        let func_name = &header.name;
        if let Some(body) = header.body {
            self.cursor.pos = body;
        }
        let mut params = Vec::new();
        for param in &header.params {
            if param.ty.is_ptr {
                let text = match (header.kind, param.ty.space) {
                    (FuncKind::Kernel, Some(space)) => {
                        format!("`{}` is a kernel parameter in {space} memory", param.name)
                    }
                    (FuncKind::Kernel, None) => format!("`{}` is a kernel parameter", param.name),
                    (FuncKind::Helper, Some(space)) => {
                        format!(
                            "`{}` is a parameter of `{func_name}` in {space} memory",
                            param.name
                        )
                    }
                    (FuncKind::Helper, None) => {
                        format!("`{}` is a parameter of `{func_name}`", param.name)
                    }
                };
                let reason = Reason { text, site: Some(Site(header.line)) };
                let id = self.new_ptr_at(param.name.clone(), Self::decl_of(param.ty.space), reason);
                self.vars.insert(param.name.clone(), id);
                params.push(id);
            } else {
                self.scalars.insert(param.name.clone(), Space::Private);
            }
        }
        if header.ret.is_ptr {
            let text = format!("the pointer `{func_name}` returns");
            let reason = Reason { text, site: Some(Site(header.line)) };
            self.ret =
                Some(self.new_ptr_at("return".to_owned(), Self::decl_of(header.ret.space), reason));
        }
        if header.body.is_some() {
            self.block()?;
        }
        Ok(Func {
            name: header.name.clone(),
            kind: header.kind,
            params,
            ret: self.ret,
            ptrs: self.ptrs,
            facts: self.facts,
        })
    }

    fn block(&mut self) -> Result<(), ParseError> {
        self.cursor.expect("{")?;
        while !self.cursor.eat("}") {
            if self.cursor.peek().is_none() {
                return self.cursor.error("unclosed `{`");
            }
            self.stmt()?;
        }
        Ok(())
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH { self.cursor.error("nested too deeply") } else { Ok(()) }
    }

    fn stmt(&mut self) -> Result<(), ParseError> {
        self.enter()?;
        let result = self.stmt_inner();
        self.depth -= 1;
        result
    }

    fn stmt_inner(&mut self) -> Result<(), ParseError> {
        if matches!(self.cursor.peek(), Some(Tok::Punct("{"))) {
            return self.block();
        }
        if self.cursor.eat(";") {
            return Ok(());
        }
        if self.cursor.eat_word("if") {
            self.cursor.expect("(")?;
            self.rvalue()?;
            self.cursor.expect(")")?;
            self.stmt()?;
            if self.cursor.eat_word("else") {
                self.stmt()?;
            }
            return Ok(());
        }
        if self.cursor.eat_word("while") {
            self.cursor.expect("(")?;
            self.rvalue()?;
            self.cursor.expect(")")?;
            return self.stmt();
        }
        if self.cursor.eat_word("return") {
            if !self.cursor.eat(";") {
                let value = self.rvalue()?;
                if let (Val::Ptr(ptr), Some(ret)) = (value, self.ret) {
                    let reason = self.reason(format!("`{}` is returned", self.name(ptr)));
                    self.facts.push(Fact::Flow { from: ptr, to: ret, reason });
                }
                self.cursor.expect(";")?;
            }
            return Ok(());
        }
        if self.cursor.at_type() {
            return self.declaration();
        }
        self.expr()?;
        self.cursor.expect(";")
    }

    fn declaration(&mut self) -> Result<(), ParseError> {
        let ty = self.cursor.ty()?;
        loop {
            let name = self.cursor.ident()?;
            let mut is_array = false;
            while self.cursor.eat("[") {
                is_array = true;
                if !self.cursor.eat("]") {
                    self.rvalue()?;
                    self.cursor.expect("]")?;
                }
            }
            if is_array {
                let space = ty.space.unwrap_or(Space::Private);
                let text = format!("`{name}` is allocated in {space} memory");
                let id = self.new_ptr(name.clone(), Decl::In(space), text);
                self.vars.insert(name, id);
            } else if ty.is_ptr {
                let text = match ty.space {
                    Some(space) => format!("`{name}` is declared in {space} memory"),
                    None => format!("`{name}` is declared"),
                };
                let id = self.new_ptr(name.clone(), Self::decl_of(ty.space), text);
                self.vars.insert(name.clone(), id);
                if self.cursor.eat("=") {
                    let value = self.rvalue()?;
                    if let Val::Ptr(from) = value {
                        let reason = self
                            .reason(format!("`{name}` is initialised with `{}`", self.name(from)));
                        self.facts.push(Fact::Flow { from, to: id, reason });
                    }
                }
            } else {
                self.vars.remove(&name);
                self.scalars.insert(name, ty.space.unwrap_or(Space::Private));
                if self.cursor.eat("=") {
                    self.rvalue()?;
                }
            }
            if !self.cursor.eat(",") {
                break;
            }
        }
        self.cursor.expect(";")
    }

    fn rvalue(&mut self) -> Result<Val, ParseError> {
        let expr = self.expr()?;
        Ok(self.read(expr))
    }

    /// Uses an expression as a value: reading `*p` or `p[i]` is a load.
    fn read(&mut self, expr: Expr) -> Val {
        if let Place::Deref(ptr) = expr.place {
            let reason = self.reason(format!("load through `{}`", self.name(ptr)));
            self.facts.push(Fact::Load { ptr, reason });
        }
        expr.val
    }

    fn expr(&mut self) -> Result<Expr, ParseError> {
        self.enter()?;
        let result = self.assignment();
        self.depth -= 1;
        result
    }

    fn assignment(&mut self) -> Result<Expr, ParseError> {
        let lhs = self.binary(0)?;
        let compound = ["+=", "-=", "*=", "/="].iter().any(|op| self.cursor.eat(op));
        if !compound && !self.cursor.eat("=") {
            return Ok(lhs);
        }
        let rhs = self.rvalue()?;
        match lhs.place {
            Place::Deref(ptr) => {
                if compound {
                    self.read(lhs);
                }
                let reason = self.reason(format!("store through `{}`", self.name(ptr)));
                self.facts.push(Fact::Store { ptr, reason });
            }
            Place::Var(to) => {
                if let Val::Ptr(from) = rhs {
                    let reason = self.reason(format!(
                        "`{}` is assigned to `{}`",
                        self.name(from),
                        self.name(to)
                    ));
                    self.facts.push(Fact::Flow { from, to, reason });
                }
            }
            Place::None => {}
        }
        Ok(Expr { val: rhs, place: Place::None })
    }

    fn binary(&mut self, min_prec: u8) -> Result<Expr, ParseError> {
        let mut lhs = self.unary()?;
        while let Some(Tok::Punct(op)) = self.cursor.peek() {
            let op = *op;
            let prec = match op {
                "||" => 1,
                "&&" => 2,
                "|" => 3,
                "^" => 4,
                "&" => 5,
                "==" | "!=" => 6,
                "<" | ">" | "<=" | ">=" => 7,
                "<<" | ">>" => 8,
                "+" | "-" => 9,
                "*" | "/" | "%" => 10,
                _ => break,
            };
            if prec < min_prec {
                break;
            }
            self.cursor.pos += 1;
            let left = self.read(lhs);
            let right_expr = self.enter().and_then(|()| self.binary(prec + 1));
            self.depth -= 1;
            let right = self.read(right_expr?);
            let val = match (op, left, right) {
                ("+" | "-", Val::Ptr(ptr), Val::Other) | ("+", Val::Other, Val::Ptr(ptr)) => {
                    Val::Ptr(ptr)
                }
                _ => Val::Other,
            };
            lhs = Expr { val, place: Place::None };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        self.enter()?;
        let result = self.unary_inner();
        self.depth -= 1;
        result
    }

    fn unary_inner(&mut self) -> Result<Expr, ParseError> {
        if self.cursor.eat("*") {
            let operand = self.unary()?;
            let val = self.read(operand);
            let place = match val {
                Val::Ptr(ptr) => Place::Deref(ptr),
                Val::Null | Val::Other => Place::None,
            };
            return Ok(Expr { val: Val::Other, place });
        }
        if self.cursor.eat("&") {
            let operand = self.unary()?;
            let val = match operand.place {
                // `&p[i]` keeps `p`'s row (digest 2.10 [INDEX/PTR+]).
                Place::Deref(ptr) => Val::Ptr(ptr),
                Place::Var(_) | Place::None => match self.scalar_name_before() {
                    Some((name, space)) => {
                        let text = format!("`{name}` is a variable in {space} memory");
                        Val::Ptr(self.new_ptr(format!("&{name}"), Decl::In(space), text))
                    }
                    None => Val::Other,
                },
            };
            return Ok(Expr { val, place: Place::None });
        }
        if ["-", "!", "~", "+"].iter().any(|op| self.cursor.eat(op)) {
            let operand = self.unary()?;
            self.read(operand);
            return Ok(Expr { val: Val::Other, place: Place::None });
        }
        if self.cursor.eat("++") || self.cursor.eat("--") {
            let operand = self.unary()?;
            return Ok(Expr { val: self.read(operand), place: Place::None });
        }
        self.postfix()
    }

    /// The scalar variable just parsed as `&x`'s operand, if the previous token names one.
    fn scalar_name_before(&self) -> Option<(String, Space)> {
        let token = self.cursor.tokens.get(self.cursor.pos.checked_sub(1)?)?;
        match &token.tok {
            Tok::Ident(name) => self.scalars.get(name).map(|space| (name.clone(), *space)),
            Tok::Num | Tok::Punct(_) => None,
        }
    }

    fn postfix(&mut self) -> Result<Expr, ParseError> {
        let mut expr = self.primary()?;
        loop {
            if self.cursor.eat("[") {
                let base = self.read(expr);
                self.rvalue()?;
                self.cursor.expect("]")?;
                let place = match base {
                    Val::Ptr(ptr) => Place::Deref(ptr),
                    Val::Null | Val::Other => Place::None,
                };
                expr = Expr { val: Val::Other, place };
            } else if self.cursor.eat("++") || self.cursor.eat("--") {
                expr = Expr { val: self.read(expr), place: Place::None };
            } else {
                return Ok(expr);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        let plain = |val| Expr { val, place: Place::None };
        if self.cursor.eat("(") {
            let inner = self.expr()?;
            self.cursor.expect(")")?;
            return Ok(inner);
        }
        match self.cursor.peek().cloned() {
            Some(Tok::Num) => {
                self.cursor.pos += 1;
                Ok(plain(Val::Other))
            }
            Some(Tok::Ident(word)) if word == "NULL" => {
                self.cursor.pos += 1;
                Ok(plain(Val::Null))
            }
            Some(Tok::Ident(word)) if word == "dynamic_cast" => {
                self.cursor.pos += 1;
                self.cursor.expect("<")?;
                let ty = self.cursor.ty()?;
                self.cursor.expect(">")?;
                self.cursor.expect("(")?;
                let operand = self.rvalue()?;
                self.cursor.expect(")")?;
                let (Some(space), Val::Ptr(from)) = (ty.space, operand) else {
                    return self.cursor.error("`dynamic_cast` needs a space and a pointer");
                };
                let text = format!("the result of casting `{}` to {space}", self.name(from));
                let to = self.new_ptr(
                    format!("cast<{space}>({})", self.name(from)),
                    Decl::Generic,
                    text,
                );
                let reason = self.reason(format!("`{}` is cast to {space}", self.name(from)));
                self.facts.push(Fact::Cast { from, to, space, reason });
                Ok(plain(Val::Ptr(to)))
            }
            Some(Tok::Ident(word)) if word == "__bound" => {
                self.cursor.pos += 1;
                self.cursor.expect("(")?;
                let Val::Ptr(ptr) = self.rvalue()? else {
                    return self.cursor.error("`__bound` needs a pointer");
                };
                let mut allowed = SpaceSet::EMPTY;
                while self.cursor.eat(",") {
                    match space_keyword(&self.cursor.ident()?) {
                        Some(Some(space)) => allowed.insert(space),
                        _ => return self.cursor.error("expected an address space"),
                    }
                }
                self.cursor.expect(")")?;
                let text = format!("`{}` may only point to {}", self.name(ptr), allowed.describe());
                let reason = self.reason(text);
                self.facts.push(Fact::Bound { ptr, allowed, reason });
                Ok(plain(Val::Other))
            }
            Some(Tok::Ident(word)) => {
                self.cursor.pos += 1;
                if matches!(self.cursor.peek(), Some(Tok::Punct("("))) {
                    return self.call(&word);
                }
                Ok(match self.vars.get(&word) {
                    Some(ptr) => Expr { val: Val::Ptr(*ptr), place: Place::Var(*ptr) },
                    None => plain(Val::Other),
                })
            }
            _ => self.cursor.error("expected an expression"),
        }
    }

    fn call(&mut self, name: &str) -> Result<Expr, ParseError> {
        self.cursor.expect("(")?;
        let mut values = Vec::new();
        while !self.cursor.eat(")") {
            if !values.is_empty() {
                self.cursor.expect(",")?;
            }
            values.push(self.rvalue()?);
        }
        let Some(callee_idx) = self.index.get(name).copied() else {
            return Ok(Expr { val: Val::Other, place: Place::None });
        };
        let callee = &self.headers[callee_idx];
        if values.len() != callee.params.len() {
            return self.cursor.error(format!(
                "`{name}` takes {} arguments, {} given",
                callee.params.len(),
                values.len()
            ));
        }
        let mut args = Vec::new();
        for (param, value) in callee.params.iter().zip(values) {
            if !param.ty.is_ptr {
                continue;
            }
            let arg = match value {
                Val::Ptr(ptr) => ptr,
                Val::Null | Val::Other => {
                    let text = "a null pointer argument".to_owned();
                    self.new_ptr("NULL".to_owned(), Decl::Generic, text)
                }
            };
            args.push(arg);
        }
        let names: Vec<String> = args.iter().map(|arg| self.name(*arg)).collect();
        let ret = callee.ret.is_ptr.then(|| {
            let text = format!("the pointer `{name}` returns here");
            self.new_ptr(format!("{name}()"), Decl::Generic, text)
        });
        let reason = self.reason(format!("call `{name}({})`", names.join(", ")));
        let callee = FuncId(callee_idx as u32);
        self.facts.push(Fact::Call { callee, args, ret, reason });
        Ok(Expr { val: ret.map_or(Val::Other, Val::Ptr), place: Place::None })
    }
}
