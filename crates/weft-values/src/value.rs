//! The value model: a [`Value`] is a regular array of any rank (rank 0 is a scalar)
//! with one element type, a shape, and its elements flat in row-major order.
//!
//! Entry points take and return these (LANGUAGE.md §3: "scalars, arrays of scalars,
//! or tuples of those"; a tuple is a sequence of values). The element type lives in
//! the [`ArrayData`] variant, so an empty array still has one.
//!
//! Invariant: the product of the shape's dimensions equals the data's length. Every
//! constructor checks it; there are no setters.

use std::fmt;

use crate::scalar::{Scalar, ScalarType};

/// Elements of a value, flat and row-major, stored per element type.
#[derive(Debug, Clone, PartialEq)]
pub enum ArrayData {
    I32(Vec<i32>),
    I64(Vec<i64>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    F16(Vec<half::f16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
}

impl ArrayData {
    /// An empty vector of the given element type with room for `capacity` elements.
    pub fn with_capacity(ty: ScalarType, capacity: usize) -> ArrayData {
        match ty {
            ScalarType::I32 => ArrayData::I32(Vec::with_capacity(capacity)),
            ScalarType::I64 => ArrayData::I64(Vec::with_capacity(capacity)),
            ScalarType::I8 => ArrayData::I8(Vec::with_capacity(capacity)),
            ScalarType::I16 => ArrayData::I16(Vec::with_capacity(capacity)),
            ScalarType::U8 => ArrayData::U8(Vec::with_capacity(capacity)),
            ScalarType::U16 => ArrayData::U16(Vec::with_capacity(capacity)),
            ScalarType::F16 => ArrayData::F16(Vec::with_capacity(capacity)),
            ScalarType::U32 => ArrayData::U32(Vec::with_capacity(capacity)),
            ScalarType::U64 => ArrayData::U64(Vec::with_capacity(capacity)),
            ScalarType::F32 => ArrayData::F32(Vec::with_capacity(capacity)),
            ScalarType::F64 => ArrayData::F64(Vec::with_capacity(capacity)),
            ScalarType::Bool => ArrayData::Bool(Vec::with_capacity(capacity)),
        }
    }

    /// [`ArrayData::with_capacity`], or `None` when the memory cannot be had (a huge
    /// random input must be an error, not an abort).
    pub fn try_with_capacity(ty: ScalarType, capacity: usize) -> Option<ArrayData> {
        fn reserve<T>(capacity: usize) -> Option<Vec<T>> {
            let mut v = Vec::new();
            v.try_reserve_exact(capacity).ok()?;
            Some(v)
        }
        Some(match ty {
            ScalarType::I32 => ArrayData::I32(reserve(capacity)?),
            ScalarType::I64 => ArrayData::I64(reserve(capacity)?),
            ScalarType::I8 => ArrayData::I8(reserve(capacity)?),
            ScalarType::I16 => ArrayData::I16(reserve(capacity)?),
            ScalarType::U8 => ArrayData::U8(reserve(capacity)?),
            ScalarType::U16 => ArrayData::U16(reserve(capacity)?),
            ScalarType::F16 => ArrayData::F16(reserve(capacity)?),
            ScalarType::U32 => ArrayData::U32(reserve(capacity)?),
            ScalarType::U64 => ArrayData::U64(reserve(capacity)?),
            ScalarType::F32 => ArrayData::F32(reserve(capacity)?),
            ScalarType::F64 => ArrayData::F64(reserve(capacity)?),
            ScalarType::Bool => ArrayData::Bool(reserve(capacity)?),
        })
    }

    /// The element type.
    pub fn elem_type(&self) -> ScalarType {
        match self {
            ArrayData::I32(_) => ScalarType::I32,
            ArrayData::I64(_) => ScalarType::I64,
            ArrayData::I8(_) => ScalarType::I8,
            ArrayData::I16(_) => ScalarType::I16,
            ArrayData::U8(_) => ScalarType::U8,
            ArrayData::U16(_) => ScalarType::U16,
            ArrayData::F16(_) => ScalarType::F16,
            ArrayData::U32(_) => ScalarType::U32,
            ArrayData::U64(_) => ScalarType::U64,
            ArrayData::F32(_) => ScalarType::F32,
            ArrayData::F64(_) => ScalarType::F64,
            ArrayData::Bool(_) => ScalarType::Bool,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            ArrayData::I32(v) => v.len(),
            ArrayData::I64(v) => v.len(),
            ArrayData::I8(v) => v.len(),
            ArrayData::I16(v) => v.len(),
            ArrayData::U8(v) => v.len(),
            ArrayData::U16(v) => v.len(),
            ArrayData::F16(v) => v.len(),
            ArrayData::U32(v) => v.len(),
            ArrayData::U64(v) => v.len(),
            ArrayData::F32(v) => v.len(),
            ArrayData::F64(v) => v.len(),
            ArrayData::Bool(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element at flat index `idx`, if in bounds.
    pub fn get(&self, idx: usize) -> Option<Scalar> {
        match self {
            ArrayData::I32(v) => v.get(idx).copied().map(Scalar::I32),
            ArrayData::I64(v) => v.get(idx).copied().map(Scalar::I64),
            ArrayData::I8(v) => v.get(idx).copied().map(Scalar::I8),
            ArrayData::I16(v) => v.get(idx).copied().map(Scalar::I16),
            ArrayData::U8(v) => v.get(idx).copied().map(Scalar::U8),
            ArrayData::U16(v) => v.get(idx).copied().map(Scalar::U16),
            ArrayData::F16(v) => v.get(idx).copied().map(Scalar::F16),
            ArrayData::U32(v) => v.get(idx).copied().map(Scalar::U32),
            ArrayData::U64(v) => v.get(idx).copied().map(Scalar::U64),
            ArrayData::F32(v) => v.get(idx).copied().map(Scalar::F32),
            ArrayData::F64(v) => v.get(idx).copied().map(Scalar::F64),
            ArrayData::Bool(v) => v.get(idx).copied().map(Scalar::Bool),
        }
    }

    /// Appends `scalar`; returns it back as `Err` if its type is not the element type.
    pub fn push(&mut self, scalar: Scalar) -> Result<(), Scalar> {
        match (self, scalar) {
            (ArrayData::I32(v), Scalar::I32(x)) => v.push(x),
            (ArrayData::I64(v), Scalar::I64(x)) => v.push(x),
            (ArrayData::I8(v), Scalar::I8(x)) => v.push(x),
            (ArrayData::I16(v), Scalar::I16(x)) => v.push(x),
            (ArrayData::U8(v), Scalar::U8(x)) => v.push(x),
            (ArrayData::U16(v), Scalar::U16(x)) => v.push(x),
            (ArrayData::F16(v), Scalar::F16(x)) => v.push(x),
            (ArrayData::U32(v), Scalar::U32(x)) => v.push(x),
            (ArrayData::U64(v), Scalar::U64(x)) => v.push(x),
            (ArrayData::F32(v), Scalar::F32(x)) => v.push(x),
            (ArrayData::F64(v), Scalar::F64(x)) => v.push(x),
            (ArrayData::Bool(v), Scalar::Bool(x)) => v.push(x),
            (_, scalar) => return Err(scalar),
        }
        Ok(())
    }

    /// The elements in order.
    pub fn iter(&self) -> impl Iterator<Item = Scalar> + '_ {
        (0..self.len()).filter_map(|idx| self.get(idx))
    }
}

macro_rules! array_data_from {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl From<Vec<$t>> for ArrayData {
            fn from(v: Vec<$t>) -> ArrayData {
                ArrayData::$variant(v)
            }
        }
    )*};
}

array_data_from!(i8 => I8, i16 => I16, u8 => U8, u16 => U16, half::f16 => F16, i32 => I32, i64 => I64, u32 => U32, u64 => U64, f32 => F32, f64 => F64, bool => Bool);

/// A scalar or a regular array of any rank.
#[derive(Debug, Clone, PartialEq)]
pub struct Value {
    // Invariant: `shape.iter().product() == data.len()` (without overflow).
    shape: Vec<usize>,
    data: ArrayData,
}

/// The shape of `data` does not fit the given shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("shape {shape} has {expected} elements, but {found} were given")]
    LengthMismatch { shape: ShapeText, expected: usize, found: usize },
    #[error("shape {shape} has more elements than fit in memory")]
    TooLarge { shape: ShapeText },
}

/// A shape printed as `[3][2]` (for error messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeText(pub Vec<usize>);

impl fmt::Display for ShapeText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("[] (a scalar)");
        }
        for dim in &self.0 {
            write!(f, "[{dim}]")?;
        }
        Ok(())
    }
}

/// The number of elements of `shape`, or `None` on overflow.
pub(crate) fn n_elements(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &dim| acc.checked_mul(dim))
}

impl Value {
    /// A value of the given shape; `data` holds its elements flat in row-major order.
    pub fn new(shape: Vec<usize>, data: impl Into<ArrayData>) -> Result<Value, ShapeError> {
        let data = data.into();
        let Some(expected) = n_elements(&shape) else {
            return Err(ShapeError::TooLarge { shape: ShapeText(shape) });
        };
        if expected != data.len() {
            return Err(ShapeError::LengthMismatch {
                shape: ShapeText(shape),
                expected,
                found: data.len(),
            });
        }
        Ok(Value { shape, data })
    }

    /// A one-dimensional array.
    pub fn vector(data: impl Into<ArrayData>) -> Value {
        let data = data.into();
        Value { shape: vec![data.len()], data }
    }

    /// A rank-0 value.
    pub fn scalar(scalar: impl Into<Scalar>) -> Value {
        let scalar = scalar.into();
        let mut data = ArrayData::with_capacity(scalar.ty(), 1);
        data.push(scalar).expect("invariant: data was made with the scalar's type");
        Value { shape: Vec::new(), data }
    }

    /// An array of the given shape with every element `fill`.
    pub fn filled(shape: Vec<usize>, fill: Scalar) -> Result<Value, ShapeError> {
        let Some(len) = n_elements(&shape) else {
            return Err(ShapeError::TooLarge { shape: ShapeText(shape) });
        };
        let data = match fill {
            Scalar::I32(x) => ArrayData::I32(vec![x; len]),
            Scalar::I64(x) => ArrayData::I64(vec![x; len]),
            Scalar::I8(x) => ArrayData::I8(vec![x; len]),
            Scalar::I16(x) => ArrayData::I16(vec![x; len]),
            Scalar::U8(x) => ArrayData::U8(vec![x; len]),
            Scalar::U16(x) => ArrayData::U16(vec![x; len]),
            Scalar::F16(x) => ArrayData::F16(vec![x; len]),
            Scalar::U32(x) => ArrayData::U32(vec![x; len]),
            Scalar::U64(x) => ArrayData::U64(vec![x; len]),
            Scalar::F32(x) => ArrayData::F32(vec![x; len]),
            Scalar::F64(x) => ArrayData::F64(vec![x; len]),
            Scalar::Bool(x) => ArrayData::Bool(vec![x; len]),
        };
        Ok(Value { shape, data })
    }

    /// The element type.
    pub fn elem_type(&self) -> ScalarType {
        self.data.elem_type()
    }

    /// The dimensions, outermost first; empty for a scalar.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The number of dimensions (0 for a scalar).
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The elements, flat and row-major.
    pub fn data(&self) -> &ArrayData {
        &self.data
    }

    /// Shape and data, giving up the invariant.
    pub fn into_parts(self) -> (Vec<usize>, ArrayData) {
        (self.shape, self.data)
    }

    /// Number of elements (1 for a scalar).
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether some dimension is 0.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The scalar, if this value has rank 0.
    pub fn as_scalar(&self) -> Option<Scalar> {
        if self.shape.is_empty() { self.data.get(0) } else { None }
    }

    /// The element at a full multi-index (one index per dimension), if in bounds.
    pub fn get(&self, index: &[usize]) -> Option<Scalar> {
        self.data.get(self.flat_index(index)?)
    }

    /// The element at flat row-major index `idx`, if in bounds.
    pub fn get_flat(&self, idx: usize) -> Option<Scalar> {
        self.data.get(idx)
    }

    /// The flat row-major position of a multi-index, if it is in bounds.
    pub fn flat_index(&self, index: &[usize]) -> Option<usize> {
        if index.len() != self.shape.len() {
            return None;
        }
        let mut flat = 0usize;
        for (&idx, &dim) in index.iter().zip(&self.shape) {
            if idx >= dim {
                return None;
            }
            // In bounds, so no overflow: the result is below `len()`.
            flat = flat * dim + idx;
        }
        Some(flat)
    }

    /// The multi-index of flat row-major position `idx` (which need not be in bounds
    /// of the data for an empty array; the caller passes a valid position).
    pub fn unflatten_index(&self, mut idx: usize) -> Vec<usize> {
        let mut index = vec![0; self.shape.len()];
        for (slot, &dim) in index.iter_mut().zip(&self.shape).rev() {
            if dim != 0 {
                *slot = idx % dim;
                idx /= dim;
            }
        }
        index
    }

    /// The value's type: element type and shape.
    pub fn value_type(&self) -> ValueType {
        ValueType { elem: self.elem_type(), shape: self.shape.clone() }
    }
}

/// The type of a concrete value: an element type and a shape (all sizes known).
/// Prints as in Weft source: `f32`, `[3][2]i64`, `[0]bool`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ValueType {
    /// The element type (the whole type, for a scalar).
    pub elem: ScalarType,
    /// Dimensions, outermost first; empty for a scalar.
    pub shape: Vec<usize>,
}

impl ValueType {
    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for dim in &self.shape {
            write!(f, "[{dim}]")?;
        }
        f.write_str(self.elem.name())
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::text::print::write_value(f, self)
    }
}

impl From<Scalar> for Value {
    fn from(scalar: Scalar) -> Value {
        Value::scalar(scalar)
    }
}
