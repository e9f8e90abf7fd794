//! Tests live in weft-opencl (the printed kernels) and the CLI (runs on POCL).
