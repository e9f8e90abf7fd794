//! Snapshot tests of the generated code: the host plan, the imperative IR and the
//! OpenCL C of small programs. (Running them is tested through `weft test --backend
//! opencl` on every example, in the CLI's tests and in CI.)

use expect_test::{Expect, expect};
use weft_hir::RootDatabase;

fn compiled(src: &str) -> crate::Compiled {
    let mut db = RootDatabase::default();
    let file = db.set_file("main.weft", src);
    let checked = weft_core::CheckedFile::new(&db, file).expect("test source has no errors");
    let program = weft_core::lower_file(&db, checked).expect("test source elaborates");
    let entry = program.entries[0];
    let position = |o: &weft_core::Origin| weft_core::origin_position(&db, o);
    crate::compile_entry(&program, entry, &position, weft_lower::Options::default())
        .expect("compiles")
}

fn check_plan(src: &str, expect: Expect) {
    let c = compiled(src);
    let mut text = weft_plan::print_plan(&c.plan);
    for k in &c.kernels {
        text.push_str(&weft_lower::print_kernel_imp(k));
    }
    expect.assert_eq(&text);
}

fn check_kernel(src: &str, expect: Expect) {
    let c = compiled(src);
    let text: String = c.kernels.iter().map(crate::print_kernel).collect();
    expect.assert_eq(&text);
}

#[test]
fn map_fuses_into_map_and_views_are_free() {
    // Two maps and a reverse: one kernel, reading the input backwards.
    check_plan(
        "entry f (xs: [n]f32) : [n]f32 = map (\\x -> x + 1) (reverse (map (\\x -> x * 2) xs))",
        expect![[r#"
            host plan for entry `f`
              input v1: [v0]f32
              v2 = alloc f32[v0]
              launch f_map_0 global [v0] local [256] (v0: i64, v1, (v0 - 1): i64, v2)
              output v2 f32 {offset: 0; strides: [1]; shape: [v0]}
            -- materialises `result`: one work-item per row
            kernel f_map_0(n_1: i64, xs_2: global f32[], s_3: i64, result_4: global f32[]) @local_size(256) {
              parfor@grid.0 i_5 < n_1 do
                new private v_6: f32 := xs_2[s_3 + -i_5] * 2e0f
                new private v_7: f32 := v_6 + 1e0f
                result_4[i_5] := v_7
            }
        "#]],
    );
}

#[test]
fn map_reduce_fuses_into_a_two_stage_reduction() {
    check_plan(
        "entry f (xs: [n]f32) : f32 = reduce (+) 0 (map (\\x -> x * x) xs)",
        expect![[r#"
        host plan for entry `f`
          input v1: [v0]f32
          v2 = max(1, min(((v0 + 255) / 256), 1024))
          v3 = alloc f32[v2]
          launch f_reduce_partials_0 global [(v2 * 256)] local [256] (v0: i64, v1, v3, v2: i64, local f32[256])
          v4 = alloc f32[1]
          launch f_reduce_total_1 global [256] local [256] (v3, v2: i64, v4, local f32[256])
          output v4 f32 {offset: 0; strides: []; shape: []}
        -- reduce partials: up to 1024 work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory
        kernel f_reduce_partials_0(n_1: i64, xs_2: global f32[], partial_3: global f32[], groups_4: i64, red_5: local f32[]) @local_size(256) {
          new private t_6: i64 := (long)get_local_id(0)
          new private g_7: i64 := (long)get_group_id(0)
          new private r_8: f32
          r_8 := 0e0f
          parfor@grid.0 i_9 < n_1 do  -- main.weft:1
            new private v_10: f32 := xs_2[i_9] * xs_2[i_9]
            new private v_11: f32 := r_8 + v_10
            new private n_12: f32 := v_11
            r_8 := n_12
          red_5[t_6] := r_8
          barrier
          if t_6 < 128 then
            new private v_13: f32 := red_5[t_6] + red_5[t_6 + 128]
            red_5[t_6] := v_13
          barrier
          if t_6 < 64 then
            new private v_14: f32 := red_5[t_6] + red_5[t_6 + 64]
            red_5[t_6] := v_14
          barrier
          if t_6 < 32 then
            new private v_15: f32 := red_5[t_6] + red_5[t_6 + 32]
            red_5[t_6] := v_15
          barrier
          if t_6 < 16 then
            new private v_16: f32 := red_5[t_6] + red_5[t_6 + 16]
            red_5[t_6] := v_16
          barrier
          if t_6 < 8 then
            new private v_17: f32 := red_5[t_6] + red_5[t_6 + 8]
            red_5[t_6] := v_17
          barrier
          if t_6 < 4 then
            new private v_18: f32 := red_5[t_6] + red_5[t_6 + 4]
            red_5[t_6] := v_18
          barrier
          if t_6 < 2 then
            new private v_19: f32 := red_5[t_6] + red_5[t_6 + 2]
            red_5[t_6] := v_19
          barrier
          if t_6 < 1 then
            new private v_20: f32 := red_5[t_6] + red_5[t_6 + 1]
            red_5[t_6] := v_20
          barrier
          if t_6 == 0 then
            partial_3[g_7] := red_5[0]
        }
        -- reduce total: one work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory
        kernel f_reduce_total_1(partial_1: global f32[], groups_2: i64, partial_3: global f32[], red_4: local f32[]) @local_size(256) {
          new private t_5: i64 := (long)get_local_id(0)
          new private g_6: i64 := (long)get_group_id(0)
          new private r_7: f32
          r_7 := 0e0f
          parfor@grid.0 i_8 < groups_2 do  -- main.weft:1
            new private v_9: f32 := r_7 + partial_1[i_8]
            new private n_10: f32 := v_9
            r_7 := n_10
          red_4[t_5] := r_7
          barrier
          if t_5 < 128 then
            new private v_11: f32 := red_4[t_5] + red_4[t_5 + 128]
            red_4[t_5] := v_11
          barrier
          if t_5 < 64 then
            new private v_12: f32 := red_4[t_5] + red_4[t_5 + 64]
            red_4[t_5] := v_12
          barrier
          if t_5 < 32 then
            new private v_13: f32 := red_4[t_5] + red_4[t_5 + 32]
            red_4[t_5] := v_13
          barrier
          if t_5 < 16 then
            new private v_14: f32 := red_4[t_5] + red_4[t_5 + 16]
            red_4[t_5] := v_14
          barrier
          if t_5 < 8 then
            new private v_15: f32 := red_4[t_5] + red_4[t_5 + 8]
            red_4[t_5] := v_15
          barrier
          if t_5 < 4 then
            new private v_16: f32 := red_4[t_5] + red_4[t_5 + 4]
            red_4[t_5] := v_16
          barrier
          if t_5 < 2 then
            new private v_17: f32 := red_4[t_5] + red_4[t_5 + 2]
            red_4[t_5] := v_17
          barrier
          if t_5 < 1 then
            new private v_18: f32 := red_4[t_5] + red_4[t_5 + 1]
            red_4[t_5] := v_18
          barrier
          if t_5 == 0 then
            partial_3[g_6] := red_4[0]
        }
    "#]],
    );
}

#[test]
fn matmul_is_a_two_dimensional_ndrange() {
    check_kernel(
        "def dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)\nentry mm (a: [n][m]f32) (b: [m][p]f32) : [n][p]f32 = map (\\row -> map (\\col -> dot row col) (transpose b)) a",
        expect![[r#"
            // materialises `result`: one work-item per element (2-D NDRange)
            __kernel void mm_map2d_0(
                __global long* weft_err,
                long n_1,
                long ys_2,
                __global const float* restrict a_3,
                long xs_4,
                __global float* restrict result_5,
                __global const float* restrict b_8) {
              for (long j_7 = get_global_id(0); j_7 < ys_2; j_7 += get_global_size(0)) {
                for (long i_6 = get_global_id(1); i_6 < n_1; i_6 += get_global_size(1)) {
                  float r_9;
                  r_9 = 0e0f;
                  for (long i_10 = 0; i_10 < xs_4; i_10++) { // main.weft:1
                    float v_11 = a_3[i_6 * xs_4 + i_10] * b_8[j_7 + i_10 * ys_2];
                    float v_12 = r_9 + v_11;
                    float n_13 = v_12;
                    r_9 = n_13;
                  }
                  result_5[i_6 * ys_2 + j_7] = r_9;
                }
              }
            }
        "#]],
    );
}

#[test]
fn indexing_is_bounds_checked() {
    check_kernel(
        "entry f (xs: [n]i32) (i: i64) : i32 = xs[i] / xs[0]",
        expect![[r#"
        // computes `` (one work-item), main.weft:1
        __kernel void f_scalar_0(
            __global long* weft_err,
            __global const int* restrict xs_1,
            long n_2,
            long i_3,
            __global int* restrict v_5) {
          if (!(0 <= i_3 && i_3 < n_2)) {
            weft_fail(weft_err, 1, (long)(i_3), (long)(n_2));
            return;
          }
          int v_4 = xs_1[i_3];
          v_5[0] = v_4;
        }
        // computes `` (one work-item), main.weft:1
        __kernel void f_scalar_1(
            __global long* weft_err,
            __global const int* restrict xs_1,
            long n_2,
            __global int* restrict v_4) {
          if (!(1 && 0 < n_2)) {
            weft_fail(weft_err, 2, (long)(0), (long)(n_2));
            return;
          }
          int v_3 = xs_1[0];
          v_4[0] = v_3;
        }
        // computes `` (one work-item), main.weft:1
        __kernel void f_scalar_2(
            __global long* weft_err,
            __global const int* restrict v_1,
            __global const int* restrict v_2,
            __global int* restrict v_4) {
          int v_3 = weft_div_int(weft_err, 3, v_1[0], v_2[0]);
          v_4[0] = v_3;
        }
    "#]],
    );
}
