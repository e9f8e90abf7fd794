//! One test per diagnostic code, checking message and chain.

use expect_test::expect;

use super::check;
use crate::{
    Decl, Fact, Func, FuncId, FuncKind, Program, Ptr, PtrId, Reason, Site, Space, SpaceSet, Target,
    infer, print,
};

#[test]
fn store_through_constant_is_reported_through_the_call_chain() {
    check(
        r#"
void put(int * p) { int * q = p; *q = 0; }
kernel void k(constant int * c) { put(c); }
"#,
        expect![[r#"
            fn put : ∀r1. (r1\constant) => (ASpace r1) -> _
              p : ASpace r1
              q : ASpace r1
            kernel k : (ASpace {constant}) -> _
              c : ASpace {constant}
            instance k = k
              c : constant
              call `put(c)` @3 -> put__P
            instance put__P = put [r1 := {}]
              p : private (default)
              q : private (default)
              store through `q` @2 : private
            error[aspace-store-to-constant] in `k`: cannot store through a pointer to constant memory: parameter `p` of `put` may point to constant memory (from `c`)
              | `c` is a kernel parameter in constant memory @3
              | call `put(c)` @3
              | store through `q` @2
        "#]],
    );
}

#[test]
fn bound_violation_starts_with_the_bound_text() {
    check(
        r#"
kernel void k(global int * g, local int * tile)
{ int * out = g;
  __bound(out, global);
  out = tile; }
"#,
        expect![[r#"
            kernel k : (ASpace {global}, ASpace {local}) -> _
              g : ASpace {global}
              tile : ASpace {local}
              out : ASpace {global}
            instance k = k
              g : global
              tile : local
              out : global
            error[aspace-bound] in `k`: `out` may only point to global memory, but `out` may point to local memory (from `tile`)
              | `tile` is a kernel parameter in local memory @2
              | `tile` is assigned to `out` @5
              | `out` may only point to global memory @4
        "#]],
    );
}

#[test]
fn never_assigned_kernel_parameter_defaults_to_private_and_is_rejected() {
    check(
        r#"
kernel void k(int * x) { *x = 1; }
"#,
        expect![[r#"
            kernel k : (ASpace {}) -> _
              x : ASpace {}
            instance k = k
              x : private (default)
              store through `x` @2 : private
            error[aspace-private-kernel-param] in `k`: kernel parameter `x` gets no address space from its uses and would default to private; declare it global, local or constant
              | `x` is a kernel parameter @2
        "#]],
    );
}

#[test]
fn private_pointer_reaching_a_kernel_parameter_is_rejected() {
    check(
        r#"
kernel void k(int * x) { private int buf[4]; x = buf; }
"#,
        expect![[r#"
            kernel k : (ASpace {private}) -> _
              x : ASpace {private}
              buf : ASpace {private}
            instance k = k
              x : private
              buf : private
            error[aspace-private-kernel-param] in `k`: kernel parameter `x` may point to private memory (from `buf`), but kernel pointer parameters must be global, local or constant
              | `buf` is allocated in private memory @2
              | `buf` is assigned to `x` @2
              | `x` is a kernel parameter @2
        "#]],
    );
}

#[test]
fn recursion_is_a_diagnostic_and_the_cycle_is_ignored() {
    check(
        r#"
void even(int * p) { odd(p); }
void odd(int * p) { even(p); }
kernel void k(global int * g) { even(g); }
"#,
        expect![[r#"
            fn even : ∀r1. (ASpace r1) -> _
              p : ASpace r1
            fn odd : ∀r1. (ASpace r1) -> _
              p : ASpace r1
            kernel k : (ASpace {global}) -> _
              g : ASpace {global}
            instance k = k
              g : global
              call `even(g)` @4 -> even__G
            instance even__G = even [r1 := {global}]
              p : global
            error[aspace-recursion] in `even`: `even` and `odd` call each other, but OpenCL does not allow recursion
              | call `odd(p)` @2
              | call `even(p)` @3
        "#]],
    );
}

#[test]
fn call_mixing_spaces_in_one_callee_row_is_rejected_at_the_call() {
    check(
        r#"
void pick(int * a, int * b) { a = b; }
kernel void k(global int * g, local int * l) { pick(g, l); }
"#,
        expect![[r#"
            fn pick : ∀r1. (ASpace r1, ASpace r1) -> _
              a : ASpace r1
              b : ASpace r1
            kernel k : (ASpace {global}, ASpace {local}) -> _
              g : ASpace {global}
              l : ASpace {local}
            instance k = k
              g : global
              l : local
              call `pick(g, l)` @3 -> no instance of `pick`
            error[aspace-two-spaces] in `k`: `a` and `b` of `pick` share one address space, but this call gives them global memory (from `g`) and local memory (from `l`), and OpenCL 1.2 has no generic address space
              | `g` is a kernel parameter in global memory @3
              | `l` is a kernel parameter in local memory @3
              | call `pick(g, l)` @3
        "#]],
    );
}

#[test]
fn label_from_a_callee_allocation_is_traced_into_the_callee() {
    check(
        r#"
int * scratch() { private int buf[4]; return buf; }
kernel void k(global int * g) { int * p = g; p = scratch(); *p = 1; }
"#,
        expect![[r#"
            fn scratch : ∀r1. (r1\private) => () -> ASpace {private | r1}
              return : ASpace {private | r1}
              buf : ASpace {private}
            kernel k : (ASpace {global}) -> _
              g : ASpace {global}
              p : ASpace {global, private}
              scratch() : ASpace {global, private}
            instance k = k
              g : global
              p : generic {global, private}
              scratch() : generic {global, private}
              call `scratch()` @3 -> scratch
              store through `p` @3 : generic {global, private}
            instance scratch = scratch [r1 := {}]
              return : private
              buf : private
            error[aspace-two-spaces] in `k`: `p` may point to global memory (from `g`) or private memory (from `buf`), but OpenCL 1.2 has no generic address space
              | `g` is a kernel parameter in global memory @3
              | `p` is initialised with `g` @3
              | `buf` is allocated in private memory @2
              | `buf` is returned @2
              | call `scratch()` @3
              | `scratch()` is assigned to `p` @3
              | store through `p` @3
        "#]],
    );
}

#[test]
fn explain_follows_flows_and_calls_from_the_kernel_parameter() {
    let program = crate::minias::parse(
        r#"
void inner(int * q) { *q = 1; }
void outer(int * p) { int * t = p; inner(t); }
kernel void k(local int * l) { outer(l); }
"#,
    )
    .unwrap();
    let inference = infer(&program, Target::OpenCl12);
    let inner =
        inference.instances().iter().position(|instance| instance.name == "inner__L").unwrap();
    let chain = inference.explain(crate::InstanceId(inner as u32), PtrId(0));
    let text: Vec<String> = chain.iter().map(crate::pretty::reason_text).collect();
    expect![[r#"
        `l` is a kernel parameter in local memory @4
        call `outer(l)` @4
        `t` is initialised with `p` @3
        call `inner(t)` @3"#]]
    .assert_eq(&text.join("\n"));
}

fn reason(text: &str, site: u32) -> Reason {
    Reason::new(text, Some(Site(site)))
}

/// The backend builds programs directly; a `Bound` with its own wording.
#[test]
fn backend_bound_text_reaches_the_message() {
    let kernel = Func {
        name: "k".to_owned(),
        kind: FuncKind::Kernel,
        params: vec![PtrId(0)],
        ret: None,
        ptrs: vec![
            Ptr {
                name: "out".to_owned(),
                decl: Decl::In(Space::Global),
                reason: reason("kernel argument #0", 0),
            },
            Ptr {
                name: "tile".to_owned(),
                decl: Decl::In(Space::Local),
                reason: reason("`tile` scratch", 1),
            },
            Ptr {
                name: "acc".to_owned(),
                decl: Decl::Generic,
                reason: reason("loop-carried memory", 2),
            },
        ],
        facts: vec![
            Fact::Flow {
                from: PtrId(1),
                to: PtrId(2),
                reason: reason("`acc` starts in `tile`", 3),
            },
            Fact::Bound {
                ptr: PtrId(2),
                allowed: SpaceSet::single(Space::Global),
                reason: reason("`acc` escapes its work-group: only {global}", 4),
            },
        ],
    };
    let program = Program { funcs: vec![kernel] };
    let inference = infer(&program, Target::OpenCl12);
    expect![[r#"
        kernel k : (ASpace {global}) -> _
          out : ASpace {global}
          tile : ASpace {local}
          acc : ASpace {local}
        instance k = k
          out : global
          tile : local
          acc : local
        error[aspace-bound] in `k`: `acc` escapes its work-group: only {global}, but `acc` may point to local memory (from `tile`)
          | `tile` scratch @1
          | `acc` starts in `tile` @3
          | `acc` escapes its work-group: only {global} @4
    "#]].assert_eq(&print(&program, &inference));
}

#[test]
fn malformed_facts_are_reported_and_ignored() {
    let func = Func {
        name: "k".to_owned(),
        kind: FuncKind::Kernel,
        params: vec![PtrId(0), PtrId(5)],
        ret: None,
        ptrs: vec![Ptr {
            name: "g".to_owned(),
            decl: Decl::In(Space::Global),
            reason: reason("g", 1),
        }],
        facts: vec![
            Fact::Load { ptr: PtrId(3), reason: reason("load", 2) },
            Fact::Call { callee: FuncId(7), args: vec![], ret: None, reason: reason("call", 3) },
            Fact::Call {
                callee: FuncId(0),
                args: vec![],
                ret: Some(PtrId(0)),
                reason: reason("self call", 4),
            },
        ],
    };
    let program = Program { funcs: vec![func] };
    let inference = infer(&program, Target::OpenCl12);
    expect![[r#"
        kernel k : (ASpace {global}, ASpace {}) -> _
          g : ASpace {global}
        instance k = k
          g : global
        error[aspace-malformed-program] in `k`: `k` names pointer 5 in its signature but has 1 pointers
        error[aspace-malformed-program] in `k`: fact 0 of `k` names pointer 3, but `k` has 1 pointers; it is ignored
          | load @2
        error[aspace-malformed-program] in `k`: fact 1 of `k` calls function 7, but there are 1; it is ignored
          | call @3
        error[aspace-malformed-program] in `k`: fact 2 of `k` passes 0 pointers to `k`, which takes 2; it is ignored
          | self call @4
    "#]].assert_eq(&print(&program, &inference));
}
