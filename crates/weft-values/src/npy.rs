//! numpy's `.npy` format, read and written by hand (it is small): the magic string
//! `\x93NUMPY`, a version, a little-endian header length, a Python-literal header
//! dict (`{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }`) padded with
//! spaces to a 64-byte boundary and ending in `\n`, then the raw elements.
//!
//! Supported: every Weft scalar type (`|b1 <i4 <i8 <u4 <u8 <f4 <f8`), any rank including
//! 0-d and empty arrays, C (row-major) order, little-endian; versions 1.0, 2.0 and 3.0
//! on reading. Fortran order, big-endian and other dtypes are rejected with a clear
//! error. Writing produces exactly the bytes numpy's `np.save` writes (version 1.0
//! unless the header needs 2.0, numpy's spare space for in-place growth included).

use crate::scalar::ScalarType;
use crate::value::{ArrayData, Value, n_elements};

const MAGIC: &[u8; 6] = b"\x93NUMPY";
const ARRAY_ALIGN: usize = 64;
/// numpy pads the header so the first dimension can grow to this many digits in place.
const GROWTH_AXIS_MAX_DIGITS: usize = 21;

/// Why bytes could not be read as a `.npy` array.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NpyError {
    #[error("not a .npy file: it does not start with `\\x93NUMPY`")]
    NotNpy,
    #[error("unsupported .npy format version {major}.{minor}")]
    UnsupportedVersion { major: u8, minor: u8 },
    #[error("truncated .npy file: the {0} ends early")]
    Truncated(&'static str),
    #[error("invalid .npy header: {0}")]
    BadHeader(String),
    #[error(
        "Fortran-order arrays are not supported: save a C-order array (`np.ascontiguousarray`)"
    )]
    FortranOrder,
    #[error(
        "unsupported dtype `{0}`: expected little-endian bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32 or float64"
    )]
    UnsupportedDtype(String),
    #[error("structured dtypes are not supported: save one array per field")]
    StructuredDtype,
    #[error("the data has {found} bytes, but a {ty} array needs {expected}")]
    DataLength { ty: String, expected: usize, found: usize },
    #[error("invalid bool byte {byte} at element {elem_idx}: expected 0 or 1")]
    InvalidBool { elem_idx: usize, byte: u8 },
    #[error("array too large: its size in bytes overflows")]
    TooLarge,
}

/// Reads a `.npy` file's bytes.
pub fn read_npy(bytes: &[u8]) -> Result<Value, NpyError> {
    let rest = bytes.strip_prefix(MAGIC.as_slice()).ok_or(NpyError::NotNpy)?;
    let ([major, minor], rest) = take::<2>(rest, "version")?;
    let (header_len, rest) = match (major, minor) {
        (1, 0) => {
            let (len, rest) = take::<2>(rest, "header length")?;
            (usize::from(u16::from_le_bytes(len)), rest)
        }
        (2 | 3, 0) => {
            let (len, rest) = take::<4>(rest, "header length")?;
            (usize::try_from(u32::from_le_bytes(len)).map_err(|_| NpyError::TooLarge)?, rest)
        }
        _ => return Err(NpyError::UnsupportedVersion { major, minor }),
    };
    let (header, data) = split(rest, header_len, "header")?;
    // Versions 1 and 2 use latin-1, 3 uses UTF-8; every valid header is ASCII.
    let header = std::str::from_utf8(header)
        .map_err(|_| NpyError::BadHeader("the header is not text".to_owned()))?;
    let header = parse_header(header)?;
    let elem = dtype_type(&header.descr)?;
    if header.fortran_order {
        // A rank-0 or rank-1 array is laid out the same either way, and numpy writes
        // those with `False`; anything else is really column-major.
        if header.shape.iter().filter(|&&dim| dim != 1).count() > 1 {
            return Err(NpyError::FortranOrder);
        }
    }
    let n_elems = n_elements(&header.shape).ok_or(NpyError::TooLarge)?;
    let expected = n_elems.checked_mul(elem.size_in_bytes()).ok_or(NpyError::TooLarge)?;
    if data.len() != expected {
        let ty =
            header.shape.iter().map(|dim| format!("[{dim}]")).collect::<String>() + elem.name();
        return Err(NpyError::DataLength { ty, expected, found: data.len() });
    }
    let data = match elem {
        ScalarType::I8 => ArrayData::I8(decode(data, i8::from_le_bytes)),
        ScalarType::I16 => ArrayData::I16(decode(data, i16::from_le_bytes)),
        ScalarType::U8 => ArrayData::U8(data.to_vec()),
        ScalarType::U16 => ArrayData::U16(decode(data, u16::from_le_bytes)),
        ScalarType::F16 => {
            ArrayData::F16(decode(data, |b| half::f16::from_bits(u16::from_le_bytes(b))))
        }
        ScalarType::I32 => ArrayData::I32(decode(data, i32::from_le_bytes)),
        ScalarType::I64 => ArrayData::I64(decode(data, i64::from_le_bytes)),
        ScalarType::U32 => ArrayData::U32(decode(data, u32::from_le_bytes)),
        ScalarType::U64 => ArrayData::U64(decode(data, u64::from_le_bytes)),
        ScalarType::F32 => ArrayData::F32(decode(data, f32::from_le_bytes)),
        ScalarType::F64 => ArrayData::F64(decode(data, f64::from_le_bytes)),
        ScalarType::Bool => {
            let mut bools = Vec::with_capacity(data.len());
            for (elem_idx, &byte) in data.iter().enumerate() {
                match byte {
                    0 => bools.push(false),
                    1 => bools.push(true),
                    _ => return Err(NpyError::InvalidBool { elem_idx, byte }),
                }
            }
            ArrayData::Bool(bools)
        }
    };
    Value::new(header.shape, data).map_err(|_| NpyError::TooLarge)
}

/// Writes `value` in `.npy` format, byte for byte as `np.save` would.
pub fn write_npy(value: &Value) -> Vec<u8> {
    let shape = value.shape();
    let shape_repr = match shape {
        [] => "()".to_owned(),
        [dim] => format!("({dim},)"),
        dims => {
            let dims: Vec<String> = dims.iter().map(usize::to_string).collect();
            format!("({})", dims.join(", "))
        }
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape_repr}, }}",
        dtype_descr(value.elem_type())
    );
    if let Some(first) = shape.first() {
        let n_digits = first.to_string().len();
        header.push_str(&" ".repeat(GROWTH_AXIS_MAX_DIGITS.saturating_sub(n_digits)));
    }
    // numpy counts the final newline in the header, then pads with spaces before it.
    let header_len = header.len() + 1;
    let use_v1 = {
        let pad = ARRAY_ALIGN - (MAGIC.len() + 2 + 2 + header_len) % ARRAY_ALIGN;
        header_len + pad <= usize::from(u16::MAX)
    };
    let prefix_len = if use_v1 { MAGIC.len() + 2 + 2 } else { MAGIC.len() + 2 + 4 };
    let pad = ARRAY_ALIGN - (prefix_len + header_len) % ARRAY_ALIGN;
    let total_header = header_len + pad;

    let data_len = value.len() * value.elem_type().size_in_bytes();
    let mut out = Vec::with_capacity(prefix_len + total_header + data_len);
    out.extend_from_slice(MAGIC);
    if use_v1 {
        out.extend_from_slice(&[1, 0]);
        let len = u16::try_from(total_header).expect("invariant: checked against u16::MAX");
        out.extend_from_slice(&len.to_le_bytes());
    } else {
        out.extend_from_slice(&[2, 0]);
        // A header of 4 GiB would need a shape of billions of dimensions.
        let len = u32::try_from(total_header).expect("invariant: a header is below 4 GiB");
        out.extend_from_slice(&len.to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    out.resize(out.len() + pad, b' ');
    out.push(b'\n');
    match value.data() {
        ArrayData::I8(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        ArrayData::I16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        ArrayData::U8(v) => out.extend_from_slice(v),
        ArrayData::U16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        ArrayData::F16(v) => {
            v.iter().for_each(|x| out.extend_from_slice(&x.to_bits().to_le_bytes()));
        }
        ArrayData::I32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        ArrayData::I64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        ArrayData::U32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        ArrayData::U64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        ArrayData::F32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        ArrayData::F64(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        ArrayData::Bool(v) => out.extend(v.iter().map(|&b| u8::from(b))),
    }
    out
}

fn dtype_descr(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::I8 => "|i1",
        ScalarType::I16 => "<i2",
        ScalarType::U8 => "|u1",
        ScalarType::U16 => "<u2",
        ScalarType::F16 => "<f2",
        ScalarType::I32 => "<i4",
        ScalarType::I64 => "<i8",
        ScalarType::U32 => "<u4",
        ScalarType::U64 => "<u8",
        ScalarType::F32 => "<f4",
        ScalarType::F64 => "<f8",
        ScalarType::Bool => "|b1",
    }
}

fn dtype_type(descr: &str) -> Result<ScalarType, NpyError> {
    let ty = match descr {
        // numpy writes the one-byte types with `|` (no byte order); `<` and `=` are
        // accepted as well, as for `bool`.
        "|i1" | "<i1" | ">i1" | "=i1" => ScalarType::I8,
        "|u1" | "<u1" | ">u1" | "=u1" => ScalarType::U8,
        "<i2" => ScalarType::I16,
        "<u2" => ScalarType::U16,
        "<f2" => ScalarType::F16,
        "<i4" => ScalarType::I32,
        "<i8" => ScalarType::I64,
        "<u4" => ScalarType::U32,
        "<u8" => ScalarType::U64,
        "<f4" => ScalarType::F32,
        "<f8" => ScalarType::F64,
        "|b1" | "<b1" | ">b1" | "=b1" => ScalarType::Bool,
        _ => return Err(NpyError::UnsupportedDtype(descr.to_owned())),
    };
    Ok(ty)
}

fn split<'b>(
    bytes: &'b [u8],
    at: usize,
    what: &'static str,
) -> Result<(&'b [u8], &'b [u8]), NpyError> {
    bytes.split_at_checked(at).ok_or(NpyError::Truncated(what))
}

fn take<'b, const N: usize>(
    bytes: &'b [u8],
    what: &'static str,
) -> Result<([u8; N], &'b [u8]), NpyError> {
    let (head, rest) = bytes.split_first_chunk::<N>().ok_or(NpyError::Truncated(what))?;
    Ok((*head, rest))
}

fn decode<const N: usize, T>(bytes: &[u8], from_le_bytes: fn([u8; N]) -> T) -> Vec<T> {
    bytes
        .chunks_exact(N)
        .map(|chunk| {
            let mut array = [0u8; N];
            array.copy_from_slice(chunk);
            from_le_bytes(array)
        })
        .collect()
}

struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<usize>,
}

/// A header dict's values: the subset of Python literals that `.npy` headers use.
enum PyValue {
    Str(String),
    Bool(bool),
    Tuple(Vec<usize>),
    Other,
}

fn parse_header(text: &str) -> Result<Header, NpyError> {
    let bad = |msg: &str| NpyError::BadHeader(msg.to_owned());
    let mut cursor = Cursor { text, pos: 0 };
    cursor.expect('{').ok_or_else(|| bad("expected a dict starting with `{`"))?;
    let (mut descr, mut fortran_order, mut shape) = (None, None, None);
    loop {
        if cursor.eat('}') {
            break;
        }
        let key = cursor.string().ok_or_else(|| bad("expected a quoted key"))?;
        cursor.expect(':').ok_or_else(|| bad("expected `:` after a key"))?;
        let value = cursor.value().ok_or_else(|| bad("could not read a value"))?;
        match (key.as_str(), value) {
            ("descr", PyValue::Str(s)) => descr = Some(s),
            ("descr", _) => return Err(NpyError::StructuredDtype),
            ("fortran_order", PyValue::Bool(b)) => fortran_order = Some(b),
            ("shape", PyValue::Tuple(dims)) => shape = Some(dims),
            ("fortran_order" | "shape", _) => {
                return Err(NpyError::BadHeader(format!("`{key}` has the wrong kind of value")));
            }
            _ => return Err(NpyError::BadHeader(format!("unknown key `{key}`"))),
        }
        if !cursor.eat(',') {
            cursor.expect('}').ok_or_else(|| bad("expected `,` or `}`"))?;
            break;
        }
    }
    if !cursor.text[cursor.pos..].trim().is_empty() {
        return Err(bad("unexpected text after the dict"));
    }
    Ok(Header {
        descr: descr.ok_or_else(|| bad("missing `descr`"))?,
        fortran_order: fortran_order.ok_or_else(|| bad("missing `fortran_order`"))?,
        shape: shape.ok_or_else(|| bad("missing `shape`"))?,
    })
}

struct Cursor<'t> {
    text: &'t str,
    pos: usize,
}

impl Cursor<'_> {
    fn skip_space(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, ch: char) -> bool {
        self.skip_space();
        if self.text[self.pos..].starts_with(ch) {
            self.pos += ch.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, ch: char) -> Option<()> {
        self.eat(ch).then_some(())
    }

    fn string(&mut self) -> Option<String> {
        self.skip_space();
        let rest = &self.text[self.pos..];
        let quote = rest.chars().next().filter(|&ch| ch == '\'' || ch == '"')?;
        let body = &rest[1..];
        let end = body.find(quote)?;
        let s = &body[..end];
        if s.contains('\\') {
            return None;
        }
        self.pos += 1 + end + 1;
        Some(s.to_owned())
    }

    fn word(&mut self) -> &str {
        self.skip_space();
        let rest = &self.text[self.pos..];
        let len =
            rest.find(|ch: char| !ch.is_ascii_alphanumeric() && ch != '_').unwrap_or(rest.len());
        self.pos += len;
        &rest[..len]
    }

    fn value(&mut self) -> Option<PyValue> {
        self.skip_space();
        let rest = &self.text[self.pos..];
        if rest.starts_with(['\'', '"']) {
            return self.string().map(PyValue::Str);
        }
        if rest.starts_with('[') {
            // A structured dtype's field list: skip to the matching bracket.
            let mut depth = 0usize;
            for (idx, ch) in rest.char_indices() {
                match ch {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            self.pos += idx + 1;
                            return Some(PyValue::Other);
                        }
                    }
                    _ => {}
                }
            }
            return None;
        }
        if self.eat('(') {
            let mut dims = Vec::new();
            loop {
                if self.eat(')') {
                    return Some(PyValue::Tuple(dims));
                }
                let digits = self.word();
                let digits = digits.strip_suffix('L').unwrap_or(digits);
                dims.push(digits.parse::<usize>().ok()?);
                if !self.eat(',') {
                    self.expect(')')?;
                    return Some(PyValue::Tuple(dims));
                }
            }
        }
        match self.word() {
            "True" => Some(PyValue::Bool(true)),
            "False" => Some(PyValue::Bool(false)),
            _ => None,
        }
    }
}
