//! The validity check (seed 004 §4.3-4.4, Definition 3.1): the memory IR run against a
//! real flat heap, compared with the reference interpreter of `weft-core`.
//!
//! The heap is a list of blocks, each a typed vector of scalars, addressed in elements.
//! [`run_entry_on_heap`] evaluates the core statements operationally on heap values
//! (an array is a block label and a concrete LMAD) and, at every binding, uses the
//! memory annotation:
//!
//! - an `alloc` creates a zeroed block of the annotated size, before its statement
//!   (after expansion: once, before the SOAC);
//! - a `Fresh` or `Copy` binding writes its elements through the annotated LMAD into the
//!   annotated block (the only writes);
//! - a `View` binding must describe exactly the value the operation produced: the same
//!   block and the same addresses (the paper's aliasing requirement; a wrong expansion
//!   formula fails here, digest E6);
//! - an `Existential` binding first fixes its block and existential components from the
//!   value (E-MEM-IF, `Support`).
//!
//! Every read and write is bounds-checked against its block (digest D7), and writes
//! during the iterations of a `map`/`generate` into blocks that existed before the SOAC
//! are checked for races between iterations (eq. 4, `racefree`, on writes). The entry
//! results are read through their LMADs; [`check_validity`] compares them with
//! [`weft_core::run_entry`].

use rustc_hash::FxHashMap;
use weft_core::{
    Atom, BlockId, Exp, ExpId, FnId, Function, IndexItem, Lambda, LoopForm, Origin, Program, VarId,
    VarKind,
};
use weft_hir::ScalarTy;
use weft_values::{ArrayData, RuntimeCheck, Scalar, Value};

use crate::ir::{
    BlockBinding, MemBlockId, MemFunction, MemInfo, MemProgram, MemSize, MemVar, Provenance,
};
use crate::lower::{ValueShape, scalar_i64, value_shape};

/// A failure of the heap run: a run-time error of the program, or an invalid memory
/// annotation (a compiler bug this check exists to find).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapError {
    pub message: String,
    pub origin: Option<Origin>,
}

impl HeapError {
    fn new(message: impl Into<String>) -> HeapError {
        HeapError { message: message.into(), origin: None }
    }
}

/// Why [`check_validity`] failed.
#[derive(Debug, Clone, PartialEq)]
pub enum ValidityError {
    /// The reference interpreter ran, the heap run failed.
    Heap(HeapError),
    /// Both ran, with different results.
    Mismatch(String),
}

/// What [`check_validity`] found when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validity {
    /// Both runs gave the same results.
    Same,
    /// The reference interpreter reported a run-time error; the heap run is not compared.
    ReferenceFailed,
}

type Result<T> = std::result::Result<T, HeapError>;

/// The memory of a variable without an annotation (a scalar).
static SCALAR: MemInfo = MemInfo::Scalar;

/// The most elements one block may have in a check (inputs are small).
const MAX_BLOCK: i64 = 1 << 26;

/// Runs `entry` on the heap with `inputs` and compares with the reference interpreter.
pub fn check_validity(
    program: &Program,
    mem: &MemProgram,
    entry: FnId,
    inputs: &[Value],
) -> std::result::Result<Validity, ValidityError> {
    let Ok(want) = weft_core::run_entry(program, entry, inputs.to_vec()) else {
        return Ok(Validity::ReferenceFailed);
    };
    let got =
        run_entry_on_heap(program, mem, entry, inputs.to_vec()).map_err(ValidityError::Heap)?;
    weft_values::compare_all(&got, &want).map_err(|m| ValidityError::Mismatch(m.to_string()))?;
    Ok(Validity::Same)
}

/// Runs an entry point on the heap (see the module docs) and returns its results, one
/// value per component of a tuple result.
pub fn run_entry_on_heap(
    program: &Program,
    mem: &MemProgram,
    entry: FnId,
    inputs: Vec<Value>,
) -> Result<Vec<Value>> {
    let mut interp = Interp {
        program,
        mem,
        heap: Vec::new(),
        soacs: Vec::new(),
        writers: FxHashMap::default(),
        reuse: FxHashMap::default(),
    };
    let f = &program.functions[entry];
    let mut inputs = inputs.into_iter();
    let mut args = Vec::new();
    for &param in &f.params {
        args.push(interp.input(&value_shape(&f.vars[param].ty), &mut inputs)?);
    }
    let result = interp.call(entry, args)?;
    let mut out = Vec::new();
    interp.output(&result, &mut out)?;
    Ok(out)
}

/// `(shape, stride)` per dimension of a dense row-major array of `shape`.
fn row_major(shape: &[usize]) -> Vec<(usize, i64)> {
    let mut dims = Vec::new();
    let mut stride = 1i64;
    for &n in shape.iter().rev() {
        dims.push((n, stride));
        stride *= to_i64(n);
    }
    dims.reverse();
    dims
}

/// Binds the sizes of `shape` that have no value yet, or that are existentials, to
/// the sizes of `val`, as the reference interpreter does for every binding (a
/// statement's type may name an existential its layout does not, when the layout
/// states it through its definition: `size_definitions`).
fn bind_type_sizes(run: &mut Run<'_>, shape: &ValueShape, val: &HVal) {
    match (shape, val) {
        (ValueShape::Array(dims, _), HVal::Array(arr)) => {
            for (dim, n) in dims.iter().zip(arr.shape()) {
                if let Some(v) = dim.as_var()
                    && (!run.fr.vals.contains_key(v) || run.f.vars[*v].kind == VarKind::Existential)
                {
                    run.fr.vals.insert(*v, HVal::Scalar(Scalar::I64(to_i64(n))));
                }
            }
        }
        (ValueShape::Tuple(shapes), HVal::Tuple(vals)) => {
            for (shape, val) in shapes.iter().zip(vals) {
                bind_type_sizes(run, shape, val);
            }
        }
        _ => {}
    }
}

/// A concrete array: a block label and an LMAD with integer components.
#[derive(Debug, Clone, PartialEq)]
struct HArr {
    label: usize,
    offset: i64,
    /// `(shape, stride)` per dimension, outermost first.
    dims: Vec<(usize, i64)>,
}

impl HArr {
    fn n_elems(&self) -> usize {
        self.dims.iter().map(|d| d.0).product()
    }

    fn shape(&self) -> Vec<usize> {
        self.dims.iter().map(|d| d.0).collect()
    }

    fn row(&self, i: usize) -> HArr {
        let mut res = self.clone();
        let (_, stride) = res.dims.remove(0);
        res.offset += to_i64(i) * stride;
        res
    }

    /// Same addresses (strides of dimensions of size 1 and empty arrays do not matter).
    fn same_layout(&self, other: &HArr) -> bool {
        if self.shape() != other.shape() {
            return false;
        }
        if self.n_elems() == 0 {
            return true;
        }
        self.label == other.label
            && self.offset == other.offset
            && self.dims.iter().zip(&other.dims).all(|(a, b)| a.0 <= 1 || a.1 == b.1)
    }
}

#[derive(Debug, Clone)]
enum HVal {
    Scalar(Scalar),
    Array(HArr),
    Tuple(Vec<HVal>),
}

/// A value with its elements in row-major order, not (yet) in the heap.
#[derive(Debug, Clone)]
enum Logical {
    Scalar(Scalar),
    Array { shape: Vec<usize>, data: Vec<Scalar> },
    Tuple(Vec<Logical>),
}

/// What an expression produced: heap values, or elements still to be written.
#[derive(Debug, Clone)]
enum Produced {
    Val(HVal),
    Dense(Logical),
    Tuple(Vec<Produced>),
}

struct HBlock {
    elem: weft_values::ScalarType,
    data: Vec<Scalar>,
}

#[derive(Default)]
struct Frame {
    vals: FxHashMap<VarId, HVal>,
    sizes: FxHashMap<MemVar, i64>,
    labels: FxHashMap<MemBlockId, usize>,
}

struct Interp<'a> {
    program: &'a Program,
    mem: &'a MemProgram,
    heap: Vec<HBlock>,
    /// The running `map`/`generate`s: expression, iteration, first label allocated
    /// after it started.
    soacs: Vec<(ExpId, usize, usize)>,
    /// The iterations that last wrote each shared address.
    writers: FxHashMap<(usize, i64), Vec<(ExpId, usize)>>,
    /// weft-core's update decisions per function (by address), computed on use.
    reuse: FxHashMap<usize, FxHashMap<ExpId, weft_core::UpdateReuse>>,
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn zero(ty: ScalarTy) -> Scalar {
    Scalar::Bool(false).convert(ty)
}

/// The addresses of an array's elements, in row-major order of its indices.
fn addresses(arr: &HArr) -> Vec<i64> {
    let mut out = vec![arr.offset];
    for &(n, stride) in &arr.dims {
        let mut next = Vec::with_capacity(out.len() * n);
        for &base in &out {
            for i in 0..n {
                next.push(base + to_i64(i) * stride);
            }
        }
        out = next;
    }
    out
}

impl<'a> Interp<'a> {
    /// Row `i` of a value as heap values; a row of an array is copied into a fresh
    /// block (the bins of a `reduce_by_index`, rewritten as it runs, are no view).
    fn row_on_heap(&mut self, l: &Logical, i: usize) -> Result<HVal> {
        match l {
            Logical::Array { shape, data } if shape.len() == 1 => data
                .get(i)
                .map(|s| HVal::Scalar(*s))
                .ok_or_else(|| HeapError::new("bin out of range")),
            Logical::Array { shape, data } => {
                let row: usize = shape.iter().skip(1).product();
                let values = data
                    .get(i * row..(i + 1) * row)
                    .ok_or_else(|| HeapError::new("bin out of range"))?
                    .to_vec();
                let elem = values.first().map_or(weft_values::ScalarType::I64, |s| s.ty());
                let label = self.heap.len();
                self.heap.push(HBlock { elem, data: values });
                let mut dims = Vec::new();
                let mut stride = 1i64;
                for &n in shape.iter().skip(1).rev() {
                    dims.push((n, stride));
                    stride *= to_i64(n);
                }
                dims.reverse();
                Ok(HVal::Array(HArr { label, offset: 0, dims }))
            }
            Logical::Tuple(items) => Ok(HVal::Tuple(
                items.iter().map(|p| self.row_on_heap(p, i)).collect::<Result<_>>()?,
            )),
            Logical::Scalar(_) => Err(HeapError::new("bins of a scalar")),
        }
    }

    /// The value with every array in a fresh row-major block of its own.
    fn copy_on_heap(&mut self, val: &HVal) -> Result<HVal> {
        match val {
            HVal::Scalar(_) => Ok(val.clone()),
            HVal::Tuple(items) => {
                Ok(HVal::Tuple(items.iter().map(|v| self.copy_on_heap(v)).collect::<Result<_>>()?))
            }
            HVal::Array(arr) => {
                let shape = arr.shape();
                let data = self.read_dense(arr)?;
                let elem = self.heap[arr.label].elem;
                let label = self.heap.len();
                self.heap.push(HBlock { elem, data });
                Ok(HVal::Array(HArr { label, offset: 0, dims: row_major(&shape) }))
            }
        }
    }

    fn input(
        &mut self,
        shape: &ValueShape,
        inputs: &mut impl Iterator<Item = Value>,
    ) -> Result<HVal> {
        match shape {
            ValueShape::Tuple(items) => {
                Ok(HVal::Tuple(items.iter().map(|s| self.input(s, inputs)).collect::<Result<_>>()?))
            }
            ValueShape::Scalar(_) => {
                let value = inputs.next().ok_or_else(|| HeapError::new("too few inputs"))?;
                value
                    .as_scalar()
                    .map(HVal::Scalar)
                    .ok_or_else(|| HeapError::new("expected a scalar input"))
            }
            ValueShape::Array(..) => {
                let value = inputs.next().ok_or_else(|| HeapError::new("too few inputs"))?;
                let (shape, data) = value.into_parts();
                let label = self.heap.len();
                self.heap.push(HBlock { elem: data.elem_type(), data: data.iter().collect() });
                Ok(HVal::Array(HArr { label, offset: 0, dims: row_major(&shape) }))
            }
        }
    }

    fn output(&self, val: &HVal, out: &mut Vec<Value>) -> Result<()> {
        match val {
            HVal::Scalar(s) => out.push(Value::scalar(*s)),
            HVal::Tuple(items) => {
                for item in items {
                    self.output(item, out)?;
                }
            }
            HVal::Array(arr) => {
                let data = self.read_dense(arr)?;
                let ty = self.heap.get(arr.label).map_or(weft_values::ScalarType::I32, |b| b.elem);
                let mut array = ArrayData::with_capacity(ty, data.len());
                for s in data {
                    array
                        .push(s)
                        .map_err(|_| HeapError::new("invalid memory: mixed element types"))?;
                }
                out.push(
                    Value::new(arr.shape(), array)
                        .map_err(|_| HeapError::new("invalid memory: bad shape"))?,
                );
            }
        }
        Ok(())
    }

    fn read(&self, label: usize, addr: i64) -> Result<Scalar> {
        let block =
            self.heap.get(label).ok_or_else(|| HeapError::new("invalid memory: unknown block"))?;
        usize::try_from(addr).ok().and_then(|a| block.data.get(a).copied()).ok_or_else(|| {
            HeapError::new(format!(
                "invalid memory: read at {addr} outside a block of {}",
                block.data.len()
            ))
        })
    }

    fn write(&mut self, label: usize, addr: i64, value: Scalar) -> Result<()> {
        let shared: Vec<(ExpId, usize)> = self
            .soacs
            .iter()
            .filter(|(_, _, first)| label < *first)
            .map(|(e, i, _)| (*e, *i))
            .collect();
        if !shared.is_empty() {
            if let Some(prev) = self.writers.get(&(label, addr))
                && shared.iter().any(|(e, i)| prev.iter().any(|(pe, pi)| pe == e && pi != i))
            {
                return Err(HeapError::new(format!(
                    "invalid memory: two iterations write address {addr}"
                )));
            }
            self.writers.insert((label, addr), shared);
        }
        let block = self
            .heap
            .get_mut(label)
            .ok_or_else(|| HeapError::new("invalid memory: unknown block"))?;
        let len = block.data.len();
        let slot =
            usize::try_from(addr).ok().and_then(|a| block.data.get_mut(a)).ok_or_else(|| {
                HeapError::new(format!("invalid memory: write at {addr} outside a block of {len}"))
            })?;
        *slot = value;
        Ok(())
    }

    fn addr(arr: &HArr, idx: &[usize]) -> i64 {
        arr.dims.iter().zip(idx).fold(arr.offset, |acc, (d, &i)| acc + to_i64(i) * d.1)
    }

    fn read_dense(&self, arr: &HArr) -> Result<Vec<Scalar>> {
        addresses(arr).into_iter().map(|addr| self.read(arr.label, addr)).collect()
    }

    fn to_logical(&self, val: &HVal) -> Result<Logical> {
        Ok(match val {
            HVal::Scalar(s) => Logical::Scalar(*s),
            HVal::Array(arr) => Logical::Array { shape: arr.shape(), data: self.read_dense(arr)? },
            HVal::Tuple(items) => {
                Logical::Tuple(items.iter().map(|v| self.to_logical(v)).collect::<Result<_>>()?)
            }
        })
    }

    fn produced_logical(&self, p: &Produced) -> Result<Logical> {
        match p {
            Produced::Val(v) => self.to_logical(v),
            Produced::Dense(l) => Ok(l.clone()),
            Produced::Tuple(items) => Ok(Logical::Tuple(
                items.iter().map(|i| self.produced_logical(i)).collect::<Result<_>>()?,
            )),
        }
    }

    fn eval(fr: &Frame, size: &MemSize) -> Result<i64> {
        size.eval(&mut |v| match v {
            MemVar::Core(c) => match fr.vals.get(c) {
                Some(HVal::Scalar(s)) => Some(scalar_i64(*s)),
                Some(HVal::Array(_) | HVal::Tuple(_)) | None => None,
            },
            MemVar::Thread(_) | MemVar::Exist(_) => fr.sizes.get(v).copied(),
        })
        .map_err(|e| HeapError::new(format!("invalid memory: cannot evaluate a size: {e:?}")))
    }

    fn alloc(&mut self, fr: &mut Frame, mem_f: &MemFunction, block: MemBlockId) -> Result<()> {
        let elems = match &mem_f.blocks[block].binding {
            BlockBinding::Alloc { elems, .. } | BlockBinding::ResultAlloc { elems } => {
                Self::eval(fr, elems)?
            }
            BlockBinding::Param { .. } | BlockBinding::Existential { .. } => return Ok(()),
        };
        if !(0..=MAX_BLOCK).contains(&elems) {
            return Err(HeapError::new(format!("invalid memory: allocation of {elems} elements")));
        }
        let label = self.heap.len();
        let elem = mem_f.blocks[block].elem;
        self.heap.push(HBlock {
            elem: zero(elem).ty(),
            data: vec![zero(elem); usize::try_from(elems).unwrap_or(0)],
        });
        fr.labels.insert(block, label);
        Ok(())
    }

    fn call(&mut self, fn_id: FnId, args: Vec<HVal>) -> Result<HVal> {
        let program: &'a Program = self.program;
        let mem: &'a MemProgram = self.mem;
        let f = &program.functions[fn_id];
        let mem_f = mem
            .functions
            .get(fn_id)
            .ok_or_else(|| HeapError::new("invalid memory: a function without annotation"))?;
        let mut allocs: FxHashMap<VarId, Vec<MemBlockId>> = FxHashMap::default();
        for (id, block) in mem_f.blocks.iter() {
            if let BlockBinding::Alloc { before, .. } = &block.binding {
                allocs.entry(*before).or_default().push(id);
            }
        }
        let mut run = Run { f, mem_f, allocs, fr: Frame::default() };
        for (&param, arg) in f.params.iter().zip(args) {
            let info = mem_f.bindings.get(param).cloned().unwrap_or_default();
            let val = self.bind(&mut run, &info, Produced::Val(arg))?;
            run.fr.vals.insert(param, val);
        }
        let result = self.block(&mut run, f.body)?;
        if !f.is_entry {
            return Ok(result);
        }
        let copies: Vec<MemBlockId> = mem_f
            .blocks
            .iter()
            .filter(|(_, b)| matches!(b.binding, BlockBinding::ResultAlloc { .. }))
            .map(|(id, _)| id)
            .collect();
        for block in copies {
            self.alloc(&mut run.fr, mem_f, block)?;
        }
        self.bind(&mut run, &mem_f.result, Produced::Val(result))
    }

    /// Binds a produced value to its annotated memory (see the module docs).
    fn bind(&mut self, run: &mut Run<'_>, info: &MemInfo, produced: Produced) -> Result<HVal> {
        match info {
            MemInfo::Scalar => match produced {
                Produced::Val(v) => Ok(v),
                Produced::Dense(l) => self.logical_scalar(&l),
                Produced::Tuple(items) => {
                    let vals: Vec<HVal> = items
                        .into_iter()
                        .map(|p| self.bind(run, &MemInfo::Scalar, p))
                        .collect::<Result<_>>()?;
                    Ok(HVal::Tuple(vals))
                }
            },
            MemInfo::Tuple(infos) => {
                let parts: Vec<Produced> = match produced {
                    Produced::Val(HVal::Tuple(vals)) => {
                        vals.into_iter().map(Produced::Val).collect()
                    }
                    Produced::Dense(Logical::Tuple(items)) => {
                        items.into_iter().map(Produced::Dense).collect()
                    }
                    Produced::Tuple(items) => items,
                    Produced::Val(_) | Produced::Dense(_) => {
                        return Err(HeapError::new(
                            "invalid memory: a tuple annotation for a non-tuple value",
                        ));
                    }
                };
                if parts.len() != infos.len() {
                    return Err(HeapError::new("invalid memory: tuple arity"));
                }
                let vals = infos
                    .iter()
                    .zip(parts)
                    .map(|(i, p)| self.bind(run, i, p))
                    .collect::<Result<_>>()?;
                Ok(HVal::Tuple(vals))
            }
            MemInfo::Array(array) => {
                let shape = match &produced {
                    Produced::Val(HVal::Array(arr)) => arr.shape(),
                    Produced::Dense(Logical::Array { shape, .. }) => shape.clone(),
                    Produced::Val(_) | Produced::Dense(_) | Produced::Tuple(_) => {
                        return Err(HeapError::new(
                            "invalid memory: an array annotation for a non-array value",
                        ));
                    }
                };
                // Sizes not known yet (existential sizes, size parameters) come from the value.
                for (dim, &n) in array.lmad.dims.iter().zip(&shape) {
                    if let Some(MemVar::Core(v)) = dim.shape.as_var()
                        && (!run.fr.vals.contains_key(v)
                            || run.f.vars[*v].kind == VarKind::Existential)
                    {
                        run.fr.vals.insert(*v, HVal::Scalar(Scalar::I64(to_i64(n))));
                    }
                }
                match &array.how {
                    Provenance::View | Provenance::Existential => {
                        let Produced::Val(HVal::Array(arr)) = produced else {
                            return Err(HeapError::new(
                                "invalid memory: a view of a value that is not one LMAD",
                            ));
                        };
                        let block = &run.mem_f.blocks[array.block];
                        // An existential block is whatever block the value of its
                        // defining binding is in (views of it must agree); a parameter's
                        // block is fixed by the argument, once.
                        match block.binding {
                            BlockBinding::Existential { .. }
                                if array.how == Provenance::Existential =>
                            {
                                run.fr.labels.insert(array.block, arr.label);
                            }
                            BlockBinding::Param { .. } => {
                                run.fr.labels.entry(array.block).or_insert(arr.label);
                            }
                            BlockBinding::Existential { .. }
                            | BlockBinding::Alloc { .. }
                            | BlockBinding::ResultAlloc { .. } => {}
                        }
                        let defines = array.how == Provenance::Existential;
                        if defines && let Some(MemVar::Exist(x)) = array.lmad.offset.as_var() {
                            run.fr.sizes.insert(MemVar::Exist(*x), arr.offset);
                        }
                        for (dim, &(_, stride)) in array.lmad.dims.iter().zip(&arr.dims) {
                            if defines && let Some(MemVar::Exist(x)) = dim.stride.as_var() {
                                run.fr.sizes.insert(MemVar::Exist(*x), stride);
                            }
                        }
                        let annotated = self.annotated(run, array)?;
                        if !annotated.same_layout(&arr) {
                            return Err(HeapError::new(format!(
                                "invalid memory: the annotation says {annotated:?} but the value is {arr:?}"
                            )));
                        }
                        Ok(HVal::Array(annotated))
                    }
                    Provenance::Fresh | Provenance::Copy(_) | Provenance::InPlace => {
                        let data = match self.produced_logical(&produced)? {
                            Logical::Array { data, .. } => data,
                            Logical::Scalar(_) | Logical::Tuple(_) => {
                                return Err(HeapError::new("invalid memory: array expected"));
                            }
                        };
                        let annotated = self.annotated(run, array)?;
                        if annotated.shape() != shape {
                            return Err(HeapError::new(
                                "invalid memory: the annotated shape is not the value's",
                            ));
                        }
                        for (addr, value) in addresses(&annotated).into_iter().zip(data) {
                            self.write(annotated.label, addr, value)?;
                        }
                        Ok(HVal::Array(annotated))
                    }
                }
            }
        }
    }

    fn annotated(&self, run: &Run<'_>, array: &crate::ir::ArrayMem) -> Result<HArr> {
        let label =
            *run.fr.labels.get(&array.block).ok_or_else(|| {
                HeapError::new("invalid memory: a block used before its allocation")
            })?;
        let offset = Self::eval(&run.fr, &array.lmad.offset)?;
        let mut dims = Vec::new();
        for dim in &array.lmad.dims {
            let n = Self::eval(&run.fr, &dim.shape)?;
            dims.push((usize::try_from(n).unwrap_or(0), Self::eval(&run.fr, &dim.stride)?));
        }
        Ok(HArr { label, offset, dims })
    }

    fn logical_scalar(&self, l: &Logical) -> Result<HVal> {
        match l {
            Logical::Scalar(s) => Ok(HVal::Scalar(*s)),
            Logical::Tuple(items) => Ok(HVal::Tuple(
                items.iter().map(|i| self.logical_scalar(i)).collect::<Result<_>>()?,
            )),
            Logical::Array { .. } => Err(HeapError::new("invalid memory: an array without memory")),
        }
    }

    fn block(&mut self, run: &mut Run<'a>, block: BlockId) -> Result<HVal> {
        let f = run.f;
        for stmt in &f.blocks[block].stmts {
            if let Some(blocks) = run.allocs.get(&stmt.var).cloned() {
                for b in blocks {
                    self.alloc(&mut run.fr, run.mem_f, b)?;
                }
            }
            let produced = self.exp(run, stmt.var, stmt.exp).map_err(|mut e| {
                if e.origin.is_none() {
                    e.origin = f.origins.get(stmt.exp).cloned();
                }
                e
            })?;
            let mem_f: &'a MemFunction = run.mem_f;
            let info = mem_f.bindings.get(stmt.var).unwrap_or(&SCALAR);
            let val = self.bind(run, info, produced)?;
            bind_type_sizes(run, &value_shape(&f.vars[stmt.var].ty), &val);
            run.fr.vals.insert(stmt.var, val);
        }
        match f.blocks[block].result {
            Some(atom) => self.atom(run, atom),
            None => Ok(HVal::Tuple(Vec::new())),
        }
    }

    fn atom(&self, run: &Run<'_>, atom: Atom) -> Result<HVal> {
        match atom {
            Atom::Const(s) => Ok(HVal::Scalar(s)),
            Atom::Var(v) => {
                run.fr.vals.get(&v).cloned().ok_or_else(|| HeapError::new("unbound variable"))
            }
        }
    }

    fn scalar(&self, run: &Run<'_>, atom: Atom) -> Result<Scalar> {
        match self.atom(run, atom)? {
            HVal::Scalar(s) => Ok(s),
            HVal::Array(_) | HVal::Tuple(_) => Err(HeapError::new("scalar expected")),
        }
    }

    fn int(&self, run: &Run<'_>, atom: Atom) -> Result<i64> {
        Ok(scalar_i64(self.scalar(run, atom)?))
    }

    fn bind_param(&mut self, run: &mut Run<'a>, param: VarId, val: HVal) -> Result<()> {
        let mem_f: &'a MemFunction = run.mem_f;
        let info = mem_f.bindings.get(param).unwrap_or(&SCALAR);
        let val = self.bind(run, info, Produced::Val(val))?;
        run.fr.vals.insert(param, val);
        Ok(())
    }

    fn apply(&mut self, run: &mut Run<'a>, lambda: &Lambda, args: Vec<HVal>) -> Result<HVal> {
        for (&param, arg) in lambda.params.iter().zip(args) {
            self.bind_param(run, param, arg)?;
        }
        self.block(run, lambda.body)
    }

    /// Runs `n` iterations of a parallel SOAC, each with its thread index bound.
    fn parallel(
        &mut self,
        run: &mut Run<'a>,
        exp: ExpId,
        n: usize,
        lambda: &Lambda,
        args: &dyn Fn(usize) -> Vec<HVal>,
    ) -> Result<Vec<Logical>> {
        let mut results = Vec::with_capacity(n);
        for i in 0..n {
            run.fr.sizes.insert(MemVar::Thread(exp), to_i64(i));
            self.soacs.push((exp, i, self.heap.len()));
            let res = self.apply(run, lambda, args(i));
            self.soacs.pop();
            results.push(self.to_logical(&res?)?);
        }
        if self.soacs.is_empty() {
            self.writers.clear();
        }
        Ok(results)
    }

    #[expect(clippy::too_many_lines, reason = "one arm per expression kind")]
    fn exp(&mut self, run: &mut Run<'a>, var: VarId, exp_id: ExpId) -> Result<Produced> {
        let f = run.f;
        let result_shape = || value_shape(&f.vars[var].ty);
        Ok(match &f.exps[exp_id] {
            Exp::Atom(a) => Produced::Val(self.atom(run, *a)?),
            Exp::Size(size) => {
                let size = crate::lower::mem_size(size);
                Produced::Val(HVal::Scalar(Scalar::I64(Self::eval(&run.fr, &size)?)))
            }
            Exp::BinOp { op, lhs, rhs, .. } => {
                let (a, b) = (self.scalar(run, *lhs)?, self.scalar(run, *rhs)?);
                Produced::Val(HVal::Scalar(
                    weft_values::binop(*op, a, b).map_err(|e| HeapError::new(e.message()))?,
                ))
            }
            Exp::UnOp { op, operand, .. } => Produced::Val(HVal::Scalar(
                weft_values::unop(*op, self.scalar(run, *operand)?)
                    .map_err(|e| HeapError::new(e.message()))?,
            )),
            Exp::Convert { to, operand, .. } => {
                Produced::Val(HVal::Scalar(self.scalar(run, *operand)?.convert(*to)))
            }
            Exp::Math { ty, func, args } => {
                let args = args.iter().map(|&a| self.scalar(run, a)).collect::<Result<Vec<_>>>()?;
                Produced::Val(HVal::Scalar(
                    weft_values::math(*ty, *func, &args)
                        .map_err(|e| HeapError::new(e.message()))?,
                ))
            }
            Exp::Tuple(atoms) => Produced::Val(HVal::Tuple(
                atoms.iter().map(|&a| self.atom(run, a)).collect::<Result<_>>()?,
            )),
            Exp::Proj { tuple, index } => match self.atom(run, *tuple)? {
                HVal::Tuple(mut vals) if (*index as usize) < vals.len() => {
                    Produced::Val(vals.swap_remove(*index as usize))
                }
                HVal::Tuple(_) | HVal::Scalar(_) | HVal::Array(_) => {
                    return Err(HeapError::new("bad projection"));
                }
            },
            Exp::ArrayLit { elems, .. } => {
                let items = elems
                    .iter()
                    .map(|&a| self.atom(run, a).and_then(|v| self.to_logical(&v)))
                    .collect::<Result<Vec<_>>>()?;
                Produced::Dense(stack(items, &result_shape(), &run.fr)?)
            }
            Exp::Index { array, items } => {
                let val = self.atom(run, *array)?;
                let mut idx = Vec::new();
                for item in items {
                    idx.push(match item {
                        IndexItem::Fix(a) => Idx::Fix(self.int(run, *a)?),
                        IndexItem::Slice { start, end, stride } => Idx::Slice(
                            start.map(|a| self.int(run, a)).transpose()?,
                            end.map(|a| self.int(run, a)).transpose()?,
                            stride.map(|a| self.int(run, a)).transpose()?.unwrap_or(1),
                        ),
                    });
                }
                let name = run.f.atom_name(*array);
                self.map_leaves(&val, &mut |interp, arr| interp.index(arr, &name, &idx))?
            }
            Exp::Dim { array, dim } => {
                let val = self.atom(run, *array)?;
                let n = first_shape(&val).get(*dim as usize).copied().unwrap_or(0);
                Produced::Val(HVal::Scalar(Scalar::I64(to_i64(n))))
            }
            Exp::Call { func, args } => {
                let args = args.iter().map(|&a| self.atom(run, a)).collect::<Result<Vec<_>>>()?;
                Produced::Val(self.call(*func, args)?)
            }
            Exp::If { cond, then_branch, else_branch } => {
                let branch = match self.scalar(run, *cond)? {
                    Scalar::Bool(true) => *then_branch,
                    _ => *else_branch,
                };
                Produced::Val(self.block(run, branch)?)
            }
            Exp::Loop { param, init, form, body } => {
                let mut acc = self.atom(run, *init)?;
                let reuse = self
                    .reuse
                    .entry(std::ptr::from_ref(f) as usize)
                    .or_insert_with(|| weft_core::update_reuse(f));
                if weft_core::loop_updates_in_place(f, reuse, *param, *body) {
                    // The loop writes into its parameter: it starts from memory of its
                    // own, as the code generator gives it (the initial value may be
                    // read while the loop runs).
                    acc = self.copy_on_heap(&acc)?;
                }
                match form {
                    LoopForm::For { index, bound } => {
                        let bound = self.scalar(run, *bound)?;
                        let ty = bound.ty();
                        for i in 0..scalar_i64(bound).max(0) {
                            self.bind_param(run, *param, acc)?;
                            let index_val = Scalar::I64(i).convert(ty);
                            run.fr.vals.insert(*index, HVal::Scalar(index_val));
                            acc = self.block(run, *body)?;
                        }
                    }
                    LoopForm::While { cond } => loop {
                        self.bind_param(run, *param, acc.clone())?;
                        match self.block(run, *cond)? {
                            HVal::Scalar(Scalar::Bool(true)) => {}
                            _ => break,
                        }
                        acc = self.block(run, *body)?;
                    },
                }
                Produced::Val(acc)
            }
            Exp::Map { lambda, arrays, .. } => {
                let arrays =
                    arrays.iter().map(|&a| self.atom(run, a)).collect::<Result<Vec<_>>>()?;
                let n = arrays.first().map_or(0, |a| first_shape(a).first().copied().unwrap_or(0));
                let rows =
                    |i: usize| arrays.iter().map(|a| elem(self, a, i)).collect::<Result<Vec<_>>>();
                let mut args = Vec::with_capacity(n);
                for i in 0..n {
                    args.push(rows(i)?);
                }
                let results = self.parallel(run, exp_id, n, lambda, &|i| args[i].clone())?;
                Produced::Dense(stack(results, &result_shape(), &run.fr)?)
            }
            Exp::Generate { size, lambda, .. } => {
                let n = usize::try_from(self.int(run, *size)?)
                    .map_err(|_| HeapError::new("negative size"))?;
                let results = self.parallel(run, exp_id, n, lambda, &|i| {
                    vec![HVal::Scalar(Scalar::I64(to_i64(i)))]
                })?;
                Produced::Dense(stack(results, &result_shape(), &run.fr)?)
            }
            Exp::Reduce { lambda, neutral, array, .. }
            | Exp::Scan { lambda, neutral, array, .. } => {
                let array = self.atom(run, *array)?;
                let mut acc = self.atom(run, *neutral)?;
                let n = first_shape(&array).first().copied().unwrap_or(0);
                let mut results = Vec::new();
                for i in 0..n {
                    let x = elem(self, &array, i)?;
                    acc = self.apply(run, lambda, vec![acc, x])?;
                    results.push(self.to_logical(&acc)?);
                }
                if matches!(f.exps[exp_id], Exp::Reduce { .. }) {
                    Produced::Val(acc)
                } else {
                    Produced::Dense(stack(results, &result_shape(), &run.fr)?)
                }
            }
            Exp::Scatter { dest, indices, values } => {
                let mut out = self.to_logical(&self.atom(run, *dest)?)?;
                let indices = self.atom(run, *indices)?;
                let values = self.atom(run, *values)?;
                let n = first_len(&out);
                let m = first_shape(&indices)
                    .first()
                    .copied()
                    .unwrap_or(0)
                    .min(first_shape(&values).first().copied().unwrap_or(0));
                for j in 0..m {
                    let HVal::Scalar(s) = elem(self, &indices, j)? else { continue };
                    if let Ok(i) = usize::try_from(scalar_i64(s))
                        && i < n
                    {
                        let v = self.to_logical(&elem(self, &values, j)?)?;
                        set_row(&mut out, i, &v)?;
                    }
                }
                Produced::Dense(out)
            }
            Exp::ReduceByIndex { dest, lambda, indices, values, .. } => {
                let mut out = self.to_logical(&self.atom(run, *dest)?)?;
                let indices = self.atom(run, *indices)?;
                let values = self.atom(run, *values)?;
                let n_bins = first_len(&out);
                let n = first_shape(&indices).first().copied().unwrap_or(0);
                for j in 0..n {
                    let HVal::Scalar(s) = elem(self, &indices, j)? else { continue };
                    if let Ok(bin) = usize::try_from(scalar_i64(s))
                        && bin < n_bins
                    {
                        let current = self.row_on_heap(&out, bin)?;
                        let x = elem(self, &values, j)?;
                        let combined = self.apply(run, lambda, vec![current, x])?;
                        let combined = self.to_logical(&combined)?;
                        set_row(&mut out, bin, &combined)?;
                    }
                }
                Produced::Dense(out)
            }
            Exp::Update { array, indices, value } => {
                let mut out = self.to_logical(&self.atom(run, *array)?)?;
                let shape = logical_shape(&out);
                let mut block = 0usize;
                for (dim, &index) in indices.iter().enumerate() {
                    let n = shape.get(dim).copied().unwrap_or(0);
                    let i = self.int(run, index)?;
                    match usize::try_from(i) {
                        Ok(i) if i < n => block = block * n + i,
                        _ => {
                            let check = RuntimeCheck::Index { array: &run.f.atom_name(*array) };
                            return Err(HeapError::new(check.words(&i, &n)));
                        }
                    }
                }
                let value = self.to_logical(&self.atom(run, *value)?)?;
                set_block(&mut out, indices.len(), block, &value)?;
                Produced::Dense(out)
            }
            Exp::Iota { size } => {
                let n = self.int(run, *size)?.max(0);
                Produced::Dense(Logical::Array {
                    shape: vec![usize::try_from(n).unwrap_or(0)],
                    data: (0..n).map(Scalar::I64).collect(),
                })
            }
            Exp::Replicate { size, value } => {
                let n = usize::try_from(self.int(run, *size)?)
                    .map_err(|_| HeapError::new("negative size"))?;
                let value = self.atom(run, *value)?;
                self.replicate(&value, n)?
            }
            Exp::Zip(atoms) => Produced::Val(HVal::Tuple(
                atoms.iter().map(|&a| self.atom(run, a)).collect::<Result<_>>()?,
            )),
            Exp::Unzip(a) | Exp::Materialise { value: a, .. } | Exp::Coerce { value: a, .. } => {
                Produced::Val(self.atom(run, *a)?)
            }
            Exp::Transpose(a) => {
                let val = self.atom(run, *a)?;
                self.map_leaves(&val, &mut |_, arr| {
                    let mut arr = arr.clone();
                    if arr.dims.len() >= 2 {
                        arr.dims.swap(0, 1);
                    }
                    Ok(Produced::Val(HVal::Array(arr)))
                })?
            }
            Exp::Reverse(a) => {
                let val = self.atom(run, *a)?;
                self.map_leaves(&val, &mut |_, arr| {
                    let mut arr = arr.clone();
                    if let Some(d) = arr.dims.first_mut() {
                        if d.0 > 0 {
                            arr.offset += to_i64(d.0 - 1) * d.1;
                        }
                        d.1 = -d.1;
                    }
                    Ok(Produced::Val(HVal::Array(arr)))
                })?
            }
            Exp::Flatten(a) => {
                let val = self.atom(run, *a)?;
                self.map_leaves(&val, &mut |interp, arr| {
                    let mut merged = arr.clone();
                    if arr.dims.len() < 2 {
                        return Err(HeapError::new("flatten of a vector"));
                    }
                    let (outer, inner) = (arr.dims[0], arr.dims[1]);
                    let stride = if outer.1 == to_i64(inner.0) * inner.1 || outer.0 <= 1 {
                        Some(inner.1)
                    } else if inner.0 <= 1 {
                        Some(outer.1)
                    } else {
                        None
                    };
                    merged.dims.remove(0);
                    merged.dims[0].0 = outer.0 * inner.0;
                    match stride {
                        Some(s) => {
                            merged.dims[0].1 = s;
                            Ok(Produced::Val(HVal::Array(merged)))
                        }
                        None => Ok(Produced::Dense(Logical::Array {
                            shape: merged.shape(),
                            data: interp.read_dense(arr)?,
                        })),
                    }
                })?
            }
            Exp::Unflatten { rows, cols, array } => {
                let (r, c) = (self.int(run, *rows)?, self.int(run, *cols)?);
                let val = self.atom(run, *array)?;
                let (r, c) = (usize::try_from(r).unwrap_or(0), usize::try_from(c).unwrap_or(0));
                self.map_leaves(&val, &mut |_, arr| {
                    Ok(Produced::Val(HVal::Array(unflatten(arr, r, c))))
                })?
            }
            Exp::Split { chunk, array } => {
                let k = usize::try_from(self.int(run, *chunk)?).unwrap_or(1).max(1);
                let val = self.atom(run, *array)?;
                self.map_leaves(&val, &mut |_, arr| {
                    let n = arr.dims.first().map_or(0, |d| d.0);
                    Ok(Produced::Val(HVal::Array(unflatten(arr, n / k, k))))
                })?
            }
            Exp::Take { count, array } | Exp::Drop { count, array } => {
                let k = usize::try_from(self.int(run, *count)?).unwrap_or(0);
                let is_take = matches!(f.exps[exp_id], Exp::Take { .. });
                let val = self.atom(run, *array)?;
                self.map_leaves(&val, &mut |_, arr| {
                    let mut arr = arr.clone();
                    if let Some(d) = arr.dims.first_mut() {
                        let k = k.min(d.0);
                        if is_take {
                            d.0 = k;
                        } else {
                            arr.offset += to_i64(k) * d.1;
                            d.0 -= k;
                        }
                    }
                    Ok(Produced::Val(HVal::Array(arr)))
                })?
            }
            Exp::Concat(a, b) => {
                let a = self.to_logical(&self.atom(run, *a)?)?;
                let b = self.to_logical(&self.atom(run, *b)?)?;
                Produced::Dense(concat(a, b)?)
            }
        })
    }

    fn map_leaves(
        &mut self,
        val: &HVal,
        op: &mut dyn FnMut(&mut Self, &HArr) -> Result<Produced>,
    ) -> Result<Produced> {
        match val {
            HVal::Array(arr) => op(self, arr),
            HVal::Tuple(items) => Ok(Produced::Tuple(
                items.iter().map(|i| self.map_leaves(i, op)).collect::<Result<_>>()?,
            )),
            HVal::Scalar(s) => Ok(Produced::Val(HVal::Scalar(*s))),
        }
    }

    fn replicate(&mut self, val: &HVal, n: usize) -> Result<Produced> {
        Ok(match val {
            HVal::Scalar(s) => {
                Produced::Dense(Logical::Array { shape: vec![n], data: vec![*s; n] })
            }
            HVal::Array(arr) => {
                let mut arr = arr.clone();
                arr.dims.insert(0, (n, 0));
                Produced::Val(HVal::Array(arr))
            }
            HVal::Tuple(items) => {
                Produced::Tuple(items.iter().map(|i| self.replicate(i, n)).collect::<Result<_>>()?)
            }
        })
    }

    /// `arr` (the array called `name` in messages) indexed by `items`.
    fn index(&self, arr: &HArr, name: &str, items: &[Idx]) -> Result<Produced> {
        let mut res = HArr { label: arr.label, offset: arr.offset, dims: Vec::new() };
        for (dim_idx, &(n, stride)) in arr.dims.iter().enumerate() {
            let n_i64 = to_i64(n);
            match items.get(dim_idx) {
                None => res.dims.push((n, stride)),
                Some(Idx::Fix(i)) => {
                    if !(0..n_i64).contains(i) {
                        return Err(HeapError::new(
                            RuntimeCheck::Index { array: name }.words(i, &n),
                        ));
                    }
                    res.offset += i * stride;
                }
                Some(Idx::Slice(start, end, step)) => {
                    let step = *step;
                    let (s, e) = if step >= 0 {
                        (start.unwrap_or(0), end.unwrap_or(n_i64))
                    } else {
                        (start.unwrap_or(n_i64 - 1), end.unwrap_or(-1))
                    };
                    let len = if step > 0 && e > s {
                        (e - s + step - 1) / step
                    } else if step < 0 && s > e {
                        (s - e + (-step) - 1) / (-step)
                    } else {
                        0
                    };
                    if step == 0 {
                        return Err(HeapError::new("slice with stride 0"));
                    }
                    if len > 0 {
                        res.offset += s * stride;
                    }
                    res.dims.push((usize::try_from(len).unwrap_or(0), step * stride));
                }
            }
        }
        if res.dims.is_empty() {
            return Ok(Produced::Val(HVal::Scalar(self.read(res.label, res.offset)?)));
        }
        Ok(Produced::Val(HVal::Array(res)))
    }
}

/// One index of an operational `Index`.
enum Idx {
    Fix(i64),
    Slice(Option<i64>, Option<i64>, i64),
}

struct Run<'a> {
    f: &'a Function,
    mem_f: &'a MemFunction,
    allocs: FxHashMap<VarId, Vec<MemBlockId>>,
    fr: Frame,
}

fn first_shape(val: &HVal) -> Vec<usize> {
    match val {
        HVal::Array(arr) => arr.shape(),
        HVal::Tuple(items) => items.first().map(first_shape).unwrap_or_default(),
        HVal::Scalar(_) => Vec::new(),
    }
}

fn first_len(l: &Logical) -> usize {
    match l {
        Logical::Array { shape, .. } => shape.first().copied().unwrap_or(0),
        Logical::Tuple(items) => items.first().map_or(0, first_len),
        Logical::Scalar(_) => 0,
    }
}

fn elem(interp: &Interp<'_>, val: &HVal, i: usize) -> Result<HVal> {
    Ok(match val {
        HVal::Scalar(s) => HVal::Scalar(*s),
        HVal::Tuple(items) => {
            HVal::Tuple(items.iter().map(|v| elem(interp, v, i)).collect::<Result<_>>()?)
        }
        HVal::Array(arr) if arr.dims.len() == 1 => {
            HVal::Scalar(interp.read(arr.label, Interp::addr(arr, &[i]))?)
        }
        HVal::Array(arr) => HVal::Array(arr.row(i)),
    })
}

fn unflatten(arr: &HArr, r: usize, c: usize) -> HArr {
    let mut arr = arr.clone();
    if let Some(&(_, stride)) = arr.dims.first() {
        arr.dims[0] = (r, to_i64(c) * stride);
        arr.dims.insert(1, (c, stride));
    }
    arr
}

/// Rows stacked into an array of the result's shape (which gives the inner shape of an
/// empty result).
fn stack(items: Vec<Logical>, shape: &ValueShape, fr: &Frame) -> Result<Logical> {
    match shape {
        ValueShape::Scalar(_) => Err(HeapError::new("stack into a scalar")),
        ValueShape::Array(dims, _) => {
            let n = items.len();
            let mut inner: Vec<usize> = Vec::new();
            let mut data = Vec::new();
            let mut first = true;
            for item in items {
                match item {
                    Logical::Scalar(s) => data.push(s),
                    Logical::Array { shape, data: d } => {
                        if first {
                            inner = shape;
                        }
                        data.extend(d);
                    }
                    Logical::Tuple(_) => {
                        return Err(HeapError::new("stack of tuples into an array"));
                    }
                }
                first = false;
            }
            if n == 0 {
                for d in dims.iter().skip(1) {
                    let size = Interp::eval(fr, &crate::lower::mem_size(d)).unwrap_or(0);
                    inner.push(usize::try_from(size).unwrap_or(0));
                }
            }
            let mut shape = vec![n];
            shape.extend(inner);
            Ok(Logical::Array { shape, data })
        }
        ValueShape::Tuple(shapes) => {
            let mut columns: Vec<Vec<Logical>> = vec![Vec::new(); shapes.len()];
            for item in items {
                let Logical::Tuple(parts) = item else {
                    return Err(HeapError::new("stack of non-tuples"));
                };
                for (column, part) in columns.iter_mut().zip(parts) {
                    column.push(part);
                }
            }
            Ok(Logical::Tuple(
                columns
                    .into_iter()
                    .zip(shapes)
                    .map(|(c, s)| stack(c, s, fr))
                    .collect::<Result<_>>()?,
            ))
        }
    }
}

fn set_row(out: &mut Logical, i: usize, value: &Logical) -> Result<()> {
    set_block(out, 1, i, value)
}

/// The shape of a value's arrays (of the first component of a tuple).
fn logical_shape(l: &Logical) -> Vec<usize> {
    match l {
        Logical::Array { shape, .. } => shape.clone(),
        Logical::Tuple(items) => items.first().map(logical_shape).unwrap_or_default(),
        Logical::Scalar(_) => Vec::new(),
    }
}

/// Writes `value` over block `i` of `out`, its `outer` outer dimensions taken as one.
fn set_block(out: &mut Logical, outer: usize, i: usize, value: &Logical) -> Result<()> {
    match (out, value) {
        (Logical::Array { shape, data }, v) => {
            let row: usize = shape.iter().skip(outer).product();
            let values: Vec<Scalar> = match v {
                Logical::Scalar(s) => vec![*s],
                Logical::Array { data, .. } => data.clone(),
                Logical::Tuple(_) => {
                    return Err(HeapError::new("scatter of a tuple into an array"));
                }
            };
            for (k, s) in values.into_iter().enumerate().take(row) {
                if let Some(slot) = data.get_mut(i * row + k) {
                    *slot = s;
                }
            }
            Ok(())
        }
        (Logical::Tuple(outs), Logical::Tuple(values)) => {
            for (o, v) in outs.iter_mut().zip(values) {
                set_block(o, outer, i, v)?;
            }
            Ok(())
        }
        (Logical::Scalar(_) | Logical::Tuple(_), _) => Err(HeapError::new("scatter into a scalar")),
    }
}

fn concat(a: Logical, b: Logical) -> Result<Logical> {
    match (a, b) {
        (Logical::Array { shape, mut data }, Logical::Array { shape: shape_b, data: data_b }) => {
            let mut shape = shape;
            if let (Some(n), Some(m)) = (shape.first_mut(), shape_b.first()) {
                *n += m;
            }
            data.extend(data_b);
            Ok(Logical::Array { shape, data })
        }
        (Logical::Tuple(xs), Logical::Tuple(ys)) => Ok(Logical::Tuple(
            xs.into_iter().zip(ys).map(|(x, y)| concat(x, y)).collect::<Result<_>>()?,
        )),
        _ => Err(HeapError::new("concat of mismatched values")),
    }
}
