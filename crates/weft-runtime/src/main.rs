//! The `weft-runner` binary (in progress).

fn main() {}
