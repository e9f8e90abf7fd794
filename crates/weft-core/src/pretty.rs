//! The core IR's one printer, used by `weft dump --ir core` and snapshots.
//!
//! Variables print as `name_N`, numbered per function in order of first appearance
//! (temporaries are `t_N`, existential sizes `?N`), so the output does not depend on
//! arena order and is deterministic. Every statement prints its type with sizes.
//!
//! ```text
//! entry dot [n_0] (xs_1: [n_0]f32) (ys_2: [n_0]f32) : f32 =
//!   let t_3: [n_0]f32 = map (xs_1, ys_2) \(x_4: f32) (y_5: f32) ->
//!       let t_6: f32 = mul.f32 x_4 y_5
//!       in t_6
//!   ...
//! ```

use std::fmt::Write as _;

use rustc_hash::FxHashMap;

use crate::ir::{
    Atom, BinOp, BlockId, CoreSize, Exp, FnId, Function, IndexItem, Lambda, LoopForm, Program,
    Space, Type, UnOp, VarId, VarKind,
};

/// The whole program: functions in dependency order (callees first), entries last.
pub fn pretty_program(program: &Program) -> String {
    let names = function_names(program);
    let mut out = String::new();
    for (idx, (id, _)) in program.functions.iter().enumerate() {
        if idx > 0 {
            out.push('\n');
        }
        out.push_str(&pretty_function(program, id, &names));
    }
    out
}

fn function_names(program: &Program) -> FxHashMap<FnId, String> {
    let mut count: FxHashMap<&str, usize> = FxHashMap::default();
    let mut names = FxHashMap::default();
    for (id, f) in program.functions.iter() {
        let n = count.entry(f.name.as_str()).or_insert(0);
        let name = if *n == 0 { f.name.to_string() } else { format!("{}'{n}", f.name) };
        *n += 1;
        names.insert(id, name);
    }
    names
}

fn pretty_function(program: &Program, id: FnId, names: &FxHashMap<FnId, String>) -> String {
    let function = &program.functions[id];
    let mut p =
        Printer { f: function, names, numbers: FxHashMap::default(), next: 0, out: String::new() };
    let keyword = if function.is_entry { "entry" } else { "def" };
    let _ = write!(p.out, "{keyword} {}", names.get(&id).map_or("?", String::as_str));
    for &size in &function.size_params {
        let name = p.var(size);
        let _ = write!(p.out, " [{name}]");
    }
    for &param in &function.params {
        let name = p.var(param);
        let ty = p.ty(&function.vars[param].ty);
        let _ = write!(p.out, " ({name}: {ty})");
    }
    let ret = p.ty(&function.ret);
    let _ = writeln!(p.out, " : {ret} =");
    p.block(function.body, 1);
    p.out
}

struct Printer<'a> {
    f: &'a Function,
    names: &'a FxHashMap<FnId, String>,
    numbers: FxHashMap<VarId, usize>,
    next: usize,
    out: String,
}

impl Printer<'_> {
    fn var(&mut self, var: VarId) -> String {
        let next = &mut self.next;
        let n = *self.numbers.entry(var).or_insert_with(|| {
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

    fn atom(&mut self, atom: Atom) -> String {
        match atom {
            Atom::Var(v) => self.var(v),
            Atom::Const(s) => s.to_string(),
        }
    }

    fn atoms(&mut self, atoms: &[Atom]) -> String {
        atoms.iter().map(|&a| self.atom(a)).collect::<Vec<_>>().join(" ")
    }

    fn ty(&mut self, ty: &Type) -> String {
        type_text(ty, &mut |v| self.var(v))
    }

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    fn block(&mut self, block: BlockId, depth: usize) {
        let f = self.f;
        for stmt in &f.blocks[block].stmts {
            let name = self.var(stmt.var);
            let ty = self.ty(&f.vars[stmt.var].ty);
            self.indent(depth);
            let _ = write!(self.out, "let {name}: {ty} = ");
            self.exp(&f.exps[stmt.exp], depth);
            self.out.push('\n');
        }
        self.indent(depth);
        let result = match f.blocks[block].result {
            Some(atom) => self.atom(atom),
            None => "()".to_owned(),
        };
        let _ = write!(self.out, "in {result}");
        self.out.push('\n');
    }

    fn nested(&mut self, block: BlockId, depth: usize) {
        self.out.push('\n');
        self.block(block, depth + 2);
        // The caller ends the line; drop the block's final newline.
        self.out.pop();
    }

    fn lambda(&mut self, lambda: &Lambda, depth: usize) {
        self.out.push('\\');
        for &param in &lambda.params {
            let name = self.var(param);
            let ty = self.ty(&self.f.vars[param].ty);
            let _ = write!(self.out, "({name}: {ty}) ");
        }
        let ret = self.ty(&lambda.ret);
        let _ = write!(self.out, ": {ret} ->");
        self.nested(lambda.body, depth);
    }

    fn level(level: Option<weft_hir::Level>) -> String {
        level.map_or(String::new(), |l| format!("@{}", l.name()))
    }

    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "the expressions without nested code are listed once, in flat_exp_text's exhaustive match"
    )]
    fn exp(&mut self, exp: &Exp, depth: usize) {
        match exp {
            Exp::If { cond, then_branch, else_branch } => {
                let cond = self.atom(*cond);
                let _ = write!(self.out, "if {cond} then");
                self.nested(*then_branch, depth);
                self.out.push('\n');
                self.indent(depth + 1);
                self.out.push_str("else");
                self.nested(*else_branch, depth);
            }
            Exp::Loop { param, init, form, body } => {
                let param_name = self.var(*param);
                let init = self.atom(*init);
                let _ = write!(self.out, "loop {param_name} = {init} ");
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
            }
            Exp::Map { level, lambda, arrays } => {
                let arrays = self.atoms(arrays);
                let _ = write!(self.out, "map{} ({arrays}) ", Self::level(*level));
                self.lambda(lambda, depth);
            }
            Exp::Reduce { level, lambda, neutral, array }
            | Exp::Scan { level, lambda, neutral, array } => {
                let name = if matches!(exp, Exp::Reduce { .. }) { "reduce" } else { "scan" };
                let neutral = self.atom(*neutral);
                let array = self.atom(*array);
                let _ = write!(self.out, "{name}{} {neutral} {array} ", Self::level(*level));
                self.lambda(lambda, depth);
            }
            Exp::Generate { level, size, lambda } => {
                let size = self.atom(*size);
                let _ = write!(self.out, "generate{} {size} ", Self::level(*level));
                self.lambda(lambda, depth);
            }
            Exp::ReduceByIndex { dest, lambda, neutral, indices, values } => {
                let operands = self.atoms(&[*dest, *neutral, *indices, *values]);
                let _ = write!(self.out, "reduce_by_index {operands} ");
                self.lambda(lambda, depth);
            }
            // Everything else has no nested code: `flat_exp_text` prints it.
            _ => {
                let names = self.names;
                let mut namer = |v| self.var(v);
                let text = flat_exp_text(exp, &mut namer, &|func| {
                    names.get(&func).cloned().unwrap_or_default()
                })
                .unwrap_or_default();
                self.out.push_str(&text);
            }
        }
    }
}

/// The text of an expression with no nested code, or `None` for `if`, `loop` and the
/// combinators. Every printer of an IR made of core expressions (the core printer, the
/// GPU IR's) prints them through this one function; `var` names a variable.
pub fn flat_exp_text(
    exp: &Exp,
    var: &mut dyn FnMut(VarId) -> String,
    fn_name: &dyn Fn(FnId) -> String,
) -> Option<String> {
    fn atoms(list: &[Atom], var: &mut dyn FnMut(VarId) -> String) -> Vec<String> {
        list.iter()
            .map(|&a| match a {
                Atom::Var(v) => var(v),
                Atom::Const(s) => s.to_string(),
            })
            .collect()
    }
    let text = match exp {
        Exp::Atom(a) => atoms(&[*a], var).remove(0),
        Exp::Size(size) => format!("size {}", size_text(size, var)),
        Exp::BinOp { op, ty, lhs, rhs } => {
            let a = atoms(&[*lhs, *rhs], var);
            format!("{}.{} {} {}", binop_name(*op), ty.name(), a[0], a[1])
        }
        Exp::UnOp { op, ty, operand } => {
            let name = match op {
                UnOp::Neg => "neg",
                UnOp::Not => "not",
            };
            format!("{name}.{} {}", ty.name(), atoms(&[*operand], var)[0])
        }
        Exp::Convert { from, to, operand } => {
            format!("{}.{} {}", to.name(), from.name(), atoms(&[*operand], var)[0])
        }
        Exp::Math { ty, func, args } => {
            let name = weft_hir::Builtin::Math(*ty, *func).name();
            format!("{name} {}", atoms(args, var).join(" ")).trim_end().to_owned()
        }
        Exp::Tuple(list) => format!("({})", atoms(list, var).join(", ")),
        Exp::Proj { tuple, index } => format!("{}.{index}", atoms(&[*tuple], var)[0]),
        Exp::ArrayLit { elems, elem_ty } => {
            let elems = atoms(elems, var).join(", ");
            format!("[{elems}] : []{}", type_text(elem_ty, var))
        }
        Exp::Index { array, items } => {
            let items: Vec<String> = items
                .iter()
                .map(|item| match item {
                    IndexItem::Fix(a) => atoms(&[*a], var).remove(0),
                    IndexItem::Slice { start, end, stride } => {
                        let mut s = String::new();
                        if let Some(a) = start {
                            s.push_str(&atoms(&[*a], var)[0]);
                        }
                        s.push(':');
                        if let Some(a) = end {
                            s.push_str(&atoms(&[*a], var)[0]);
                        }
                        if let Some(a) = stride {
                            s.push(':');
                            s.push_str(&atoms(&[*a], var)[0]);
                        }
                        s
                    }
                })
                .collect();
            format!("{}[{}]", atoms(&[*array], var)[0], items.join(", "))
        }
        Exp::Dim { array, dim } => format!("dim {dim} {}", atoms(&[*array], var)[0]),
        Exp::Call { func, args } => {
            format!("call {} {}", fn_name(*func), atoms(args, var).join(" ")).trim_end().to_owned()
        }
        Exp::Scatter { dest, indices, values } => {
            format!("scatter {}", atoms(&[*dest, *indices, *values], var).join(" "))
        }
        Exp::Update { array, indices, value } => {
            let array = atoms(&[*array], var).remove(0);
            let indices = atoms(indices, var).join(", ");
            format!("{array} with [{indices}] = {}", atoms(&[*value], var)[0])
        }
        Exp::Iota { size } => format!("iota {}", atoms(&[*size], var)[0]),
        Exp::Replicate { size, value } => {
            format!("replicate {}", atoms(&[*size, *value], var).join(" "))
        }
        Exp::Zip(list) => format!("zip {}", atoms(list, var).join(" ")),
        Exp::Unzip(a) => format!("unzip {}", atoms(&[*a], var)[0]),
        Exp::Transpose(a) => format!("transpose {}", atoms(&[*a], var)[0]),
        Exp::Reverse(a) => format!("reverse {}", atoms(&[*a], var)[0]),
        Exp::Flatten(a) => format!("flatten {}", atoms(&[*a], var)[0]),
        Exp::Unflatten { rows, cols, array } => {
            format!("unflatten {}", atoms(&[*rows, *cols, *array], var).join(" "))
        }
        Exp::Split { chunk, array } => format!("split {}", atoms(&[*chunk, *array], var).join(" ")),
        Exp::Take { count, array } => format!("take {}", atoms(&[*count, *array], var).join(" ")),
        Exp::Drop { count, array } => format!("drop {}", atoms(&[*count, *array], var).join(" ")),
        Exp::Concat(a, b) => format!("concat {}", atoms(&[*a, *b], var).join(" ")),
        Exp::Materialise { space, value } => {
            let name = match space {
                Space::Global => "to_global",
                Space::Local => "to_local",
                Space::Private => "to_private",
                Space::Inferred => "force",
            };
            format!("{name} {}", atoms(&[*value], var)[0])
        }
        Exp::Coerce { value, ty } => {
            format!("{} :> {}", atoms(&[*value], var)[0], type_text(ty, var))
        }
        Exp::If { .. }
        | Exp::Loop { .. }
        | Exp::Map { .. }
        | Exp::Reduce { .. }
        | Exp::Scan { .. }
        | Exp::Generate { .. }
        | Exp::ReduceByIndex { .. } => return None,
    };
    Some(text)
}

/// A type with its sizes, variables named by `var`.
pub fn type_text(ty: &Type, var: &mut dyn FnMut(VarId) -> String) -> String {
    match ty {
        Type::Scalar(s) => s.name().to_owned(),
        Type::Array { size, elem } => {
            let size_text = size_text(size, var);
            format!("[{size_text}]{}", type_text(elem, var))
        }
        Type::Tuple(elems) => {
            let elems: Vec<String> = elems.iter().map(|e| type_text(e, var)).collect();
            format!("({})", elems.join(", "))
        }
    }
}

/// A size polynomial, variables named by `var` (named in the order of their ids, so the
/// numbering of a printer that names on first use is deterministic).
pub fn size_text(size: &CoreSize, var: &mut dyn FnMut(VarId) -> String) -> String {
    let mut vars = size.vars();
    vars.sort();
    let names: FxHashMap<VarId, String> = vars.into_iter().map(|v| (v, var(v))).collect();
    size.display(&|v: &VarId| names.get(v).cloned().unwrap_or_default()).to_string()
}

/// The printed name of an operator (`add.i32`).
pub fn binop_name(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "add",
        BinOp::Sub => "sub",
        BinOp::Mul => "mul",
        BinOp::Div => "div",
        BinOp::Rem => "rem",
        BinOp::Pow => "pow",
        BinOp::Eq => "eq",
        BinOp::Neq => "neq",
        BinOp::Lt => "lt",
        BinOp::Le => "le",
        BinOp::Gt => "gt",
        BinOp::Ge => "ge",
        BinOp::BitAnd => "and",
        BinOp::BitOr => "or",
        BinOp::BitXor => "xor",
        BinOp::Shl => "shl",
        BinOp::Shr => "shr",
    }
}
