//! The GPU IR as core IR: every SegOp written back as nested combinators over its
//! space, every version as an `if` on its threshold. The reference interpreter then
//! gives the GPU IR a meaning, so the tests can check every version of every pass's
//! output against the source program on the examples' test cases.
//!
//! - `segmap (i_0 < n_0, ..., i_k < n_k) body` is
//!   `generate n_0 (\i_0 -> ... generate n_k (\i_k -> body))`, except that a chosen
//!   grid SegMap's dimension whose index only serves to read a row `v = X[i_d]` is
//!   `map (\v -> ...) X`;
//! - `segred` and `segscan` are the same nest over the outer dimensions around a
//!   `reduce`/`scan` of a `generate` over the innermost one;
//! - `seghist` is the same nest around a `reduce_by_index` into the segment's row of
//!   the destination, of the bins and values a `generate` over the innermost
//!   dimension yields;
//! - `version s >= threshold t then a else b` is `if s >= value(t) then a else b`,
//!   the threshold's value given by the caller;
//! - sequential combinators are the core combinators at level `@seq`.

use crate::passes::host::atom_size;
use la_arena::Arena;
use weft_core::{Atom, BinOp, CoreSize, Type, Var, VarId, VarKind};
use weft_hir::{Level, ScalarTy};
use weft_values::Scalar;

use crate::ir::{
    BlockId, Exp, GpuFunction, GpuProgram, Lambda, LoopForm, SegBinOp, SegKind, SegOp, SeqSoac,
    ThresholdId,
};

/// The core program that means what `program` means, each threshold taking the value
/// `threshold_value` gives it.
pub fn to_core(
    program: &GpuProgram,
    threshold_value: &dyn Fn(ThresholdId) -> i64,
) -> weft_core::Program {
    let mut functions: Arena<weft_core::Function> = Arena::default();
    for (id, f) in program.functions.iter() {
        let mut writer = Writer {
            gpu: f,
            threshold_value,
            out: weft_core::Function {
                name: f.name.clone(),
                def: f.def.clone(),
                is_entry: f.is_entry,
                size_params: f.size_params.clone(),
                params: f.params.clone(),
                ret: f.ret.clone(),
                body: weft_core::BlockId::from_raw(0u32.into()),
                vars: f.vars.clone(),
                exps: Arena::default(),
                blocks: Arena::default(),
                origins: Default::default(),
            },
        };
        let body = writer.block(f.body);
        writer.out.body = body;
        let new = functions.alloc(writer.out);
        debug_assert_eq!(new, id, "functions keep their ids");
    }
    weft_core::Program { functions, entries: program.entries.clone() }
}

struct Writer<'a> {
    gpu: &'a GpuFunction,
    threshold_value: &'a dyn Fn(ThresholdId) -> i64,
    out: weft_core::Function,
}

impl Writer<'_> {
    fn new_var(&mut self, ty: Type) -> VarId {
        self.out.vars.alloc(Var { name: weft_hir::Name::new(""), ty, kind: VarKind::Bound })
    }

    fn push(&mut self, stmts: &mut Vec<weft_core::Stmt>, var: VarId, exp: weft_core::Exp) {
        let exp = self.out.exps.alloc(exp);
        stmts.push(weft_core::Stmt { var, exp });
    }

    fn ty_of(&self, atom: Atom) -> Type {
        match atom {
            Atom::Var(v) => self.out.vars[v].ty.clone(),
            Atom::Const(s) => Type::Scalar(scalar_ty(s)),
        }
    }

    /// A block whose several results become one tuple.
    fn block(&mut self, block: BlockId) -> weft_core::BlockId {
        let mut stmts = Vec::new();
        for stmt in &self.gpu.blocks[block].stmts {
            self.stmt(&mut stmts, stmt);
        }
        let results = self.gpu.blocks[block].results.clone();
        let result = self.one_value(&mut stmts, &results);
        self.out.blocks.alloc(weft_core::Block { stmts, result: Some(result) })
    }

    fn one_value(&mut self, stmts: &mut Vec<weft_core::Stmt>, results: &[Atom]) -> Atom {
        match results {
            [one] => *one,
            many => {
                let ty = Type::Tuple(many.iter().map(|&a| self.ty_of(a)).collect());
                let var = self.new_var(ty);
                self.push(stmts, var, weft_core::Exp::Tuple(many.to_vec()));
                Atom::Var(var)
            }
        }
    }

    /// One core operator for a SegOp's operators: itself when there is one combining
    /// one value; otherwise an operator on tuples of all the values, whose parameters
    /// are projected into each operator's own parameters.
    fn operators(
        &mut self,
        stmts: &mut Vec<weft_core::Stmt>,
        ops: &[crate::ir::SegBinOp],
    ) -> (weft_core::Lambda, Atom) {
        if let [op] = ops
            && op.arity() == 1
        {
            let neutral = op.neutral[0];
            return (self.lambda(&op.lambda), neutral);
        }
        let neutrals: Vec<Atom> = ops.iter().flat_map(|op| op.neutral.iter().copied()).collect();
        let neutral = self.one_value(stmts, &neutrals);
        let tuple_ty = self.ty_of(neutral);
        let (acc, next) = (self.new_var(tuple_ty.clone()), self.new_var(tuple_ty.clone()));
        let mut body = Vec::new();
        let mut results = Vec::new();
        let mut index = 0u32;
        for op in ops {
            let arity = op.arity();
            for (k, &param) in op.lambda.params.iter().enumerate() {
                let (tuple, at) = if k < arity {
                    (acc, index + k as u32)
                } else {
                    (next, index + (k - arity) as u32)
                };
                self.push(
                    &mut body,
                    param,
                    weft_core::Exp::Proj { tuple: Atom::Var(tuple), index: at },
                );
            }
            for stmt in &self.gpu.blocks[op.lambda.body].stmts {
                self.stmt(&mut body, stmt);
            }
            results.extend(self.gpu.blocks[op.lambda.body].results.iter().copied());
            index += arity as u32;
        }
        let result = self.one_value(&mut body, &results);
        let body = self.out.blocks.alloc(weft_core::Block { stmts: body, result: Some(result) });
        (weft_core::Lambda { params: vec![acc, next], body, ret: tuple_ty }, neutral)
    }

    /// A transposed copy as core: `flatten` of a transposed array is not a layout change
    /// (no LMAD expresses it), so it means a copy of the array, column after column; the
    /// `unflatten` and second `transpose` are views back to the array's own indices.
    fn manifest(&mut self, stmts: &mut Vec<weft_core::Stmt>, array: Atom) -> weft_core::Exp {
        let ty = self.ty_of(array);
        let (Some(rows), Some(cols), Some(elem)) = (
            ty.outer_size().cloned(),
            ty.elem().and_then(Type::outer_size).cloned(),
            ty.elem().and_then(Type::elem).cloned(),
        ) else {
            // The validator only lets two-dimensional arrays through.
            return weft_core::Exp::Atom(array);
        };
        let columns = Type::array(cols.clone(), Type::array(rows.clone(), elem.clone()));
        let transposed = self.new_var(columns.clone());
        self.push(stmts, transposed, weft_core::Exp::Transpose(array));
        let flat = self.new_var(Type::array(cols.mul(&rows), elem));
        self.push(stmts, flat, weft_core::Exp::Flatten(Atom::Var(transposed)));
        let [n_cols, n_rows] = [&cols, &rows].map(|size| {
            let var = self.new_var(Type::Scalar(ScalarTy::I64));
            self.push(stmts, var, weft_core::Exp::Size(size.clone()));
            Atom::Var(var)
        });
        let copied = self.new_var(columns);
        self.push(
            stmts,
            copied,
            weft_core::Exp::Unflatten { rows: n_cols, cols: n_rows, array: Atom::Var(flat) },
        );
        weft_core::Exp::Transpose(Atom::Var(copied))
    }

    fn lambda(&mut self, lambda: &Lambda) -> weft_core::Lambda {
        let body = self.block(lambda.body);
        let ret = self.out.blocks[body].result.map_or(Type::Tuple(Vec::new()), |a| self.ty_of(a));
        weft_core::Lambda { params: lambda.params.clone(), body, ret }
    }

    fn stmt(&mut self, stmts: &mut Vec<weft_core::Stmt>, stmt: &crate::ir::Stmt) {
        let exp = match &self.gpu.exps[stmt.exp] {
            Exp::Basic(exp) => exp.clone(),
            Exp::Manifest { array } => self.manifest(stmts, *array),
            Exp::If { cond, then_branch, else_branch } => weft_core::Exp::If {
                cond: *cond,
                then_branch: self.block(*then_branch),
                else_branch: self.block(*else_branch),
            },
            Exp::Version { size, threshold, then_branch, else_branch } => {
                let size_var = self.new_var(Type::Scalar(ScalarTy::I64));
                self.push(stmts, size_var, weft_core::Exp::Size(size.clone()));
                let cond = self.new_var(Type::Scalar(ScalarTy::Bool));
                let value = (self.threshold_value)(*threshold);
                self.push(
                    stmts,
                    cond,
                    weft_core::Exp::BinOp {
                        op: BinOp::Ge,
                        ty: ScalarTy::I64,
                        lhs: Atom::Var(size_var),
                        rhs: Atom::Const(Scalar::I64(value)),
                    },
                );
                weft_core::Exp::If {
                    cond: Atom::Var(cond),
                    then_branch: self.block(*then_branch),
                    else_branch: self.block(*else_branch),
                }
            }
            Exp::Loop { param, init, form, body } => {
                let form = match form {
                    LoopForm::For { index, bound } => {
                        weft_core::LoopForm::For { index: *index, bound: *bound }
                    }
                    LoopForm::While { cond } => {
                        weft_core::LoopForm::While { cond: self.block(*cond) }
                    }
                };
                weft_core::Exp::Loop { param: *param, init: *init, form, body: self.block(*body) }
            }
            Exp::Seq(soac) => {
                let level = Some(Level::Seq);
                match soac {
                    SeqSoac::Map { lambda, arrays } => weft_core::Exp::Map {
                        level,
                        lambda: self.lambda(lambda),
                        arrays: arrays.clone(),
                    },
                    SeqSoac::Generate { size, lambda } => {
                        weft_core::Exp::Generate { level, size: *size, lambda: self.lambda(lambda) }
                    }
                    SeqSoac::Reduce { lambda, neutral, array } => weft_core::Exp::Reduce {
                        level,
                        lambda: self.lambda(lambda),
                        neutral: *neutral,
                        array: *array,
                    },
                    SeqSoac::Scan { lambda, neutral, array } => weft_core::Exp::Scan {
                        level,
                        lambda: self.lambda(lambda),
                        neutral: *neutral,
                        array: *array,
                    },
                    SeqSoac::Hist { dest, lambda, neutral, indices, values } => {
                        weft_core::Exp::ReduceByIndex {
                            dest: *dest,
                            lambda: self.lambda(lambda),
                            neutral: *neutral,
                            indices: *indices,
                            values: *values,
                        }
                    }
                }
            }
            Exp::Seg(seg) => {
                let value = self.seg(stmts, seg);
                self.bind_results(stmts, &stmt.vars, value);
                return;
            }
        };
        let [var] = stmt.vars.as_slice() else {
            unreachable!("the validator allows several variables only for SegOps")
        };
        self.push(stmts, *var, exp);
        if let Some(origin) = self.gpu.origins.get(stmt.exp)
            && let Some(last) = stmts.last()
        {
            self.out.origins.insert(last.exp, origin.clone());
        }
    }

    /// Binds a SegOp's results: one variable takes the value; several take the
    /// components of a tuple (of arrays, as the core IR stores an array of tuples).
    fn bind_results(&mut self, stmts: &mut Vec<weft_core::Stmt>, vars: &[VarId], value: Atom) {
        match vars {
            [one] => self.push(stmts, *one, weft_core::Exp::Atom(value)),
            many => {
                let tuple = match self.ty_of(value) {
                    Type::Tuple(_) => value,
                    ty => {
                        let parts = match &ty {
                            Type::Array { .. } => {
                                many.iter().map(|&v| self.out.vars[v].ty.clone()).collect()
                            }
                            _ => Vec::new(),
                        };
                        let var = self.new_var(Type::Tuple(parts));
                        self.push(stmts, var, weft_core::Exp::Unzip(value));
                        Atom::Var(var)
                    }
                };
                for (index, &var) in many.iter().enumerate() {
                    self.push(stmts, var, weft_core::Exp::Proj { tuple, index: index as u32 });
                }
            }
        }
    }

    /// The nest of combinators computing a SegOp; returns its value.
    fn seg(&mut self, stmts: &mut Vec<weft_core::Stmt>, seg: &SegOp) -> Atom {
        let reducing = match &seg.kind {
            SegKind::Map => None,
            SegKind::Red(ops) => Some(Combine::Red(ops)),
            SegKind::Scan(ops) => Some(Combine::Scan(ops)),
            SegKind::Hist { dest, op } => Some(Combine::Hist { dest: *dest, op }),
            SegKind::Scatter { dest } => Some(Combine::Scatter { dest: *dest }),
        };
        let dims = seg.space.len();
        // A dimension that only reads its arrays' rows is written `map ... X` (with its
        // level, if written) rather than `generate n (\i -> X[i])`: the staged
        // translator then sees a matrix product's nest of maps over its operands' rows
        // (which it tiles), and a reduction of an array (read without an index to check).
        // A row an outer dimension reads (`arow = A[i]`) is that dimension's lambda
        // parameter, so an inner dimension may read its elements as rows too (a matrix
        // product's `map2 (*) arow brow`).
        let mut rows: Vec<Option<Vec<RowRead>>> = Vec::with_capacity(dims);
        let mut outer_rows: Vec<VarId> = Vec::new();
        for &(index, bound) in &seg.space {
            let read = self.row_read(seg, index, bound, &outer_rows);
            outer_rows.extend(read.iter().flatten().map(|r| r.var));
            rows.push(read);
        }
        // Combinators over the outer dimensions wrap the innermost one.
        let value = self.nest(stmts, seg, 0, dims, reducing, &rows);
        if let (SegKind::Hist { .. } | SegKind::Scatter { .. }, Some(origin), Some(last)) =
            (&seg.kind, seg.origins.first(), stmts.last())
        {
            // The update (`reduce_by_index`, `scatter`) is the SegOp's own expression.
            self.out.origins.insert(last.exp, origin.clone());
        }
        value
    }

    /// The statements `v = X[index]` of a SegOp's body, when they are the body's only
    /// uses of `index` and every `X` (bound outside, `bound` rows) is read whole: the
    /// dimension is then written as `map (\v.. -> ...) X..` rather than `generate bound
    /// (\index -> ...)`: the core program reads as the source does (a matrix product's
    /// nest of maps over its operands' rows).
    fn row_read(
        &self,
        seg: &SegOp,
        index: VarId,
        bound: Atom,
        outer_rows: &[VarId],
    ) -> Option<Vec<RowRead>> {
        let body = &self.gpu.blocks[seg.body];
        let mut uses = 0;
        let mut bound_inside = Vec::new();
        self.count_uses(seg.body, index, &mut uses, &mut bound_inside);
        let mut reads = Vec::new();
        for stmt in &body.stmts {
            let Exp::Basic(weft_core::Exp::Index { array: Atom::Var(array), items }) =
                &self.gpu.exps[stmt.exp]
            else {
                continue;
            };
            if let ([var], [weft_core::IndexItem::Fix(Atom::Var(i))]) =
                (stmt.vars.as_slice(), items.as_slice())
                && *i == index
            {
                reads.push(RowRead { var: *var, array: *array, exp: stmt.exp });
            }
        }
        let same_rows = |array: VarId| {
            let Some(rows) = self.gpu.vars[array].ty.outer_size() else { return false };
            match bound {
                Atom::Var(n) => rows.as_var() == Some(&n),
                Atom::Const(Scalar::I64(n)) => rows.as_constant() == Some(n),
                Atom::Const(_) => false,
            }
        };
        let whole = !reads.is_empty()
            && uses == reads.len()
            && reads.iter().all(|r| {
                same_rows(r.array)
                    && (!bound_inside.contains(&r.array) || outer_rows.contains(&r.array))
            });
        whole.then_some(reads)
    }

    /// How many operands of `block` (nested code included) are `var`, and every
    /// variable the block binds.
    fn count_uses(&self, block: BlockId, var: VarId, uses: &mut usize, bound: &mut Vec<VarId>) {
        for stmt in &self.gpu.blocks[block].stmts {
            bound.extend(&stmt.vars);
            let exp = &self.gpu.exps[stmt.exp];
            *uses += exp.operands().iter().filter(|a| **a == Atom::Var(var)).count();
            for nested in exp.nested_blocks() {
                self.count_uses(nested, var, uses, bound);
            }
        }
        *uses += self.gpu.blocks[block].results.iter().filter(|a| **a == Atom::Var(var)).count();
    }

    fn nest(
        &mut self,
        stmts: &mut Vec<weft_core::Stmt>,
        seg: &SegOp,
        dim: usize,
        dims: usize,
        reducing: Option<Combine<'_>>,
        rows: &[Option<Vec<RowRead>>],
    ) -> Atom {
        let (index, bound) = seg.space[dim];
        let innermost = dim + 1 == dims;
        if let (Some(combine @ (Combine::Hist { .. } | Combine::Scatter { .. })), true, 1) =
            (reducing, innermost, dims)
        {
            // Indices or values that the body only reads at the point are those arrays;
            // one computed column is a `generate`. Two computed columns go through the
            // general form below (pairs, then `unzip`).
            let [bins, values] = self.read_columns(seg, index);
            let columns = match (bins, values) {
                (Some(bins), Some(values)) => Some((bins, values)),
                (Some(bins), None) => Some((bins, self.column_generate(stmts, seg, 1))),
                (None, Some(values)) => Some((self.column_generate(stmts, seg, 0), values)),
                (None, None) => None,
            };
            if let Some((bins, values)) = columns {
                return self.write_update(stmts, combine, bins, values);
            }
        }
        let mut body_stmts = Vec::new();
        let result = if innermost {
            for stmt in &self.gpu.blocks[seg.body].stmts {
                if rows.iter().flatten().flatten().any(|read| read.exp == stmt.exp) {
                    continue;
                }
                self.stmt(&mut body_stmts, stmt);
            }
            let results = self.gpu.blocks[seg.body].results.clone();
            self.one_value(&mut body_stmts, &results)
        } else {
            self.nest(&mut body_stmts, seg, dim + 1, dims, reducing, rows)
        };
        let ret = self.ty_of(result);
        let body =
            self.out.blocks.alloc(weft_core::Block { stmts: body_stmts, result: Some(result) });
        let lambda = weft_core::Lambda { params: vec![index], body, ret: ret.clone() };
        let size = match bound {
            Atom::Var(v) => CoreSize::var(v),
            Atom::Const(Scalar::I64(n)) => CoreSize::constant(n),
            Atom::Const(_) => CoreSize::zero(),
        };
        let generated_ty = Type::array(size.clone(), ret.clone());
        let generated = self.new_var(generated_ty.clone());
        let iteration = match &rows[dim] {
            Some(reads) => weft_core::Exp::Map {
                level: None,
                lambda: weft_core::Lambda {
                    params: reads.iter().map(|r| r.var).collect(),
                    ..lambda
                },
                arrays: reads.iter().map(|r| Atom::Var(r.array)).collect(),
            },
            None => weft_core::Exp::Generate { level: None, size: bound, lambda },
        };
        self.push(stmts, generated, iteration);
        // The SegOp's own source expression (its first origin) is the combinator that
        // combines, when there is one; the iteration then computes the first producer
        // fused into it (the `map` of a map-reduce).
        let combines = reducing.is_some() && innermost;
        let iteration_origin = if combines { seg.origins.get(1) } else { seg.origins.first() };
        if let (Some(origin), Some(last)) = (iteration_origin, stmts.last()) {
            self.out.origins.insert(last.exp, origin.clone());
        }
        let Some(combine) = reducing.filter(|_| innermost) else {
            return Atom::Var(generated);
        };
        let (reduce, ops) = match combine {
            Combine::Red(ops) => (true, ops),
            Combine::Scan(ops) => (false, ops),
            Combine::Hist { dest, op } => {
                // The segment's bins: `dest` at the outer indices.
                let outer: Vec<VarId> = seg.space[..dim].iter().map(|&(i, _)| i).collect();
                let dest = self.index_at(stmts, dest, &outer);
                return self.hist(stmts, generated, Combine::Hist { dest, op });
            }
            Combine::Scatter { .. } => return self.hist(stmts, generated, combine),
        };
        let (op_lambda, neutral) = self.operators(stmts, ops);
        let (exp, ty) = if reduce {
            (
                weft_core::Exp::Reduce {
                    level: None,
                    lambda: op_lambda,
                    neutral,
                    array: Atom::Var(generated),
                },
                ret,
            )
        } else {
            (
                weft_core::Exp::Scan {
                    level: None,
                    lambda: op_lambda,
                    neutral,
                    array: Atom::Var(generated),
                },
                generated_ty,
            )
        };
        let var = self.new_var(ty);
        self.push(stmts, var, exp);
        if let (Some(origin), Some(last)) = (seg.origins.first(), stmts.last()) {
            self.out.origins.insert(last.exp, origin.clone());
        }
        Atom::Var(var)
    }
}

/// A SegMap body's read of one row per point of a dimension (see `Writer::row_read`).
#[derive(Clone, Copy)]
struct RowRead {
    var: VarId,
    array: VarId,
    exp: crate::ir::ExpId,
}

/// How a SegOp combines the values of its innermost dimension.
#[derive(Clone, Copy)]
enum Combine<'a> {
    Red(&'a [SegBinOp]),
    Scan(&'a [SegBinOp]),
    Hist { dest: Atom, op: &'a SegBinOp },
    Scatter { dest: Atom },
}

impl Writer<'_> {
    /// `array[indices]` (`array` itself without indices).
    fn index_at(
        &mut self,
        stmts: &mut Vec<weft_core::Stmt>,
        array: Atom,
        indices: &[VarId],
    ) -> Atom {
        if indices.is_empty() {
            return array;
        }
        let mut ty = self.ty_of(array);
        for _ in indices {
            ty = ty.elem().cloned().unwrap_or(ty);
        }
        let var = self.new_var(ty);
        let items = indices.iter().map(|&i| weft_core::IndexItem::Fix(Atom::Var(i))).collect();
        self.push(stmts, var, weft_core::Exp::Index { array, items });
        Atom::Var(var)
    }

    /// For each of the two values a SegHist or SegScatter body yields, the array it is
    /// read from at the point `index` (`let b = is[i]`, `is` bound outside the body),
    /// if it is.
    fn read_columns(&self, seg: &SegOp, index: VarId) -> [Option<Atom>; 2] {
        let body = &self.gpu.blocks[seg.body];
        let column = |result: Option<&Atom>| {
            let Some(Atom::Var(var)) = result else { return None };
            let stmt = body.stmts.iter().find(|s| s.vars == [*var])?;
            let Exp::Basic(weft_core::Exp::Index { array, items }) = &self.gpu.exps[stmt.exp]
            else {
                return None;
            };
            let bound_here = body.stmts.iter().any(|s| Some(&Atom::Var(s.vars[0])) == Some(array));
            (items == &[weft_core::IndexItem::Fix(Atom::Var(index))] && !bound_here)
                .then_some(*array)
        };
        [column(body.results.first()), column(body.results.get(1))]
    }

    /// `generate n (\i -> body; result k)`: one of the values a one-dimensional
    /// SegHist or SegScatter body yields, at every point.
    fn column_generate(&mut self, stmts: &mut Vec<weft_core::Stmt>, seg: &SegOp, k: usize) -> Atom {
        let (index, bound) = seg.space[0];
        let result = self.gpu.blocks[seg.body].results[k];
        // The other column's own reads of its array at the point (a bin read where the
        // values are computed) are left out: in range, they cannot fail, and the column
        // that needs them reads that array itself.
        let mut needed: Vec<VarId> = match result {
            Atom::Var(v) => vec![v],
            Atom::Const(_) => Vec::new(),
        };
        let mut kept = Vec::new();
        for stmt in self.gpu.blocks[seg.body].stmts.iter().rev() {
            let used = stmt.vars.iter().any(|v| needed.contains(v));
            if used || !self.reads_in_range(stmt, index, bound) {
                crate::passes::fuse::reads_in(self.gpu, stmt, &mut needed);
                kept.push(stmt);
            }
        }
        if kept.is_empty() && result == Atom::Var(index) {
            // The point itself (a scatter to every index): `iota`, which the staged
            // translator reads without making an array.
            let var = self.new_var(Type::array(atom_size(bound), Type::Scalar(ScalarTy::I64)));
            self.push(stmts, var, weft_core::Exp::Iota { size: bound });
            return Atom::Var(var);
        }
        let mut body_stmts = Vec::new();
        for stmt in kept.into_iter().rev() {
            self.stmt(&mut body_stmts, stmt);
        }
        let ret = self.ty_of(result);
        let body =
            self.out.blocks.alloc(weft_core::Block { stmts: body_stmts, result: Some(result) });
        let lambda = weft_core::Lambda { params: vec![index], body, ret: ret.clone() };
        let var = self.new_var(Type::array(atom_size(bound), ret));
        self.push(stmts, var, weft_core::Exp::Generate { level: None, size: bound, lambda });
        if let (Some(origin), Some(last)) = (seg.origins.first(), stmts.last()) {
            self.out.origins.insert(last.exp, origin.clone());
        }
        Atom::Var(var)
    }

    /// Whether `stmt` is `v = X[index]` of an array with exactly `bound` rows (always in
    /// range at the point, so it cannot fail).
    fn reads_in_range(&self, stmt: &crate::ir::Stmt, index: VarId, bound: Atom) -> bool {
        let Exp::Basic(weft_core::Exp::Index { array: Atom::Var(array), items }) =
            &self.gpu.exps[stmt.exp]
        else {
            return false;
        };
        let [weft_core::IndexItem::Fix(Atom::Var(i))] = items.as_slice() else { return false };
        let Some(rows) = self.gpu.vars[*array].ty.outer_size() else { return false };
        *i == index && rows == &atom_size(bound)
    }

    /// `reduce_by_index dest op ne bins values` or `scatter dest bins values`.
    fn write_update(
        &mut self,
        stmts: &mut Vec<weft_core::Stmt>,
        combine: Combine<'_>,
        bins: Atom,
        values: Atom,
    ) -> Atom {
        match combine {
            Combine::Hist { dest, op } => self.reduce_by_index(stmts, dest, op, bins, values),
            Combine::Scatter { dest } => {
                let var = self.new_var(self.ty_of(dest));
                let exp = weft_core::Exp::Scatter { dest, indices: bins, values };
                self.push(stmts, var, exp);
                Atom::Var(var)
            }
            Combine::Red(_) | Combine::Scan(_) => {
                unreachable!("write_update is called on histograms and scatters")
            }
        }
    }

    /// `reduce_by_index dest op ne is vs` or `scatter dest is vs` where `(is, vs)` is
    /// `unzip pairs`, the bins (indices) and values a SegHist (SegScatter) body yields.
    fn hist(
        &mut self,
        stmts: &mut Vec<weft_core::Stmt>,
        pairs: VarId,
        combine: Combine<'_>,
    ) -> Atom {
        let Type::Array { size: n, elem } = self.out.vars[pairs].ty.clone() else {
            unreachable!("a generate yields an array")
        };
        let Type::Tuple(parts) = *elem else { unreachable!("a SegHist body yields two values") };
        let columns =
            Type::Tuple(parts.iter().map(|p| Type::array(n.clone(), p.clone())).collect());
        let unzipped = self.new_var(columns);
        self.push(stmts, unzipped, weft_core::Exp::Unzip(Atom::Var(pairs)));
        let mut column = |this: &mut Self, index: u32| {
            let ty = Type::array(n.clone(), parts[index as usize].clone());
            let var = this.new_var(ty);
            this.push(stmts, var, weft_core::Exp::Proj { tuple: Atom::Var(unzipped), index });
            Atom::Var(var)
        };
        let indices = column(self, 0);
        let values = column(self, 1);
        self.write_update(stmts, combine, indices, values)
    }

    /// `reduce_by_index dest op ne indices values`.
    fn reduce_by_index(
        &mut self,
        stmts: &mut Vec<weft_core::Stmt>,
        dest: Atom,
        op: &SegBinOp,
        indices: Atom,
        values: Atom,
    ) -> Atom {
        let neutral = self.one_value(stmts, &op.neutral);
        let lambda = self.lambda(&op.lambda);
        let var = self.new_var(self.ty_of(dest));
        let exp = weft_core::Exp::ReduceByIndex { dest, lambda, neutral, indices, values };
        self.push(stmts, var, exp);
        Atom::Var(var)
    }
}

fn scalar_ty(s: Scalar) -> ScalarTy {
    s.ty()
}
