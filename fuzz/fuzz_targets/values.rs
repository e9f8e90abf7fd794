//! Fuzzes the textual value parser: any text either fails with an error or parses to
//! values that print and parse back to the same values. Run with
//! `cargo +nightly fuzz run values` (docs/fuzzing.md).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // Random specs are parsed too (never generated: sizes may be huge).
    let _ = weft_values::parse_random_specs(text);
    let Ok(values) = weft_values::parse_values(text) else { return };
    let printed = weft_values::print_values(&values);
    let again = weft_values::parse_values(&printed).expect("printed values parse");
    assert!(weft_values::compare_all(&again, &values).is_ok(), "{printed}");
});
