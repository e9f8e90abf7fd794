//! Segmented reductions of few, long segments (a strategy rule of MIDDLE.md's pass 4,
//! GPU IR to GPU IR).
//!
//! The fully flattened version of `map (\row -> reduce op ne (...)) rows` is a chosen
//! grid `SegRed` over `(i < h, j < n)`, and flattening picks it when the segments are
//! few (`h` below the thresholds of the other versions). Written back as a `map` of a
//! `reduce`, the code generator runs it as one work-item per segment: 16 work-items for
//! a layer of 16 hidden units over 2^21 inputs, 373 ms on the H100. This rule splits
//! each segment into `K` chunks:
//!
//! ```text
//! partials: [h][K]t = segred@grid (i < h, c < K, t < L)
//!                       let j = c + t*K in if j < n then BODY(i, j) else ne
//! result:   [h]t    = segmap@group (i < h)
//!                       segred@thread (c < K) partials[i, c]
//! ```
//!
//! Chunk `c` takes the elements `c, c + K, c + 2K, ...` of its segment, so neighbouring
//! work-items (neighbouring chunks) read neighbouring elements; where the body reads a
//! transposed matrix (the segment index in the contiguous dimension), the space is
//! `(c < K, i < h, t < L)` instead, so that neighbouring segments are neighbours, and
//! `partials` is `[K][h]`. The order of combination changes, so the rule applies to
//! commutative operators only. `K` is a tile parameter computed on the host:
//! about [`WORK_ITEMS`] work-items in all, at most [`MAX_CHUNKS`] chunks per segment and
//! at least [`MIN_CHUNK`] elements per chunk. The second stage is a work-group per
//! segment when `K` is at least [`GROUP_FOLD_MIN_CHUNKS`] (the host picks), else a
//! work-item per segment: with many short segments `K` is 1 or 2 and the split costs
//! one small extra launch.

use rustc_hash::{FxHashMap, FxHashSet};
use weft_core::{Atom, BinOp, IndexItem, Type, Var, VarId, VarKind};
use weft_hir::{Name, ScalarTy};
use weft_values::{MathFn, Scalar};

use crate::ir::{
    Block, BlockId, Exp, GpuFunction, GpuProgram, SegBinOp, SegKind, SegLevel, SegOp, Stmt,
};
use crate::passes::copy::Copier;
use crate::passes::host::{atom_size, rewrite_host_stmts};

/// Work-items the first stage aims for: about as many as a large GPU keeps resident
/// (an H100 270,336), since each has one or two loads in flight at a time and the
/// memory system needs megabytes in flight to reach its bandwidth (16,384 work-items
/// read backprop's layer at 150 GB/s on the H200).
pub const WORK_ITEMS: i64 = 262_144;
/// Most chunks per segment: the second stage's work-group folds them, each work-item
/// MAX_CHUNKS / 256 of them in order.
pub const MAX_CHUNKS: i64 = 16_384;
/// Fewest chunks per segment for which the second stage takes a work-group per segment
/// (fewer: a work-item per segment folds them).
pub const GROUP_FOLD_MIN_CHUNKS: i64 = 64;
/// Fewest elements per chunk worth a work-item of its own.
pub const MIN_CHUNK: i64 = 64;

/// Splits every chosen two-dimensional grid `SegRed` with one commutative operator
/// (see the module documentation).
pub fn split_segmented_reductions(program: &GpuProgram) -> GpuProgram {
    let mut out = program.clone();
    let ids: Vec<_> = out.functions.iter().map(|(id, _)| id).collect();
    for id in ids {
        let f = &mut out.functions[id];
        let body = f.body;
        rewrite_host_stmts(f, body, &mut |f, stmt, out| match f.exps[stmt.exp].clone() {
            Exp::Seg(seg) if qualifies(&seg, &stmt) => split(f, &stmt, &seg, out),
            _ => out.push(stmt),
        });
    }
    out
}

fn qualifies(seg: &SegOp, stmt: &Stmt) -> bool {
    let SegKind::Red(ops) = &seg.kind else { return false };
    seg.level == SegLevel::Grid
        && !seg.pinned
        && seg.space.len() == 2
        && stmt.vars.len() == 1
        && matches!(&ops[..], [op] if op.commutative && op.arity() == 1)
}

fn split(f: &mut GpuFunction, stmt: &Stmt, seg: &SegOp, out: &mut Vec<Stmt>) {
    let SegKind::Red(ops) = &seg.kind else { return };
    let op: &SegBinOp = &ops[0];
    let [(i, h), (j, n)] = seg.space[..] else { return };
    let result = stmt.vars[0];
    let Type::Array { elem, .. } = f.vars[result].ty.clone() else { return };
    let origins = seg.origins.clone();
    let mut w = Writer { f, origins: &origins };

    // K = max(1, min(WORK_ITEMS / max(h, 1), MAX_CHUNKS, ceil(n / MIN_CHUNK)));
    // L = ceil(n / K).
    let int = |v: i64| Atom::Const(Scalar::I64(v));
    let h1 = w.math(out, MathFn::Max, h, int(1));
    let per_segment = w.bin(out, BinOp::Div, int(WORK_ITEMS), h1);
    let capped = w.math(out, MathFn::Min, per_segment, int(MAX_CHUNKS));
    let up = w.bin(out, BinOp::Add, n, int(MIN_CHUNK - 1));
    let worth = w.bin(out, BinOp::Div, up, int(MIN_CHUNK));
    let fewer = w.math(out, MathFn::Min, capped, worth);
    let chunks = w.math(out, MathFn::Max, fewer, int(1));
    let last = w.bin(out, BinOp::Sub, chunks, int(1));
    let up = w.bin(out, BinOp::Add, n, last);
    let per_chunk = w.bin(out, BinOp::Div, up, chunks);

    // The first stage's body: the element `j = c + t*K` of the segment, or the neutral
    // element past its end. The original body becomes the branch that computes it.
    let i64_ty = Type::Scalar(ScalarTy::I64);
    let c = w.var("chunk", i64_ty.clone());
    let t = w.var("step", i64_ty.clone());
    let mut body = Vec::new();
    let stride = w.bin(&mut body, BinOp::Mul, Atom::Var(t), chunks);
    w.bind(&mut body, j, Exp::Basic(binop(BinOp::Add, Atom::Var(c), stride)));
    let inside = w.var("inside", Type::Scalar(ScalarTy::Bool));
    w.bind(&mut body, inside, Exp::Basic(binop(BinOp::Lt, Atom::Var(j), n)));
    let past_end = w.f.blocks.alloc(Block { stmts: Vec::new(), results: op.neutral.clone() });
    let element = w.var("element", (*elem).clone());
    let chosen = Exp::If { cond: Atom::Var(inside), then_branch: seg.body, else_branch: past_end };
    w.bind(&mut body, element, chosen);
    let body = w.f.blocks.alloc(Block { stmts: body, results: vec![Atom::Var(element)] });
    // Neighbouring work-items should read neighbouring elements: by default they take
    // neighbouring chunks of one segment; when the body reads its matrices with the
    // segment index in the contiguous dimension (a transposed matrix, backprop's
    // weights `w[j][i]`), neighbouring segments of one chunk instead.
    let segments_inner = segment_index_is_contiguous(w.f, seg.body, i, j);
    let (outer, inner) = if segments_inner { ((c, chunks), (i, h)) } else { ((i, h), (c, chunks)) };
    let partials_ty =
        Type::array(atom_size(outer.1), Type::array(atom_size(inner.1), (*elem).clone()));
    let partials = w.var("partials", partials_ty);
    let first = SegOp {
        level: SegLevel::Grid,
        pinned: false,
        space: vec![outer, inner, (t, per_chunk)],
        kind: SegKind::Red(vec![op.clone()]),
        body,
        origins: origins.clone(),
    };
    w.bind(out, partials, Exp::Seg(first));

    // The second stage: each segment's chunks. Many chunks: one work-group per
    // segment, its work-items sharing them (a work-item folding up to MAX_CHUNKS in
    // order would take longer than the first stage); few (many short segments): one
    // work-item per segment. `K` is known on the host, so the host picks.
    let many = w.var("many_chunks", Type::Scalar(ScalarTy::Bool));
    w.bind(out, many, Exp::Basic(binop(BinOp::Ge, chunks, int(GROUP_FOLD_MIN_CHUNKS))));
    let result_ty = w.f.vars[result].ty.clone();
    let mut branches = Vec::new();
    for by_group in [true, false] {
        let mut stmts = Vec::new();
        let reduced = w.var("reduced", result_ty.clone());
        let layout = Partials { var: partials, segments_inner, elem: (*elem).clone() };
        let second = second_stage(&mut w, op, &layout, h, chunks, by_group);
        w.bind(&mut stmts, reduced, Exp::Seg(second));
        branches.push(w.f.blocks.alloc(Block { stmts, results: vec![Atom::Var(reduced)] }));
    }
    let chosen =
        Exp::If { cond: Atom::Var(many), then_branch: branches[0], else_branch: branches[1] };
    w.bind(out, result, chosen);
}

/// The first stage's result: `[h][K]` of `elem`, or `[K][h]` when `segments_inner`.
struct Partials {
    var: VarId,
    segments_inner: bool,
    elem: Type,
}

/// The second stage over `partials` (`[h][K]`, or `[K][h]` when `segments_inner`):
/// `segmap@group (i < h) (segred@thread (c < K) partials[i, c])` when `by_group`, else
/// `segred@grid (i < h, c < K) partials[i, c]`; with a copy of the operator (every
/// SegOp binds its own variables).
fn second_stage(
    w: &mut Writer<'_>,
    op: &SegBinOp,
    partials: &Partials,
    h: Atom,
    chunks: Atom,
    by_group: bool,
) -> SegOp {
    let i64_ty = Type::Scalar(ScalarTy::I64);
    let Partials { var: partials, segments_inner, ref elem } = *partials;
    let elem = elem.clone();
    let (i2, c2) = (w.var("i", i64_ty.clone()), w.var("chunk", i64_ty));
    let mut body = Vec::new();
    let partial = w.var("partial", elem.clone());
    let (row, column) = if segments_inner { (c2, i2) } else { (i2, c2) };
    let index = weft_core::Exp::Index {
        array: Atom::Var(partials),
        items: vec![IndexItem::Fix(Atom::Var(row)), IndexItem::Fix(Atom::Var(column))],
    };
    w.bind(&mut body, partial, Exp::Basic(index));
    let body = w.f.blocks.alloc(Block { stmts: body, results: vec![Atom::Var(partial)] });
    let mut copier = Copier { subst: FxHashMap::default() };
    let lambda = copier.lambda(w.f, &op.lambda);
    let op = SegBinOp { lambda, neutral: op.neutral.clone(), commutative: true };
    let origins = w.origins.to_vec();
    if !by_group {
        return SegOp {
            level: SegLevel::Grid,
            pinned: false,
            space: vec![(i2, h), (c2, chunks)],
            kind: SegKind::Red(vec![op]),
            body,
            origins,
        };
    }
    let fold = SegOp {
        level: SegLevel::Thread,
        pinned: false,
        space: vec![(c2, chunks)],
        kind: SegKind::Red(vec![op]),
        body,
        origins: origins.clone(),
    };
    let folded = w.var("segment", elem);
    let mut group_body = Vec::new();
    w.bind(&mut group_body, folded, Exp::Seg(fold));
    let group_body =
        w.f.blocks.alloc(Block { stmts: group_body, results: vec![Atom::Var(folded)] });
    SegOp {
        level: SegLevel::Group,
        pinned: false,
        space: vec![(i2, h)],
        kind: SegKind::Map,
        body: group_body,
        origins,
    }
}

/// Whether the body's element reads of matrices (`X[a, b]`, bound outside) have the
/// segment index `i` in their contiguous dimension more often than the element index
/// `j`: the last dimension of a row-major matrix, the first of a transposed one.
fn segment_index_is_contiguous(f: &GpuFunction, body: BlockId, i: VarId, j: VarId) -> bool {
    let transposed: FxHashSet<VarId> = f
        .blocks
        .iter()
        .flat_map(|(_, block)| &block.stmts)
        .filter(|stmt| matches!(f.exps[stmt.exp], Exp::Basic(weft_core::Exp::Transpose(_))))
        .flat_map(|stmt| stmt.vars.iter().copied())
        .collect();
    let (mut by_segment, mut by_element) = (0, 0);
    for stmt in &f.blocks[body].stmts {
        let Exp::Basic(weft_core::Exp::Index { array: Atom::Var(array), items }) =
            &f.exps[stmt.exp]
        else {
            continue;
        };
        let [IndexItem::Fix(first), IndexItem::Fix(second)] = items[..] else { continue };
        let contiguous = if transposed.contains(array) { first } else { second };
        if contiguous == Atom::Var(i) {
            by_segment += 1;
        } else if contiguous == Atom::Var(j) {
            by_element += 1;
        }
    }
    by_segment > by_element
}

/// `lhs op rhs` on `i64` operands.
fn binop(op: BinOp, lhs: Atom, rhs: Atom) -> weft_core::Exp {
    weft_core::Exp::BinOp { op, ty: ScalarTy::I64, lhs, rhs }
}

/// Binds new statements of one function, each with the rewritten SegOp's origins.
struct Writer<'a> {
    f: &'a mut GpuFunction,
    origins: &'a [weft_core::Origin],
}

impl Writer<'_> {
    fn var(&mut self, name: &str, ty: Type) -> VarId {
        self.f.vars.alloc(Var { name: Name::new(name), ty, kind: VarKind::Bound })
    }

    fn bind(&mut self, out: &mut Vec<Stmt>, var: VarId, exp: Exp) {
        let id = self.f.exps.alloc(exp);
        if let Some(origin) = self.origins.first() {
            self.f.origins.insert(id, origin.clone());
        }
        out.push(Stmt { vars: vec![var], exp: id });
    }

    /// A new `i64` variable bound to `lhs op rhs`.
    fn bin(&mut self, out: &mut Vec<Stmt>, op: BinOp, lhs: Atom, rhs: Atom) -> Atom {
        let var = self.var("t", Type::Scalar(ScalarTy::I64));
        self.bind(out, var, Exp::Basic(binop(op, lhs, rhs)));
        Atom::Var(var)
    }

    /// A new `i64` variable bound to `func(a, b)`.
    fn math(&mut self, out: &mut Vec<Stmt>, func: MathFn, a: Atom, b: Atom) -> Atom {
        let var = self.var("t", Type::Scalar(ScalarTy::I64));
        let exp = weft_core::Exp::Math { ty: ScalarTy::I64, func, args: vec![a, b] };
        self.bind(out, var, Exp::Basic(exp));
        Atom::Var(var)
    }
}
