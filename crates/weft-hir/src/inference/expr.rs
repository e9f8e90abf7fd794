//! Inference of expressions and patterns.

use std::sync::Arc;

use weft_syntax::ast::{BinOp, PrefixOp};

use super::unify::Class;
use super::{InferCtx, InferDiagnostic, Site};
use crate::Name;
use crate::builtins::Builtin;
use crate::expr_store::{Expr, ExprId, IndexItem, Literal, LoopForm, Pat, PatId, Resolution};
use crate::items::DefId;
use crate::ty::{Scheme, SizeVar, Ty, TySize};

impl InferCtx<'_> {
    /// Infers `expr`, using `expected` as a hint (for lambdas and literals). The caller
    /// unifies the result with what it needs.
    pub(crate) fn infer_expr(&mut self, expr: ExprId, expected: Option<&Ty>) -> Ty {
        let ty = self.infer_expr_inner(expr, expected);
        self.result.expr_tys.insert(expr, ty.clone());
        ty
    }

    fn infer_expr_inner(&mut self, expr: ExprId, expected: Option<&Ty>) -> Ty {
        let body = Arc::clone(&self.body);
        match &body.exprs[expr] {
            Expr::Missing => Ty::Error,
            Expr::Literal(lit) => self.infer_literal(lit, expected),
            Expr::Path { res, .. } => self.infer_path(expr, res),
            Expr::Tuple(elems) => {
                let expected_elems: Vec<Option<Ty>> = match expected.map(|t| self.table.shallow(t))
                {
                    Some(Ty::Tuple(tys)) if tys.len() == elems.len() => {
                        tys.iter().cloned().map(Some).collect()
                    }
                    _ => vec![None; elems.len()],
                };
                let tys: Vec<Ty> = elems
                    .iter()
                    .zip(expected_elems)
                    .map(|(&e, hint)| self.infer_expr(e, hint.as_ref()))
                    .collect();
                if tys.iter().any(|t| matches!(self.table.shallow(t), Ty::Fn { .. })) {
                    self.report(InferDiagnostic::FunctionNotAllowed {
                        site: Site::Expr(expr),
                        context: "a tuple",
                    });
                }
                Ty::tuple(tys)
            }
            Expr::Array(elems) => {
                let elem_hint = match expected.map(|t| self.table.shallow(t)) {
                    Some(Ty::Array { elem, .. }) => Some((*elem).clone()),
                    _ => None,
                };
                let elem_ty = elem_hint.unwrap_or_else(|| self.table.new_var(Class::Any));
                for &e in elems {
                    let ty = self.infer_expr(e, Some(&elem_ty));
                    self.expect_ty(Site::Expr(e), &elem_ty, &ty);
                }
                if matches!(self.table.shallow(&elem_ty), Ty::Fn { .. }) {
                    self.report(InferDiagnostic::FunctionNotAllowed {
                        site: Site::Expr(expr),
                        context: "an array",
                    });
                }
                let n = i64::try_from(elems.len()).unwrap_or(i64::MAX);
                Ty::array(TySize::constant(n), elem_ty)
            }
            Expr::Call { callee, args } => self.infer_call(expr, *callee, args),
            Expr::Binary { op, lhs, rhs } => self.infer_binary(expr, *op, *lhs, *rhs),
            Expr::Unary { op, operand } => {
                let ty = self.infer_expr(*operand, expected);
                let class = match op {
                    PrefixOp::Neg => Class::Num,
                    PrefixOp::Not => Class::Logical,
                };
                if let Err(mismatch) = self.table.constrain(&ty, class) {
                    self.report_mismatch(Site::Expr(*operand), &ty, &ty, mismatch);
                }
                ty
            }
            Expr::Lambda { params, body: lambda_body } => {
                self.infer_lambda(params, *lambda_body, expected)
            }
            Expr::OpSection(op) => {
                let (lhs, rhs, ret) = self.op_signature(expr, *op);
                Ty::func(lhs, Ty::func(rhs, ret))
            }
            Expr::LeftSection { op, lhs } => {
                let (lhs_ty, rhs_ty, ret) = self.op_signature(expr, *op);
                let found = self.infer_expr(*lhs, Some(&lhs_ty));
                self.expect_ty(Site::Expr(*lhs), &lhs_ty, &found);
                Ty::func(rhs_ty, ret)
            }
            Expr::RightSection { op, rhs } => {
                let (lhs_ty, rhs_ty, ret) = self.op_signature(expr, *op);
                let found = self.infer_expr(*rhs, Some(&rhs_ty));
                self.expect_ty(Site::Expr(*rhs), &rhs_ty, &found);
                Ty::func(lhs_ty, ret)
            }
            Expr::Let { pat, ty, value, body: let_body } => {
                let annotated = ty.clone().map(|t| self.lower_type_ref(&t, Site::Pat(*pat)));
                let value_ty = self.infer_expr(*value, annotated.as_ref());
                if let Some(annotated) = &annotated {
                    self.expect_ty(Site::Expr(*value), annotated, &value_ty);
                }
                let bound = annotated.unwrap_or(value_ty);
                self.bind_pat(*pat, &bound);
                let n_scope = self.size_scope.len();
                let local = self.bind_let_size(*pat, *value, &bound);
                let ty = self.infer_expr(*let_body, expected);
                self.size_scope.truncate(n_scope);
                match local {
                    Some(var) => self.forget_local_size(&ty, &var),
                    None => ty,
                }
            }
            Expr::If { cond, then_branch, else_branch } => {
                let cond_ty = self.infer_expr(*cond, Some(&Ty::bool()));
                self.expect_ty(Site::Expr(*cond), &Ty::bool(), &cond_ty);
                let then_ty = self.infer_expr(*then_branch, expected);
                let else_ty = self.infer_expr(*else_branch, Some(&then_ty));
                let joined = match self.table.join(&then_ty, &else_ty) {
                    Ok(ty) => ty,
                    Err(mismatch) => {
                        self.report_mismatch(
                            Site::Expr(*else_branch),
                            &then_ty,
                            &else_ty,
                            mismatch,
                        );
                        Ty::Error
                    }
                };
                if matches!(self.table.shallow(&joined), Ty::Fn { .. }) {
                    self.report(InferDiagnostic::FunctionNotAllowed {
                        site: Site::Expr(expr),
                        context: "an `if` result",
                    });
                }
                joined
            }
            Expr::Loop { pat, init, form, body: loop_body } => {
                self.infer_loop(expr, *pat, *init, form, *loop_body)
            }
            Expr::Index { base, items } => self.infer_index(expr, *base, items),
            Expr::Update { base, indices, value } => {
                self.infer_update(expr, *base, indices, *value)
            }
            Expr::Proj { base, index } => {
                let base_ty = self.infer_expr(*base, None);
                match self.table.shallow(&base_ty) {
                    Ty::Tuple(elems) => match elems.get(*index as usize) {
                        Some(ty) => ty.clone(),
                        None => {
                            let ty = self.table.resolve(&base_ty);
                            self.report(InferDiagnostic::ProjectionOutOfRange {
                                site: Site::Expr(expr),
                                ty,
                                index: *index,
                            });
                            Ty::Error
                        }
                    },
                    Ty::Error => Ty::Error,
                    other => {
                        let ty = self.table.resolve(&other);
                        self.report(InferDiagnostic::NotATuple { site: Site::Expr(*base), ty });
                        Ty::Error
                    }
                }
            }
            Expr::Record(fields) => {
                let expected_fields = match expected.map(|t| self.table.shallow(t)) {
                    Some(Ty::Record(fields)) => fields.to_vec(),
                    _ => Vec::new(),
                };
                let mut tys: Vec<(Name, Ty)> = Vec::new();
                for (name, value) in fields {
                    let hint = expected_fields.iter().find(|(n, _)| n == name).map(|(_, t)| t);
                    let ty = self.infer_expr(*value, hint);
                    // A duplicate was reported when lowering; its first value counts.
                    if !tys.iter().any(|(n, _)| n == name) {
                        tys.push((name.clone(), ty));
                    }
                }
                if tys.iter().any(|(_, t)| matches!(self.table.shallow(t), Ty::Fn { .. })) {
                    self.report(InferDiagnostic::FunctionNotAllowed {
                        site: Site::Expr(expr),
                        context: "a record",
                    });
                }
                Ty::record(tys)
            }
            Expr::Field { base, field } => {
                let base_ty = self.infer_expr(*base, None);
                match self.table.shallow(&base_ty) {
                    Ty::Record(fields) => match fields.iter().find(|(n, _)| n == field) {
                        Some((_, ty)) => ty.clone(),
                        None => {
                            let ty = self.table.resolve(&base_ty);
                            self.report(InferDiagnostic::NoSuchField {
                                site: Site::Expr(expr),
                                ty,
                                field: field.clone(),
                            });
                            Ty::Error
                        }
                    },
                    Ty::Error => Ty::Error,
                    other => {
                        let ty = self.table.resolve(&other);
                        self.report(InferDiagnostic::NotARecord {
                            site: Site::Expr(*base),
                            ty,
                            field: field.clone(),
                        });
                        Ty::Error
                    }
                }
            }
            Expr::RecordUpdate { base, path, value } => {
                let base_ty = self.infer_expr(*base, expected);
                // Follow the path through the record types; the value must have the
                // type of the field it replaces, and the result is the base's type.
                let mut field_ty = base_ty.clone();
                let mut site = *base;
                for field in path {
                    match self.table.shallow(&field_ty) {
                        Ty::Record(fields) => match fields.iter().find(|(n, _)| n == field) {
                            Some((_, ty)) => field_ty = ty.clone(),
                            None => {
                                let ty = self.table.resolve(&field_ty);
                                self.report(InferDiagnostic::NoSuchField {
                                    site: Site::Expr(expr),
                                    ty,
                                    field: field.clone(),
                                });
                                field_ty = Ty::Error;
                            }
                        },
                        Ty::Error => field_ty = Ty::Error,
                        other => {
                            let ty = self.table.resolve(&other);
                            self.report(InferDiagnostic::NotARecord {
                                site: Site::Expr(site),
                                ty,
                                field: field.clone(),
                            });
                            field_ty = Ty::Error;
                        }
                    }
                    site = expr;
                }
                let found = self.infer_expr(*value, Some(&field_ty));
                self.expect_ty(Site::Expr(*value), &field_ty, &found);
                base_ty
            }
            Expr::Ascribe { expr: inner, ty } => {
                let annotated = self.lower_type_ref(ty, Site::Expr(expr));
                let found = self.infer_expr(*inner, Some(&annotated));
                self.expect_ty(Site::Expr(*inner), &annotated, &found);
                annotated
            }
            Expr::Coerce { expr: inner, ty } => {
                // Sizes are checked at run time; the shape must otherwise match.
                let annotated = self.lower_type_ref(ty, Site::Expr(expr));
                let found = self.infer_expr(*inner, None);
                let erased = self.erase_sizes(&annotated);
                self.expect_ty(Site::Expr(*inner), &erased, &found);
                annotated
            }
        }
    }

    /// The same type with every size replaced by a fresh flexible variable.
    fn erase_sizes(&mut self, ty: &Ty) -> Ty {
        let table = &mut self.table;
        ty.map_sizes(&mut |_| table.new_size_var())
    }

    fn infer_literal(&mut self, lit: &Literal, expected: Option<&Ty>) -> Ty {
        let ty = match lit {
            Literal::Bool(_) => return Ty::bool(),
            Literal::Int { suffix: Some(s), .. } | Literal::Float { suffix: Some(s), .. } => {
                return Ty::Scalar(*s);
            }
            Literal::Int { suffix: None, hex: true, .. } => self.table.new_var(Class::Int),
            Literal::Int { suffix: None, hex: false, .. } => self.table.new_var(Class::Num),
            Literal::Float { suffix: None, .. } => self.table.new_var(Class::Float),
        };
        if let Some(expected) = expected {
            // A hint that does not fit is reported by the caller's unification.
            let _ = self.table.unify(expected, &ty);
        }
        ty
    }

    fn infer_path(&mut self, expr: ExprId, res: &Resolution) -> Ty {
        match res {
            Resolution::Local(pat) => self.result.pat_ty(*pat),
            Resolution::SizeParam(_) => Ty::i64(),
            Resolution::Unresolved => Ty::Error,
            Resolution::Def(loc) => {
                let scheme = super::def_scheme(self.db, DefId::new(self.db, loc.clone())).clone();
                self.value_of_scheme(expr, &scheme)
            }
            Resolution::Builtin(builtin) => self.builtin_value(expr, *builtin),
        }
    }

    /// A function used as a value (not applied): dependent sizes become unknown.
    fn value_of_scheme(&mut self, _expr: ExprId, scheme: &Scheme) -> Ty {
        let (params, ret) = self.instantiate(scheme);
        let mut deps = Vec::new();
        for param in &params {
            if let Some(name) = &param.binds_size {
                deps.push((SizeVar::Param(name.clone()), self.table.new_unknown()));
            }
        }
        let fn_ty = params.iter().rev().fold(ret, |ret, p| Ty::func(p.ty.clone(), ret));
        substitute_sizes(&fn_ty, &deps)
    }

    fn builtin_value(&mut self, expr: ExprId, builtin: Builtin) -> Ty {
        match builtin {
            Builtin::Convert(to) => {
                let from = self.table.new_var(Class::Scalar);
                Ty::func(from, Ty::Scalar(to))
            }
            Builtin::Math(_, f) if f.is_constant() => builtin.scheme().ret,
            _ => self.value_of_scheme(expr, &builtin.scheme()),
        }
    }

    fn infer_call(&mut self, expr: ExprId, callee: ExprId, args: &[ExprId]) -> Ty {
        let body = Arc::clone(&self.body);
        let known = match &body.exprs[callee] {
            Expr::Path { res: Resolution::Def(loc), .. } => {
                Some(super::def_scheme(self.db, DefId::new(self.db, loc.clone())).clone())
            }
            Expr::Path { res: Resolution::Builtin(b), .. } if !matches!(b, Builtin::Convert(_)) => {
                if let Builtin::Math(_, f) = b
                    && f.is_constant()
                {
                    None
                } else {
                    Some(b.scheme())
                }
            }
            _ => None,
        };
        let Some(scheme) = known else {
            let callee_ty = self.infer_expr(callee, None);
            return self.apply_args(expr, callee_ty, args);
        };
        let (params, ret) = self.instantiate(&scheme);
        self.result.expr_tys.insert(
            callee,
            params.iter().rev().fold(ret.clone(), |r, p| Ty::func(p.ty.clone(), r)),
        );
        let n_applied = args.len().min(params.len());
        let mut deps: Vec<(SizeVar, TySize)> = Vec::new();
        // Non-function arguments first, in order, so lambdas see known element types.
        let is_function_like = |e: ExprId| {
            matches!(
                body.exprs[e],
                Expr::Lambda { .. }
                    | Expr::OpSection(_)
                    | Expr::LeftSection { .. }
                    | Expr::RightSection { .. }
            )
        };
        for pass in 0..2 {
            for idx in 0..n_applied {
                let (arg, param) = (args[idx], &params[idx]);
                if is_function_like(arg) != (pass == 1) {
                    continue;
                }
                let expected = substitute_sizes(&param.ty, &deps);
                self.table.current_origin = Some(arg);
                let found = self.infer_expr(arg, Some(&expected));
                self.expect_ty(Site::Expr(arg), &expected, &found);
                self.table.current_origin = None;
                if let Some(name) = &param.binds_size {
                    let size = self.size_of_expr(arg).unwrap_or_else(|| self.table.new_unknown());
                    deps.push((SizeVar::Param(name.clone()), size));
                }
            }
        }
        // Unapplied dependent parameters: their sizes are unknown.
        for param in &params[n_applied..] {
            if let Some(name) = &param.binds_size {
                let unknown = self.table.new_unknown();
                deps.push((SizeVar::Param(name.clone()), unknown));
            }
        }
        let rest = params[n_applied..].iter().rev().fold(ret, |r, p| Ty::func(p.ty.clone(), r));
        let result = substitute_sizes(&rest, &deps);
        if args.len() > params.len() {
            return self.apply_args(expr, result, &args[params.len()..]);
        }
        result
    }

    fn apply_args(&mut self, expr: ExprId, mut fn_ty: Ty, args: &[ExprId]) -> Ty {
        for &arg in args {
            match self.table.shallow(&fn_ty) {
                Ty::Fn { param, ret } => {
                    let found = self.infer_expr(arg, Some(&param));
                    self.expect_ty(Site::Expr(arg), &param, &found);
                    fn_ty = (*ret).clone();
                }
                Ty::Var(_) => {
                    let param = self.table.new_var(Class::Any);
                    let ret = self.table.new_var(Class::Any);
                    let _ = self.table.unify(&fn_ty, &Ty::func(param.clone(), ret.clone()));
                    let found = self.infer_expr(arg, Some(&param));
                    self.expect_ty(Site::Expr(arg), &param, &found);
                    fn_ty = ret;
                }
                Ty::Error => {
                    self.infer_expr(arg, None);
                    return Ty::Error;
                }
                other => {
                    let ty = self.table.resolve(&other);
                    self.report(InferDiagnostic::NotAFunction { site: Site::Expr(expr), ty });
                    for &rest in args {
                        if !self.result.expr_tys.contains_idx(rest) {
                            self.infer_expr(rest, None);
                        }
                    }
                    return Ty::Error;
                }
            }
        }
        fn_ty
    }

    fn infer_lambda(&mut self, params: &[PatId], body: ExprId, expected: Option<&Ty>) -> Ty {
        let mut expected = expected.map(|t| self.table.shallow(t));
        let mut param_tys = Vec::new();
        for &pat in params {
            let ty = match expected.take() {
                Some(Ty::Fn { param, ret }) => {
                    expected = Some(self.table.shallow(&ret));
                    (*param).clone()
                }
                _ => self.table.new_var(Class::Any),
            };
            self.bind_pat(pat, &ty);
            param_tys.push(ty);
        }
        let body_ty = self.infer_expr(body, expected.as_ref());
        param_tys.into_iter().rev().fold(body_ty, |ret, p| Ty::func(p, ret))
    }

    /// Operand and result types of a binary operator on fresh variables.
    fn op_signature(&mut self, _expr: ExprId, op: BinOp) -> (Ty, Ty, Ty) {
        match op {
            BinOp::And | BinOp::Or => (Ty::bool(), Ty::bool(), Ty::bool()),
            BinOp::Eq | BinOp::Neq => {
                let t = self.table.new_var(Class::Scalar);
                (t.clone(), t, Ty::bool())
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let t = self.table.new_var(Class::Num);
                (t.clone(), t, Ty::bool())
            }
            BinOp::BitOr | BinOp::BitXor | BinOp::BitAnd | BinOp::Shl | BinOp::Shr => {
                let t = self.table.new_var(Class::Int);
                (t.clone(), t.clone(), t)
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem | BinOp::Pow => {
                let t = self.table.new_var(Class::Num);
                (t.clone(), t.clone(), t)
            }
            BinOp::Concat => {
                let elem = self.table.new_var(Class::Any);
                let n = self.table.new_size_var();
                let m = self.table.new_size_var();
                (
                    Ty::array(n.clone(), elem.clone()),
                    Ty::array(m.clone(), elem.clone()),
                    Ty::array(n.add(&m), elem),
                )
            }
        }
    }

    fn infer_binary(&mut self, expr: ExprId, op: BinOp, lhs: ExprId, rhs: ExprId) -> Ty {
        let (lhs_ty, rhs_ty, ret) = self.op_signature(expr, op);
        let found = self.infer_expr(lhs, Some(&lhs_ty));
        self.expect_ty(Site::Expr(lhs), &lhs_ty, &found);
        let found = self.infer_expr(rhs, Some(&rhs_ty));
        self.expect_ty(Site::Expr(rhs), &rhs_ty, &found);
        if op == BinOp::Concat {
            return self.table.resolve(&ret);
        }
        ret
    }

    fn infer_loop(
        &mut self,
        expr: ExprId,
        pat: PatId,
        init: ExprId,
        form: &LoopForm,
        body: ExprId,
    ) -> Ty {
        let init_ty = self.infer_expr(init, None);
        let init_ty = self.table.resolve(&init_ty);
        if init_ty.contains_fn() {
            self.report(InferDiagnostic::FunctionNotAllowed {
                site: Site::Expr(expr),
                context: "a loop parameter",
            });
        }
        // First try with the initial sizes; if an iteration changes a size, check again
        // with that size unknown (LANGUAGE.md: sizes that differ become unknown).
        let snapshot = (self.table.clone(), self.result.clone());
        let body_ty = self.check_loop_body(pat, form, body, &init_ty);
        let changed = self.changed_dims(&init_ty, &body_ty);
        if changed.is_empty() {
            self.expect_ty(Site::Expr(body), &init_ty, &body_ty);
            return init_ty;
        }
        (self.table, self.result) = snapshot;
        let mut dim_idx = 0;
        let generalised = {
            let table = &mut self.table;
            init_ty.map_sizes(&mut |size| {
                dim_idx += 1;
                if changed.contains(&(dim_idx - 1)) { table.new_unknown() } else { size.clone() }
            })
        };
        let body_ty = self.check_loop_body(pat, form, body, &generalised);
        // The generalised sizes are unknown in every iteration, so any size may flow
        // back into them: join instead of unifying.
        if let Err(mismatch) = self.table.join(&generalised, &body_ty) {
            self.report_mismatch(Site::Expr(body), &generalised, &body_ty, mismatch);
        }
        generalised
    }

    fn check_loop_body(&mut self, pat: PatId, form: &LoopForm, body: ExprId, param_ty: &Ty) -> Ty {
        self.bind_pat(pat, param_ty);
        match form {
            LoopForm::For { var, bound } => {
                let bound_ty = self.infer_expr(*bound, Some(&Ty::i64()));
                // The loop counter has the bound's integer type.
                if let Err(mismatch) = self.table.constrain(&bound_ty, Class::Int) {
                    self.report_mismatch(Site::Expr(*bound), &bound_ty, &bound_ty, mismatch);
                }
                self.bind_pat(*var, &bound_ty);
            }
            LoopForm::While { cond } => {
                let cond_ty = self.infer_expr(*cond, Some(&Ty::bool()));
                self.expect_ty(Site::Expr(*cond), &Ty::bool(), &cond_ty);
            }
        }
        self.infer_expr(body, Some(param_ty))
    }

    /// Indices (in `map_sizes` order) of dimensions whose size differs between the
    /// loop parameter and the body's result.
    fn changed_dims(&mut self, param: &Ty, result: &Ty) -> Vec<usize> {
        let mut params = Vec::new();
        param.for_each_size(&mut |s| params.push(s.clone()));
        let resolved = self.table.resolve(result);
        let mut results = Vec::new();
        resolved.for_each_size(&mut |s| results.push(s.clone()));
        if params.len() != results.len() {
            return Vec::new();
        }
        let mut changed = Vec::new();
        for (idx, (p, r)) in params.iter().zip(&results).enumerate() {
            let mut probe = self.table.clone();
            if probe.unify_size(p, r).is_err() {
                changed.push(idx);
            }
        }
        changed
    }

    fn infer_index(&mut self, expr: ExprId, base: ExprId, items: &[IndexItem]) -> Ty {
        let base_ty = self.infer_expr(base, None);
        let mut ty = self.table.resolve(&base_ty);
        let mut kept_dims: Vec<TySize> = Vec::new();
        for (n_done, item) in items.iter().enumerate() {
            let Ty::Array { size, elem } = self.table.shallow(&ty) else {
                if !ty.contains_error() && !matches!(ty, Ty::Var(_)) {
                    let base_ty = self.table.resolve(&base_ty);
                    if n_done == 0 {
                        self.report(InferDiagnostic::NotAnArray {
                            site: Site::Expr(base),
                            ty: base_ty,
                        });
                    } else {
                        self.report(InferDiagnostic::TooManyIndices {
                            site: Site::Expr(expr),
                            ty: base_ty,
                            n_indices: items.len(),
                        });
                    }
                } else if matches!(ty, Ty::Var(_)) {
                    self.report(InferDiagnostic::CannotInfer { site: Site::Expr(base) });
                }
                self.infer_index_items(&items[n_done..]);
                return Ty::Error;
            };
            match item {
                IndexItem::Index(index) => {
                    let index_ty = self.infer_expr(*index, Some(&Ty::i64()));
                    if let Err(mismatch) = self.table.constrain(&index_ty, Class::Int) {
                        self.report_mismatch(Site::Expr(*index), &index_ty, &index_ty, mismatch);
                    }
                }
                IndexItem::Slice { start, end, stride } => {
                    let part = |ctx: &mut Self, e: &Option<ExprId>| {
                        e.map(|e| {
                            let t = ctx.infer_expr(e, Some(&Ty::i64()));
                            ctx.expect_ty(Site::Expr(e), &Ty::i64(), &t);
                            ctx.size_of_expr(e)
                        })
                    };
                    let start_size = part(self, start);
                    let end_size = part(self, end);
                    let stride_size = part(self, stride);
                    let new_size = match (start_size, end_size, stride_size) {
                        (None, None, Some(Some(s))) if s.as_constant() == Some(-1) => size.clone(),
                        (_, _, Some(_)) => self.table.new_unknown(),
                        (Some(Some(a)), Some(Some(b)), None) => b.sub(&a),
                        (Some(Some(a)), None, None) => size.sub(&a),
                        (None, Some(Some(b)), None) => b,
                        (None, None, None) => size.clone(),
                        _ => self.table.new_unknown(),
                    };
                    kept_dims.push(new_size);
                }
            }
            ty = (*elem).clone();
        }
        kept_dims.into_iter().rev().fold(ty, |elem, size| Ty::array(size, elem))
    }

    /// `base with [i, j] = value`: the indices select an element or a row of `base`
    /// (at most its rank), `value` has that element's or row's type, sizes included,
    /// and the result has `base`'s type.
    fn infer_update(
        &mut self,
        expr: ExprId,
        base: ExprId,
        indices: &[ExprId],
        value: ExprId,
    ) -> Ty {
        let base_ty = self.infer_expr(base, None);
        let mut ty = self.table.resolve(&base_ty);
        for (n_done, index) in indices.iter().enumerate() {
            let Ty::Array { elem, .. } = self.table.shallow(&ty) else {
                if !ty.contains_error() && !matches!(ty, Ty::Var(_)) {
                    let base_ty = self.table.resolve(&base_ty);
                    if n_done == 0 {
                        self.report(InferDiagnostic::NotAnArray {
                            site: Site::Expr(base),
                            ty: base_ty,
                        });
                    } else {
                        self.report(InferDiagnostic::TooManyIndices {
                            site: Site::Expr(expr),
                            ty: base_ty,
                            n_indices: indices.len(),
                        });
                    }
                } else if matches!(ty, Ty::Var(_)) {
                    self.report(InferDiagnostic::CannotInfer { site: Site::Expr(base) });
                }
                for rest in &indices[n_done..] {
                    self.infer_expr(*rest, None);
                }
                self.infer_expr(value, None);
                return Ty::Error;
            };
            let index_ty = self.infer_expr(*index, Some(&Ty::i64()));
            if let Err(mismatch) = self.table.constrain(&index_ty, Class::Int) {
                self.report_mismatch(Site::Expr(*index), &index_ty, &index_ty, mismatch);
            }
            ty = (*elem).clone();
        }
        let value_ty = self.infer_expr(value, Some(&ty));
        self.expect_ty(Site::Expr(value), &ty, &value_ty);
        base_ty
    }

    fn infer_index_items(&mut self, items: &[IndexItem]) {
        for item in items {
            match item {
                IndexItem::Index(e) => {
                    self.infer_expr(*e, None);
                }
                IndexItem::Slice { start, end, stride } => {
                    for e in [start, end, stride].into_iter().flatten() {
                        self.infer_expr(*e, None);
                    }
                }
            }
        }
    }

    /// The size an `i64` expression denotes, if it is a size expression: a literal,
    /// a size variable, `length xs`, or `+ - * /` of those.
    pub(crate) fn size_of_expr(&mut self, expr: ExprId) -> Option<TySize> {
        let body = Arc::clone(&self.body);
        match &body.exprs[expr] {
            Expr::Literal(Literal::Int { value, .. }) => {
                i64::try_from(*value).ok().map(TySize::constant)
            }
            Expr::Path { res: Resolution::SizeParam(name), .. } => {
                Some(TySize::var(SizeVar::Param(name.clone())))
            }
            Expr::Path { res: Resolution::Local(pat), .. } => self.local_sizes.get(*pat).cloned(),
            Expr::Binary { op, lhs, rhs } => {
                let lhs = self.size_of_expr(*lhs)?;
                let rhs = self.size_of_expr(*rhs)?;
                match op {
                    BinOp::Add => Some(lhs.add(&rhs)),
                    BinOp::Sub => Some(lhs.sub(&rhs)),
                    BinOp::Mul => Some(lhs.mul(&rhs)),
                    BinOp::Div => Some(lhs.div_exact(&rhs)),
                    _ => None,
                }
            }
            Expr::Call { callee, args } if args.len() == 1 => match &body.exprs[*callee] {
                Expr::Path { res: Resolution::Builtin(Builtin::Length), .. } => {
                    let ty = self.table.resolve(&self.result.expr_ty(args[0]));
                    match ty {
                        Ty::Array { size, .. } => Some(size),
                        _ => None,
                    }
                }
                _ => None,
            },
            Expr::Ascribe { expr, .. } => self.size_of_expr(*expr),
            _ => None,
        }
    }

    /// After `let k = e` with `k: i64`: `k` names the size `e` denotes, or a fresh
    /// local size variable. Returns the local variable to forget when it escapes.
    fn bind_let_size(&mut self, pat: PatId, value: ExprId, ty: &Ty) -> Option<SizeVar> {
        let Pat::Bind { name } = &self.body.pats[pat] else { return None };
        let name = name.clone();
        if self.table.resolve(ty) != Ty::i64() {
            return None;
        }
        match self.size_of_expr(value) {
            Some(size) => {
                self.local_sizes.insert(pat, size.clone());
                self.size_scope.push((name, size));
                None
            }
            None => {
                let var = SizeVar::Local { name: name.clone(), id: pat.into_raw().into_u32() };
                let size = TySize::var(var.clone());
                self.local_sizes.insert(pat, size.clone());
                self.size_scope.push((name, size));
                Some(var)
            }
        }
    }

    /// A size that mentions a local leaving its scope becomes a fresh unknown.
    fn forget_local_size(&mut self, ty: &Ty, var: &SizeVar) -> Ty {
        let resolved = self.table.resolve(ty);
        let table = &mut self.table;
        resolved.map_sizes(&mut |size| {
            if size.contains_var(var) { table.new_unknown() } else { size.clone() }
        })
    }

    pub(crate) fn bind_pat(&mut self, pat: PatId, ty: &Ty) {
        let body = Arc::clone(&self.body);
        self.result.pat_tys.insert(pat, ty.clone());
        match &body.pats[pat] {
            Pat::Bind { .. } | Pat::Wild | Pat::Missing => {}
            Pat::Tuple(pats) => {
                let elems: Vec<Ty> = match self.table.shallow(ty) {
                    Ty::Tuple(elems) if elems.len() == pats.len() => elems.to_vec(),
                    Ty::Error => vec![Ty::Error; pats.len()],
                    other => {
                        let fresh: Vec<Ty> =
                            pats.iter().map(|_| self.table.new_var(Class::Any)).collect();
                        let tuple = Ty::tuple(fresh.clone());
                        if let Err(mismatch) = self.table.unify(&tuple, &other) {
                            self.report_mismatch(Site::Pat(pat), &tuple, &other, mismatch);
                        }
                        fresh
                    }
                };
                for (&p, t) in pats.iter().zip(elems) {
                    self.bind_pat(p, &t);
                }
            }
            Pat::Record(fields) => {
                // A record pattern names every field, so it gives the whole type.
                let mut names: Vec<Name> = Vec::new();
                let mut fresh: Vec<(Name, Ty)> = Vec::new();
                for (name, _) in fields {
                    if !names.contains(name) {
                        names.push(name.clone());
                        fresh.push((name.clone(), self.table.new_var(Class::Any)));
                    }
                }
                let record = Ty::record(fresh.clone());
                if let Err(mismatch) = self.table.unify(&record, ty) {
                    self.report_mismatch(Site::Pat(pat), &record, ty, mismatch);
                }
                for (name, p) in fields {
                    let field_ty =
                        fresh.iter().find(|(n, _)| n == name).map_or(Ty::Error, |(_, t)| t.clone());
                    self.bind_pat(*p, &field_ty);
                }
            }
            Pat::Ascribed { pat: inner, ty: ty_ref } => {
                let annotated = self.lower_type_ref(ty_ref, Site::Pat(pat));
                self.expect_ty(Site::Pat(pat), &annotated, ty);
                self.bind_pat(*inner, &annotated);
            }
        }
    }
}

pub(crate) fn substitute_sizes(ty: &Ty, deps: &[(SizeVar, TySize)]) -> Ty {
    if deps.is_empty() {
        return ty.clone();
    }
    ty.map_sizes(&mut |size| {
        size.substitute(&mut |v| deps.iter().find(|(d, _)| d == v).map(|(_, s)| s.clone()))
    })
}
