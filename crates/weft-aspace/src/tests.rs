//! Tests: worked examples as snapshots, property tests of the unifier and of whole programs.

mod diagnostics;
mod examples;
mod printing;
mod programs;
mod unify;

use expect_test::Expect;

use crate::{Options, Target, infer_with, minias, print};

/// Parses MiniAS, infers with `options` and compares the printed result.
fn check_with(src: &str, options: Options, expect: Expect) {
    let program = minias::parse(src).unwrap_or_else(|error| panic!("parse error: {error:?}"));
    let inference = infer_with(&program, &options);
    expect.assert_eq(&print(&program, &inference));
}

/// [`check_with`] for OpenCL 1.2 with embedding.
fn check(src: &str, expect: Expect) {
    check_with(src, Options::default(), expect);
}

/// [`check_with`] for OpenCL 2.0 with embedding.
fn check_cl20(src: &str, expect: Expect) {
    check_with(src, Options { target: Target::OpenCl20, embedding: true }, expect);
}
