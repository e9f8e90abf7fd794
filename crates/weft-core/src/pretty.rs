//! The core IR's one printer, used by `weft dump --ir core` and snapshots, and, through
//! [`Annotate`], by every IR that decorates the core statements (weft-mem's memory IR).
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

use la_arena::Arena;
use rustc_hash::FxHashMap;

use crate::ir::{
    Atom, BinOp, BlockId, CoreSize, Exp, ExpId, FnId, Function, IndexItem, Lambda, LoopForm,
    Program, Space, Type, UnOp, Var, VarId, VarKind,
};

/// The whole program: functions in dependency order (callees first), entries last.
pub fn pretty_program(program: &Program) -> String {
    pretty_annotated(program, |_| Plain)
}

/// The whole program with each function's decorations from `annotate(function)`: one
/// printer for every representation, each with its own decoration (as Futhark prints
/// its representations).
pub fn pretty_annotated<A: Annotate>(
    program: &Program,
    mut annotate: impl FnMut(FnId) -> A,
) -> String {
    let names = function_names(program);
    let mut out = String::new();
    for (idx, (id, function)) in program.functions.iter().enumerate() {
        if idx > 0 {
            out.push('\n');
        }
        let mut p = Printer {
            f: function,
            fn_names: &names,
            names: VarNames::new(&function.vars),
            annotate: annotate(id),
            out: String::new(),
        };
        p.function(id);
        out.push_str(&p.out);
    }
    out
}

/// What an annotated printer adds to the core printer's text. Every method's default
/// prints the core IR as it is; weft-mem overrides them to print blocks, LMADs and
/// allocations. Methods that name variables get the printer's [`VarNames`], so the
/// decorations number variables in the same sequence as the statements.
pub trait Annotate {
    /// The type of a binding: a parameter, a statement's variable, a lambda parameter.
    fn binding_ty(&mut self, names: &mut VarNames<'_>, var: VarId) -> String {
        let ty = &names.vars()[var].ty;
        type_text(ty, &mut |v| names.name(v))
    }

    /// The type of a loop parameter, or `None` to leave it out (the core printer does:
    /// it is the initial value's type).
    fn loop_param_ty(&mut self, _names: &mut VarNames<'_>, _param: VarId) -> Option<String> {
        None
    }

    /// A type that belongs to no binding: a lambda's result, a coercion's target.
    fn ty(&mut self, names: &mut VarNames<'_>, ty: &Type) -> String {
        type_text(ty, &mut |v| names.name(v))
    }

    /// The function's result type.
    fn result_ty(&mut self, names: &mut VarNames<'_>, ty: &Type) -> String {
        self.ty(names, ty)
    }

    /// Whether the result type is printed after the body has been named, so that what
    /// it mentions is numbered in the order the body introduces it (weft-mem: the
    /// result's block).
    fn result_ty_after_body(&self) -> bool {
        false
    }

    /// An array literal's element type, or `None` to leave it out.
    fn array_literal_elem_ty(
        &mut self,
        names: &mut VarNames<'_>,
        elem_ty: &Type,
    ) -> Option<String> {
        Some(self.ty(names, elem_ty))
    }

    /// Lines printed before the statement that binds `var`, at its indentation
    /// (weft-mem: the allocations it needs).
    fn before_stmt(&mut self, _names: &mut VarNames<'_>, _var: VarId) -> Vec<String> {
        Vec::new()
    }

    /// Words printed between a statement's `=` and its expression (weft-mem: `copy `).
    fn stmt_prefix(&mut self, _var: VarId) -> String {
        String::new()
    }

    /// The name of a `map`'s or `generate`'s iteration index, printed after its keyword
    /// (weft-mem: `gtid_N`, which per-thread memory is expanded over).
    fn soac_index(&mut self, _exp: ExpId) -> Option<String> {
        None
    }

    /// Whole lines printed after the function's body (weft-mem: result copies).
    fn after_function(&mut self, _names: &mut VarNames<'_>) -> String {
        String::new()
    }
}

/// The core IR, undecorated.
pub struct Plain;

impl Annotate for Plain {}

/// Names one function's variables for printing: `name_N`, `t_N` for temporaries, `?N`
/// for existential sizes, numbered in order of first use. Every printer of an IR over
/// core variables names them through this.
pub struct VarNames<'a> {
    vars: &'a Arena<Var>,
    numbers: FxHashMap<VarId, usize>,
}

impl<'a> VarNames<'a> {
    pub fn new(vars: &'a Arena<Var>) -> VarNames<'a> {
        VarNames { vars, numbers: FxHashMap::default() }
    }

    /// The variables named.
    pub fn vars(&self) -> &'a Arena<Var> {
        self.vars
    }

    pub fn name(&mut self, var: VarId) -> String {
        let next = self.numbers.len();
        let n = *self.numbers.entry(var).or_insert(next);
        let v = &self.vars[var];
        match v.kind {
            VarKind::Existential => format!("?{n}"),
            VarKind::Bound if v.name.as_str().is_empty() => format!("t_{n}"),
            VarKind::Bound => format!("{}_{n}", v.name),
        }
    }
}

/// What a flat expression's text names: variables, functions and types.
pub trait ExpNames {
    /// A variable's name (a printer names through its [`VarNames`]).
    fn var(&mut self, var: VarId) -> String;

    /// A called function's name.
    fn func(&self, func: FnId) -> String;

    /// A variable's name or a constant's text.
    fn atom(&mut self, atom: Atom) -> String {
        match atom {
            Atom::Var(v) => self.var(v),
            Atom::Const(s) => s.to_string(),
        }
    }

    /// A coercion's target type.
    fn ty(&mut self, ty: &Type) -> String;

    /// An array literal's element type, or `None` to leave it out.
    fn array_literal_elem_ty(&mut self, elem_ty: &Type) -> Option<String> {
        Some(self.ty(elem_ty))
    }
}

/// How every printer of an IR with nested blocks (the core, memory and GPU IRs) lays
/// them out: two spaces a level; a nested block on the lines after its statement's
/// head, two levels deeper; `else` and a `while` loop's `do` on lines of their own,
/// one level deeper.
pub trait BlockLayout {
    type Block: Copy;

    /// The text printed so far.
    fn out(&mut self) -> &mut String;

    /// Prints `block`'s statements and result at `depth`, each line ended.
    fn block(&mut self, block: Self::Block, depth: usize);

    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out().push_str("  ");
        }
    }

    /// `block` on the following lines; the caller ends the line.
    fn nested(&mut self, block: Self::Block, depth: usize) {
        self.out().push('\n');
        self.block(block, depth + 2);
        // Drop the block's final newline.
        self.out().pop();
    }

    /// The branches of an `if` (or a GPU IR `version`), after its head `... then`.
    fn branches(&mut self, then_branch: Self::Block, else_branch: Self::Block, depth: usize) {
        self.nested(then_branch, depth);
        self.out().push('\n');
        self.indent(depth + 1);
        self.out().push_str("else");
        self.nested(else_branch, depth);
    }

    /// A `while` loop's condition, after its head `loop p = init `.
    fn while_cond(&mut self, cond: Self::Block, depth: usize) {
        self.out().push_str("while");
        self.nested(cond, depth);
        self.out().push('\n');
        self.indent(depth + 1);
        self.out().push_str("do");
    }
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

struct Printer<'a, A> {
    f: &'a Function,
    fn_names: &'a FxHashMap<FnId, String>,
    names: VarNames<'a>,
    annotate: A,
    out: String,
}

impl<A: Annotate> ExpNames for Printer<'_, A> {
    fn var(&mut self, var: VarId) -> String {
        self.names.name(var)
    }

    fn func(&self, func: FnId) -> String {
        self.fn_names.get(&func).cloned().unwrap_or_default()
    }

    fn ty(&mut self, ty: &Type) -> String {
        self.annotate.ty(&mut self.names, ty)
    }

    fn array_literal_elem_ty(&mut self, elem_ty: &Type) -> Option<String> {
        self.annotate.array_literal_elem_ty(&mut self.names, elem_ty)
    }
}

impl<A: Annotate> BlockLayout for Printer<'_, A> {
    type Block = BlockId;

    fn out(&mut self) -> &mut String {
        &mut self.out
    }

    fn block(&mut self, block: BlockId, depth: usize) {
        let f = self.f;
        for stmt in &f.blocks[block].stmts {
            for line in self.annotate.before_stmt(&mut self.names, stmt.var) {
                self.indent(depth);
                self.out.push_str(&line);
                self.out.push('\n');
            }
            let name = self.var(stmt.var);
            let ty = self.annotate.binding_ty(&mut self.names, stmt.var);
            self.indent(depth);
            let prefix = self.annotate.stmt_prefix(stmt.var);
            let _ = write!(self.out, "let {name}: {ty} = {prefix}");
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
}

impl<A: Annotate> Printer<'_, A> {
    fn function(&mut self, id: FnId) {
        let f = self.f;
        let keyword = if f.is_entry { "entry" } else { "def" };
        let name = self.func(id);
        let _ = write!(self.out, "{keyword} {name}");
        for &size in &f.size_params {
            let name = self.var(size);
            let _ = write!(self.out, " [{name}]");
        }
        for &param in &f.params {
            let name = self.var(param);
            let ty = self.annotate.binding_ty(&mut self.names, param);
            let _ = write!(self.out, " ({name}: {ty})");
        }
        if self.annotate.result_ty_after_body() {
            let header = std::mem::take(&mut self.out);
            self.block(f.body, 1);
            let body = std::mem::replace(&mut self.out, header);
            let ret = self.annotate.result_ty(&mut self.names, &f.ret);
            let _ = writeln!(self.out, " : {ret} =");
            self.out.push_str(&body);
        } else {
            let ret = self.annotate.result_ty(&mut self.names, &f.ret);
            let _ = writeln!(self.out, " : {ret} =");
            self.block(f.body, 1);
        }
        let after = self.annotate.after_function(&mut self.names);
        self.out.push_str(&after);
    }

    fn atoms(&mut self, atoms: &[Atom]) -> String {
        atoms.iter().map(|&a| self.atom(a)).collect::<Vec<_>>().join(" ")
    }

    fn lambda(&mut self, lambda: &Lambda, depth: usize) {
        self.out.push('\\');
        for &param in &lambda.params {
            let name = self.var(param);
            let ty = self.annotate.binding_ty(&mut self.names, param);
            let _ = write!(self.out, "({name}: {ty}) ");
        }
        let ret = self.annotate.ty(&mut self.names, &lambda.ret);
        let _ = write!(self.out, ": {ret} ->");
        self.nested(lambda.body, depth);
    }

    fn level(level: Option<weft_hir::Level>) -> String {
        level.map_or(String::new(), |l| format!("@{}", l.name()))
    }

    /// A `map`'s or `generate`'s keyword with its level and, if annotated, its index.
    fn soac_keyword(
        &mut self,
        keyword: &str,
        level: Option<weft_hir::Level>,
        exp: ExpId,
    ) -> String {
        let index = self.annotate.soac_index(exp).map_or(String::new(), |i| format!(" {i}"));
        format!("{keyword}{}{index}", Self::level(level))
    }

    #[expect(
        clippy::wildcard_enum_match_arm,
        reason = "the expressions without nested code are listed once, in flat_exp_text's exhaustive match"
    )]
    fn exp(&mut self, exp_id: ExpId, depth: usize) {
        let f = self.f;
        let exp = &f.exps[exp_id];
        match exp {
            Exp::If { cond, then_branch, else_branch } => {
                let cond = self.atom(*cond);
                let _ = write!(self.out, "if {cond} then");
                self.branches(*then_branch, *else_branch, depth);
            }
            Exp::Loop { param, init, form, body } => {
                let mut param_text = self.var(*param);
                if let Some(ty) = self.annotate.loop_param_ty(&mut self.names, *param) {
                    param_text = format!("({param_text}: {ty})");
                }
                let init = self.atom(*init);
                let _ = write!(self.out, "loop {param_text} = {init} ");
                match form {
                    LoopForm::For { index, bound } => {
                        let index = self.var(*index);
                        let bound = self.atom(*bound);
                        let _ = write!(self.out, "for {index} < {bound} do");
                    }
                    LoopForm::While { cond } => self.while_cond(*cond, depth),
                }
                self.nested(*body, depth);
            }
            Exp::Map { level, lambda, arrays } => {
                let keyword = self.soac_keyword("map", *level, exp_id);
                let arrays = self.atoms(arrays);
                let _ = write!(self.out, "{keyword} ({arrays}) ");
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
                let keyword = self.soac_keyword("generate", *level, exp_id);
                let size = self.atom(*size);
                let _ = write!(self.out, "{keyword} {size} ");
                self.lambda(lambda, depth);
            }
            Exp::ReduceByIndex { dest, lambda, neutral, indices, values } => {
                let operands = self.atoms(&[*dest, *neutral, *indices, *values]);
                let _ = write!(self.out, "reduce_by_index {operands} ");
                self.lambda(lambda, depth);
            }
            // Everything else has no nested code: `flat_exp_text` prints it.
            _ => {
                let text = flat_exp_text(exp, self).unwrap_or_default();
                self.out.push_str(&text);
            }
        }
    }
}

/// The text of an expression with no nested code, or `None` for `if`, `loop` and the
/// combinators. Every printer of an IR made of core expressions (the core printer, the
/// GPU IR's) prints them through this one function.
pub fn flat_exp_text(exp: &Exp, names: &mut dyn ExpNames) -> Option<String> {
    fn atoms(list: &[Atom], names: &mut dyn ExpNames) -> Vec<String> {
        list.iter().map(|&a| names.atom(a)).collect()
    }
    let text = match exp {
        Exp::Atom(a) => atoms(&[*a], names).remove(0),
        Exp::Size(size) => format!("size {}", size_text(size, &mut |v| names.var(v))),
        Exp::BinOp { op, ty, lhs, rhs } => {
            let a = atoms(&[*lhs, *rhs], names);
            format!("{}.{} {} {}", binop_name(*op), ty.name(), a[0], a[1])
        }
        Exp::UnOp { op, ty, operand } => {
            let name = match op {
                UnOp::Neg => "neg",
                UnOp::Not => "not",
            };
            format!("{name}.{} {}", ty.name(), atoms(&[*operand], names)[0])
        }
        Exp::Convert { from, to, operand } => {
            format!("{}.{} {}", to.name(), from.name(), atoms(&[*operand], names)[0])
        }
        Exp::Math { ty, func, args } => {
            let name = weft_hir::Builtin::Math(*ty, *func).name();
            format!("{name} {}", atoms(args, names).join(" ")).trim_end().to_owned()
        }
        Exp::Tuple(list) => format!("({})", atoms(list, names).join(", ")),
        Exp::Proj { tuple, index } => format!("{}.{index}", atoms(&[*tuple], names)[0]),
        Exp::ArrayLit { elems, elem_ty } => {
            let elems = atoms(elems, names).join(", ");
            match names.array_literal_elem_ty(elem_ty) {
                Some(elem_ty) => format!("[{elems}] : []{elem_ty}"),
                None => format!("[{elems}]"),
            }
        }
        Exp::Index { array, items } => {
            let items: Vec<String> = items
                .iter()
                .map(|item| match item {
                    IndexItem::Fix(a) => atoms(&[*a], names).remove(0),
                    IndexItem::Slice { start, end, stride } => {
                        let mut s = String::new();
                        if let Some(a) = start {
                            s.push_str(&atoms(&[*a], names)[0]);
                        }
                        s.push(':');
                        if let Some(a) = end {
                            s.push_str(&atoms(&[*a], names)[0]);
                        }
                        if let Some(a) = stride {
                            s.push(':');
                            s.push_str(&atoms(&[*a], names)[0]);
                        }
                        s
                    }
                })
                .collect();
            format!("{}[{}]", atoms(&[*array], names)[0], items.join(", "))
        }
        Exp::Dim { array, dim } => format!("dim {dim} {}", atoms(&[*array], names)[0]),
        Exp::Call { func, args } => {
            format!("call {} {}", names.func(*func), atoms(args, names).join(" "))
                .trim_end()
                .to_owned()
        }
        Exp::Scatter { dest, indices, values } => {
            format!("scatter {}", atoms(&[*dest, *indices, *values], names).join(" "))
        }
        Exp::Update { array, indices, value } => {
            let array = atoms(&[*array], names).remove(0);
            let indices = atoms(indices, names).join(", ");
            format!("{array} with [{indices}] = {}", atoms(&[*value], names)[0])
        }
        Exp::Iota { size } => format!("iota {}", atoms(&[*size], names)[0]),
        Exp::Replicate { size, value } => {
            format!("replicate {}", atoms(&[*size, *value], names).join(" "))
        }
        Exp::Zip(list) => format!("zip {}", atoms(list, names).join(" ")),
        Exp::Unzip(a) => format!("unzip {}", atoms(&[*a], names)[0]),
        Exp::Transpose(a) => format!("transpose {}", atoms(&[*a], names)[0]),
        Exp::Reverse(a) => format!("reverse {}", atoms(&[*a], names)[0]),
        Exp::Flatten(a) => format!("flatten {}", atoms(&[*a], names)[0]),
        Exp::Unflatten { rows, cols, array } => {
            format!("unflatten {}", atoms(&[*rows, *cols, *array], names).join(" "))
        }
        Exp::Split { chunk, array } => {
            format!("split {}", atoms(&[*chunk, *array], names).join(" "))
        }
        Exp::Take { count, array } => format!("take {}", atoms(&[*count, *array], names).join(" ")),
        Exp::Drop { count, array } => format!("drop {}", atoms(&[*count, *array], names).join(" ")),
        Exp::Concat(a, b) => format!("concat {}", atoms(&[*a, *b], names).join(" ")),
        Exp::Materialise { space, value } => {
            let name = match space {
                Space::Global => "to_global",
                Space::Local => "to_local",
                Space::Private => "to_private",
                Space::Inferred => "force",
            };
            format!("{name} {}", atoms(&[*value], names)[0])
        }
        Exp::Coerce { value, ty } => {
            let value = atoms(&[*value], names).remove(0);
            format!("{value} :> {}", names.ty(ty))
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
