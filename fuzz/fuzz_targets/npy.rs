//! Fuzzes the `.npy` reader: any bytes either fail with an error or read as a value
//! that writes and reads back to the same value. Run with `cargo +nightly fuzz run npy`
//! (docs/fuzzing.md).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = weft_values::read_npy(data) else { return };
    let written = weft_values::write_npy(&value);
    let again = weft_values::read_npy(&written).expect("written .npy reads");
    assert!(weft_values::compare(&again, &value).is_ok());
});
