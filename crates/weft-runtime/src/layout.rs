//! Reading an output through its layout (ARCHITECTURE.md, "Layouts"): element
//! `[i0, .., ik]` of the output is element `offset + Σ ij·strides[j]` of the buffer.
//! Strides may be zero (a broadcast) or negative (a reversal).
//!
//! The runner reads the smallest range of the buffer that covers every element the
//! layout reaches, then gathers the elements in row-major order on the host.

use weft_values::ArrayData;

/// An output layout with every expression evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) offset: i64,
    pub(crate) strides: Vec<i64>,
    pub(crate) shape: Vec<usize>,
}

/// The elements of the buffer a non-empty layout reaches: `first..=last`, and the
/// position of every output element relative to `first`, in row-major order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gather {
    pub(crate) first: usize,
    pub(crate) last: usize,
    pub(crate) positions: Vec<usize>,
}

impl Layout {
    /// The number of elements, or `None` on overflow.
    pub(crate) fn n_elements(&self) -> Option<usize> {
        self.shape.iter().try_fold(1usize, |acc, &dim| acc.checked_mul(dim))
    }

    /// What to read from a buffer of `buffer_len` elements; `Ok(None)` for a layout
    /// of no elements; an error if the layout reaches outside the buffer.
    pub(crate) fn gather(&self, buffer_len: usize) -> Result<Option<Gather>, String> {
        let n = self.n_elements().ok_or("the output has too many elements")?;
        if n == 0 {
            return Ok(None);
        }
        // i128 cannot overflow here: at most 64 dimensions of products of two i64s.
        let mut low = i128::from(self.offset);
        let mut high = i128::from(self.offset);
        for (&stride, &dim) in self.strides.iter().zip(&self.shape) {
            let reach = i128::from(stride) * (dim as i128 - 1);
            if reach < 0 {
                low += reach;
            } else {
                high += reach;
            }
        }
        if low < 0 || high >= buffer_len as i128 {
            return Err(format!(
                "the output layout {{offset: {}; strides: {:?}; shape: {:?}}} reaches elements \
                 {low}..={high} of a buffer of {buffer_len} elements",
                self.offset, self.strides, self.shape
            ));
        }
        let first = usize::try_from(low).map_err(|_| "layout out of range")?;
        let last = usize::try_from(high).map_err(|_| "layout out of range")?;
        let contiguous = self.is_row_major();
        let positions = if contiguous {
            (0..n).collect()
        } else {
            let mut positions = Vec::with_capacity(n);
            let strides: Vec<i128> = self.strides.iter().map(|&s| i128::from(s)).collect();
            let mut index = vec![0usize; self.shape.len()];
            let base = i128::from(self.offset) - low;
            let mut address = base;
            for _ in 0..n {
                positions.push(usize::try_from(address).map_err(|_| "layout out of range")?);
                // Advance the odometer: the last dimension fastest.
                for dim_idx in (0..index.len()).rev() {
                    index[dim_idx] += 1;
                    address += strides[dim_idx];
                    if index[dim_idx] < self.shape[dim_idx] {
                        break;
                    }
                    address -= strides[dim_idx] * self.shape[dim_idx] as i128;
                    index[dim_idx] = 0;
                }
            }
            positions
        };
        Ok(Some(Gather { first, last, positions }))
    }

    /// Whether the elements are contiguous, in row-major order, from `offset`.
    fn is_row_major(&self) -> bool {
        let mut expected = 1i128;
        for (&stride, &dim) in self.strides.iter().zip(&self.shape).rev() {
            if dim > 1 && i128::from(stride) != expected {
                return false;
            }
            expected *= dim as i128;
        }
        true
    }
}

/// The elements of `covering` at `positions`, in order.
pub(crate) fn gather(covering: ArrayData, positions: &[usize]) -> Result<ArrayData, String> {
    let identity = positions.len() == covering.len()
        && positions.iter().enumerate().all(|(idx, &position)| idx == position);
    if identity {
        return Ok(covering);
    }
    macro_rules! pick {
        ($v:expr, $variant:ident) => {
            ArrayData::$variant(
                positions
                    .iter()
                    .map(|&position| $v.get(position).copied())
                    .collect::<Option<Vec<_>>>()
                    .ok_or("the layout reaches outside the elements read")?,
            )
        };
    }
    Ok(match &covering {
        ArrayData::I8(v) => pick!(v, I8),
        ArrayData::I16(v) => pick!(v, I16),
        ArrayData::U8(v) => pick!(v, U8),
        ArrayData::U16(v) => pick!(v, U16),
        ArrayData::F16(v) => pick!(v, F16),
        ArrayData::I32(v) => pick!(v, I32),
        ArrayData::I64(v) => pick!(v, I64),
        ArrayData::U32(v) => pick!(v, U32),
        ArrayData::U64(v) => pick!(v, U64),
        ArrayData::F32(v) => pick!(v, F32),
        ArrayData::F64(v) => pick!(v, F64),
        ArrayData::Bool(v) => pick!(v, Bool),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(offset: i64, strides: &[i64], shape: &[usize]) -> Layout {
        Layout { offset, strides: strides.to_vec(), shape: shape.to_vec() }
    }

    #[test]
    fn row_major_reads_a_contiguous_range() {
        let g = layout(2, &[3, 1], &[2, 3]).gather(10).unwrap().unwrap();
        assert_eq!((g.first, g.last), (2, 7));
        assert_eq!(g.positions, vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn transposed_and_reversed_layouts_gather() {
        // A 2x3 row-major buffer read transposed: shape [3, 2], strides [1, 3].
        let g = layout(0, &[1, 3], &[3, 2]).gather(6).unwrap().unwrap();
        assert_eq!(g.positions, vec![0, 3, 1, 4, 2, 5]);
        // Reversed: offset n-1, stride -1.
        let g = layout(4, &[-1], &[5]).gather(5).unwrap().unwrap();
        assert_eq!((g.first, g.last), (0, 4));
        assert_eq!(g.positions, vec![4, 3, 2, 1, 0]);
        // Broadcast: stride 0.
        let g = layout(1, &[0, 1], &[2, 2]).gather(3).unwrap().unwrap();
        assert_eq!((g.first, g.last), (1, 2));
        assert_eq!(g.positions, vec![0, 1, 0, 1]);
    }

    #[test]
    fn empty_and_out_of_range_layouts() {
        assert_eq!(layout(0, &[1], &[0]).gather(0), Ok(None));
        let error = layout(3, &[-1], &[5]).gather(5).unwrap_err();
        assert!(error.contains("reaches elements -1..=3"), "{error}");
    }

    #[test]
    fn gather_picks_positions() {
        let data = ArrayData::I64(vec![10, 11, 12]);
        assert_eq!(gather(data, &[2, 0, 0]), Ok(ArrayData::I64(vec![12, 10, 10])));
    }
}
