//! The LMAD algebra: linear memory access descriptors and the layout operations on them
//! (seed 004, paper §3.1, eq. 1-3; the operations the paper leaves out follow the digest
//! `reference/004-lmad.md` §3.3 and Futhark's `LMAD.hs`).
//!
//! An LMAD `{offset: o; strides: [s_1, …, s_q]; shape: [n_1, …, n_q]}` maps an index
//! `(i_1, …, i_q)` with `0 <= i_k < n_k` to the element offset `o + Σ i_k·s_k` in a flat
//! memory block. Everything is 0-based and counts elements, not bytes (digest §11, P1 and
//! D6). Components are symbolic [`Size`]s (digest P8: any expression, not only variables),
//! printed as Futhark prints them: `{offset: 0; strides: [m, 1]; shape: [n, m]}`.
//!
//! Representability, which decides where the memory IR must copy:
//!
//! - always one LMAD: row-major layouts, full indexing, slices with any start, length and
//!   step (negative or zero steps too), fixing an index, permutations and transposition,
//!   reversal, replication (a stride-0 dimension; the result is read-only because it is not
//!   injective), unflattening and splitting a dimension, and shifting into another block;
//! - one LMAD only under a condition, so these return `Option` and `None` means "copy":
//!   merging dimensions ([`Lmad::merge_dims`], [`Lmad::flatten`]), general reshapes
//!   ([`Lmad::reshape`]), and composition with or rebasing onto another LMAD
//!   ([`Lmad::compose`], [`Lmad::rebase`]). The conditions are decided on normal forms of
//!   sizes: a condition that cannot be proved symbolically counts as false.
//!
//! The paper's printed `slice` and `nest` helpers are off by one (digest P2); nothing here
//! uses them, and the tests check every operation against a materialised reference array.

#[cfg(test)]
mod tests;

use std::fmt::{self, Debug, Display};
use std::hash::Hash;

use weft_size::Size;

/// A linear memory access descriptor: the layout of an array in its memory block.
///
/// Any offset, strides and shape form a valid LMAD; whether it fits its block
/// (the span lies in `[0, block size)`) and whether it is injective (needed to write
/// through it) are properties of the use, not of the value.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Lmad<V> {
    /// The element offset of index `(0, …, 0)`.
    pub offset: Size<V>,
    /// One entry per dimension, outermost first. An empty list is a 0-dimensional LMAD,
    /// the location of a single scalar.
    pub dims: Vec<LmadDim<V>>,
}

/// One dimension of an [`Lmad`].
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct LmadDim<V> {
    /// The distance in elements between consecutive indices of this dimension (the paper's
    /// "total stride"); may be negative (reversed) or zero (replicated).
    pub stride: Size<V>,
    /// The number of indices of this dimension, equal to the array's size in it.
    pub shape: Size<V>,
}

/// How [`Lmad::slice`] treats one dimension.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum DimSlice<V> {
    /// Fix the index to this value: the dimension disappears.
    Fix(Size<V>),
    /// Keep indices `start, start + step, …, start + (len - 1)·step`.
    Range {
        /// The first index kept.
        start: Size<V>,
        /// How many indices are kept: the new size of the dimension.
        len: Size<V>,
        /// The distance between kept indices; negative reverses, zero repeats `start`.
        step: Size<V>,
    },
}

impl<V: Clone + Ord + Hash + Debug> Lmad<V> {
    /// The LMAD with these components.
    pub fn new(offset: Size<V>, dims: Vec<LmadDim<V>>) -> Self {
        Lmad { offset, dims }
    }

    /// The dense row-major layout of `shape` at offset 0 (the paper's `R(n_1, …, n_q)`):
    /// the last dimension has stride 1, each other the product of the sizes inside it.
    pub fn row_major(shape: &[Size<V>]) -> Self {
        Lmad::row_major_at(Size::zero(), shape)
    }

    /// The dense row-major layout of `shape` starting at `offset`.
    pub fn row_major_at(offset: Size<V>, shape: &[Size<V>]) -> Self {
        let mut dims = Vec::with_capacity(shape.len());
        let mut stride = Size::one();
        for size in shape.iter().rev() {
            dims.push(LmadDim { stride: stride.clone(), shape: size.clone() });
            stride = stride.mul(size);
        }
        dims.reverse();
        Lmad { offset, dims }
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The sizes of the dimensions, outermost first.
    pub fn shape(&self) -> Vec<Size<V>> {
        self.dims.iter().map(|dim| dim.shape.clone()).collect()
    }

    /// The strides of the dimensions, outermost first.
    pub fn strides(&self) -> Vec<Size<V>> {
        self.dims.iter().map(|dim| dim.stride.clone()).collect()
    }

    /// The number of elements, `Π shape`.
    pub fn n_elements(&self) -> Size<V> {
        self.dims.iter().fold(Size::one(), |acc, dim| acc.mul(&dim.shape))
    }

    /// The flat element address of a full index (paper eq. 1): `offset + Σ i_k·stride_k`.
    /// Bounds are not checked (digest D7: bounds checks are explicit statements).
    ///
    /// # Panics
    ///
    /// If `idx` does not have one entry per dimension (a compiler bug).
    pub fn index(&self, idx: &[Size<V>]) -> Size<V> {
        assert_eq!(idx.len(), self.rank(), "invariant: full index has one entry per dimension");
        self.dims
            .iter()
            .zip(idx)
            .fold(self.offset.clone(), |acc, (dim, i)| acc.add(&i.mul(&dim.stride)))
    }

    /// Slices every dimension (paper eq. 2, generalised as Futhark's `LMAD.slice`): a range
    /// moves the offset to its start and scales the stride by its step; a fixed index moves
    /// the offset and drops the dimension. Always representable.
    ///
    /// # Panics
    ///
    /// If `slices` does not have one entry per dimension (a compiler bug).
    pub fn slice(&self, slices: &[DimSlice<V>]) -> Self {
        assert_eq!(slices.len(), self.rank(), "invariant: slice has one entry per dimension");
        let mut offset = self.offset.clone();
        let mut dims = Vec::with_capacity(self.rank());
        for (dim, slice) in self.dims.iter().zip(slices) {
            match slice {
                DimSlice::Fix(i) => offset = offset.add(&i.mul(&dim.stride)),
                DimSlice::Range { start, len, step } => {
                    offset = offset.add(&start.mul(&dim.stride));
                    dims.push(LmadDim { stride: step.mul(&dim.stride), shape: len.clone() });
                }
            }
        }
        Lmad { offset, dims }
    }

    /// Slices one dimension to `start, start + step, …` (`len` indices), leaving the others.
    pub fn slice_dim(
        &self,
        dim_idx: usize,
        start: &Size<V>,
        len: &Size<V>,
        step: &Size<V>,
    ) -> Self {
        self.check_dim(dim_idx);
        let mut res = self.clone();
        res.offset = res.offset.add(&start.mul(&self.dims[dim_idx].stride));
        res.dims[dim_idx] =
            LmadDim { stride: step.mul(&self.dims[dim_idx].stride), shape: len.clone() };
        res
    }

    /// Fixes the index of dimension `dim_idx` to `i`, dropping the dimension (Futhark's
    /// `DimFix`). Always representable.
    pub fn fix(&self, dim_idx: usize, i: &Size<V>) -> Self {
        self.check_dim(dim_idx);
        let mut res = self.clone();
        let dim = res.dims.remove(dim_idx);
        res.offset = res.offset.add(&i.mul(&dim.stride));
        res
    }

    /// Fixes the outermost index (the paper's `index_f`, eq. 3): the layout of row `i`.
    pub fn index_outer(&self, i: &Size<V>) -> Self {
        self.fix(0, i)
    }

    /// Permutes the dimensions: dimension `k` of the result is dimension `perm[k]` of `self`
    /// (Futhark's `rearrangeShape`). Always representable.
    ///
    /// # Panics
    ///
    /// If `perm` is not a permutation of `0..rank` (a compiler bug).
    pub fn permute(&self, perm: &[usize]) -> Self {
        let mut seen = vec![false; self.rank()];
        for &dim_idx in perm {
            assert!(
                dim_idx < seen.len() && !std::mem::replace(&mut seen[dim_idx], true),
                "invariant: {perm:?} is a permutation of 0..{}",
                self.rank()
            );
        }
        assert_eq!(perm.len(), self.rank(), "invariant: permutation covers every dimension");
        Lmad {
            offset: self.offset.clone(),
            dims: perm.iter().map(|&k| self.dims[k].clone()).collect(),
        }
    }

    /// Swaps the two outermost dimensions (Weft's `transpose`; the paper's 2-D transpose).
    pub fn transpose(&self) -> Self {
        assert!(self.rank() >= 2, "invariant: transpose needs two dimensions");
        let mut perm: Vec<usize> = (0..self.rank()).collect();
        perm.swap(0, 1);
        self.permute(&perm)
    }

    /// Reverses dimension `dim_idx`: the offset moves to its last index and the stride is
    /// negated. Always representable.
    pub fn reverse(&self, dim_idx: usize) -> Self {
        self.check_dim(dim_idx);
        let dim = &self.dims[dim_idx];
        let last = dim.shape.sub(&Size::one());
        self.slice_dim(dim_idx, &last, &dim.shape.clone(), &Size::constant(-1))
    }

    /// Inserts a new dimension of size `n` and stride 0 before dimension `dim_idx`
    /// (`dim_idx == rank` appends): every index along it reads the same elements. Always
    /// representable, but not injective when `n > 1`, so only a read-only view.
    pub fn replicate(&self, dim_idx: usize, n: &Size<V>) -> Self {
        assert!(dim_idx <= self.rank(), "invariant: dimension {dim_idx} in 0..={}", self.rank());
        let mut res = self.clone();
        res.dims.insert(dim_idx, LmadDim { stride: Size::zero(), shape: n.clone() });
        res
    }

    /// Splits dimension `dim_idx` into `[outer][inner]`: `(outer : inner·s), (inner : s)`.
    /// Always representable; the caller guarantees `outer·inner` is the dimension's size
    /// (the type checker does, for Weft's `unflatten`).
    pub fn unflatten(&self, dim_idx: usize, outer: &Size<V>, inner: &Size<V>) -> Self {
        self.check_dim(dim_idx);
        let mut res = self.clone();
        let stride = self.dims[dim_idx].stride.clone();
        res.dims[dim_idx] = LmadDim { stride: inner.mul(&stride), shape: outer.clone() };
        res.dims.insert(dim_idx + 1, LmadDim { stride, shape: inner.clone() });
        res
    }

    /// Splits dimension `dim_idx` of size `n` into `[n/k][k]` (an exact division). Always
    /// representable.
    pub fn split(&self, dim_idx: usize, k: &Size<V>) -> Self {
        self.check_dim(dim_idx);
        let outer = self.dims[dim_idx].shape.div_exact(k);
        self.unflatten(dim_idx, &outer, k)
    }

    /// Merges dimensions `dim_idx` and `dim_idx + 1` into one of size `n_d·n_{d+1}`.
    /// Representable iff `s_d = n_{d+1}·s_{d+1}` (the outer dimension steps over exactly one
    /// inner run), or either dimension has size 1; otherwise `None`, and the caller copies.
    pub fn merge_dims(&self, dim_idx: usize) -> Option<Self> {
        assert!(dim_idx + 1 < self.rank(), "invariant: dimensions {dim_idx} and {dim_idx}+1 exist");
        let (outer, inner) = (&self.dims[dim_idx], &self.dims[dim_idx + 1]);
        let stride = if inner.shape == Size::one() {
            outer.stride.clone()
        } else if outer.shape == Size::one() || outer.stride == inner.shape.mul(&inner.stride) {
            inner.stride.clone()
        } else {
            return None;
        };
        let mut res = self.clone();
        res.dims.remove(dim_idx + 1);
        res.dims[dim_idx] = LmadDim { stride, shape: outer.shape.mul(&inner.shape) };
        Some(res)
    }

    /// Merges the two outermost dimensions (Weft's `flatten`); see [`Lmad::merge_dims`].
    pub fn flatten(&self) -> Option<Self> {
        self.merge_dims(0)
    }

    /// Reshapes to `new_shape` (which must have as many elements), viewing the elements in
    /// row-major order of both shapes. Ignoring dimensions of size 1, both shapes are cut
    /// into the shortest runs of dimensions whose products are equal; the result is one LMAD
    /// iff each run of old dimensions is mergeable (every adjacent pair meets the
    /// [`Lmad::merge_dims`] condition), and then each run is split into its new dimensions.
    /// `None` means the reshape needs a copy, or that the runs could not be matched
    /// symbolically (products are compared as normal forms, constants by value, and symbolic
    /// products grow on the side whose product divides the other's).
    pub fn reshape(&self, new_shape: &[Size<V>]) -> Option<Self> {
        let one = Size::one();
        let old: Vec<&LmadDim<V>> = self.dims.iter().filter(|dim| dim.shape != one).collect();
        let new_idxs: Vec<usize> = (0..new_shape.len()).filter(|&k| new_shape[k] != one).collect();
        let mut new_strides: Vec<Option<Size<V>>> = vec![None; new_shape.len()];
        let (mut old_idx, mut new_idx) = (0, 0);
        while old_idx < old.len() || new_idx < new_idxs.len() {
            let (old_start, new_start) = (old_idx, new_idx);
            let mut old_product = old.get(old_idx)?.shape.clone();
            let mut new_product = new_shape[*new_idxs.get(new_idx)?].clone();
            old_idx += 1;
            new_idx += 1;
            while old_product != new_product {
                if grow_old_side(&old_product, &new_product)? {
                    old_product = old_product.mul(&old.get(old_idx)?.shape);
                    old_idx += 1;
                } else {
                    new_product = new_product.mul(&new_shape[*new_idxs.get(new_idx)?]);
                    new_idx += 1;
                }
            }
            let run = &old[old_start..old_idx];
            if !run.windows(2).all(|pair| pair[0].stride == pair[1].shape.mul(&pair[1].stride)) {
                return None;
            }
            let mut stride = run.last()?.stride.clone();
            for &k in new_idxs[new_start..new_idx].iter().rev() {
                new_strides[k] = Some(stride.clone());
                stride = stride.mul(&new_shape[k]);
            }
        }
        // Dimensions of size 1 take the stride a row-major layout would give them; any
        // stride is correct, since their only index is 0.
        let mut dims = Vec::with_capacity(new_shape.len());
        let mut next_stride = Size::one();
        for (shape, stride) in new_shape.iter().zip(new_strides).rev() {
            let stride = stride.unwrap_or(next_stride);
            next_stride = stride.mul(shape);
            dims.push(LmadDim { stride, shape: shape.clone() });
        }
        dims.reverse();
        Some(Lmad { offset: self.offset.clone(), dims })
    }

    /// Composition: `self` addresses the elements of an array laid out by `inner`, counted
    /// in row-major order of `inner`'s shape; the result maps `self`'s index straight to
    /// `inner`'s block: `result(i) = inner(unflatten(self(i)))`. Representable (`Some`) when
    /// `inner` can be flattened to one dimension (then every `self` works), or when `self` is
    /// the dense row-major layout of a shape with as many elements (then it is a reshape of
    /// `inner`). Otherwise `None`: the general case needs a list of LMADs (old Futhark's
    /// `IxFun`) and is not implemented.
    pub fn compose(&self, inner: &Lmad<V>) -> Option<Self> {
        if let Some(flat) = inner.reshape(&[inner.n_elements()]) {
            let [dim] = flat.dims.as_slice() else {
                unreachable!("a reshape to one dimension has one dimension")
            };
            return Some(Lmad {
                offset: flat.offset.add(&self.offset.mul(&dim.stride)),
                dims: self
                    .dims
                    .iter()
                    .map(|d| LmadDim { stride: d.stride.mul(&dim.stride), shape: d.shape.clone() })
                    .collect(),
            });
        }
        if self.is_direct() && self.n_elements() == inner.n_elements() {
            return inner.reshape(&self.shape());
        }
        None
    }

    /// Rebases a view: `self` is a layout in a block that holds one dense row-major array of
    /// `new_base`'s shape; the result is the same view when that array instead lives in
    /// another block with layout `new_base` (old Futhark's `rebase new_base ixfun`, used by
    /// memory short-circuiting to construct an array in place inside its destination). The
    /// same as [`Lmad::compose`] with `new_base` inside, so representable under the same
    /// conditions.
    pub fn rebase(&self, new_base: &Lmad<V>) -> Option<Self> {
        self.compose(new_base)
    }

    /// Moves the layout `by` elements further into its block, or into another block that
    /// holds this one's contents at offset `by`. Always representable.
    pub fn shift(&self, by: &Size<V>) -> Self {
        Lmad { offset: self.offset.add(by), dims: self.dims.clone() }
    }

    /// Substitutes size variables in every component (see [`Size::substitute`]), e.g. to
    /// instantiate existential LMAD components or to evaluate a layout for given sizes.
    pub fn substitute(&self, f: &mut impl FnMut(&V) -> Option<Size<V>>) -> Self {
        Lmad {
            offset: self.offset.substitute(f),
            dims: self
                .dims
                .iter()
                .map(|dim| LmadDim {
                    stride: dim.stride.substitute(f),
                    shape: dim.shape.substitute(f),
                })
                .collect(),
        }
    }

    /// Whether this is the dense row-major layout of its shape at offset 0 (Futhark's
    /// `isDirect`), as required of program results. Decided on normal forms.
    pub fn is_direct(&self) -> bool {
        *self == Lmad::row_major(&self.shape())
    }

    /// Displays this LMAD with size variables named by `name`.
    pub fn display<'a>(&'a self, name: &'a dyn Fn(&V) -> String) -> LmadDisplay<'a, V> {
        LmadDisplay { lmad: self, name }
    }

    fn check_dim(&self, dim_idx: usize) {
        assert!(dim_idx < self.rank(), "invariant: dimension {dim_idx} in 0..{}", self.rank());
    }
}

/// Which side of a run to extend while matching old and new dimensions in a reshape:
/// `Some(true)` for the old side, `Some(false)` for the new side, `None` if undecidable.
fn grow_old_side<V: Clone + Ord + Hash + Debug>(old: &Size<V>, new: &Size<V>) -> Option<bool> {
    if let (Some(old), Some(new)) = (old.as_constant(), new.as_constant()) {
        return Some(old < new);
    }
    if new.checked_div(old).is_some() {
        Some(true)
    } else if old.checked_div(new).is_some() {
        Some(false)
    } else {
        None
    }
}

/// An [`Lmad`] with a way to name size variables; see [`Lmad::display`]. Prints
/// `{offset: 0; strides: [m, 1]; shape: [n, m]}`.
pub struct LmadDisplay<'a, V> {
    lmad: &'a Lmad<V>,
    name: &'a dyn Fn(&V) -> String,
}

impl<V: Clone + Ord + Hash + Debug> Display for LmadDisplay<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name;
        write!(f, "{{offset: {}; strides: [", self.lmad.offset.display(name))?;
        for (dim_idx, dim) in self.lmad.dims.iter().enumerate() {
            let sep = if dim_idx == 0 { "" } else { ", " };
            write!(f, "{sep}{}", dim.stride.display(name))?;
        }
        f.write_str("]; shape: [")?;
        for (dim_idx, dim) in self.lmad.dims.iter().enumerate() {
            let sep = if dim_idx == 0 { "" } else { ", " };
            write!(f, "{sep}{}", dim.shape.display(name))?;
        }
        f.write_str("]}")
    }
}

impl<V: Clone + Ord + Hash + Debug + Display> Display for Lmad<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.display(&|v: &V| v.to_string()).fmt(f)
    }
}
