//! Array layouts shared by the host and kernel levels: a memory array is a buffer
//! and an LMAD (offset, strides, shape; seed 004) over index expressions of either
//! level, and views are LMAD transformations that never copy.

use weft_plan::{BinOp, Elem, Expr};

use crate::imp::{CExpr, COp};

/// Index arithmetic common to host expressions and kernel expressions.
pub(crate) trait IExpr: Clone + PartialEq + std::fmt::Debug {
    fn int(v: i64) -> Self;
    fn as_int(&self) -> Option<i64>;
    fn add(a: Self, b: Self) -> Self;
    fn sub(a: Self, b: Self) -> Self;
    fn mul(a: Self, b: Self) -> Self;
    fn div(a: Self, b: Self) -> Self;
}

impl IExpr for CExpr {
    fn int(v: i64) -> Self {
        CExpr::Int(v)
    }
    fn as_int(&self) -> Option<i64> {
        CExpr::as_int(self)
    }
    fn add(a: Self, b: Self) -> Self {
        CExpr::add(a, b)
    }
    fn sub(a: Self, b: Self) -> Self {
        CExpr::sub(a, b)
    }
    fn mul(a: Self, b: Self) -> Self {
        CExpr::mul(a, b)
    }
    fn div(a: Self, b: Self) -> Self {
        CExpr::bin(COp::Div, a, b)
    }
}

impl IExpr for Expr {
    fn int(v: i64) -> Self {
        Expr::I64(v)
    }
    fn as_int(&self) -> Option<i64> {
        match self {
            Expr::I64(v) => Some(*v),
            _ => None,
        }
    }
    fn add(a: Self, b: Self) -> Self {
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) => Expr::I64(x.wrapping_add(y)),
            (Some(0), _) => b,
            (_, Some(0)) => a,
            _ => Expr::bin(BinOp::Add, a, b),
        }
    }
    fn sub(a: Self, b: Self) -> Self {
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) => Expr::I64(x.wrapping_sub(y)),
            (_, Some(0)) => a,
            _ if a == b => Expr::I64(0),
            _ => Expr::bin(BinOp::Sub, a, b),
        }
    }
    fn mul(a: Self, b: Self) -> Self {
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) => Expr::I64(x.wrapping_mul(y)),
            (Some(1), _) => b,
            (_, Some(1)) => a,
            (Some(0), _) | (_, Some(0)) => Expr::I64(0),
            _ => Expr::bin(BinOp::Mul, a, b),
        }
    }
    fn div(a: Self, b: Self) -> Self {
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) if y != 0 => Expr::I64(x.wrapping_div(y)),
            (_, Some(1)) => a,
            _ => Expr::bin(BinOp::Div, a, b),
        }
    }
}

/// An array of scalars in memory: `buf` holds element `[i0, .., ik]` at
/// `offset + Σ ij·strides[j]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mem<E, B> {
    pub(crate) buf: B,
    pub(crate) elem: Elem,
    pub(crate) offset: E,
    pub(crate) strides: Vec<E>,
    pub(crate) shape: Vec<E>,
}

/// A view: a change of layout that costs nothing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum View<E> {
    /// Fixes dimension `dim` at `index` (drops it).
    Fix { dim: usize, index: E },
    /// Elements `start, start + stride, ..` (`len` of them) of dimension `dim`.
    Slice { dim: usize, start: E, len: E, stride: E },
    /// Swaps the two outer dimensions.
    Transpose,
    /// Splits the outer dimension into `rows` of `cols`.
    Unflatten { rows: E, cols: E },
    /// Merges the two outer dimensions.
    Flatten,
}

/// Row-major strides for a shape.
pub(crate) fn row_major<E: IExpr>(shape: &[E]) -> Vec<E> {
    let mut strides = vec![E::int(1); shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = E::mul(strides[d + 1].clone(), shape[d + 1].clone());
    }
    strides
}

/// The shape after a view.
pub(crate) fn view_shape<E: IExpr>(shape: &[E], view: &View<E>) -> Vec<E> {
    let mut shape = shape.to_vec();
    match view {
        View::Fix { dim, .. } => {
            shape.remove(*dim);
        }
        View::Slice { dim, len, .. } => shape[*dim] = len.clone(),
        View::Transpose => shape.swap(0, 1),
        View::Unflatten { rows, cols } => {
            shape.splice(0..1, [rows.clone(), cols.clone()]);
        }
        View::Flatten => {
            let merged = E::mul(shape[0].clone(), shape[1].clone());
            shape.splice(0..2, [merged]);
        }
    }
    shape
}

impl<E: IExpr, B: Clone> Mem<E, B> {
    /// A fresh row-major array.
    pub(crate) fn fresh(buf: B, elem: Elem, shape: Vec<E>) -> Self {
        Mem { buf, elem, offset: E::int(0), strides: row_major(&shape), shape }
    }

    /// The layout after a view, or `None` when the view is not an LMAD of this layout
    /// (flattening dimensions that are not contiguous).
    pub(crate) fn view(&self, view: &View<E>) -> Option<Self> {
        let mut out = self.clone();
        match view {
            View::Fix { dim, index } => {
                out.offset = E::add(out.offset, E::mul(index.clone(), out.strides[*dim].clone()));
                out.strides.remove(*dim);
                out.shape.remove(*dim);
            }
            View::Slice { dim, start, len, stride } => {
                out.offset = E::add(out.offset, E::mul(start.clone(), out.strides[*dim].clone()));
                out.strides[*dim] = E::mul(out.strides[*dim].clone(), stride.clone());
                out.shape[*dim] = len.clone();
            }
            View::Transpose => {
                out.strides.swap(0, 1);
                out.shape.swap(0, 1);
            }
            View::Unflatten { rows, cols } => {
                let s = out.strides[0].clone();
                out.strides.splice(0..1, [E::mul(s.clone(), cols.clone()), s]);
                out.shape.splice(0..1, [rows.clone(), cols.clone()]);
            }
            View::Flatten => {
                let inner = E::mul(out.strides[1].clone(), out.shape[1].clone());
                // A dimension of extent 1 may have any stride.
                let contiguous = inner == out.strides[0] || out.shape[0].as_int() == Some(1);
                if !contiguous {
                    return None;
                }
                let merged = E::mul(out.shape[0].clone(), out.shape[1].clone());
                let stride = out.strides[1].clone();
                out.strides.splice(0..2, [stride]);
                out.shape.splice(0..2, [merged]);
            }
        }
        Some(out)
    }

    /// The address of a full index.
    pub(crate) fn address(&self, index: &[E]) -> E {
        let mut addr = self.offset.clone();
        for (i, s) in index.iter().zip(&self.strides) {
            addr = E::add(addr, E::mul(i.clone(), s.clone()));
        }
        addr
    }

    /// Whether this is a fresh row-major layout (offset 0).
    pub(crate) fn is_row_major(&self) -> bool {
        self.offset.as_int() == Some(0) && self.strides == row_major(&self.shape)
    }
}
