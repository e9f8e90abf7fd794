//! Property tests over random programs: inference never panics, and a program without
//! diagnostics specialises to singleton spaces (OpenCL 1.2) or to generic rows without
//! `constant` (OpenCL 2.0), with legal kernel parameters.

use proptest::prelude::*;

use crate::{
    Decl, Fact, Func, FuncId, FuncKind, Options, Program, Ptr, PtrId, Reason, Resolved, Site,
    Space, SpaceSet, Target, infer_with, print,
};

fn reason(idx: usize) -> Reason {
    Reason::new(format!("r{idx}"), Some(Site(idx as u32)))
}

fn decl() -> impl Strategy<Value = Decl> {
    prop_oneof![
        3 => Just(Decl::Generic),
        1 => (0usize..4).prop_map(|idx| Decl::In(Space::ALL[idx])),
    ]
}

/// Ids are drawn slightly past the valid range so malformed programs appear too.
fn fact(n_ptrs: u32, n_funcs: u32) -> impl Strategy<Value = Fact> {
    let ptr = move || prop_oneof![20 => (0..n_ptrs).prop_map(PtrId), 1 => Just(PtrId(n_ptrs))];
    prop_oneof![
        4 => (ptr(), ptr()).prop_map(|(from, to)| Fact::Flow { from, to, reason: reason(1) }),
        1 => ptr().prop_map(|ptr| Fact::Load { ptr, reason: reason(2) }),
        1 => ptr().prop_map(|ptr| Fact::Store { ptr, reason: reason(3) }),
        2 => (prop_oneof![20 => 0..n_funcs, 1 => Just(n_funcs)], prop::collection::vec(ptr(), 0..3), prop::option::of(ptr())).prop_map(
            |(callee, args, ret)| Fact::Call { callee: FuncId(callee), args, ret, reason: reason(4) }
        ),
        1 => (ptr(), ptr(), 0usize..4)
            .prop_map(|(from, to, idx)| Fact::Cast { from, to, space: Space::ALL[idx], reason: reason(5) }),
        1 => (ptr(), 1u8..16).prop_map(|(ptr, bits)| Fact::Bound {
            ptr,
            allowed: SpaceSet::from_bits(bits),
            reason: reason(6),
        }),
    ]
}

fn func(n_funcs: u32) -> impl Strategy<Value = Func> {
    (1u32..5, any::<bool>()).prop_flat_map(move |(n_ptrs, is_kernel)| {
        (
            prop::collection::vec(decl(), n_ptrs as usize),
            prop::collection::vec(0..n_ptrs, 0..3),
            prop::option::of(0..n_ptrs),
            prop::collection::vec(fact(n_ptrs, n_funcs), 0..7),
        )
            .prop_map(move |(decls, params, ret, facts)| Func {
                name: "f".to_owned(),
                kind: if is_kernel { FuncKind::Kernel } else { FuncKind::Helper },
                params: params.into_iter().map(PtrId).collect(),
                ret: if is_kernel { None } else { ret.map(PtrId) },
                ptrs: decls
                    .into_iter()
                    .enumerate()
                    .map(|(idx, decl)| Ptr { name: format!("p{idx}"), decl, reason: reason(idx) })
                    .collect(),
                facts,
            })
    })
}

fn program() -> impl Strategy<Value = Program> {
    (1u32..4).prop_flat_map(|n_funcs| {
        prop::collection::vec(func(n_funcs), n_funcs as usize).prop_map(|mut funcs| {
            for (idx, func) in funcs.iter_mut().enumerate() {
                func.name = format!("f{idx}");
            }
            Program { funcs }
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_programs_specialise_soundly_or_report(program in program(), embedding in any::<bool>()) {
        for target in [Target::OpenCl12, Target::OpenCl20] {
            let inference = infer_with(&program, &Options { target, embedding });
            let text = print(&program, &inference);
            prop_assert!(!text.is_empty());
            for (idx, instance) in inference.instances().iter().enumerate() {
                let id = crate::InstanceId(idx as u32);
                let func = &program.funcs[instance.func.0 as usize];
                for ptr_idx in 0..func.ptrs.len() {
                    let ptr = PtrId(ptr_idx as u32);
                    // Provenance of every label must be computable.
                    let _chain = inference.explain(id, ptr);
                    if !inference.is_ok() {
                        continue;
                    }
                    match (target, inference.space_of(id, ptr)) {
                        (_, Resolved::Space(_)) => {}
                        (Target::OpenCl12, Resolved::Generic(set)) => {
                            prop_assert!(false, "variant {set} without a diagnostic:\n{text}");
                        }
                        (Target::OpenCl20, Resolved::Generic(set)) => {
                            prop_assert!(!set.contains(Space::Constant), "constant in generic:\n{text}");
                        }
                    }
                }
                if inference.is_ok() && func.kind == FuncKind::Kernel {
                    for param in &func.params {
                        prop_assert!(
                            !matches!(inference.space_of(id, *param), Resolved::Space(Space::Private)),
                            "private kernel parameter without a diagnostic:\n{text}"
                        );
                    }
                }
                // Every call of an instance that inferred cleanly has a callee instance.
                if inference.is_ok() {
                    for (fact_idx, fact) in func.facts.iter().enumerate() {
                        if matches!(fact, Fact::Call { .. }) {
                            prop_assert!(inference.callee_instance(id, fact_idx).is_some(), "{text}");
                        }
                    }
                }
            }
        }
    }
}
