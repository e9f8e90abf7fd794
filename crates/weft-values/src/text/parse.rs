//! The value parser: tokens to [`Value`]s, and the pieces that random specs reuse
//! (value types such as `[10][3]f32`, and single literals read as a given type).
//!
//! Arrays are read in two steps. The first walks the brackets with an explicit stack,
//! checks regularity and collects the literals (as spans, not yet converted). The
//! second picks the element type (the caller's expectation, else the first suffix,
//! else the Futhark defaults) and converts every literal to it, with range checks.

use std::borrow::Cow;

use crate::scalar::{Scalar, ScalarType};
use crate::text::lexer::{Lexer, Token, TokenKind};
use crate::text::{ParseError, ParseErrorKind};
use crate::value::{ArrayData, Value, ValueType, n_elements};

/// Builds a positioned error for `offset` in `text`.
pub(crate) fn error_at(text: &str, offset: usize, kind: ParseErrorKind) -> ParseError {
    let offset = offset.min(text.len());
    let mut line = 1;
    let mut line_start = 0;
    for (idx, byte) in text.as_bytes()[..offset].iter().enumerate() {
        if *byte == b'\n' {
            line += 1;
            line_start = idx + 1;
        }
    }
    // `offset` is always a token boundary, hence a char boundary; `get` keeps this
    // total even if that ever changes.
    let column = text.get(line_start..offset).map_or(1, |prefix| prefix.chars().count() + 1);
    ParseError { offset, line, column, kind }
}

/// A literal as written, before its type is settled.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Literal {
    /// Start of the literal (its `-`, if any).
    start: usize,
    /// End of the literal without its suffix.
    body_end: usize,
    /// End of the literal with its suffix.
    end: usize,
    class: LiteralClass,
    /// The type the literal names itself: a suffix, or implied (`true`, `f32.nan`).
    own_type: Option<ScalarType>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LiteralClass {
    /// Decimal digits only.
    Int,
    /// `0x...`.
    Hex,
    /// Digits with a fraction or an exponent.
    Decimal,
    Bool(bool),
    Nan,
    Inf {
        negative: bool,
    },
}

pub(crate) struct Parser<'a> {
    text: &'a str,
    lexer: Lexer<'a>,
    peeked: Option<Token>,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(text: &'a str) -> Parser<'a> {
        Parser { text, lexer: Lexer::new(text), peeked: None }
    }

    pub(crate) fn error(&self, offset: usize, kind: ParseErrorKind) -> ParseError {
        error_at(self.text, offset, kind)
    }

    pub(crate) fn peek(&mut self) -> Result<Token, ParseError> {
        if let Some(token) = self.peeked {
            return Ok(token);
        }
        let token =
            self.lexer.next_token().map_err(|(offset, kind)| error_at(self.text, offset, kind))?;
        self.peeked = Some(token);
        Ok(token)
    }

    pub(crate) fn bump(&mut self) -> Result<Token, ParseError> {
        let token = self.peek()?;
        self.peeked = None;
        Ok(token)
    }

    pub(crate) fn token_text(&self, token: Token) -> &'a str {
        self.text.get(token.start..token.end).unwrap_or("")
    }

    fn describe(&self, token: Token) -> String {
        match token.kind {
            TokenKind::Eof => "end of input".to_owned(),
            _ => format!("`{}`", self.token_text(token)),
        }
    }

    pub(crate) fn unexpected(&self, token: Token, expected: &'static str) -> ParseError {
        self.error(
            token.start,
            ParseErrorKind::Unexpected { expected, found: self.describe(token) },
        )
    }

    pub(crate) fn expect(
        &mut self,
        kind: TokenKind,
        expected: &'static str,
    ) -> Result<Token, ParseError> {
        let token = self.bump()?;
        if token.kind == kind { Ok(token) } else { Err(self.unexpected(token, expected)) }
    }

    /// Parses values up to the end of input; with `expected`, exactly that many.
    pub(crate) fn values(
        &mut self,
        expected: Option<&[ScalarType]>,
    ) -> Result<Vec<Value>, ParseError> {
        let mut values = Vec::new();
        loop {
            let token = self.peek()?;
            if token.kind == TokenKind::Eof {
                break;
            }
            let expected_ty = match expected {
                None => None,
                Some(types) => match types.get(values.len()) {
                    Some(&ty) => Some(ty),
                    None => {
                        return Err(self.error(
                            token.start,
                            ParseErrorKind::TooManyValues { expected: types.len() },
                        ));
                    }
                },
            };
            values.push(self.value(expected_ty)?);
        }
        if let Some(types) = expected
            && values.len() < types.len()
        {
            return Err(self.error(
                self.text.len(),
                ParseErrorKind::TooFewValues { expected: types.len(), found: values.len() },
            ));
        }
        Ok(values)
    }

    /// Parses one value and then the end of input.
    pub(crate) fn single_value(&mut self) -> Result<Value, ParseError> {
        let value = self.value(None)?;
        let token = self.peek()?;
        if token.kind != TokenKind::Eof {
            return Err(self.error(token.start, ParseErrorKind::TooManyValues { expected: 1 }));
        }
        Ok(value)
    }

    /// Parses one value; `expected` types its unsuffixed literals.
    fn value(&mut self, expected: Option<ScalarType>) -> Result<Value, ParseError> {
        let token = self.bump()?;
        match token.kind {
            TokenKind::LBracket => self.array(token, expected),
            TokenKind::Word if self.token_text(token) == "empty" => self.empty(expected),
            TokenKind::Number | TokenKind::Word | TokenKind::Minus => {
                let literal = self.literal(token)?;
                let ty = self.resolve_type(std::slice::from_ref(&literal), expected)?;
                let scalar = self.convert(literal, ty)?;
                Ok(Value::scalar(scalar))
            }
            TokenKind::RBracket
            | TokenKind::LParen
            | TokenKind::RParen
            | TokenKind::Comma
            | TokenKind::DotDot
            | TokenKind::Eof => Err(self.unexpected(token, "a value")),
        }
    }

    /// Reads a literal starting at `token` (a number, a word, or `-` before a word).
    pub(crate) fn literal(&mut self, token: Token) -> Result<Literal, ParseError> {
        match token.kind {
            TokenKind::Number => self.number_literal(token),
            TokenKind::Word => self.word_literal(token, token.start, false),
            TokenKind::Minus => {
                let word = self.bump()?;
                if word.kind != TokenKind::Word || word.start != token.end {
                    return Err(self.unexpected(word, "`f32.inf` or `f64.inf` after `-`"));
                }
                self.word_literal(word, token.start, true)
            }
            TokenKind::LBracket
            | TokenKind::RBracket
            | TokenKind::LParen
            | TokenKind::RParen
            | TokenKind::Comma
            | TokenKind::DotDot
            | TokenKind::Eof => Err(self.unexpected(token, "a literal")),
        }
    }

    fn number_literal(&self, token: Token) -> Result<Literal, ParseError> {
        let body = self.text.get(token.start..token.suffix_start).unwrap_or("");
        let digits = body.strip_prefix('-').unwrap_or(body);
        let class = if digits.starts_with("0x") || digits.starts_with("0X") {
            LiteralClass::Hex
        } else if digits.contains(['.', 'e', 'E']) {
            LiteralClass::Decimal
        } else {
            LiteralClass::Int
        };
        let suffix = self.text.get(token.suffix_start..token.end).unwrap_or("");
        let own_type = if suffix.is_empty() {
            None
        } else {
            match ScalarType::from_name(suffix) {
                Some(ScalarType::Bool) | None => {
                    return Err(self.error(
                        token.suffix_start,
                        ParseErrorKind::UnsupportedType(suffix.to_owned()),
                    ));
                }
                Some(ty) if ty.is_integer() && class == LiteralClass::Decimal => {
                    let literal = self.text.get(token.start..token.end).unwrap_or("").to_owned();
                    return Err(
                        self.error(token.start, ParseErrorKind::DecimalWithIntegerSuffix(literal))
                    );
                }
                Some(ty) => Some(ty),
            }
        };
        Ok(Literal {
            start: token.start,
            body_end: token.suffix_start,
            end: token.end,
            class,
            own_type,
        })
    }

    fn word_literal(
        &self,
        word: Token,
        start: usize,
        negative: bool,
    ) -> Result<Literal, ParseError> {
        let text = self.token_text(word);
        let (class, ty) = match text {
            "true" if !negative => (LiteralClass::Bool(true), ScalarType::Bool),
            "false" if !negative => (LiteralClass::Bool(false), ScalarType::Bool),
            "f16.nan" => (LiteralClass::Nan, ScalarType::F16),
            "f16.inf" => (LiteralClass::Inf { negative }, ScalarType::F16),
            "f32.nan" => (LiteralClass::Nan, ScalarType::F32),
            "f64.nan" => (LiteralClass::Nan, ScalarType::F64),
            "f32.inf" => (LiteralClass::Inf { negative }, ScalarType::F32),
            "f64.inf" => (LiteralClass::Inf { negative }, ScalarType::F64),
            _ if negative => {
                return Err(self.unexpected(word, "`f16.inf`, `f32.inf` or `f64.inf` after `-`"));
            }
            _ => return Err(self.error(word.start, ParseErrorKind::UnknownWord(text.to_owned()))),
        };
        Ok(Literal { start, body_end: word.end, end: word.end, class, own_type: Some(ty) })
    }

    /// Reads the rest of an array literal after its `[`.
    fn array(&mut self, open: Token, expected: Option<ScalarType>) -> Result<Value, ParseError> {
        // One entry per open bracket: elements seen so far and where the row starts.
        let mut open_rows: Vec<(usize, usize)> = vec![(0, open.start)];
        // The length of the first closed row at each depth.
        let mut shape: Vec<Option<usize>> = vec![None];
        // How many brackets enclose a scalar; set by the first scalar.
        let mut leaf_depth: Option<usize> = None;
        let mut literals: Vec<Literal> = Vec::new();
        // After `[` (element or `]` may follow) or after `,` (element must follow).
        let mut element_next = true;
        let mut after_open = true;
        while let Some(&(_, row_start)) = open_rows.last() {
            let token = self.bump()?;
            if element_next {
                let depth = open_rows.len();
                match token.kind {
                    TokenKind::RBracket if after_open => {
                        return Err(self.error(row_start, ParseErrorKind::EmptyArrayLiteral));
                    }
                    TokenKind::LBracket => {
                        if leaf_depth == Some(depth) {
                            return Err(
                                self.error(token.start, ParseErrorKind::IrregularNestedArray)
                            );
                        }
                        bump_count(&mut open_rows);
                        open_rows.push((0, token.start));
                        if shape.len() <= depth {
                            shape.push(None);
                        }
                        after_open = true;
                        continue;
                    }
                    TokenKind::Word if self.token_text(token) == "empty" => {
                        return Err(self.error(token.start, ParseErrorKind::EmptyInsideArray));
                    }
                    TokenKind::Number | TokenKind::Word | TokenKind::Minus => {
                        match leaf_depth {
                            None => leaf_depth = Some(depth),
                            Some(leaf) if leaf != depth => {
                                return Err(
                                    self.error(token.start, ParseErrorKind::IrregularScalar)
                                );
                            }
                            Some(_) => {}
                        }
                        literals.push(self.literal(token)?);
                        bump_count(&mut open_rows);
                        element_next = false;
                    }
                    TokenKind::RBracket
                    | TokenKind::LParen
                    | TokenKind::RParen
                    | TokenKind::Comma
                    | TokenKind::DotDot
                    | TokenKind::Eof => {
                        return Err(self.unexpected(token, "an array element"));
                    }
                }
            } else {
                match token.kind {
                    TokenKind::Comma => {
                        element_next = true;
                        after_open = false;
                    }
                    TokenKind::RBracket => {
                        let (n_elems, row_start) =
                            open_rows.pop().expect("invariant: the loop runs while a row is open");
                        let dim_idx = open_rows.len();
                        let slot = shape
                            .get_mut(dim_idx)
                            .expect("invariant: `shape` has a slot for every open depth");
                        match *slot {
                            None => *slot = Some(n_elems),
                            Some(n_first) if n_first != n_elems => {
                                let row = open_rows.last().map_or(1, |&(count, _)| count);
                                return Err(self.error(
                                    row_start,
                                    ParseErrorKind::IrregularRow { row, n_elems, n_first },
                                ));
                            }
                            Some(_) => {}
                        }
                    }
                    TokenKind::LBracket
                    | TokenKind::LParen
                    | TokenKind::RParen
                    | TokenKind::DotDot
                    | TokenKind::Minus
                    | TokenKind::Number
                    | TokenKind::Word
                    | TokenKind::Eof => {
                        return Err(self.unexpected(token, "`,` or `]`"));
                    }
                }
            }
        }
        let shape: Vec<usize> = shape
            .into_iter()
            .collect::<Option<_>>()
            .expect("invariant: every depth of a non-empty regular array closed a row");
        let ty = self.resolve_type(&literals, expected)?;
        let mut data = ArrayData::with_capacity(ty, literals.len());
        for literal in literals {
            let scalar = self.convert(literal, ty)?;
            data.push(scalar).expect("invariant: `convert` returns the requested type");
        }
        Value::new(shape, data).map_err(|_| self.error(open.start, ParseErrorKind::TooLarge))
    }

    /// Reads `([d1]...[dn]t)` after `empty`.
    fn empty(&mut self, expected: Option<ScalarType>) -> Result<Value, ParseError> {
        self.expect(TokenKind::LParen, "`(` after `empty`")?;
        let type_start = self.peek()?.start;
        let ty = self.value_type()?;
        self.expect(TokenKind::RParen, "`)`")?;
        if ty.shape.is_empty() {
            return Err(self.error(type_start, ParseErrorKind::EmptyOfScalar));
        }
        if !ty.shape.contains(&0) {
            return Err(self.error(type_start, ParseErrorKind::EmptyNotEmpty(ty)));
        }
        if let Some(expected) = expected
            && expected != ty.elem
        {
            return Err(self.error(
                type_start,
                ParseErrorKind::ExpectedType { expected, found: format!("empty({ty})") },
            ));
        }
        Value::new(ty.shape, ArrayData::with_capacity(ty.elem, 0))
            .map_err(|_| self.error(type_start, ParseErrorKind::TooLarge))
    }

    /// Reads a value type with literal sizes: `f32`, `[10][3]i64`.
    pub(crate) fn value_type(&mut self) -> Result<ValueType, ParseError> {
        let mut shape = Vec::new();
        loop {
            let token = self.bump()?;
            match token.kind {
                TokenKind::LBracket => {
                    let size = self.bump()?;
                    let text = self.token_text(size);
                    if size.kind != TokenKind::Number
                        || !text.bytes().all(|b| b.is_ascii_digit() || b == b'_')
                    {
                        return Err(self.unexpected(size, "an array size"));
                    }
                    let dim = parse_magnitude(text, 10)
                        .and_then(|dim| usize::try_from(dim).ok())
                        .ok_or_else(|| self.error(size.start, ParseErrorKind::TooLarge))?;
                    shape.push(dim);
                    self.expect(TokenKind::RBracket, "`]`")?;
                }
                TokenKind::Word => {
                    let name = self.token_text(token);
                    let elem = ScalarType::from_name(name).ok_or_else(|| {
                        self.error(token.start, ParseErrorKind::UnsupportedType(name.to_owned()))
                    })?;
                    if n_elements(&shape).is_none() {
                        return Err(self.error(token.start, ParseErrorKind::TooLarge));
                    }
                    return Ok(ValueType { elem, shape });
                }
                TokenKind::RBracket
                | TokenKind::LParen
                | TokenKind::RParen
                | TokenKind::Comma
                | TokenKind::DotDot
                | TokenKind::Minus
                | TokenKind::Number
                | TokenKind::Eof => return Err(self.unexpected(token, "a type")),
            }
        }
    }

    /// The element type for `literals`: `expected`, else the first literal's own type,
    /// else `f64` if some literal is a decimal, else `i32`. Checks every literal fits.
    pub(crate) fn resolve_type(
        &self,
        literals: &[Literal],
        expected: Option<ScalarType>,
    ) -> Result<ScalarType, ParseError> {
        let ty = match expected {
            Some(ty) => ty,
            None => {
                let mut own: Option<ScalarType> = None;
                for literal in literals {
                    match (own, literal.own_type) {
                        (None, found) => own = found,
                        (Some(first), Some(found)) if first != found => {
                            return Err(self.error(
                                literal.start,
                                ParseErrorKind::MixedElementTypes { first, found },
                            ));
                        }
                        (Some(_), _) => {}
                    }
                }
                own.unwrap_or_else(|| {
                    if literals.iter().any(|lit| lit.class == LiteralClass::Decimal) {
                        ScalarType::F64
                    } else {
                        ScalarType::I32
                    }
                })
            }
        };
        for literal in literals {
            let fits = match (literal.own_type, literal.class) {
                (Some(own), _) => own == ty,
                (None, LiteralClass::Int) => ty != ScalarType::Bool,
                (None, LiteralClass::Hex) => ty.is_integer(),
                (None, LiteralClass::Decimal) => ty.is_float(),
                (None, LiteralClass::Bool(_) | LiteralClass::Nan | LiteralClass::Inf { .. }) => {
                    false
                }
            };
            if !fits {
                let found = self.text.get(literal.start..literal.end).unwrap_or("").to_owned();
                return Err(
                    self.error(literal.start, ParseErrorKind::ExpectedType { expected: ty, found })
                );
            }
        }
        Ok(ty)
    }

    /// Converts a literal to a scalar of type `ty`, which `resolve_type` accepted.
    pub(crate) fn convert(&self, literal: Literal, ty: ScalarType) -> Result<Scalar, ParseError> {
        let body = self.text.get(literal.start..literal.body_end).unwrap_or("");
        let error = |kind| self.error(literal.start, kind);
        let out_of_range = || error(ParseErrorKind::OutOfRange { literal: body.to_owned(), ty });
        let mismatch = || {
            let found = self.text.get(literal.start..literal.end).unwrap_or("").to_owned();
            error(ParseErrorKind::ExpectedType { expected: ty, found })
        };
        match literal.class {
            LiteralClass::Bool(b) if ty == ScalarType::Bool => Ok(Scalar::Bool(b)),
            LiteralClass::Nan => match ty {
                ScalarType::F16 => Ok(Scalar::F16(half::f16::NAN)),
                ScalarType::F32 => Ok(Scalar::F32(f32::NAN)),
                ScalarType::F64 => Ok(Scalar::F64(f64::NAN)),
                _ => Err(mismatch()),
            },
            LiteralClass::Inf { negative } => match ty {
                ScalarType::F16 if negative => Ok(Scalar::F16(half::f16::NEG_INFINITY)),
                ScalarType::F16 => Ok(Scalar::F16(half::f16::INFINITY)),
                ScalarType::F32 if negative => Ok(Scalar::F32(f32::NEG_INFINITY)),
                ScalarType::F32 => Ok(Scalar::F32(f32::INFINITY)),
                ScalarType::F64 if negative => Ok(Scalar::F64(f64::NEG_INFINITY)),
                ScalarType::F64 => Ok(Scalar::F64(f64::INFINITY)),
                _ => Err(mismatch()),
            },
            LiteralClass::Int | LiteralClass::Decimal if ty.is_float() => {
                let cleaned: Cow<'_, str> =
                    if body.contains('_') { body.replace('_', "").into() } else { body.into() };
                let scalar = match ty {
                    ScalarType::F32 => cleaned.parse::<f32>().ok().map(Scalar::F32),
                    // Rounded once, from the decimal's nearest `f64` (which keeps
                    // more than twice the digits `f16` needs).
                    ScalarType::F16 => cleaned
                        .parse::<f64>()
                        .ok()
                        .map(|x| Scalar::F16(crate::scalar::f16_from_f64(x))),
                    _ => cleaned.parse::<f64>().ok().map(Scalar::F64),
                };
                match scalar {
                    None => Err(error(ParseErrorKind::InvalidLiteral(body.to_owned()))),
                    Some(Scalar::F16(x)) if x.is_infinite() => Err(out_of_range()),
                    Some(Scalar::F32(x)) if x.is_infinite() => Err(out_of_range()),
                    Some(Scalar::F64(x)) if x.is_infinite() => Err(out_of_range()),
                    Some(scalar) => Ok(scalar),
                }
            }
            LiteralClass::Int | LiteralClass::Hex if ty.is_integer() => {
                let (negative, digits) = match body.strip_prefix('-') {
                    Some(rest) => (true, rest),
                    None => (false, body),
                };
                let (digits, radix) = match digits.get(..2) {
                    Some("0x" | "0X") => (digits.get(2..).unwrap_or(""), 16),
                    _ => (digits, 10),
                };
                if !digits.bytes().any(|b| b.is_ascii_hexdigit()) {
                    return Err(error(ParseErrorKind::InvalidLiteral(body.to_owned())));
                }
                let magnitude = parse_magnitude(digits, radix).ok_or_else(out_of_range)?;
                let value = if negative {
                    0i128.checked_sub_unsigned(magnitude)
                } else {
                    i128::try_from(magnitude).ok()
                };
                let value = value.ok_or_else(out_of_range)?;
                let scalar = match ty {
                    ScalarType::I8 => i8::try_from(value).ok().map(Scalar::I8),
                    ScalarType::I16 => i16::try_from(value).ok().map(Scalar::I16),
                    ScalarType::U8 => u8::try_from(value).ok().map(Scalar::U8),
                    ScalarType::U16 => u16::try_from(value).ok().map(Scalar::U16),
                    ScalarType::I32 => i32::try_from(value).ok().map(Scalar::I32),
                    ScalarType::I64 => i64::try_from(value).ok().map(Scalar::I64),
                    ScalarType::U32 => u32::try_from(value).ok().map(Scalar::U32),
                    _ => u64::try_from(value).ok().map(Scalar::U64),
                };
                scalar.ok_or_else(out_of_range)
            }
            LiteralClass::Bool(_)
            | LiteralClass::Int
            | LiteralClass::Hex
            | LiteralClass::Decimal => Err(mismatch()),
        }
    }
}

fn bump_count(open_rows: &mut [(usize, usize)]) {
    if let Some((count, _)) = open_rows.last_mut() {
        *count += 1;
    }
}

/// Digits (with `_` separators) in `radix`, or `None` on overflow or a bad digit.
fn parse_magnitude(digits: &str, radix: u32) -> Option<u128> {
    let mut value: u128 = 0;
    for ch in digits.chars().filter(|&ch| ch != '_') {
        let digit = ch.to_digit(radix)?;
        value = value.checked_mul(u128::from(radix))?.checked_add(u128::from(digit))?;
    }
    Some(value)
}
