//! The host plan: the part of a compiled entry point that runs on the host.
//!
//! The compiler (`weft-opencl`) produces a [`Plan`]; the runner (`weft-runtime`, in its
//! own process) executes it. The plan is plain data (serialised as JSON by `weft
//! build`), so the runner needs nothing of the compiler.
//!
//! Division of labour: every value computation runs on the device, in the plan's
//! OpenCL kernels. The host only does size arithmetic (`i64`/`bool` [`Expr`]s over
//! host variables), allocates buffers, launches kernels, reads single scalars back
//! where control flow or a size needs them, and checks size errors.
//!
//! Host variables ([`Var`]) are slots numbered `0..n_vars`: each holds a scalar or a
//! buffer. A buffer variable may be rebound (loops carry buffers); buffers are freed
//! when no variable refers to them any more.
//!
//! Errors: every kernel takes the error buffer as its first argument, `__global long*
//! weft_err` of [`ERROR_WORDS`] words; a failing work-item writes its 1-based error
//! code into word 0 with an atomic compare-and-swap (first writer wins) and then its
//! payload into words 1 and 2. The code indexes [`Plan::errors`].

use serde::{Deserialize, Serialize};

mod eval;
mod print;

pub use crate::eval::{EvalError, HostScalar, eval, lit, lit_of};
pub use crate::print::{expr as print_expr, print_plan};

/// Number of `long` words of the error buffer: code, then two payload words.
pub const ERROR_WORDS: usize = 3;

/// A host variable slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Var(pub u32);

/// The element types of device buffers and scalars: Weft's one scalar type
/// (`weft_values::ScalarType`; `bool` is stored as one byte, `uchar` in OpenCL).
pub use weft_values::ScalarType as Elem;

/// One compiled entry point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The entry's name.
    pub entry: String,
    /// The OpenCL C 1.2 program holding every kernel of the plan.
    pub source: String,
    pub kernels: Vec<Kernel>,
    /// One per value the entry reads, in order (tuple parameters are flattened).
    pub inputs: Vec<Input>,
    /// The source name of each input's parameter, for messages (may be empty).
    #[serde(default)]
    pub input_names: Vec<String>,
    pub n_vars: u32,
    pub steps: Vec<Step>,
    /// One per value the entry returns, in order (tuple results are flattened).
    pub outputs: Vec<Output>,
    /// Run-time errors; error code `k` is `errors[k - 1]`.
    pub errors: Vec<ErrorSite>,
}

/// A kernel of [`Plan::source`] and what its parameters are (after the error buffer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<KernelParam>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelParam {
    pub name: String,
    pub kind: ParamKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    /// `__global T*`.
    Buffer(Elem),
    /// A scalar passed by value.
    Scalar(Elem),
    /// `__local T*`, sized at launch.
    Local(Elem),
}

/// An input value of the entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Input {
    /// A scalar, bound to a host variable.
    Scalar { var: Var, elem: Elem },
    /// An array, uploaded into a buffer bound to `buf`; dimension `d` of its shape
    /// binds `dims[d]` (an `i64` variable) or, when an earlier input bound that
    /// variable, must equal it (a shape error otherwise).
    Array { buf: Var, elem: Elem, dims: Vec<Var> },
}

/// An output value of the entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Output {
    /// A scalar held on the host.
    Host { value: Expr, elem: Elem },
    /// An array (a scalar when `shape` is empty) read from a buffer through a layout:
    /// element `[i0, .., ik]` is at `offset + Σ ij·strides[j]` (in elements).
    Array { buf: Var, elem: Elem, offset: Expr, strides: Vec<Expr>, shape: Vec<Expr> },
}

/// A host step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// `var = value` (host arithmetic).
    Let {
        var: Var,
        value: Expr,
    },
    /// Fails with `error` (its payload the values of `payload`) unless `cond` holds.
    Check {
        cond: Expr,
        error: u32,
        payload: Vec<Expr>,
    },
    /// A fresh device buffer of `len` elements (contents undefined), bound to `var`.
    Alloc {
        var: Var,
        elem: Elem,
        len: Expr,
    },
    /// Binds `var` to the buffer `from` refers to (no copy).
    Alias {
        var: Var,
        from: Var,
    },
    /// Launches `kernels[kernel]` over an NDRange of `global` work-items (rounded up
    /// by the runner to a multiple of `local` when `local` is given).
    Launch {
        kernel: u32,
        global: Vec<Expr>,
        local: Option<Vec<Expr>>,
        args: Vec<Arg>,
    },
    /// Reads element `index` of buffer `buf` to the host into `var`.
    Read {
        var: Var,
        buf: Var,
        elem: Elem,
        index: Expr,
    },
    If {
        cond: Expr,
        then_steps: Vec<Step>,
        else_steps: Vec<Step>,
    },
    /// `for index in 0..bound`.
    For {
        index: Var,
        bound: Expr,
        body: Vec<Step>,
    },
    /// Runs `cond_steps`, stops unless `cond` holds, runs `body`, repeats.
    While {
        cond_steps: Vec<Step>,
        cond: Expr,
        body: Vec<Step>,
    },
}

/// A kernel argument.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arg {
    Buffer(Var),
    Scalar {
        value: Expr,
        elem: Elem,
    },
    /// A `__local` buffer of `len` elements per work-group.
    Local {
        elem: Elem,
        len: Expr,
    },
}

/// A host expression: arithmetic on host scalars. Integer arithmetic wraps like the
/// interpreter's; `Div` and `Rem` truncate and fail on zero.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expr {
    I64(i64),
    Bool(bool),
    /// A constant of any element type, as the bits of its value (floats' IEEE bits,
    /// integers sign-extended).
    Lit {
        elem: Elem,
        bits: u64,
    },
    Var(Var),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    /// `if c then a else b`.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Conversion of a host scalar to `elem` (integers wrap, floats to integers
    /// saturate with NaN giving 0, as the interpreter's).
    Convert(Elem, Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    /// The operator as the printers write it (`+`, `min`, `>=`).
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

impl Expr {
    pub fn var(var: Var) -> Expr {
        Expr::Var(var)
    }

    pub fn bin(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
        Expr::Bin(op, Box::new(lhs), Box::new(rhs))
    }
}

/// Where a run-time error comes from and how to report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorSite {
    /// The message; `{0}` and `{1}` are replaced by the payload words.
    pub message: String,
    /// `file:line:column` of the source expression, when known.
    pub position: Option<String>,
}

impl ErrorSite {
    /// The message with the payload filled in, and the position appended.
    pub fn render(&self, payload: &[i64]) -> String {
        let mut message = self.message.clone();
        for (i, word) in payload.iter().enumerate() {
            message = message.replace(&format!("{{{i}}}"), &word.to_string());
        }
        match &self.position {
            Some(position) => format!("{position}: {message}"),
            None => message,
        }
    }
}

impl Plan {
    /// `input #i (\`name\`)` for messages.
    pub fn input_label(&self, index: usize) -> String {
        match self.input_names.get(index) {
            Some(name) if !name.is_empty() => format!("input #{index} (`{name}`)"),
            _ => format!("input #{index}"),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|error| {
            // Serialising plain data with string keys cannot fail.
            format!("{{\"error\": \"{error}\"}}")
        })
    }

    pub fn from_json(text: &str) -> Result<Plan, serde_json::Error> {
        serde_json::from_str(text)
    }
}

#[cfg(test)]
mod check_tests {
    use weft_values::RuntimeCheck;

    use super::ErrorSite;

    /// Compiled code's words for a failed check, once the runner fills in the payload,
    /// are the interpreter's for the same numbers.
    #[test]
    fn a_rendered_template_is_the_checks_words() {
        let checks = [
            RuntimeCheck::Index { array: "xs" },
            RuntimeCheck::Slice { array: "xs" },
            RuntimeCheck::Count { what: "take", array: "xs" },
            RuntimeCheck::Split { array: "xs" },
            RuntimeCheck::Unflatten { array: "xs" },
            RuntimeCheck::Coerce { value: "xs", dim: 1, size: "m" },
            RuntimeCheck::NegativeSize { what: "iota" },
            RuntimeCheck::DivisionByZero,
            RuntimeCheck::SizeDivisionByZero,
            RuntimeCheck::InputSize,
        ];
        for check in checks {
            let site = ErrorSite { message: check.template(), position: None };
            assert_eq!(site.render(&[-3, 7]), check.words(&-3, &7), "{check:?}");
        }
    }
}
