//! Strategy-level checks (LANGUAGE.md section 6) and `to_local` placement (section 7).
//!
//! "In the body" means the function argument of the innermost enclosing *annotated*
//! combinator; unannotated combinators are transparent. An `entry` body starts at
//! host level. A `def` may be called from any level, so its top level accepts every
//! annotation and only what is nested inside annotated combinators is checked here;
//! calls are checked again once defs are inlined into kernels.

use std::sync::Arc;

use crate::builtins::Builtin;
use crate::expr_store::{Expr, ExprId, IndexItem, Level, LoopForm, Resolution};
use crate::inference::{InferCtx, InferDiagnostic, Site};

/// Where a combinator stands, for the level rules (LANGUAGE.md section 6). The one
/// copy of the rules: the checker reports violations with it, and the editor's
/// strategy assists propose only annotations it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelContext {
    /// The top of a `def`: called from a level not known here.
    AnyLevel,
    Host,
    /// Directly in the body of a `map@group`.
    Group,
    /// In the body of `@grid`, `@thread`, `@seq`, or a reduce/scan operator.
    Sequential,
}

impl LevelContext {
    fn describe(self) -> &'static str {
        match self {
            LevelContext::AnyLevel => "at any level",
            LevelContext::Host => "at host level",
            LevelContext::Group => "in the body of a `map@group`",
            LevelContext::Sequential => "in a sequential body (`@grid`, `@thread` or `@seq`)",
        }
    }

    fn legal(self) -> &'static str {
        match self {
            LevelContext::AnyLevel => "any annotation",
            LevelContext::Host => "`map@grid`, `map@group`, `reduce@grid`, `scan@grid`",
            LevelContext::Group => "`map@thread`, `reduce@group`, `scan@group`, `@seq`",
            LevelContext::Sequential => "`@seq` only",
        }
    }

    /// Whether `builtin` may carry `level` here.
    pub fn allows(self, builtin: Builtin, level: Level) -> bool {
        let is_map = matches!(builtin, Builtin::Map(_) | Builtin::Generate);
        match self {
            LevelContext::AnyLevel => true,
            LevelContext::Host => match level {
                Level::Grid => true,
                Level::Group => is_map,
                Level::Thread | Level::Seq => false,
            },
            LevelContext::Group => match level {
                Level::Thread => is_map,
                Level::Group => !is_map,
                Level::Seq => true,
                Level::Grid => false,
            },
            LevelContext::Sequential => level == Level::Seq,
        }
    }

    /// The context of the body of `builtin` annotated with `level`.
    pub fn enter(builtin: Builtin, level: Level) -> LevelContext {
        match (builtin, level) {
            (Builtin::Map(_) | Builtin::Generate, Level::Group) => LevelContext::Group,
            _ => LevelContext::Sequential,
        }
    }
}

pub(crate) fn check_levels(ctx: &mut InferCtx<'_>) {
    let body = Arc::clone(&ctx.body);
    let Some(root) = body.root else { return };
    let start = if ctx.sig.is_entry { LevelContext::Host } else { LevelContext::AnyLevel };
    let mut diagnostics = Vec::new();
    // An explicit stack: bodies may nest 100,000 levels.
    // Each item: the expression, its level context, whether it is inside a
    // `map@group` body, and the innermost annotated combinator around it.
    type Enclosing = Option<(ExprId, String)>;
    let mut stack: Vec<(ExprId, LevelContext, bool, Enclosing)> = vec![(root, start, false, None)];
    while let Some((expr, context, in_group, enclosing)) = stack.pop() {
        let mut push = |e: ExprId| stack.push((e, context, in_group, enclosing.clone()));
        match &body.exprs[expr] {
            Expr::Call { callee, args } => {
                let annotated = match &body.exprs[*callee] {
                    Expr::Path { res: Resolution::Builtin(b), level: Some(level), .. } => {
                        Some((*b, *level))
                    }
                    _ => None,
                };
                let is_to_local = matches!(
                    &body.exprs[*callee],
                    Expr::Path { res: Resolution::Builtin(Builtin::ToLocal), .. }
                );
                if is_to_local && !in_group {
                    diagnostics.push(InferDiagnostic::ToLocalOutsideGroup {
                        site: Site::Expr(*callee),
                        context: enclosing.clone().map(|(e, n)| (Site::Expr(e), n)),
                    });
                }
                push(*callee);
                match annotated {
                    Some((builtin, level)) => {
                        let function_arg = builtin.function_arg();
                        let inner = LevelContext::enter(builtin, level);
                        if inner == LevelContext::Group
                            && let Some(&arg) = function_arg.and_then(|idx| args.get(idx))
                            && let Expr::Lambda { body: lambda_body, .. } = &body.exprs[arg]
                            && let Some((local, via)) = local_result(&body, *lambda_body)
                        {
                            diagnostics.push(InferDiagnostic::LocalEscapesGroup {
                                site: Site::Expr(local),
                                via: via.into_iter().map(Site::Expr).collect(),
                                group: Site::Expr(*callee),
                            });
                        }
                        let inner_group = in_group || inner == LevelContext::Group;
                        let name = match &body.exprs[*callee] {
                            Expr::Path { name, .. } => format!("{name}@{}", level.name()),
                            _ => level.name().to_owned(),
                        };
                        let inner_enclosing = Some((*callee, name));
                        for (idx, &arg) in args.iter().enumerate() {
                            if Some(idx) == function_arg {
                                stack.push((arg, inner, inner_group, inner_enclosing.clone()));
                            } else {
                                stack.push((arg, context, in_group, enclosing.clone()));
                            }
                        }
                    }
                    None => args
                        .iter()
                        .for_each(|&a| stack.push((a, context, in_group, enclosing.clone()))),
                }
            }
            Expr::Path { res: Resolution::Builtin(builtin), level: Some(level), name } => {
                if !context.allows(*builtin, *level) {
                    diagnostics.push(InferDiagnostic::IllegalLevel {
                        site: Site::Expr(expr),
                        found: format!("{name}@{}", level.name()),
                        context: context.describe(),
                        legal: context.legal(),
                    });
                }
            }
            Expr::Path { res: Resolution::Builtin(Builtin::ToLocal), .. } if !in_group => {
                // `to_local` used as a value (not called) outside a group.
                diagnostics.push(InferDiagnostic::ToLocalOutsideGroup {
                    site: Site::Expr(expr),
                    context: enclosing.clone().map(|(e, n)| (Site::Expr(e), n)),
                });
            }
            Expr::Path { .. } | Expr::Missing | Expr::Literal(_) | Expr::OpSection(_) => {}
            Expr::Tuple(elems) | Expr::Array(elems) => elems.iter().for_each(|&e| push(e)),
            Expr::Binary { lhs, rhs, .. } => {
                push(*lhs);
                push(*rhs);
            }
            Expr::Unary { operand, .. } => push(*operand),
            Expr::Lambda { body, .. } => push(*body),
            Expr::LeftSection { lhs: e, .. } | Expr::RightSection { rhs: e, .. } => push(*e),
            Expr::Let { value, body, .. } => {
                push(*value);
                push(*body);
            }
            Expr::If { cond, then_branch, else_branch } => {
                push(*cond);
                push(*then_branch);
                push(*else_branch);
            }
            Expr::Loop { init, form, body, .. } => {
                push(*init);
                match form {
                    LoopForm::For { bound, .. } => push(*bound),
                    LoopForm::While { cond } => push(*cond),
                }
                push(*body);
            }
            Expr::Index { base, items } => {
                push(*base);
                for item in items {
                    match item {
                        IndexItem::Index(e) => push(*e),
                        IndexItem::Slice { start, end, stride } => {
                            [start, end, stride].into_iter().flatten().for_each(|e| push(*e));
                        }
                    }
                }
            }
            Expr::Proj { base, .. } | Expr::Field { base, .. } => push(*base),
            Expr::Record(fields) => fields.iter().for_each(|(_, e)| push(*e)),
            Expr::RecordUpdate { base, value, .. } => {
                push(*base);
                push(*value);
            }
            Expr::Ascribe { expr, .. } | Expr::Coerce { expr, .. } => push(*expr),
            Expr::Update { base, indices, value } => {
                push(*base);
                indices.iter().for_each(|e| push(*e));
                push(*value);
            }
        }
    }
    for diagnostic in diagnostics {
        ctx.report_level(diagnostic);
    }
}

/// The `to_local` call whose array is the value of `expr`, following `let` bodies,
/// `if` branches and let-bound names: such an array would outlive its work-group.
/// Also returns the names it flows through (the uses of let-bound names), in order
/// from the result back to the `to_local`.
fn local_result(body: &crate::expr_store::Body, expr: ExprId) -> Option<(ExprId, Vec<ExprId>)> {
    local_result_in(body, expr, Vec::new())
}

/// [`local_result`] with the `let`s already entered (a branch of an `if` sees the
/// names bound before it).
fn local_result_in(
    body: &crate::expr_store::Body,
    expr: ExprId,
    mut bound: Vec<(crate::expr_store::PatId, ExprId)>,
) -> Option<(ExprId, Vec<ExprId>)> {
    let mut expr = expr;
    let mut via = Vec::new();
    // Bounded by the body's size: each step moves to a sub-expression.
    for _ in 0..body.exprs.len() {
        match &body.exprs[expr] {
            Expr::Let { pat, value, body: let_body, .. } => {
                bound.push((*pat, *value));
                expr = *let_body;
            }
            Expr::If { then_branch, else_branch, .. } => {
                let found = local_result_in(body, *then_branch, bound.clone())
                    .or_else(|| local_result_in(body, *else_branch, bound))?;
                via.extend(found.1);
                return Some((found.0, via));
            }
            Expr::Path { res: Resolution::Local(pat), .. } => {
                via.push(expr);
                expr = bound.iter().rev().find(|(p, _)| p == pat)?.1;
            }
            Expr::Call { callee, .. } => {
                return matches!(
                    &body.exprs[*callee],
                    Expr::Path { res: Resolution::Builtin(Builtin::ToLocal), .. }
                )
                .then_some((expr, via));
            }
            _ => return None,
        }
    }
    None
}

impl InferCtx<'_> {
    fn report_level(&mut self, diagnostic: InferDiagnostic) {
        if !self.result.diagnostics.contains(&diagnostic) {
            self.result.diagnostics.push(diagnostic);
        }
    }
}
