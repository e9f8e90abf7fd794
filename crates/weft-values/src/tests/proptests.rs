//! Property tests: parsers never panic on any input, and printing or writing a value
//! then reading it back gives the same bits (all NaNs equal).

use proptest::prelude::*;

use super::bits_eq;
use crate::{
    ArrayData, ScalarType, Value, parse_random_specs, parse_value, parse_values,
    parse_values_expecting, print_values, read_npy, write_npy,
};

fn scalar_type() -> impl Strategy<Value = ScalarType> {
    proptest::sample::select(ScalarType::ALL.to_vec())
}

fn data(ty: ScalarType, len: usize) -> BoxedStrategy<ArrayData> {
    let n = len..=len;
    match ty {
        ScalarType::I8 => prop::collection::vec(any::<i8>(), n).prop_map(ArrayData::I8).boxed(),
        ScalarType::I16 => prop::collection::vec(any::<i16>(), n).prop_map(ArrayData::I16).boxed(),
        ScalarType::U8 => prop::collection::vec(any::<u8>(), n).prop_map(ArrayData::U8).boxed(),
        ScalarType::U16 => prop::collection::vec(any::<u16>(), n).prop_map(ArrayData::U16).boxed(),
        ScalarType::F16 => prop::collection::vec(any::<u16>().prop_map(crate::f16::from_bits), n)
            .prop_map(ArrayData::F16)
            .boxed(),
        ScalarType::I32 => prop::collection::vec(any::<i32>(), n).prop_map(ArrayData::I32).boxed(),
        ScalarType::I64 => prop::collection::vec(any::<i64>(), n).prop_map(ArrayData::I64).boxed(),
        ScalarType::U32 => prop::collection::vec(any::<u32>(), n).prop_map(ArrayData::U32).boxed(),
        ScalarType::U64 => prop::collection::vec(any::<u64>(), n).prop_map(ArrayData::U64).boxed(),
        ScalarType::F32 => prop::collection::vec(any::<u32>().prop_map(f32::from_bits), n)
            .prop_map(ArrayData::F32)
            .boxed(),
        ScalarType::F64 => prop::collection::vec(any::<u64>().prop_map(f64::from_bits), n)
            .prop_map(ArrayData::F64)
            .boxed(),
        ScalarType::Bool => {
            prop::collection::vec(any::<bool>(), n).prop_map(ArrayData::Bool).boxed()
        }
    }
}

fn value() -> impl Strategy<Value = Value> {
    (scalar_type(), prop::collection::vec(0usize..4, 0..4)).prop_flat_map(|(ty, shape)| {
        let len = shape.iter().product();
        data(ty, len).prop_map(move |data| Value::new(shape.clone(), data).unwrap())
    })
}

/// Strings made of the format's own tokens, so the parser gets past the first one.
fn token_soup() -> impl Strategy<Value = String> {
    let tokens = vec![
        "[",
        "]",
        ",",
        "(",
        ")",
        "-",
        "..",
        " ",
        "\n",
        "-- c\n",
        "1",
        "-7",
        "0x1f",
        "1.5",
        "2e-3",
        "i32",
        "u64",
        "f32",
        "bool",
        "true",
        "f32.nan",
        "f64.inf",
        "empty",
        "in",
        "0",
        "300u8",
        "1e999",
        "99999999999999999999999",
        "é",
        ".",
        "_",
    ];
    prop::collection::vec(proptest::sample::select(tokens), 0..40).prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn parsers_never_panic_on_arbitrary_strings(text in any::<String>()) {
        let _ = parse_values(&text);
        let _ = parse_value(&text);
        let _ = parse_values_expecting(&text, &[ScalarType::F32, ScalarType::U32]);
        let _ = parse_random_specs(&text);
    }

    #[test]
    fn parsers_never_panic_on_token_soup(text in token_soup(), ty in scalar_type()) {
        let _ = parse_values(&text);
        let _ = parse_values_expecting(&text, &[ty, ty]);
        let _ = parse_random_specs(&text);
        if let Ok(specs) = parse_random_specs(&text) {
            // Keep generation cheap: only small specs.
            if specs.iter().all(|spec| spec.ty.shape.iter().product::<usize>() < 10_000) {
                let _ = crate::generate_inputs(&specs, 0);
            }
        }
    }

    #[test]
    fn read_npy_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = read_npy(&bytes);
    }

    #[test]
    fn read_npy_never_panics_on_corrupted_files(
        value in value(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = write_npy(&value);
        for (at, byte) in edits {
            let idx = at.index(bytes.len());
            bytes[idx] = byte;
        }
        let _ = read_npy(&bytes);
        let _ = read_npy(&bytes[..cut.index(bytes.len() + 1)]);
    }

    #[test]
    fn print_then_parse_round_trips(values in prop::collection::vec(value(), 0..4)) {
        let text = print_values(&values);
        let parsed = parse_values(&text).unwrap();
        prop_assert_eq!(parsed.len(), values.len());
        for (got, want) in parsed.iter().zip(&values) {
            prop_assert!(bits_eq(got, want), "printed {}, read back {}", want, got);
        }
    }

    #[test]
    fn write_then_read_npy_round_trips(value in value()) {
        let read = read_npy(&write_npy(&value)).unwrap();
        prop_assert!(bits_eq(&read, &value), "wrote {}, read back {}", value, read);
    }

    #[test]
    fn floats_print_shortest_and_exact(bits in any::<u32>()) {
        let x = f32::from_bits(bits);
        let text = Value::scalar(x).to_string();
        let back = parse_value(&text).unwrap().as_scalar().unwrap();
        prop_assert!(back.bits_eq(crate::Scalar::F32(x)), "{}", text);
    }
}
