//! APL's display of values: numbers with `¯` for minus and at most 10 significant
//! digits (`⎕PP←10`), booleans as 0 and 1, vectors on one line, a matrix as rows with
//! right-aligned columns, higher ranks as matrices separated by blank lines.

use weft_values::{Scalar, Value};

/// One number as APL prints it.
pub fn number(s: Scalar) -> String {
    let text = match s {
        Scalar::Bool(b) => u8::from(b).to_string(),
        Scalar::I8(i) => i.to_string(),
        Scalar::I16(i) => i.to_string(),
        Scalar::U8(i) => i.to_string(),
        Scalar::U16(i) => i.to_string(),
        Scalar::F16(x) => double(x.to_f64()),
        Scalar::I32(i) => i.to_string(),
        Scalar::I64(i) => i.to_string(),
        Scalar::U32(i) => i.to_string(),
        Scalar::U64(i) => i.to_string(),
        Scalar::F32(x) => double(f64::from(x)),
        Scalar::F64(x) => double(x),
    };
    text.replace('-', "¯")
}

fn double(x: f64) -> String {
    if x.is_infinite() {
        return if x > 0.0 { "∞".to_owned() } else { "-∞".to_owned() };
    }
    if x == x.trunc() && x.abs() < 1e10 {
        return format!("{x:.0}");
    }
    // Ten significant digits, trailing zeros dropped.
    let magnitude = if x == 0.0 { 0 } else { x.abs().log10().floor() as i32 };
    if !(-6..10).contains(&magnitude) {
        let t = format!("{x:.9e}");
        let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
        let m = m.trim_end_matches('0').trim_end_matches('.');
        return format!("{m}E{e}");
    }
    let decimals = (9 - magnitude).max(0) as usize;
    let t = format!("{x:.decimals$}");
    if t.contains('.') { t.trim_end_matches('0').trim_end_matches('.').to_owned() } else { t }
}

/// A whole value.
pub fn display(v: &Value) -> String {
    let shape = v.shape().to_vec();
    let cells: Vec<String> = v.data().iter().map(number).collect();
    match shape.len() {
        0 => cells.first().cloned().unwrap_or_default(),
        1 => cells.join(" "),
        _ => {
            let cols = *shape.last().unwrap_or(&1);
            let rows = shape[..shape.len() - 1].iter().product::<usize>();
            let mut widths = vec![0; cols];
            for (k, c) in cells.iter().enumerate() {
                widths[k % cols.max(1)] = widths[k % cols.max(1)].max(c.chars().count());
            }
            let plane = shape[shape.len() - 2];
            let mut lines = Vec::new();
            for r in 0..rows {
                if r > 0 && plane > 0 && r % plane == 0 {
                    lines.push(String::new());
                }
                let row: Vec<String> = (0..cols)
                    .map(|c| format!("{:>w$}", cells[r * cols + c], w = widths[c]))
                    .collect();
                lines.push(row.join(" "));
            }
            lines.join("\n")
        }
    }
}
