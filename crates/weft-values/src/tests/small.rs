//! The small scalar types (issue 15): `i8 i16 u8 u16 f16` in text, conversions,
//! `.npy` and random inputs.

use expect_test::expect;

use super::{check, value};
use crate::{
    ArrayData, RandomSpec, Rng, Scalar, ScalarType, Value, f16, parse_random_spec, read_npy,
    write_npy,
};

fn h(x: f32) -> f16 {
    f16::from_f32(x)
}

#[test]
fn literals_print_with_their_suffix() {
    check(
        "200u8 -128i8 65535u16 -32768i16 0.5f16 [1u8, 2u8] f16.nan -f16.inf 65504f16",
        expect![[r#"
            200u8
            -128i8
            65535u16
            -32768i16
            0.5f16
            [1u8, 2u8]
            f16.nan
            -f16.inf
            65504.0f16
        "#]],
    );
    // f16 prints the shortest digits of its exact `f32`, as Futhark does.
    check(
        "0.1f16 1.3333f16 1e-7f16",
        expect![[r#"
        9.9975586e-2f16
        1.3330078f16
        1.1920929e-7f16
    "#]],
    );
}

#[test]
fn out_of_range_literals_are_errors() {
    check(
        "256u8",
        expect![[r#"
        error: 1:1: out-of-range literal 256 for u8
    "#]],
    );
    check(
        "-129i8",
        expect![[r#"
        error: 1:1: out-of-range literal -129 for i8
    "#]],
    );
    check(
        "70000f16",
        expect![[r#"
        error: 1:1: out-of-range literal 70000 for f16
    "#]],
    );
    check(
        "1.5u16",
        expect![[r#"
        error: 1:1: decimal literal `1.5u16` cannot have an integer type
    "#]],
    );
}

#[test]
fn printing_then_parsing_gives_the_same_f16() {
    for bits in (0..=u16::MAX).step_by(7) {
        let x = Scalar::F16(f16::from_bits(bits));
        let text = x.to_string();
        let back = value(&text).get_flat(0);
        assert!(back.is_some_and(|y| y.bits_eq(x)), "{bits:#x} printed as {text}");
    }
}

#[test]
fn integer_conversions_wrap() {
    let cases = [
        (Scalar::I32(300), ScalarType::U8, Scalar::U8(44)),
        (Scalar::I32(-1), ScalarType::U8, Scalar::U8(255)),
        (Scalar::U8(200), ScalarType::I8, Scalar::I8(-56)),
        (Scalar::I64(70000), ScalarType::I16, Scalar::I16(4464)),
        (Scalar::I8(-1), ScalarType::U16, Scalar::U16(65535)),
        (Scalar::I16(-2), ScalarType::I64, Scalar::I64(-2)),
        (Scalar::U16(65535), ScalarType::I32, Scalar::I32(65535)),
        (Scalar::Bool(true), ScalarType::U8, Scalar::U8(1)),
        (Scalar::U8(0), ScalarType::Bool, Scalar::Bool(false)),
    ];
    for (from, to, want) in cases {
        assert_eq!(from.convert(to), want, "{from} to {to}");
    }
}

#[test]
fn float_to_small_integers_saturate() {
    assert_eq!(Scalar::F32(300.7).convert(ScalarType::U8), Scalar::U8(255));
    assert_eq!(Scalar::F32(-5.0).convert(ScalarType::U8), Scalar::U8(0));
    assert_eq!(Scalar::F64(-1e9).convert(ScalarType::I16), Scalar::I16(-32768));
    assert_eq!(Scalar::F16(h(-3.75)).convert(ScalarType::I8), Scalar::I8(-3));
    assert_eq!(Scalar::F16(f16::NAN).convert(ScalarType::U16), Scalar::U16(0));
}

#[test]
fn conversions_to_f16_round_to_nearest_even() {
    // 2049 lies halfway between the f16 neighbours 2048 and 2050: even wins.
    assert_eq!(Scalar::I32(2049).convert(ScalarType::F16), Scalar::F16(h(2048.0)));
    assert_eq!(Scalar::I32(2051).convert(ScalarType::F16), Scalar::F16(h(2052.0)));
    assert_eq!(Scalar::I32(65519).convert(ScalarType::F16), Scalar::F16(f16::MAX));
    assert_eq!(Scalar::I32(65520).convert(ScalarType::F16), Scalar::F16(f16::INFINITY));
    assert_eq!(Scalar::U64(u64::MAX).convert(ScalarType::F16), Scalar::F16(f16::INFINITY));
    assert_eq!(Scalar::F32(1.0e-8).convert(ScalarType::F16), Scalar::F16(f16::ZERO));
    // The smallest subnormal, 2^-24, and half of it (a tie, to even: zero).
    let tiny = 2f64.powi(-24);
    assert_eq!(Scalar::F64(tiny).convert(ScalarType::F16), Scalar::F16(f16::from_bits(1)));
    assert_eq!(Scalar::F64(tiny / 2.0).convert(ScalarType::F16), Scalar::F16(f16::ZERO));
    // Just above the tie: rounded once from the f64, not through f32.
    let above = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    assert_eq!(Scalar::F64(above).convert(ScalarType::F16), Scalar::F16(f16::from_bits(0x3c01)));
    // f16 widens exactly.
    assert_eq!(Scalar::F16(h(0.1)).convert(ScalarType::F64), Scalar::F64(0.0999755859375));
}

#[test]
fn f16_arithmetic_rounds_each_result() {
    let round = |x: f32| Scalar::F32(x).round_f16();
    assert_eq!(round(1.0 + 2f32.powi(-11)), Scalar::F16(h(1.0)));
    assert_eq!(round(1.0 + 3.0 * 2f32.powi(-11)), Scalar::F16(f16::from_bits(0x3c02)));
    assert_eq!(round(65536.0), Scalar::F16(f16::INFINITY));
    assert_eq!(Scalar::Bool(true).round_f16(), Scalar::Bool(true));
    assert_eq!(Scalar::F16(h(2.5)).widen_f16(), Scalar::F32(2.5));
}

#[test]
fn npy_dtypes_of_the_small_types() {
    let cases = [
        (ArrayData::U8(vec![0, 255]), "|u1"),
        (ArrayData::I8(vec![-128, 127]), "|i1"),
        (ArrayData::U16(vec![65535, 1]), "<u2"),
        (ArrayData::I16(vec![-32768, 2]), "<i2"),
        (ArrayData::F16(vec![h(1.5), f16::NEG_INFINITY]), "<f2"),
    ];
    for (data, descr) in cases {
        let value = Value::new(vec![2], data).expect("two elements");
        let bytes = write_npy(&value);
        let header = String::from_utf8_lossy(&bytes[10..70]).into_owned();
        assert!(header.contains(&format!("'descr': '{descr}'")), "{header}");
        assert_eq!(bytes.len() % 64, (2 * value.elem_type().size_in_bytes()) % 64);
        assert_eq!(read_npy(&bytes).ok(), Some(value));
    }
}

#[test]
fn random_small_integers_cover_their_range() {
    let mut rng = Rng::new(7);
    let spec: RandomSpec = parse_random_spec("[4096]u8").expect("a spec");
    let value = spec.generate(&mut rng).expect("memory");
    let ArrayData::U8(bytes) = value.data() else { panic!("u8 data") };
    assert!(bytes.contains(&0) && bytes.contains(&255));
    let spec: RandomSpec = parse_random_spec("[4096]i8").expect("a spec");
    let ArrayData::I8(xs) = spec.generate(&mut rng).expect("memory").data().clone() else {
        panic!("i8 data")
    };
    assert!(xs.contains(&-128) && xs.contains(&127));
    let spec: RandomSpec = parse_random_spec("[1000]i16 in -300..-200").expect("a spec");
    let ArrayData::I16(xs) = spec.generate(&mut rng).expect("memory").data().clone() else {
        panic!("i16 data")
    };
    assert!(xs.iter().all(|x| (-300..-200).contains(x)));
}

#[test]
fn random_f16_stay_below_the_upper_bound() {
    let mut rng = Rng::new(3);
    let spec: RandomSpec = parse_random_spec("[10000]f16 in -2..2").expect("a spec");
    let ArrayData::F16(xs) = spec.generate(&mut rng).expect("memory").data().clone() else {
        panic!("f16 data")
    };
    assert!(xs.iter().all(|x| x.to_f32() >= -2.0 && x.to_f32() < 2.0));
    assert!(xs.iter().any(|x| x.to_f32() < -1.5) && xs.iter().any(|x| x.to_f32() > 1.5));
    let spec: RandomSpec = parse_random_spec("[1000]f16").expect("a spec");
    let ArrayData::F16(xs) = spec.generate(&mut rng).expect("memory").data().clone() else {
        panic!("f16 data")
    };
    assert!(xs.iter().all(|x| x.to_f32() >= 0.0 && x.to_f32() < 1.0));
}
