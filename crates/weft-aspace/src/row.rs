//! Rows (digest 2.4, 3.2): a bitset of labels plus an optional tail variable, and the store of
//! row-variable bindings with their lacks predicates.
//!
//! The representation is the one the digest recommends and verified by brute force (3.2): a row
//! is `{S | v}` or `{S}`, every variable carries `lacks(v)`, and the store keeps the invariant
//! that every row `{S | v}` ever built or bound satisfies `S ⊆ lacks(v)` (so a label never occurs
//! twice). Bindings form a union-find forest: a bound variable points to a row whose tail may be
//! bound in turn; [`RowStore::find`] compresses paths and accumulates labels on the way.
//!
//! The unifier is the 3.2 table, including the two side conditions the paper's Fig. 6 misses
//! (digest 3.1, 8.4, 8.5): the tail occurs check (`{global | ρ} ~ {local | ρ}` fails instead of
//! looping) and lacks propagation (the fresh tail of a two-variable unification inherits both
//! variables' lacks sets plus all labels of both rows). A failed unification binds nothing.

use std::fmt;

use crate::space::{Space, SpaceSet};

/// A row variable. Display is `r<id>` for store variables; schemes rename their quantified
/// variables to `r1..rn` when they print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowVar(pub u32);

/// A row `{labels | tail}`; `tail: None` is a closed row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Row {
    pub labels: SpaceSet,
    pub tail: Option<RowVar>,
}

/// An opaque handle the client attaches to a lacks predicate to remember why it was imposed
/// (the inference uses it to say which store or bound rejects a label).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cause(pub u32);

/// Which argument of a binary row operation a label came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    Left,
    Right,
}

/// Why two rows do not unify, or a label cannot be inserted or excluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowError {
    /// `label` occurs only in the row on `side`, and the other row is closed without it (for
    /// [`RowStore::insert`]: the label asked for, into a closed row).
    Missing { label: Space, side: Side },
    /// `label` from the row on `side` would enter `var` (the other row's tail), which lacks it.
    /// `cause` is what the client attached to that lacks predicate, if anything.
    Lacks { label: Space, var: RowVar, side: Side, cause: Option<Cause> },
    /// Both rows have the same tail but different labels: the tail occurs check (digest 8.4).
    /// `label` is one label only the row on `side` has.
    Occurs { label: Space, side: Side },
    /// The predicate `row \ label` can never hold, because `label` is in the row (digest 2.5).
    Duplicate { label: Space },
}

/// Evidence for a predicate `row \ a` (digest 3.8, Fig. 9): the rank of `a` among the row's
/// labels, plus the evidence variable of `tail \ a` for an open row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Evidence {
    pub offset: u32,
    pub var: Option<RowVar>,
}

/// Row-variable bindings and lacks sets.
#[derive(Clone, Debug, Default)]
pub struct RowStore {
    vars: Vec<VarData>,
}

#[derive(Clone, Debug)]
struct VarData {
    binding: Option<Row>,
    lacks: SpaceSet,
    /// One optional cause per label, indexed by [`Space::id`].
    causes: [Option<Cause>; 4],
}

impl Row {
    pub fn closed(labels: SpaceSet) -> Row {
        Row { labels, tail: None }
    }

    pub fn empty() -> Row {
        Row::closed(SpaceSet::EMPTY)
    }

    pub fn var(var: RowVar) -> Row {
        Row { labels: SpaceSet::EMPTY, tail: Some(var) }
    }

    pub fn open(labels: SpaceSet, var: RowVar) -> Row {
        Row { labels, tail: Some(var) }
    }
}

impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_row(f, *self, &|var: RowVar| format!("r{}", var.0))
    }
}

/// Prints `{global, local | r2}`, `{global}` or `r2`, naming the tail with `name`.
pub(crate) fn write_row(
    f: &mut fmt::Formatter<'_>,
    row: Row,
    name: &dyn Fn(RowVar) -> String,
) -> fmt::Result {
    match row.tail {
        None => write!(f, "{}", row.labels),
        Some(var) if row.labels.is_empty() => f.write_str(&name(var)),
        Some(var) => {
            let labels: Vec<&str> = row.labels.iter().map(Space::name).collect();
            write!(f, "{{{} | {}}}", labels.join(", "), name(var))
        }
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.var, self.offset) {
            (None, offset) => write!(f, "{offset}"),
            (Some(var), 0) => write!(f, "ev(r{})", var.0),
            (Some(var), offset) => write!(f, "ev(r{})+{offset}", var.0),
        }
    }
}

/// The evidence of a closed `closed \ a` (digest E11): the number of labels in `closed` whose ID
/// is below `a`'s, i.e. the index at which `a` would be inserted into the sorted row. Meaningful
/// only when `a ∉ closed` (otherwise the predicate fails; the rank is returned anyway).
pub fn evidence(closed: SpaceSet, a: Space) -> u32 {
    closed.iter().filter(|label| *label < a).map(|_| 1).sum()
}

impl RowStore {
    pub fn new() -> RowStore {
        RowStore::default()
    }

    /// A fresh unbound variable lacking `lacks`.
    pub fn fresh(&mut self, lacks: SpaceSet) -> RowVar {
        let var = RowVar(u32::try_from(self.vars.len()).expect("invariant: < 2^32 row variables"));
        self.vars.push(VarData { binding: None, lacks, causes: [None; 4] });
        var
    }

    /// Number of variables ever created.
    pub fn n_vars(&self) -> usize {
        self.vars.len()
    }

    fn data(&self, var: RowVar) -> &VarData {
        &self.vars[var.0 as usize]
    }

    fn data_mut(&mut self, var: RowVar) -> &mut VarData {
        &mut self.vars[var.0 as usize]
    }

    /// The lacks set of `var` (of its representative's tail if `var` is bound, the set it had
    /// when it was bound).
    pub fn lacks(&self, var: RowVar) -> SpaceSet {
        self.data(var).lacks
    }

    /// The cause attached to `var \ label`, if any.
    pub fn lacks_cause(&self, var: RowVar, label: Space) -> Option<Cause> {
        self.data(var).causes[label.id() as usize]
    }

    /// Whether `var` is still unbound.
    pub fn is_unbound(&self, var: RowVar) -> bool {
        self.data(var).binding.is_none()
    }

    /// `row` with every bound tail substituted: the canonical form, whose tail (if any) is
    /// unbound.
    pub fn resolve(&self, row: &Row) -> Row {
        let mut labels = row.labels;
        let mut tail = row.tail;
        while let Some(var) = tail {
            match self.data(var).binding {
                None => break,
                Some(bound) => {
                    labels = labels.union(bound.labels);
                    tail = bound.tail;
                }
            }
        }
        Row { labels, tail }
    }

    /// The canonical row `var` stands for, compressing the path on the way.
    pub fn find(&mut self, var: RowVar) -> Row {
        let resolved = self.resolve(&Row::var(var));
        // Path compression: every bound variable on the path now points at the final tail.
        let mut cursor = Some(var);
        while let Some(current) = cursor {
            let Some(bound) = self.data(current).binding else { break };
            let rest = self.resolve(&bound);
            self.data_mut(current).binding = Some(rest);
            cursor = bound.tail;
        }
        resolved
    }

    fn resolve_mut(&mut self, row: &Row) -> Row {
        match row.tail {
            None => *row,
            Some(var) => {
                let found = self.find(var);
                Row { labels: row.labels.union(found.labels), tail: found.tail }
            }
        }
    }

    /// Records the well-formedness predicate of `{S | v}`: `v` lacks every label of `S`.
    fn assume_well_formed(&mut self, row: &Row) {
        if let Some(var) = row.tail {
            self.data_mut(var).lacks = self.data(var).lacks.union(row.labels);
        }
    }

    fn bind(&mut self, var: RowVar, row: Row) {
        debug_assert!(self.is_unbound(var), "invariant: only unbound variables are bound");
        self.data_mut(var).binding = Some(row);
    }

    /// A fresh variable whose lacks set and causes are the union of those of `vars`, plus
    /// `extra` (without causes).
    fn fresh_merged(&mut self, vars: &[RowVar], extra: SpaceSet) -> RowVar {
        let mut lacks = extra;
        let mut causes = [None; 4];
        for var in vars {
            let data = self.data(*var);
            lacks = lacks.union(data.lacks);
            for (slot, cause) in causes.iter_mut().zip(data.causes) {
                if slot.is_none() {
                    *slot = cause;
                }
            }
        }
        let fresh = self.fresh(lacks);
        self.data_mut(fresh).causes = causes;
        fresh
    }

    /// Makes `left` and `right` equal (digest 3.2), or fails without binding anything.
    pub fn unify(&mut self, left: &Row, right: &Row) -> Result<(), RowError> {
        let left = self.resolve_mut(left);
        let right = self.resolve_mut(right);
        self.assume_well_formed(&left);
        self.assume_well_formed(&right);
        let (s1, s2) = (left.labels, right.labels);
        match (left.tail, right.tail) {
            (None, None) => {
                if let Some(label) = s1.minus(s2).first() {
                    return Err(RowError::Missing { label, side: Side::Left });
                }
                if let Some(label) = s2.minus(s1).first() {
                    return Err(RowError::Missing { label, side: Side::Right });
                }
                Ok(())
            }
            (Some(var), None) => self.unify_open_closed(var, s1, s2, Side::Left),
            (None, Some(var)) => self.unify_open_closed(var, s2, s1, Side::Right),
            (Some(v1), Some(v2)) if v1 == v2 => {
                // The tail occurs check: `{S1 | v} ~ {S2 | v}` has a solution only if S1 = S2.
                if let Some(label) = s1.minus(s2).first() {
                    return Err(RowError::Occurs { label, side: Side::Left });
                }
                if let Some(label) = s2.minus(s1).first() {
                    return Err(RowError::Occurs { label, side: Side::Right });
                }
                Ok(())
            }
            (Some(v1), Some(v2)) => {
                let into_v1 = s2.minus(s1);
                let into_v2 = s1.minus(s2);
                if let Some(label) = into_v1.intersect(self.lacks(v1)).first() {
                    let cause = self.lacks_cause(v1, label);
                    return Err(RowError::Lacks { label, var: v1, side: Side::Right, cause });
                }
                if let Some(label) = into_v2.intersect(self.lacks(v2)).first() {
                    let cause = self.lacks_cause(v2, label);
                    return Err(RowError::Lacks { label, var: v2, side: Side::Left, cause });
                }
                let v3 = self.fresh_merged(&[v1, v2], s1.union(s2));
                self.bind(v1, Row::open(into_v1, v3));
                self.bind(v2, Row::open(into_v2, v3));
                Ok(())
            }
        }
    }

    /// `{open_labels | var} ~ {closed}`, where the open row is on `open_side`.
    fn unify_open_closed(
        &mut self,
        var: RowVar,
        open_labels: SpaceSet,
        closed: SpaceSet,
        open_side: Side,
    ) -> Result<(), RowError> {
        let closed_side = match open_side {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        };
        if let Some(label) = open_labels.minus(closed).first() {
            return Err(RowError::Missing { label, side: open_side });
        }
        let need = closed.minus(open_labels);
        if let Some(label) = need.intersect(self.lacks(var)).first() {
            let cause = self.lacks_cause(var, label);
            return Err(RowError::Lacks { label, var, side: closed_side, cause });
        }
        self.bind(var, Row::closed(need));
        Ok(())
    }

    /// Insertion `a ∈^I row` (digest Fig. 7): makes `label` a member of `row` and returns the
    /// resolved row. Inserting into a closed row without the label fails (`Missing`), and into a
    /// variable that lacks it fails (`Lacks`); both report `side: Left` for the label.
    pub fn insert(&mut self, label: Space, row: &Row) -> Result<Row, RowError> {
        let resolved = self.resolve_mut(row);
        if resolved.labels.contains(label) {
            return Ok(resolved);
        }
        let Some(var) = resolved.tail else {
            return Err(RowError::Missing { label, side: Side::Left });
        };
        if self.lacks(var).contains(label) {
            let cause = self.lacks_cause(var, label);
            return Err(RowError::Lacks { label, var, side: Side::Left, cause });
        }
        let rest = self.fresh_merged(&[var], resolved.labels.with(label));
        self.bind(var, Row::open(SpaceSet::single(label), rest));
        Ok(self.resolve(&resolved))
    }

    /// Imposes the predicate `row \ label`, simplifying it first (digest 3.5): a closed row
    /// without the label discharges it, an open row adds `label` to its tail's lacks set (keeping
    /// an earlier cause), and a row containing the label is a `Duplicate` error.
    pub fn add_lacks(
        &mut self,
        row: &Row,
        label: Space,
        cause: Option<Cause>,
    ) -> Result<(), RowError> {
        let resolved = self.resolve_mut(row);
        if resolved.labels.contains(label) {
            return Err(RowError::Duplicate { label });
        }
        if let Some(var) = resolved.tail {
            let data = self.data_mut(var);
            data.lacks.insert(label);
            let slot = &mut data.causes[label.id() as usize];
            if slot.is_none() {
                *slot = cause;
            }
        }
        Ok(())
    }

    /// Entailment `P ⊨ row \ label` (digest Fig. 4) with `P` the current lacks sets.
    pub fn entails(&self, row: &Row, label: Space) -> bool {
        let resolved = self.resolve(row);
        !resolved.labels.contains(label)
            && resolved.tail.is_none_or(|var| self.lacks(var).contains(label))
    }

    /// Context reduction of `row \ label` (digest 3.5): `Ok(None)` when it is discharged (closed
    /// row), `Ok(Some(v))` when it reduces to the head-normal `v \ label`, `Duplicate` when the
    /// label is in the row.
    pub fn simplify(&self, row: &Row, label: Space) -> Result<Option<RowVar>, RowError> {
        let resolved = self.resolve(row);
        if resolved.labels.contains(label) {
            return Err(RowError::Duplicate { label });
        }
        Ok(resolved.tail)
    }

    /// Evidence for `row \ label` (digest Fig. 9, E11): the rank of `label` among the row's
    /// labels, plus the evidence variable for `tail \ label` when the row is open.
    pub fn evidence(&self, row: &Row, label: Space) -> Result<Evidence, RowError> {
        let tail = self.simplify(row, label)?;
        let resolved = self.resolve(row);
        Ok(Evidence { offset: evidence(resolved.labels, label), var: tail })
    }
}
