//! Host code of the GPU IR: host steps, and kernels for what the host cannot compute
//! (scalars other than `i64` and `bool` arithmetic, fresh arrays).

use weft_core::{Atom, IndexItem, Type, VarId};
use weft_hir::MathFn;
use weft_mem::{BlockBinding, MemInfo, Provenance, Storage};
use weft_opt::{BlockId, Exp, LoopForm, Stmt};
use weft_plan::{BinOp as HOp, Elem, Expr, Step};
use weft_values::RuntimeCheck;

use super::kernel::{CPU_RUN, KVal, Kern};
use super::{HArr, HScalar, HVal, Res, Tr, eadd, eceil_div, emul};
use crate::LowerError;
use crate::imp::{CExpr, COp, Cmd, ParLevel};

impl Tr<'_> {
    /// Runs a block of host code; its results.
    pub(crate) fn block(&mut self, block: BlockId) -> Res<Vec<HVal>> {
        let f = self.f;
        for stmt in &f.blocks[block].stmts {
            let origin = self.origin(stmt.exp);
            self.current_origin = origin.clone();
            self.stmt(stmt).map_err(|e| e.placed(origin))?;
        }
        f.blocks[block].results.iter().map(|a| self.atom(a)).collect()
    }

    fn stmt(&mut self, stmt: &Stmt) -> Res<()> {
        let f = self.f;
        // A negative size for `iota` or `replicate` is the interpreter's error, checked
        // before its result's memory is allocated with that size.
        if let Exp::Basic(
            exp @ (weft_core::Exp::Replicate { size, .. } | weft_core::Exp::Iota { size }),
        ) = &f.exps[stmt.exp]
        {
            let n = self.int_atom(size)?;
            let what =
                if matches!(exp, weft_core::Exp::Iota { .. }) { "iota" } else { "replicate" };
            self.checked(
                Expr::bin(HOp::Ge, n.clone(), Expr::I64(0)),
                RuntimeCheck::NegativeSize { what },
                n,
                Expr::I64(0),
            );
        }
        self.alloc_blocks(&stmt.vars)?;
        match &f.exps[stmt.exp] {
            Exp::Basic(exp) => {
                let var = stmt.vars[0];
                let v = self.basic(stmt, var, exp)?;
                self.env.insert(var, v);
            }
            Exp::Manifest { array } => {
                let var = stmt.vars[0];
                let src = self.atom(array)?;
                let dest = self.binding(var)?;
                self.copy_value(&src, &dest, "manifest")?;
                self.env.insert(var, dest);
            }
            Exp::If { cond, then_branch, else_branch } => {
                let c = self.scalar_atom(cond)?;
                let (c, _) = self.host_scalar(&c);
                self.branches(stmt, c, *then_branch, *else_branch)?;
            }
            Exp::Version { size, threshold, then_branch, else_branch } => {
                let size = self.core_size(size)?;
                let value = (self.threshold)(*threshold);
                let c = Expr::bin(HOp::Ge, size, Expr::I64(value));
                self.branches(stmt, c, *then_branch, *else_branch)?;
            }
            Exp::Loop { param, init, form, body } => self.loop_(stmt, *param, init, form, *body)?,
            Exp::Seq(_) => {
                return Err(LowerError::internal("a sequential combinator in host code"));
            }
            Exp::Seg(seg) => self.seg(stmt, seg)?,
        }
        Ok(())
    }

    /// Allocates the global blocks the memory IR allocates for `vars`.
    fn alloc_blocks(&mut self, vars: &[VarId]) -> Res<()> {
        for &var in vars {
            let Some(info) = self.mem.bindings.get(var).cloned() else { continue };
            for leaf in info.leaves() {
                self.alloc_block(leaf.block, var)?;
            }
        }
        Ok(())
    }

    pub(crate) fn alloc_block(&mut self, block: weft_mem::MemBlockId, var: VarId) -> Res<()> {
        if self.blocks.contains_key(&block) {
            return Ok(());
        }
        let data = &self.mem.blocks[block];
        let global = matches!(self.mem.storage.get(block), Some(Storage::Global) | None);
        if let (BlockBinding::Alloc { elems, .. }, true) = (&data.binding, global) {
            let elem = data.elem;
            let len = self.mem_size(&elems.clone())?;
            let name = self.f.vars[var].name.to_string();
            let buf = self.alloc_buffer(&name, elem, len);
            self.blocks.insert(block, buf);
        }
        Ok(())
    }

    /// The value of an array-typed binding, where the memory IR puts it.
    pub(crate) fn binding(&mut self, var: VarId) -> Res<HVal> {
        let info = self.mem.bindings.get(var).cloned().unwrap_or_default();
        let ty = self.f.vars[var].ty.clone();
        self.value_of(&info, &ty)
    }

    fn basic(&mut self, stmt: &Stmt, var: VarId, exp: &weft_core::Exp) -> Res<HVal> {
        use weft_core::Exp as C;
        let f = self.f;
        let ty = f.vars[var].ty.clone();
        match exp {
            C::Atom(a) => {
                let v = self.atom(a)?;
                self.bind_unbound_sizes(&ty, &v);
                Ok(v)
            }
            C::Size(s) => Ok(HVal::Scalar(HScalar::Host(self.core_size(s)?, Elem::I64))),
            C::BinOp { op, ty: elem, lhs, rhs } if host_op(*op, *elem).is_some() => {
                let a = self.scalar_atom(lhs)?;
                let b = self.scalar_atom(rhs)?;
                if let (Some(x), Some(y)) = (known(&a), known(&b)) {
                    let hop = host_op(*op, *elem).unwrap_or(HOp::Add);
                    if matches!(hop, HOp::Div | HOp::Rem) {
                        self.host_check(
                            Expr::bin(HOp::Ne, y.clone(), Expr::I64(0)),
                            RuntimeCheck::DivisionByZero,
                            Expr::I64(0),
                            Expr::I64(0),
                        );
                    }
                    let out = if op.is_comparison() { Elem::Bool } else { *elem };
                    return Ok(HVal::Scalar(HScalar::Host(Expr::bin(hop, x, y), out)));
                }
                self.scalar_kernel(stmt, var)
            }
            C::Math { ty: Elem::I64, func: func @ (MathFn::Min | MathFn::Max), args }
                if args.len() == 2 =>
            {
                let a = self.scalar_atom(&args[0])?;
                let b = self.scalar_atom(&args[1])?;
                if let (Some(x), Some(y)) = (known(&a), known(&b)) {
                    let hop = if *func == MathFn::Min { HOp::Min } else { HOp::Max };
                    return Ok(HVal::Scalar(HScalar::Host(Expr::bin(hop, x, y), Elem::I64)));
                }
                self.scalar_kernel(stmt, var)
            }
            C::Convert { from, to, operand } => match self.scalar_atom(operand)? {
                HScalar::Host(e, _) => {
                    Ok(HVal::Scalar(HScalar::Host(Expr::Convert(*to, Box::new(e)), *to)))
                }
                HScalar::Device(..) if from == to => self.atom(operand),
                HScalar::Device(..) => self.scalar_kernel(stmt, var),
            },
            C::BinOp { .. } | C::UnOp { .. } | C::Math { .. } => self.scalar_kernel(stmt, var),
            C::Tuple(parts) => {
                Ok(HVal::Tuple(parts.iter().map(|p| self.atom(p)).collect::<Res<_>>()?))
            }
            C::Proj { tuple, index } => match self.atom(tuple)? {
                HVal::Tuple(parts) => parts
                    .get(*index as usize)
                    .cloned()
                    .ok_or_else(|| LowerError::internal("projection out of range")),
                _ => Err(LowerError::internal("projection of a non-tuple")),
            },
            C::Flatten(a) if copied(&self.mem.bindings.get(var).cloned().unwrap_or_default()) => {
                // Not one LMAD (the memory IR's forced copy): element `i` of the result
                // is `[i / m, i % m]` of the array.
                let src = self.atom(a)?;
                let dest = self.binding(var)?;
                let shape = shape_of(&dest).unwrap_or_default();
                self.elementwise("flatten_copy", &shape, &mut |k, idx| {
                    let s = k.import_val(&src);
                    let d = k.import_val(&dest);
                    let from = flatten_source(&s, idx);
                    let v = k.load(&s, &from)?;
                    k.store(&d, idx, &v)
                })?;
                Ok(dest)
            }
            C::Zip(_) | C::Unzip(_) | C::Transpose(_) | C::Reverse(_) | C::Flatten(_) => {
                self.binding(var)
            }
            C::Dim { array, dim } => {
                let a = self.atom(array)?;
                let shape = shape_of(&a).unwrap_or_default();
                shape
                    .get(*dim as usize)
                    .cloned()
                    .map(|n| HVal::Scalar(HScalar::Host(n, Elem::I64)))
                    .ok_or_else(|| LowerError::internal("a dimension out of range"))
            }
            C::Index { array, items } => self.index(stmt, var, array, items, &ty),
            C::Unflatten { rows, cols, array } => {
                let name = self.var_name(*array);
                let a = self.atom(array)?;
                let r = self.int_atom(rows)?;
                let c = self.int_atom(cols)?;
                let n = first_dim(&a);
                let ok = Expr::bin(
                    HOp::And,
                    Expr::bin(HOp::Ge, r.clone(), Expr::I64(0)),
                    Expr::bin(HOp::Eq, emul(r, c.clone()), n.clone()),
                );
                self.checked(ok, RuntimeCheck::Unflatten { array: &name }, n, c);
                self.binding(var)
            }
            C::Split { chunk, array } => {
                let name = self.var_name(*array);
                let a = self.atom(array)?;
                let k = self.int_atom(chunk)?;
                let n = first_dim(&a);
                let positive = Expr::bin(HOp::Gt, k.clone(), Expr::I64(0));
                let divisor = Expr::Select(
                    Box::new(positive.clone()),
                    Box::new(k.clone()),
                    Box::new(Expr::I64(1)),
                );
                let ok = Expr::bin(
                    HOp::And,
                    positive,
                    Expr::bin(HOp::Eq, Expr::bin(HOp::Rem, n.clone(), divisor), Expr::I64(0)),
                );
                self.checked(ok, RuntimeCheck::Split { array: &name }, n, k);
                self.binding(var)
            }
            C::Take { count, array } | C::Drop { count, array } => {
                let what = if matches!(exp, C::Take { .. }) { "take" } else { "drop" };
                let name = self.var_name(*array);
                let a = self.atom(array)?;
                let k = self.int_atom(count)?;
                let n = first_dim(&a);
                let ok = Expr::bin(
                    HOp::And,
                    Expr::bin(HOp::Le, Expr::I64(0), k.clone()),
                    Expr::bin(HOp::Le, k.clone(), n.clone()),
                );
                self.checked(ok, RuntimeCheck::Count { what, array: &name }, k, n);
                self.binding(var)
            }
            C::Coerce { value, ty: target } => {
                let name = self.var_name(*value);
                let v = self.atom(value)?;
                let Some(shape) = shape_of(&v) else { return Ok(v) };
                let mut t = target;
                let mut d = 0;
                while let Type::Array { size, elem } = t {
                    if d >= shape.len() {
                        break;
                    }
                    if let Some(sv) = size.as_var()
                        && !self.env.contains_key(sv)
                    {
                        self.env
                            .insert(*sv, HVal::Scalar(HScalar::Host(shape[d].clone(), Elem::I64)));
                    }
                    let want = self.core_size(size)?;
                    if want != shape[d] {
                        let vars = &f.vars;
                        let size = size.display(&|v: &VarId| vars[*v].name.to_string()).to_string();
                        self.checked(
                            Expr::bin(HOp::Eq, shape[d].clone(), want.clone()),
                            RuntimeCheck::Coerce { value: &name, dim: d, size: &size },
                            shape[d].clone(),
                            want,
                        );
                    }
                    t = elem;
                    d += 1;
                }
                self.binding(var)
            }
            C::Iota { .. }
            | C::Replicate { .. }
            | C::ArrayLit { .. }
            | C::Concat(..)
            | C::Materialise { .. }
            | C::Update { .. } => self.construct(stmt, var, exp),
            C::Call { .. } => Err(LowerError::unsupported(
                "a call the middle end did not inline (a size parameter no argument's shape binds)",
                self.current_origin.as_ref(),
            )),
            C::Map { .. }
            | C::Reduce { .. }
            | C::Scan { .. }
            | C::Generate { .. }
            | C::Scatter { .. }
            | C::ReduceByIndex { .. }
            | C::If { .. }
            | C::Loop { .. } => Err(LowerError::internal("nested code in a basic expression")),
        }
    }

    fn checked(&mut self, ok: Expr, check: RuntimeCheck<'_>, a: Expr, b: Expr) {
        if self.options.checks {
            self.host_check(ok, check, a, b);
        }
    }

    /// Binds the size variables of `ty` that nothing bound yet from `value`'s shape.
    fn bind_unbound_sizes(&mut self, ty: &Type, value: &HVal) {
        let Some(shape) = shape_of(value) else { return };
        let mut t = ty;
        let mut d = 0;
        while let Type::Array { size, elem } = t {
            if let (Some(sv), Some(n)) = (size.as_var(), shape.get(d))
                && !self.env.contains_key(sv)
            {
                self.env.insert(*sv, HVal::Scalar(HScalar::Host(n.clone(), Elem::I64)));
            }
            t = elem;
            d += 1;
        }
    }

    /// `array[items]` in host code: an element read to the host, or a view.
    fn index(
        &mut self,
        stmt: &Stmt,
        var: VarId,
        array: &Atom,
        items: &[IndexItem],
        ty: &Type,
    ) -> Res<HVal> {
        let name = self.var_name(*array);
        let arr = self.atom(array)?;
        let shape = shape_of(&arr).unwrap_or_default();
        let mut fixed = Vec::new();
        let mut lens = Vec::new();
        for (dim, item) in items.iter().enumerate() {
            let n = shape.get(dim).cloned().unwrap_or(Expr::I64(0));
            match item {
                IndexItem::Fix(i) => {
                    let i = self.int_atom(i)?;
                    let i = self.let_var("i", i);
                    let ok = Expr::bin(
                        HOp::And,
                        Expr::bin(HOp::Le, Expr::I64(0), i.clone()),
                        Expr::bin(HOp::Lt, i.clone(), n.clone()),
                    );
                    self.checked(ok, RuntimeCheck::Index { array: &name }, i.clone(), n);
                    fixed.push(i);
                }
                IndexItem::Slice { start, end, stride } => {
                    let stride = match stride {
                        Some(s) => self.int_atom(s)?,
                        None => Expr::I64(1),
                    };
                    let stride = self.let_var("stride", stride);
                    let start = start.as_ref().map(|s| self.int_atom(s)).transpose()?;
                    let end = end.as_ref().map(|e| self.int_atom(e)).transpose()?;
                    let bounds = super::SliceBounds::new(&n, start, end, &stride);
                    let bounds = super::SliceBounds {
                        start: self.let_var("start", bounds.start),
                        end: self.let_var("end", bounds.end),
                    };
                    let ok = bounds.valid(&n, &stride);
                    self.checked(ok, RuntimeCheck::Slice { array: &name }, bounds.start.clone(), n);
                    let len = self.let_var("len", bounds.len(&stride));
                    lens.push(len);
                }
            }
        }
        if lens.is_empty() && fixed.len() == shape.len() {
            let name = self.f.vars[var].name.to_string();
            return self.read_element(&arr, &fixed, &name);
        }
        // The result type's sizes of sliced dimensions are what the slices computed.
        let mut t = ty;
        let mut k = 0;
        while let Type::Array { size, elem } = t {
            if let (Some(sv), Some(len)) = (size.as_var(), lens.get(k))
                && !self.env.contains_key(sv)
            {
                self.env.insert(*sv, HVal::Scalar(HScalar::Host(len.clone(), Elem::I64)));
            }
            t = elem;
            k += 1;
        }
        let _ = stmt;
        self.binding(var)
    }

    /// Reads the element at a full index to the host (a scalar, or a tuple of them).
    fn read_element(&mut self, arr: &HVal, index: &[Expr], name: &str) -> Res<HVal> {
        match arr {
            HVal::Arr(a) => {
                let mut addr = a.layout.offset.clone();
                for (i, s) in index.iter().zip(&a.layout.strides) {
                    addr = eadd(addr, emul(i.clone(), s.clone()));
                }
                let var = self.new_var(name);
                self.step(Step::Read { var, buf: a.buf, elem: a.elem, index: addr });
                Ok(HVal::Scalar(HScalar::Host(Expr::Var(var), a.elem)))
            }
            HVal::Tuple(parts) => Ok(HVal::Tuple(
                parts.iter().map(|p| self.read_element(p, index, name)).collect::<Res<_>>()?,
            )),
            HVal::Scalar(_) => Err(LowerError::internal("indexing a scalar")),
        }
    }

    /// A scalar statement the host cannot compute: a kernel of one work-item, whose
    /// result stays on the device.
    fn scalar_kernel(&mut self, stmt: &Stmt, var: VarId) -> Res<HVal> {
        let origin = self.current_origin.clone();
        let name = self.f.vars[var].name.to_string();
        let mut k = Kern::new(self);
        if let Some(o) = &origin {
            k.note(o, "one work-item (a scalar computed on the device)");
        }
        k.stmt(stmt)?;
        let v = k.lookup(var)?;
        let mut leaves = Vec::new();
        v.scalars(&mut leaves);
        let mut outs = Vec::new();
        for (e, elem) in leaves {
            let buf = k.tr.alloc_buffer(&name, elem, Expr::I64(1));
            let ptr = k.buffer_param(buf, elem);
            let value = if elem == Elem::Bool { CExpr::cast(Elem::Bool, e) } else { e };
            k.emit(Cmd::Store { ptr, index: CExpr::Int(0), value });
            outs.push(HVal::Scalar(HScalar::Device(buf, elem)));
        }
        let what = if name.is_empty() { "a scalar".to_owned() } else { format!("`{name}`") };
        let doc = format!(
            "computes {what} (one work-item){}",
            k.comment(origin.as_ref()).map(|p| format!(", {p}")).unwrap_or_default()
        );
        let kernel_name = k.tr.kernel_name("scalar");
        let (kernel, args) = k.finish(kernel_name, doc, None);
        self.launch(kernel, args, vec![Expr::I64(1)], None);
        Ok(match (outs.len(), &v) {
            (1, KVal::Scalar(..)) => outs.remove(0),
            _ => rebuild_host(&v, &mut outs.into_iter()),
        })
    }

    /// A fresh array made in host code (`iota`, `replicate`, an array literal, `concat`,
    /// a copy, an update): written by a kernel into the memory the memory IR gives it.
    fn construct(&mut self, stmt: &Stmt, var: VarId, exp: &weft_core::Exp) -> Res<HVal> {
        use weft_core::Exp as C;
        let info = self.mem.bindings.get(var).cloned().unwrap_or_default();
        // A view (`replicate` of an array: a stride-0 dimension) needs no kernel.
        if !info.leaves().is_empty() && info.leaves().iter().all(|a| a.how == Provenance::View) {
            return self.binding(var);
        }
        if let C::Update { array, indices, value } = exp {
            return self.update(var, &info, array, indices, value);
        }
        let dest = self.binding(var)?;
        // The statement as sequential code of one kernel over the whole array is how
        // every such constructor is computed: a kernel of one work-item per element
        // for the common ones, one work-item for the rest.
        match exp {
            C::Iota { .. } | C::Replicate { .. } => {
                let dest2 = dest.clone();
                let shape = shape_of(&dest).unwrap_or_default();
                let value = match exp {
                    C::Replicate { value, .. } => Some(self.atom(value)?),
                    _ => None,
                };
                let kind = if value.is_some() { "replicate" } else { "iota" };
                self.elementwise(kind, &shape[..1], &mut |k, idx| {
                    let d = k.import_val(&dest2);
                    match &value {
                        Some(v) => {
                            let v = k.import_val(v);
                            k.store(&d, idx, &v)
                        }
                        None => {
                            let elem = match &d {
                                KVal::Arr(a) => a.elem,
                                _ => Elem::I64,
                            };
                            let i = idx[0].clone();
                            let i = if elem == Elem::I64 { i } else { CExpr::cast(elem, i) };
                            k.store(&d, idx, &KVal::Scalar(i, elem))
                        }
                    }
                })?;
            }
            _ => {
                // One work-item writes the whole array.
                let origin = self.current_origin.clone();
                let mut k = Kern::new(self);
                k.can_return = true;
                if let Some(o) = &origin {
                    k.note(o, "one work-item (an array built on the device)");
                }
                k.stmt(stmt)?;
                let doc = format!("builds `{}` (one work-item)", k.tr.f.vars[var].name);
                let name = k.tr.kernel_name("build");
                let (kernel, args) = k.finish(name, doc, None);
                self.launch(kernel, args, vec![Expr::I64(1)], None);
            }
        }
        Ok(dest)
    }

    /// `array with [indices] = value` in host code: a copy unless the memory IR says in
    /// place, then one work-item writes the element (or row).
    fn update(
        &mut self,
        var: VarId,
        info: &MemInfo,
        array: &Atom,
        indices: &[Atom],
        value: &Atom,
    ) -> Res<HVal> {
        let name = self.var_name(*array);
        let src = self.atom(array)?;
        let shape = shape_of(&src).unwrap_or_default();
        let mut at = Vec::new();
        for (dim, index) in indices.iter().enumerate() {
            let i = self.int_atom(index)?;
            let i = self.let_var("i", i);
            let n = shape.get(dim).cloned().unwrap_or(Expr::I64(0));
            let ok = Expr::bin(
                HOp::And,
                Expr::bin(HOp::Le, Expr::I64(0), i.clone()),
                Expr::bin(HOp::Lt, i.clone(), n.clone()),
            );
            self.checked(ok, RuntimeCheck::Index { array: &name }, i.clone(), n);
            at.push(i);
        }
        let in_place = info.leaves().iter().all(|a| a.how == Provenance::InPlace);
        let dest = self.binding(var)?;
        if !in_place {
            self.copy_value(&src, &dest, "update_copy")?;
        }
        let v = self.atom(value)?;
        let origin = self.current_origin.clone();
        let mut k = Kern::new(self);
        if let Some(o) = &origin {
            let how = if in_place {
                "in place: one work-item writes"
            } else {
                "a copy, then one work-item writes"
            };
            k.note(o, how);
        }
        let d = k.import_val(&dest);
        let v = k.import_val(&v);
        let at: Vec<CExpr> = at.iter().map(|i| k.import_index(i)).collect();
        k.store(&d, &at, &v)?;
        let name = k.tr.kernel_name("update");
        let (kernel, args) = k.finish(name, "writes an updated element".to_owned(), None);
        self.launch(kernel, args, vec![Expr::I64(1)], None);
        Ok(dest)
    }

    /// Copies `src` into `dest` (arrays of one shape), one work-item per element.
    pub(crate) fn copy_value(&mut self, src: &HVal, dest: &HVal, kind: &str) -> Res<()> {
        if same_arrays(src, dest) {
            return Ok(());
        }
        if let (HVal::Arr(s), HVal::Arr(d)) = (src, dest)
            && s.layout.shape.len() == 2
        {
            let unit = |a: &HArr, dim: usize| a.layout.strides[dim] == Expr::I64(1);
            // Each reads its rows where the other writes its columns: through tiles
            // in local memory, so both sides touch neighbouring addresses.
            if unit(s, 0) && unit(d, 1) {
                return self.tiled_transpose_copy(s, d, kind);
            }
            if unit(s, 1) && unit(d, 0) {
                let (s, d) = (swapped(s), swapped(d));
                return self.tiled_transpose_copy(&s, &d, kind);
            }
        }
        let shape = shape_of(dest).unwrap_or_default();
        let (src, dest) = (src.clone(), dest.clone());
        self.elementwise(kind, &shape, &mut |k, idx| {
            let s = k.import_val(&src);
            let d = k.import_val(&dest);
            let v = k.load(&s, idx)?;
            k.store(&d, idx, &v)
        })
    }

    /// Copies a two-dimensional `src` whose first dimension is contiguous into `dest`
    /// whose second is: each work-group moves a 32x32 tile through local memory (one
    /// column of padding against bank conflicts), reading `src` and writing `dest` along
    /// their contiguous dimensions (the staged translator's tiled transposition).
    fn tiled_transpose_copy(&mut self, src: &HArr, dest: &HArr, kind: &str) -> Res<()> {
        const TILE: i64 = 32;
        const ROWS: i64 = 8;
        let rows = dest.layout.shape[0].clone();
        let cols = dest.layout.shape[1].clone();
        let global = vec![
            self.let_var(
                "items",
                emul(super::eceil_div(cols.clone(), Expr::I64(TILE)), Expr::I64(TILE)),
            ),
            self.let_var(
                "items",
                emul(super::eceil_div(rows.clone(), Expr::I64(TILE)), Expr::I64(ROWS)),
            ),
        ];
        let origin = self.current_origin.clone();
        let mut k = Kern::new(self);
        k.can_return = false;
        if let Some(o) = &origin {
            k.note(o, "@grid: tiled transposition through local memory (32x32 tiles)");
        }
        let s = k.import_arr(src);
        let d = k.import_arr(dest);
        let (kr, kc) = (k.import_index(&rows), k.import_index(&cols));
        let tile = k.local_param(
            "tile",
            src.elem,
            Expr::I64(TILE * (TILE + 1)),
            "a tile of a transposition",
        );
        let tx = k.tmp("tx", Elem::I64, CExpr::work_item("get_local_id", 0));
        let ty = k.tmp("ty", Elem::I64, CExpr::work_item("get_local_id", 1));
        let bx = k.tmp(
            "bx",
            Elem::I64,
            CExpr::mul(CExpr::work_item("get_group_id", 0), CExpr::Int(TILE)),
        );
        let by = k.tmp(
            "by",
            Elem::I64,
            CExpr::mul(CExpr::work_item("get_group_id", 1), CExpr::Int(TILE)),
        );
        let within = |r: &CExpr, c: &CExpr| {
            CExpr::bin(
                COp::And,
                CExpr::bin(COp::Lt, r.clone(), kr.clone()),
                CExpr::bin(COp::Lt, c.clone(), kc.clone()),
            )
        };
        for step in 0..TILE / ROWS {
            let lane = CExpr::add(ty.clone(), CExpr::Int(step * ROWS));
            let r = CExpr::add(by.clone(), tx.clone());
            let c = CExpr::add(bx.clone(), lane.clone());
            let load = CExpr::load(&s.ptr, s.address(&[r.clone(), c.clone()]));
            let store = Cmd::Store {
                ptr: tile.clone(),
                index: CExpr::add(CExpr::mul(lane, CExpr::Int(TILE + 1)), tx.clone()),
                value: load,
            };
            k.emit(Cmd::If { cond: within(&r, &c), then_cmds: vec![store], else_cmds: vec![] });
        }
        k.emit(Cmd::Barrier);
        for step in 0..TILE / ROWS {
            let lane = CExpr::add(ty.clone(), CExpr::Int(step * ROWS));
            let r = CExpr::add(by.clone(), lane.clone());
            let c = CExpr::add(bx.clone(), tx.clone());
            let value =
                CExpr::load(&tile, CExpr::add(CExpr::mul(tx.clone(), CExpr::Int(TILE + 1)), lane));
            let store =
                Cmd::Store { ptr: d.ptr.clone(), index: d.address(&[r.clone(), c.clone()]), value };
            k.emit(Cmd::If { cond: within(&r, &c), then_cmds: vec![store], else_cmds: vec![] });
        }
        let doc = format!("{}: a tiled transposition through local memory", kind.replace('_', " "));
        let name = k.tr.kernel_name(kind);
        let (kernel, args) = k.finish(name, doc, Some((TILE * ROWS) as u32));
        self.launch(kernel, args, global, Some(vec![Expr::I64(TILE), Expr::I64(ROWS)]));
        Ok(())
    }

    pub(crate) fn copy_array(&mut self, src: &HArr, dest: &HArr, kind: &str) -> Res<()> {
        self.copy_value(&HVal::Arr(src.clone()), &HVal::Arr(dest.clone()), kind)
    }

    /// A kernel with one work-item per element of `shape`, each running `body` at its
    /// index.
    pub(crate) fn elementwise(
        &mut self,
        kind: &str,
        shape: &[Expr],
        body: &mut dyn FnMut(&mut Kern<'_, '_>, &[CExpr]) -> Res<()>,
    ) -> Res<()> {
        let total = shape.iter().cloned().fold(Expr::I64(1), emul);
        let total = self.let_var("elements", total);
        let origin = self.current_origin.clone();
        let wg = i64::from(self.options.work_group);
        let mut k = Kern::new(self);
        if let Some(o) = &origin {
            k.note(o, "@grid: one work-item per element");
        }
        let n = k.import_index(&total);
        let dims: Vec<CExpr> = shape.iter().map(|d| k.import_index(d)).collect();
        let comment = k.comment(origin.as_ref());
        if k.tr.options.cpu_device() {
            k.runs_loop(&n, comment, &mut |k, flat| {
                let idx = unflatten_index(k, &flat, &dims);
                body(k, &idx)
            })?;
            let doc =
                format!("{}: one work-item per run of {CPU_RUN} elements", kind.replace('_', " "));
            let name = k.tr.kernel_name(kind);
            let (kernel, args) = k.finish(name, doc, Some(wg as u32));
            let global = eceil_div(total, Expr::I64(CPU_RUN));
            self.launch(kernel, args, vec![global], Some(vec![Expr::I64(wg)]));
            return Ok(());
        }
        let gid = k.fresh_name("gid");
        k.push();
        let idx = unflatten_index(&mut k, &CExpr::Var(gid.clone()), &dims);
        body(&mut k, &idx)?;
        let cmds = k.pop();
        k.emit(Cmd::ParFor {
            level: ParLevel::GridCovered(0),
            var: gid,
            bound: n,
            body: cmds,
            comment,
        });
        let doc = format!("{}: one work-item per element", kind.replace('_', " "));
        let name = k.tr.kernel_name(kind);
        let (kernel, args) = k.finish(name, doc, Some(wg as u32));
        self.launch(kernel, args, vec![total], Some(vec![Expr::I64(wg)]));
        Ok(())
    }

    /// An `if` or version in host code: each branch's steps; scalar results through host
    /// variables, arrays through the memory the memory IR gives the result (a block and
    /// LMAD components chosen at run time are host variables each branch assigns).
    fn branches(&mut self, stmt: &Stmt, cond: Expr, then_b: BlockId, else_b: BlockId) -> Res<()> {
        let f = self.f;
        let mut results = Vec::new();
        let mut bodies = Vec::new();
        for branch in [then_b, else_b] {
            self.push_steps();
            let values = self.block(branch)?;
            bodies.push((self.pop_steps(), values));
        }
        // The join's host variables, from the first branch's values and the memory IR.
        let mut joins = Vec::new();
        for (k, &var) in stmt.vars.iter().enumerate() {
            let info = self.mem.bindings.get(var).cloned().unwrap_or_default();
            let join = self.join_vars(&bodies[0].1[k], &info, f.vars[var].name.as_str())?;
            joins.push(join);
        }
        let mut finished = Vec::new();
        for (steps, values) in bodies {
            self.steps.push(steps);
            for (join, value) in joins.iter().zip(&values) {
                self.assign_join(join, value)?;
            }
            finished.push(self.pop_steps());
        }
        let else_steps = finished.pop().unwrap_or_default();
        let then_steps = finished.pop().unwrap_or_default();
        self.step(Step::If { cond, then_steps, else_steps });
        for (k, &var) in stmt.vars.iter().enumerate() {
            let value = self.join_value(&joins[k])?;
            results.push(value.clone());
            self.env.insert(var, value);
        }
        Ok(())
    }

    fn loop_(
        &mut self,
        stmt: &Stmt,
        param: VarId,
        init: &Atom,
        form: &LoopForm,
        body: BlockId,
    ) -> Res<()> {
        let f = self.f;
        let init = self.atom(init)?;
        let info = self.mem.bindings.get(param).cloned().unwrap_or_default();
        let name = f.vars[param].name.to_string();
        let entry_copy = self.mem.loop_entry_copies.contains(&stmt.exp);
        if entry_copy {
            self.alloc_blocks(&[param])?;
        }
        let join = self.join_vars(&init, &info, &name)?;
        if entry_copy {
            let dest = self.binding(param)?;
            self.copy_value(&init, &dest, "loop_entry_copy")?;
            self.assign_join(&join, &dest)?;
        } else {
            self.assign_join(&join, &init)?;
        }
        let param_value = self.join_value(&join)?;
        self.env.insert(param, param_value);
        match form {
            LoopForm::For { index, bound } => {
                let bound = self.int_atom(bound)?;
                let i = self.new_var(f.vars[*index].name.as_str());
                self.env.insert(*index, HVal::Scalar(HScalar::Host(Expr::Var(i), Elem::I64)));
                self.push_steps();
                let r = self.block(body)?;
                let r = single(r);
                self.assign_join(&join, &r)?;
                let steps = self.pop_steps();
                self.step(Step::For { index: i, bound, body: steps });
            }
            LoopForm::While { cond } => {
                self.push_steps();
                let c = single(self.block(*cond)?);
                let c = match c {
                    HVal::Scalar(s) => self.host_scalar(&s).0,
                    _ => return Err(LowerError::internal("a loop condition that is not a scalar")),
                };
                let cond_steps = self.pop_steps();
                self.push_steps();
                let r = single(self.block(body)?);
                self.assign_join(&join, &r)?;
                let steps = self.pop_steps();
                self.step(Step::While { cond_steps, cond: c, body: steps });
            }
        }
        let value = self.join_value(&join)?;
        self.env.insert(stmt.vars[0], value);
        Ok(())
    }

    /// Host variables for a value chosen at run time (an `if`'s result, a loop's
    /// parameter), shaped like `like` and its memory `info`.
    fn join_vars(&mut self, like: &HVal, info: &MemInfo, name: &str) -> Res<Join> {
        Ok(match (like, info) {
            (HVal::Scalar(s), _) => {
                let elem = match s {
                    HScalar::Host(_, e) | HScalar::Device(_, e) => *e,
                };
                Join::Scalar(self.new_var(name), elem)
            }
            (HVal::Tuple(parts), MemInfo::Tuple(infos)) if parts.len() == infos.len() => {
                Join::Tuple(
                    parts
                        .iter()
                        .zip(infos)
                        .map(|(p, i)| self.join_vars(p, i, name))
                        .collect::<Res<_>>()?,
                )
            }
            (HVal::Tuple(parts), _) => Join::Tuple(
                parts
                    .iter()
                    .map(|p| self.join_vars(p, &MemInfo::Scalar, name))
                    .collect::<Res<_>>()?,
            ),
            (HVal::Arr(_), MemInfo::Array(array)) => {
                // The block: its own buffer, or one chosen at run time.
                let buf = match self.blocks.get(&array.block) {
                    Some(&buf) => JoinPart::Known(buf),
                    None => {
                        let buf = self.new_var(name);
                        self.blocks.insert(array.block, buf);
                        JoinPart::Chosen(buf)
                    }
                };
                let mut components = Vec::new();
                let exist = |size: &weft_mem::MemSize, tr: &mut Self| {
                    if let Some(weft_mem::MemVar::Exist(x)) = size.as_var() {
                        let v = tr.new_var("layout");
                        tr.exists.insert(*x, Expr::Var(v));
                        Some(v)
                    } else {
                        None
                    }
                };
                components.push(exist(&array.lmad.offset, self));
                for dim in &array.lmad.dims {
                    components.push(exist(&dim.stride, self));
                }
                // A size only the value knows (an existential of the type): a host
                // variable each branch (or iteration) sets from its value's shape.
                let mut sizes = Vec::new();
                for dim in &array.lmad.dims {
                    sizes.push(match dim.shape.as_var() {
                        Some(weft_mem::MemVar::Core(v)) if !self.env.contains_key(v) => {
                            let h = self.new_var(self.f.vars[*v].name.as_str());
                            self.env
                                .insert(*v, HVal::Scalar(HScalar::Host(Expr::Var(h), Elem::I64)));
                            Some(h)
                        }
                        _ => None,
                    });
                }
                Join::Arr { buf, components, sizes, info: array.clone() }
            }
            (HVal::Arr(_), _) => return Err(LowerError::internal("an array with no memory")),
        })
    }

    /// Each branch (or iteration) sets the join's variables to its value.
    fn assign_join(&mut self, join: &Join, value: &HVal) -> Res<()> {
        match (join, value) {
            (Join::Scalar(var, _), HVal::Scalar(HScalar::Host(e, _))) => {
                self.step(Step::Let { var: *var, value: e.clone() });
            }
            (Join::Scalar(var, _), HVal::Scalar(HScalar::Device(buf, elem))) => {
                self.step(Step::Read { var: *var, buf: *buf, elem: *elem, index: Expr::I64(0) });
            }
            (Join::Tuple(parts), HVal::Tuple(values)) if parts.len() == values.len() => {
                for (p, v) in parts.iter().zip(values) {
                    self.assign_join(p, v)?;
                }
            }
            (Join::Arr { buf, components, sizes, .. }, HVal::Arr(a)) => {
                for (size, value) in sizes.iter().zip(&a.layout.shape) {
                    if let Some(var) = size
                        && *value != Expr::Var(*var)
                    {
                        self.step(Step::Let { var: *var, value: value.clone() });
                    }
                }
                match buf {
                    JoinPart::Chosen(var) => {
                        if *var != a.buf {
                            self.step(Step::Alias { var: *var, from: a.buf });
                        }
                    }
                    JoinPart::Known(target) => {
                        if *target != a.buf {
                            // The memory IR put the result in memory of its own (a loop
                            // updating in place): the value is copied there.
                            let dest =
                                HArr { buf: *target, elem: a.elem, layout: a.layout.clone() };
                            self.copy_array(a, &dest, "join_copy")?;
                        }
                    }
                }
                let mut layout = vec![a.layout.offset.clone()];
                layout.extend(a.layout.strides.iter().cloned());
                for (component, value) in components.iter().zip(layout) {
                    if let Some(var) = component
                        && value != Expr::Var(*var)
                    {
                        self.step(Step::Let { var: *var, value });
                    }
                }
            }
            _ => return Err(LowerError::internal("a branch value of another shape")),
        }
        Ok(())
    }

    /// The value a join holds after the branches (or the loop).
    fn join_value(&mut self, join: &Join) -> Res<HVal> {
        Ok(match join {
            Join::Scalar(v, elem) => HVal::Scalar(HScalar::Host(Expr::Var(*v), *elem)),
            Join::Tuple(parts) => {
                HVal::Tuple(parts.iter().map(|p| self.join_value(p)).collect::<Res<_>>()?)
            }
            Join::Arr { info, .. } => HVal::Arr(self.array_of(info)?),
        })
    }
}

/// Host variables that hold a value chosen at run time.
enum Join {
    Scalar(weft_plan::Var, Elem),
    Tuple(Vec<Join>),
    Arr {
        buf: JoinPart,
        /// The host variables of the LMAD's run-time components (offset, then strides).
        components: Vec<Option<weft_plan::Var>>,
        /// The host variables of sizes only the value knows, per dimension.
        sizes: Vec<Option<weft_plan::Var>>,
        info: weft_mem::ArrayMem,
    },
}

enum JoinPart {
    /// The memory IR's block, allocated: values are copied into it.
    Known(weft_plan::Var),
    /// A block chosen at run time: a host variable aliases the value's buffer.
    Chosen(weft_plan::Var),
}

fn single(mut values: Vec<HVal>) -> HVal {
    if values.len() == 1 { values.remove(0) } else { HVal::Tuple(values) }
}

/// The same two-dimensional array indexed the other way round (a copy between two
/// arrays is the same copy between their transposes).
fn swapped(a: &HArr) -> HArr {
    let mut out = a.clone();
    out.layout.strides.swap(0, 1);
    out.layout.shape.swap(0, 1);
    out
}

/// Whether the memory IR copies the binding (a view that is not one LMAD).
pub(crate) fn copied(info: &MemInfo) -> bool {
    info.leaves().iter().any(|a| matches!(a.how, Provenance::Copy(_)))
}

/// The index of `flatten xs` element `idx` in `xs` (`i / m`, `i % m`, the rest).
pub(crate) fn flatten_source(src: &KVal, idx: &[CExpr]) -> Vec<CExpr> {
    let m = src.shape().and_then(|s| s.get(1).cloned()).unwrap_or(CExpr::Int(1));
    let mut from = vec![
        CExpr::bin(COp::Div, idx[0].clone(), m.clone()),
        CExpr::bin(COp::Rem, idx[0].clone(), m),
    ];
    from.extend(idx[1..].iter().cloned());
    from
}

/// An `i64` or `bool` known to the host.
fn known(v: &HScalar) -> Option<Expr> {
    match v {
        HScalar::Host(e, Elem::I64 | Elem::Bool) => Some(e.clone()),
        _ => None,
    }
}

pub(crate) fn shape_of(v: &HVal) -> Option<Vec<Expr>> {
    match v {
        HVal::Arr(a) => Some(a.layout.shape.clone()),
        HVal::Tuple(parts) => parts.first().and_then(shape_of),
        HVal::Scalar(_) => None,
    }
}

fn first_dim(v: &HVal) -> Expr {
    shape_of(v).and_then(|s| s.first().cloned()).unwrap_or(Expr::I64(0))
}

fn same_arrays(a: &HVal, b: &HVal) -> bool {
    match (a, b) {
        (HVal::Arr(x), HVal::Arr(y)) => x == y,
        (HVal::Tuple(xs), HVal::Tuple(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_arrays(x, y))
        }
        _ => false,
    }
}

fn rebuild_host(like: &KVal, leaves: &mut impl Iterator<Item = HVal>) -> HVal {
    match like {
        KVal::Scalar(..) => leaves.next().unwrap_or(HVal::Tuple(Vec::new())),
        KVal::Tuple(parts) => HVal::Tuple(parts.iter().map(|p| rebuild_host(p, leaves)).collect()),
        KVal::Arr(_) => HVal::Tuple(Vec::new()),
    }
}

/// The index of a flat position `flat` in a row-major shape `dims`.
pub(crate) fn unflatten_index(k: &mut Kern<'_, '_>, flat: &CExpr, dims: &[CExpr]) -> Vec<CExpr> {
    let mut idx = vec![CExpr::Int(0); dims.len()];
    let mut rest = flat.clone();
    for d in (0..dims.len()).rev() {
        if d == 0 {
            idx[0] = rest.clone();
            break;
        }
        let i = CExpr::bin(COp::Rem, rest.clone(), dims[d].clone());
        idx[d] = k.tmp("i", Elem::I64, i);
        rest = k.tmp("rest", Elem::I64, CExpr::bin(COp::Div, rest, dims[d].clone()));
    }
    idx
}

/// The host plan's operator for a core operator on `elem`, if the host computes it
/// (`i64` arithmetic and comparisons, `bool` logic).
pub(crate) fn host_op(op: weft_core::BinOp, elem: Elem) -> Option<HOp> {
    use weft_core::BinOp;
    let cmp = match op {
        BinOp::Eq => Some(HOp::Eq),
        BinOp::Neq => Some(HOp::Ne),
        BinOp::Lt => Some(HOp::Lt),
        BinOp::Le => Some(HOp::Le),
        BinOp::Gt => Some(HOp::Gt),
        BinOp::Ge => Some(HOp::Ge),
        _ => None,
    };
    match elem {
        Elem::I64 => cmp.or(match op {
            BinOp::Add => Some(HOp::Add),
            BinOp::Sub => Some(HOp::Sub),
            BinOp::Mul => Some(HOp::Mul),
            BinOp::Div => Some(HOp::Div),
            BinOp::Rem => Some(HOp::Rem),
            _ => None,
        }),
        Elem::Bool => match op {
            BinOp::Eq => Some(HOp::Eq),
            BinOp::Neq => Some(HOp::Ne),
            BinOp::BitAnd => Some(HOp::And),
            BinOp::BitOr => Some(HOp::Or),
            _ => None,
        },
        _ => None,
    }
}
