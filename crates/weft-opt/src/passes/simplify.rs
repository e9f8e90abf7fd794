//! Simplification of the core IR (MIDDLE.md, pass 1): copy propagation, common
//! subexpression elimination, hoisting of loop- and map-invariant code, and dead code
//! removal, repeated until nothing changes.
//!
//! The property it promises (tested on every example): nothing is computed once per
//! iteration of a map, `generate`, reduction operator or `for` loop that does not
//! depend on that iteration and is safe to compute once before it, except a cheap
//! non-`i64` scalar operation that would move into an entry's host code (where it
//! would be a kernel launch of its own; see `is_device_scalar_op`).
//!
//! What it never does: move or remove an expression that may fail or diverge
//! ([`Safety`]), so every input that reports an error still reports it; move code other
//! than `i64` arithmetic out of a combinator whose level the program wrote (seed 003);
//! touch memory annotations.

use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::{Atom, BlockId, CoreSize, Exp, Function, Program, Stmt, Type, VarId, VarKind};
use weft_values::Scalar;

use crate::passes::facts::{Safety, free_vars_of_exp, use_counts};

/// How many rounds at most; each round strictly shrinks or moves code outwards, so
/// real programs settle in two or three.
const MAX_ROUNDS: usize = 16;

/// Simplifies every function of `program`.
pub fn simplify(program: &Program) -> Program {
    let mut out = program.clone();
    let ids: Vec<_> = out.functions.iter().map(|(id, _)| id).collect();
    for id in ids {
        for _ in 0..MAX_ROUNDS {
            let mut changed = propagate_copies(&mut out.functions[id]);
            changed |= eliminate_common_subexpressions(&mut out.functions[id]);
            // Hoisting and dead code removal read the other functions (is a callee
            // safe?) while this one changes: take it out of the program meanwhile (a
            // def never calls itself, so its stand-in is never read).
            let mut f = take_function(&mut out, id);
            changed |= hoist_invariant_code(&out, &mut f);
            changed |= remove_dead_code(&out, &mut f);
            out.functions[id] = f;
            if !changed {
                break;
            }
        }
    }
    out
}

/// Moves function `id` out of `program`, leaving an empty function of the same name.
fn take_function(program: &mut Program, id: weft_core::FnId) -> Function {
    let f = &program.functions[id];
    let mut blocks = la_arena::Arena::default();
    let body = blocks.alloc(weft_core::Block { stmts: Vec::new(), result: None });
    let stand_in = Function {
        name: f.name.clone(),
        def: f.def.clone(),
        is_entry: f.is_entry,
        size_params: Vec::new(),
        params: Vec::new(),
        ret: weft_core::Type::Tuple(Vec::new()),
        body,
        vars: la_arena::Arena::default(),
        exps: la_arena::Arena::default(),
        blocks,
        origins: Default::default(),
    };
    std::mem::replace(&mut program.functions[id], stand_in)
}

/// Replaces every variable bound by `let v = a` with `a` and drops the statement.
pub(crate) fn propagate_copies(f: &mut Function) -> bool {
    let mut copies: FxHashMap<VarId, Atom> = FxHashMap::default();
    for (_, block) in f.blocks.iter() {
        for stmt in &block.stmts {
            if let Exp::Atom(a) = f.exps[stmt.exp] {
                // A copy that changes the type (an existential size taking a known
                // one) stays: which value binds an existential size is positional.
                let same_type = match a {
                    Atom::Var(w) => f.vars[w].ty == f.vars[stmt.var].ty,
                    Atom::Const(_) => true,
                };
                if same_type {
                    copies.insert(stmt.var, a);
                }
            }
        }
    }
    if copies.is_empty() {
        return false;
    }
    let resolve = |mut a: Atom| {
        while let Atom::Var(v) = a {
            match copies.get(&v) {
                Some(&next) => a = next,
                None => break,
            }
        }
        a
    };
    let ids: Vec<BlockId> = f.blocks.iter().map(|(id, _)| id).collect();
    for id in ids {
        let exps = &f.exps;
        f.blocks[id].stmts.retain(|s| !copies.contains_key(&s.var) || !is_copy(&exps[s.exp]));
        if let Some(result) = f.blocks[id].result {
            f.blocks[id].result = Some(resolve(result));
        }
    }
    let mut size_of = |v: &VarId| -> Option<CoreSize> {
        copies.get(v).map(|_| match resolve(Atom::Var(*v)) {
            Atom::Var(w) => CoreSize::var(w),
            Atom::Const(Scalar::I64(n)) => CoreSize::constant(n),
            // Only `i64` variables occur in sizes, and a copy has its source's type.
            Atom::Const(_) => CoreSize::var(*v),
        })
    };
    for (_, exp) in f.exps.iter_mut() {
        exp.operands_mut(&mut |a| *a = resolve(*a));
        if let Exp::Size(size) = exp {
            *size = size.substitute(&mut size_of);
        }
        exp.types_mut(&mut |ty| substitute_type(ty, &mut size_of));
    }
    for (_, var) in f.vars.iter_mut() {
        substitute_type(&mut var.ty, &mut size_of);
    }
    substitute_type(&mut f.ret, &mut size_of);
    true
}

fn is_copy(exp: &Exp) -> bool {
    matches!(exp, Exp::Atom(_))
}

fn substitute_type(ty: &mut Type, f: &mut impl FnMut(&VarId) -> Option<CoreSize>) {
    match ty {
        Type::Scalar(_) => {}
        Type::Array { size, elem } => {
            *size = size.substitute(f);
            substitute_type(elem, f);
        }
        Type::Tuple(elems) => elems.iter_mut().for_each(|e| substitute_type(e, f)),
    }
}

/// Replaces an expression computed earlier in an enclosing scope by a copy of that
/// result (removed by the next copy propagation).
pub(crate) fn eliminate_common_subexpressions(f: &mut Function) -> bool {
    let mut scopes: Vec<FxHashMap<String, VarId>> = Vec::new();
    let mut changed = false;
    cse_block(f, f.body, &mut scopes, &mut changed);
    changed
}

/// Expressions worth sharing: no nested code, and no fresh array that an in-place
/// operation could later consume (`scatter` writes into its destination).
fn shareable(exp: &Exp) -> bool {
    !exp.has_nested_code()
        && !matches!(
            exp,
            Exp::Atom(_)
                | Exp::ArrayLit { .. }
                | Exp::Iota { .. }
                | Exp::Replicate { .. }
                | Exp::Concat(..)
                | Exp::Scatter { .. }
                | Exp::Update { .. }
                | Exp::Materialise { .. }
        )
}

fn cse_block(
    f: &mut Function,
    block: BlockId,
    scopes: &mut Vec<FxHashMap<String, VarId>>,
    changed: &mut bool,
) {
    scopes.push(FxHashMap::default());
    let stmts = f.blocks[block].stmts.clone();
    for stmt in stmts {
        let exp = f.exps[stmt.exp].clone();
        if shareable(&exp) {
            // The key is the expression's structure: operator, operands (variable ids)
            // and constants; equal keys compute equal values of equal types.
            let key = format!("{exp:?}");
            let earlier = scopes.iter().rev().find_map(|scope| scope.get(&key).copied());
            match earlier {
                Some(var) => {
                    f.exps[stmt.exp] = Exp::Atom(Atom::Var(var));
                    *changed = true;
                }
                None => {
                    scopes.last_mut().map(|scope| scope.insert(key, stmt.var));
                }
            }
        }
        for nested in exp.nested_blocks() {
            cse_block(f, nested, scopes, changed);
        }
    }
    scopes.pop();
}

/// Moves statements out of the bodies of unannotated combinators and `for` loops when
/// they read nothing bound inside and are safe to compute once before.
pub(crate) fn hoist_invariant_code(program: &Program, f: &mut Function) -> bool {
    let mut safety = Safety::new(program);
    let mut changed = false;
    let host = if f.is_entry { Where::Host } else { Where::Device };
    hoist_into(f, f.body, host, &mut safety, &mut changed);
    changed
}

/// Where a block runs: an entry's own code runs on the host, the functions of its
/// combinators (and every def, called from them) on the device.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Where {
    Host,
    Device,
}

fn hoist_into(
    f: &mut Function,
    block: BlockId,
    at: Where,
    safety: &mut Safety<'_>,
    changed: &mut bool,
) {
    let stmts = std::mem::take(&mut f.blocks[block].stmts);
    let mut out = Vec::with_capacity(stmts.len());
    for stmt in stmts {
        let exp = f.exps[stmt.exp].clone();
        let combinator = exp.combinator().is_some();
        let inner = if combinator { Where::Device } else { at };
        for nested in exp.nested_blocks() {
            hoist_into(f, nested, inner, safety, changed);
        }
        if let Some((body, hoist)) = hoistable_body(&exp) {
            // Out of a combinator into host code, a scalar computation the host plan
            // cannot do itself (a float conversion, `exp x`) would become a kernel of
            // one work-item: a launch to save one operation per element.
            let to_host = at == Where::Host && combinator;
            let moved = take_invariant(f, body, &exp.binders(), safety, to_host, hoist);
            *changed |= !moved.is_empty();
            out.extend(moved);
        }
        out.push(stmt);
    }
    f.blocks[block].stmts = out;
}

/// A computation on scalars that is cheaper to repeat per element than to launch: an
/// operator, conversion or math function, or a call of a def made of only those (the
/// prelude's `f32.i64`), with a result not of the host's `i64` (sizes and indices, which
/// the host plan computes itself).
fn is_device_scalar_op(program: &Program, f: &Function, stmt: &Stmt) -> bool {
    let cheap = match &f.exps[stmt.exp] {
        Exp::Call { func, .. } => {
            let callee = &program.functions[*func];
            callee
                .blocks
                .iter()
                .all(|(_, b)| b.stmts.iter().all(|s| is_scalar_op(&callee.exps[s.exp])))
        }
        exp => is_scalar_op(exp),
    };
    cheap && !is_size_op(f, stmt)
}

/// `i64` arithmetic: a size or index the host plan computes itself.
fn is_size_op(f: &Function, stmt: &Stmt) -> bool {
    is_scalar_op(&f.exps[stmt.exp])
        && matches!(f.vars[stmt.var].ty, weft_core::Type::Scalar(weft_hir::ScalarTy::I64))
}

/// `iota n` or `replicate n x` of a scalar: an array the back end computes from the
/// index where it is read (no code of its own), so where it is bound does not matter
/// to the strategy; moving it out of a written level keeps the compiled code the same
/// as the unannotated program's, where it leaves the combinator too.
fn is_index_array(f: &Function, stmt: &Stmt) -> bool {
    match &f.exps[stmt.exp] {
        Exp::Iota { .. } => true,
        Exp::Replicate { value, .. } => match value {
            weft_core::Atom::Var(v) => f.vars[*v].ty.as_scalar().is_some(),
            weft_core::Atom::Const(_) => true,
        },
        _ => false,
    }
}

fn is_scalar_op(exp: &Exp) -> bool {
    matches!(
        exp,
        Exp::Atom(_)
            | Exp::BinOp { .. }
            | Exp::UnOp { .. }
            | Exp::Convert { .. }
            | Exp::Math { .. }
            | Exp::Tuple(_)
            | Exp::Proj { .. }
    )
}

/// The body code may be hoisted out of, and what may leave it: a combinator's function or a
/// `for` loop's body (a `while` loop's body may run zero times after a condition that
/// guards it, and is left alone).
fn hoistable_body(exp: &Exp) -> Option<(BlockId, Hoist)> {
    if let Some((level, lambda)) = exp.combinator() {
        let hoist = if level.is_some() { Hoist::SizesOnly } else { Hoist::Any };
        return Some((lambda.body, hoist));
    }
    match exp {
        Exp::Loop { form: weft_core::LoopForm::For { .. }, body, .. } => Some((*body, Hoist::Any)),
        _ => None,
    }
}

/// What may leave a body: any invariant code, or out of a combinator whose level the
/// program wrote only `i64` arithmetic (a size such as `t * t`) and index arrays
/// ([`is_index_array`]): moving a reduction out
/// of a `map@grid` would change the strategy the program wrote (seed 003), moving a
/// size computation changes nothing but where an integer is multiplied.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hoist {
    Any,
    SizesOnly,
}

fn take_invariant(
    f: &mut Function,
    body: BlockId,
    binders: &[VarId],
    safety: &mut Safety<'_>,
    to_host: bool,
    hoist: Hoist,
) -> Vec<Stmt> {
    let mut inside: FxHashSet<VarId> = binders.iter().copied().collect();
    inside.extend(f.blocks[body].stmts.iter().map(|s| s.var));
    let mut moved = Vec::new();
    let mut kept = Vec::new();
    for stmt in f.blocks[body].stmts.clone() {
        let exp = &f.exps[stmt.exp];
        let mut reads = free_vars_of_exp(f, exp);
        weft_core::type_vars(&f.vars[stmt.var].ty, &mut |v| {
            if v != stmt.var {
                reads.insert(v);
            }
        });
        let existential = reads.iter().any(|v| f.vars[*v].kind == VarKind::Existential);
        let invariant = reads.iter().all(|v| !inside.contains(v));
        let launch_for_nothing = to_host && is_device_scalar_op(safety.program(), f, &stmt);
        let allowed = match hoist {
            Hoist::Any => !launch_for_nothing,
            Hoist::SizesOnly => is_size_op(f, &stmt) || is_index_array(f, &stmt),
        };
        if invariant && !existential && allowed && safety.exp_is_safe(f, exp) {
            inside.remove(&stmt.var);
            moved.push(stmt);
        } else {
            kept.push(stmt);
        }
    }
    f.blocks[body].stmts = kept;
    moved
}

/// Removes statements whose value is never read and whose evaluation is safe.
pub(crate) fn remove_dead_code(program: &Program, f: &mut Function) -> bool {
    let mut safety = Safety::new(program);
    let mut changed = false;
    loop {
        let counts = use_counts(f);
        let mut removed = false;
        let ids: Vec<BlockId> = reachable_blocks(f);
        for id in ids {
            let stmts = f.blocks[id].stmts.clone();
            let before = stmts.len();
            let kept: Vec<Stmt> = stmts
                .into_iter()
                .filter(|s| {
                    counts.get(&s.var).copied().unwrap_or(0) > 0
                        || !safety.exp_is_safe(f, &f.exps[s.exp])
                })
                .collect();
            removed |= kept.len() != before;
            f.blocks[id].stmts = kept;
        }
        if !removed {
            return changed;
        }
        changed = true;
    }
}

/// The blocks reachable from the function's body.
pub(crate) fn reachable_blocks(f: &Function) -> Vec<BlockId> {
    let mut out = vec![f.body];
    let mut i = 0;
    while i < out.len() {
        for stmt in &f.blocks[out[i]].stmts {
            out.extend(f.exps[stmt.exp].nested_blocks());
        }
        i += 1;
    }
    out
}
