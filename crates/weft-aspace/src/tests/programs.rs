//! Property tests over random programs.
