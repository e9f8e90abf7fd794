//! The digest's worked examples E1..E13 (section 4), transcribed into MiniAS.

use expect_test::expect;

use super::{check, check_cl20, check_with};
use crate::{Options, Target};

/// E1: everything global; no predicates, every access resolves to global.
#[test]
fn e1_all_global_kernel_needs_no_predicates() {
    check(
        r#"
kernel void vscale(global int * C, global int * A, const global int * S)
{ C[get_global_id(0)] = A[get_global_id(0)] * S[get_group_id(0)]; }
"#,
        expect![[r#"
            kernel vscale : (ASpace {global}, ASpace {global}, ASpace {global}) -> _
              C : ASpace {global}
              A : ASpace {global}
              S : ASpace {global}
            instance vscale = vscale
              C : global
              A : global
              S : global
              load through `A` @3 : global
              load through `S` @3 : global
              store through `C` @3 : global
        "#]],
    );
}

/// E2, as printed in the paper: `scale` declared with two `global` parameters is a type error for
/// a `constant` argument.
#[test]
fn e2_global_parameter_rejects_constant_argument() {
    check(
        r#"
int scale(global int * A, global int * S);
kernel void vscale(global int * C, global int * A, constant int * S)
{ C[get_global_id(0)] = scale(&A[get_global_id(0)], &S[get_group_id(0)]); }
"#,
        expect![[r#"
            fn scale : (ASpace {global}, ASpace {global}) -> _
              A : ASpace {global}
              S : ASpace {global}
            kernel vscale : (ASpace {global}, ASpace {global}, ASpace {constant}) -> _
              C : ASpace {global}
              A : ASpace {global}
              S : ASpace {constant}
            instance vscale = vscale
              C : global
              A : global
              S : constant
              call `scale(A, S)` @4 -> scale
              store through `C` @4 : global
            instance scale = scale
              A : global
              S : global
            error[aspace-mismatch] in `vscale`: parameter `S` of `scale` only points to global memory, but it receives a pointer to constant memory (from `S`)
              | `S` is a kernel parameter in constant memory @3
              | call `scale(A, S)` @4
              | `S` is a parameter of `scale` in global memory @2
        "#]],
    );
}

/// E2 fixed with generic parameters: `scale : ∀r1 r2. (ASpace r1, ASpace r2) -> int`, and the
/// call is specialised to the clone `scale__G_C`.
#[test]
fn e2_generic_parameters_clone_scale_per_space() {
    check(
        r#"
int scale(generic int * A, generic int * B) { return *A * *B; }
kernel void vscale(global int * C, global int * A, constant int * S)
{ C[get_global_id(0)] = scale(&A[get_global_id(0)], &S[get_group_id(0)]); }
"#,
        expect![[r#"
            fn scale : ∀r1 r2. (ASpace r1, ASpace r2) -> _
              A : ASpace r1
              B : ASpace r2
            kernel vscale : (ASpace {global}, ASpace {global}, ASpace {constant}) -> _
              C : ASpace {global}
              A : ASpace {global}
              S : ASpace {constant}
            instance vscale = vscale
              C : global
              A : global
              S : constant
              call `scale(A, S)` @4 -> scale__G_C
              store through `C` @4 : global
            instance scale__G_C = scale [r1 := {global}, r2 := {constant}]
              A : global
              B : constant
              load through `A` @2 : global
              load through `B` @2 : constant
        "#]],
    );
}

/// E2 on OpenCL 2.0: `constant` reaches `scale`, so it is still cloned, not made generic.
#[test]
fn e2_constant_argument_forces_clone_on_opencl20() {
    check_cl20(
        r#"
int scale(generic int * A, generic int * B) { return *A * *B; }
kernel void vscale(global int * C, global int * A, constant int * S)
{ C[get_global_id(0)] = scale(&A[get_global_id(0)], &S[get_group_id(0)]); }
"#,
        expect![[r#"
            fn scale : ∀r1 r2. (ASpace r1, ASpace r2) -> _
              A : ASpace r1
              B : ASpace r2
            kernel vscale : (ASpace {global}, ASpace {global}, ASpace {constant}) -> _
              C : ASpace {global}
              A : ASpace {global}
              S : ASpace {constant}
            instance vscale = vscale
              C : global
              A : global
              S : constant
              call `scale(A, S)` @4 -> scale__G_C
              store through `C` @4 : global
            instance scale__G_C = scale [r1 := {global}, r2 := {constant}]
              A : global
              B : constant
              load through `A` @2 : global
              load through `B` @2 : constant
        "#]],
    );
}

const E3: &str = r#"
void foo(int *);
kernel void bar(global int *g, local int *l)
{ generic int * tmp;
  if (get_global_id(0) % 2) { tmp = g; } else { tmp = l; }
  foo(tmp); }
"#;

/// E3 in static mode: `tmp : ASpace{global, local}` is rejected, naming both sources.
#[test]
fn e3_variant_tmp_is_rejected_on_opencl12() {
    check(
        E3,
        expect![[r#"
        fn foo : ∀r1. (ASpace r1) -> _
          arg0 : ASpace r1
        kernel bar : (ASpace {global}, ASpace {local}) -> _
          g : ASpace {global}
          l : ASpace {local}
          tmp : ASpace {global, local}
        instance bar = bar
          g : global
          l : local
          tmp : generic {global, local}
          call `foo(tmp)` @6 -> no instance of `foo`
        error[aspace-two-spaces] in `bar`: `tmp` may point to global memory (from `g`) or local memory (from `l`), but OpenCL 1.2 has no generic address space
          | `g` is a kernel parameter in global memory @3
          | `g` is assigned to `tmp` @5
          | `l` is a kernel parameter in local memory @3
          | `l` is assigned to `tmp` @5
          | `tmp` is declared @4
    "#]],
    );
}

/// E3 on OpenCL 2.0: `tmp` is generic and `foo` gets one generic instance.
#[test]
fn e3_variant_tmp_is_generic_on_opencl20() {
    check_cl20(
        E3,
        expect![[r#"
        fn foo : ∀r1. (ASpace r1) -> _
          arg0 : ASpace r1
        kernel bar : (ASpace {global}, ASpace {local}) -> _
          g : ASpace {global}
          l : ASpace {local}
          tmp : ASpace {global, local}
        instance bar = bar
          g : global
          l : local
          tmp : generic {global, local}
          call `foo(tmp)` @6 -> foo
        instance foo = foo [r1 := {global, local}] (generic)
          arg0 : generic {global, local}
    "#]],
    );
}

/// E4: `*x = *y` with `x` global and `y` local is `st_global(x, ld_local(y))`.
#[test]
fn e4_store_and_load_resolve_to_their_spaces() {
    check(
        r#"
kernel void k(global int * x, local int * y) { *x = *y; }
"#,
        expect![[r#"
            kernel k : (ASpace {global}, ASpace {local}) -> _
              x : ASpace {global}
              y : ASpace {local}
            instance k = k
              x : global
              y : local
              load through `y` @2 : local
              store through `x` @2 : global
        "#]],
    );
}

/// E5: an elided space is the same as `generic`: a fresh row variable. Both helpers get the
/// same scheme.
#[test]
fn e5_elided_space_is_a_fresh_row_variable() {
    check(
        r#"
void elided(int * var) { }
void written(generic int * var) { }
"#,
        expect![[r#"
            fn elided : ∀r1. (ASpace r1) -> _
              var : ASpace r1
            fn written : ∀r1. (ASpace r1) -> _
              var : ASpace r1
        "#]],
    );
}

/// E6 with the paper's `global * int g` typo (digest 8.21).
const E6: &str = r#"
kernel void x(global * int g, local int * l, int value)
{ int * var = 0;
  if (value % 2) { var = g; } else { var = l; }
  *g = *var; }
"#;

/// E6 with embedding: `var : ASpace{global, local}` after defaulting; static mode rejects it.
#[test]
fn e6_embedding_infers_a_variant_rejected_on_opencl12() {
    check(
        E6,
        expect![[r#"
        kernel x : (ASpace {global}, ASpace {local}) -> _
          g : ASpace {global}
          l : ASpace {local}
          var : ASpace {global, local}
        instance x = x
          g : global
          l : local
          var : generic {global, local}
          load through `var` @5 : generic {global, local}
          store through `g` @5 : global
        error[aspace-two-spaces] in `x`: `var` may point to global memory (from `g`) or local memory (from `l`), but OpenCL 1.2 has no generic address space
          | `g` is a kernel parameter in global memory @2
          | `g` is assigned to `var` @4
          | `l` is a kernel parameter in local memory @2
          | `l` is assigned to `var` @4
          | load through `var` @5
    "#]],
    );
}

/// E6 on OpenCL 2.0: `var` is a generic pointer and the load through it is a generic load.
#[test]
fn e6_variant_is_generic_on_opencl20() {
    check_cl20(
        E6,
        expect![[r#"
        kernel x : (ASpace {global}, ASpace {local}) -> _
          g : ASpace {global}
          l : ASpace {local}
          var : ASpace {global, local}
        instance x = x
          g : global
          l : local
          var : generic {global, local}
          load through `var` @5 : generic {global, local}
          store through `g` @5 : global
    "#]],
    );
}

/// E6 negative test: with strict VASSIGN (no embedding), `var = l` after `var = g` is a
/// unification failure. This pins down that we chose embedding (digest 8.3).
#[test]
fn e6_strict_assignment_rejects_widening() {
    check_with(
        E6,
        Options { target: Target::OpenCl20, embedding: false },
        expect![[r#"
        kernel x : (ASpace {global}, ASpace {local}) -> _
          g : ASpace {global}
          l : ASpace {local}
          var : ASpace {global}
        instance x = x
          g : global
          l : local
          var : global
          load through `var` @5 : global
          store through `g` @5 : global
        error[aspace-mismatch] in `x`: `var` only points to global memory, but it receives a pointer to local memory (from `l`)
          | `l` is a kernel parameter in local memory @2
          | `l` is assigned to `var` @4
          | `g` is a kernel parameter in global memory @2
          | `g` is assigned to `var` @4
    "#]],
    );
}

/// E7: the jump table is indexed by the fixed IDs global=0, local=1, private=2 (constant=3 is
/// ours). There is no jump table to build (we specialise or use OpenCL 2.0 generic), so E7 is
/// covered at the level of the IDs.
#[test]
fn e7_fixed_ids_index_the_jump_table() {
    let ids: Vec<String> =
        crate::Space::ALL.iter().map(|space| format!("{space}={}", space.id())).collect();
    expect![[r#"global=0, local=1, private=2, constant=3"#]].assert_eq(&ids.join(", "));
}

/// E8: a load through a `global` pointer leaves no residual predicate (the scheme has none and
/// the only predicate, `{}\global`, is discharged with evidence 0).
#[test]
fn e8_monomorphic_load_leaves_no_predicates() {
    check(
        r#"
int get(global int * x) { return *x; }
kernel void k(global int * x, global int * out) { *out = get(x); }
"#,
        expect![[r#"
            fn get : (ASpace {global}) -> _
              x : ASpace {global}
            kernel k : (ASpace {global}, ASpace {global}) -> _
              x : ASpace {global}
              out : ASpace {global}
            instance k = k
              x : global
              out : global
              call `get(x)` @3 -> get
              store through `out` @3 : global
            instance get = get
              x : global
              load through `x` @2 : global
        "#]],
    );
    let store = crate::RowStore::new();
    let empty = crate::Row::empty();
    assert_eq!(store.simplify(&empty, crate::Space::Global), Ok(None));
    assert_eq!(
        store.evidence(&empty, crate::Space::Global).map(|ev| ev.to_string()),
        Ok("0".to_owned())
    );
}

/// E9, allowed part (with `foo` as a plain function, as the digest suggests): two clones.
#[test]
fn e9_polymorphic_helper_is_cloned_per_space() {
    check(
        r#"
void foo(int * x) { *x = 1; }
kernel void k(global int * g, local int * l) { foo(g); foo(l); }
"#,
        expect![[r#"
            fn foo : ∀r1. (r1\constant) => (ASpace r1) -> _
              x : ASpace r1
            kernel k : (ASpace {global}, ASpace {local}) -> _
              g : ASpace {global}
              l : ASpace {local}
            instance k = k
              g : global
              l : local
              call `foo(g)` @3 -> foo__G
              call `foo(l)` @3 -> foo__L
            instance foo__G = foo [r1 := {global}]
              x : global
              store through `x` @2 : global
            instance foo__L = foo [r1 := {local}]
              x : local
              store through `x` @2 : local
        "#]],
    );
}

/// E9, rejected part: `a` would need two predicates on one row variable.
#[test]
fn e9_two_sources_in_one_local_are_rejected() {
    check(
        r#"
kernel void bar(global int * g, local int * l)
{ int * a; if (get_local_id(0)) { a = g; } else { a = l; } }
"#,
        expect![[r#"
            kernel bar : (ASpace {global}, ASpace {local}) -> _
              g : ASpace {global}
              l : ASpace {local}
              a : ASpace {global, local}
            instance bar = bar
              g : global
              l : local
              a : generic {global, local}
            error[aspace-two-spaces] in `bar`: `a` may point to global memory (from `g`) or local memory (from `l`), but OpenCL 1.2 has no generic address space
              | `g` is a kernel parameter in global memory @2
              | `g` is assigned to `a` @3
              | `l` is a kernel parameter in local memory @2
              | `l` is assigned to `a` @3
              | `a` is declared @3
        "#]],
    );
}

/// E12, transcribed with the casts as declarations before the `if` (MiniAS has no declarations
/// inside conditions). `foo : ∀r1. (r1\global, r1\local) => ASpace{global, local | r1} -> int`.
const E12: &str = r#"
int foo_local(local int * p);
int foo_global(global int * p);
int foo(generic * int p) {
  global int * gptr = dynamic_cast<global int *>(p);
  local int * lptr = dynamic_cast<local int *>(p);
  if (gptr != NULL) return foo_global(gptr);
  else if (lptr != NULL) return foo_local(lptr);
  else return -1;
}
kernel void k(global int * g, global int * out) { *out = foo(g); }
"#;

/// E12 in static mode: the two predicates on `r1` make `p` a variant, which is rejected.
#[test]
fn e12_dynamic_casts_give_two_lacks_and_static_rejection() {
    check(
        E12,
        expect![[r#"
        fn foo_local : (ASpace {local}) -> _
          p : ASpace {local}
        fn foo_global : (ASpace {global}) -> _
          p : ASpace {global}
        fn foo : ∀r1. (r1\global, r1\local) => (ASpace {global, local | r1}) -> _
          p : ASpace {global, local | r1}
          gptr : ASpace {global}
          cast<global>(p) : ASpace {global}
          lptr : ASpace {local}
          cast<local>(p) : ASpace {local}
        kernel k : (ASpace {global}, ASpace {global}) -> _
          g : ASpace {global}
          out : ASpace {global}
        instance k = k
          g : global
          out : global
          call `foo(g)` @11 -> foo__GL
          store through `out` @11 : global
        instance foo__GL = foo [r1 := {}]
          p : generic {global, local}
          gptr : global
          cast<global>(p) : global
          lptr : local
          cast<local>(p) : local
          call `foo_global(gptr)` @7 -> foo_global
          call `foo_local(lptr)` @8 -> foo_local
        instance foo_global = foo_global
          p : global
        instance foo_local = foo_local
          p : local
        error[aspace-two-spaces] in `foo`: `p` may point to global memory (from the cast to global) or local memory (from the cast to local), but OpenCL 1.2 has no generic address space
          | `p` is cast to global @5
          | `p` is cast to local @6
          | `p` is a parameter of `foo` @4
    "#]],
    );
}

/// E12 on OpenCL 2.0: `foo` is one generic function.
#[test]
fn e12_dynamic_casts_are_generic_on_opencl20() {
    check_cl20(
        E12,
        expect![[r#"
        fn foo_local : (ASpace {local}) -> _
          p : ASpace {local}
        fn foo_global : (ASpace {global}) -> _
          p : ASpace {global}
        fn foo : ∀r1. (r1\global, r1\local) => (ASpace {global, local | r1}) -> _
          p : ASpace {global, local | r1}
          gptr : ASpace {global}
          cast<global>(p) : ASpace {global}
          lptr : ASpace {local}
          cast<local>(p) : ASpace {local}
        kernel k : (ASpace {global}, ASpace {global}) -> _
          g : ASpace {global}
          out : ASpace {global}
        instance k = k
          g : global
          out : global
          call `foo(g)` @11 -> foo
          store through `out` @11 : global
        instance foo = foo [r1 := {}] (generic)
          p : generic {global, local}
          gptr : global
          cast<global>(p) : global
          lptr : local
          cast<local>(p) : local
          call `foo_global(gptr)` @7 -> foo_global
          call `foo_local(lptr)` @8 -> foo_local
        instance foo_global = foo_global
          p : global
        instance foo_local = foo_local
          p : local
    "#]],
    );
}

/// E13 (OpenCL C++ copy constructor): the space of `rhs` (and of `this`) is implicit and
/// inferred per use, and every space is uniquely determined at compile time. Modelled as a
/// helper with two generic pointers called on a private object from global data and on a local
/// object from local data: two clones, no generic code.
#[test]
fn e13_copy_constructor_spaces_are_inferred_per_use() {
    check(
        r#"
void copy(int * self, int * rhs) { *self = *rhs; }
kernel void k(global int * g, local int * l)
{ private int obj[1];
  copy(obj, g);
  copy(l, l); }
"#,
        expect![[r#"
            fn copy : ∀r1 r2. (r1\constant) => (ASpace r1, ASpace r2) -> _
              self : ASpace r1
              rhs : ASpace r2
            kernel k : (ASpace {global}, ASpace {local}) -> _
              g : ASpace {global}
              l : ASpace {local}
              obj : ASpace {private}
            instance k = k
              g : global
              l : local
              obj : private
              call `copy(obj, g)` @5 -> copy__P_G
              call `copy(l, l)` @6 -> copy__L_L
            instance copy__P_G = copy [r1 := {private}, r2 := {global}]
              self : private
              rhs : global
              load through `rhs` @2 : global
              store through `self` @2 : private
            instance copy__L_L = copy [r1 := {local}, r2 := {local}]
              self : local
              rhs : local
              load through `rhs` @2 : local
              store through `self` @2 : local
        "#]],
    );
}
