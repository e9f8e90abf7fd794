//! The GPU IR's printer (`weft dump --ir gpu`, snapshots).
//!
//! Variables print as in the core printer (`name_N` numbered in order of first
//! appearance, through [`weft_core::VarNames`]); flat expressions print through the
//! core's [`weft_core::flat_exp_text`]. The GPU IR's own nodes (segmented operations,
//! versions, blocks with several results) print here.
//!
//! ```text
//! entry row_sums [n_0] [m_1] (a_2: [n_0][m_1]f32) : [n_0]f32 =
//!   let t_3: [n_0]f32 = segred@grid (i_4 < n_0, i_5 < m_1) [chosen]
//!       op (commutative) 0.0f32 \(x_6: f32) (y_7: f32) -> ...
//!       body ->
//!         let x_8: f32 = a_2[i_4, i_5]
//!         in x_8
//!   in t_3
//! ```

use std::fmt::Write as _;

use rustc_hash::FxHashMap;
use weft_core::{Atom, BlockLayout, ExpNames, FnId, Type, VarId, VarNames};

use crate::ir::{
    BlockId, Exp, GpuFunction, GpuProgram, Lambda, LoopForm, SegBinOp, SegKind, SeqSoac, Stmt,
};

/// A decoration of the GPU IR's printout (weft-mem's memory, `pretty_gpu_mem`): text in
/// place of a binding's type, and lines before a statement.
pub trait GpuAnnotate {
    /// What follows `name: ` for a variable; `plain` is its type as printed without
    /// decoration.
    fn binding_ty(&mut self, names: &mut VarNames<'_>, var: VarId, plain: String) -> String {
        let _ = (names, var);
        plain
    }

    /// Lines printed (indented) before the statement.
    fn before_stmt(&mut self, names: &mut VarNames<'_>, stmt: &Stmt) -> Vec<String> {
        let _ = (names, stmt);
        Vec::new()
    }

    /// Lines printed (indented) after the function's body.
    fn after_function(&mut self, names: &mut VarNames<'_>) -> Vec<String> {
        let _ = names;
        Vec::new()
    }
}

struct Plain;

impl GpuAnnotate for Plain {}

/// The whole program: its thresholds, then its functions in core order.
pub fn pretty_gpu(program: &GpuProgram) -> String {
    pretty_gpu_annotated(program, &mut |_| Box::new(Plain))
}

/// [`pretty_gpu`] with each function decorated by `annotate(function)` (which may
/// borrow facts about the program that live as long as `'facts`).
pub fn pretty_gpu_annotated<'facts>(
    program: &GpuProgram,
    annotate: &mut dyn FnMut(FnId) -> Box<dyn GpuAnnotate + 'facts>,
) -> String {
    let names: FxHashMap<FnId, String> =
        program.functions.iter().map(|(id, f)| (id, f.name.to_string())).collect();
    let mut out = String::new();
    for (_, threshold) in program.thresholds.iter() {
        let _ = writeln!(out, "threshold {} = {}", threshold.name, threshold.default);
    }
    for (idx, (id, function)) in program.functions.iter().enumerate() {
        if idx > 0 || !program.thresholds.is_empty() {
            out.push('\n');
        }
        let mut p = Printer {
            f: function,
            program,
            names: &names,
            var_names: VarNames::new(&function.vars),
            out: String::new(),
            annotate: annotate(id),
        };
        p.function();
        out.push_str(&p.out);
    }
    out
}

struct Printer<'a> {
    f: &'a GpuFunction,
    program: &'a GpuProgram,
    names: &'a FxHashMap<FnId, String>,
    var_names: VarNames<'a>,
    out: String,
    annotate: Box<dyn GpuAnnotate + 'a>,
}

impl ExpNames for Printer<'_> {
    fn var(&mut self, var: VarId) -> String {
        self.var_names.name(var)
    }

    fn func(&self, func: FnId) -> String {
        self.names.get(&func).cloned().unwrap_or_default()
    }

    fn ty(&mut self, ty: &Type) -> String {
        weft_core::type_text(ty, &mut |v| self.var_names.name(v))
    }
}

impl BlockLayout for Printer<'_> {
    type Block = BlockId;

    fn out(&mut self) -> &mut String {
        &mut self.out
    }

    fn block(&mut self, block: BlockId, depth: usize) {
        let f = self.f;
        for stmt in &f.blocks[block].stmts {
            for line in self.annotate.before_stmt(&mut self.var_names, stmt) {
                self.indent(depth);
                let _ = writeln!(self.out, "{line}");
            }
            self.indent(depth);
            let pattern: Vec<String> = stmt
                .vars
                .iter()
                .map(|&v| {
                    let name = self.var(v);
                    let ty = self.binding_ty(v);
                    format!("{name}: {ty}")
                })
                .collect();
            let _ = write!(self.out, "let {} = ", pattern.join(", "));
            self.exp(&f.exps[stmt.exp], depth);
            self.out.push('\n');
        }
        self.indent(depth);
        let results = self.atoms(&f.blocks[block].results);
        let _ = writeln!(self.out, "in {results}");
    }
}

impl Printer<'_> {
    fn function(&mut self) {
        let f = self.f;
        let keyword = if f.is_entry { "entry" } else { "def" };
        let _ = write!(self.out, "{keyword} {}", f.name);
        for &size in &f.size_params {
            let name = self.var(size);
            let _ = write!(self.out, " [{name}]");
        }
        for &param in &f.params {
            let name = self.var(param);
            let ty = self.binding_ty(param);
            let _ = write!(self.out, " ({name}: {ty})");
        }
        let ret = self.ty(&f.ret);
        let _ = writeln!(self.out, " : {ret} =");
        self.block(f.body, 1);
        for line in self.annotate.after_function(&mut self.var_names) {
            let _ = writeln!(self.out, "  {line}");
        }
    }

    fn binding_ty(&mut self, var: VarId) -> String {
        let f = self.f;
        let plain = self.ty(&f.vars[var].ty);
        self.annotate.binding_ty(&mut self.var_names, var, plain)
    }

    fn atoms(&mut self, atoms: &[Atom]) -> String {
        atoms.iter().map(|&a| self.atom(a)).collect::<Vec<_>>().join(", ")
    }

    fn lambda(&mut self, lambda: &Lambda, depth: usize) {
        self.out.push('\\');
        for &param in &lambda.params {
            let name = self.var(param);
            let ty = self.binding_ty(param);
            let _ = write!(self.out, "({name}: {ty}) ");
        }
        self.out.push_str("->");
        self.nested(lambda.body, depth);
    }

    fn operator(&mut self, op: &SegBinOp, depth: usize) {
        self.out.push('\n');
        self.indent(depth + 1);
        let neutral = self.atoms(&op.neutral);
        let commutative = if op.commutative { " (commutative)" } else { "" };
        let _ = write!(self.out, "op{commutative} {neutral} ");
        self.lambda(&op.lambda, depth + 1);
    }

    fn exp(&mut self, exp: &Exp, depth: usize) {
        match exp {
            Exp::Basic(exp) => {
                let text = weft_core::flat_exp_text(exp, self);
                self.out.push_str(
                    &text.unwrap_or_else(|| "<nested code in a basic expression>".into()),
                );
            }
            Exp::Manifest { array } => {
                let array = self.atom(*array);
                let _ = write!(self.out, "manifest (1, 0) {array}");
            }
            Exp::If { cond, then_branch, else_branch } => {
                let cond = self.atom(*cond);
                let _ = write!(self.out, "if {cond} then");
                self.branches(*then_branch, *else_branch, depth);
            }
            Exp::Version { size, threshold, then_branch, else_branch } => {
                let size = weft_core::size_text(size, &mut |v| self.var_names.name(v));
                let name = self.program.thresholds[*threshold].name.clone();
                let _ = write!(self.out, "version {size} >= threshold {name} then");
                self.branches(*then_branch, *else_branch, depth);
            }
            Exp::Loop { param, init, form, body } => {
                let param = self.var(*param);
                let init = self.atom(*init);
                let _ = write!(self.out, "loop {param} = {init} ");
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
            Exp::Seq(soac) => match soac {
                SeqSoac::Map { lambda, arrays } => {
                    let arrays = self.atoms(arrays);
                    let _ = write!(self.out, "map@seq ({arrays}) ");
                    self.lambda(lambda, depth);
                }
                SeqSoac::Generate { size, lambda } => {
                    let size = self.atom(*size);
                    let _ = write!(self.out, "generate@seq {size} ");
                    self.lambda(lambda, depth);
                }
                SeqSoac::Reduce { lambda, neutral, array }
                | SeqSoac::Scan { lambda, neutral, array } => {
                    let name =
                        if matches!(soac, SeqSoac::Reduce { .. }) { "reduce" } else { "scan" };
                    let neutral = self.atom(*neutral);
                    let array = self.atom(*array);
                    let _ = write!(self.out, "{name}@seq {neutral} {array} ");
                    self.lambda(lambda, depth);
                }
                SeqSoac::Hist { dest, lambda, neutral, indices, values } => {
                    let operands = self.atoms(&[*dest, *neutral, *indices, *values]);
                    let _ = write!(self.out, "hist@seq ({operands}) ");
                    self.lambda(lambda, depth);
                }
            },
            Exp::Seg(seg) => {
                let name = match &seg.kind {
                    SegKind::Map => "segmap",
                    SegKind::Red(_) => "segred",
                    SegKind::Scan(_) => "segscan",
                    SegKind::Hist { .. } => "seghist",
                    SegKind::Scatter { .. } => "segscatter",
                };
                let space: Vec<String> = seg
                    .space
                    .iter()
                    .map(|&(index, bound)| format!("{} < {}", self.var(index), self.atom(bound)))
                    .collect();
                let how = if seg.pinned { "written" } else { "chosen" };
                let _ =
                    write!(self.out, "{name}@{} ({}) [{how}]", seg.level.name(), space.join(", "));
                match &seg.kind {
                    SegKind::Map => {}
                    SegKind::Red(ops) | SegKind::Scan(ops) => {
                        for op in ops {
                            self.operator(op, depth);
                        }
                    }
                    SegKind::Hist { dest, op } => {
                        let dest = self.atom(*dest);
                        let _ = write!(self.out, " into {dest}");
                        self.operator(op, depth);
                    }
                    SegKind::Scatter { dest } => {
                        let dest = self.atom(*dest);
                        let _ = write!(self.out, " into {dest}");
                    }
                }
                self.out.push('\n');
                self.indent(depth + 1);
                self.out.push_str("body ->");
                self.nested(seg.body, depth);
            }
        }
    }
}
