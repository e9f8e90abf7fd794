//! Checking input values against a plan's inputs, and binding the host variables
//! they determine: each scalar input's variable, and each array dimension's size
//! variable (an array's buffer is uploaded by the caller).
//!
//! A size variable named by two dimensions (`(xs: [n]f32) (ys: [n]f32)`, or `[n][n]`)
//! is bound by the first and checked against every later one.

use weft_plan::{Input, Plan, Var};
use weft_values::{Scalar, Value};

use crate::error::RunError;

/// Host variables bound by the inputs, in binding order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct InputBindings {
    pub(crate) scalars: Vec<(Var, Scalar)>,
    /// `(buffer variable, input index)` of every array input.
    pub(crate) arrays: Vec<(Var, usize)>,
}

/// Checks `values` against `plan.inputs`: their number, element types, ranks, and
/// the agreement of sizes named by the same variable.
pub(crate) fn check_inputs(plan: &Plan, values: &[Value]) -> Result<InputBindings, RunError> {
    if values.len() != plan.inputs.len() {
        return Err(RunError::Input(weft_values::wrong_input_count(
            &plan.entry,
            plan.inputs.len(),
            values.len(),
        )));
    }
    let mut bindings = InputBindings { scalars: Vec::new(), arrays: Vec::new() };
    // Where each size variable was bound: (input index, dimension index, size).
    let mut sizes: Vec<(Var, usize, usize, usize)> = Vec::new();
    for (input_idx, (input, value)) in plan.inputs.iter().zip(values).enumerate() {
        let (elem, rank) = match input {
            Input::Scalar { elem, .. } => (*elem, 0),
            Input::Array { elem, dims, .. } => (*elem, dims.len()),
        };
        if value.elem_type() != elem || value.rank() != rank {
            return Err(RunError::Input(format!(
                "wrong input type: {} of entry `{}` must be a value of type \
                 {}{}, but it is of type {}",
                plan.input_label(input_idx),
                plan.entry,
                "[]".repeat(rank),
                elem.name(),
                value.value_type()
            )));
        }
        match input {
            Input::Scalar { var, .. } => {
                let scalar = value.as_scalar().ok_or_else(|| {
                    RunError::InvalidPlan(format!("input #{input_idx} is not a scalar"))
                })?;
                bindings.scalars.push((*var, scalar));
            }
            Input::Array { buf, dims, .. } => {
                for (dim_idx, (dim_var, &size)) in dims.iter().zip(value.shape()).enumerate() {
                    let earlier = sizes.iter().find(|(var, ..)| var == dim_var);
                    match earlier {
                        Some(&(_, first_input, first_dim, first_size)) if first_size != size => {
                            return Err(RunError::Input(format!(
                                "wrong input shapes: dimension {dim_idx} of {} \
                                 (shape {}) is {size}, but it must equal dimension {first_dim} \
                                 of {} (shape {}), which is {first_size}",
                                plan.input_label(input_idx),
                                shape_text(value.shape()),
                                plan.input_label(first_input),
                                shape_text(values.get(first_input).map_or(&[][..], |v| v.shape())),
                            )));
                        }
                        Some(_) => {}
                        None => {
                            let as_i64 = i64::try_from(size).map_err(|_| {
                                RunError::Input(format!("input #{input_idx} is too large"))
                            })?;
                            sizes.push((*dim_var, input_idx, dim_idx, size));
                            bindings.scalars.push((*dim_var, Scalar::I64(as_i64)));
                        }
                    }
                }
                bindings.arrays.push((*buf, input_idx));
            }
        }
    }
    Ok(bindings)
}

fn shape_text(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use weft_plan::Elem;

    use super::*;

    fn plan(inputs: Vec<Input>) -> Plan {
        Plan {
            entry: "main".to_owned(),
            source: String::new(),
            kernels: Vec::new(),
            inputs,
            input_names: Vec::new(),
            n_vars: 8,
            steps: Vec::new(),
            outputs: Vec::new(),
            errors: Vec::new(),
        }
    }

    fn matrices() -> Plan {
        plan(vec![
            Input::Array { buf: Var(0), elem: Elem::F32, dims: vec![Var(1), Var(2)] },
            Input::Array { buf: Var(3), elem: Elem::F32, dims: vec![Var(2), Var(4)] },
            Input::Scalar { var: Var(5), elem: Elem::I64 },
        ])
    }

    fn matrix(rows: usize, cols: usize) -> Value {
        Value::new(vec![rows, cols], vec![0f32; rows * cols]).unwrap()
    }

    fn error(plan: &Plan, values: &[Value]) -> String {
        check_inputs(plan, values).unwrap_err().to_string()
    }

    #[test]
    fn consistent_inputs_bind_sizes_once() {
        let bindings =
            check_inputs(&matrices(), &[matrix(2, 3), matrix(3, 4), Value::scalar(7i64)]).unwrap();
        assert_eq!(
            bindings.scalars,
            vec![
                (Var(1), Scalar::I64(2)),
                (Var(2), Scalar::I64(3)),
                (Var(4), Scalar::I64(4)),
                (Var(5), Scalar::I64(7)),
            ]
        );
        assert_eq!(bindings.arrays, vec![(Var(0), 0), (Var(3), 1)]);
    }

    #[test]
    fn wrong_input_shapes_name_both_inputs() {
        let message = error(&matrices(), &[matrix(2, 3), matrix(4, 4), Value::scalar(7i64)]);
        expect![[r#"wrong input shapes: dimension 0 of input #1 (shape [4][4]) is 4, but it must equal dimension 1 of input #0 (shape [2][3]), which is 3"#]].assert_eq(&message);
    }

    #[test]
    fn wrong_count_type_and_rank() {
        expect![[r#"entry `main` takes 3 inputs, but 1 was given"#]]
            .assert_eq(&error(&matrices(), &[matrix(1, 1)]));
        let values = [matrix(1, 1), Value::vector(vec![1i64]), Value::scalar(7i64)];
        expect![[r#"wrong input type: input #1 of entry `main` must be a value of type [][]f32, but it is of type [1]i64"#]]
            .assert_eq(&error(&matrices(), &values));
        let values = [matrix(1, 1), matrix(1, 1), Value::scalar(7i32)];
        expect![[r#"wrong input type: input #2 of entry `main` must be a value of type i64, but it is of type i32"#]]
            .assert_eq(&error(&matrices(), &values));
    }

    #[test]
    fn a_square_input_checks_its_own_dimensions() {
        let square =
            plan(vec![Input::Array { buf: Var(0), elem: Elem::I64, dims: vec![Var(1), Var(1)] }]);
        let value = Value::new(vec![2, 3], vec![0i64; 6]).unwrap();
        expect![[r#"wrong input shapes: dimension 1 of input #0 (shape [2][3]) is 3, but it must equal dimension 0 of input #0 (shape [2][3]), which is 2"#]]
            .assert_eq(&error(&square, &[value]));
    }
}
