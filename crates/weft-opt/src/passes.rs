//! The middle end's passes: on the core IR (simplification, inlining, interchange) and from the
//! core IR to the GPU IR (flattening), then on the GPU IR (fusion, coalescing).

pub mod array_reductions;
pub mod coalesce;
pub mod collapse;
pub(crate) mod copy;
pub(crate) mod facts;
pub mod flatten;
pub mod fuse;
pub mod fuse_seq;
pub(crate) mod host;
pub mod inline;
pub mod interchange;
pub mod local_memory;
pub mod products;
pub mod rows;
pub mod simplify;
pub mod simplify_gpu;
pub mod split_reduction;
pub(crate) mod subst;
