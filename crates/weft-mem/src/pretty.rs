//! The memory IR's one printer, used by `weft dump --ir mem` and snapshots.
//!
//! It prints the core statements (in the core printer's forms) with memory: every
//! array type is followed by its block and LMAD as Futhark prints them,
//! `[n_0][m_1]f32 @ mem_3 -> {offset: 0; strides: [m_1, 1]; shape: [n_0, m_1]}`, and
//! every allocation is a statement `let mem_3: mem = alloc BYTES` before the statement
//! it serves (sizes in bytes). An array of tuples prints as a tuple of arrays.
//! Names are numbered per function in order of appearance: core variables as in the
//! core printer (`xs_1`, `t_2`, `?3`), blocks `mem_N` (existential blocks `?mem_N`),
//! existential LMAD components `?ex_N`, and the iteration index of a `map` or
//! `generate` `gtid_N`, printed right after the SOAC's keyword.

use std::fmt::Write as _;

use rustc_hash::FxHashMap;
use weft_core::{
    Atom, BlockId, Exp, ExpId, FnId, Function, IndexItem, Lambda, LoopForm, Program, Space, Type,
    UnOp, VarId, VarKind,
};

use crate::ir::{
    BlockBinding, CopyReason, ExistId, Layout, MemBlockId, MemFunction, MemInfo, MemLmad,
    MemProgram, MemSize, MemVar, NotExpandedReason, Provenance,
};
use crate::lower::{ValueShape, value_shape};

/// The whole program with memory.
pub fn pretty_mem(program: &Program, mem: &MemProgram) -> String {
    let mut out = String::new();
    let mut count: FxHashMap<String, usize> = FxHashMap::default();
    let mut names = FxHashMap::default();
    for (id, f) in program.functions.iter() {
        let n = count.entry(f.name.to_string()).or_insert(0);
        names.insert(id, if *n == 0 { f.name.to_string() } else { format!("{}'{n}", f.name) });
        *n += 1;
    }
    let empty = MemFunction::default();
    for (idx, (id, f)) in program.functions.iter().enumerate() {
        if idx > 0 {
            out.push('\n');
        }
        let mem_f = mem.functions.get(id).unwrap_or(&empty);
        let mut p = Printer {
            f,
            mem: mem_f,
            fn_names: &names,
            vars: FxHashMap::default(),
            blocks: FxHashMap::default(),
            exists: FxHashMap::default(),
            threads: FxHashMap::default(),
            next: 0,
            allocs: allocs_before(mem_f),
            out: String::new(),
        };
        p.function(id);
        out.push_str(&p.out);
    }
    out
}

fn allocs_before(mem: &MemFunction) -> FxHashMap<VarId, Vec<MemBlockId>> {
    let mut map: FxHashMap<VarId, Vec<MemBlockId>> = FxHashMap::default();
    for (id, block) in mem.blocks.iter() {
        if let BlockBinding::Alloc { before, .. } = &block.binding {
            map.entry(*before).or_default().push(id);
        }
    }
    map
}

struct Printer<'a> {
    f: &'a Function,
    mem: &'a MemFunction,
    fn_names: &'a FxHashMap<FnId, String>,
    vars: FxHashMap<VarId, usize>,
    blocks: FxHashMap<MemBlockId, usize>,
    exists: FxHashMap<ExistId, usize>,
    threads: FxHashMap<ExpId, usize>,
    next: usize,
    allocs: FxHashMap<VarId, Vec<MemBlockId>>,
    out: String,
}

fn number<K: std::hash::Hash + Eq>(map: &mut FxHashMap<K, usize>, key: K) -> usize {
    let next = map.len();
    *map.entry(key).or_insert(next)
}

impl Printer<'_> {
    fn function(&mut self, id: FnId) {
        let f = self.f;
        let keyword = if f.is_entry { "entry" } else { "def" };
        let name = self.fn_names.get(&id).cloned().unwrap_or_default();
        let _ = write!(self.out, "{keyword} {name}");
        for &size in &f.size_params {
            let name = self.var(size);
            let _ = write!(self.out, " [{name}]");
        }
        for &param in &f.params {
            let name = self.var(param);
            let ty = self.ty_of(param);
            let _ = write!(self.out, " ({name}: {ty})");
        }
        // The body first, so blocks are numbered in the order the body allocates them;
        // the result type (which names the result's block) goes in the header.
        let header = std::mem::take(&mut self.out);
        self.block(f.body, 1);
        let body = std::mem::replace(&mut self.out, header);
        let ret = self.ty(&f.ret, &self.mem.result.clone());
        let _ = writeln!(self.out, " : {ret} =");
        self.out.push_str(&body);
        // Result copies (digest §5.1, TransformProgram).
        for copy in &self.mem.forced_copies {
            if copy.reason == CopyReason::ResultNotDirect {
                let block = self.block_name(copy.block);
                let bytes =
                    self.mem.blocks[copy.block].bytes().map(|b| self.size(&b)).unwrap_or_default();
                let var = self.var(copy.var);
                let _ = writeln!(
                    self.out,
                    "  -- result copy: {var} into {block} (alloc {bytes} bytes)"
                );
            }
        }
    }

    fn var(&mut self, var: VarId) -> String {
        let next = &mut self.next;
        let n = *self.vars.entry(var).or_insert_with(|| {
            let n = *next;
            *next += 1;
            n
        });
        let v = &self.f.vars[var];
        match v.kind {
            VarKind::Existential => format!("?{n}"),
            VarKind::Bound if v.name.as_str().is_empty() => format!("t_{n}"),
            VarKind::Bound => format!("{}_{n}", v.name),
        }
    }

    fn block_name(&mut self, block: MemBlockId) -> String {
        let n = number(&mut self.blocks, block);
        match self.mem.blocks[block].binding {
            BlockBinding::Existential { .. } => format!("?mem_{n}"),
            BlockBinding::Alloc { .. }
            | BlockBinding::ResultAlloc { .. }
            | BlockBinding::Param { .. } => {
                format!("mem_{n}")
            }
        }
    }

    fn thread(&mut self, exp: ExpId) -> String {
        format!("gtid_{}", number(&mut self.threads, exp))
    }

    fn size(&mut self, size: &MemSize) -> String {
        let mut vars = size.vars();
        vars.sort();
        let mut names: FxHashMap<MemVar, String> = FxHashMap::default();
        for v in vars {
            let name = match v {
                MemVar::Core(c) => self.var(c),
                MemVar::Thread(e) => self.thread(e),
                MemVar::Exist(x) => format!("?ex_{}", number(&mut self.exists, x)),
            };
            names.insert(v, name);
        }
        size.display(&|v: &MemVar| names.get(v).cloned().unwrap_or_default()).to_string()
    }

    fn lmad(&mut self, lmad: &MemLmad) -> String {
        let offset = self.size(&lmad.offset);
        let strides: Vec<String> = lmad.dims.iter().map(|d| self.size(&d.stride)).collect();
        let shape: Vec<String> = lmad.dims.iter().map(|d| self.size(&d.shape)).collect();
        format!(
            "{{offset: {offset}; strides: [{}]; shape: [{}]}}",
            strides.join(", "),
            shape.join(", ")
        )
    }

    fn ty_of(&mut self, var: VarId) -> String {
        let info = self.mem.bindings.get(var).cloned().unwrap_or_default();
        self.ty(&self.f.vars[var].ty, &info)
    }

    fn ty(&mut self, ty: &Type, info: &MemInfo) -> String {
        self.shape(&value_shape(ty), info)
    }

    fn shape(&mut self, shape: &ValueShape, info: &MemInfo) -> String {
        match (shape, info) {
            (ValueShape::Scalar(s), _) => s.name().to_owned(),
            (ValueShape::Array(dims, elem), _) => {
                let mut text = String::new();
                for d in dims {
                    let d = self.size(&crate::lower::mem_size(d));
                    let _ = write!(text, "[{d}]");
                }
                text.push_str(elem.name());
                if let MemInfo::Array(array) = info {
                    let block = self.block_name(array.block);
                    let lmad = self.lmad(&array.lmad);
                    let _ = write!(text, " @ {block} -> {lmad}");
                }
                text
            }
            (ValueShape::Tuple(items), MemInfo::Tuple(infos)) if items.len() == infos.len() => {
                let parts: Vec<String> =
                    items.iter().zip(infos).map(|(s, i)| self.shape(s, i)).collect();
                format!("({})", parts.join(", "))
            }
            (ValueShape::Tuple(items), _) => {
                let parts: Vec<String> =
                    items.iter().map(|s| self.shape(s, &MemInfo::Scalar)).collect();
                format!("({})", parts.join(", "))
            }
        }
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    fn block(&mut self, block: BlockId, depth: usize) {
        let f = self.f;
        for stmt in &f.blocks[block].stmts {
            for mem_block in self.allocs.get(&stmt.var).cloned().unwrap_or_default() {
                let name = self.block_name(mem_block);
                let block_data = &self.mem.blocks[mem_block];
                let bytes = block_data.bytes().map(|b| self.size(&b)).unwrap_or_default();
                self.indent(depth);
                let _ = write!(self.out, "let {name}: mem = alloc {bytes}");
                if let BlockBinding::Alloc { expansions, .. } = &block_data.binding {
                    for expansion in expansions {
                        let tid = self.thread(expansion.soac);
                        let threads = self.size(&expansion.n_threads);
                        let layout = match expansion.layout {
                            Layout::Interleaved => "interleaved",
                            Layout::Chunked => "chunked",
                        };
                        let _ = write!(self.out, " -- expanded over {tid} < {threads} ({layout})");
                    }
                }
                for kept in self.mem.not_expanded.iter().filter(|k| k.block == mem_block) {
                    let why = match kept.reason {
                        NotExpandedReason::VariantSize => "its size varies per thread",
                        NotExpandedReason::Nested => "inside a branch or loop of a parallel lambda",
                        NotExpandedReason::NotAMap => "inside a reduce or scan lambda",
                    };
                    let _ = write!(self.out, " -- not expanded: {why}");
                }
                self.out.push('\n');
            }
            let name = self.var(stmt.var);
            let ty = self.ty_of(stmt.var);
            self.indent(depth);
            let _ = write!(self.out, "let {name}: {ty} = ");
            let info = self.mem.bindings.get(stmt.var).cloned().unwrap_or_default();
            if info.leaves().iter().any(|a| matches!(a.how, Provenance::Copy(_))) {
                self.out.push_str("copy ");
            }
            if info.leaves().iter().any(|a| a.how == Provenance::InPlace) {
                self.out.push_str("in place ");
            }
            self.exp(stmt.exp, depth);
            self.out.push('\n');
        }
        self.indent(depth);
        let result = match f.blocks[block].result {
            Some(atom) => self.atom(atom),
            None => "()".to_owned(),
        };
        let _ = writeln!(self.out, "in {result}");
    }

    fn nested(&mut self, block: BlockId, depth: usize) {
        self.out.push('\n');
        self.block(block, depth + 2);
        self.out.pop();
    }

    fn atom(&mut self, atom: Atom) -> String {
        match atom {
            Atom::Var(v) => self.var(v),
            Atom::Const(s) => s.to_string(),
        }
    }

    fn atoms(&mut self, atoms: &[Atom]) -> String {
        atoms.iter().map(|&a| self.atom(a)).collect::<Vec<_>>().join(" ")
    }

    fn lambda(&mut self, lambda: &Lambda, depth: usize) {
        self.out.push('\\');
        for &param in &lambda.params {
            let name = self.var(param);
            let ty = self.ty_of(param);
            let _ = write!(self.out, "({name}: {ty}) ");
        }
        let ret = self.ty(&lambda.ret, &MemInfo::Scalar);
        let _ = write!(self.out, ": {ret} ->");
        self.nested(lambda.body, depth);
    }

    fn level(level: Option<weft_hir::Level>) -> String {
        level.map_or(String::new(), |l| format!("@{}", l.name()))
    }

    #[expect(clippy::too_many_lines, reason = "one arm per expression kind")]
    fn exp(&mut self, exp_id: ExpId, depth: usize) {
        let exp = &self.f.exps[exp_id];
        let text = match exp {
            Exp::Atom(a) => self.atom(*a),
            Exp::Size(size) => format!("size {}", self.size(&crate::lower::mem_size(size))),
            Exp::BinOp { op, ty, lhs, rhs } => {
                format!(
                    "{}.{} {} {}",
                    weft_core::binop_name(*op),
                    ty.name(),
                    self.atom(*lhs),
                    self.atom(*rhs)
                )
            }
            Exp::UnOp { op, ty, operand } => {
                let name = match op {
                    UnOp::Neg => "neg",
                    UnOp::Not => "not",
                };
                format!("{name}.{} {}", ty.name(), self.atom(*operand))
            }
            Exp::Convert { from, to, operand } => {
                format!("{}.{} {}", to.name(), from.name(), self.atom(*operand))
            }
            Exp::Math { ty, func, args } => {
                let name = weft_hir::Builtin::Math(*ty, *func).name();
                format!("{name} {}", self.atoms(args)).trim_end().to_owned()
            }
            Exp::Tuple(atoms) => {
                let atoms: Vec<String> = atoms.iter().map(|&a| self.atom(a)).collect();
                format!("({})", atoms.join(", "))
            }
            Exp::Proj { tuple, index } => format!("{}.{index}", self.atom(*tuple)),
            Exp::ArrayLit { elems, .. } => {
                let elems: Vec<String> = elems.iter().map(|&a| self.atom(a)).collect();
                format!("[{}]", elems.join(", "))
            }
            Exp::Index { array, items } => {
                let items: Vec<String> = items
                    .iter()
                    .map(|item| match item {
                        IndexItem::Fix(a) => self.atom(*a),
                        IndexItem::Slice { start, end, stride } => {
                            let mut s = String::new();
                            if let Some(a) = start {
                                s.push_str(&self.atom(*a));
                            }
                            s.push(':');
                            if let Some(a) = end {
                                s.push_str(&self.atom(*a));
                            }
                            if let Some(a) = stride {
                                s.push(':');
                                s.push_str(&self.atom(*a));
                            }
                            s
                        }
                    })
                    .collect();
                format!("{}[{}]", self.atom(*array), items.join(", "))
            }
            Exp::Dim { array, dim } => format!("dim {dim} {}", self.atom(*array)),
            Exp::Call { func, args } => {
                let name = self.fn_names.get(func).cloned().unwrap_or_default();
                format!("call {name} {}", self.atoms(args)).trim_end().to_owned()
            }
            Exp::If { cond, then_branch, else_branch } => {
                let cond = self.atom(*cond);
                let _ = write!(self.out, "if {cond} then");
                self.nested(*then_branch, depth);
                self.out.push('\n');
                self.indent(depth + 1);
                self.out.push_str("else");
                self.nested(*else_branch, depth);
                return;
            }
            Exp::Loop { param, init, form, body } => {
                let param_name = self.var(*param);
                let param_ty = self.ty_of(*param);
                let init = self.atom(*init);
                let _ = write!(self.out, "loop ({param_name}: {param_ty}) = {init} ");
                match form {
                    LoopForm::For { index, bound } => {
                        let index = self.var(*index);
                        let bound = self.atom(*bound);
                        let _ = write!(self.out, "for {index} < {bound} do");
                    }
                    LoopForm::While { cond } => {
                        self.out.push_str("while");
                        self.nested(*cond, depth);
                        self.out.push('\n');
                        self.indent(depth + 1);
                        self.out.push_str("do");
                    }
                }
                self.nested(*body, depth);
                return;
            }
            Exp::Map { level, lambda, arrays } => {
                let tid = self.thread(exp_id);
                let arrays = self.atoms(arrays);
                let _ = write!(self.out, "map{} {tid} ({arrays}) ", Self::level(*level));
                self.lambda(lambda, depth);
                return;
            }
            Exp::Reduce { level, lambda, neutral, array }
            | Exp::Scan { level, lambda, neutral, array } => {
                let name = if matches!(exp, Exp::Reduce { .. }) { "reduce" } else { "scan" };
                let neutral = self.atom(*neutral);
                let array = self.atom(*array);
                let _ = write!(self.out, "{name}{} {neutral} {array} ", Self::level(*level));
                self.lambda(lambda, depth);
                return;
            }
            Exp::Generate { level, size, lambda } => {
                let tid = self.thread(exp_id);
                let size = self.atom(*size);
                let _ = write!(self.out, "generate{} {tid} {size} ", Self::level(*level));
                self.lambda(lambda, depth);
                return;
            }
            Exp::Scatter { dest, indices, values } => {
                format!(
                    "scatter {} {} {}",
                    self.atom(*dest),
                    self.atom(*indices),
                    self.atom(*values)
                )
            }
            Exp::ReduceByIndex { dest, lambda, neutral, indices, values } => {
                let operands = self.atoms(&[*dest, *neutral, *indices, *values]);
                let _ = write!(self.out, "reduce_by_index {operands} ");
                self.lambda(lambda, depth);
                return;
            }
            Exp::Update { array, indices, value } => {
                let indices: Vec<String> = indices.iter().map(|&i| self.atom(i)).collect();
                format!(
                    "{} with [{}] = {}",
                    self.atom(*array),
                    indices.join(", "),
                    self.atom(*value)
                )
            }
            Exp::Iota { size } => format!("iota {}", self.atom(*size)),
            Exp::Replicate { size, value } => {
                format!("replicate {} {}", self.atom(*size), self.atom(*value))
            }
            Exp::Zip(atoms) => format!("zip {}", self.atoms(atoms)),
            Exp::Unzip(a) => format!("unzip {}", self.atom(*a)),
            Exp::Transpose(a) => format!("transpose {}", self.atom(*a)),
            Exp::Reverse(a) => format!("reverse {}", self.atom(*a)),
            Exp::Flatten(a) => format!("flatten {}", self.atom(*a)),
            Exp::Unflatten { rows, cols, array } => {
                format!("unflatten {} {} {}", self.atom(*rows), self.atom(*cols), self.atom(*array))
            }
            Exp::Split { chunk, array } => {
                format!("split {} {}", self.atom(*chunk), self.atom(*array))
            }
            Exp::Take { count, array } => {
                format!("take {} {}", self.atom(*count), self.atom(*array))
            }
            Exp::Drop { count, array } => {
                format!("drop {} {}", self.atom(*count), self.atom(*array))
            }
            Exp::Concat(a, b) => format!("concat {} {}", self.atom(*a), self.atom(*b)),
            Exp::Materialise { space, value } => {
                let name = match space {
                    Space::Global => "to_global",
                    Space::Local => "to_local",
                    Space::Private => "to_private",
                    Space::Inferred => "force",
                };
                format!("{name} {}", self.atom(*value))
            }
            Exp::Coerce { value, ty } => {
                let value = self.atom(*value);
                format!("{value} :> {}", self.ty(ty, &MemInfo::Scalar))
            }
        };
        self.out.push_str(&text);
    }
}
