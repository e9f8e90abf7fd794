//! Unification of types and sizes, with type classes for overloaded literals and
//! operators (`1` may be any numeric type, `+` any numeric type, `<` any ordered one).

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::expr_store::ExprId;
use crate::ty::{ScalarTy, SizeVar, Ty, TySize};

/// What an inference variable may become.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Any,
    /// Any scalar (equality, conversion sources).
    Scalar,
    /// Integer or float (arithmetic, unsuffixed integer literals).
    Num,
    Int,
    Float,
    /// `bool` or an integer (`!`).
    Logical,
}

impl Class {
    fn admits(self, scalar: ScalarTy) -> bool {
        match self {
            Class::Any | Class::Scalar => true,
            Class::Num => scalar.is_numeric(),
            Class::Int => scalar.is_integer(),
            Class::Float => scalar.is_float(),
            Class::Logical => scalar.is_integer() || scalar == ScalarTy::Bool,
        }
    }

    fn requires_scalar(self) -> bool {
        self != Class::Any
    }

    /// The intersection of two classes, if not empty.
    fn meet(self, other: Class) -> Option<Class> {
        use Class::*;
        Some(match (self, other) {
            (Any, c) | (c, Any) => c,
            (Scalar, c) | (c, Scalar) => c,
            (a, b) if a == b => a,
            (Num, Int)
            | (Int, Num)
            | (Logical, Int)
            | (Int, Logical)
            | (Num, Logical)
            | (Logical, Num) => Int,
            (Num, Float) | (Float, Num) => Float,
            _ => return None,
        })
    }

    /// The type an unconstrained variable of this class defaults to.
    pub(crate) fn default_scalar(self) -> Option<ScalarTy> {
        match self {
            Class::Num | Class::Int | Class::Logical => Some(ScalarTy::I32),
            Class::Float => Some(ScalarTy::F32),
            Class::Any | Class::Scalar => None,
        }
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Class::Any => "any type",
            Class::Scalar => "a scalar type",
            Class::Num => "a numeric type",
            Class::Int => "an integer type",
            Class::Float => "a float type",
            Class::Logical => "`bool` or an integer type",
        }
    }
}

/// Why two types do not unify.
#[derive(Debug, Clone)]
pub(crate) enum Mismatch {
    Type,
    /// `origin`: the expression that fixed the expected size, when a flexible size
    /// variable was bound by an earlier argument.
    Size {
        expected: TySize,
        found: TySize,
        origin: Option<ExprId>,
    },
    Class {
        class: Class,
        found: Ty,
    },
}

/// The substitution under construction.
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    ty_vars: Vec<(Option<Ty>, Class)>,
    /// For each unbound variable, how many variables are bound to it (directly or
    /// not): union by size keeps chains of variables logarithmic.
    weights: Vec<u32>,
    size_vars: Vec<Option<TySize>>,
    n_unknowns: u32,
    /// The expression whose type fixed each size variable (for messages).
    pub(crate) size_origin: FxHashMap<u32, ExprId>,
    /// Set while unifying an argument, so bindings record where they came from.
    pub(crate) current_origin: Option<ExprId>,
}

impl Table {
    pub(crate) fn new_var(&mut self, class: Class) -> Ty {
        let idx =
            u32::try_from(self.ty_vars.len()).expect("invariant: fewer than 2^32 type variables");
        self.ty_vars.push((None, class));
        self.weights.push(1);
        Ty::Var(idx)
    }

    pub(crate) fn new_size_var(&mut self) -> TySize {
        let idx =
            u32::try_from(self.size_vars.len()).expect("invariant: fewer than 2^32 size variables");
        self.size_vars.push(None);
        TySize::var(SizeVar::Infer(idx))
    }

    pub(crate) fn new_unknown(&mut self) -> TySize {
        self.n_unknowns += 1;
        TySize::var(SizeVar::Unknown(self.n_unknowns))
    }

    pub(crate) fn class_of(&self, var: u32) -> Class {
        self.ty_vars.get(var as usize).map_or(Class::Any, |(_, c)| *c)
    }

    /// Resolves the outermost variable of `ty` (not inside).
    pub(crate) fn shallow(&self, ty: &Ty) -> Ty {
        let mut ty = ty.clone();
        while let Ty::Var(idx) = ty {
            match self.ty_vars.get(idx as usize) {
                Some((Some(bound), _)) => ty = bound.clone(),
                _ => break,
            }
        }
        ty
    }

    pub(crate) fn resolve_size(&self, size: &TySize) -> TySize {
        if !size.vars().iter().any(|v| matches!(v, SizeVar::Infer(i) if self.size_vars.get(*i as usize).is_some_and(Option::is_some))) {
            return size.clone();
        }
        size.substitute(&mut |v| match v {
            SizeVar::Infer(i) => {
                self.size_vars.get(*i as usize).cloned().flatten().map(|s| self.resolve_size(&s))
            }
            _ => None,
        })
    }

    /// Resolves every variable bound so far.
    pub(crate) fn resolve(&self, ty: &Ty) -> Ty {
        match self.shallow(ty) {
            Ty::Array { size, elem } => {
                Ty::Array { size: self.resolve_size(&size), elem: Arc::new(self.resolve(&elem)) }
            }
            Ty::Tuple(elems) => Ty::Tuple(elems.iter().map(|e| self.resolve(e)).collect()),
            Ty::Record(fields) => {
                Ty::Record(fields.iter().map(|(n, t)| (n.clone(), self.resolve(t))).collect())
            }
            Ty::Fn { param, ret } => {
                Ty::Fn { param: Arc::new(self.resolve(&param)), ret: Arc::new(self.resolve(&ret)) }
            }
            other @ (Ty::Scalar(_) | Ty::Param(_) | Ty::Var(_) | Ty::Error) => other,
        }
    }

    /// Requires `ty` to be in `class`.
    pub(crate) fn constrain(&mut self, ty: &Ty, class: Class) -> Result<(), Mismatch> {
        match self.shallow(ty) {
            Ty::Var(idx) => {
                let current = self.class_of(idx);
                let met =
                    current.meet(class).ok_or(Mismatch::Class { class, found: ty.clone() })?;
                if let Some(slot) = self.ty_vars.get_mut(idx as usize) {
                    slot.1 = met;
                }
                Ok(())
            }
            Ty::Scalar(scalar) if class.admits(scalar) => Ok(()),
            Ty::Error => Ok(()),
            found => Err(Mismatch::Class { class, found: self.resolve(&found) }),
        }
    }

    fn occurs(&self, var: u32, ty: &Ty) -> bool {
        match self.shallow(ty) {
            Ty::Var(idx) => idx == var,
            Ty::Array { elem, .. } => self.occurs(var, &elem),
            Ty::Tuple(elems) => elems.iter().any(|e| self.occurs(var, e)),
            Ty::Record(fields) => fields.iter().any(|(_, t)| self.occurs(var, t)),
            Ty::Fn { param, ret } => self.occurs(var, &param) || self.occurs(var, &ret),
            Ty::Scalar(_) | Ty::Param(_) | Ty::Error => false,
        }
    }

    fn bind(&mut self, var: u32, ty: &Ty) -> Result<(), Mismatch> {
        if self.occurs(var, ty) {
            return Err(Mismatch::Type);
        }
        let class = self.class_of(var);
        if class.requires_scalar() {
            match self.shallow(ty) {
                Ty::Var(other) => {
                    let met = class.meet(self.class_of(other)).ok_or(Mismatch::Type)?;
                    if let Some(slot) = self.ty_vars.get_mut(other as usize) {
                        slot.1 = met;
                    }
                }
                Ty::Scalar(scalar) if class.admits(scalar) => {}
                Ty::Error => {}
                found => return Err(Mismatch::Class { class, found: self.resolve(&found) }),
            }
        }
        if let Some(slot) = self.ty_vars.get_mut(var as usize) {
            slot.0 = Some(ty.clone());
        }
        Ok(())
    }

    /// Unifies `expected` with `found`. On failure, bindings made so far remain (the
    /// caller reports one error and moves on).
    pub(crate) fn unify(&mut self, expected: &Ty, found: &Ty) -> Result<(), Mismatch> {
        let a = self.shallow(expected);
        let b = self.shallow(found);
        match (&a, &b) {
            (Ty::Error, _) | (_, Ty::Error) => Ok(()),
            (Ty::Var(x), Ty::Var(y)) if x == y => Ok(()),
            // Bind the lighter variable to the heavier one (union by size), so chains
            // of variables stay short: `1 + 1 + ... + 1` would otherwise resolve in
            // quadratic time.
            (Ty::Var(x), Ty::Var(y)) => {
                let weight_x = self.weights.get(*x as usize).copied().unwrap_or(1);
                let weight_y = self.weights.get(*y as usize).copied().unwrap_or(1);
                let (light, heavy, light_weight) =
                    if weight_x <= weight_y { (*x, *y, weight_x) } else { (*y, *x, weight_y) };
                self.bind(light, &Ty::Var(heavy))?;
                if let Some(w) = self.weights.get_mut(heavy as usize) {
                    *w = w.saturating_add(light_weight);
                }
                Ok(())
            }
            (Ty::Var(x), _) => self.bind(*x, &b),
            (_, Ty::Var(y)) => self.bind(*y, &a),
            (Ty::Scalar(x), Ty::Scalar(y)) if x == y => Ok(()),
            (Ty::Param(x), Ty::Param(y)) if x == y => Ok(()),
            (Ty::Array { size: s1, elem: e1 }, Ty::Array { size: s2, elem: e2 }) => {
                self.unify(e1, e2)?;
                self.unify_size(s1, s2)
            }
            (Ty::Tuple(xs), Ty::Tuple(ys)) if xs.len() == ys.len() => {
                for (x, y) in xs.iter().zip(ys.iter()) {
                    self.unify(x, y)?;
                }
                Ok(())
            }
            (Ty::Record(xs), Ty::Record(ys)) if same_fields(xs, ys) => {
                for ((_, x), (_, y)) in xs.iter().zip(ys.iter()) {
                    self.unify(x, y)?;
                }
                Ok(())
            }
            (Ty::Fn { param: p1, ret: r1 }, Ty::Fn { param: p2, ret: r2 }) => {
                self.unify(p1, p2)?;
                self.unify(r1, r2)
            }
            _ => Err(Mismatch::Type),
        }
    }

    pub(crate) fn unify_size(&mut self, expected: &TySize, found: &TySize) -> Result<(), Mismatch> {
        let a = self.resolve_size(expected);
        let b = self.resolve_size(found);
        if a == b {
            return Ok(());
        }
        if let Some(SizeVar::Infer(idx)) = a.as_var()
            && !b.contains_var(&SizeVar::Infer(*idx))
        {
            let idx = *idx;
            self.bind_size(idx, b);
            return Ok(());
        }
        if let Some(SizeVar::Infer(idx)) = b.as_var()
            && !a.contains_var(&SizeVar::Infer(*idx))
        {
            let idx = *idx;
            self.bind_size(idx, a);
            return Ok(());
        }
        let origin = self.origin_of(expected);
        Err(Mismatch::Size { expected: a, found: b, origin })
    }

    fn bind_size(&mut self, idx: u32, size: TySize) {
        if let Some(slot) = self.size_vars.get_mut(idx as usize) {
            *slot = Some(size);
        }
        if let Some(origin) = self.current_origin {
            self.size_origin.entry(idx).or_insert(origin);
        }
    }

    /// The expression that fixed the size variable `size` was resolved from, if any.
    pub(crate) fn origin_of(&self, size: &TySize) -> Option<ExprId> {
        match size.as_var() {
            Some(SizeVar::Infer(idx)) => self.size_origin.get(idx).copied(),
            _ => None,
        }
    }

    /// Joins the types of two branches: like `unify`, but differing sizes give a fresh
    /// unknown size instead of an error (LANGUAGE.md section 2).
    pub(crate) fn join(&mut self, a: &Ty, b: &Ty) -> Result<Ty, Mismatch> {
        let a = self.shallow(a);
        let b = self.shallow(b);
        match (&a, &b) {
            (Ty::Array { size: s1, elem: e1 }, Ty::Array { size: s2, elem: e2 }) => {
                let elem = self.join(e1, e2)?;
                let size = match self.unify_size(s1, s2) {
                    Ok(()) => self.resolve_size(s1),
                    Err(_) => self.new_unknown(),
                };
                Ok(Ty::Array { size, elem: Arc::new(elem) })
            }
            (Ty::Tuple(xs), Ty::Tuple(ys)) if xs.len() == ys.len() => {
                let elems = xs
                    .iter()
                    .zip(ys.iter())
                    .map(|(x, y)| self.join(x, y))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Ty::tuple(elems))
            }
            (Ty::Record(xs), Ty::Record(ys)) if same_fields(xs, ys) => {
                let fields = xs
                    .iter()
                    .zip(ys.iter())
                    .map(|((name, x), (_, y))| Ok((name.clone(), self.join(x, y)?)))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Ty::Record(fields.into()))
            }
            _ => {
                self.unify(&a, &b)?;
                Ok(self.resolve(&a))
            }
        }
    }

    /// Defaults numeric variables (`i32`, `f32`) and reports the rest as unresolved.
    pub(crate) fn default_vars(&mut self) {
        for idx in 0..self.ty_vars.len() {
            if self.ty_vars[idx].0.is_none()
                && let Some(scalar) = self.ty_vars[idx].1.default_scalar()
            {
                self.ty_vars[idx].0 = Some(Ty::Scalar(scalar));
            }
        }
    }

    /// The fully resolved type for a message: each variable left is named `'a`, `'b`,
    /// ... in order of first appearance (`names` is shared by the types of one
    /// message). Unlike [`Table::finish`], which makes them `Error`, this keeps a real
    /// mismatch such as `\x -> 1` against `i32` from reading as noise.
    pub(crate) fn finish_named(&self, ty: &Ty, names: &mut Vec<u32>) -> Ty {
        match self.shallow(ty) {
            Ty::Var(idx) => {
                let pos = names.iter().position(|&v| v == idx).unwrap_or_else(|| {
                    names.push(idx);
                    names.len() - 1
                });
                let letter = (b'a' + (pos % 26) as u8) as char;
                let suffix = if pos < 26 { String::new() } else { (pos / 26).to_string() };
                Ty::Param(crate::Name::new(&format!("'{letter}{suffix}")))
            }
            Ty::Array { size, elem } => Ty::Array {
                size: self.resolve_size(&size),
                elem: Arc::new(self.finish_named(&elem, names)),
            },
            Ty::Tuple(elems) => {
                Ty::tuple(elems.iter().map(|e| self.finish_named(e, names)).collect())
            }
            Ty::Record(fields) => Ty::Record(
                fields.iter().map(|(n, t)| (n.clone(), self.finish_named(t, names))).collect(),
            ),
            Ty::Fn { param, ret } => {
                Ty::func(self.finish_named(&param, names), self.finish_named(&ret, names))
            }
            other @ (Ty::Scalar(_) | Ty::Param(_) | Ty::Error) => other,
        }
    }

    /// The fully resolved type, with remaining variables as `Error`.
    pub(crate) fn finish(&self, ty: &Ty) -> Ty {
        match self.resolve(ty) {
            Ty::Var(_) => Ty::Error,
            resolved => {
                let mut has_var = false;
                check_vars(&resolved, &mut has_var);
                if has_var { replace_vars(&resolved) } else { resolved }
            }
        }
    }
}

/// Resolves many types that share subtrees (`Arc`s), visiting each shared subtree
/// once: a lambda nested 100,000 levels deep has 100,000 function types that each
/// contain the next, and resolving each alone would be quadratic.
pub(crate) struct Finisher<'a> {
    table: &'a Table,
    /// Keyed by the address of an `Arc` that stays alive in the caller's tables while
    /// the finisher exists (the caller replaces them only afterwards).
    memo: FxHashMap<usize, (Arc<Ty>, Flags)>,
}

/// What a finished type contained: an inference variable left unresolved (now the
/// error type), or an error type from an earlier diagnostic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Flags {
    pub(crate) unresolved: bool,
    pub(crate) error: bool,
}

impl Flags {
    fn or(self, other: Flags) -> Flags {
        Flags { unresolved: self.unresolved || other.unresolved, error: self.error || other.error }
    }
}

impl<'a> Finisher<'a> {
    pub(crate) fn new(table: &'a Table) -> Finisher<'a> {
        Finisher { table, memo: FxHashMap::default() }
    }

    /// The resolved type, unresolved variables replaced by the error type.
    pub(crate) fn finish(&mut self, ty: &Ty) -> (Ty, Flags) {
        match self.table.shallow(ty) {
            Ty::Var(_) => (Ty::Error, Flags { unresolved: true, error: false }),
            Ty::Error => (Ty::Error, Flags { unresolved: false, error: true }),
            Ty::Array { size, elem } => {
                let (elem, flags) = self.shared(&elem);
                (Ty::Array { size: self.table.resolve_size(&size), elem }, flags)
            }
            Ty::Tuple(elems) => {
                let mut flags = Flags::default();
                let elems: Vec<Ty> = elems
                    .iter()
                    .map(|e| {
                        let (e, f) = self.finish(e);
                        flags = flags.or(f);
                        e
                    })
                    .collect();
                (Ty::tuple(elems), flags)
            }
            Ty::Record(fields) => {
                let mut flags = Flags::default();
                let fields = fields
                    .iter()
                    .map(|(name, t)| {
                        let (t, f) = self.finish(t);
                        flags = flags.or(f);
                        (name.clone(), t)
                    })
                    .collect();
                (Ty::Record(fields), flags)
            }
            Ty::Fn { param, ret } => {
                let (param, f1) = self.shared(&param);
                let (ret, f2) = self.shared(&ret);
                (Ty::Fn { param, ret }, f1.or(f2))
            }
            scalar @ (Ty::Scalar(_) | Ty::Param(_)) => (scalar, Flags::default()),
        }
    }

    fn shared(&mut self, ty: &Arc<Ty>) -> (Arc<Ty>, Flags) {
        let key = Arc::as_ptr(ty) as usize;
        if let Some(hit) = self.memo.get(&key) {
            return hit.clone();
        }
        let (finished, flags) = self.finish(ty);
        let result = (Arc::new(finished), flags);
        self.memo.insert(key, result.clone());
        result
    }
}

fn check_vars(ty: &Ty, found: &mut bool) {
    match ty {
        Ty::Var(_) => *found = true,
        Ty::Array { elem, .. } => check_vars(elem, found),
        Ty::Tuple(elems) => elems.iter().for_each(|e| check_vars(e, found)),
        Ty::Record(fields) => fields.iter().for_each(|(_, t)| check_vars(t, found)),
        Ty::Fn { param, ret } => {
            check_vars(param, found);
            check_vars(ret, found);
        }
        Ty::Scalar(_) | Ty::Param(_) | Ty::Error => {}
    }
}

fn replace_vars(ty: &Ty) -> Ty {
    match ty {
        Ty::Var(_) => Ty::Error,
        Ty::Array { size, elem } => {
            Ty::Array { size: size.clone(), elem: Arc::new(replace_vars(elem)) }
        }
        Ty::Tuple(elems) => Ty::Tuple(elems.iter().map(replace_vars).collect()),
        Ty::Record(fields) => {
            Ty::Record(fields.iter().map(|(n, t)| (n.clone(), replace_vars(t))).collect())
        }
        Ty::Fn { param, ret } => Ty::func(replace_vars(param), replace_vars(ret)),
        Ty::Scalar(_) | Ty::Param(_) | Ty::Error => ty.clone(),
    }
}

/// Whether two record types have the same field names (both are sorted).
fn same_fields(xs: &[(crate::Name, Ty)], ys: &[(crate::Name, Ty)]) -> bool {
    xs.len() == ys.len() && xs.iter().zip(ys).all(|((a, _), (b, _))| a == b)
}
