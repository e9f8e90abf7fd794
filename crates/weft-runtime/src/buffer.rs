//! Device buffers and the conversion of values to and from their bytes.
//!
//! A [`DeviceBuffer`] is untyped bytes on the device: the plan gives every access its
//! element type (an `Alloc`, a `Read`, an output), and a kernel parameter's C type
//! says how the kernel sees it. Elements are stored in the host's byte order (every
//! OpenCL device in use is little-endian, as the hosts are); `bool` is one byte, 0
//! or 1.
//!
//! OpenCL forbids buffers of size 0, so a buffer of no elements allocates one
//! element's worth of bytes but keeps its logical length 0 for bounds checks.

use ocl::flags::MemFlags;
use weft_plan::Elem;
use weft_values::{ArrayData, Scalar};

use crate::error::RunError;

/// A device buffer of `len_bytes` logical bytes.
#[derive(Debug)]
pub(crate) struct DeviceBuffer {
    pub(crate) buffer: ocl::Buffer<u8>,
    /// Bytes the plan asked for (the allocation may be larger, never smaller).
    pub(crate) len_bytes: usize,
}

/// Buffers freed by earlier runs of a plan, by allocated size, for the next run to
/// reuse (`weft bench`'s repetitions), as PyTorch's caching allocator and Futhark's
/// free list do. On a CPU device a fresh buffer's pages fault in on the kernel's
/// first write: a copy of 16 MB spent most of its time there.
#[derive(Default)]
pub(crate) struct BufferPool {
    free: std::cell::RefCell<rustc_hash::FxHashMap<usize, Vec<ocl::Buffer<u8>>>>,
}

impl BufferPool {
    /// Keeps `buffer` for a later allocation of its size.
    pub(crate) fn give(&self, buffer: DeviceBuffer) {
        self.free.borrow_mut().entry(buffer.buffer.len()).or_default().push(buffer.buffer);
    }

    /// How many buffers it keeps.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.free.borrow().values().map(Vec::len).sum()
    }

    fn take(&self, alloc_bytes: usize) -> Option<ocl::Buffer<u8>> {
        self.free.borrow_mut().get_mut(&alloc_bytes)?.pop()
    }
}

impl DeviceBuffer {
    /// Allocates `len_bytes` (contents undefined), reusing a buffer of `pool` of the
    /// same size when it has one. `what` names the buffer in an out-of-memory error.
    pub(crate) fn alloc_from(
        pool: Option<&BufferPool>,
        queue: &ocl::Queue,
        len_bytes: usize,
        elem_size: usize,
        max_alloc: Option<u64>,
        what: &str,
    ) -> Result<DeviceBuffer, RunError> {
        let alloc_bytes = len_bytes.max(elem_size).max(1);
        if let Some(buffer) = pool.and_then(|pool| pool.take(alloc_bytes)) {
            return Ok(DeviceBuffer { buffer, len_bytes });
        }
        Self::alloc(queue, len_bytes, elem_size, max_alloc, what)
    }

    /// Allocates `len_bytes` (contents undefined). `what` names the buffer in an
    /// out-of-memory error.
    pub(crate) fn alloc(
        queue: &ocl::Queue,
        len_bytes: usize,
        elem_size: usize,
        max_alloc: Option<u64>,
        what: &str,
    ) -> Result<DeviceBuffer, RunError> {
        let alloc_bytes = len_bytes.max(elem_size).max(1);
        let out_of_memory = || RunError::OutOfMemory {
            requested_bytes: u64::try_from(alloc_bytes).unwrap_or(u64::MAX),
            what: what.to_owned(),
            max_alloc_bytes: max_alloc,
        };
        if max_alloc.is_some_and(|max| u64::try_from(alloc_bytes).map_or(true, |n| n > max)) {
            return Err(out_of_memory());
        }
        let buffer = ocl::Buffer::<u8>::builder()
            .queue(queue.clone())
            .flags(MemFlags::new().read_write())
            .len(alloc_bytes)
            .build()
            .map_err(|error| {
                if is_out_of_memory(&error) {
                    out_of_memory()
                } else {
                    RunError::opencl(format!("allocating {what}"), error)
                }
            })?;
        Ok(DeviceBuffer { buffer, len_bytes })
    }

    /// Writes `bytes` at the start of the buffer.
    pub(crate) fn write(&self, bytes: &[u8], what: &str) -> Result<(), RunError> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.buffer.write(bytes).enq().map_err(|error| {
            if is_out_of_memory(&error) {
                RunError::OutOfMemory {
                    requested_bytes: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
                    what: what.to_owned(),
                    max_alloc_bytes: None,
                }
            } else {
                RunError::opencl(format!("uploading {what}"), error)
            }
        })
    }

    /// Reads `len` bytes from byte `offset` (both within the logical length).
    pub(crate) fn read(&self, offset: usize, len: usize) -> Result<Vec<u8>, RunError> {
        let mut bytes = vec![0u8; len];
        if len == 0 {
            return Ok(bytes);
        }
        self.buffer
            .read(&mut bytes)
            .offset(offset)
            .len(len)
            .enq()
            .map_err(|error| RunError::opencl("reading a buffer from the device", error))?;
        Ok(bytes)
    }
}

/// Whether an OpenCL error means the device ran out of memory.
pub(crate) fn is_out_of_memory(error: &ocl::Error) -> bool {
    use ocl::core::Status;
    matches!(
        error.api_status(),
        Some(
            Status::CL_MEM_OBJECT_ALLOCATION_FAILURE
                | Status::CL_OUT_OF_RESOURCES
                | Status::CL_OUT_OF_HOST_MEMORY
        )
    )
}

/// The bytes of `data` as the device stores them.
pub(crate) fn data_to_bytes(data: &ArrayData) -> Vec<u8> {
    match data {
        ArrayData::I8(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        ArrayData::I16(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        ArrayData::U8(v) => v.clone(),
        ArrayData::U16(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        // A `half` buffer holds the binary16 bits, which `vload_half` reads.
        ArrayData::F16(v) => v.iter().flat_map(|x| x.to_bits().to_ne_bytes()).collect(),
        ArrayData::I32(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        ArrayData::I64(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        ArrayData::U32(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        ArrayData::U64(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        ArrayData::F32(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        ArrayData::F64(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        ArrayData::Bool(v) => v.iter().map(|&b| u8::from(b)).collect(),
    }
}

/// The elements of `elem` in `bytes` (whose length is a multiple of its size).
pub(crate) fn bytes_to_data(elem: Elem, bytes: &[u8]) -> ArrayData {
    macro_rules! decode {
        ($variant:ident, $t:ty) => {
            ArrayData::$variant(
                bytes
                    .chunks_exact(std::mem::size_of::<$t>())
                    .map(|chunk| {
                        <$t>::from_ne_bytes(
                            chunk.try_into().expect("invariant: chunks_exact gives exact chunks"),
                        )
                    })
                    .collect(),
            )
        };
    }
    match elem {
        Elem::I8 => decode!(I8, i8),
        Elem::I16 => decode!(I16, i16),
        Elem::U8 => ArrayData::U8(bytes.to_vec()),
        Elem::U16 => decode!(U16, u16),
        Elem::F16 => match decode!(U16, u16) {
            ArrayData::U16(bits) => {
                ArrayData::F16(bits.into_iter().map(weft_values::f16::from_bits).collect())
            }
            other => other,
        },
        Elem::I32 => decode!(I32, i32),
        Elem::I64 => decode!(I64, i64),
        Elem::U32 => decode!(U32, u32),
        Elem::U64 => decode!(U64, u64),
        Elem::F32 => decode!(F32, f32),
        Elem::F64 => decode!(F64, f64),
        Elem::Bool => ArrayData::Bool(bytes.iter().map(|&b| b != 0).collect()),
    }
}

/// The one element of `elem` in `bytes`.
pub(crate) fn bytes_to_scalar(elem: Elem, bytes: &[u8]) -> Option<Scalar> {
    bytes_to_data(elem, bytes).get(0)
}

/// Sets kernel argument `index` to the scalar `value`, as the C type of `elem`.
pub(crate) fn set_scalar_arg(
    kernel: &ocl::core::Kernel,
    index: u32,
    value: Scalar,
) -> ocl::core::Result<()> {
    use ocl::core::{ArgVal, set_kernel_arg};
    match value {
        Scalar::I8(x) => set_kernel_arg(kernel, index, ArgVal::scalar(&x)),
        Scalar::I16(x) => set_kernel_arg(kernel, index, ArgVal::scalar(&x)),
        Scalar::U8(x) => set_kernel_arg(kernel, index, ArgVal::scalar(&x)),
        Scalar::U16(x) => set_kernel_arg(kernel, index, ArgVal::scalar(&x)),
        // Kernels compute `f16` in `float` (docs/backend.md): a scalar argument is
        // its exact `float`.
        Scalar::F16(x) => set_kernel_arg(kernel, index, ArgVal::scalar(&x.to_f32())),
        Scalar::I32(x) => set_kernel_arg(kernel, index, ArgVal::scalar(&x)),
        Scalar::I64(x) => set_kernel_arg(kernel, index, ArgVal::scalar(&x)),
        Scalar::U32(x) => set_kernel_arg(kernel, index, ArgVal::scalar(&x)),
        Scalar::U64(x) => set_kernel_arg(kernel, index, ArgVal::scalar(&x)),
        Scalar::F32(x) => set_kernel_arg(kernel, index, ArgVal::scalar(&x)),
        Scalar::F64(x) => set_kernel_arg(kernel, index, ArgVal::scalar(&x)),
        Scalar::Bool(x) => set_kernel_arg(kernel, index, ArgVal::scalar(&u8::from(x))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip() {
        let data = ArrayData::F32(vec![1.5, -0.0, f32::INFINITY]);
        assert_eq!(bytes_to_data(Elem::F32, &data_to_bytes(&data)), data);
        let data = ArrayData::Bool(vec![true, false, true]);
        assert_eq!(data_to_bytes(&data), vec![1, 0, 1]);
        assert_eq!(bytes_to_data(Elem::Bool, &[0, 2, 1]), ArrayData::Bool(vec![false, true, true]));
        assert_eq!(bytes_to_scalar(Elem::I64, &(-5i64).to_ne_bytes()), Some(Scalar::I64(-5)));
        let data = ArrayData::F16(
            [1.5f32, -0.0, 65504.0, f32::INFINITY].map(weft_values::f16::from_f32).to_vec(),
        );
        assert_eq!(bytes_to_data(Elem::F16, &data_to_bytes(&data)), data);
        assert_eq!(data_to_bytes(&data)[..2], 0x3e00u16.to_ne_bytes());
        let data = ArrayData::I8(vec![-128, 0, 127]);
        assert_eq!(bytes_to_data(Elem::I8, &data_to_bytes(&data)), data);
        assert_eq!(bytes_to_data(Elem::U8, &[255, 0]), ArrayData::U8(vec![255, 0]));
        let data = ArrayData::I16(vec![-32768, 7]);
        assert_eq!(bytes_to_data(Elem::I16, &data_to_bytes(&data)), data);
    }
}
