//! Random inputs from specs, as in `random input { [1000]f32 [10]i64 in 1..1000 }`
//! (LANGUAGE.md §3, "Test blocks") and `weft run --random SPEC`.
//!
//! A spec is a value type with literal sizes, optionally followed by `in lo..hi`, a
//! half-open range whose bounds are literals of the element type (unsuffixed ones
//! take it). Without a range, floats are drawn from [0, 1), integers from [0, 1000),
//! and booleans are fair coin flips; `bool` takes no range.
//!
//! Generation is deterministic: [`Rng`] is SplitMix64 (Steele, Lea and Flood, 2014),
//! written out here so a seed gives the same values on every platform and release.
//! Elements are drawn in row-major order, values in spec order, from one stream.
//! Integers are unbiased (rejection sampling); floats are `lo + (hi - lo) * u` for
//! `u` a multiple of 2^-53 (`f64`) or 2^-24 (`f32`), kept below `hi`.

use std::fmt;

use crate::scalar::{Scalar, ScalarType};
use crate::text::ParseError;
use crate::text::ParseErrorKind;
use crate::text::lexer::TokenKind;
use crate::text::parse::Parser;
use crate::value::{ArrayData, Value, ValueType, n_elements};

/// One random input: a type and an optional range for its elements.
#[derive(Debug, Clone, PartialEq)]
pub struct RandomSpec {
    /// The type of the value to draw, with literal sizes.
    pub ty: ValueType,
    /// `in lo..hi`: both bounds have the element type, `lo < hi`, and floats are finite.
    pub range: Option<SpecRange>,
}

/// A half-open range `lo..hi` of a spec.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpecRange {
    /// Inclusive lower bound.
    pub lo: Scalar,
    /// Exclusive upper bound.
    pub hi: Scalar,
}

impl fmt::Display for RandomSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.ty)?;
        if let Some(SpecRange { lo, hi }) = self.range {
            write!(f, " in {lo}..{hi}")?;
        }
        Ok(())
    }
}

/// Parses whitespace-separated specs (`[1000]f32 [10]i64 in 1..1000`).
pub fn parse_random_specs(text: &str) -> Result<Vec<RandomSpec>, ParseError> {
    let mut parser = Parser::new(text);
    let mut specs = Vec::new();
    while parser.peek()?.kind != TokenKind::Eof {
        specs.push(spec(&mut parser)?);
    }
    Ok(specs)
}

/// Parses exactly one spec.
pub fn parse_random_spec(text: &str) -> Result<RandomSpec, ParseError> {
    let mut parser = Parser::new(text);
    let spec = spec(&mut parser)?;
    let token = parser.peek()?;
    if token.kind != TokenKind::Eof {
        return Err(parser.unexpected(token, "end of input"));
    }
    Ok(spec)
}

fn spec(parser: &mut Parser<'_>) -> Result<RandomSpec, ParseError> {
    let type_start = parser.peek()?.start;
    let ty = parser.value_type()?;
    // Refuse what no `Vec` could hold, so generating never overflows a capacity.
    let fits = n_elements(&ty.shape)
        .and_then(|n| n.checked_mul(ty.elem.size_in_bytes()))
        .is_some_and(|bytes| isize::try_from(bytes).is_ok());
    if !fits {
        return Err(parser.error(type_start, ParseErrorKind::TooLarge));
    }
    let token = parser.peek()?;
    if token.kind != TokenKind::Word || parser.token_text(token) != "in" {
        return Ok(RandomSpec { ty, range: None });
    }
    parser.bump()?;
    if ty.elem == ScalarType::Bool {
        return Err(parser.error(token.start, ParseErrorKind::BoolRange));
    }
    let range_start = parser.peek()?.start;
    let lo = bound(parser, ty.elem)?;
    parser.expect(TokenKind::DotDot, "`..`")?;
    let hi = bound(parser, ty.elem)?;
    let non_empty = match (lo, hi) {
        (Scalar::F32(lo), Scalar::F32(hi)) => lo < hi,
        (Scalar::F64(lo), Scalar::F64(hi)) => lo < hi,
        (Scalar::F16(lo), Scalar::F16(hi)) => lo < hi,
        (lo, hi) => as_i128(lo) < as_i128(hi),
    };
    let finite = match (lo, hi) {
        (Scalar::F32(lo), Scalar::F32(hi)) => lo.is_finite() && hi.is_finite(),
        (Scalar::F64(lo), Scalar::F64(hi)) => lo.is_finite() && hi.is_finite(),
        (Scalar::F16(lo), Scalar::F16(hi)) => lo.is_finite() && hi.is_finite(),
        _ => true,
    };
    if !finite {
        return Err(parser.error(range_start, ParseErrorKind::NonFiniteRange));
    }
    if !non_empty {
        let (lo, hi) = (lo.to_string(), hi.to_string());
        return Err(parser.error(range_start, ParseErrorKind::EmptyRange { lo, hi }));
    }
    Ok(RandomSpec { ty, range: Some(SpecRange { lo, hi }) })
}

fn bound(parser: &mut Parser<'_>, elem: ScalarType) -> Result<Scalar, ParseError> {
    let token = parser.bump()?;
    let literal = parser.literal(token)?;
    let ty = parser.resolve_type(std::slice::from_ref(&literal), Some(elem))?;
    parser.convert(literal, ty)
}

fn as_i128(scalar: Scalar) -> i128 {
    match scalar {
        Scalar::I8(x) => x.into(),
        Scalar::I16(x) => x.into(),
        Scalar::U8(x) => x.into(),
        Scalar::U16(x) => x.into(),
        Scalar::I32(x) => x.into(),
        Scalar::I64(x) => x.into(),
        Scalar::U32(x) => x.into(),
        Scalar::U64(x) => x.into(),
        Scalar::Bool(x) => x.into(),
        // Never asked for floats; truncation is harmless here.
        Scalar::F16(x) => x.to_f32() as i128,
        Scalar::F32(x) => x as i128,
        Scalar::F64(x) => x as i128,
    }
}

/// SplitMix64: a small, fast, platform-independent generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator seeded with `seed`; equal seeds give equal streams everywhere.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `[0, span)`; `span` may be up to 2^64. `span` is not 0.
    fn below(&mut self, span: u128) -> u64 {
        let Ok(span) = u64::try_from(span) else {
            return self.next_u64();
        };
        // Reject the top partial block so every residue is equally likely.
        let zone = u64::MAX - u64::MAX % span;
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % span;
            }
        }
    }

    fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    fn unit_f32(&mut self) -> f64 {
        (self.next_u64() >> 40) as f64 * (1.0 / (1u64 << 24) as f64)
    }
}

impl RandomSpec {
    /// Draws a value of this spec's type from `rng`.
    /// A random value of the spec, or the error when its memory cannot be had.
    pub fn generate(&self, rng: &mut Rng) -> Result<Value, OutOfMemory> {
        let n_elems = n_elements(&self.ty.shape).expect("invariant: checked when parsed");
        let bytes = n_elems.saturating_mul(self.ty.elem.size_in_bytes());
        // With overcommit the reservation below succeeds and filling it gets the
        // process killed: refuse what the machine does not have first.
        if available_memory().is_some_and(|available| bytes > available) {
            return Err(OutOfMemory { bytes });
        }
        let mut data =
            ArrayData::try_with_capacity(self.ty.elem, n_elems).ok_or(OutOfMemory { bytes })?;
        match &mut data {
            ArrayData::F32(v) => {
                let (lo, hi) = match self.range {
                    Some(SpecRange { lo: Scalar::F32(lo), hi: Scalar::F32(hi) }) => (lo, hi),
                    _ => (0.0, 1.0),
                };
                let top = hi.next_down();
                v.extend((0..n_elems).map(|_| {
                    let u = rng.unit_f32();
                    let x = (f64::from(lo) * (1.0 - u) + f64::from(hi) * u) as f32;
                    x.clamp(lo, top)
                }));
            }
            ArrayData::F64(v) => {
                let (lo, hi) = match self.range {
                    Some(SpecRange { lo: Scalar::F64(lo), hi: Scalar::F64(hi) }) => (lo, hi),
                    _ => (0.0, 1.0),
                };
                let top = hi.next_down();
                v.extend((0..n_elems).map(|_| {
                    // The convex form cannot overflow, unlike `lo + (hi - lo) * u`.
                    let u = rng.unit_f64();
                    (lo * (1.0 - u) + hi * u).clamp(lo, top)
                }));
            }
            ArrayData::F16(v) => {
                let (lo, hi) = match self.range {
                    Some(SpecRange { lo: Scalar::F16(lo), hi: Scalar::F16(hi) }) => (lo, hi),
                    _ => (half::f16::ZERO, half::f16::ONE),
                };
                let top = f16_next_down(hi);
                v.extend((0..n_elems).map(|_| {
                    let u = rng.unit_f32();
                    let x = crate::scalar::f16_from_f64(lo.to_f64() * (1.0 - u) + hi.to_f64() * u);
                    if x < lo {
                        lo
                    } else if x > top {
                        top
                    } else {
                        x
                    }
                }));
            }
            ArrayData::Bool(v) => v.extend((0..n_elems).map(|_| rng.next_u64() >> 63 == 1)),
            ArrayData::I8(v) => v.extend(self.ints(rng, n_elems).map(|x| x as i8)),
            ArrayData::I16(v) => v.extend(self.ints(rng, n_elems).map(|x| x as i16)),
            ArrayData::U8(v) => v.extend(self.ints(rng, n_elems).map(|x| x as u8)),
            ArrayData::U16(v) => v.extend(self.ints(rng, n_elems).map(|x| x as u16)),
            ArrayData::I32(v) => v.extend(self.ints(rng, n_elems).map(|x| x as i32)),
            ArrayData::I64(v) => v.extend(self.ints(rng, n_elems).map(|x| x as i64)),
            ArrayData::U32(v) => v.extend(self.ints(rng, n_elems).map(|x| x as u32)),
            ArrayData::U64(v) => v.extend(self.ints(rng, n_elems).map(|x| x as u64)),
        }
        Ok(Value::new(self.ty.shape.clone(), data)
            .expect("invariant: generated `n_elems` elements"))
    }

    /// `n_elems` integers in the spec's range; they fit the element type because both
    /// bounds do. Without a range they are in `0..1000`, or every value of an 8-bit
    /// type (`0..256` for `u8`, `-128..128` for `i8`).
    fn ints<'r>(&self, rng: &'r mut Rng, n_elems: usize) -> impl Iterator<Item = i128> + 'r {
        let (lo, hi) = match (self.range, self.ty.elem) {
            (Some(SpecRange { lo, hi }), _) => (as_i128(lo), as_i128(hi)),
            (None, ScalarType::U8) => (0, 256),
            (None, ScalarType::I8) => (-128, 128),
            (None, _) => (0, 1000),
        };
        let span = u128::try_from(hi - lo).unwrap_or(1).max(1);
        (0..n_elems).map(move |_| lo + i128::from(rng.below(span)))
    }
}

/// The largest `f16` below the finite `x`.
fn f16_next_down(x: half::f16) -> half::f16 {
    let bits = x.to_bits();
    if bits & 0x7fff == 0 {
        // Either zero: the negative subnormal closest to it.
        half::f16::from_bits(0x8001)
    } else if bits & 0x8000 == 0 {
        half::f16::from_bits(bits - 1)
    } else {
        half::f16::from_bits(bits + 1)
    }
}

/// Draws one value per spec, in order, from a generator seeded with `seed`.
pub fn generate_inputs(specs: &[RandomSpec], seed: u64) -> Result<Vec<Value>, OutOfMemory> {
    let mut rng = Rng::new(seed);
    specs.iter().map(|spec| spec.generate(&mut rng)).collect()
}

/// The memory the system says is available (`MemAvailable` of `/proc/meminfo`), where
/// it says.
fn available_memory() -> Option<usize> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A random input larger than the memory this process can have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot allocate {bytes} bytes for a random input")]
pub struct OutOfMemory {
    pub bytes: usize,
}
