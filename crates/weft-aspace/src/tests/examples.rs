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
            kernel vscale : (ASpace {global}, ASpace {global}, ASpace {global}) -> void
              C : ASpace {global}
              A : ASpace {global}
              S : ASpace {global}
            instance vscale = vscale
              C : global
              A : global
              S : global
        "#]],
    );
}
