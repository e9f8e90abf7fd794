//! The `-- bench:` line above an entry: the random-input specs of its parameters, and
//! optionally `flops=EXPR` (docs/cli.md, "weft bench"). `weft bench` times entries at
//! these sizes and the editor predicts their costs at them.

use crate::RandomSpec;

/// What a `-- bench:` line says.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchLine {
    /// One spec per input value, in parameter order.
    pub inputs: Vec<RandomSpec>,
    /// Floating-point operations of one run, when given.
    pub flops: Option<u64>,
}

/// A malformed `-- bench:` line: a byte offset into the text after `bench:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchLineError {
    pub offset: usize,
    pub message: String,
}

/// Parses the text after `bench:`: random-input specs and at most one `flops=EXPR`
/// (anywhere among them), where `EXPR` is a product of decimal integers.
pub fn parse_bench_line(text: &str) -> Result<BenchLine, BenchLineError> {
    // `flops=...` is blanked out rather than removed, so that the offsets of spec
    // errors stay offsets into `text`.
    let mut specs_text = text.to_owned();
    let mut flops = None;
    let mut search_from = 0;
    while let Some(found) = text[search_from..].find("flops=") {
        let start = search_from + found;
        let end = text[start..].find(char::is_whitespace).map_or(text.len(), |len| start + len);
        search_from = end;
        let at_word_start = text[..start].chars().next_back().is_none_or(char::is_whitespace);
        if !at_word_start {
            continue;
        }
        if flops.is_some() {
            return Err(BenchLineError { offset: start, message: "`flops=` given twice".into() });
        }
        let expr_start = start + "flops=".len();
        flops = Some(eval_product(&text[expr_start..end], expr_start)?);
        specs_text.replace_range(start..end, &" ".repeat(end - start));
    }
    let inputs = crate::parse_random_specs(&specs_text).map_err(|error| BenchLineError {
        offset: error.offset,
        message: error.kind.to_string(),
    })?;
    if inputs.is_empty() {
        let offset = text.len() - text.trim_start().len();
        return Err(BenchLineError {
            offset,
            message: "expected the inputs' random specs (`[1000]f32 [1000]f32`)".into(),
        });
    }
    Ok(BenchLine { inputs, flops })
}

/// `2*4096*4096`: a product of decimal integers (`_` may separate digits).
pub fn eval_product(expr: &str, offset: usize) -> Result<u64, BenchLineError> {
    if expr.is_empty() {
        return Err(BenchLineError {
            offset,
            message: "expected a product of integers after `flops=`".into(),
        });
    }
    let mut product: u64 = 1;
    let mut factor_start = offset;
    for factor in expr.split('*') {
        let digits = factor.replace('_', "");
        let valid = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        let value = digits.parse::<u64>().ok().filter(|_| valid).ok_or_else(|| BenchLineError {
            offset: factor_start,
            message: format!("expected an integer in `flops=`, found `{factor}`"),
        })?;
        product = product.checked_mul(value).ok_or_else(|| BenchLineError {
            offset,
            message: format!("`flops={expr}` does not fit in 64 bits"),
        })?;
        factor_start += factor.len() + 1;
    }
    Ok(product)
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::parse_bench_line;

    fn check(text: &str, expect: Expect) {
        let actual = match parse_bench_line(text) {
            Ok(line) => {
                let specs: Vec<String> = line.inputs.iter().map(ToString::to_string).collect();
                format!("inputs: {}; flops: {:?}", specs.join(" | "), line.flops)
            }
            Err(error) => format!("error at {}: {}", error.offset, error.message),
        };
        expect.assert_eq(&actual);
    }

    #[test]
    fn specs_one_per_input() {
        check(
            " f32 [67108864]f32 [67108864]f32",
            expect!["inputs: f32 | [67108864]f32 | [67108864]f32; flops: None"],
        );
    }

    #[test]
    fn specs_with_ranges() {
        check(
            " [8][4]i64 in 1..10 bool",
            expect!["inputs: [8][4]i64 in 1i64..10i64 | bool; flops: None"],
        );
    }

    #[test]
    fn flops_is_a_product_anywhere_on_the_line() {
        check(
            " [4096][4096]f32 flops=2*4096*4096*4096 [4096][4096]f32",
            expect!["inputs: [4096][4096]f32 | [4096][4096]f32; flops: Some(137438953472)"],
        );
        check(" [10]f32 flops=1_000", expect!["inputs: [10]f32; flops: Some(1000)"]);
    }

    #[test]
    fn bad_factor_is_reported_at_its_offset() {
        check(
            " [10]f32 flops=2*n",
            expect!["error at 17: expected an integer in `flops=`, found `n`"],
        );
        check(
            " [10]f32 flops=",
            expect!["error at 15: expected a product of integers after `flops=`"],
        );
    }

    #[test]
    fn flops_overflow_and_repetition_are_errors() {
        check(
            " f32 flops=4294967296*4294967296",
            expect!["error at 11: `flops=4294967296*4294967296` does not fit in 64 bits"],
        );
        check(" f32 flops=1 flops=2", expect!["error at 13: `flops=` given twice"]);
    }

    #[test]
    fn spec_errors_keep_their_offset() {
        check(
            " flops=2 [10]x32",
            expect![
                "error at 13: unsupported type `x32`: values are of type i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64 or bool"
            ],
        );
    }

    #[test]
    fn no_specs_is_an_error() {
        check(
            "  flops=2",
            expect!["error at 2: expected the inputs' random specs (`[1000]f32 [1000]f32`)"],
        );
    }
}
