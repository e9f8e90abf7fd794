//! A readable text form of a plan's host steps (the host half of `weft dump --ir
//! opencl` and of `weft build`'s output).

use std::fmt::Write;

use crate::{Arg, Expr, Input, Output, Plan, Step};

/// The plan without its OpenCL source: inputs, steps, outputs.
pub fn print_plan(plan: &Plan) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "host plan for entry `{}`", plan.entry);
    for input in &plan.inputs {
        match input {
            Input::Scalar { var, elem } => {
                let _ = writeln!(out, "  input v{}: {}", var.0, elem.name());
            }
            Input::Array { buf, elem, dims } => {
                let dims: Vec<String> = dims.iter().map(|d| format!("[v{}]", d.0)).collect();
                let _ = writeln!(out, "  input v{}: {}{}", buf.0, dims.join(""), elem.name());
            }
        }
    }
    steps(&mut out, plan, &plan.steps, 1);
    for output in &plan.outputs {
        match output {
            Output::Host { value, elem } => {
                let _ = writeln!(out, "  output {}: {}", expr(value), elem.name());
            }
            Output::Array { buf, elem, offset, strides, shape } => {
                let _ = writeln!(
                    out,
                    "  output v{} {} {{offset: {}; strides: [{}]; shape: [{}]}}",
                    buf.0,
                    elem.name(),
                    expr(offset),
                    list(strides),
                    list(shape)
                );
            }
        }
    }
    out
}

fn list(exprs: &[Expr]) -> String {
    exprs.iter().map(expr).collect::<Vec<_>>().join(", ")
}

fn steps(out: &mut String, plan: &Plan, steps_: &[Step], depth: usize) {
    let pad = "  ".repeat(depth);
    for step in steps_ {
        match step {
            Step::Let { var, value } => {
                let _ = writeln!(out, "{pad}v{} = {}", var.0, expr(value));
            }
            Step::Check { cond, error, payload } => {
                let message =
                    plan.errors.get(*error as usize - 1).map_or("?", |site| site.message.as_str());
                let _ = writeln!(
                    out,
                    "{pad}check {} else error {error} ({message}) [{}]",
                    expr(cond),
                    list(payload)
                );
            }
            Step::Alloc { var, elem, len } => {
                let _ = writeln!(out, "{pad}v{} = alloc {}[{}]", var.0, elem.name(), expr(len));
            }
            Step::Alias { var, from } => {
                let _ = writeln!(out, "{pad}v{} = v{}", var.0, from.0);
            }
            Step::Launch { kernel, global, local, args } => {
                let name = plan.kernels.get(*kernel as usize).map_or("?", |k| k.name.as_str());
                let local = match local {
                    Some(local) => format!(" local [{}]", list(local)),
                    None => String::new(),
                };
                let args: Vec<String> = args
                    .iter()
                    .map(|arg| match arg {
                        Arg::Buffer(var) => format!("v{}", var.0),
                        Arg::Scalar { value, elem } => format!("{}: {}", expr(value), elem.name()),
                        Arg::Local { elem, len } => {
                            format!("local {}[{}]", elem.name(), expr(len))
                        }
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "{pad}launch {name} global [{}]{local} ({})",
                    list(global),
                    args.join(", ")
                );
            }
            Step::Read { var, buf, elem, index } => {
                let _ = writeln!(
                    out,
                    "{pad}v{} = read {} v{}[{}]",
                    var.0,
                    elem.name(),
                    buf.0,
                    expr(index)
                );
            }
            Step::If { cond, then_steps, else_steps } => {
                let _ = writeln!(out, "{pad}if {} {{", expr(cond));
                steps(out, plan, then_steps, depth + 1);
                let _ = writeln!(out, "{pad}}} else {{");
                steps(out, plan, else_steps, depth + 1);
                let _ = writeln!(out, "{pad}}}");
            }
            Step::For { index, bound, body } => {
                let _ = writeln!(out, "{pad}for v{} < {} {{", index.0, expr(bound));
                steps(out, plan, body, depth + 1);
                let _ = writeln!(out, "{pad}}}");
            }
            Step::While { cond_steps, cond, body } => {
                let _ = writeln!(out, "{pad}while {{");
                steps(out, plan, cond_steps, depth + 1);
                let _ = writeln!(out, "{pad}}} {} do {{", expr(cond));
                steps(out, plan, body, depth + 1);
                let _ = writeln!(out, "{pad}}}");
            }
        }
    }
}

/// A host expression in C-like syntax.
pub fn expr(e: &Expr) -> String {
    match e {
        Expr::I64(v) => v.to_string(),
        Expr::Bool(b) => b.to_string(),
        Expr::Lit { elem, bits } => format!("{:?}", crate::eval::lit(*elem, *bits)),
        Expr::Var(var) => format!("v{}", var.0),
        Expr::Bin(op, a, b) => match op {
            crate::BinOp::Min | crate::BinOp::Max => {
                format!("{}({}, {})", op.symbol(), expr(a), expr(b))
            }
            _ => format!("({} {} {})", expr(a), op.symbol(), expr(b)),
        },
        Expr::Not(a) => format!("!{}", expr(a)),
        Expr::Neg(a) => format!("-{}", expr(a)),
        Expr::Select(c, a, b) => format!("({} ? {} : {})", expr(c), expr(a), expr(b)),
        Expr::Convert(elem, a) => format!("{}({})", elem.name(), expr(a)),
    }
}
