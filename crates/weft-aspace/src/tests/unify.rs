//! The unifier against brute-force enumeration (digest section 5, items 1-6), and the E10/E11
//! tables.

use expect_test::expect;
use proptest::prelude::*;

use crate::{Row, RowError, RowStore, RowVar, Space, SpaceSet, evidence};

/// A ground assignment of the two original variables.
type Ground = [SpaceSet; 2];

#[derive(Clone, Debug)]
struct Problem {
    lacks: [SpaceSet; 2],
    left: (SpaceSet, Option<usize>),
    right: (SpaceSet, Option<usize>),
}

fn row_strategy(lacks: [SpaceSet; 2]) -> impl Strategy<Value = (SpaceSet, Option<usize>)> {
    (0u8..16, prop_oneof![Just(None), Just(Some(0usize)), Just(Some(1usize))]).prop_map(
        move |(bits, tail)| {
            let labels = SpaceSet::from_bits(bits);
            // Well-formed: an open row's labels are lacked by its tail.
            match tail {
                Some(idx) => (labels.intersect(lacks[idx]), tail),
                None => (labels, None),
            }
        },
    )
}

fn problem_strategy() -> impl Strategy<Value = Problem> {
    (0u8..16, 0u8..16).prop_flat_map(|(l0, l1)| {
        let lacks = [SpaceSet::from_bits(l0), SpaceSet::from_bits(l1)];
        (row_strategy(lacks), row_strategy(lacks)).prop_map(move |(left, right)| Problem {
            lacks,
            left,
            right,
        })
    })
}

fn subsets() -> impl Iterator<Item = SpaceSet> {
    (0u8..16).map(SpaceSet::from_bits)
}

fn eval(row: (SpaceSet, Option<usize>), ground: Ground) -> SpaceSet {
    match row.1 {
        None => row.0,
        Some(idx) => row.0.union(ground[idx]),
    }
}

/// Every ground assignment respecting the lacks sets that makes both rows equal.
fn ground_solutions(problem: &Problem) -> Vec<Ground> {
    let mut out = Vec::new();
    for g0 in subsets().filter(|set| set.intersect(problem.lacks[0]).is_empty()) {
        for g1 in subsets().filter(|set| set.intersect(problem.lacks[1]).is_empty()) {
            let ground = [g0, g1];
            if eval(problem.left, ground) == eval(problem.right, ground) {
                out.push(ground);
            }
        }
    }
    out.sort();
    out
}

fn to_row(vars: [RowVar; 2], row: (SpaceSet, Option<usize>)) -> Row {
    Row { labels: row.0, tail: row.1.map(|idx| vars[idx]) }
}

/// Runs the unifier; on success returns the ground instances of the unifier, restricted to the
/// original variables.
fn unifier_instances(problem: &Problem) -> Result<Vec<Ground>, RowError> {
    let mut store = RowStore::new();
    let vars = [store.fresh(problem.lacks[0]), store.fresh(problem.lacks[1])];
    store.unify(&to_row(vars, problem.left), &to_row(vars, problem.right))?;
    let resolved = [store.resolve(&Row::var(vars[0])), store.resolve(&Row::var(vars[1]))];
    // Invariant: resolved rows never carry a label their tail may also contain.
    for row in resolved {
        if let Some(tail) = row.tail {
            assert!(row.labels.is_subset(store.lacks(tail)), "ill-formed {row}");
        }
    }
    let mut free: Vec<RowVar> = resolved.iter().filter_map(|row| row.tail).collect();
    free.sort();
    free.dedup();
    let mut out = Vec::new();
    let n_free = free.len();
    let mut choice = vec![0u8; n_free];
    loop {
        let value = |var: RowVar| {
            let idx = free.iter().position(|free_var| *free_var == var).unwrap();
            SpaceSet::from_bits(choice[idx])
        };
        let respects = free.iter().all(|var| value(*var).intersect(store.lacks(*var)).is_empty());
        if respects {
            let ground = resolved.map(|row| match row.tail {
                None => row.labels,
                Some(var) => row.labels.union(value(var)),
            });
            // The instance must respect the original lacks sets too (soundness).
            assert!(ground[0].intersect(problem.lacks[0]).is_empty());
            assert!(ground[1].intersect(problem.lacks[1]).is_empty());
            out.push(ground);
        }
        // Next choice vector (base 16).
        let mut idx = 0;
        loop {
            if idx == n_free {
                out.sort();
                out.dedup();
                return Ok(out);
            }
            choice[idx] += 1;
            if choice[idx] < 16 {
                break;
            }
            choice[idx] = 0;
            idx += 1;
        }
    }
}

fn permute_set(set: SpaceSet, perm: &[Space; 4]) -> SpaceSet {
    set.iter().map(|space| perm[space.id() as usize]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Items 1 and 2: the ground solutions are exactly the ground instances of the unifier,
    /// and unification fails iff there is no ground solution.
    #[test]
    fn unifier_is_most_general_and_complete(problem in problem_strategy()) {
        let expected = ground_solutions(&problem);
        match unifier_instances(&problem) {
            Ok(instances) => prop_assert_eq!(instances, expected),
            Err(error) => prop_assert!(expected.is_empty(), "{error:?} but {expected:?}"),
        }
    }

    /// Item 4 (and digest 8.22): renaming the labels does not change whether or how rows unify.
    #[test]
    fn label_permutation_does_not_change_unification(
        problem in problem_strategy(),
        perm in Just(Space::ALL).prop_shuffle(),
    ) {
        let perm: [Space; 4] = perm;
        let permuted = Problem {
            lacks: problem.lacks.map(|set| permute_set(set, &perm)),
            left: (permute_set(problem.left.0, &perm), problem.left.1),
            right: (permute_set(problem.right.0, &perm), problem.right.1),
        };
        let original = unifier_instances(&problem).ok().map(|grounds| {
            let mut mapped: Vec<Ground> =
                grounds.into_iter().map(|g| g.map(|set| permute_set(set, &perm))).collect();
            mapped.sort();
            mapped
        });
        prop_assert_eq!(original, unifier_instances(&permuted).ok());
    }

    /// Item 3: after insertion the label is a member; a closed row without it refuses.
    #[test]
    fn insertion_makes_the_label_a_member(problem in problem_strategy(), label_id in 0usize..4) {
        let label = Space::ALL[label_id];
        let mut store = RowStore::new();
        let vars = [store.fresh(problem.lacks[0]), store.fresh(problem.lacks[1])];
        let row = to_row(vars, problem.left);
        match store.insert(label, &row) {
            Ok(inserted) => {
                prop_assert!(inserted.labels.contains(label));
                prop_assert!(store.resolve(&row).labels.contains(label));
                if problem.left.0.contains(label) {
                    prop_assert_eq!(store.n_vars(), 2, "inserting a present label is the identity");
                }
            }
            Err(_) => {
                let can_grow = problem.left.1.is_some_and(|idx| !problem.lacks[idx].contains(label));
                prop_assert!(!problem.left.0.contains(label) && !can_grow);
            }
        }
    }

    /// Item 5: `P ⊨ row \ a` iff `a` is absent from every ground instance satisfying `P`.
    #[test]
    fn entailment_matches_ground_instances(problem in problem_strategy(), label_id in 0usize..4) {
        let label = Space::ALL[label_id];
        let mut store = RowStore::new();
        let vars = [store.fresh(problem.lacks[0]), store.fresh(problem.lacks[1])];
        let row = to_row(vars, problem.left);
        let mut absent_everywhere = true;
        for g0 in subsets().filter(|set| set.intersect(problem.lacks[0]).is_empty()) {
            for g1 in subsets().filter(|set| set.intersect(problem.lacks[1]).is_empty()) {
                absent_everywhere &= !eval(problem.left, [g0, g1]).contains(label);
            }
        }
        prop_assert_eq!(store.entails(&row, label), absent_everywhere);
    }

    /// Item 6: the evidence of a closed `S \ a` is the rank of `a`, the index at which inserting
    /// `a` into sorted `S` keeps it sorted.
    #[test]
    fn evidence_is_the_insertion_index(bits in 0u8..16, label_id in 0usize..4) {
        let set = SpaceSet::from_bits(bits);
        let label = Space::ALL[label_id];
        prop_assume!(!set.contains(label));
        let mut sorted: Vec<Space> = set.iter().collect();
        sorted.insert(evidence(set, label) as usize, label);
        let expected: Vec<Space> = set.with(label).iter().collect();
        prop_assert_eq!(sorted, expected);
    }
}

fn set(spaces: &[Space]) -> SpaceSet {
    spaces.iter().copied().collect()
}

/// Builds one E10 problem: two rows and the variables whose bindings to show.
type BuildCase = dyn Fn(&mut RowStore) -> (Row, Row, Vec<RowVar>);

/// The E10 table, with the store's own variable names.
#[test]
fn e10_unifier_table() {
    use Space::{Global, Local};
    let mut out = String::new();
    let mut case = |title: &str, build: &BuildCase| {
        let mut store = RowStore::new();
        let (left, right, shown) = build(&mut store);
        let result = store.unify(&left, &right);
        out.push_str(&format!("{title}: {left} ~ {right} => "));
        match result {
            Err(error) => out.push_str(&format!("fail {error:?}\n")),
            Ok(()) => {
                let bindings: Vec<String> = shown
                    .iter()
                    .map(|var| {
                        let row = store.resolve(&Row::var(*var));
                        let lacks = row
                            .tail
                            .map(|tail| format!(" lacks(r{})={}", tail.0, store.lacks(tail)));
                        format!("r{} := {row}{}", var.0, lacks.unwrap_or_default())
                    })
                    .collect();
                out.push_str(&format!("ok {}\n", bindings.join(", ")));
            }
        }
    };
    case("two tails", &|store| {
        let (r, r2) = (store.fresh(set(&[Global])), store.fresh(set(&[Local])));
        (Row::open(set(&[Global]), r), Row::open(set(&[Local]), r2), vec![r, r2])
    });
    case("same tail", &|store| {
        let rho = store.fresh(set(&[Global, Local]));
        (Row::open(set(&[Global]), rho), Row::open(set(&[Local]), rho), vec![rho])
    });
    case("closed, different sizes", &|_| {
        (Row::closed(set(&[Global])), Row::closed(set(&[Global, Local])), vec![])
    });
    case("open against bigger closed", &|store| {
        let rho = store.fresh(set(&[Global]));
        (Row::open(set(&[Global]), rho), Row::closed(set(&[Global, Local])), vec![rho])
    });
    case("open against disjoint closed", &|store| {
        let rho = store.fresh(set(&[Global]));
        (Row::open(set(&[Global]), rho), Row::closed(set(&[Local])), vec![rho])
    });
    case("lacks violated", &|store| {
        let (rho, sigma) = (store.fresh(set(&[Global, Local])), store.fresh(set(&[Local])));
        (Row::open(set(&[Global]), rho), Row::open(set(&[Local]), sigma), vec![rho, sigma])
    });
    case("permutation", &|_| {
        (Row::closed(set(&[Local, Global])), Row::closed(set(&[Global, Local])), vec![])
    });
    expect![[r#"
        two tails: {global | r0} ~ {local | r1} => ok r0 := {local | r2} lacks(r2)={global, local}, r1 := {global | r2} lacks(r2)={global, local}
        same tail: {global | r0} ~ {local | r0} => fail Occurs { label: Global, side: Left }
        closed, different sizes: {global} ~ {global, local} => fail Missing { label: Local, side: Right }
        open against bigger closed: {global | r0} ~ {global, local} => ok r0 := {local}
        open against disjoint closed: {global | r0} ~ {local} => fail Missing { label: Global, side: Left }
        lacks violated: {global | r0} ~ {local | r1} => fail Lacks { label: Local, var: RowVar(0), side: Right, cause: None }
        permutation: {global, local} ~ {global, local} => ok 
    "#]]
    .assert_eq(&out);
}

/// The E11 evidence table (rank among smaller IDs, order global < local < private).
#[test]
fn e11_evidence_table() {
    use Space::{Global, Local, Private};
    let mut out = String::new();
    for (row, label) in [
        (set(&[]), Global),
        (set(&[Global]), Local),
        (set(&[Global]), Private),
        (set(&[Local]), Global),
        (set(&[Local]), Private),
        (set(&[Private]), Global),
        (set(&[Private]), Local),
        (set(&[Global, Local]), Private),
        (set(&[Global, Private]), Local),
        (set(&[Local, Private]), Global),
    ] {
        out.push_str(&format!("{row}\\{label} = {}\n", evidence(row, label)));
    }
    let mut store = RowStore::new();
    let r = store.fresh(set(&[Local]));
    for head in [Global, Private] {
        let row = Row::open(SpaceSet::single(head), r);
        out.push_str(&format!("{row}\\local = {}\n", store.evidence(&row, Local).unwrap()));
    }
    let duplicate = store.evidence(&Row::open(set(&[Local]), r), Local);
    out.push_str(&format!("{{local | r0}}\\local = {duplicate:?}\n"));
    expect![[r#"
        {}\global = 0
        {global}\local = 1
        {global}\private = 1
        {local}\global = 0
        {local}\private = 1
        {private}\global = 0
        {private}\local = 0
        {global, local}\private = 2
        {global, private}\local = 1
        {local, private}\global = 0
        {global | r0}\local = ev(r0)+1
        {private | r0}\local = ev(r0)
        {local | r0}\local = Err(Duplicate { label: Local })
    "#]]
    .assert_eq(&out);
}
