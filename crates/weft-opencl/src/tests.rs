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
    let text: String = (0..c.kernels.len()).map(|i| crate::print_kernel(&c, i)).collect();
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
              v3 = max((v0 / 4), (v0 % 4))
              launch f_map_0 global [v3] local [256] (v0: i64, v1, v2)
              v4 = alloc f32[v0]
              v5 = max((v0 / 4), (v0 % 4))
              launch f_map_1 global [v5] local [256] (v0: i64, v2, (-1 + v0): i64, v4)
              output v4 f32 {offset: 0; strides: [1]; shape: [v0]}
            -- segmap@grid: one work-item per run of 4 points, main.weft:1
            kernel f_map_0(n_1: i64, xs_4: buffer f32[], buf_10: buffer f32[]) @local_size(256) {
              parfor@grid.0.covered item_2 < max(n_1 / 4, n_1 % 4) do  -- main.weft:1
                new private base_3: i64 := item_2 * 4
                new private runs_17: i64 := n_1 / 4
                if item_2 < runs_17 then
                  x_5, x_6, x_7, x_8 := aligned vector f32[xs_4[base_3]..]
                  new private v_9: f32 := x_5 * 2e0f
                  buf_10[base_3] := v_9
                  new private i_11: i64 := base_3 + 1
                  new private v_12: f32 := x_6 * 2e0f
                  buf_10[base_3 + 1] := v_12
                  new private i_13: i64 := base_3 + 2
                  new private v_14: f32 := x_7 * 2e0f
                  buf_10[base_3 + 2] := v_14
                  new private i_15: i64 := base_3 + 3
                  new private v_16: f32 := x_8 * 2e0f
                  buf_10[base_3 + 3] := v_16
                new private tail_18: i64 := runs_17 * 4 + item_2
                if tail_18 < n_1 then
                  new private x_19: f32 := xs_4[tail_18]
                  new private v_20: f32 := x_19 * 2e0f
                  buf_10[tail_18] := v_20
            }
            -- segmap@grid: one work-item per run of 4 points, main.weft:1
            kernel f_map_1(n_1: i64, buf_4: buffer f32[], s_5: i64, buf_8: buffer f32[]) @local_size(256) {
              parfor@grid.0.covered item_2 < max(n_1 / 4, n_1 % 4) do  -- main.weft:1
                new private base_3: i64 := item_2 * 4
                new private runs_18: i64 := n_1 / 4
                if item_2 < runs_18 then
                  new private x_6: f32 := buf_4[s_5 + -base_3]
                  new private v_7: f32 := x_6 + 1e0f
                  buf_8[base_3] := v_7
                  new private i_9: i64 := base_3 + 1
                  new private x_10: f32 := buf_4[s_5 + -i_9]
                  new private v_11: f32 := x_10 + 1e0f
                  buf_8[base_3 + 1] := v_11
                  new private i_12: i64 := base_3 + 2
                  new private x_13: f32 := buf_4[s_5 + -i_12]
                  new private v_14: f32 := x_13 + 1e0f
                  buf_8[base_3 + 2] := v_14
                  new private i_15: i64 := base_3 + 3
                  new private x_16: f32 := buf_4[s_5 + -i_15]
                  new private v_17: f32 := x_16 + 1e0f
                  buf_8[base_3 + 3] := v_17
                new private tail_19: i64 := runs_18 * 4 + item_2
                if tail_19 < n_1 then
                  new private x_20: f32 := buf_4[s_5 + -tail_19]
                  new private v_21: f32 := x_20 + 1e0f
                  buf_8[tail_19] := v_21
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
              launch f_reduce_partials_0 global [(v2 * 256)] local [256] (v0: i64, local f32[256], v1, v3)
              v4 = alloc f32[1]
              launch f_reduce_total_1 global [256] local [256] (v2: i64, local f32[256], v3, v4)
              output v4 f32 {offset: 0; strides: []; shape: []}
            -- reduce partials: work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory, main.weft:1
            kernel f_reduce_partials_0(n_1: i64, red_2: group f32[], xs_9: buffer f32[], partial_53: buffer f32[]) @local_size(256) {
              new private t_3: i64 := (long)get_local_id(0)
              new private g_4: i64 := (long)get_group_id(0)
              new private acc_5: f32
              acc_5 := 0e0f
              new private quads_7: i64 := n_1 / 4
              parfor@grid.0 q_6 < quads_7 do  -- main.weft:1
                new private base_8: i64 := q_6 * 4
                x_10, x_11, x_12, x_13 := aligned vector f32[xs_9[base_8]..]
                new private v_14: f32 := x_10 * x_10
                new private i_15: i64 := base_8 + 1
                new private v_16: f32 := x_11 * x_11
                new private i_17: i64 := base_8 + 2
                new private v_18: f32 := x_12 * x_12
                new private i_19: i64 := base_8 + 3
                new private v_20: f32 := x_13 * x_13
                new private v_21: f32 := acc_5 + v_14
                acc_5 := v_21
                new private v_22: f32 := acc_5 + v_16
                acc_5 := v_22
                new private v_23: f32 := acc_5 + v_18
                acc_5 := v_23
                new private v_24: f32 := acc_5 + v_20
                acc_5 := v_24
              new private tail_25: i64 := quads_7 * 4 + (long)get_global_id(0)
              if tail_25 < n_1 then
                new private x_26: f32 := xs_9[tail_25]
                new private v_27: f32 := x_26 * x_26
                new private v_28: f32 := acc_5 + v_27
                acc_5 := v_28
              red_2[t_3] := acc_5
              barrier
              if t_3 < 128 then
                new private a_29: f32 := red_2[t_3]
                new private b_30: f32 := red_2[t_3 + 128]
                new private v_31: f32 := a_29 + b_30
                red_2[t_3] := v_31
              barrier
              if t_3 < 64 then
                new private a_32: f32 := red_2[t_3]
                new private b_33: f32 := red_2[t_3 + 64]
                new private v_34: f32 := a_32 + b_33
                red_2[t_3] := v_34
              barrier
              if t_3 < 32 then
                new private a_35: f32 := red_2[t_3]
                new private b_36: f32 := red_2[t_3 + 32]
                new private v_37: f32 := a_35 + b_36
                red_2[t_3] := v_37
              barrier
              if t_3 < 16 then
                new private a_38: f32 := red_2[t_3]
                new private b_39: f32 := red_2[t_3 + 16]
                new private v_40: f32 := a_38 + b_39
                red_2[t_3] := v_40
              barrier
              if t_3 < 8 then
                new private a_41: f32 := red_2[t_3]
                new private b_42: f32 := red_2[t_3 + 8]
                new private v_43: f32 := a_41 + b_42
                red_2[t_3] := v_43
              barrier
              if t_3 < 4 then
                new private a_44: f32 := red_2[t_3]
                new private b_45: f32 := red_2[t_3 + 4]
                new private v_46: f32 := a_44 + b_45
                red_2[t_3] := v_46
              barrier
              if t_3 < 2 then
                new private a_47: f32 := red_2[t_3]
                new private b_48: f32 := red_2[t_3 + 2]
                new private v_49: f32 := a_47 + b_48
                red_2[t_3] := v_49
              barrier
              if t_3 < 1 then
                new private a_50: f32 := red_2[t_3]
                new private b_51: f32 := red_2[t_3 + 1]
                new private v_52: f32 := a_50 + b_51
                red_2[t_3] := v_52
              barrier
              if t_3 == 0 then
                partial_53[g_4] := red_2[0]
            }
            -- reduce total: work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory, main.weft:1
            kernel f_reduce_total_1(groups_1: i64, red_2: group f32[], partial_9: buffer f32[], total_44: buffer f32[]) @local_size(256) {
              new private t_3: i64 := (long)get_local_id(0)
              new private g_4: i64 := (long)get_group_id(0)
              new private acc_5: f32
              acc_5 := 0e0f
              new private quads_7: i64 := groups_1 / 4
              parfor@grid.0 q_6 < quads_7 do  -- main.weft:1
                new private base_8: i64 := q_6 * 4
                new private x_10: f32 := partial_9[base_8]
                new private x_11: f32 := partial_9[base_8 + 1]
                new private x_12: f32 := partial_9[base_8 + 2]
                new private x_13: f32 := partial_9[base_8 + 3]
                new private v_14: f32 := acc_5 + x_10
                acc_5 := v_14
                new private v_15: f32 := acc_5 + x_11
                acc_5 := v_15
                new private v_16: f32 := acc_5 + x_12
                acc_5 := v_16
                new private v_17: f32 := acc_5 + x_13
                acc_5 := v_17
              new private tail_18: i64 := quads_7 * 4 + (long)get_global_id(0)
              if tail_18 < groups_1 then
                new private v_19: f32 := acc_5 + partial_9[tail_18]
                acc_5 := v_19
              red_2[t_3] := acc_5
              barrier
              if t_3 < 128 then
                new private a_20: f32 := red_2[t_3]
                new private b_21: f32 := red_2[t_3 + 128]
                new private v_22: f32 := a_20 + b_21
                red_2[t_3] := v_22
              barrier
              if t_3 < 64 then
                new private a_23: f32 := red_2[t_3]
                new private b_24: f32 := red_2[t_3 + 64]
                new private v_25: f32 := a_23 + b_24
                red_2[t_3] := v_25
              barrier
              if t_3 < 32 then
                new private a_26: f32 := red_2[t_3]
                new private b_27: f32 := red_2[t_3 + 32]
                new private v_28: f32 := a_26 + b_27
                red_2[t_3] := v_28
              barrier
              if t_3 < 16 then
                new private a_29: f32 := red_2[t_3]
                new private b_30: f32 := red_2[t_3 + 16]
                new private v_31: f32 := a_29 + b_30
                red_2[t_3] := v_31
              barrier
              if t_3 < 8 then
                new private a_32: f32 := red_2[t_3]
                new private b_33: f32 := red_2[t_3 + 8]
                new private v_34: f32 := a_32 + b_33
                red_2[t_3] := v_34
              barrier
              if t_3 < 4 then
                new private a_35: f32 := red_2[t_3]
                new private b_36: f32 := red_2[t_3 + 4]
                new private v_37: f32 := a_35 + b_36
                red_2[t_3] := v_37
              barrier
              if t_3 < 2 then
                new private a_38: f32 := red_2[t_3]
                new private b_39: f32 := red_2[t_3 + 2]
                new private v_40: f32 := a_38 + b_39
                red_2[t_3] := v_40
              barrier
              if t_3 < 1 then
                new private a_41: f32 := red_2[t_3]
                new private b_42: f32 := red_2[t_3 + 1]
                new private v_43: f32 := a_41 + b_42
                red_2[t_3] := v_43
              barrier
              if t_3 == 0 then
                total_44[g_4] := red_2[0]
            }
        "#]],
    );
}

#[test]
fn matmul_is_a_two_dimensional_ndrange() {
    check_kernel(
        "def dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)\nentry mm (a: [n][m]f32) (b: [m][p]f32) : [n][p]f32 = map (\\row -> map (\\col -> dot row col) (transpose b)) a",
        expect![[r#"
            // segred@grid: a tiled matrix product (128x128 per work-group of 16x16, 8x8 per work-item), main.weft:1
            __kernel void mm_product_0(
                __global long* weft_err,
                long n_1,
                long p_2,
                long m_3,
                __local float* tile_a_4,
                __local float* tile_b_5,
                __global const float* restrict a_79,
                __global const float* restrict b_92,
                __global float* restrict buf_248) {
              long tx_6 = (long)get_local_id(0);
              long ty_7 = (long)get_local_id(1);
              long col0_8 = (long)get_group_id(0) * 128;
              long row0_9 = (long)get_group_id(1) * 128;
              long me_10 = ty_7 * 16 + tx_6;
              float acc_11;
              acc_11 = 0e0f;
              float acc_12;
              acc_12 = 0e0f;
              float acc_13;
              acc_13 = 0e0f;
              float acc_14;
              acc_14 = 0e0f;
              float acc_15;
              acc_15 = 0e0f;
              float acc_16;
              acc_16 = 0e0f;
              float acc_17;
              acc_17 = 0e0f;
              float acc_18;
              acc_18 = 0e0f;
              float acc_19;
              acc_19 = 0e0f;
              float acc_20;
              acc_20 = 0e0f;
              float acc_21;
              acc_21 = 0e0f;
              float acc_22;
              acc_22 = 0e0f;
              float acc_23;
              acc_23 = 0e0f;
              float acc_24;
              acc_24 = 0e0f;
              float acc_25;
              acc_25 = 0e0f;
              float acc_26;
              acc_26 = 0e0f;
              float acc_27;
              acc_27 = 0e0f;
              float acc_28;
              acc_28 = 0e0f;
              float acc_29;
              acc_29 = 0e0f;
              float acc_30;
              acc_30 = 0e0f;
              float acc_31;
              acc_31 = 0e0f;
              float acc_32;
              acc_32 = 0e0f;
              float acc_33;
              acc_33 = 0e0f;
              float acc_34;
              acc_34 = 0e0f;
              float acc_35;
              acc_35 = 0e0f;
              float acc_36;
              acc_36 = 0e0f;
              float acc_37;
              acc_37 = 0e0f;
              float acc_38;
              acc_38 = 0e0f;
              float acc_39;
              acc_39 = 0e0f;
              float acc_40;
              acc_40 = 0e0f;
              float acc_41;
              acc_41 = 0e0f;
              float acc_42;
              acc_42 = 0e0f;
              float acc_43;
              acc_43 = 0e0f;
              float acc_44;
              acc_44 = 0e0f;
              float acc_45;
              acc_45 = 0e0f;
              float acc_46;
              acc_46 = 0e0f;
              float acc_47;
              acc_47 = 0e0f;
              float acc_48;
              acc_48 = 0e0f;
              float acc_49;
              acc_49 = 0e0f;
              float acc_50;
              acc_50 = 0e0f;
              float acc_51;
              acc_51 = 0e0f;
              float acc_52;
              acc_52 = 0e0f;
              float acc_53;
              acc_53 = 0e0f;
              float acc_54;
              acc_54 = 0e0f;
              float acc_55;
              acc_55 = 0e0f;
              float acc_56;
              acc_56 = 0e0f;
              float acc_57;
              acc_57 = 0e0f;
              float acc_58;
              acc_58 = 0e0f;
              float acc_59;
              acc_59 = 0e0f;
              float acc_60;
              acc_60 = 0e0f;
              float acc_61;
              acc_61 = 0e0f;
              float acc_62;
              acc_62 = 0e0f;
              float acc_63;
              acc_63 = 0e0f;
              float acc_64;
              acc_64 = 0e0f;
              float acc_65;
              acc_65 = 0e0f;
              float acc_66;
              acc_66 = 0e0f;
              float acc_67;
              acc_67 = 0e0f;
              float acc_68;
              acc_68 = 0e0f;
              float acc_69;
              acc_69 = 0e0f;
              float acc_70;
              acc_70 = 0e0f;
              float acc_71;
              acc_71 = 0e0f;
              float acc_72;
              acc_72 = 0e0f;
              float acc_73;
              acc_73 = 0e0f;
              float acc_74;
              acc_74 = 0e0f;
              for (long step_75 = 0; step_75 < (m_3 + 7) / 8; step_75++) { // main.weft:1
                long k0_76 = step_75 * 8;
                long row_77 = row0_9 + me_10 / 8;
                long kk_78 = k0_76 + me_10 % 8;
                if (row_77 < n_1 && kk_78 < m_3) {
                  if (!(0 <= row_77 && row_77 < n_1)) {
                    weft_fail(weft_err, 1, (long)(row_77), (long)(n_1));
                  }
                  long i_80 = max(min(row_77, max(n_1 - 1, 0L)), 0L);
                  tile_a_4[me_10 % 8 * 128 + me_10 / 8] = a_79[m_3 * row_77 + kk_78];
                }
                long row_81 = row0_9 + (me_10 + 256) / 8;
                long kk_82 = k0_76 + (me_10 + 256) % 8;
                if (row_81 < n_1 && kk_82 < m_3) {
                  if (!(0 <= row_81 && row_81 < n_1)) {
                    weft_fail(weft_err, 2, (long)(row_81), (long)(n_1));
                  }
                  long i_83 = max(min(row_81, max(n_1 - 1, 0L)), 0L);
                  tile_a_4[(me_10 + 256) % 8 * 128 + (me_10 + 256) / 8] = a_79[m_3 * row_81 + kk_82];
                }
                long row_84 = row0_9 + (me_10 + 512) / 8;
                long kk_85 = k0_76 + (me_10 + 512) % 8;
                if (row_84 < n_1 && kk_85 < m_3) {
                  if (!(0 <= row_84 && row_84 < n_1)) {
                    weft_fail(weft_err, 3, (long)(row_84), (long)(n_1));
                  }
                  long i_86 = max(min(row_84, max(n_1 - 1, 0L)), 0L);
                  tile_a_4[(me_10 + 512) % 8 * 128 + (me_10 + 512) / 8] = a_79[m_3 * row_84 + kk_85];
                }
                long row_87 = row0_9 + (me_10 + 768) / 8;
                long kk_88 = k0_76 + (me_10 + 768) % 8;
                if (row_87 < n_1 && kk_88 < m_3) {
                  if (!(0 <= row_87 && row_87 < n_1)) {
                    weft_fail(weft_err, 4, (long)(row_87), (long)(n_1));
                  }
                  long i_89 = max(min(row_87, max(n_1 - 1, 0L)), 0L);
                  tile_a_4[(me_10 + 768) % 8 * 128 + (me_10 + 768) / 8] = a_79[m_3 * row_87 + kk_88];
                }
                long row_90 = col0_8 + me_10 / 8;
                long kk_91 = k0_76 + me_10 % 8;
                if (row_90 < p_2 && kk_91 < m_3) {
                  if (!(0 <= row_90 && row_90 < p_2)) {
                    weft_fail(weft_err, 5, (long)(row_90), (long)(p_2));
                  }
                  long i_93 = max(min(row_90, max(p_2 - 1, 0L)), 0L);
                  tile_b_5[me_10 % 8 * 128 + me_10 / 8] = b_92[row_90 + kk_91 * p_2];
                }
                long row_94 = col0_8 + (me_10 + 256) / 8;
                long kk_95 = k0_76 + (me_10 + 256) % 8;
                if (row_94 < p_2 && kk_95 < m_3) {
                  if (!(0 <= row_94 && row_94 < p_2)) {
                    weft_fail(weft_err, 6, (long)(row_94), (long)(p_2));
                  }
                  long i_96 = max(min(row_94, max(p_2 - 1, 0L)), 0L);
                  tile_b_5[(me_10 + 256) % 8 * 128 + (me_10 + 256) / 8] = b_92[row_94 + kk_95 * p_2];
                }
                long row_97 = col0_8 + (me_10 + 512) / 8;
                long kk_98 = k0_76 + (me_10 + 512) % 8;
                if (row_97 < p_2 && kk_98 < m_3) {
                  if (!(0 <= row_97 && row_97 < p_2)) {
                    weft_fail(weft_err, 7, (long)(row_97), (long)(p_2));
                  }
                  long i_99 = max(min(row_97, max(p_2 - 1, 0L)), 0L);
                  tile_b_5[(me_10 + 512) % 8 * 128 + (me_10 + 512) / 8] = b_92[row_97 + kk_98 * p_2];
                }
                long row_100 = col0_8 + (me_10 + 768) / 8;
                long kk_101 = k0_76 + (me_10 + 768) % 8;
                if (row_100 < p_2 && kk_101 < m_3) {
                  if (!(0 <= row_100 && row_100 < p_2)) {
                    weft_fail(weft_err, 8, (long)(row_100), (long)(p_2));
                  }
                  long i_102 = max(min(row_100, max(p_2 - 1, 0L)), 0L);
                  tile_b_5[(me_10 + 768) % 8 * 128 + (me_10 + 768) / 8] = b_92[row_100 + kk_101 * p_2];
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                for (long d_103 = 0; d_103 < min(8L, m_3 - k0_76); d_103++) {
                  float x_104 = tile_a_4[d_103 * 128 + ty_7];
                  float x_105 = tile_a_4[d_103 * 128 + (ty_7 + 16)];
                  float x_106 = tile_a_4[d_103 * 128 + (ty_7 + 32)];
                  float x_107 = tile_a_4[d_103 * 128 + (ty_7 + 48)];
                  float x_108 = tile_a_4[d_103 * 128 + (ty_7 + 64)];
                  float x_109 = tile_a_4[d_103 * 128 + (ty_7 + 80)];
                  float x_110 = tile_a_4[d_103 * 128 + (ty_7 + 96)];
                  float x_111 = tile_a_4[d_103 * 128 + (ty_7 + 112)];
                  float y_112 = tile_b_5[d_103 * 128 + tx_6];
                  float y_113 = tile_b_5[d_103 * 128 + (tx_6 + 16)];
                  float y_114 = tile_b_5[d_103 * 128 + (tx_6 + 32)];
                  float y_115 = tile_b_5[d_103 * 128 + (tx_6 + 48)];
                  float y_116 = tile_b_5[d_103 * 128 + (tx_6 + 64)];
                  float y_117 = tile_b_5[d_103 * 128 + (tx_6 + 80)];
                  float y_118 = tile_b_5[d_103 * 128 + (tx_6 + 96)];
                  float y_119 = tile_b_5[d_103 * 128 + (tx_6 + 112)];
                  float v_120 = x_104 * y_112;
                  float v_121 = acc_11 + v_120;
                  acc_11 = v_121;
                  float v_122 = x_104 * y_113;
                  float v_123 = acc_12 + v_122;
                  acc_12 = v_123;
                  float v_124 = x_104 * y_114;
                  float v_125 = acc_13 + v_124;
                  acc_13 = v_125;
                  float v_126 = x_104 * y_115;
                  float v_127 = acc_14 + v_126;
                  acc_14 = v_127;
                  float v_128 = x_104 * y_116;
                  float v_129 = acc_15 + v_128;
                  acc_15 = v_129;
                  float v_130 = x_104 * y_117;
                  float v_131 = acc_16 + v_130;
                  acc_16 = v_131;
                  float v_132 = x_104 * y_118;
                  float v_133 = acc_17 + v_132;
                  acc_17 = v_133;
                  float v_134 = x_104 * y_119;
                  float v_135 = acc_18 + v_134;
                  acc_18 = v_135;
                  float v_136 = x_105 * y_112;
                  float v_137 = acc_19 + v_136;
                  acc_19 = v_137;
                  float v_138 = x_105 * y_113;
                  float v_139 = acc_20 + v_138;
                  acc_20 = v_139;
                  float v_140 = x_105 * y_114;
                  float v_141 = acc_21 + v_140;
                  acc_21 = v_141;
                  float v_142 = x_105 * y_115;
                  float v_143 = acc_22 + v_142;
                  acc_22 = v_143;
                  float v_144 = x_105 * y_116;
                  float v_145 = acc_23 + v_144;
                  acc_23 = v_145;
                  float v_146 = x_105 * y_117;
                  float v_147 = acc_24 + v_146;
                  acc_24 = v_147;
                  float v_148 = x_105 * y_118;
                  float v_149 = acc_25 + v_148;
                  acc_25 = v_149;
                  float v_150 = x_105 * y_119;
                  float v_151 = acc_26 + v_150;
                  acc_26 = v_151;
                  float v_152 = x_106 * y_112;
                  float v_153 = acc_27 + v_152;
                  acc_27 = v_153;
                  float v_154 = x_106 * y_113;
                  float v_155 = acc_28 + v_154;
                  acc_28 = v_155;
                  float v_156 = x_106 * y_114;
                  float v_157 = acc_29 + v_156;
                  acc_29 = v_157;
                  float v_158 = x_106 * y_115;
                  float v_159 = acc_30 + v_158;
                  acc_30 = v_159;
                  float v_160 = x_106 * y_116;
                  float v_161 = acc_31 + v_160;
                  acc_31 = v_161;
                  float v_162 = x_106 * y_117;
                  float v_163 = acc_32 + v_162;
                  acc_32 = v_163;
                  float v_164 = x_106 * y_118;
                  float v_165 = acc_33 + v_164;
                  acc_33 = v_165;
                  float v_166 = x_106 * y_119;
                  float v_167 = acc_34 + v_166;
                  acc_34 = v_167;
                  float v_168 = x_107 * y_112;
                  float v_169 = acc_35 + v_168;
                  acc_35 = v_169;
                  float v_170 = x_107 * y_113;
                  float v_171 = acc_36 + v_170;
                  acc_36 = v_171;
                  float v_172 = x_107 * y_114;
                  float v_173 = acc_37 + v_172;
                  acc_37 = v_173;
                  float v_174 = x_107 * y_115;
                  float v_175 = acc_38 + v_174;
                  acc_38 = v_175;
                  float v_176 = x_107 * y_116;
                  float v_177 = acc_39 + v_176;
                  acc_39 = v_177;
                  float v_178 = x_107 * y_117;
                  float v_179 = acc_40 + v_178;
                  acc_40 = v_179;
                  float v_180 = x_107 * y_118;
                  float v_181 = acc_41 + v_180;
                  acc_41 = v_181;
                  float v_182 = x_107 * y_119;
                  float v_183 = acc_42 + v_182;
                  acc_42 = v_183;
                  float v_184 = x_108 * y_112;
                  float v_185 = acc_43 + v_184;
                  acc_43 = v_185;
                  float v_186 = x_108 * y_113;
                  float v_187 = acc_44 + v_186;
                  acc_44 = v_187;
                  float v_188 = x_108 * y_114;
                  float v_189 = acc_45 + v_188;
                  acc_45 = v_189;
                  float v_190 = x_108 * y_115;
                  float v_191 = acc_46 + v_190;
                  acc_46 = v_191;
                  float v_192 = x_108 * y_116;
                  float v_193 = acc_47 + v_192;
                  acc_47 = v_193;
                  float v_194 = x_108 * y_117;
                  float v_195 = acc_48 + v_194;
                  acc_48 = v_195;
                  float v_196 = x_108 * y_118;
                  float v_197 = acc_49 + v_196;
                  acc_49 = v_197;
                  float v_198 = x_108 * y_119;
                  float v_199 = acc_50 + v_198;
                  acc_50 = v_199;
                  float v_200 = x_109 * y_112;
                  float v_201 = acc_51 + v_200;
                  acc_51 = v_201;
                  float v_202 = x_109 * y_113;
                  float v_203 = acc_52 + v_202;
                  acc_52 = v_203;
                  float v_204 = x_109 * y_114;
                  float v_205 = acc_53 + v_204;
                  acc_53 = v_205;
                  float v_206 = x_109 * y_115;
                  float v_207 = acc_54 + v_206;
                  acc_54 = v_207;
                  float v_208 = x_109 * y_116;
                  float v_209 = acc_55 + v_208;
                  acc_55 = v_209;
                  float v_210 = x_109 * y_117;
                  float v_211 = acc_56 + v_210;
                  acc_56 = v_211;
                  float v_212 = x_109 * y_118;
                  float v_213 = acc_57 + v_212;
                  acc_57 = v_213;
                  float v_214 = x_109 * y_119;
                  float v_215 = acc_58 + v_214;
                  acc_58 = v_215;
                  float v_216 = x_110 * y_112;
                  float v_217 = acc_59 + v_216;
                  acc_59 = v_217;
                  float v_218 = x_110 * y_113;
                  float v_219 = acc_60 + v_218;
                  acc_60 = v_219;
                  float v_220 = x_110 * y_114;
                  float v_221 = acc_61 + v_220;
                  acc_61 = v_221;
                  float v_222 = x_110 * y_115;
                  float v_223 = acc_62 + v_222;
                  acc_62 = v_223;
                  float v_224 = x_110 * y_116;
                  float v_225 = acc_63 + v_224;
                  acc_63 = v_225;
                  float v_226 = x_110 * y_117;
                  float v_227 = acc_64 + v_226;
                  acc_64 = v_227;
                  float v_228 = x_110 * y_118;
                  float v_229 = acc_65 + v_228;
                  acc_65 = v_229;
                  float v_230 = x_110 * y_119;
                  float v_231 = acc_66 + v_230;
                  acc_66 = v_231;
                  float v_232 = x_111 * y_112;
                  float v_233 = acc_67 + v_232;
                  acc_67 = v_233;
                  float v_234 = x_111 * y_113;
                  float v_235 = acc_68 + v_234;
                  acc_68 = v_235;
                  float v_236 = x_111 * y_114;
                  float v_237 = acc_69 + v_236;
                  acc_69 = v_237;
                  float v_238 = x_111 * y_115;
                  float v_239 = acc_70 + v_238;
                  acc_70 = v_239;
                  float v_240 = x_111 * y_116;
                  float v_241 = acc_71 + v_240;
                  acc_71 = v_241;
                  float v_242 = x_111 * y_117;
                  float v_243 = acc_72 + v_242;
                  acc_72 = v_243;
                  float v_244 = x_111 * y_118;
                  float v_245 = acc_73 + v_244;
                  acc_73 = v_245;
                  float v_246 = x_111 * y_119;
                  float v_247 = acc_74 + v_246;
                  acc_74 = v_247;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
              }
              long i_249 = row0_9 + ty_7;
              long j_250 = col0_8 + tx_6;
              if (i_249 < n_1 && j_250 < p_2) {
                buf_248[i_249 * p_2 + j_250] = acc_11;
              }
              long i_251 = row0_9 + ty_7;
              long j_252 = col0_8 + (tx_6 + 16);
              if (i_251 < n_1 && j_252 < p_2) {
                buf_248[i_251 * p_2 + j_252] = acc_12;
              }
              long i_253 = row0_9 + ty_7;
              long j_254 = col0_8 + (tx_6 + 32);
              if (i_253 < n_1 && j_254 < p_2) {
                buf_248[i_253 * p_2 + j_254] = acc_13;
              }
              long i_255 = row0_9 + ty_7;
              long j_256 = col0_8 + (tx_6 + 48);
              if (i_255 < n_1 && j_256 < p_2) {
                buf_248[i_255 * p_2 + j_256] = acc_14;
              }
              long i_257 = row0_9 + ty_7;
              long j_258 = col0_8 + (tx_6 + 64);
              if (i_257 < n_1 && j_258 < p_2) {
                buf_248[i_257 * p_2 + j_258] = acc_15;
              }
              long i_259 = row0_9 + ty_7;
              long j_260 = col0_8 + (tx_6 + 80);
              if (i_259 < n_1 && j_260 < p_2) {
                buf_248[i_259 * p_2 + j_260] = acc_16;
              }
              long i_261 = row0_9 + ty_7;
              long j_262 = col0_8 + (tx_6 + 96);
              if (i_261 < n_1 && j_262 < p_2) {
                buf_248[i_261 * p_2 + j_262] = acc_17;
              }
              long i_263 = row0_9 + ty_7;
              long j_264 = col0_8 + (tx_6 + 112);
              if (i_263 < n_1 && j_264 < p_2) {
                buf_248[i_263 * p_2 + j_264] = acc_18;
              }
              long i_265 = row0_9 + (ty_7 + 16);
              long j_266 = col0_8 + tx_6;
              if (i_265 < n_1 && j_266 < p_2) {
                buf_248[i_265 * p_2 + j_266] = acc_19;
              }
              long i_267 = row0_9 + (ty_7 + 16);
              long j_268 = col0_8 + (tx_6 + 16);
              if (i_267 < n_1 && j_268 < p_2) {
                buf_248[i_267 * p_2 + j_268] = acc_20;
              }
              long i_269 = row0_9 + (ty_7 + 16);
              long j_270 = col0_8 + (tx_6 + 32);
              if (i_269 < n_1 && j_270 < p_2) {
                buf_248[i_269 * p_2 + j_270] = acc_21;
              }
              long i_271 = row0_9 + (ty_7 + 16);
              long j_272 = col0_8 + (tx_6 + 48);
              if (i_271 < n_1 && j_272 < p_2) {
                buf_248[i_271 * p_2 + j_272] = acc_22;
              }
              long i_273 = row0_9 + (ty_7 + 16);
              long j_274 = col0_8 + (tx_6 + 64);
              if (i_273 < n_1 && j_274 < p_2) {
                buf_248[i_273 * p_2 + j_274] = acc_23;
              }
              long i_275 = row0_9 + (ty_7 + 16);
              long j_276 = col0_8 + (tx_6 + 80);
              if (i_275 < n_1 && j_276 < p_2) {
                buf_248[i_275 * p_2 + j_276] = acc_24;
              }
              long i_277 = row0_9 + (ty_7 + 16);
              long j_278 = col0_8 + (tx_6 + 96);
              if (i_277 < n_1 && j_278 < p_2) {
                buf_248[i_277 * p_2 + j_278] = acc_25;
              }
              long i_279 = row0_9 + (ty_7 + 16);
              long j_280 = col0_8 + (tx_6 + 112);
              if (i_279 < n_1 && j_280 < p_2) {
                buf_248[i_279 * p_2 + j_280] = acc_26;
              }
              long i_281 = row0_9 + (ty_7 + 32);
              long j_282 = col0_8 + tx_6;
              if (i_281 < n_1 && j_282 < p_2) {
                buf_248[i_281 * p_2 + j_282] = acc_27;
              }
              long i_283 = row0_9 + (ty_7 + 32);
              long j_284 = col0_8 + (tx_6 + 16);
              if (i_283 < n_1 && j_284 < p_2) {
                buf_248[i_283 * p_2 + j_284] = acc_28;
              }
              long i_285 = row0_9 + (ty_7 + 32);
              long j_286 = col0_8 + (tx_6 + 32);
              if (i_285 < n_1 && j_286 < p_2) {
                buf_248[i_285 * p_2 + j_286] = acc_29;
              }
              long i_287 = row0_9 + (ty_7 + 32);
              long j_288 = col0_8 + (tx_6 + 48);
              if (i_287 < n_1 && j_288 < p_2) {
                buf_248[i_287 * p_2 + j_288] = acc_30;
              }
              long i_289 = row0_9 + (ty_7 + 32);
              long j_290 = col0_8 + (tx_6 + 64);
              if (i_289 < n_1 && j_290 < p_2) {
                buf_248[i_289 * p_2 + j_290] = acc_31;
              }
              long i_291 = row0_9 + (ty_7 + 32);
              long j_292 = col0_8 + (tx_6 + 80);
              if (i_291 < n_1 && j_292 < p_2) {
                buf_248[i_291 * p_2 + j_292] = acc_32;
              }
              long i_293 = row0_9 + (ty_7 + 32);
              long j_294 = col0_8 + (tx_6 + 96);
              if (i_293 < n_1 && j_294 < p_2) {
                buf_248[i_293 * p_2 + j_294] = acc_33;
              }
              long i_295 = row0_9 + (ty_7 + 32);
              long j_296 = col0_8 + (tx_6 + 112);
              if (i_295 < n_1 && j_296 < p_2) {
                buf_248[i_295 * p_2 + j_296] = acc_34;
              }
              long i_297 = row0_9 + (ty_7 + 48);
              long j_298 = col0_8 + tx_6;
              if (i_297 < n_1 && j_298 < p_2) {
                buf_248[i_297 * p_2 + j_298] = acc_35;
              }
              long i_299 = row0_9 + (ty_7 + 48);
              long j_300 = col0_8 + (tx_6 + 16);
              if (i_299 < n_1 && j_300 < p_2) {
                buf_248[i_299 * p_2 + j_300] = acc_36;
              }
              long i_301 = row0_9 + (ty_7 + 48);
              long j_302 = col0_8 + (tx_6 + 32);
              if (i_301 < n_1 && j_302 < p_2) {
                buf_248[i_301 * p_2 + j_302] = acc_37;
              }
              long i_303 = row0_9 + (ty_7 + 48);
              long j_304 = col0_8 + (tx_6 + 48);
              if (i_303 < n_1 && j_304 < p_2) {
                buf_248[i_303 * p_2 + j_304] = acc_38;
              }
              long i_305 = row0_9 + (ty_7 + 48);
              long j_306 = col0_8 + (tx_6 + 64);
              if (i_305 < n_1 && j_306 < p_2) {
                buf_248[i_305 * p_2 + j_306] = acc_39;
              }
              long i_307 = row0_9 + (ty_7 + 48);
              long j_308 = col0_8 + (tx_6 + 80);
              if (i_307 < n_1 && j_308 < p_2) {
                buf_248[i_307 * p_2 + j_308] = acc_40;
              }
              long i_309 = row0_9 + (ty_7 + 48);
              long j_310 = col0_8 + (tx_6 + 96);
              if (i_309 < n_1 && j_310 < p_2) {
                buf_248[i_309 * p_2 + j_310] = acc_41;
              }
              long i_311 = row0_9 + (ty_7 + 48);
              long j_312 = col0_8 + (tx_6 + 112);
              if (i_311 < n_1 && j_312 < p_2) {
                buf_248[i_311 * p_2 + j_312] = acc_42;
              }
              long i_313 = row0_9 + (ty_7 + 64);
              long j_314 = col0_8 + tx_6;
              if (i_313 < n_1 && j_314 < p_2) {
                buf_248[i_313 * p_2 + j_314] = acc_43;
              }
              long i_315 = row0_9 + (ty_7 + 64);
              long j_316 = col0_8 + (tx_6 + 16);
              if (i_315 < n_1 && j_316 < p_2) {
                buf_248[i_315 * p_2 + j_316] = acc_44;
              }
              long i_317 = row0_9 + (ty_7 + 64);
              long j_318 = col0_8 + (tx_6 + 32);
              if (i_317 < n_1 && j_318 < p_2) {
                buf_248[i_317 * p_2 + j_318] = acc_45;
              }
              long i_319 = row0_9 + (ty_7 + 64);
              long j_320 = col0_8 + (tx_6 + 48);
              if (i_319 < n_1 && j_320 < p_2) {
                buf_248[i_319 * p_2 + j_320] = acc_46;
              }
              long i_321 = row0_9 + (ty_7 + 64);
              long j_322 = col0_8 + (tx_6 + 64);
              if (i_321 < n_1 && j_322 < p_2) {
                buf_248[i_321 * p_2 + j_322] = acc_47;
              }
              long i_323 = row0_9 + (ty_7 + 64);
              long j_324 = col0_8 + (tx_6 + 80);
              if (i_323 < n_1 && j_324 < p_2) {
                buf_248[i_323 * p_2 + j_324] = acc_48;
              }
              long i_325 = row0_9 + (ty_7 + 64);
              long j_326 = col0_8 + (tx_6 + 96);
              if (i_325 < n_1 && j_326 < p_2) {
                buf_248[i_325 * p_2 + j_326] = acc_49;
              }
              long i_327 = row0_9 + (ty_7 + 64);
              long j_328 = col0_8 + (tx_6 + 112);
              if (i_327 < n_1 && j_328 < p_2) {
                buf_248[i_327 * p_2 + j_328] = acc_50;
              }
              long i_329 = row0_9 + (ty_7 + 80);
              long j_330 = col0_8 + tx_6;
              if (i_329 < n_1 && j_330 < p_2) {
                buf_248[i_329 * p_2 + j_330] = acc_51;
              }
              long i_331 = row0_9 + (ty_7 + 80);
              long j_332 = col0_8 + (tx_6 + 16);
              if (i_331 < n_1 && j_332 < p_2) {
                buf_248[i_331 * p_2 + j_332] = acc_52;
              }
              long i_333 = row0_9 + (ty_7 + 80);
              long j_334 = col0_8 + (tx_6 + 32);
              if (i_333 < n_1 && j_334 < p_2) {
                buf_248[i_333 * p_2 + j_334] = acc_53;
              }
              long i_335 = row0_9 + (ty_7 + 80);
              long j_336 = col0_8 + (tx_6 + 48);
              if (i_335 < n_1 && j_336 < p_2) {
                buf_248[i_335 * p_2 + j_336] = acc_54;
              }
              long i_337 = row0_9 + (ty_7 + 80);
              long j_338 = col0_8 + (tx_6 + 64);
              if (i_337 < n_1 && j_338 < p_2) {
                buf_248[i_337 * p_2 + j_338] = acc_55;
              }
              long i_339 = row0_9 + (ty_7 + 80);
              long j_340 = col0_8 + (tx_6 + 80);
              if (i_339 < n_1 && j_340 < p_2) {
                buf_248[i_339 * p_2 + j_340] = acc_56;
              }
              long i_341 = row0_9 + (ty_7 + 80);
              long j_342 = col0_8 + (tx_6 + 96);
              if (i_341 < n_1 && j_342 < p_2) {
                buf_248[i_341 * p_2 + j_342] = acc_57;
              }
              long i_343 = row0_9 + (ty_7 + 80);
              long j_344 = col0_8 + (tx_6 + 112);
              if (i_343 < n_1 && j_344 < p_2) {
                buf_248[i_343 * p_2 + j_344] = acc_58;
              }
              long i_345 = row0_9 + (ty_7 + 96);
              long j_346 = col0_8 + tx_6;
              if (i_345 < n_1 && j_346 < p_2) {
                buf_248[i_345 * p_2 + j_346] = acc_59;
              }
              long i_347 = row0_9 + (ty_7 + 96);
              long j_348 = col0_8 + (tx_6 + 16);
              if (i_347 < n_1 && j_348 < p_2) {
                buf_248[i_347 * p_2 + j_348] = acc_60;
              }
              long i_349 = row0_9 + (ty_7 + 96);
              long j_350 = col0_8 + (tx_6 + 32);
              if (i_349 < n_1 && j_350 < p_2) {
                buf_248[i_349 * p_2 + j_350] = acc_61;
              }
              long i_351 = row0_9 + (ty_7 + 96);
              long j_352 = col0_8 + (tx_6 + 48);
              if (i_351 < n_1 && j_352 < p_2) {
                buf_248[i_351 * p_2 + j_352] = acc_62;
              }
              long i_353 = row0_9 + (ty_7 + 96);
              long j_354 = col0_8 + (tx_6 + 64);
              if (i_353 < n_1 && j_354 < p_2) {
                buf_248[i_353 * p_2 + j_354] = acc_63;
              }
              long i_355 = row0_9 + (ty_7 + 96);
              long j_356 = col0_8 + (tx_6 + 80);
              if (i_355 < n_1 && j_356 < p_2) {
                buf_248[i_355 * p_2 + j_356] = acc_64;
              }
              long i_357 = row0_9 + (ty_7 + 96);
              long j_358 = col0_8 + (tx_6 + 96);
              if (i_357 < n_1 && j_358 < p_2) {
                buf_248[i_357 * p_2 + j_358] = acc_65;
              }
              long i_359 = row0_9 + (ty_7 + 96);
              long j_360 = col0_8 + (tx_6 + 112);
              if (i_359 < n_1 && j_360 < p_2) {
                buf_248[i_359 * p_2 + j_360] = acc_66;
              }
              long i_361 = row0_9 + (ty_7 + 112);
              long j_362 = col0_8 + tx_6;
              if (i_361 < n_1 && j_362 < p_2) {
                buf_248[i_361 * p_2 + j_362] = acc_67;
              }
              long i_363 = row0_9 + (ty_7 + 112);
              long j_364 = col0_8 + (tx_6 + 16);
              if (i_363 < n_1 && j_364 < p_2) {
                buf_248[i_363 * p_2 + j_364] = acc_68;
              }
              long i_365 = row0_9 + (ty_7 + 112);
              long j_366 = col0_8 + (tx_6 + 32);
              if (i_365 < n_1 && j_366 < p_2) {
                buf_248[i_365 * p_2 + j_366] = acc_69;
              }
              long i_367 = row0_9 + (ty_7 + 112);
              long j_368 = col0_8 + (tx_6 + 48);
              if (i_367 < n_1 && j_368 < p_2) {
                buf_248[i_367 * p_2 + j_368] = acc_70;
              }
              long i_369 = row0_9 + (ty_7 + 112);
              long j_370 = col0_8 + (tx_6 + 64);
              if (i_369 < n_1 && j_370 < p_2) {
                buf_248[i_369 * p_2 + j_370] = acc_71;
              }
              long i_371 = row0_9 + (ty_7 + 112);
              long j_372 = col0_8 + (tx_6 + 80);
              if (i_371 < n_1 && j_372 < p_2) {
                buf_248[i_371 * p_2 + j_372] = acc_72;
              }
              long i_373 = row0_9 + (ty_7 + 112);
              long j_374 = col0_8 + (tx_6 + 96);
              if (i_373 < n_1 && j_374 < p_2) {
                buf_248[i_373 * p_2 + j_374] = acc_73;
              }
              long i_375 = row0_9 + (ty_7 + 112);
              long j_376 = col0_8 + (tx_6 + 112);
              if (i_375 < n_1 && j_376 < p_2) {
                buf_248[i_375 * p_2 + j_376] = acc_74;
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
            // computes a scalar (one work-item), main.weft:1
            __kernel void f_scalar_0(
                __global long* weft_err,
                int s_1,
                int s_2,
                __global int* restrict buf_4) {
              int v_3 = weft_div_int(weft_err, 3, s_1, s_2);
              buf_4[0] = v_3;
            }
        "#]],
    );
}

fn check_spaces(src: &str, expect: Expect) {
    let c = compiled(src);
    expect.assert_eq(&c.spaces.report);
}

#[test]
fn defs_called_with_arrays_are_functions_cloned_per_address_space() {
    // `dot` is called with a local and a global array: two clones, each with the
    // qualifiers address-space inference found, and the layout as parameters.
    check_kernel(
        r#"
def dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)
entry rows (a: [n][m]f32) (v: [m]f32) : [n]f32 =
  map@group (\row -> let t = to_local row in dot t v + dot row v) a
"#,
        expect![[r#"
            // segmap@group: one work-group of 256 per point, main.weft:4
            __kernel void rows_group_0(
                __global long* weft_err,
                long n_1,
                __global const float* restrict a_3,
                long m_4,
                __local float* t_6,
                __local float* red_8,
                __local float* red_9,
                __global const float* restrict v_17,
                __global float* restrict buf_79) {
              for (long group_2 = get_group_id(0); group_2 < n_1; group_2 += get_num_groups(0)) { // main.weft:4
                long i_5 = max(min(group_2, max(n_1 - 1, 0L)), 0L);
                for (long i_7 = 0; i_7 < m_4; i_7++) {
                  t_6[i_7] = a_3[m_4 * group_2 + i_7];
                }
                float acc_10;
                float acc_11;
                acc_10 = 0e0f;
                acc_11 = 0e0f;
                long t_12 = (long)get_local_id(0);
                for (long k_13 = 0; k_13 < max(0L, (m_4 - t_12 + 255) / 256); k_13++) {
                  long i_14 = t_12 + k_13 * 256;
                  if (!(0 <= i_14 && i_14 < m_4)) {
                    weft_fail(weft_err, 2, (long)(i_14), (long)(m_4));
                  }
                  long i_15 = max(min(i_14, max(m_4 - 1, 0L)), 0L);
                  float x_16 = t_6[i_15];
                  if (!(0 <= i_14 && i_14 < m_4)) {
                    weft_fail(weft_err, 3, (long)(i_14), (long)(m_4));
                  }
                  long i_18 = max(min(i_14, max(m_4 - 1, 0L)), 0L);
                  float y_19 = v_17[i_18];
                  float v_20 = x_16 * y_19;
                  if (!(0 <= i_14 && i_14 < m_4)) {
                    weft_fail(weft_err, 4, (long)(i_14), (long)(m_4));
                  }
                  long i_21 = max(min(i_14, max(m_4 - 1, 0L)), 0L);
                  float x_22 = a_3[m_4 * group_2 + i_21];
                  if (!(0 <= i_14 && i_14 < m_4)) {
                    weft_fail(weft_err, 5, (long)(i_14), (long)(m_4));
                  }
                  long i_23 = max(min(i_14, max(m_4 - 1, 0L)), 0L);
                  float y_24 = v_17[i_23];
                  float v_25 = x_22 * y_24;
                  float v_26 = acc_10 + v_20;
                  float v_27 = acc_11 + v_25;
                  acc_10 = v_26;
                  acc_11 = v_27;
                }
                red_8[t_12] = acc_10;
                red_9[t_12] = acc_11;
                barrier(CLK_LOCAL_MEM_FENCE);
                if (t_12 < 128) {
                  float a_28 = red_8[t_12];
                  float a_29 = red_9[t_12];
                  float b_30 = red_8[t_12 + 128];
                  float b_31 = red_9[t_12 + 128];
                  float v_32 = a_28 + b_30;
                  float v_33 = a_29 + b_31;
                  red_8[t_12] = v_32;
                  red_9[t_12] = v_33;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                if (t_12 < 64) {
                  float a_34 = red_8[t_12];
                  float a_35 = red_9[t_12];
                  float b_36 = red_8[t_12 + 64];
                  float b_37 = red_9[t_12 + 64];
                  float v_38 = a_34 + b_36;
                  float v_39 = a_35 + b_37;
                  red_8[t_12] = v_38;
                  red_9[t_12] = v_39;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                if (t_12 < 32) {
                  float a_40 = red_8[t_12];
                  float a_41 = red_9[t_12];
                  float b_42 = red_8[t_12 + 32];
                  float b_43 = red_9[t_12 + 32];
                  float v_44 = a_40 + b_42;
                  float v_45 = a_41 + b_43;
                  red_8[t_12] = v_44;
                  red_9[t_12] = v_45;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                if (t_12 < 16) {
                  float a_46 = red_8[t_12];
                  float a_47 = red_9[t_12];
                  float b_48 = red_8[t_12 + 16];
                  float b_49 = red_9[t_12 + 16];
                  float v_50 = a_46 + b_48;
                  float v_51 = a_47 + b_49;
                  red_8[t_12] = v_50;
                  red_9[t_12] = v_51;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                if (t_12 < 8) {
                  float a_52 = red_8[t_12];
                  float a_53 = red_9[t_12];
                  float b_54 = red_8[t_12 + 8];
                  float b_55 = red_9[t_12 + 8];
                  float v_56 = a_52 + b_54;
                  float v_57 = a_53 + b_55;
                  red_8[t_12] = v_56;
                  red_9[t_12] = v_57;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                if (t_12 < 4) {
                  float a_58 = red_8[t_12];
                  float a_59 = red_9[t_12];
                  float b_60 = red_8[t_12 + 4];
                  float b_61 = red_9[t_12 + 4];
                  float v_62 = a_58 + b_60;
                  float v_63 = a_59 + b_61;
                  red_8[t_12] = v_62;
                  red_9[t_12] = v_63;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                if (t_12 < 2) {
                  float a_64 = red_8[t_12];
                  float a_65 = red_9[t_12];
                  float b_66 = red_8[t_12 + 2];
                  float b_67 = red_9[t_12 + 2];
                  float v_68 = a_64 + b_66;
                  float v_69 = a_65 + b_67;
                  red_8[t_12] = v_68;
                  red_9[t_12] = v_69;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                if (t_12 < 1) {
                  float a_70 = red_8[t_12];
                  float a_71 = red_9[t_12];
                  float b_72 = red_8[t_12 + 1];
                  float b_73 = red_9[t_12 + 1];
                  float v_74 = a_70 + b_72;
                  float v_75 = a_71 + b_73;
                  red_8[t_12] = v_74;
                  red_9[t_12] = v_75;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                float total_76;
                float total_77;
                total_76 = red_8[0];
                total_77 = red_9[0];
                barrier(CLK_LOCAL_MEM_FENCE);
                float v_78 = total_76 + total_77;
                if ((long)get_local_id(0) == 0) {
                  buf_79[group_2] = v_78;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
              }
            }
        "#]],
    );
}

#[test]
fn small_read_only_inputs_read_uniformly_are_constant() {
    // `c` has a constant size (8 floats) and every work-item reads `c[i]` for the same
    // `i` at the same time; `xs` is read at the work-item's own index.
    check_kernel(
        r#"
entry poly (c: [8]f32) (xs: [n]f32) : [n]f32 =
  map (\x -> loop acc = 0f32 for i < 8 do acc * x + c[i]) xs
"#,
        expect![[r#"
            // segmap@grid: one work-item per point (1-D NDRange), main.weft:3
            __kernel void poly_map_0(
                __global long* weft_err,
                long n_1,
                __global const float* restrict xs_3,
                __constant float* restrict c_8,
                long v8_9,
                __global float* restrict buf_12) {
              { // main.weft:3
                long gid_2 = get_global_id(0);
                if (gid_2 < n_1) {
                  float x_4 = xs_3[gid_2];
                  float acc_5 = 0e0f;
                  for (long i_6 = 0; i_6 < 8; i_6++) { // main.weft:3
                    float v_7 = acc_5 * x_4;
                    if (!(0 <= i_6 && i_6 < v8_9)) {
                      weft_fail(weft_err, 3, (long)(i_6), (long)(v8_9));
                      return;
                    }
                    float v_10 = c_8[i_6];
                    float v_11 = v_7 + v_10;
                    acc_5 = v_11;
                  }
                  buf_12[gid_2] = acc_5;
                }
              }
            }
        "#]],
    );
}

#[test]
fn address_spaces_are_printed_with_schemes_and_clones() {
    check_spaces(
        r#"
def dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)
entry rows (a: [n][m]f32) (v: [m]f32) (w: [4]f32) : [n]f32 =
  map@group (\row -> let t = to_local row in
                     let p = to_private (map (\x -> x * 2) w) in
                     dot t v + dot row v + dot p p) a
"#,
        expect![[r#"
            kernel rows_group_0 : (ASpace {global}, ASpace {local}, ASpace {local}, ASpace {global}, ASpace {local}, ASpace {local}, ASpace {local}, ASpace {global}, ASpace {local}, ASpace {global}) -> _
              a_3 : ASpace {global}
              t_6 : ASpace {local}
              v_8 : ASpace {local}
              w_12 : ASpace {global}
              p_17 : ASpace {local}
              red_19 : ASpace {local}
              red_20 : ASpace {local}
              v_28 : ASpace {global}
              red_90 : ASpace {local}
              buf_127 : ASpace {global}
            instance rows_group_0 = rows_group_0
              a_3 : global
              t_6 : local
              v_8 : local
              w_12 : global
              p_17 : local
              red_19 : local
              red_20 : local
              v_28 : global
              red_90 : local
              buf_127 : global
              `a_3` is read : global
              `t_6` is written : local
              `w_12` is read : global
              `v_8` is written : local
              `v_8` is read : local
              `p_17` is written : local
              `t_6` is read : local
              `v_28` is read : global
              `a_3` is read : global
              `v_28` is read : global
              `red_19` is written : local
              `red_20` is written : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is written : local
              `red_20` is written : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is written : local
              `red_20` is written : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is written : local
              `red_20` is written : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is written : local
              `red_20` is written : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is written : local
              `red_20` is written : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is written : local
              `red_20` is written : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is written : local
              `red_20` is written : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is read : local
              `red_20` is read : local
              `red_19` is written : local
              `red_20` is written : local
              `red_19` is read : local
              `red_20` is read : local
              `p_17` is read : local
              `p_17` is read : local
              `red_90` is written : local
              `red_90` is read : local
              `red_90` is read : local
              `red_90` is written : local
              `red_90` is read : local
              `red_90` is read : local
              `red_90` is written : local
              `red_90` is read : local
              `red_90` is read : local
              `red_90` is written : local
              `red_90` is read : local
              `red_90` is read : local
              `red_90` is written : local
              `red_90` is read : local
              `red_90` is read : local
              `red_90` is written : local
              `red_90` is read : local
              `red_90` is read : local
              `red_90` is written : local
              `red_90` is read : local
              `red_90` is read : local
              `red_90` is written : local
              `red_90` is read : local
              `red_90` is read : local
              `red_90` is written : local
              `red_90` is read : local
              `buf_127` is written : global
            why
              rows_group_0.a_3 (global): a buffer the host allocates for `a`, passed to the kernel
              rows_group_0.t_6 (local): an array the work-group computes and shares (the body of a group SegOp)
              rows_group_0.v_8 (local): an array the work-group computes and shares (the body of a group SegOp)
              rows_group_0.w_12 (global): a buffer the host allocates for `w`, passed to the kernel
              rows_group_0.p_17 (local): an array the work-group computes and shares (the body of a group SegOp)
              rows_group_0.red_19 (local): the work-group's tree of partial results of a reduction
              rows_group_0.red_20 (local): the work-group's tree of partial results of a reduction
              rows_group_0.v_28 (global): a buffer the host allocates for `v`, passed to the kernel
              rows_group_0.red_90 (local): the work-group's tree of partial results of a reduction
              rows_group_0.buf_127 (global): a buffer the host allocates, passed to the kernel
        "#]],
    );
}

#[test]
fn a_batch_of_matrix_products_is_one_tiled_launch_over_three_dimensions() {
    // The batch is NDRange dimension 2: each work-group fixes its batch element, which
    // offsets both operands and the result.
    let c = compiled(
        r#"
def dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)
entry mm (as: [q][n][k]f32) (bs: [q][k][m]f32) : [q][n][m]f32 =
  map2 (\a b -> map (\row -> map (\col -> dot row col) (transpose b)) a) as bs
"#,
    );
    let plan = weft_plan::print_plan(&c.plan);
    let kernel = crate::print_kernel(&c, 0);
    // The work-group ids, and the first access through each pointer offset by the batch.
    let mut seen = Vec::new();
    let mut lines = String::new();
    for l in kernel.lines().map(str::trim) {
        let ptr = l.split(['[', ' ']).find(|w| {
            w.ends_with(|c: char| c.is_ascii_digit()) && l.contains(&format!("{w}[batch"))
        });
        let first = ptr.is_some_and(|p| !seen.contains(&p.to_owned()));
        if l.contains("get_group_id") || first {
            if let Some(p) = ptr {
                seen.push(p.to_owned());
            }
            lines.push_str(l);
            lines.push('\n');
        }
    }
    expect![[r#"
        host plan for entry `mm`
          input v3: [v0][v1][v2]f32
          input v5: [v0][v2][v4]f32
          if (v0 >= 32768) {
            v6 = alloc f32[((v0 * v1) * v4)]
            v7 = alloc f32[(v4 * v0)]
            launch mm_map_0 global [v0] local [256] (v0: i64, v3, (v2 * v1): i64, v2: i64, v1: i64, v5, (v4 * v2): i64, v4: i64, v6, v7)
            v11 = v6
          } else {
            v8 = alloc f32[((v0 * v2) * v4)]
            launch mm_map_1 global [v0] local [256] (v0: i64, v5, (v4 * v2): i64, v4: i64, v2: i64, v8)
            v9 = alloc f32[((v0 * v1) * v4)]
            v10 = ((v0 * v1) * v4)
            launch mm_segred_2 global [v10] local [256] (v10: i64, v0: i64, v1: i64, v4: i64, v2: i64, v9, v3, (v2 * v1): i64, v8, (v2 * v4): i64)
            v11 = v9
          }
          output v11 f32 {offset: 0; strides: [(v1 * v4), v4, 1]; shape: [v0, v1, v4]}
    "#]].assert_eq(&format!("{plan}{lines}"));
}

#[test]
fn reduce_by_index_is_a_copy_then_one_atomic_update_per_value() {
    let float_add = "entry h (d: [m]f32) (is: [n]i64) (vs: [n]f32) : [m]f32 =
  reduce_by_index d (+) 0 is vs";
    check_kernel(
        float_add,
        expect![[r#"
            // hist dest: one work-item per element
            __kernel void h_hist_dest_0(
                __global long* weft_err,
                long m_1,
                __global const float* restrict d_3,
                __global float* restrict buf_4) {
              { // main.weft:2
                long gid_2 = get_global_id(0);
                if (gid_2 < m_1) {
                  buf_4[gid_2] = d_3[gid_2];
                }
              }
            }
            // seghist@grid: one work-item per value, an atomic add into its work-group's bins in local memory, then into the bins, main.weft:2
            __kernel void h_hist_1(
                __global long* weft_err,
                long n_1,
                long m_2,
                __global float* restrict buf_3,
                __local float* bins_4,
                __global const long* restrict is_7,
                __global const float* restrict vs_10) {
              for (long b_5 = get_local_id(0); b_5 < m_2; b_5 += get_local_size(0)) {
                bins_4[b_5] = (float)0;
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              for (long gid_6 = get_global_id(0); gid_6 < n_1; gid_6 += get_global_size(0)) { // main.weft:2
                long i_8 = max(min(gid_6, max(n_1 - 1, 0L)), 0L);
                long bin_9 = is_7[i_8];
                long i_11 = max(min(gid_6, max(n_1 - 1, 0L)), 0L);
                float x_12 = vs_10[i_11];
                if (0 <= bin_9 && bin_9 < m_2) {
                  weft_atomic_add_float_local(&bins_4[bin_9], x_12);
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              for (long b_13 = get_local_id(0); b_13 < m_2; b_13 += get_local_size(0)) {
                if (bins_4[b_13] != (float)0) {
                  weft_atomic_add_float(&buf_3[b_13], bins_4[b_13]);
                }
              }
            }
            // seghist@grid: one work-item per value, an atomic add into its bin, main.weft:2
            __kernel void h_hist_2(
                __global long* weft_err,
                long n_1,
                long m_2,
                __global float* restrict buf_3,
                __global const long* restrict is_5,
                __global const float* restrict vs_7) {
              { // main.weft:2
                long gid_4 = get_global_id(0);
                if (gid_4 < n_1) {
                  long bin_6 = is_5[gid_4];
                  float x_8 = vs_7[gid_4];
                  if (0 <= bin_6 && bin_6 < m_2) {
                    weft_atomic_add_float(&buf_3[bin_6], x_8);
                  }
                }
              }
            }
        "#]],
    );
    // The float helper is in the program only when a kernel adds floats atomically.
    assert!(compiled(float_add).plan.source.contains("void weft_atomic_add_float("));
    // With few bins each work-group adds into its own bins in local memory first, by
    // the local variant of the compare-and-swap loop.
    let source = compiled(float_add).plan.source;
    assert!(source.contains("weft_atomic_add_float_local(&"), "{source}");
    assert!(source.contains("void weft_atomic_add_float_local(volatile __local float* p"));
    let int_max = compiled(
        "entry h (is: [n]i64) (vs: [n]i32) : [8]i32 =
  reduce_by_index (replicate 8 i32.lowest) i32.max i32.lowest is vs",
    );
    assert!(int_max.plan.source.contains("atomic_max(&"));
    assert!(!int_max.plan.source.contains("weft_atomic_add_float"));
}

#[test]
fn reduce_by_index_without_an_atomic_runs_one_work_item_per_bin() {
    check_kernel(
        "entry h (is: [n]i64) (vs: [n]f32) : [8]f32 =
  reduce_by_index (replicate 8 f32.inf) f32.min f32.inf is vs",
        expect![[r#"
            // computes a scalar (one work-item), main.weft:2
            __kernel void h_scalar_0(
                __global long* weft_err,
                __global float* restrict buf_1) {
              buf_1[0] = INFINITY;
            }
            // replicate: one work-item per element
            __kernel void h_replicate_1(
                __global long* weft_err,
                __global float* restrict buf_2,
                __global const float* restrict buf_3) {
              { // main.weft:2
                long gid_1 = get_global_id(0);
                if (gid_1 < 8) {
                  buf_2[gid_1] = buf_3[0];
                }
              }
            }
            // seghist@grid: one work-item per bin, main.weft:2
            __kernel void h_hist_2(
                __global long* weft_err,
                __global float* restrict buf_1,
                long n_2,
                __global const long* restrict is_6,
                __global const float* restrict vs_8) {
              { // main.weft:2
                long cell_3 = get_global_id(0);
                if (cell_3 < 8) {
                  float acc_4;
                  acc_4 = buf_1[cell_3];
                  for (long j_5 = 0; j_5 < n_2; j_5++) {
                    long bin_7 = is_6[j_5];
                    float x_9 = vs_8[j_5];
                    if (bin_7 == cell_3) {
                      float v_10 = fmin(acc_4, x_9);
                      acc_4 = v_10;
                    }
                  }
                  buf_1[cell_3] = acc_4;
                }
              }
            }
        "#]],
    );
}

#[test]
fn with_is_a_copy_then_a_checked_write_by_one_work_item() {
    check_kernel(
        "entry u (m: [r][c]i32) (i: i64) (j: i64) : [r][c]i32 = m with [i, j] = 0",
        expect![[r#"
            // update copy: one work-item per element
            __kernel void u_update_copy_0(
                __global long* weft_err,
                long elements_1,
                long r_2,
                long c_3,
                __global const int* restrict m_7,
                __global int* restrict buf_8) {
              { // main.weft:1
                long gid_4 = get_global_id(0);
                if (gid_4 < elements_1) {
                  long i_5 = gid_4 % c_3;
                  long rest_6 = gid_4 / c_3;
                  buf_8[rest_6 * c_3 + i_5] = m_7[rest_6 * c_3 + i_5];
                }
              }
            }
            // writes an updated element
            __kernel void u_update_1(
                __global long* weft_err,
                __global int* restrict buf_1,
                long c_2,
                long r_3,
                long i_4,
                long j_5) {
              buf_1[i_4 * c_2 + j_5] = 0;
            }
        "#]],
    );
}

/// `reduce@group` with a commutative operator (here a component-wise tuple `+`) folds
/// interleaved shares, so neighbouring work-items read neighbouring elements; a
/// non-commutative one folds contiguous shares and combines neighbours in order.
#[test]
fn group_reductions_read_interleaved_when_the_operator_is_commutative() {
    let kernel = |src: &str| {
        let c = compiled(src);
        (0..c.kernels.len()).map(|i| crate::print_kernel(&c, i)).collect::<String>()
    };
    let commutative = kernel(
        "entry sums (xss: [n][m]f32) : [n]f32 =
  map@group (\\xs -> let (s, q) = reduce@group (\\(a, b) (c, d) -> (a + c, d + b)) (0, 0)
                                   (map@thread (\\x -> (x, x * x)) xs)
                   in s * q) xss",
    );
    assert!(commutative.contains("k_") && commutative.contains(" * 256;"), "{commutative}");
    assert!(commutative.contains("t_") && commutative.contains(" < 128)"), "{commutative}");
    assert!(!commutative.contains("per_"), "{commutative}");
    let ordered = kernel(
        "entry firsts (xss: [n][m]f32) : [n]f32 =
  map@group (\\xs -> reduce@group (\\a b -> if a != 0 then a else b) 0 xs) xss",
    );
    assert!(ordered.contains("end_"), "{ordered}");
    assert!(ordered.contains(" % 2 == 0 &&"), "{ordered}");
}

/// A histogram of 32-bit bins has a second kernel, chosen at run time when the bins fit
/// in local memory: each work-group counts into its own bins there (atomics in local
/// memory), then adds the bins it touched into the result.
#[test]
fn few_32_bit_bins_are_counted_in_local_sub_histograms() {
    let c = compiled(
        "entry h (xs: [n]i64) : [256]i32 = reduce_by_index (replicate 256 0) (+) 0 xs (replicate n 1)",
    );
    let plan = weft_plan::print_plan(&c.plan);
    assert!(plan.contains("if (256 <= 4096) {"), "{plan}");
    let local = (0..c.kernels.len())
        .map(|i| crate::print_kernel(&c, i))
        .find(|k| k.contains("__local int* bins_"))
        .expect("a kernel with local bins");
    assert!(local.contains("atomic_add(&bins_"), "{local}");
    // Then the group's bins into the result's.
    assert_eq!(local.matches("atomic_add(&").count(), 2, "{local}");
    assert_eq!(local.matches("barrier(CLK_LOCAL_MEM_FENCE);").count(), 2, "{local}");
    // A float addition is a compare-and-swap loop in local memory as in global memory:
    // few float bins are summed in sub-histograms too. 64-bit bins are not.
    let floats = compiled(
        "entry h (is: [n]i64) (vs: [n]f32) : [8]f32 = reduce_by_index (replicate 8 0) (+) 0 is vs",
    );
    assert!(weft_plan::print_plan(&floats.plan).contains("<= 4096"));
    let doubles = compiled(
        "entry h (is: [n]i64) (vs: [n]f64) : [8]f64 = reduce_by_index (replicate 8 0) (+) 0 is vs",
    );
    assert!(!weft_plan::print_plan(&doubles.plan).contains("<= 4096"));
}

/// A loop that updates its parameter writes in place: no copy inside the loop; a loop
/// starting from an input copies it once, before the loop.
#[test]
fn a_loop_of_updates_writes_in_place() {
    let plan = |src: &str| weft_plan::print_plan(&compiled(src).plan);
    let built = plan(
        "entry f (n: i64) : [n]i64 =
  loop acc = replicate n 0 for i < n do acc with [i] = i * 2",
    );
    let body = built.split("for v").nth(1).expect(&built);
    assert_eq!(body.matches("launch").count(), 1, "one update per iteration, no copy\n{built}");
    assert!(!body.contains("alloc"), "{built}");
    let from_input = plan(
        "entry g (m: [n][n]f32) (x: f32) : [n][n]f32 =
  loop acc = m for i < n do acc with [i, i] = x",
    );
    let (before, body) = from_input.split_once("for v").expect(&from_input);
    assert!(before.contains("alloc f32"), "the input is copied once\n{from_input}");
    assert!(!body.contains("alloc"), "{from_input}");
    // Still needed afterwards: a copy.
    let kept = compiled(
        "entry h (m: [r][c]i32) (i: i64) (row: [c]i32) : ([r][c]i32, [r][c]i32) = (m with [i] = row, m)",
    );
    assert!(
        kept.kernels.iter().any(|k| k.doc.contains("update copy")),
        "{:?}",
        kept.kernels.iter().map(|k| &k.doc).collect::<Vec<_>>()
    );
}

#[test]
fn a_rows_lets_are_computed_once_per_row_not_per_element() {
    // The row's maximum is a `let` of the lambda that makes the row; writing the row
    // element by element must not run the reduction again for every element (that
    // was quadratic: a row softmax took 1.1 s on POCL).
    let src = "entry f (xss: [n][m]f32) : [n][m]f32 =
      map@grid (\\xs -> let mx = reduce@seq f32.max (-f32.inf) xs
                        in map@seq (\\x -> x - mx) xs) xss";
    let c = compiled(src);
    let text: String = c.kernels.iter().map(weft_lower::print_kernel_imp).collect();
    // Both loops over the row sit directly in the work-item's body: none is nested in
    // the other.
    let loops: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("for ")).collect();
    assert_eq!(loops.len(), 2, "{text}");
    let indent = |l: &str| l.len() - l.trim_start().len();
    assert_eq!(indent(loops[0]), indent(loops[1]), "{text}");
}

#[test]
fn a_scan_on_a_cpu_scans_each_work_items_share_in_order() {
    // On a GPU the last stage scans tiles of a work-group's size in local memory (a
    // tree of barriers per tile, reads coalesced across work-items); on a CPU each
    // work-item scans its contiguous share sequentially from its carry (the earlier
    // stages' prefix of the shares' totals), with no barrier.
    let src = "entry f (xs: [n]f32) : [n]f32 = scan (+) 0 xs";
    let mut db = RootDatabase::default();
    let file = db.set_file("main.weft", src);
    let checked = weft_core::CheckedFile::new(&db, file).expect("no errors");
    let program = weft_core::lower_file(&db, checked).expect("elaborates");
    let position = |o: &weft_core::Origin| weft_core::origin_position(&db, o);
    let last_stage = |profile: Option<&str>| {
        let profile =
            profile.map(|p| weft_cost::profile::builtin_profile_named(p).expect("committed"));
        let options = weft_lower::Options { profile, ..Default::default() };
        let c = crate::compile_entry(&program, program.entries[0], &position, options)
            .expect("compiles");
        assert_eq!(c.kernels.len(), 3, "totals, carries, scan");
        crate::print_kernel(&c, 2)
    };
    let barriers = |text: &str| text.matches("barrier(").count();
    // No profile: an unknown device (an NVIDIA GPU gets the look-back scan instead).
    let gpu = last_stage(None);
    assert!(gpu.contains("tile_") && barriers(&gpu) > 8, "{gpu}");
    let cpu = last_stage(Some("pocl-cpu"));
    assert_eq!(barriers(&cpu), 0, "{cpu}");
    assert!(!cpu.contains("tile_"), "{cpu}");
}

#[test]
fn a_scan_on_an_nvidia_gpu_is_one_pass_with_decoupled_look_back() {
    // A device that keeps started work-groups resident (an NVIDIA GPU) scans a 32-bit
    // element in one pass: a kernel that clears the status words, then one that reads
    // each element once and writes it once, with a tile counter and a look-back over
    // published totals. Elsewhere (no profile: an unknown device; POCL) and for other
    // element types, the three-stage scan.
    let scan_kernels = |src: &str, profile: Option<&str>| {
        let mut db = RootDatabase::default();
        let file = db.set_file("main.weft", src);
        let checked = weft_core::CheckedFile::new(&db, file).expect("no errors");
        let program = weft_core::lower_file(&db, checked).expect("elaborates");
        let position = |o: &weft_core::Origin| weft_core::origin_position(&db, o);
        let profile =
            profile.map(|p| weft_cost::profile::builtin_profile_named(p).expect("committed"));
        let options = weft_lower::Options { profile, ..Default::default() };
        let c = crate::compile_entry(&program, program.entries[0], &position, options)
            .expect("compiles");
        (0..c.kernels.len()).map(|i| crate::print_kernel(&c, i)).collect::<Vec<_>>()
    };
    let f32_scan = "entry f (xs: [n]f32) : [n]f32 = scan (+) 0 xs";
    let kernels = scan_kernels(f32_scan, Some("nvidia-h100"));
    assert_eq!(kernels.len(), 2, "{kernels:#?}");
    let scan = &kernels[1];
    assert!(scan.contains("atom_xchg(&") && scan.contains("atom_add(&"), "{scan}");
    // The group's look-back loop and, inside it, the first work-item's walk over a
    // window of status words.
    assert_eq!(scan.matches("while (").count(), 2, "{scan}");
    assert_eq!(scan_kernels(f32_scan, None).len(), 3, "three stages on an unknown device");
    assert_eq!(scan_kernels(f32_scan, Some("pocl-cpu")).len(), 3, "three stages on POCL");
    let f64_scan = "entry f (xs: [n]f64) : [n]f64 = scan (+) 0 xs";
    assert_eq!(scan_kernels(f64_scan, Some("nvidia-h100")).len(), 3, "64-bit: three stages");
}

#[test]
fn a_per_work_item_array_of_a_size_known_at_launch_is_expanded() {
    // The loop's accumulator is a row of `m` elements in each work-item: one global
    // buffer holds every work-item's copy, allocated before the launch for the
    // work-items it has, element `i` of work-item `w` at `i * items + w` (coalesced).
    let c = compiled(
        "entry f (xss: [n][m]f32) (k: i64) : [n][m]f32 =
           map (\\row -> loop acc = row for i < k do map (\\x -> x * 0.5f32) acc) xss",
    );
    let plan = weft_plan::print_plan(&c.plan);
    let allocs: Vec<&str> = plan.lines().filter(|l| l.contains("= alloc")).collect();
    // `m` elements for each of the launch's `n` work-items (one per row), in every
    // version.
    assert!(
        allocs.iter().all(|l| l.ends_with("[(v0 * v1)]") || l.ends_with("[(v1 * v0)]")),
        "{plan}"
    );
    for i in 0..c.kernels.len() {
        let kernel = crate::print_kernel(&c, i);
        assert!(kernel.contains("expanded_"), "{kernel}");
        assert!(!kernel.contains("__private float") && !kernel.contains("float arr_"), "{kernel}");
    }
}

/// Each line of the kernels of `src`'s first entry with the source text of the
/// expression it computes (after `|`); also checks that the text is what `print_kernel`
/// and the program print, with one origin per line.
fn check_line_origins(src: &str, expect: Expect) {
    use std::fmt::Write as _;
    let mut db = RootDatabase::default();
    let file = db.set_file("main.weft", src);
    let checked = weft_core::CheckedFile::new(&db, file).expect("test source has no errors");
    let program = weft_core::lower_file(&db, checked).expect("test source elaborates");
    let position = |o: &weft_core::Origin| weft_core::origin_position(&db, o);
    let c = crate::compile_entry(&program, program.entries[0], &position, Default::default())
        .expect("compiles");
    let whole = crate::print_program_with_origins(&c);
    assert_eq!(whole.text, c.plan.source);
    assert_eq!(whole.origins.len(), whole.text.lines().count());
    let source = |o: &weft_core::Origin| {
        let def = weft_hir::DefId::new(&db, o.def.clone());
        let (_, map) = weft_hir::body_with_source_map(&db, def);
        let range = map.expr_range(o.expr).expect("an origin has a range");
        // Source maps are relative to the declaration's start.
        let start = weft_hir::def_offset(&db, &o.def).expect("a def has an offset");
        src[std::ops::Range::<usize>::from(range + start)].replace('\n', " ")
    };
    let mut out = String::new();
    for i in 0..c.kernels.len() {
        let printed = crate::print_kernel_with_origins(&c, i);
        assert_eq!(printed.text, crate::print_kernel(&c, i));
        assert_eq!(printed.origins.len(), printed.text.lines().count());
        for (line, origin) in printed.text.lines().zip(&printed.origins) {
            match origin {
                Some(o) => {
                    let _ = writeln!(out, "{line:<44} | {}", source(o));
                }
                None => {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
    }
    expect.assert_eq(&out);
}

/// The kernel view links each generated line to the source expression it computes,
/// finer than the kernel (Compiler Explorer's colours): a fused producer's lines to the
/// producer, a def's function body to the def's expressions.
#[test]
fn each_printed_line_knows_the_source_expression_it_computes() {
    check_line_origins(
        "entry saxpy (a: f32) (xs: [n]f32) (ys: [n]f32) : [n]f32 =\n  map2 (\\x y -> a * x + y) xs ys",
        expect![[r#"
            // segmap@grid: one work-item per run of 4 points, main.weft:2
            __kernel void saxpy_map_0(
                __global long* weft_err,
                long n_1,
                __global const float* restrict xs_4,
                __global const float* restrict ys_9,
                float a_14,
                __global float* restrict buf_17) {
              { // main.weft:2                           | map2 (\x y -> a * x + y) xs ys
                long item_2 = get_global_id(0);          | map2 (\x y -> a * x + y) xs ys
                if (item_2 < max(n_1 / 4, n_1 % 4)) {    | map2 (\x y -> a * x + y) xs ys
                  long base_3 = item_2 * 4;              | map2 (\x y -> a * x + y) xs ys
                  long runs_30 = n_1 / 4;                | map2 (\x y -> a * x + y) xs ys
                  if (item_2 < runs_30) {                | map2 (\x y -> a * x + y) xs ys
                    float4 x_5_v = *((__global const float4*)&xs_4[base_3]); | map2 (\x y -> a * x + y) xs ys
                    float x_5 = x_5_v.s0;                | map2 (\x y -> a * x + y) xs ys
                    float x_6 = x_5_v.s1;                | map2 (\x y -> a * x + y) xs ys
                    float x_7 = x_5_v.s2;                | map2 (\x y -> a * x + y) xs ys
                    float x_8 = x_5_v.s3;                | map2 (\x y -> a * x + y) xs ys
                    float4 x_10_v = *((__global const float4*)&ys_9[base_3]); | map2 (\x y -> a * x + y) xs ys
                    float x_10 = x_10_v.s0;              | map2 (\x y -> a * x + y) xs ys
                    float x_11 = x_10_v.s1;              | map2 (\x y -> a * x + y) xs ys
                    float x_12 = x_10_v.s2;              | map2 (\x y -> a * x + y) xs ys
                    float x_13 = x_10_v.s3;              | map2 (\x y -> a * x + y) xs ys
                    float v_15 = a_14 * x_5;             | a * x
                    float v_16 = v_15 + x_10;            | a * x + y
                    buf_17[base_3] = v_16;               | a * x + y
                    long i_18 = base_3 + 1;              | map2 (\x y -> a * x + y) xs ys
                    long i_19 = base_3 + 1;              | map2 (\x y -> a * x + y) xs ys
                    float v_20 = a_14 * x_6;             | a * x
                    float v_21 = v_20 + x_11;            | a * x + y
                    buf_17[base_3 + 1] = v_21;           | a * x + y
                    long i_22 = base_3 + 2;              | map2 (\x y -> a * x + y) xs ys
                    long i_23 = base_3 + 2;              | map2 (\x y -> a * x + y) xs ys
                    float v_24 = a_14 * x_7;             | a * x
                    float v_25 = v_24 + x_12;            | a * x + y
                    buf_17[base_3 + 2] = v_25;           | a * x + y
                    long i_26 = base_3 + 3;              | map2 (\x y -> a * x + y) xs ys
                    long i_27 = base_3 + 3;              | map2 (\x y -> a * x + y) xs ys
                    float v_28 = a_14 * x_8;             | a * x
                    float v_29 = v_28 + x_13;            | a * x + y
                    buf_17[base_3 + 3] = v_29;           | a * x + y
                  }
                  long tail_31 = runs_30 * 4 + item_2;   | map2 (\x y -> a * x + y) xs ys
                  if (tail_31 < n_1) {                   | map2 (\x y -> a * x + y) xs ys
                    float x_32 = xs_4[tail_31];          | map2 (\x y -> a * x + y) xs ys
                    float y_33 = ys_9[tail_31];          | map2 (\x y -> a * x + y) xs ys
                    float v_34 = a_14 * x_32;            | a * x
                    float v_35 = v_34 + y_33;            | a * x + y
                    buf_17[tail_31] = v_35;              | a * x + y
                  }
                }
              }
            }
        "#]],
    );
    check_line_origins(
        "def dot (a: [k]f32) (b: [k]f32) : f32 = reduce (+) 0 (map2 (*) a b)\n\
         entry rows (m: [n][k]f32) (v: [k]f32) : [n]f32 = map (\\r -> dot r v) m",
        expect![[r#"
            // segmap@grid: short rows staged through local memory, one row per work-item, main.weft:2
            __kernel void rows_rows_staged_0(
                __global long* weft_err,
                __global const float* restrict m_1,
                long k_2,
                long n_3,
                __local float* rows_4,
                __global const float* restrict v_17,
                __global float* restrict outer_22) {
              long t_5 = (long)get_local_id(0);          | map (\r -> dot r v) m
              long row0_6 = (long)get_group_id(0) * 256; | map (\r -> dot r v) m
              long rows_here_7 = min(256L, n_3 - row0_6); | map (\r -> dot r v) m
              long count_8 = rows_here_7 * k_2;          | map (\r -> dot r v) m
              long base_9 = row0_6 * k_2;                | map (\r -> dot r v) m
              for (long f_10 = 0; f_10 < (count_8 + 255) / 256; f_10++) { | map (\r -> dot r v) m
                long e_11 = f_10 * 256 + t_5;            | map (\r -> dot r v) m
                if (e_11 < count_8) {                    | map (\r -> dot r v) m
                  rows_4[e_11 / k_2 * (k_2 + 1) + e_11 % k_2] = m_1[base_9 + e_11]; | map (\r -> dot r v) m
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);              | map (\r -> dot r v) m
              if (t_5 < rows_here_7) {                   | map (\r -> dot r v) m
                long i_12 = row0_6 + t_5;                | map (\r -> dot r v) m
                float acc_13 = 0e0f;                     | map (\r -> dot r v) m
                for (long i_14 = 0; i_14 < k_2; i_14++) { | map (\r -> dot r v) m
                  long i_15 = max(min(i_14, max(k_2 - 1, 0L)), 0L); | map (\r -> dot r v) m
                  float x_16 = rows_4[t_5 * (k_2 + 1) + i_15]; | map (\r -> dot r v) m
                  long i_18 = max(min(i_14, max(k_2 - 1, 0L)), 0L); | map (\r -> dot r v) m
                  float y_19 = v_17[i_18];               | map (\r -> dot r v) m
                  float v_20 = x_16 * y_19;              | map2 (*) a b
                  float v_21 = acc_13 + v_20;            | reduce (+) 0 (map2 (*) a b)
                  acc_13 = v_21;                         | map (\r -> dot r v) m
                }
                outer_22[i_12] = acc_13;                 | map (\r -> dot r v) m
              }
            }
            // segmap@grid: one work-item per point (1-D NDRange), main.weft:2
            __kernel void rows_map_1(
                __global long* weft_err,
                long n_1,
                __global const float* restrict m_3,
                long k_4,
                __global const float* restrict v_8,
                __global float* restrict outer_12) {
              { // main.weft:2                           | map (\r -> dot r v) m
                long gid_2 = get_global_id(0);           | map (\r -> dot r v) m
                if (gid_2 < n_1) {                       | map (\r -> dot r v) m
                  float acc_5 = 0e0f;                    | map (\r -> dot r v) m
                  for (long i_6 = 0; i_6 < k_4; i_6++) { | map (\r -> dot r v) m
                    float x_7 = m_3[k_4 * gid_2 + i_6];  | map (\r -> dot r v) m
                    float y_9 = v_8[i_6];                | map (\r -> dot r v) m
                    float v_10 = x_7 * y_9;              | map2 (*) a b
                    float v_11 = acc_5 + v_10;           | reduce (+) 0 (map2 (*) a b)
                    acc_5 = v_11;                        | map (\r -> dot r v) m
                  }
                  outer_12[gid_2] = acc_5;               | map (\r -> dot r v) m
                }
              }
            }
            // segmap@group: one work-group of 256 per point, main.weft:2
            __kernel void rows_group_2(
                __global long* weft_err,
                long n_1,
                __global const float* restrict m_3,
                long k_4,
                __local float* red_6,
                __global const float* restrict v_13,
                __global float* restrict intra_43) {
              for (long group_2 = get_group_id(0); group_2 < n_1; group_2 += get_num_groups(0)) { // main.weft:2 | map (\r -> dot r v) m
                long i_5 = max(min(group_2, max(n_1 - 1, 0L)), 0L); | map (\r -> dot r v) m
                float acc_7;                             | reduce (+) 0 (map2 (*) a b)
                acc_7 = 0e0f;                            | reduce (+) 0 (map2 (*) a b)
                long t_8 = (long)get_local_id(0);        | reduce (+) 0 (map2 (*) a b)
                for (long k_9 = 0; k_9 < max(0L, (k_4 - t_8 + 255) / 256); k_9++) { // main.weft:1 | reduce (+) 0 (map2 (*) a b)
                  long i_10 = t_8 + k_9 * 256;           | reduce (+) 0 (map2 (*) a b)
                  if (!(0 <= i_10 && i_10 < k_4)) {      | reduce (+) 0 (map2 (*) a b)
                    weft_fail(weft_err, 7, (long)(i_10), (long)(k_4)); | reduce (+) 0 (map2 (*) a b)
                  }
                  long i_11 = max(min(i_10, max(k_4 - 1, 0L)), 0L); | reduce (+) 0 (map2 (*) a b)
                  float x_12 = m_3[k_4 * group_2 + i_11]; | reduce (+) 0 (map2 (*) a b)
                  if (!(0 <= i_10 && i_10 < k_4)) {      | reduce (+) 0 (map2 (*) a b)
                    weft_fail(weft_err, 8, (long)(i_10), (long)(k_4)); | reduce (+) 0 (map2 (*) a b)
                  }
                  long i_14 = max(min(i_10, max(k_4 - 1, 0L)), 0L); | reduce (+) 0 (map2 (*) a b)
                  float y_15 = v_13[i_14];               | reduce (+) 0 (map2 (*) a b)
                  float v_16 = x_12 * y_15;              | map2 (*) a b
                  float v_17 = acc_7 + v_16;             | reduce (+) 0 (map2 (*) a b)
                  acc_7 = v_17;                          | reduce (+) 0 (map2 (*) a b)
                }
                red_6[t_8] = acc_7;                      | reduce (+) 0 (map2 (*) a b)
                barrier(CLK_LOCAL_MEM_FENCE);            | map (\r -> dot r v) m
                if (t_8 < 128) {                         | reduce (+) 0 (map2 (*) a b)
                  float a_18 = red_6[t_8];               | reduce (+) 0 (map2 (*) a b)
                  float b_19 = red_6[t_8 + 128];         | reduce (+) 0 (map2 (*) a b)
                  float v_20 = a_18 + b_19;              | reduce (+) 0 (map2 (*) a b)
                  red_6[t_8] = v_20;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | map (\r -> dot r v) m
                if (t_8 < 64) {                          | reduce (+) 0 (map2 (*) a b)
                  float a_21 = red_6[t_8];               | reduce (+) 0 (map2 (*) a b)
                  float b_22 = red_6[t_8 + 64];          | reduce (+) 0 (map2 (*) a b)
                  float v_23 = a_21 + b_22;              | reduce (+) 0 (map2 (*) a b)
                  red_6[t_8] = v_23;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | map (\r -> dot r v) m
                if (t_8 < 32) {                          | reduce (+) 0 (map2 (*) a b)
                  float a_24 = red_6[t_8];               | reduce (+) 0 (map2 (*) a b)
                  float b_25 = red_6[t_8 + 32];          | reduce (+) 0 (map2 (*) a b)
                  float v_26 = a_24 + b_25;              | reduce (+) 0 (map2 (*) a b)
                  red_6[t_8] = v_26;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | map (\r -> dot r v) m
                if (t_8 < 16) {                          | reduce (+) 0 (map2 (*) a b)
                  float a_27 = red_6[t_8];               | reduce (+) 0 (map2 (*) a b)
                  float b_28 = red_6[t_8 + 16];          | reduce (+) 0 (map2 (*) a b)
                  float v_29 = a_27 + b_28;              | reduce (+) 0 (map2 (*) a b)
                  red_6[t_8] = v_29;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | map (\r -> dot r v) m
                if (t_8 < 8) {                           | reduce (+) 0 (map2 (*) a b)
                  float a_30 = red_6[t_8];               | reduce (+) 0 (map2 (*) a b)
                  float b_31 = red_6[t_8 + 8];           | reduce (+) 0 (map2 (*) a b)
                  float v_32 = a_30 + b_31;              | reduce (+) 0 (map2 (*) a b)
                  red_6[t_8] = v_32;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | map (\r -> dot r v) m
                if (t_8 < 4) {                           | reduce (+) 0 (map2 (*) a b)
                  float a_33 = red_6[t_8];               | reduce (+) 0 (map2 (*) a b)
                  float b_34 = red_6[t_8 + 4];           | reduce (+) 0 (map2 (*) a b)
                  float v_35 = a_33 + b_34;              | reduce (+) 0 (map2 (*) a b)
                  red_6[t_8] = v_35;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | map (\r -> dot r v) m
                if (t_8 < 2) {                           | reduce (+) 0 (map2 (*) a b)
                  float a_36 = red_6[t_8];               | reduce (+) 0 (map2 (*) a b)
                  float b_37 = red_6[t_8 + 2];           | reduce (+) 0 (map2 (*) a b)
                  float v_38 = a_36 + b_37;              | reduce (+) 0 (map2 (*) a b)
                  red_6[t_8] = v_38;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | map (\r -> dot r v) m
                if (t_8 < 1) {                           | reduce (+) 0 (map2 (*) a b)
                  float a_39 = red_6[t_8];               | reduce (+) 0 (map2 (*) a b)
                  float b_40 = red_6[t_8 + 1];           | reduce (+) 0 (map2 (*) a b)
                  float v_41 = a_39 + b_40;              | reduce (+) 0 (map2 (*) a b)
                  red_6[t_8] = v_41;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | map (\r -> dot r v) m
                float total_42;                          | reduce (+) 0 (map2 (*) a b)
                total_42 = red_6[0];                     | reduce (+) 0 (map2 (*) a b)
                barrier(CLK_LOCAL_MEM_FENCE);            | map (\r -> dot r v) m
                if ((long)get_local_id(0) == 0) {        | map (\r -> dot r v) m
                  intra_43[group_2] = total_42;          | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | map (\r -> dot r v) m
              }
            }
            // segred@grid: one work-item per segment, main.weft:1
            __kernel void rows_segred_3(
                __global long* weft_err,
                long segments_1,
                long n_2,
                long s_3,
                long s_4,
                __global float* restrict partials_9,
                long k_13,
                __global const float* restrict m_15,
                __global const float* restrict v_17) {
              {                                          | reduce (+) 0 (map2 (*) a b)
                long segment_5 = get_global_id(0);       | reduce (+) 0 (map2 (*) a b)
                if (segment_5 < segments_1) {            | reduce (+) 0 (map2 (*) a b)
                  long i_6 = segment_5 % s_3;            | reduce (+) 0 (map2 (*) a b)
                  long rest_7 = segment_5 / s_3;         | reduce (+) 0 (map2 (*) a b)
                  float acc_8;                           | reduce (+) 0 (map2 (*) a b)
                  acc_8 = 0e0f;                          | reduce (+) 0 (map2 (*) a b)
                  for (long j_10 = 0; j_10 < s_4; j_10++) { // main.weft:1 | reduce (+) 0 (map2 (*) a b)
                    long t_11 = (long)((ulong)j_10 * (ulong)s_3); | reduce (+) 0 (map2 (*) a b)
                    long i_12 = (long)((ulong)i_6 + (ulong)t_11); | reduce (+) 0 (map2 (*) a b)
                    uchar inside_14 = i_12 < k_13;       | reduce (+) 0 (map2 (*) a b)
                    float element_20;                    | reduce (+) 0 (map2 (*) a b)
                    if (inside_14) {                     | reduce (+) 0 (map2 (*) a b)
                      if (!(0 <= rest_7 && rest_7 < n_2)) { | reduce (+) 0 (map2 (*) a b)
                        weft_fail(weft_err, 12, (long)(rest_7), (long)(n_2)); | reduce (+) 0 (map2 (*) a b)
                        return;                          | reduce (+) 0 (map2 (*) a b)
                      }
                      if (!(0 <= i_12 && i_12 < k_13)) { | reduce (+) 0 (map2 (*) a b)
                        weft_fail(weft_err, 13, (long)(i_12), (long)(k_13)); | reduce (+) 0 (map2 (*) a b)
                        return;                          | reduce (+) 0 (map2 (*) a b)
                      }
                      float x_16 = m_15[rest_7 * k_13 + i_12]; | reduce (+) 0 (map2 (*) a b)
                      if (!(0 <= i_12 && i_12 < k_13)) { | reduce (+) 0 (map2 (*) a b)
                        weft_fail(weft_err, 14, (long)(i_12), (long)(k_13)); | reduce (+) 0 (map2 (*) a b)
                        return;                          | reduce (+) 0 (map2 (*) a b)
                      }
                      float y_18 = v_17[i_12];           | reduce (+) 0 (map2 (*) a b)
                      float v_19 = x_16 * y_18;          | map2 (*) a b
                      element_20 = v_19;                 | reduce (+) 0 (map2 (*) a b)
                    } else {                             | reduce (+) 0 (map2 (*) a b)
                      element_20 = 0e0f;                 | reduce (+) 0 (map2 (*) a b)
                    }
                    float v_21 = acc_8 + element_20;     | reduce (+) 0 (map2 (*) a b)
                    acc_8 = v_21;                        | reduce (+) 0 (map2 (*) a b)
                  }
                  partials_9[rest_7 * s_3 + i_6] = acc_8; | reduce (+) 0 (map2 (*) a b)
                }
              }
            }
            // segmap@group: one work-group of 256 per point, main.weft:1
            __kernel void rows_group_4(
                __global long* weft_err,
                long n_1,
                long s_3,
                __local float* red_4,
                __global const float* restrict partials_9,
                __global float* restrict reduced_39) {
              for (long group_2 = get_group_id(0); group_2 < n_1; group_2 += get_num_groups(0)) { // main.weft:1 | reduce (+) 0 (map2 (*) a b)
                float acc_5;                             | reduce (+) 0 (map2 (*) a b)
                acc_5 = 0e0f;                            | reduce (+) 0 (map2 (*) a b)
                long t_6 = (long)get_local_id(0);        | reduce (+) 0 (map2 (*) a b)
                for (long k_7 = 0; k_7 < max(0L, (s_3 - t_6 + 255) / 256); k_7++) { // main.weft:1 | reduce (+) 0 (map2 (*) a b)
                  long i_8 = t_6 + k_7 * 256;            | reduce (+) 0 (map2 (*) a b)
                  long i_10 = max(min(group_2, max(n_1 - 1, 0L)), 0L); | reduce (+) 0 (map2 (*) a b)
                  if (!(0 <= i_8 && i_8 < s_3)) {        | reduce (+) 0 (map2 (*) a b)
                    weft_fail(weft_err, 16, (long)(i_8), (long)(s_3)); | reduce (+) 0 (map2 (*) a b)
                  }
                  long i_11 = max(min(i_8, max(s_3 - 1, 0L)), 0L); | reduce (+) 0 (map2 (*) a b)
                  float partial_12 = partials_9[i_10 * s_3 + i_11]; | reduce (+) 0 (map2 (*) a b)
                  float v_13 = acc_5 + partial_12;       | reduce (+) 0 (map2 (*) a b)
                  acc_5 = v_13;                          | reduce (+) 0 (map2 (*) a b)
                }
                red_4[t_6] = acc_5;                      | reduce (+) 0 (map2 (*) a b)
                barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0 (map2 (*) a b)
                if (t_6 < 128) {                         | reduce (+) 0 (map2 (*) a b)
                  float a_14 = red_4[t_6];               | reduce (+) 0 (map2 (*) a b)
                  float b_15 = red_4[t_6 + 128];         | reduce (+) 0 (map2 (*) a b)
                  float v_16 = a_14 + b_15;              | reduce (+) 0 (map2 (*) a b)
                  red_4[t_6] = v_16;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0 (map2 (*) a b)
                if (t_6 < 64) {                          | reduce (+) 0 (map2 (*) a b)
                  float a_17 = red_4[t_6];               | reduce (+) 0 (map2 (*) a b)
                  float b_18 = red_4[t_6 + 64];          | reduce (+) 0 (map2 (*) a b)
                  float v_19 = a_17 + b_18;              | reduce (+) 0 (map2 (*) a b)
                  red_4[t_6] = v_19;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0 (map2 (*) a b)
                if (t_6 < 32) {                          | reduce (+) 0 (map2 (*) a b)
                  float a_20 = red_4[t_6];               | reduce (+) 0 (map2 (*) a b)
                  float b_21 = red_4[t_6 + 32];          | reduce (+) 0 (map2 (*) a b)
                  float v_22 = a_20 + b_21;              | reduce (+) 0 (map2 (*) a b)
                  red_4[t_6] = v_22;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0 (map2 (*) a b)
                if (t_6 < 16) {                          | reduce (+) 0 (map2 (*) a b)
                  float a_23 = red_4[t_6];               | reduce (+) 0 (map2 (*) a b)
                  float b_24 = red_4[t_6 + 16];          | reduce (+) 0 (map2 (*) a b)
                  float v_25 = a_23 + b_24;              | reduce (+) 0 (map2 (*) a b)
                  red_4[t_6] = v_25;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0 (map2 (*) a b)
                if (t_6 < 8) {                           | reduce (+) 0 (map2 (*) a b)
                  float a_26 = red_4[t_6];               | reduce (+) 0 (map2 (*) a b)
                  float b_27 = red_4[t_6 + 8];           | reduce (+) 0 (map2 (*) a b)
                  float v_28 = a_26 + b_27;              | reduce (+) 0 (map2 (*) a b)
                  red_4[t_6] = v_28;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0 (map2 (*) a b)
                if (t_6 < 4) {                           | reduce (+) 0 (map2 (*) a b)
                  float a_29 = red_4[t_6];               | reduce (+) 0 (map2 (*) a b)
                  float b_30 = red_4[t_6 + 4];           | reduce (+) 0 (map2 (*) a b)
                  float v_31 = a_29 + b_30;              | reduce (+) 0 (map2 (*) a b)
                  red_4[t_6] = v_31;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0 (map2 (*) a b)
                if (t_6 < 2) {                           | reduce (+) 0 (map2 (*) a b)
                  float a_32 = red_4[t_6];               | reduce (+) 0 (map2 (*) a b)
                  float b_33 = red_4[t_6 + 2];           | reduce (+) 0 (map2 (*) a b)
                  float v_34 = a_32 + b_33;              | reduce (+) 0 (map2 (*) a b)
                  red_4[t_6] = v_34;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0 (map2 (*) a b)
                if (t_6 < 1) {                           | reduce (+) 0 (map2 (*) a b)
                  float a_35 = red_4[t_6];               | reduce (+) 0 (map2 (*) a b)
                  float b_36 = red_4[t_6 + 1];           | reduce (+) 0 (map2 (*) a b)
                  float v_37 = a_35 + b_36;              | reduce (+) 0 (map2 (*) a b)
                  red_4[t_6] = v_37;                     | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0 (map2 (*) a b)
                float total_38;                          | reduce (+) 0 (map2 (*) a b)
                total_38 = red_4[0];                     | reduce (+) 0 (map2 (*) a b)
                barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0 (map2 (*) a b)
                if ((long)get_local_id(0) == 0) {        | reduce (+) 0 (map2 (*) a b)
                  reduced_39[group_2] = total_38;        | reduce (+) 0 (map2 (*) a b)
                }
                barrier(CLK_LOCAL_MEM_FENCE);            | reduce (+) 0 (map2 (*) a b)
              }
            }
            // segred@grid: one work-item per segment, main.weft:1
            __kernel void rows_segred_5(
                __global long* weft_err,
                long n_1,
                long s_2,
                __global float* restrict reduced_5,
                __global const float* restrict partials_7) {
              {                                          | reduce (+) 0 (map2 (*) a b)
                long segment_3 = get_global_id(0);       | reduce (+) 0 (map2 (*) a b)
                if (segment_3 < n_1) {                   | reduce (+) 0 (map2 (*) a b)
                  float acc_4;                           | reduce (+) 0 (map2 (*) a b)
                  acc_4 = 0e0f;                          | reduce (+) 0 (map2 (*) a b)
                  for (long j_6 = 0; j_6 < s_2; j_6++) { // main.weft:1 | reduce (+) 0 (map2 (*) a b)
                    float partial_8 = partials_7[s_2 * segment_3 + j_6]; | reduce (+) 0 (map2 (*) a b)
                    float v_9 = acc_4 + partial_8;       | reduce (+) 0 (map2 (*) a b)
                    acc_4 = v_9;                         | reduce (+) 0 (map2 (*) a b)
                  }
                  reduced_5[segment_3] = acc_4;          | reduce (+) 0 (map2 (*) a b)
                }
              }
            }
        "#]],
    );
}
