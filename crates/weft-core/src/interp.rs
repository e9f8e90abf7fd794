//! The reference interpreter over the core IR: the oracle that defines what a program
//! means (ARCHITECTURE.md, "Oracle"), with exactly LANGUAGE.md's semantics:
//!
//! - `f32` arithmetic in `f32`, `f64` in `f64`; integer arithmetic wraps; integer `/`
//!   and `%` truncate toward zero and fail on a zero divisor; shifts take the amount
//!   modulo the bit width (as OpenCL does);
//! - float-to-integer conversion saturates and NaN gives 0 (Rust's `as`);
//! - `&&` and `||` short-circuit (elaboration made them `if`s);
//! - `scatter` ignores out-of-range indices;
//! - out-of-bounds indexing, slicing, `take`, `drop`, failed `split`/`unflatten`
//!   divisibility and failed `:>` coercions are run-time errors that name the array, the
//!   index and the size; the error keeps the [`Origin`] of the failing expression, and
//!   [`crate::render_error`] adds the source position.
//!
//! Values: an array is a shape, a shared flat buffer and an offset (rows and `take`
//! share the buffer); an array of tuples is a tuple of arrays. Errors are values: no
//! input makes the interpreter panic.

use std::rc::Rc;

use weft_hir::ScalarTy;
use weft_values::{ArrayData, RuntimeCheck, Scalar, Value, binop, math, unop};

use crate::ir::{
    Atom, BlockId, CoreSize, Exp, FnId, Function, IndexItem, Lambda, LoopForm, Origin, Program,
    Stmt, Type, VarId, VarKind,
};

/// How the iterations of a parallel construct combine (for a [`Recorder`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParKind {
    /// Independent iterations (`map`, `generate`).
    Map,
    /// Applications of an associative operator (`reduce`).
    Reduce,
    /// Applications of an associative operator keeping every prefix (`scan`).
    Scan,
}

/// Observes an evaluation, for the cost-semantics profiler (`weft-cost`).
///
/// Every method has an empty default, and the interpreter is generic over the
/// recorder, so [`run_entry`] (which uses [`NoRecorder`]) compiles to the same code as
/// without hooks. Methods take `&self`: a recorder keeps its state in a `Cell` or
/// `RefCell`. Calls nest: `stmt_begin`/`stmt_end` around each statement (in function
/// `func`), `block_begin`/`block_end` around each block, and `par_begin`, then
/// `iter_begin`/`iter_end` per iteration, then `par_end` around the iterations of a
/// parallel construct (inside its statement).
pub trait Recorder {
    fn stmt_begin(&self, _func: FnId, _stmt: &Stmt) {}
    /// The statement's value, before it is bound.
    fn stmt_end(&self, _func: FnId, _stmt: &Stmt, _value: &Val) {}
    fn block_begin(&self, _func: FnId, _block: BlockId) {}
    fn block_end(&self, _func: FnId, _block: BlockId) {}
    fn par_begin(&self, _kind: ParKind, _n: usize) {}
    fn iter_begin(&self) {}
    fn iter_end(&self) {}
    fn par_end(&self) {}
}

/// The recorder that records nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRecorder;

impl Recorder for NoRecorder {}

/// A run-time error: the message, and where it happened (rendered to a position by
/// [`crate::render_error`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RuntimeError {
    pub message: String,
    pub origin: Option<Origin>,
}

impl RuntimeError {
    fn new(message: impl Into<String>) -> Box<RuntimeError> {
        Box::new(RuntimeError { message: message.into(), origin: None })
    }
}

impl From<weft_values::OpError> for Box<RuntimeError> {
    fn from(error: weft_values::OpError) -> Self {
        RuntimeError::new(error.message())
    }
}

/// Errors are boxed so that results stay small on the interpreter's hot path.
type Result<T> = std::result::Result<T, Box<RuntimeError>>;

/// An interpreter value.
#[derive(Debug, Clone)]
pub enum Val {
    Scalar(Scalar),
    Array(Arr),
    /// A tuple, and also an array of tuples (as a tuple of arrays).
    Tuple(Vec<Val>),
}

impl Val {
    /// The number of scalar elements (an array's elements, a tuple's in total).
    pub fn n_elems(&self) -> u64 {
        match self {
            Val::Scalar(_) => 1,
            Val::Array(arr) => arr.n_elems() as u64,
            Val::Tuple(vals) => vals.iter().map(Val::n_elems).sum(),
        }
    }

    /// The bytes of the value's elements (`bool` is one byte).
    pub fn n_bytes(&self) -> u64 {
        match self {
            Val::Scalar(s) => scalar_bytes(s.ty()),
            Val::Array(arr) => arr.n_elems() as u64 * scalar_bytes(arr.data.elem_type()),
            Val::Tuple(vals) => vals.iter().map(Val::n_bytes).sum(),
        }
    }

    /// Whether the value holds an array.
    pub fn has_array(&self) -> bool {
        match self {
            Val::Scalar(_) => false,
            Val::Array(_) => true,
            Val::Tuple(vals) => vals.iter().any(Val::has_array),
        }
    }
}

fn scalar_bytes(s: ScalarTy) -> u64 {
    s.size_in_bytes() as u64
}

/// A regular array: `shape`, and the elements at `data[offset..offset + product(shape)]`
/// in row-major order.
#[derive(Debug, Clone)]
pub struct Arr {
    shape: Vec<usize>,
    data: Rc<ArrayData>,
    offset: usize,
}

impl Arr {
    fn n_elems(&self) -> usize {
        self.shape.iter().product()
    }

    fn row_len(&self) -> usize {
        self.shape.iter().skip(1).product()
    }
}

/// Runs an entry point on input values (a tuple parameter takes consecutive values)
/// and returns its results (a tuple result gives one value per component).
pub fn run_entry(
    program: &Program,
    entry: FnId,
    inputs: Vec<Value>,
) -> std::result::Result<Vec<Value>, RuntimeError> {
    run_entry_boxed(program, entry, inputs, &NoRecorder).map_err(|error| *error)
}

/// [`run_entry`], reporting the evaluation to `recorder`.
pub fn run_entry_recorded<R: Recorder>(
    program: &Program,
    entry: FnId,
    inputs: Vec<Value>,
    recorder: &R,
) -> std::result::Result<Vec<Value>, RuntimeError> {
    run_entry_boxed(program, entry, inputs, recorder).map_err(|error| *error)
}

fn run_entry_boxed<R: Recorder>(
    program: &Program,
    entry: FnId,
    inputs: Vec<Value>,
    rec: &R,
) -> Result<Vec<Value>> {
    let function = &program.functions[entry];
    // Counted as the compiled plan counts them (a tuple parameter takes one input per
    // element), so both back ends say the same.
    let expected = n_inputs(program, entry);
    if inputs.len() != expected {
        return Err(RuntimeError::new(weft_values::wrong_input_count(
            function.name.as_str(),
            expected,
            inputs.len(),
        )));
    }
    let mut inputs = inputs.into_iter();
    let mut args = Vec::new();
    for &param in &function.params {
        let var = &function.vars[param];
        let arg = value_to_val(&var.ty, &mut inputs).map_err(|expected| {
            RuntimeError::new(format!(
                "entry `{}`: parameter `{}` expects {expected}",
                function.name, var.name
            ))
        })?;
        args.push(arg);
    }
    let result = call(program, entry, args, rec)?;
    let mut out = Vec::new();
    val_to_values(result, &mut out);
    Ok(out)
}

/// The number of values an entry reads (a tuple parameter reads one per component).
pub fn n_inputs(program: &Program, entry: FnId) -> usize {
    fn count(ty: &Type) -> usize {
        match ty {
            Type::Tuple(elems) => elems.iter().map(count).sum(),
            Type::Scalar(_) | Type::Array { .. } => 1,
        }
    }
    let f = &program.functions[entry];
    f.params.iter().map(|&p| count(&f.vars[p].ty)).sum()
}

fn describe(ty: &Type) -> String {
    match ty {
        Type::Scalar(s) => s.name().to_owned(),
        Type::Array { elem, .. } => format!("[]{}", describe(elem)),
        Type::Tuple(elems) => {
            format!("({})", elems.iter().map(describe).collect::<Vec<_>>().join(", "))
        }
    }
}

fn value_to_val(
    ty: &Type,
    inputs: &mut impl Iterator<Item = Value>,
) -> std::result::Result<Val, String> {
    if let Type::Tuple(elems) = ty {
        return Ok(Val::Tuple(
            elems.iter().map(|e| value_to_val(e, inputs)).collect::<std::result::Result<_, _>>()?,
        ));
    }
    let expected = || format!("a value of type {}", describe(ty));
    let Some(value) = inputs.next() else {
        return Err(format!("{}, but no value is left", expected()));
    };
    let mut rank = 0;
    let mut base = ty;
    while let Type::Array { elem, .. } = base {
        rank += 1;
        base = elem;
    }
    let Type::Scalar(scalar) = base else {
        return Err(format!("{} (arrays of tuples are not entry inputs)", expected()));
    };
    if value.elem_type().name() != scalar.name() || value.rank() != rank {
        return Err(format!("{}, got a value of type {}", expected(), value.value_type()));
    }
    if rank == 0 {
        return value.as_scalar().map(Val::Scalar).ok_or_else(expected);
    }
    let (shape, data) = value.into_parts();
    Ok(Val::Array(Arr { shape, data: Rc::new(data), offset: 0 }))
}

fn val_to_values(val: Val, out: &mut Vec<Value>) {
    match val {
        Val::Scalar(s) => out.push(Value::scalar(s)),
        Val::Array(arr) => {
            let mut data = ArrayData::with_capacity(arr.data.elem_type(), arr.n_elems());
            extend_range(&mut data, &arr.data, arr.offset, arr.n_elems());
            match Value::new(arr.shape.clone(), data) {
                Ok(value) => out.push(value),
                Err(_) => unreachable!("invariant: an array's data matches its shape"),
            }
        }
        Val::Tuple(vals) => vals.into_iter().for_each(|v| val_to_values(v, out)),
    }
}

/// Appends `src[start..start + len]` to `dst` (same element type).
fn extend_range(dst: &mut ArrayData, src: &ArrayData, start: usize, len: usize) {
    let range = start..start + len;
    match (dst, src) {
        (ArrayData::I8(d), ArrayData::I8(s)) => d.extend_from_slice(&s[range]),
        (ArrayData::I16(d), ArrayData::I16(s)) => d.extend_from_slice(&s[range]),
        (ArrayData::U8(d), ArrayData::U8(s)) => d.extend_from_slice(&s[range]),
        (ArrayData::U16(d), ArrayData::U16(s)) => d.extend_from_slice(&s[range]),
        (ArrayData::F16(d), ArrayData::F16(s)) => d.extend_from_slice(&s[range]),
        (ArrayData::I32(d), ArrayData::I32(s)) => d.extend_from_slice(&s[range]),
        (ArrayData::I64(d), ArrayData::I64(s)) => d.extend_from_slice(&s[range]),
        (ArrayData::U32(d), ArrayData::U32(s)) => d.extend_from_slice(&s[range]),
        (ArrayData::U64(d), ArrayData::U64(s)) => d.extend_from_slice(&s[range]),
        (ArrayData::F32(d), ArrayData::F32(s)) => d.extend_from_slice(&s[range]),
        (ArrayData::F64(d), ArrayData::F64(s)) => d.extend_from_slice(&s[range]),
        (ArrayData::Bool(d), ArrayData::Bool(s)) => d.extend_from_slice(&s[range]),
        _ => unreachable!("invariant: elaborated programs are well typed"),
    }
}

fn base_scalar(ty: &Type) -> ScalarTy {
    match ty {
        Type::Scalar(s) => *s,
        Type::Array { elem, .. } => base_scalar(elem),
        Type::Tuple(_) => ScalarTy::Bool,
    }
}

/// Collects the elements of an array being built (an array of tuples as a tuple of
/// builders).
enum Builder {
    /// `elem` is the element type, whose sizes give the shape of an empty array's rows.
    Leaf {
        data: ArrayData,
        inner: Option<Vec<usize>>,
        elem: Type,
    },
    Tuple(Vec<Builder>),
}

impl Builder {
    /// A builder for an array whose elements have type `elem`.
    fn new(elem: &Type, capacity: usize) -> Builder {
        match elem {
            Type::Tuple(elems) => {
                Builder::Tuple(elems.iter().map(|e| Builder::new(e, capacity)).collect())
            }
            Type::Scalar(s) => Builder::Leaf {
                data: ArrayData::with_capacity(*s, capacity),
                inner: Some(Vec::new()),
                elem: elem.clone(),
            },
            Type::Array { elem: inner, .. } => {
                if let Type::Tuple(elems) = &**inner {
                    // An array of arrays of tuples: a tuple of arrays of arrays.
                    let size = elem.outer_size().cloned().unwrap_or_else(CoreSize::zero);
                    return Builder::Tuple(
                        elems
                            .iter()
                            .map(|e| Builder::new(&Type::array(size.clone(), e.clone()), capacity))
                            .collect(),
                    );
                }
                Builder::Leaf {
                    data: ArrayData::with_capacity(base_scalar(elem), capacity),
                    inner: None,
                    elem: elem.clone(),
                }
            }
        }
    }

    fn push(&mut self, val: &Val) -> Result<()> {
        match (self, val) {
            (Builder::Leaf { data, .. }, Val::Scalar(s)) => data
                .push(*s)
                .map_err(|_| RuntimeError::new("internal error: element type mismatch")),
            (Builder::Leaf { data, inner, .. }, Val::Array(arr)) => {
                match inner {
                    Some(shape) if *shape != arr.shape => {
                        return Err(RuntimeError::new(format!(
                            "irregular array: rows of shape {:?} and {:?}",
                            shape, arr.shape
                        )));
                    }
                    Some(_) => {}
                    None => *inner = Some(arr.shape.clone()),
                }
                extend_range(data, &arr.data, arr.offset, arr.n_elems());
                Ok(())
            }
            (Builder::Tuple(builders), Val::Tuple(vals)) if builders.len() == vals.len() => {
                for (b, v) in builders.iter_mut().zip(vals) {
                    b.push(v)?;
                }
                Ok(())
            }
            _ => Err(RuntimeError::new("internal error: element kind mismatch")),
        }
    }

    /// The array of the `n` elements pushed; `size` evaluates sizes of the element
    /// type when no element gave the rows' shape (an empty array of arrays).
    fn finish(self, n: usize, size: &dyn Fn(&CoreSize) -> Option<usize>) -> Val {
        match self {
            Builder::Leaf { data, inner, elem } => {
                let mut shape = vec![n];
                match inner {
                    Some(inner) => shape.extend(inner),
                    None => {
                        let mut ty = &elem;
                        while let Type::Array { size: dim, elem } = ty {
                            shape.push(size(dim).unwrap_or(0));
                            ty = elem;
                        }
                    }
                }
                Val::Array(Arr { shape, data: Rc::new(data), offset: 0 })
            }
            Builder::Tuple(builders) => {
                Val::Tuple(builders.into_iter().map(|b| b.finish(n, size)).collect())
            }
        }
    }
}

/// The largest array the interpreter creates from a size (2^31 elements), so that a
/// wrong size is an error rather than an aborted allocation.
const MAX_ELEMS: usize = 1 << 31;

/// A function activation: one slot per variable.
struct Frame {
    slots: Vec<Option<Val>>,
}

fn call<R: Recorder>(program: &Program, func: FnId, args: Vec<Val>, rec: &R) -> Result<Val> {
    let f = &program.functions[func];
    let mut frame = Frame { slots: vec![None; f.vars.len()] };
    for (&param, arg) in f.params.iter().zip(&args) {
        frame.slots[param.into_raw().into_u32() as usize] = Some(arg.clone());
    }
    for (&param, arg) in f.params.iter().zip(&args) {
        bind_sizes(f, &mut frame, &f.vars[param].ty, arg, true).map_err(|message| {
            let what = if f.is_entry { "entry" } else { "function" };
            RuntimeError::new(format!(
                "{what} `{}`: parameter `{}`: {message}",
                f.name, f.vars[param].name
            ))
        })?;
    }
    let interp = Interp { program, f, func, rec };
    let result = interp.block(&mut frame, f.body)?;
    if f.is_entry {
        bind_sizes(f, &mut frame, &f.ret, &result, true)
            .map_err(|message| RuntimeError::new(format!("result of `{}`: {message}", f.name)))?;
    }
    Ok(result)
}

fn slot(var: VarId) -> usize {
    var.into_raw().into_u32() as usize
}

fn as_i64(s: Scalar) -> i64 {
    match s {
        Scalar::I8(x) => i64::from(x),
        Scalar::I16(x) => i64::from(x),
        Scalar::U8(x) => i64::from(x),
        Scalar::U16(x) => i64::from(x),
        Scalar::I32(x) => i64::from(x),
        Scalar::I64(x) => x,
        Scalar::U32(x) => i64::from(x),
        Scalar::U64(x) => x.cast_signed(),
        Scalar::Bool(b) => i64::from(b),
        Scalar::F16(x) => x.to_f32() as i64,
        Scalar::F32(x) => x as i64,
        Scalar::F64(x) => x as i64,
    }
}

fn eval_size(frame: &Frame, size: &CoreSize) -> std::result::Result<i64, String> {
    size.eval(&mut |v: &VarId| match frame.slots.get(slot(*v)) {
        Some(Some(Val::Scalar(s))) => Some(as_i64(*s)),
        _ => None,
    })
    .map_err(|e| match e {
        weft_size::EvalError::NotDivisible { dividend, divisor } => {
            format!("size {dividend} is not divisible by {divisor}")
        }
        weft_size::EvalError::DivisionByZero => RuntimeCheck::SizeDivisionByZero.words(&"", &""),
        weft_size::EvalError::UnboundVar(_) => "unknown size".to_owned(),
    })
}

fn shape_of(val: &Val) -> &[usize] {
    match val {
        Val::Array(arr) => &arr.shape,
        Val::Tuple(vals) => vals.first().map_or(&[], shape_of),
        Val::Scalar(_) => &[],
    }
}

/// Binds unbound size variables of `ty` to the shape of `val`; with `check`, also
/// checks the other sizes.
/// Why a value does not have the sizes of its type.
enum SizeError {
    /// Dimension `dim` has size `actual` where the type's `size` is `expected`.
    Mismatch { dim: usize, size: String, expected: i64, actual: usize },
    /// The type's size could not be computed.
    Other(String),
}

impl std::fmt::Display for SizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SizeError::Mismatch { dim, size, expected, actual } => {
                write!(f, "expected size {expected} (`{size}`) in dimension {dim}, got {actual}")
            }
            SizeError::Other(message) => f.write_str(message),
        }
    }
}

fn bind_sizes(
    f: &Function,
    frame: &mut Frame,
    ty: &Type,
    val: &Val,
    check: bool,
) -> std::result::Result<(), SizeError> {
    bind_sizes_as(f, frame, ty, val, check, Existentials::Rebind)
}

/// What [`bind_sizes_as`] does with an existential size that already has a value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Existentials {
    /// Gives it the value's size: a binding's existential is the size of whatever
    /// value it holds now (a loop's next iteration, a branch taken).
    Rebind,
    /// Checks the value against it: a coercion `e :> [k]t` to a size some earlier
    /// binding fixed.
    Check,
}

fn bind_sizes_as(
    f: &Function,
    frame: &mut Frame,
    ty: &Type,
    val: &Val,
    check: bool,
    existentials: Existentials,
) -> std::result::Result<(), SizeError> {
    if let (Type::Tuple(tys), Val::Tuple(vals)) = (ty, val) {
        for (t, v) in tys.iter().zip(vals) {
            bind_sizes_as(f, frame, t, v, check, existentials)?;
        }
        return Ok(());
    }
    let mut ty = ty;
    let mut dim_idx = 0;
    while let Type::Array { size, elem } = ty {
        if let Type::Tuple(tys) = &**elem
            && let Val::Tuple(vals) = val
        {
            for (t, v) in tys.iter().zip(vals) {
                bind_sizes_as(
                    f,
                    frame,
                    &Type::array(size.clone(), t.clone()),
                    v,
                    check,
                    existentials,
                )?;
            }
            return Ok(());
        }
        let Some(&actual) = shape_of(val).get(dim_idx) else { return Ok(()) };
        let actual_i64 =
            i64::try_from(actual).map_err(|_| SizeError::Other("size too large".to_owned()))?;
        let unbound_var = size.as_var().filter(|v| {
            frame.slots[slot(**v)].is_none()
                || (f.vars[**v].kind == VarKind::Existential
                    && existentials == Existentials::Rebind)
        });
        if let Some(&var) = unbound_var {
            frame.slots[slot(var)] = Some(Val::Scalar(Scalar::I64(actual_i64)));
        } else if check {
            let expected = eval_size(frame, size).map_err(SizeError::Other)?;
            if expected != actual_i64 {
                return Err(SizeError::Mismatch {
                    dim: dim_idx,
                    size: size.display(&|v: &VarId| f.vars[*v].name.to_string()).to_string(),
                    expected,
                    actual,
                });
            }
        }
        dim_idx += 1;
        ty = elem;
    }
    Ok(())
}

struct Interp<'a, R> {
    program: &'a Program,
    f: &'a Function,
    func: FnId,
    rec: &'a R,
}

fn elem(val: &Val, idx: usize) -> Val {
    match val {
        Val::Scalar(s) => Val::Scalar(*s),
        Val::Tuple(vals) => Val::Tuple(vals.iter().map(|v| elem(v, idx)).collect()),
        Val::Array(arr) => {
            if arr.shape.len() == 1 {
                let s =
                    arr.data.get(arr.offset + idx).expect("invariant: index checked by the caller");
                Val::Scalar(s)
            } else {
                let row = arr.row_len();
                Val::Array(Arr {
                    shape: arr.shape[1..].to_vec(),
                    data: Rc::clone(&arr.data),
                    offset: arr.offset + idx * row,
                })
            }
        }
    }
}

fn outer_len(val: &Val) -> usize {
    shape_of(val).first().copied().unwrap_or(0)
}

/// Rows `start..start + len` of an array (sharing its buffer).
fn rows(val: &Val, start: usize, len: usize) -> Val {
    match val {
        Val::Scalar(s) => Val::Scalar(*s),
        Val::Tuple(vals) => Val::Tuple(vals.iter().map(|v| rows(v, start, len)).collect()),
        Val::Array(arr) => {
            let mut shape = arr.shape.clone();
            shape[0] = len;
            Val::Array(Arr {
                shape,
                data: Rc::clone(&arr.data),
                offset: arr.offset + start * arr.row_len(),
            })
        }
    }
}

/// A new array from the rows at `indices`.
fn gather_rows(val: &Val, indices: &[usize]) -> Val {
    match val {
        Val::Scalar(s) => Val::Scalar(*s),
        Val::Tuple(vals) => Val::Tuple(vals.iter().map(|v| gather_rows(v, indices)).collect()),
        Val::Array(arr) => {
            let row = arr.row_len();
            let mut data = ArrayData::with_capacity(arr.data.elem_type(), row * indices.len());
            for &idx in indices {
                extend_range(&mut data, &arr.data, arr.offset + idx * row, row);
            }
            let mut shape = arr.shape.clone();
            shape[0] = indices.len();
            Val::Array(Arr { shape, data: Rc::new(data), offset: 0 })
        }
    }
}

/// The same elements with a new shape (the element count is checked by the caller).
fn reshape(val: &Val, outer: &[usize], drop_dims: usize) -> Val {
    match val {
        Val::Scalar(s) => Val::Scalar(*s),
        Val::Tuple(vals) => Val::Tuple(vals.iter().map(|v| reshape(v, outer, drop_dims)).collect()),
        Val::Array(arr) => {
            let mut shape = outer.to_vec();
            shape.extend_from_slice(&arr.shape[drop_dims.min(arr.shape.len())..]);
            Val::Array(Arr { shape, data: Rc::clone(&arr.data), offset: arr.offset })
        }
    }
}

fn transpose(val: &Val) -> Val {
    match val {
        Val::Scalar(s) => Val::Scalar(*s),
        Val::Tuple(vals) => Val::Tuple(vals.iter().map(transpose).collect()),
        Val::Array(arr) if arr.shape.len() < 2 => Val::Array(arr.clone()),
        Val::Array(arr) => {
            let (n, m) = (arr.shape[0], arr.shape[1]);
            let inner: usize = arr.shape.iter().skip(2).product();
            let mut data = ArrayData::with_capacity(arr.data.elem_type(), arr.n_elems());
            for j in 0..m {
                for i in 0..n {
                    extend_range(&mut data, &arr.data, arr.offset + (i * m + j) * inner, inner);
                }
            }
            let mut shape = arr.shape.clone();
            shape.swap(0, 1);
            Val::Array(Arr { shape, data: Rc::new(data), offset: 0 })
        }
    }
}

fn concat(a: &Val, b: &Val) -> Result<Val> {
    Ok(match (a, b) {
        (Val::Tuple(x), Val::Tuple(y)) => {
            Val::Tuple(x.iter().zip(y).map(|(a, b)| concat(a, b)).collect::<Result<_>>()?)
        }
        (Val::Array(x), Val::Array(y)) => {
            if x.shape[1..] != y.shape[1..] {
                return Err(RuntimeError::new(format!(
                    "cannot concatenate arrays with rows of shapes {:?} and {:?}",
                    &x.shape[1..],
                    &y.shape[1..]
                )));
            }
            let mut data = ArrayData::with_capacity(x.data.elem_type(), x.n_elems() + y.n_elems());
            extend_range(&mut data, &x.data, x.offset, x.n_elems());
            extend_range(&mut data, &y.data, y.offset, y.n_elems());
            let mut shape = x.shape.clone();
            shape[0] += y.shape[0];
            Val::Array(Arr { shape, data: Rc::new(data), offset: 0 })
        }
        _ => return Err(RuntimeError::new("internal error: concatenation of non-arrays")),
    })
}

/// Writes `val` over row `idx` of the owned array `dest`.
fn write_row(dest: &mut Val, idx: usize, val: &Val) -> Result<()> {
    write_block(dest, 1, idx, val)
}

/// Writes `val` over block `idx` of `dest`, whose `outer_dims` outer dimensions are
/// taken as one (row-major), so a block is an element or a row of what remains.
fn write_block(dest: &mut Val, outer_dims: usize, idx: usize, val: &Val) -> Result<()> {
    match (dest, val) {
        (Val::Tuple(ds), Val::Tuple(vs)) => {
            for (d, v) in ds.iter_mut().zip(vs) {
                write_block(d, outer_dims, idx, v)?;
            }
            Ok(())
        }
        (Val::Array(arr), v) => {
            let row: usize = arr.shape.iter().skip(outer_dims).product();
            let start = arr.offset + idx * row;
            let data = Rc::make_mut(&mut arr.data);
            let elems: Vec<Scalar> = match v {
                Val::Scalar(s) => vec![*s],
                Val::Array(src) => {
                    (0..src.n_elems()).filter_map(|k| src.data.get(src.offset + k)).collect()
                }
                Val::Tuple(_) => {
                    return Err(RuntimeError::new("internal error: a tuple written into an array"));
                }
            };
            if elems.len() != row {
                return Err(RuntimeError::new(format!(
                    "a value of {} elements written into a row of {row}",
                    elems.len()
                )));
            }
            for (k, s) in elems.into_iter().enumerate() {
                set(data, start + k, s);
            }
            Ok(())
        }
        _ => Err(RuntimeError::new("internal error: a write into a non-array")),
    }
}

fn set(data: &mut ArrayData, idx: usize, s: Scalar) {
    match (data, s) {
        (ArrayData::I8(d), Scalar::I8(x)) => d[idx] = x,
        (ArrayData::I16(d), Scalar::I16(x)) => d[idx] = x,
        (ArrayData::U8(d), Scalar::U8(x)) => d[idx] = x,
        (ArrayData::U16(d), Scalar::U16(x)) => d[idx] = x,
        (ArrayData::F16(d), Scalar::F16(x)) => d[idx] = x,
        (ArrayData::I32(d), Scalar::I32(x)) => d[idx] = x,
        (ArrayData::I64(d), Scalar::I64(x)) => d[idx] = x,
        (ArrayData::U32(d), Scalar::U32(x)) => d[idx] = x,
        (ArrayData::U64(d), Scalar::U64(x)) => d[idx] = x,
        (ArrayData::F32(d), Scalar::F32(x)) => d[idx] = x,
        (ArrayData::F64(d), Scalar::F64(x)) => d[idx] = x,
        (ArrayData::Bool(d), Scalar::Bool(x)) => d[idx] = x,
        _ => unreachable!("invariant: elaborated programs are well typed"),
    }
}

/// An owned, contiguous copy (for `scatter`).
fn owned_copy(val: &Val) -> Val {
    match val {
        Val::Scalar(s) => Val::Scalar(*s),
        Val::Tuple(vals) => Val::Tuple(vals.iter().map(owned_copy).collect()),
        Val::Array(arr) => {
            let mut data = ArrayData::with_capacity(arr.data.elem_type(), arr.n_elems());
            extend_range(&mut data, &arr.data, arr.offset, arr.n_elems());
            Val::Array(Arr { shape: arr.shape.clone(), data: Rc::new(data), offset: 0 })
        }
    }
}

impl<R: Recorder> Interp<'_, R> {
    fn atom(&self, frame: &Frame, atom: Atom) -> Result<Val> {
        match atom {
            Atom::Const(s) => Ok(Val::Scalar(s)),
            Atom::Var(v) => match frame.slots.get(slot(v)) {
                Some(Some(val)) => Ok(val.clone()),
                _ => Err(RuntimeError::new(format!(
                    "internal error: `{}` is unbound",
                    self.f.vars[v].name
                ))),
            },
        }
    }

    fn scalar(&self, frame: &Frame, atom: Atom) -> Result<Scalar> {
        match atom {
            Atom::Const(s) => Ok(s),
            Atom::Var(v) => match frame.slots.get(slot(v)) {
                Some(Some(Val::Scalar(s))) => Ok(*s),
                _ => Err(RuntimeError::new("internal error: expected a scalar")),
            },
        }
    }

    fn int(&self, frame: &Frame, atom: Atom) -> Result<i64> {
        Ok(as_i64(self.scalar(frame, atom)?))
    }

    fn name(&self, atom: Atom) -> String {
        self.f.atom_name(atom)
    }

    fn bind(&self, frame: &mut Frame, var: VarId, val: Val) -> Result<()> {
        if matches!(self.f.vars[var].ty, Type::Array { .. } | Type::Tuple(_)) {
            bind_sizes(self.f, frame, &self.f.vars[var].ty, &val, false)
                .map_err(|error| RuntimeError::new(error.to_string()))?;
        }
        frame.slots[slot(var)] = Some(val);
        Ok(())
    }

    #[expect(clippy::wildcard_enum_match_arm, reason = "a fast path; `exp` handles every kind")]
    fn block(&self, frame: &mut Frame, block_id: BlockId) -> Result<Val> {
        let block = &self.f.blocks[block_id];
        self.rec.block_begin(self.func, block_id);
        for stmt in &block.stmts {
            let exp = &self.f.exps[stmt.exp];
            self.rec.stmt_begin(self.func, stmt);
            // Scalar operations, the bulk of SOAC bodies, skip the large `exp` frame.
            let result = match exp {
                Exp::BinOp { op, lhs, rhs, .. } => {
                    match (self.scalar(frame, *lhs), self.scalar(frame, *rhs)) {
                        (Ok(a), Ok(b)) => binop(*op, a, b).map(Val::Scalar).map_err(Into::into),
                        (Err(e), _) | (_, Err(e)) => Err(e),
                    }
                }
                Exp::Convert { to, operand, .. } => {
                    self.scalar(frame, *operand).map(|s| Val::Scalar(s.convert(*to)))
                }
                _ => self.exp(frame, exp),
            };
            let val = match result {
                Ok(val) => val,
                Err(mut error) => {
                    if error.origin.is_none() {
                        error.origin = self.f.origins.get(stmt.exp).cloned();
                    }
                    return Err(error);
                }
            };
            self.rec.stmt_end(self.func, stmt, &val);
            self.bind(frame, stmt.var, val)?;
        }
        self.rec.block_end(self.func, block_id);
        match block.result {
            Some(atom) => self.atom(frame, atom),
            None => Ok(Val::Tuple(Vec::new())),
        }
    }

    /// The reduction of `array[lo..hi]` (not empty) by `lambda`, halves first.
    fn reduce_pairwise(
        &self,
        frame: &mut Frame,
        lambda: &Lambda,
        array: &Val,
        lo: usize,
        hi: usize,
    ) -> Result<Val> {
        if hi - lo == 1 {
            return Ok(elem(array, lo));
        }
        let mid = lo + (hi - lo) / 2;
        let left = self.reduce_pairwise(frame, lambda, array, lo, mid)?;
        let right = self.reduce_pairwise(frame, lambda, array, mid, hi)?;
        self.rec.iter_begin();
        let combined = self.apply(frame, lambda, [left, right]);
        self.rec.iter_end();
        combined
    }

    fn apply<const N: usize>(
        &self,
        frame: &mut Frame,
        lambda: &Lambda,
        args: [Val; N],
    ) -> Result<Val> {
        for (&param, arg) in lambda.params.iter().zip(args) {
            self.bind(frame, param, arg)?;
        }
        self.block(frame, lambda.body)
    }

    fn exp(&self, frame: &mut Frame, exp: &Exp) -> Result<Val> {
        Ok(match exp {
            Exp::Atom(a) => self.atom(frame, *a)?,
            Exp::Size(size) => {
                Val::Scalar(Scalar::I64(eval_size(frame, size).map_err(RuntimeError::new)?))
            }
            Exp::BinOp { op, lhs, rhs, .. } => {
                Val::Scalar(binop(*op, self.scalar(frame, *lhs)?, self.scalar(frame, *rhs)?)?)
            }
            Exp::UnOp { op, operand, .. } => Val::Scalar(unop(*op, self.scalar(frame, *operand)?)?),
            Exp::Convert { to, operand, .. } => {
                Val::Scalar(self.scalar(frame, *operand)?.convert(*to))
            }
            Exp::Math { ty, func, args } => {
                let args =
                    args.iter().map(|&a| self.scalar(frame, a)).collect::<Result<Vec<_>>>()?;
                Val::Scalar(math(*ty, *func, &args)?)
            }
            Exp::Tuple(atoms) => {
                Val::Tuple(atoms.iter().map(|&a| self.atom(frame, a)).collect::<Result<_>>()?)
            }
            Exp::Proj { tuple, index } => match self.atom(frame, *tuple)? {
                Val::Tuple(mut vals) if (*index as usize) < vals.len() => {
                    vals.swap_remove(*index as usize)
                }
                Val::Tuple(_) | Val::Scalar(_) | Val::Array(_) => {
                    return Err(RuntimeError::new("internal error: projection of a non-tuple"));
                }
            },
            Exp::ArrayLit { elems, elem_ty } => {
                let mut builder = Builder::new(elem_ty, elems.len());
                for &a in elems {
                    builder.push(&self.atom(frame, a)?)?;
                }
                builder.finish(elems.len(), &self.sizer(frame))
            }
            Exp::Index { array, items } => self.index(frame, *array, items)?,
            Exp::Dim { array, dim } => {
                let val = self.atom(frame, *array)?;
                let size = shape_of(&val).get(*dim as usize).copied().unwrap_or(0);
                Val::Scalar(Scalar::I64(i64::try_from(size).unwrap_or(i64::MAX)))
            }
            Exp::Call { func, args } => {
                let args = args.iter().map(|&a| self.atom(frame, a)).collect::<Result<Vec<_>>>()?;
                call(self.program, *func, args, self.rec)?
            }
            Exp::If { cond, then_branch, else_branch } => {
                if matches!(self.scalar(frame, *cond)?, Scalar::Bool(true)) {
                    self.block(frame, *then_branch)?
                } else {
                    self.block(frame, *else_branch)?
                }
            }
            Exp::Loop { param, init, form, body } => {
                let mut acc = self.atom(frame, *init)?;
                match form {
                    LoopForm::For { index, bound } => {
                        let bound_scalar = self.scalar(frame, *bound)?;
                        let n = as_i64(bound_scalar);
                        for i in 0..n.max(0) {
                            self.bind(frame, *param, acc)?;
                            frame.slots[slot(*index)] =
                                Some(Val::Scalar(Scalar::I64(i).convert(bound_scalar.ty())));
                            acc = self.block(frame, *body)?;
                        }
                    }
                    LoopForm::While { cond } => loop {
                        self.bind(frame, *param, acc.clone())?;
                        if !matches!(self.block(frame, *cond)?, Val::Scalar(Scalar::Bool(true))) {
                            break;
                        }
                        acc = self.block(frame, *body)?;
                    },
                }
                acc
            }
            Exp::Map { lambda, arrays, .. } => {
                let arrays =
                    arrays.iter().map(|&a| self.atom(frame, a)).collect::<Result<Vec<_>>>()?;
                let n = arrays.first().map_or(0, outer_len);
                if let Some(other) = arrays.iter().find(|a| outer_len(a) != n) {
                    return Err(RuntimeError::new(format!(
                        "map over arrays of different sizes {n} and {}",
                        outer_len(other)
                    )));
                }
                let mut builder = Builder::new(&lambda.ret, n);
                self.rec.par_begin(ParKind::Map, n);
                for i in 0..n {
                    self.rec.iter_begin();
                    for (&param, array) in lambda.params.iter().zip(&arrays) {
                        self.bind(frame, param, elem(array, i))?;
                    }
                    let val = self.block(frame, lambda.body)?;
                    builder.push(&val)?;
                    self.rec.iter_end();
                }
                self.rec.par_end();
                builder.finish(n, &self.sizer(frame))
            }
            Exp::Reduce { lambda, neutral, array, .. } => {
                let array = self.atom(frame, *array)?;
                let neutral = self.atom(frame, *neutral)?;
                let n = outer_len(&array);
                self.rec.par_begin(ParKind::Reduce, n);
                // Pairwise, as LANGUAGE.md lets an associative operator be regrouped
                // and as the kernels' trees do: a left fold of 40 million f32 ones
                // stops at 2^24, and `weft test --backend opencl` then failed a correct
                // program. Still n applications, in element order.
                let acc = if n == 0 {
                    neutral
                } else {
                    let all = self.reduce_pairwise(frame, lambda, &array, 0, n)?;
                    self.rec.iter_begin();
                    let acc = self.apply(frame, lambda, [neutral, all])?;
                    self.rec.iter_end();
                    acc
                };
                self.rec.par_end();
                acc
            }
            Exp::Scan { lambda, neutral, array, .. } => {
                let array = self.atom(frame, *array)?;
                let n = outer_len(&array);
                let mut acc = self.atom(frame, *neutral)?;
                let mut builder = Builder::new(&lambda.ret, n);
                self.rec.par_begin(ParKind::Scan, n);
                for i in 0..n {
                    self.rec.iter_begin();
                    acc = self.apply(frame, lambda, [acc, elem(&array, i)])?;
                    builder.push(&acc)?;
                    self.rec.iter_end();
                }
                self.rec.par_end();
                builder.finish(n, &self.sizer(frame))
            }
            Exp::Generate { size, lambda, .. } => {
                let n = self.count(frame, *size, "generate")?;
                let mut builder = Builder::new(&lambda.ret, n);
                self.rec.par_begin(ParKind::Map, n);
                for i in 0..n {
                    self.rec.iter_begin();
                    let idx = Val::Scalar(Scalar::I64(i64::try_from(i).unwrap_or(i64::MAX)));
                    let val = self.apply(frame, lambda, [idx])?;
                    builder.push(&val)?;
                    self.rec.iter_end();
                }
                self.rec.par_end();
                builder.finish(n, &self.sizer(frame))
            }
            Exp::Scatter { dest, indices, values } => {
                let mut out = owned_copy(&self.atom(frame, *dest)?);
                let n = outer_len(&out);
                let indices = self.atom(frame, *indices)?;
                let values = self.atom(frame, *values)?;
                for j in 0..outer_len(&indices).min(outer_len(&values)) {
                    let Val::Scalar(s) = elem(&indices, j) else { continue };
                    let idx = as_i64(s);
                    if let Ok(idx) = usize::try_from(idx)
                        && idx < n
                    {
                        write_row(&mut out, idx, &elem(&values, j))?;
                    }
                }
                out
            }
            Exp::ReduceByIndex { dest, lambda, indices, values, .. } => {
                let mut out = owned_copy(&self.atom(frame, *dest)?);
                let n_bins = outer_len(&out);
                let indices = self.atom(frame, *indices)?;
                let values = self.atom(frame, *values)?;
                let n = outer_len(&indices);
                if outer_len(&values) != n {
                    return Err(RuntimeError::new(format!(
                        "reduce_by_index of {n} indices and {} values",
                        outer_len(&values)
                    )));
                }
                // In index order; the operator is commutative, so any order gives the
                // same bins (up to floating-point reassociation). The profiler sees
                // applications of an associative operator, like a reduction's.
                self.rec.par_begin(ParKind::Reduce, n);
                for j in 0..n {
                    let Val::Scalar(s) = elem(&indices, j) else { continue };
                    if let Ok(bin) = usize::try_from(as_i64(s))
                        && bin < n_bins
                    {
                        self.rec.iter_begin();
                        let combined =
                            self.apply(frame, lambda, [elem(&out, bin), elem(&values, j)])?;
                        write_row(&mut out, bin, &combined)?;
                        self.rec.iter_end();
                    }
                }
                self.rec.par_end();
                out
            }
            Exp::Update { array, indices, value } => {
                let mut out = owned_copy(&self.atom(frame, *array)?);
                let shape = shape_of(&out).to_vec();
                let mut block = 0usize;
                for (dim, &index) in indices.iter().enumerate() {
                    let n = shape.get(dim).copied().unwrap_or(0);
                    let i = self.int(frame, index)?;
                    match usize::try_from(i) {
                        Ok(i) if i < n => block = block * n + i,
                        _ => {
                            let check = RuntimeCheck::Index { array: &self.name(*array) };
                            return Err(RuntimeError::new(check.words(&i, &n)));
                        }
                    }
                }
                let value = self.atom(frame, *value)?;
                write_block(&mut out, indices.len(), block, &value)?;
                out
            }
            Exp::Iota { size } => {
                let n = self.count(frame, *size, "iota")?;
                let data: Vec<i64> = (0..i64::try_from(n).unwrap_or(i64::MAX)).collect();
                Val::Array(Arr { shape: vec![n], data: Rc::new(ArrayData::I64(data)), offset: 0 })
            }
            Exp::Replicate { size, value } => {
                let n = self.count(frame, *size, "replicate")?;
                let value = self.atom(frame, *value)?;
                let ty = type_of_val(&value);
                let mut builder = Builder::new(&ty, n);
                for _ in 0..n {
                    builder.push(&value)?;
                }
                builder.finish(n, &self.sizer(frame))
            }
            Exp::Zip(atoms) => {
                let vals =
                    atoms.iter().map(|&a| self.atom(frame, a)).collect::<Result<Vec<_>>>()?;
                let n = vals.first().map_or(0, outer_len);
                if let Some(other) = vals.iter().find(|v| outer_len(v) != n) {
                    return Err(RuntimeError::new(format!(
                        "zip of arrays of different sizes {n} and {}",
                        outer_len(other)
                    )));
                }
                Val::Tuple(vals)
            }
            Exp::Unzip(a) | Exp::Materialise { value: a, .. } => self.atom(frame, *a)?,
            Exp::Transpose(a) => transpose(&self.atom(frame, *a)?),
            Exp::Reverse(a) => {
                let val = self.atom(frame, *a)?;
                let indices: Vec<usize> = (0..outer_len(&val)).rev().collect();
                gather_rows(&val, &indices)
            }
            Exp::Flatten(a) => {
                let val = self.atom(frame, *a)?;
                let shape = shape_of(&val);
                let n = shape.first().copied().unwrap_or(0) * shape.get(1).copied().unwrap_or(1);
                reshape(&val, &[n], 2)
            }
            Exp::Unflatten { rows: r, cols, array } => {
                let val = self.atom(frame, *array)?;
                let (r, c) = (self.int(frame, *r)?, self.int(frame, *cols)?);
                let len = outer_len(&val);
                let fits = r >= 0
                    && c >= 0
                    && r.checked_mul(c).and_then(|p| usize::try_from(p).ok()) == Some(len);
                if !fits {
                    let check = RuntimeCheck::Unflatten { array: &self.name(*array) };
                    return Err(RuntimeError::new(check.words(&len, &c)));
                }
                reshape(
                    &val,
                    &[usize::try_from(r).unwrap_or(0), usize::try_from(c).unwrap_or(0)],
                    1,
                )
            }
            Exp::Split { chunk, array } => {
                let val = self.atom(frame, *array)?;
                let k = self.int(frame, *chunk)?;
                let n = outer_len(&val);
                let n_i64 = i64::try_from(n).unwrap_or(i64::MAX);
                if k <= 0 || n_i64 % k != 0 {
                    let check = RuntimeCheck::Split { array: &self.name(*array) };
                    return Err(RuntimeError::new(check.words(&n, &k)));
                }
                let k = usize::try_from(k).unwrap_or(1);
                reshape(&val, &[n / k, k], 1)
            }
            Exp::Take { count, array } | Exp::Drop { count, array } => {
                let val = self.atom(frame, *array)?;
                let k = self.int(frame, *count)?;
                let n = outer_len(&val);
                let is_take = matches!(exp, Exp::Take { .. });
                let Some(k) = usize::try_from(k).ok().filter(|&k| k <= n) else {
                    let what = if is_take { "take" } else { "drop" };
                    let check = RuntimeCheck::Count { what, array: &self.name(*array) };
                    return Err(RuntimeError::new(check.words(&k, &n)));
                };
                if is_take { rows(&val, 0, k) } else { rows(&val, k, n - k) }
            }
            Exp::Concat(a, b) => concat(&self.atom(frame, *a)?, &self.atom(frame, *b)?)?,
            Exp::Coerce { value, ty } => {
                let val = self.atom(frame, *value)?;
                bind_sizes_as(self.f, frame, ty, &val, true, Existentials::Check).map_err(
                    |error| {
                        let value = &self.name(*value);
                        RuntimeError::new(match error {
                            SizeError::Mismatch { dim, size, expected, actual } => {
                                RuntimeCheck::Coerce { value, dim, size: &size }
                                    .words(&actual, &expected)
                            }
                            SizeError::Other(message) => {
                                format!("size coercion of `{value}` failed: {message}")
                            }
                        })
                    },
                )?;
                val
            }
        })
    }

    fn sizer<'f>(&self, frame: &'f Frame) -> impl Fn(&CoreSize) -> Option<usize> + 'f {
        |size| eval_size(frame, size).ok().and_then(|v| usize::try_from(v).ok())
    }

    fn count(&self, frame: &Frame, atom: Atom, what: &str) -> Result<usize> {
        let n = self.int(frame, atom)?;
        let n = usize::try_from(n)
            .map_err(|_| RuntimeError::new(RuntimeCheck::NegativeSize { what }.words(&n, &"")))?;
        if n > MAX_ELEMS {
            return Err(RuntimeError::new(format!(
                "`{what}` of size {n} is too large to interpret"
            )));
        }
        Ok(n)
    }

    fn index(&self, frame: &Frame, array: Atom, items: &[IndexItem]) -> Result<Val> {
        let mut val = self.atom(frame, array)?;
        // Dimensions kept by slices are moved past: `kept` counts them.
        self.index_from(frame, &mut val, array, items, 0)?;
        Ok(val)
    }

    /// Applies `items` to the dimensions of `val` starting at `dim`.
    fn index_from(
        &self,
        frame: &Frame,
        val: &mut Val,
        array: Atom,
        items: &[IndexItem],
        dim: usize,
    ) -> Result<()> {
        let Some((item, rest)) = items.split_first() else { return Ok(()) };
        if dim > 0 {
            // Below a slice: apply the remaining items to every row.
            let n = outer_len(val);
            let mut rows_out = Vec::with_capacity(n);
            for i in 0..n {
                let mut row = elem(val, i);
                self.index_from(frame, &mut row, array, items, dim - 1)?;
                rows_out.push(row);
            }
            let ty = type_of_rows(&rows_out, val);
            let mut builder = Builder::new(&ty, n);
            for row in &rows_out {
                builder.push(row)?;
            }
            *val = builder.finish(n, &|_| None);
            return Ok(());
        }
        let n = outer_len(val);
        let n_i64 = i64::try_from(n).unwrap_or(i64::MAX);
        match item {
            IndexItem::Fix(idx) => {
                let i = self.int(frame, *idx)?;
                if i < 0 || i >= n_i64 {
                    let check = RuntimeCheck::Index { array: &self.name(array) };
                    return Err(RuntimeError::new(check.words(&i, &n)));
                }
                *val = elem(val, usize::try_from(i).unwrap_or(0));
                self.index_from(frame, val, array, rest, 0)
            }
            IndexItem::Slice { start, end, stride } => {
                let stride = match stride {
                    Some(s) => self.int(frame, *s)?,
                    None => 1,
                };
                let start = start.map(|s| self.int(frame, s)).transpose()?;
                let end = end.map(|e| self.int(frame, e)).transpose()?;
                let bad = |start: i64| {
                    let check = RuntimeCheck::Slice { array: &self.name(array) };
                    RuntimeError::new(check.words(&start, &n))
                };
                let indices: Vec<usize> = if stride > 0 {
                    let (s, e) = (start.unwrap_or(0), end.unwrap_or(n_i64));
                    if s < 0 || e > n_i64 || s > e {
                        return Err(bad(s));
                    }
                    (s..e)
                        .step_by(usize::try_from(stride).unwrap_or(1))
                        .filter_map(|i| usize::try_from(i).ok())
                        .collect()
                } else if stride < 0 {
                    let (s, e) = (start.unwrap_or(n_i64 - 1), end.unwrap_or(-1));
                    if s >= n_i64 || e < -1 || s < e {
                        return Err(bad(s));
                    }
                    let mut out = Vec::new();
                    let mut i = s;
                    while i > e {
                        out.push(usize::try_from(i).unwrap_or(0));
                        i += stride;
                    }
                    out
                } else {
                    return Err(RuntimeError::new(format!(
                        "slice of array `{}` with stride 0",
                        self.name(array)
                    )));
                };
                *val = if stride == 1 {
                    rows(val, indices.first().copied().unwrap_or(0), indices.len())
                } else {
                    gather_rows(val, &indices)
                };
                if rest.is_empty() { Ok(()) } else { self.index_from(frame, val, array, rest, 1) }
            }
        }
    }
}

/// The element type of rows, for rebuilding an array from them.
fn type_of_rows(rows: &[Val], fallback: &Val) -> Type {
    match rows.first() {
        Some(row) => type_of_val(row),
        None => match fallback {
            Val::Array(arr) => {
                let mut ty = Type::Scalar(arr.data.elem_type());
                for _ in 1..arr.shape.len() {
                    ty = Type::array(CoreSize::zero(), ty);
                }
                ty
            }
            Val::Scalar(s) => Type::Scalar(s.ty()),
            Val::Tuple(vals) => Type::Tuple(vals.iter().map(|v| type_of_rows(&[], v)).collect()),
        },
    }
}

/// A type of the value's structure (sizes are not needed by builders).
fn type_of_val(val: &Val) -> Type {
    match val {
        Val::Scalar(s) => Type::Scalar(s.ty()),
        Val::Array(arr) => {
            let mut ty = Type::Scalar(arr.data.elem_type());
            for _ in 0..arr.shape.len() {
                ty = Type::array(CoreSize::zero(), ty);
            }
            ty
        }
        Val::Tuple(vals) => Type::Tuple(vals.iter().map(type_of_val).collect()),
    }
}
