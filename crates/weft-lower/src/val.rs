//! Staged values: what a core variable is at the host level ([`HVal`]) and inside a
//! kernel ([`KVal`]).
//!
//! Arrays are memory (a buffer and an LMAD), zips of arrays (an array of tuples is a
//! tuple of arrays), or *pull arrays*: a recipe that computes any element on demand.
//! Pull arrays are how producers fuse into consumers (FCL's pull arrays, DPIA's
//! functional representation): a `map` at the host level stays a recipe until a
//! consumer needs memory, and its body is then emitted inside the consumer's kernel.

use std::rc::Rc;

use rustc_hash::FxHashMap;
use weft_core::{FnId, Lambda, Type, VarId};
use weft_plan::{Elem, Expr, Var};

use crate::LowerError;
use crate::arr::{Mem, View, view_shape};
use crate::imp::CExpr;
use crate::kernel::Kb;

pub(crate) type Res<T> = Result<T, LowerError>;

/// The host-level environment of one function activation.
pub(crate) type HEnv = FxHashMap<VarId, HVal>;

#[derive(Clone, Debug)]
pub(crate) enum HVal {
    Scalar(HScalar),
    Arr(HArr),
    Tuple(Vec<HVal>),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum HScalar {
    /// Known on the host: `i64`/`bool` arithmetic over host variables, or a host
    /// variable of any type.
    Host(Expr, Elem),
    /// In element 0 of a one-element device buffer.
    Device(Var, Elem),
}

#[derive(Clone, Debug)]
pub(crate) enum HArr {
    Mem(Mem<Expr, Var>),
    Zip(Vec<HArr>),
    Pull(Rc<HPull>),
}

/// A host-level pull array: a source and the views applied to it since.
#[derive(Debug)]
pub(crate) struct HPull {
    pub(crate) base_shape: Vec<Expr>,
    pub(crate) shape: Vec<Expr>,
    /// The element type at full depth (a scalar or a tuple of scalars).
    pub(crate) elem_ty: Type,
    pub(crate) src: PullSrc,
    pub(crate) views: Vec<View<Expr>>,
    /// The source expression that made the array (for the editor).
    pub(crate) origin: Option<weft_core::Origin>,
}

#[derive(Debug)]
pub(crate) enum PullSrc {
    /// `explicit`: the `map` carries a level annotation, so the compiler keeps its level.
    Map {
        func: FnId,
        lambda: Lambda,
        env: Rc<HEnv>,
        arrays: Vec<HArr>,
        explicit: bool,
    },
    Generate {
        func: FnId,
        lambda: Lambda,
        env: Rc<HEnv>,
    },
    Iota(Elem),
    Replicate(HVal),
    Lit(Vec<HVal>),
    Concat(HArr, HArr),
}

impl PullSrc {
    /// Whether computing an element costs more than a load (worth materialising when
    /// the array is used more than once).
    pub(crate) fn is_expensive(&self) -> bool {
        match self {
            PullSrc::Map { .. } | PullSrc::Generate { .. } => true,
            PullSrc::Concat(a, b) => a.has_expensive_pull() || b.has_expensive_pull(),
            PullSrc::Iota(_) | PullSrc::Replicate(_) | PullSrc::Lit(_) => false,
        }
    }
}

impl HArr {
    pub(crate) fn shape(&self) -> Vec<Expr> {
        match self {
            HArr::Mem(m) => m.shape.clone(),
            HArr::Zip(parts) => parts.first().map(HArr::shape).unwrap_or_default(),
            HArr::Pull(p) => p.shape.clone(),
        }
    }

    pub(crate) fn has_expensive_pull(&self) -> bool {
        match self {
            HArr::Mem(_) => false,
            HArr::Zip(parts) => parts.iter().any(HArr::has_expensive_pull),
            HArr::Pull(p) => p.src.is_expensive(),
        }
    }

    pub(crate) fn is_mem(&self) -> bool {
        match self {
            HArr::Mem(_) => true,
            HArr::Zip(parts) => parts.iter().all(HArr::is_mem),
            HArr::Pull(_) => false,
        }
    }

    /// A view; `None` when a memory layout cannot express it (the caller copies).
    pub(crate) fn view(&self, view: &View<Expr>) -> Option<HArr> {
        Some(match self {
            HArr::Mem(m) => HArr::Mem(m.view(view)?),
            HArr::Zip(parts) => {
                HArr::Zip(parts.iter().map(|p| p.view(view)).collect::<Option<Vec<_>>>()?)
            }
            HArr::Pull(p) => {
                let mut views = p.views.clone();
                views.push(view.clone());
                HArr::Pull(Rc::new(HPull {
                    base_shape: p.base_shape.clone(),
                    shape: view_shape(&p.shape, view),
                    elem_ty: p.elem_ty.clone(),
                    src: p.src.clone_src(),
                    views,
                    origin: p.origin.clone(),
                }))
            }
        })
    }
}

impl PullSrc {
    fn clone_src(&self) -> PullSrc {
        match self {
            PullSrc::Map { func, lambda, env, arrays, explicit } => PullSrc::Map {
                func: *func,
                lambda: lambda.clone(),
                env: env.clone(),
                arrays: arrays.clone(),
                explicit: *explicit,
            },
            PullSrc::Generate { func, lambda, env } => {
                PullSrc::Generate { func: *func, lambda: lambda.clone(), env: env.clone() }
            }
            PullSrc::Iota(e) => PullSrc::Iota(*e),
            PullSrc::Replicate(v) => PullSrc::Replicate(v.clone()),
            PullSrc::Lit(v) => PullSrc::Lit(v.clone()),
            PullSrc::Concat(a, b) => PullSrc::Concat(a.clone(), b.clone()),
        }
    }
}

/// A value inside a kernel.
#[derive(Clone, Debug)]
pub(crate) enum KVal {
    Scalar(CExpr, Elem),
    Arr(KArr),
    Tuple(Vec<KVal>),
}

/// Computes the element at a full index of a pull array, emitting commands.
pub(crate) type PullFn = Rc<dyn Fn(&mut Kb<'_>, &[CExpr]) -> Res<KVal>>;

/// Computes the row at an outer index of a pull array made by a `map` whose lambda
/// returns an array: the lambda's body runs once for the row, so a row indexed and then
/// traversed does not recompute the body's `let`s (a row's maximum in a softmax) for
/// every element.
pub(crate) type RowFn = Rc<dyn Fn(&mut Kb<'_>, &CExpr) -> Res<KVal>>;

#[derive(Clone)]
pub(crate) enum KArr {
    Mem(Mem<CExpr, Rc<str>>),
    Zip(Vec<KArr>),
    Pull { shape: Vec<CExpr>, f: PullFn, row: Option<RowFn> },
}

impl std::fmt::Debug for KArr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KArr::Mem(m) => write!(f, "Mem({m:?})"),
            KArr::Zip(parts) => write!(f, "Zip({parts:?})"),
            KArr::Pull { shape, .. } => write!(f, "Pull({shape:?})"),
        }
    }
}

impl KArr {
    pub(crate) fn shape(&self) -> Vec<CExpr> {
        match self {
            KArr::Mem(m) => m.shape.clone(),
            KArr::Zip(parts) => parts.first().map(KArr::shape).unwrap_or_default(),
            KArr::Pull { shape, .. } => shape.clone(),
        }
    }

    /// A view of the array (pull arrays compose the index function).
    pub(crate) fn view(&self, view: &View<CExpr>) -> Option<KArr> {
        Some(match self {
            KArr::Mem(m) => KArr::Mem(m.view(view)?),
            KArr::Zip(parts) => {
                KArr::Zip(parts.iter().map(|p| p.view(view)).collect::<Option<Vec<_>>>()?)
            }
            KArr::Pull { shape, f, .. } => {
                let inner = f.clone();
                let old_shape = shape.clone();
                let new_shape = view_shape(shape, view);
                let view = view.clone();
                let f: PullFn = Rc::new(move |kb: &mut Kb<'_>, idx: &[CExpr]| {
                    let mut full: Vec<CExpr> = idx.to_vec();
                    match &view {
                        View::Fix { dim, index } => full.insert(*dim, index.clone()),
                        View::Slice { dim, start, stride, .. } => {
                            full[*dim] = CExpr::add(
                                start.clone(),
                                CExpr::mul(full[*dim].clone(), stride.clone()),
                            );
                        }
                        View::Transpose => full.swap(0, 1),
                        View::Unflatten { cols, .. } => {
                            let i = CExpr::add(
                                CExpr::mul(full[0].clone(), cols.clone()),
                                full[1].clone(),
                            );
                            full.splice(0..2, [i]);
                        }
                        View::Flatten => {
                            let cols = old_shape[1].clone();
                            let k = full[0].clone();
                            let i = CExpr::bin(crate::imp::COp::Div, k.clone(), cols.clone());
                            let j = CExpr::bin(crate::imp::COp::Rem, k, cols);
                            full.splice(0..1, [i, j]);
                        }
                    }
                    inner(kb, &full)
                });
                KArr::Pull { shape: new_shape, f, row: None }
            }
        })
    }
}

/// The scalar leaves of a scalar or tuple value, in order.
pub(crate) fn scalar_leaves(v: &KVal, out: &mut Vec<(CExpr, Elem)>) {
    match v {
        KVal::Scalar(e, elem) => out.push((e.clone(), *elem)),
        KVal::Tuple(parts) => parts.iter().for_each(|p| scalar_leaves(p, out)),
        KVal::Arr(_) => {}
    }
}

/// A value of `like`'s structure made of `leaves`.
pub(crate) fn rebuild(like: &KVal, leaves: &mut impl Iterator<Item = (CExpr, Elem)>) -> KVal {
    match like {
        KVal::Scalar(..) => {
            let (e, elem) = leaves.next().unwrap_or((CExpr::Int(0), Elem::I64));
            KVal::Scalar(e, elem)
        }
        KVal::Tuple(parts) => KVal::Tuple(parts.iter().map(|p| rebuild(p, leaves)).collect()),
        KVal::Arr(_) => like.clone(),
    }
}

/// How the parts of an array of tuples nest: one leaf per scalar, one node per tuple
/// (an array of `((f32, f32), f32)`, records of records included, is a zip of a zip
/// and an array, so a tuple value stored into it finds each part where it is).
pub(crate) enum Nesting {
    Leaf,
    Tuple(Vec<Nesting>),
}

impl Nesting {
    pub(crate) fn of_type(ty: &Type) -> Nesting {
        match ty {
            Type::Tuple(parts) => Nesting::Tuple(parts.iter().map(Nesting::of_type).collect()),
            Type::Scalar(_) | Type::Array { .. } => Nesting::Leaf,
        }
    }

    pub(crate) fn of_karr(a: &KArr) -> Nesting {
        match a {
            KArr::Zip(parts) => Nesting::Tuple(parts.iter().map(Nesting::of_karr).collect()),
            _ => Nesting::Leaf,
        }
    }

    /// Groups `flat` (one array per leaf, in order) as this nesting says, with `zip`
    /// making a node.
    pub(crate) fn regroup<A>(
        &self,
        flat: &mut impl Iterator<Item = A>,
        zip: &impl Fn(Vec<A>) -> A,
    ) -> Option<A> {
        match self {
            Nesting::Leaf => flat.next(),
            // A tuple of one (the lowering's own tuple of a single leaf type) is that
            // part, as a zip of one array was never made.
            Nesting::Tuple(parts) if parts.len() == 1 => parts[0].regroup(flat, zip),
            Nesting::Tuple(parts) => {
                let parts = parts.iter().map(|p| p.regroup(flat, zip)).collect::<Option<_>>()?;
                Some(zip(parts))
            }
        }
    }
}
