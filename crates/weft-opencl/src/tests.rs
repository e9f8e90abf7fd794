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
              launch f_map_0 global [((v0 + 3) / 4)] local [256] (v0: i64, v1, (v0 - 1): i64, v2)
              output v2 f32 {offset: 0; strides: [1]; shape: [v0]}
            -- materialises `result`: one work-item per row
            kernel f_map_0(n_1: i64, xs_2: buffer f32[], s_3: i64, result_4: buffer f32[]) @local_size(256) {
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
            kernel f_reduce_partials_0(n_1: i64, xs_2: buffer f32[], partial_3: buffer f32[], groups_4: i64, red_5: group f32[]) @local_size(256) {
              new private t_6: i64 := (long)get_local_id(0)
              new private g_7: i64 := (long)get_group_id(0)
              new private r_8: f32
              r_8 := 0e0f
              new private quads_14: i64 := n_1 / 4
              parfor@grid.0 q_13 < quads_14 do  -- main.weft:1
                new private base_15: i64 := q_13 * 4
                new private v_16: f32 := xs_2[base_15] * xs_2[base_15]
                new private r_17: f32
                new private n_18: f32 := v_16
                r_17 := n_18
                new private v_19: f32 := xs_2[base_15 + 1] * xs_2[base_15 + 1]
                new private r_20: f32
                new private n_21: f32 := v_19
                r_20 := n_21
                new private v_22: f32 := xs_2[base_15 + 2] * xs_2[base_15 + 2]
                new private r_23: f32
                new private n_24: f32 := v_22
                r_23 := n_24
                new private v_25: f32 := xs_2[base_15 + 3] * xs_2[base_15 + 3]
                new private r_26: f32
                new private n_27: f32 := v_25
                r_26 := n_27
                new private v_28: f32 := r_8 + r_17
                new private n_29: f32 := v_28
                r_8 := n_29
                new private v_30: f32 := r_8 + r_20
                new private n_31: f32 := v_30
                r_8 := n_31
                new private v_32: f32 := r_8 + r_23
                new private n_33: f32 := v_32
                r_8 := n_33
                new private v_34: f32 := r_8 + r_26
                new private n_35: f32 := v_34
                r_8 := n_35
              new private tail_36: i64 := quads_14 * 4 + (long)get_global_id(0)
              if tail_36 < n_1 then
                new private v_37: f32 := xs_2[tail_36] * xs_2[tail_36]
                new private v_38: f32 := r_8 + v_37
                new private n_39: f32 := v_38
                r_8 := n_39
              red_5[t_6] := r_8
              barrier
              if t_6 < 128 then
                new private v_40: f32 := red_5[t_6] + red_5[t_6 + 128]
                red_5[t_6] := v_40
              barrier
              if t_6 < 64 then
                new private v_41: f32 := red_5[t_6] + red_5[t_6 + 64]
                red_5[t_6] := v_41
              barrier
              if t_6 < 32 then
                new private v_42: f32 := red_5[t_6] + red_5[t_6 + 32]
                red_5[t_6] := v_42
              barrier
              if t_6 < 16 then
                new private v_43: f32 := red_5[t_6] + red_5[t_6 + 16]
                red_5[t_6] := v_43
              barrier
              if t_6 < 8 then
                new private v_44: f32 := red_5[t_6] + red_5[t_6 + 8]
                red_5[t_6] := v_44
              barrier
              if t_6 < 4 then
                new private v_45: f32 := red_5[t_6] + red_5[t_6 + 4]
                red_5[t_6] := v_45
              barrier
              if t_6 < 2 then
                new private v_46: f32 := red_5[t_6] + red_5[t_6 + 2]
                red_5[t_6] := v_46
              barrier
              if t_6 < 1 then
                new private v_47: f32 := red_5[t_6] + red_5[t_6 + 1]
                red_5[t_6] := v_47
              barrier
              if t_6 == 0 then
                partial_3[g_7] := red_5[0]
            }
            -- reduce total: one work-groups of 256 fold interleaved elements (commutative operator) and combine in local memory
            kernel f_reduce_total_1(partial_1: buffer f32[], groups_2: i64, partial_3: buffer f32[], red_4: group f32[]) @local_size(256) {
              new private t_5: i64 := (long)get_local_id(0)
              new private g_6: i64 := (long)get_group_id(0)
              new private r_7: f32
              r_7 := 0e0f
              new private quads_12: i64 := groups_2 / 4
              parfor@grid.0 q_11 < quads_12 do  -- main.weft:1
                new private base_13: i64 := q_11 * 4
                new private r_14: f32
                new private n_15: f32 := partial_1[base_13]
                r_14 := n_15
                new private r_16: f32
                new private n_17: f32 := partial_1[base_13 + 1]
                r_16 := n_17
                new private r_18: f32
                new private n_19: f32 := partial_1[base_13 + 2]
                r_18 := n_19
                new private r_20: f32
                new private n_21: f32 := partial_1[base_13 + 3]
                r_20 := n_21
                new private v_22: f32 := r_7 + r_14
                new private n_23: f32 := v_22
                r_7 := n_23
                new private v_24: f32 := r_7 + r_16
                new private n_25: f32 := v_24
                r_7 := n_25
                new private v_26: f32 := r_7 + r_18
                new private n_27: f32 := v_26
                r_7 := n_27
                new private v_28: f32 := r_7 + r_20
                new private n_29: f32 := v_28
                r_7 := n_29
              new private tail_30: i64 := quads_12 * 4 + (long)get_global_id(0)
              if tail_30 < groups_2 then
                new private v_31: f32 := r_7 + partial_1[tail_30]
                new private n_32: f32 := v_31
                r_7 := n_32
              red_4[t_5] := r_7
              barrier
              if t_5 < 128 then
                new private v_33: f32 := red_4[t_5] + red_4[t_5 + 128]
                red_4[t_5] := v_33
              barrier
              if t_5 < 64 then
                new private v_34: f32 := red_4[t_5] + red_4[t_5 + 64]
                red_4[t_5] := v_34
              barrier
              if t_5 < 32 then
                new private v_35: f32 := red_4[t_5] + red_4[t_5 + 32]
                red_4[t_5] := v_35
              barrier
              if t_5 < 16 then
                new private v_36: f32 := red_4[t_5] + red_4[t_5 + 16]
                red_4[t_5] := v_36
              barrier
              if t_5 < 8 then
                new private v_37: f32 := red_4[t_5] + red_4[t_5 + 8]
                red_4[t_5] := v_37
              barrier
              if t_5 < 4 then
                new private v_38: f32 := red_4[t_5] + red_4[t_5 + 4]
                red_4[t_5] := v_38
              barrier
              if t_5 < 2 then
                new private v_39: f32 := red_4[t_5] + red_4[t_5 + 2]
                red_4[t_5] := v_39
              barrier
              if t_5 < 1 then
                new private v_40: f32 := red_4[t_5] + red_4[t_5 + 1]
                red_4[t_5] := v_40
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
            // materialises `result`, a matrix-multiplication nest: 128x128 tiles, 8x8 per work-item, shared dimension staged through local memory
            __kernel void mm_matmul_0(
                __global long* weft_err,
                __global const float* restrict b_1,
                long p_2,
                long m_3,
                __global const float* restrict a_4,
                long n_5,
                __global float* restrict result_6,
                __local float* a_tile_7,
                __local float* b_tile_8) {
              long tid_9 = (long)get_local_id(0);
              long tx_10 = tid_9 / 32 % 2 * 8 + tid_9 % 32 % 8;
              long ty_11 = tid_9 / 32 / 2 * 4 + tid_9 % 32 / 8;
              long col0_12 = (long)get_group_id(0) * 128;
              long row0_13 = (long)get_group_id(1) * 128;
              float acc00_14 = 0e0f;
              float acc01_15 = 0e0f;
              float acc02_16 = 0e0f;
              float acc03_17 = 0e0f;
              float acc04_18 = 0e0f;
              float acc05_19 = 0e0f;
              float acc06_20 = 0e0f;
              float acc07_21 = 0e0f;
              float acc10_22 = 0e0f;
              float acc11_23 = 0e0f;
              float acc12_24 = 0e0f;
              float acc13_25 = 0e0f;
              float acc14_26 = 0e0f;
              float acc15_27 = 0e0f;
              float acc16_28 = 0e0f;
              float acc17_29 = 0e0f;
              float acc20_30 = 0e0f;
              float acc21_31 = 0e0f;
              float acc22_32 = 0e0f;
              float acc23_33 = 0e0f;
              float acc24_34 = 0e0f;
              float acc25_35 = 0e0f;
              float acc26_36 = 0e0f;
              float acc27_37 = 0e0f;
              float acc30_38 = 0e0f;
              float acc31_39 = 0e0f;
              float acc32_40 = 0e0f;
              float acc33_41 = 0e0f;
              float acc34_42 = 0e0f;
              float acc35_43 = 0e0f;
              float acc36_44 = 0e0f;
              float acc37_45 = 0e0f;
              float acc40_46 = 0e0f;
              float acc41_47 = 0e0f;
              float acc42_48 = 0e0f;
              float acc43_49 = 0e0f;
              float acc44_50 = 0e0f;
              float acc45_51 = 0e0f;
              float acc46_52 = 0e0f;
              float acc47_53 = 0e0f;
              float acc50_54 = 0e0f;
              float acc51_55 = 0e0f;
              float acc52_56 = 0e0f;
              float acc53_57 = 0e0f;
              float acc54_58 = 0e0f;
              float acc55_59 = 0e0f;
              float acc56_60 = 0e0f;
              float acc57_61 = 0e0f;
              float acc60_62 = 0e0f;
              float acc61_63 = 0e0f;
              float acc62_64 = 0e0f;
              float acc63_65 = 0e0f;
              float acc64_66 = 0e0f;
              float acc65_67 = 0e0f;
              float acc66_68 = 0e0f;
              float acc67_69 = 0e0f;
              float acc70_70 = 0e0f;
              float acc71_71 = 0e0f;
              float acc72_72 = 0e0f;
              float acc73_73 = 0e0f;
              float acc74_74 = 0e0f;
              float acc75_75 = 0e0f;
              float acc76_76 = 0e0f;
              float acc77_77 = 0e0f;
              long r_78 = tid_9 / 8;
              long k_79 = tid_9 % 8;
              float pf_80 = 0;
              long r_81 = (tid_9 + 256) / 8;
              long k_82 = (tid_9 + 256) % 8;
              float pf_83 = 0;
              long r_84 = (tid_9 + 512) / 8;
              long k_85 = (tid_9 + 512) % 8;
              float pf_86 = 0;
              long r_87 = (tid_9 + 768) / 8;
              long k_88 = (tid_9 + 768) % 8;
              float pf_89 = 0;
              long r_90 = tid_9 % 128;
              long k_91 = tid_9 / 128;
              float pf_92 = 0;
              long r_93 = (tid_9 + 256) % 128;
              long k_94 = (tid_9 + 256) / 128;
              float pf_95 = 0;
              long r_96 = (tid_9 + 512) % 128;
              long k_97 = (tid_9 + 512) / 128;
              float pf_98 = 0;
              long r_99 = (tid_9 + 768) % 128;
              long k_100 = (tid_9 + 768) / 128;
              float pf_101 = 0;
              long ktiles_102 = (m_3 + 7) / 8;
              if (row0_13 + r_78 < n_5 && k_79 < m_3) {
                pf_80 = a_4[(row0_13 + r_78) * m_3 + k_79];
              }
              if (row0_13 + r_81 < n_5 && k_82 < m_3) {
                pf_83 = a_4[(row0_13 + r_81) * m_3 + k_82];
              }
              if (row0_13 + r_84 < n_5 && k_85 < m_3) {
                pf_86 = a_4[(row0_13 + r_84) * m_3 + k_85];
              }
              if (row0_13 + r_87 < n_5 && k_88 < m_3) {
                pf_89 = a_4[(row0_13 + r_87) * m_3 + k_88];
              }
              if (col0_12 + r_90 < p_2 && k_91 < m_3) {
                pf_92 = b_1[col0_12 + r_90 + k_91 * p_2];
              }
              if (col0_12 + r_93 < p_2 && k_94 < m_3) {
                pf_95 = b_1[col0_12 + r_93 + k_94 * p_2];
              }
              if (col0_12 + r_96 < p_2 && k_97 < m_3) {
                pf_98 = b_1[col0_12 + r_96 + k_97 * p_2];
              }
              if (col0_12 + r_99 < p_2 && k_100 < m_3) {
                pf_101 = b_1[col0_12 + r_99 + k_100 * p_2];
              }
              a_tile_7[k_79 * 128 + r_78] = pf_80;
              a_tile_7[k_82 * 128 + r_81] = pf_83;
              a_tile_7[k_85 * 128 + r_84] = pf_86;
              a_tile_7[k_88 * 128 + r_87] = pf_89;
              b_tile_8[k_91 * 128 + r_90] = pf_92;
              b_tile_8[k_94 * 128 + r_93] = pf_95;
              b_tile_8[k_97 * 128 + r_96] = pf_98;
              b_tile_8[k_100 * 128 + r_99] = pf_101;
              barrier(CLK_LOCAL_MEM_FENCE);
              for (long ktile_103 = 0; ktile_103 < ktiles_102; ktile_103++) {
                long cur_104 = ktile_103 % 2 * 1024;
                if (ktile_103 + 1 < ktiles_102) {
                  if (row0_13 + r_78 < n_5 && ktile_103 * 8 + 8 + k_79 < m_3) {
                    pf_80 = a_4[(row0_13 + r_78) * m_3 + (ktile_103 * 8 + 8 + k_79)];
                  }
                  if (row0_13 + r_81 < n_5 && ktile_103 * 8 + 8 + k_82 < m_3) {
                    pf_83 = a_4[(row0_13 + r_81) * m_3 + (ktile_103 * 8 + 8 + k_82)];
                  }
                  if (row0_13 + r_84 < n_5 && ktile_103 * 8 + 8 + k_85 < m_3) {
                    pf_86 = a_4[(row0_13 + r_84) * m_3 + (ktile_103 * 8 + 8 + k_85)];
                  }
                  if (row0_13 + r_87 < n_5 && ktile_103 * 8 + 8 + k_88 < m_3) {
                    pf_89 = a_4[(row0_13 + r_87) * m_3 + (ktile_103 * 8 + 8 + k_88)];
                  }
                  if (col0_12 + r_90 < p_2 && ktile_103 * 8 + 8 + k_91 < m_3) {
                    pf_92 = b_1[col0_12 + r_90 + (ktile_103 * 8 + 8 + k_91) * p_2];
                  }
                  if (col0_12 + r_93 < p_2 && ktile_103 * 8 + 8 + k_94 < m_3) {
                    pf_95 = b_1[col0_12 + r_93 + (ktile_103 * 8 + 8 + k_94) * p_2];
                  }
                  if (col0_12 + r_96 < p_2 && ktile_103 * 8 + 8 + k_97 < m_3) {
                    pf_98 = b_1[col0_12 + r_96 + (ktile_103 * 8 + 8 + k_97) * p_2];
                  }
                  if (col0_12 + r_99 < p_2 && ktile_103 * 8 + 8 + k_100 < m_3) {
                    pf_101 = b_1[col0_12 + r_99 + (ktile_103 * 8 + 8 + k_100) * p_2];
                  }
                }
                if (ktile_103 * 8 + 8 <= m_3) {
                  #pragma unroll
                  for (long k_105 = 0; k_105 < 8; k_105++) {
                    float4 a_106_v = vload4(0, &a_tile_7[cur_104 + k_105 * 128 + ty_11 * 8]);
                    float a_106 = a_106_v.s0;
                    float a_107 = a_106_v.s1;
                    float a_108 = a_106_v.s2;
                    float a_109 = a_106_v.s3;
                    float4 a_110_v = vload4(0, &a_tile_7[cur_104 + k_105 * 128 + (ty_11 * 8 + 4)]);
                    float a_110 = a_110_v.s0;
                    float a_111 = a_110_v.s1;
                    float a_112 = a_110_v.s2;
                    float a_113 = a_110_v.s3;
                    float b_114 = b_tile_8[cur_104 + k_105 * 128 + tx_10];
                    float b_115 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 16)];
                    float b_116 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 32)];
                    float b_117 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 48)];
                    float b_118 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 64)];
                    float b_119 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 80)];
                    float b_120 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 96)];
                    float b_121 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 112)];
                    float v_122 = a_106 * b_114;
                    float v_123 = acc00_14 + v_122;
                    acc00_14 = v_123;
                    float v_124 = a_106 * b_115;
                    float v_125 = acc01_15 + v_124;
                    acc01_15 = v_125;
                    float v_126 = a_106 * b_116;
                    float v_127 = acc02_16 + v_126;
                    acc02_16 = v_127;
                    float v_128 = a_106 * b_117;
                    float v_129 = acc03_17 + v_128;
                    acc03_17 = v_129;
                    float v_130 = a_106 * b_118;
                    float v_131 = acc04_18 + v_130;
                    acc04_18 = v_131;
                    float v_132 = a_106 * b_119;
                    float v_133 = acc05_19 + v_132;
                    acc05_19 = v_133;
                    float v_134 = a_106 * b_120;
                    float v_135 = acc06_20 + v_134;
                    acc06_20 = v_135;
                    float v_136 = a_106 * b_121;
                    float v_137 = acc07_21 + v_136;
                    acc07_21 = v_137;
                    float v_138 = a_107 * b_114;
                    float v_139 = acc10_22 + v_138;
                    acc10_22 = v_139;
                    float v_140 = a_107 * b_115;
                    float v_141 = acc11_23 + v_140;
                    acc11_23 = v_141;
                    float v_142 = a_107 * b_116;
                    float v_143 = acc12_24 + v_142;
                    acc12_24 = v_143;
                    float v_144 = a_107 * b_117;
                    float v_145 = acc13_25 + v_144;
                    acc13_25 = v_145;
                    float v_146 = a_107 * b_118;
                    float v_147 = acc14_26 + v_146;
                    acc14_26 = v_147;
                    float v_148 = a_107 * b_119;
                    float v_149 = acc15_27 + v_148;
                    acc15_27 = v_149;
                    float v_150 = a_107 * b_120;
                    float v_151 = acc16_28 + v_150;
                    acc16_28 = v_151;
                    float v_152 = a_107 * b_121;
                    float v_153 = acc17_29 + v_152;
                    acc17_29 = v_153;
                    float v_154 = a_108 * b_114;
                    float v_155 = acc20_30 + v_154;
                    acc20_30 = v_155;
                    float v_156 = a_108 * b_115;
                    float v_157 = acc21_31 + v_156;
                    acc21_31 = v_157;
                    float v_158 = a_108 * b_116;
                    float v_159 = acc22_32 + v_158;
                    acc22_32 = v_159;
                    float v_160 = a_108 * b_117;
                    float v_161 = acc23_33 + v_160;
                    acc23_33 = v_161;
                    float v_162 = a_108 * b_118;
                    float v_163 = acc24_34 + v_162;
                    acc24_34 = v_163;
                    float v_164 = a_108 * b_119;
                    float v_165 = acc25_35 + v_164;
                    acc25_35 = v_165;
                    float v_166 = a_108 * b_120;
                    float v_167 = acc26_36 + v_166;
                    acc26_36 = v_167;
                    float v_168 = a_108 * b_121;
                    float v_169 = acc27_37 + v_168;
                    acc27_37 = v_169;
                    float v_170 = a_109 * b_114;
                    float v_171 = acc30_38 + v_170;
                    acc30_38 = v_171;
                    float v_172 = a_109 * b_115;
                    float v_173 = acc31_39 + v_172;
                    acc31_39 = v_173;
                    float v_174 = a_109 * b_116;
                    float v_175 = acc32_40 + v_174;
                    acc32_40 = v_175;
                    float v_176 = a_109 * b_117;
                    float v_177 = acc33_41 + v_176;
                    acc33_41 = v_177;
                    float v_178 = a_109 * b_118;
                    float v_179 = acc34_42 + v_178;
                    acc34_42 = v_179;
                    float v_180 = a_109 * b_119;
                    float v_181 = acc35_43 + v_180;
                    acc35_43 = v_181;
                    float v_182 = a_109 * b_120;
                    float v_183 = acc36_44 + v_182;
                    acc36_44 = v_183;
                    float v_184 = a_109 * b_121;
                    float v_185 = acc37_45 + v_184;
                    acc37_45 = v_185;
                    float v_186 = a_110 * b_114;
                    float v_187 = acc40_46 + v_186;
                    acc40_46 = v_187;
                    float v_188 = a_110 * b_115;
                    float v_189 = acc41_47 + v_188;
                    acc41_47 = v_189;
                    float v_190 = a_110 * b_116;
                    float v_191 = acc42_48 + v_190;
                    acc42_48 = v_191;
                    float v_192 = a_110 * b_117;
                    float v_193 = acc43_49 + v_192;
                    acc43_49 = v_193;
                    float v_194 = a_110 * b_118;
                    float v_195 = acc44_50 + v_194;
                    acc44_50 = v_195;
                    float v_196 = a_110 * b_119;
                    float v_197 = acc45_51 + v_196;
                    acc45_51 = v_197;
                    float v_198 = a_110 * b_120;
                    float v_199 = acc46_52 + v_198;
                    acc46_52 = v_199;
                    float v_200 = a_110 * b_121;
                    float v_201 = acc47_53 + v_200;
                    acc47_53 = v_201;
                    float v_202 = a_111 * b_114;
                    float v_203 = acc50_54 + v_202;
                    acc50_54 = v_203;
                    float v_204 = a_111 * b_115;
                    float v_205 = acc51_55 + v_204;
                    acc51_55 = v_205;
                    float v_206 = a_111 * b_116;
                    float v_207 = acc52_56 + v_206;
                    acc52_56 = v_207;
                    float v_208 = a_111 * b_117;
                    float v_209 = acc53_57 + v_208;
                    acc53_57 = v_209;
                    float v_210 = a_111 * b_118;
                    float v_211 = acc54_58 + v_210;
                    acc54_58 = v_211;
                    float v_212 = a_111 * b_119;
                    float v_213 = acc55_59 + v_212;
                    acc55_59 = v_213;
                    float v_214 = a_111 * b_120;
                    float v_215 = acc56_60 + v_214;
                    acc56_60 = v_215;
                    float v_216 = a_111 * b_121;
                    float v_217 = acc57_61 + v_216;
                    acc57_61 = v_217;
                    float v_218 = a_112 * b_114;
                    float v_219 = acc60_62 + v_218;
                    acc60_62 = v_219;
                    float v_220 = a_112 * b_115;
                    float v_221 = acc61_63 + v_220;
                    acc61_63 = v_221;
                    float v_222 = a_112 * b_116;
                    float v_223 = acc62_64 + v_222;
                    acc62_64 = v_223;
                    float v_224 = a_112 * b_117;
                    float v_225 = acc63_65 + v_224;
                    acc63_65 = v_225;
                    float v_226 = a_112 * b_118;
                    float v_227 = acc64_66 + v_226;
                    acc64_66 = v_227;
                    float v_228 = a_112 * b_119;
                    float v_229 = acc65_67 + v_228;
                    acc65_67 = v_229;
                    float v_230 = a_112 * b_120;
                    float v_231 = acc66_68 + v_230;
                    acc66_68 = v_231;
                    float v_232 = a_112 * b_121;
                    float v_233 = acc67_69 + v_232;
                    acc67_69 = v_233;
                    float v_234 = a_113 * b_114;
                    float v_235 = acc70_70 + v_234;
                    acc70_70 = v_235;
                    float v_236 = a_113 * b_115;
                    float v_237 = acc71_71 + v_236;
                    acc71_71 = v_237;
                    float v_238 = a_113 * b_116;
                    float v_239 = acc72_72 + v_238;
                    acc72_72 = v_239;
                    float v_240 = a_113 * b_117;
                    float v_241 = acc73_73 + v_240;
                    acc73_73 = v_241;
                    float v_242 = a_113 * b_118;
                    float v_243 = acc74_74 + v_242;
                    acc74_74 = v_243;
                    float v_244 = a_113 * b_119;
                    float v_245 = acc75_75 + v_244;
                    acc75_75 = v_245;
                    float v_246 = a_113 * b_120;
                    float v_247 = acc76_76 + v_246;
                    acc76_76 = v_247;
                    float v_248 = a_113 * b_121;
                    float v_249 = acc77_77 + v_248;
                    acc77_77 = v_249;
                  }
                } else {
                  for (long k_105 = 0; k_105 < min(8L, m_3 - ktile_103 * 8); k_105++) {
                    float4 a_106_v = vload4(0, &a_tile_7[cur_104 + k_105 * 128 + ty_11 * 8]);
                    float a_106 = a_106_v.s0;
                    float a_107 = a_106_v.s1;
                    float a_108 = a_106_v.s2;
                    float a_109 = a_106_v.s3;
                    float4 a_110_v = vload4(0, &a_tile_7[cur_104 + k_105 * 128 + (ty_11 * 8 + 4)]);
                    float a_110 = a_110_v.s0;
                    float a_111 = a_110_v.s1;
                    float a_112 = a_110_v.s2;
                    float a_113 = a_110_v.s3;
                    float b_114 = b_tile_8[cur_104 + k_105 * 128 + tx_10];
                    float b_115 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 16)];
                    float b_116 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 32)];
                    float b_117 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 48)];
                    float b_118 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 64)];
                    float b_119 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 80)];
                    float b_120 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 96)];
                    float b_121 = b_tile_8[cur_104 + k_105 * 128 + (tx_10 + 112)];
                    float v_122 = a_106 * b_114;
                    float v_123 = acc00_14 + v_122;
                    acc00_14 = v_123;
                    float v_124 = a_106 * b_115;
                    float v_125 = acc01_15 + v_124;
                    acc01_15 = v_125;
                    float v_126 = a_106 * b_116;
                    float v_127 = acc02_16 + v_126;
                    acc02_16 = v_127;
                    float v_128 = a_106 * b_117;
                    float v_129 = acc03_17 + v_128;
                    acc03_17 = v_129;
                    float v_130 = a_106 * b_118;
                    float v_131 = acc04_18 + v_130;
                    acc04_18 = v_131;
                    float v_132 = a_106 * b_119;
                    float v_133 = acc05_19 + v_132;
                    acc05_19 = v_133;
                    float v_134 = a_106 * b_120;
                    float v_135 = acc06_20 + v_134;
                    acc06_20 = v_135;
                    float v_136 = a_106 * b_121;
                    float v_137 = acc07_21 + v_136;
                    acc07_21 = v_137;
                    float v_138 = a_107 * b_114;
                    float v_139 = acc10_22 + v_138;
                    acc10_22 = v_139;
                    float v_140 = a_107 * b_115;
                    float v_141 = acc11_23 + v_140;
                    acc11_23 = v_141;
                    float v_142 = a_107 * b_116;
                    float v_143 = acc12_24 + v_142;
                    acc12_24 = v_143;
                    float v_144 = a_107 * b_117;
                    float v_145 = acc13_25 + v_144;
                    acc13_25 = v_145;
                    float v_146 = a_107 * b_118;
                    float v_147 = acc14_26 + v_146;
                    acc14_26 = v_147;
                    float v_148 = a_107 * b_119;
                    float v_149 = acc15_27 + v_148;
                    acc15_27 = v_149;
                    float v_150 = a_107 * b_120;
                    float v_151 = acc16_28 + v_150;
                    acc16_28 = v_151;
                    float v_152 = a_107 * b_121;
                    float v_153 = acc17_29 + v_152;
                    acc17_29 = v_153;
                    float v_154 = a_108 * b_114;
                    float v_155 = acc20_30 + v_154;
                    acc20_30 = v_155;
                    float v_156 = a_108 * b_115;
                    float v_157 = acc21_31 + v_156;
                    acc21_31 = v_157;
                    float v_158 = a_108 * b_116;
                    float v_159 = acc22_32 + v_158;
                    acc22_32 = v_159;
                    float v_160 = a_108 * b_117;
                    float v_161 = acc23_33 + v_160;
                    acc23_33 = v_161;
                    float v_162 = a_108 * b_118;
                    float v_163 = acc24_34 + v_162;
                    acc24_34 = v_163;
                    float v_164 = a_108 * b_119;
                    float v_165 = acc25_35 + v_164;
                    acc25_35 = v_165;
                    float v_166 = a_108 * b_120;
                    float v_167 = acc26_36 + v_166;
                    acc26_36 = v_167;
                    float v_168 = a_108 * b_121;
                    float v_169 = acc27_37 + v_168;
                    acc27_37 = v_169;
                    float v_170 = a_109 * b_114;
                    float v_171 = acc30_38 + v_170;
                    acc30_38 = v_171;
                    float v_172 = a_109 * b_115;
                    float v_173 = acc31_39 + v_172;
                    acc31_39 = v_173;
                    float v_174 = a_109 * b_116;
                    float v_175 = acc32_40 + v_174;
                    acc32_40 = v_175;
                    float v_176 = a_109 * b_117;
                    float v_177 = acc33_41 + v_176;
                    acc33_41 = v_177;
                    float v_178 = a_109 * b_118;
                    float v_179 = acc34_42 + v_178;
                    acc34_42 = v_179;
                    float v_180 = a_109 * b_119;
                    float v_181 = acc35_43 + v_180;
                    acc35_43 = v_181;
                    float v_182 = a_109 * b_120;
                    float v_183 = acc36_44 + v_182;
                    acc36_44 = v_183;
                    float v_184 = a_109 * b_121;
                    float v_185 = acc37_45 + v_184;
                    acc37_45 = v_185;
                    float v_186 = a_110 * b_114;
                    float v_187 = acc40_46 + v_186;
                    acc40_46 = v_187;
                    float v_188 = a_110 * b_115;
                    float v_189 = acc41_47 + v_188;
                    acc41_47 = v_189;
                    float v_190 = a_110 * b_116;
                    float v_191 = acc42_48 + v_190;
                    acc42_48 = v_191;
                    float v_192 = a_110 * b_117;
                    float v_193 = acc43_49 + v_192;
                    acc43_49 = v_193;
                    float v_194 = a_110 * b_118;
                    float v_195 = acc44_50 + v_194;
                    acc44_50 = v_195;
                    float v_196 = a_110 * b_119;
                    float v_197 = acc45_51 + v_196;
                    acc45_51 = v_197;
                    float v_198 = a_110 * b_120;
                    float v_199 = acc46_52 + v_198;
                    acc46_52 = v_199;
                    float v_200 = a_110 * b_121;
                    float v_201 = acc47_53 + v_200;
                    acc47_53 = v_201;
                    float v_202 = a_111 * b_114;
                    float v_203 = acc50_54 + v_202;
                    acc50_54 = v_203;
                    float v_204 = a_111 * b_115;
                    float v_205 = acc51_55 + v_204;
                    acc51_55 = v_205;
                    float v_206 = a_111 * b_116;
                    float v_207 = acc52_56 + v_206;
                    acc52_56 = v_207;
                    float v_208 = a_111 * b_117;
                    float v_209 = acc53_57 + v_208;
                    acc53_57 = v_209;
                    float v_210 = a_111 * b_118;
                    float v_211 = acc54_58 + v_210;
                    acc54_58 = v_211;
                    float v_212 = a_111 * b_119;
                    float v_213 = acc55_59 + v_212;
                    acc55_59 = v_213;
                    float v_214 = a_111 * b_120;
                    float v_215 = acc56_60 + v_214;
                    acc56_60 = v_215;
                    float v_216 = a_111 * b_121;
                    float v_217 = acc57_61 + v_216;
                    acc57_61 = v_217;
                    float v_218 = a_112 * b_114;
                    float v_219 = acc60_62 + v_218;
                    acc60_62 = v_219;
                    float v_220 = a_112 * b_115;
                    float v_221 = acc61_63 + v_220;
                    acc61_63 = v_221;
                    float v_222 = a_112 * b_116;
                    float v_223 = acc62_64 + v_222;
                    acc62_64 = v_223;
                    float v_224 = a_112 * b_117;
                    float v_225 = acc63_65 + v_224;
                    acc63_65 = v_225;
                    float v_226 = a_112 * b_118;
                    float v_227 = acc64_66 + v_226;
                    acc64_66 = v_227;
                    float v_228 = a_112 * b_119;
                    float v_229 = acc65_67 + v_228;
                    acc65_67 = v_229;
                    float v_230 = a_112 * b_120;
                    float v_231 = acc66_68 + v_230;
                    acc66_68 = v_231;
                    float v_232 = a_112 * b_121;
                    float v_233 = acc67_69 + v_232;
                    acc67_69 = v_233;
                    float v_234 = a_113 * b_114;
                    float v_235 = acc70_70 + v_234;
                    acc70_70 = v_235;
                    float v_236 = a_113 * b_115;
                    float v_237 = acc71_71 + v_236;
                    acc71_71 = v_237;
                    float v_238 = a_113 * b_116;
                    float v_239 = acc72_72 + v_238;
                    acc72_72 = v_239;
                    float v_240 = a_113 * b_117;
                    float v_241 = acc73_73 + v_240;
                    acc73_73 = v_241;
                    float v_242 = a_113 * b_118;
                    float v_243 = acc74_74 + v_242;
                    acc74_74 = v_243;
                    float v_244 = a_113 * b_119;
                    float v_245 = acc75_75 + v_244;
                    acc75_75 = v_245;
                    float v_246 = a_113 * b_120;
                    float v_247 = acc76_76 + v_246;
                    acc76_76 = v_247;
                    float v_248 = a_113 * b_121;
                    float v_249 = acc77_77 + v_248;
                    acc77_77 = v_249;
                  }
                }
                if (ktile_103 + 1 < ktiles_102) {
                  a_tile_7[1024 - cur_104 + (k_79 * 128 + r_78)] = pf_80;
                  a_tile_7[1024 - cur_104 + (k_82 * 128 + r_81)] = pf_83;
                  a_tile_7[1024 - cur_104 + (k_85 * 128 + r_84)] = pf_86;
                  a_tile_7[1024 - cur_104 + (k_88 * 128 + r_87)] = pf_89;
                  b_tile_8[1024 - cur_104 + (k_91 * 128 + r_90)] = pf_92;
                  b_tile_8[1024 - cur_104 + (k_94 * 128 + r_93)] = pf_95;
                  b_tile_8[1024 - cur_104 + (k_97 * 128 + r_96)] = pf_98;
                  b_tile_8[1024 - cur_104 + (k_100 * 128 + r_99)] = pf_101;
                }
                barrier(CLK_LOCAL_MEM_FENCE);
              }
              if (row0_13 + ty_11 * 8 < n_5 && col0_12 + tx_10 < p_2) {
                result_6[(row0_13 + ty_11 * 8) * p_2 + (col0_12 + tx_10)] = acc00_14;
              }
              if (row0_13 + ty_11 * 8 < n_5 && col0_12 + (tx_10 + 16) < p_2) {
                result_6[(row0_13 + ty_11 * 8) * p_2 + (col0_12 + (tx_10 + 16))] = acc01_15;
              }
              if (row0_13 + ty_11 * 8 < n_5 && col0_12 + (tx_10 + 32) < p_2) {
                result_6[(row0_13 + ty_11 * 8) * p_2 + (col0_12 + (tx_10 + 32))] = acc02_16;
              }
              if (row0_13 + ty_11 * 8 < n_5 && col0_12 + (tx_10 + 48) < p_2) {
                result_6[(row0_13 + ty_11 * 8) * p_2 + (col0_12 + (tx_10 + 48))] = acc03_17;
              }
              if (row0_13 + ty_11 * 8 < n_5 && col0_12 + (tx_10 + 64) < p_2) {
                result_6[(row0_13 + ty_11 * 8) * p_2 + (col0_12 + (tx_10 + 64))] = acc04_18;
              }
              if (row0_13 + ty_11 * 8 < n_5 && col0_12 + (tx_10 + 80) < p_2) {
                result_6[(row0_13 + ty_11 * 8) * p_2 + (col0_12 + (tx_10 + 80))] = acc05_19;
              }
              if (row0_13 + ty_11 * 8 < n_5 && col0_12 + (tx_10 + 96) < p_2) {
                result_6[(row0_13 + ty_11 * 8) * p_2 + (col0_12 + (tx_10 + 96))] = acc06_20;
              }
              if (row0_13 + ty_11 * 8 < n_5 && col0_12 + (tx_10 + 112) < p_2) {
                result_6[(row0_13 + ty_11 * 8) * p_2 + (col0_12 + (tx_10 + 112))] = acc07_21;
              }
              if (row0_13 + (ty_11 * 8 + 1) < n_5 && col0_12 + tx_10 < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 1)) * p_2 + (col0_12 + tx_10)] = acc10_22;
              }
              if (row0_13 + (ty_11 * 8 + 1) < n_5 && col0_12 + (tx_10 + 16) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 1)) * p_2 + (col0_12 + (tx_10 + 16))] = acc11_23;
              }
              if (row0_13 + (ty_11 * 8 + 1) < n_5 && col0_12 + (tx_10 + 32) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 1)) * p_2 + (col0_12 + (tx_10 + 32))] = acc12_24;
              }
              if (row0_13 + (ty_11 * 8 + 1) < n_5 && col0_12 + (tx_10 + 48) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 1)) * p_2 + (col0_12 + (tx_10 + 48))] = acc13_25;
              }
              if (row0_13 + (ty_11 * 8 + 1) < n_5 && col0_12 + (tx_10 + 64) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 1)) * p_2 + (col0_12 + (tx_10 + 64))] = acc14_26;
              }
              if (row0_13 + (ty_11 * 8 + 1) < n_5 && col0_12 + (tx_10 + 80) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 1)) * p_2 + (col0_12 + (tx_10 + 80))] = acc15_27;
              }
              if (row0_13 + (ty_11 * 8 + 1) < n_5 && col0_12 + (tx_10 + 96) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 1)) * p_2 + (col0_12 + (tx_10 + 96))] = acc16_28;
              }
              if (row0_13 + (ty_11 * 8 + 1) < n_5 && col0_12 + (tx_10 + 112) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 1)) * p_2 + (col0_12 + (tx_10 + 112))] = acc17_29;
              }
              if (row0_13 + (ty_11 * 8 + 2) < n_5 && col0_12 + tx_10 < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 2)) * p_2 + (col0_12 + tx_10)] = acc20_30;
              }
              if (row0_13 + (ty_11 * 8 + 2) < n_5 && col0_12 + (tx_10 + 16) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 2)) * p_2 + (col0_12 + (tx_10 + 16))] = acc21_31;
              }
              if (row0_13 + (ty_11 * 8 + 2) < n_5 && col0_12 + (tx_10 + 32) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 2)) * p_2 + (col0_12 + (tx_10 + 32))] = acc22_32;
              }
              if (row0_13 + (ty_11 * 8 + 2) < n_5 && col0_12 + (tx_10 + 48) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 2)) * p_2 + (col0_12 + (tx_10 + 48))] = acc23_33;
              }
              if (row0_13 + (ty_11 * 8 + 2) < n_5 && col0_12 + (tx_10 + 64) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 2)) * p_2 + (col0_12 + (tx_10 + 64))] = acc24_34;
              }
              if (row0_13 + (ty_11 * 8 + 2) < n_5 && col0_12 + (tx_10 + 80) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 2)) * p_2 + (col0_12 + (tx_10 + 80))] = acc25_35;
              }
              if (row0_13 + (ty_11 * 8 + 2) < n_5 && col0_12 + (tx_10 + 96) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 2)) * p_2 + (col0_12 + (tx_10 + 96))] = acc26_36;
              }
              if (row0_13 + (ty_11 * 8 + 2) < n_5 && col0_12 + (tx_10 + 112) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 2)) * p_2 + (col0_12 + (tx_10 + 112))] = acc27_37;
              }
              if (row0_13 + (ty_11 * 8 + 3) < n_5 && col0_12 + tx_10 < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 3)) * p_2 + (col0_12 + tx_10)] = acc30_38;
              }
              if (row0_13 + (ty_11 * 8 + 3) < n_5 && col0_12 + (tx_10 + 16) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 3)) * p_2 + (col0_12 + (tx_10 + 16))] = acc31_39;
              }
              if (row0_13 + (ty_11 * 8 + 3) < n_5 && col0_12 + (tx_10 + 32) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 3)) * p_2 + (col0_12 + (tx_10 + 32))] = acc32_40;
              }
              if (row0_13 + (ty_11 * 8 + 3) < n_5 && col0_12 + (tx_10 + 48) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 3)) * p_2 + (col0_12 + (tx_10 + 48))] = acc33_41;
              }
              if (row0_13 + (ty_11 * 8 + 3) < n_5 && col0_12 + (tx_10 + 64) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 3)) * p_2 + (col0_12 + (tx_10 + 64))] = acc34_42;
              }
              if (row0_13 + (ty_11 * 8 + 3) < n_5 && col0_12 + (tx_10 + 80) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 3)) * p_2 + (col0_12 + (tx_10 + 80))] = acc35_43;
              }
              if (row0_13 + (ty_11 * 8 + 3) < n_5 && col0_12 + (tx_10 + 96) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 3)) * p_2 + (col0_12 + (tx_10 + 96))] = acc36_44;
              }
              if (row0_13 + (ty_11 * 8 + 3) < n_5 && col0_12 + (tx_10 + 112) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 3)) * p_2 + (col0_12 + (tx_10 + 112))] = acc37_45;
              }
              if (row0_13 + (ty_11 * 8 + 4) < n_5 && col0_12 + tx_10 < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 4)) * p_2 + (col0_12 + tx_10)] = acc40_46;
              }
              if (row0_13 + (ty_11 * 8 + 4) < n_5 && col0_12 + (tx_10 + 16) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 4)) * p_2 + (col0_12 + (tx_10 + 16))] = acc41_47;
              }
              if (row0_13 + (ty_11 * 8 + 4) < n_5 && col0_12 + (tx_10 + 32) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 4)) * p_2 + (col0_12 + (tx_10 + 32))] = acc42_48;
              }
              if (row0_13 + (ty_11 * 8 + 4) < n_5 && col0_12 + (tx_10 + 48) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 4)) * p_2 + (col0_12 + (tx_10 + 48))] = acc43_49;
              }
              if (row0_13 + (ty_11 * 8 + 4) < n_5 && col0_12 + (tx_10 + 64) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 4)) * p_2 + (col0_12 + (tx_10 + 64))] = acc44_50;
              }
              if (row0_13 + (ty_11 * 8 + 4) < n_5 && col0_12 + (tx_10 + 80) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 4)) * p_2 + (col0_12 + (tx_10 + 80))] = acc45_51;
              }
              if (row0_13 + (ty_11 * 8 + 4) < n_5 && col0_12 + (tx_10 + 96) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 4)) * p_2 + (col0_12 + (tx_10 + 96))] = acc46_52;
              }
              if (row0_13 + (ty_11 * 8 + 4) < n_5 && col0_12 + (tx_10 + 112) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 4)) * p_2 + (col0_12 + (tx_10 + 112))] = acc47_53;
              }
              if (row0_13 + (ty_11 * 8 + 5) < n_5 && col0_12 + tx_10 < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 5)) * p_2 + (col0_12 + tx_10)] = acc50_54;
              }
              if (row0_13 + (ty_11 * 8 + 5) < n_5 && col0_12 + (tx_10 + 16) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 5)) * p_2 + (col0_12 + (tx_10 + 16))] = acc51_55;
              }
              if (row0_13 + (ty_11 * 8 + 5) < n_5 && col0_12 + (tx_10 + 32) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 5)) * p_2 + (col0_12 + (tx_10 + 32))] = acc52_56;
              }
              if (row0_13 + (ty_11 * 8 + 5) < n_5 && col0_12 + (tx_10 + 48) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 5)) * p_2 + (col0_12 + (tx_10 + 48))] = acc53_57;
              }
              if (row0_13 + (ty_11 * 8 + 5) < n_5 && col0_12 + (tx_10 + 64) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 5)) * p_2 + (col0_12 + (tx_10 + 64))] = acc54_58;
              }
              if (row0_13 + (ty_11 * 8 + 5) < n_5 && col0_12 + (tx_10 + 80) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 5)) * p_2 + (col0_12 + (tx_10 + 80))] = acc55_59;
              }
              if (row0_13 + (ty_11 * 8 + 5) < n_5 && col0_12 + (tx_10 + 96) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 5)) * p_2 + (col0_12 + (tx_10 + 96))] = acc56_60;
              }
              if (row0_13 + (ty_11 * 8 + 5) < n_5 && col0_12 + (tx_10 + 112) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 5)) * p_2 + (col0_12 + (tx_10 + 112))] = acc57_61;
              }
              if (row0_13 + (ty_11 * 8 + 6) < n_5 && col0_12 + tx_10 < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 6)) * p_2 + (col0_12 + tx_10)] = acc60_62;
              }
              if (row0_13 + (ty_11 * 8 + 6) < n_5 && col0_12 + (tx_10 + 16) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 6)) * p_2 + (col0_12 + (tx_10 + 16))] = acc61_63;
              }
              if (row0_13 + (ty_11 * 8 + 6) < n_5 && col0_12 + (tx_10 + 32) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 6)) * p_2 + (col0_12 + (tx_10 + 32))] = acc62_64;
              }
              if (row0_13 + (ty_11 * 8 + 6) < n_5 && col0_12 + (tx_10 + 48) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 6)) * p_2 + (col0_12 + (tx_10 + 48))] = acc63_65;
              }
              if (row0_13 + (ty_11 * 8 + 6) < n_5 && col0_12 + (tx_10 + 64) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 6)) * p_2 + (col0_12 + (tx_10 + 64))] = acc64_66;
              }
              if (row0_13 + (ty_11 * 8 + 6) < n_5 && col0_12 + (tx_10 + 80) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 6)) * p_2 + (col0_12 + (tx_10 + 80))] = acc65_67;
              }
              if (row0_13 + (ty_11 * 8 + 6) < n_5 && col0_12 + (tx_10 + 96) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 6)) * p_2 + (col0_12 + (tx_10 + 96))] = acc66_68;
              }
              if (row0_13 + (ty_11 * 8 + 6) < n_5 && col0_12 + (tx_10 + 112) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 6)) * p_2 + (col0_12 + (tx_10 + 112))] = acc67_69;
              }
              if (row0_13 + (ty_11 * 8 + 7) < n_5 && col0_12 + tx_10 < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 7)) * p_2 + (col0_12 + tx_10)] = acc70_70;
              }
              if (row0_13 + (ty_11 * 8 + 7) < n_5 && col0_12 + (tx_10 + 16) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 7)) * p_2 + (col0_12 + (tx_10 + 16))] = acc71_71;
              }
              if (row0_13 + (ty_11 * 8 + 7) < n_5 && col0_12 + (tx_10 + 32) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 7)) * p_2 + (col0_12 + (tx_10 + 32))] = acc72_72;
              }
              if (row0_13 + (ty_11 * 8 + 7) < n_5 && col0_12 + (tx_10 + 48) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 7)) * p_2 + (col0_12 + (tx_10 + 48))] = acc73_73;
              }
              if (row0_13 + (ty_11 * 8 + 7) < n_5 && col0_12 + (tx_10 + 64) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 7)) * p_2 + (col0_12 + (tx_10 + 64))] = acc74_74;
              }
              if (row0_13 + (ty_11 * 8 + 7) < n_5 && col0_12 + (tx_10 + 80) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 7)) * p_2 + (col0_12 + (tx_10 + 80))] = acc75_75;
              }
              if (row0_13 + (ty_11 * 8 + 7) < n_5 && col0_12 + (tx_10 + 96) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 7)) * p_2 + (col0_12 + (tx_10 + 96))] = acc76_76;
              }
              if (row0_13 + (ty_11 * 8 + 7) < n_5 && col0_12 + (tx_10 + 112) < p_2) {
                result_6[(row0_13 + (ty_11 * 8 + 7)) * p_2 + (col0_12 + (tx_10 + 112))] = acc77_77;
              }
            }
            // def `dot` (main.weft:1), called with materialised arrays
            float dot__G_G(
                __global long* weft_err,
                __global const float* xs,
                long xs_off,
                long xs_s0,
                long xs_n0,
                __global const float* ys,
                long ys_off,
                long ys_s0,
                long ys_n0) {
              float r_1;
              r_1 = 0e0f;
              for (long i_2 = 0; i_2 < xs_n0; i_2++) { // main.weft:1
                float v_3 = xs[xs_off + i_2 * xs_s0] * ys[ys_off + i_2 * ys_s0];
                float v_4 = r_1 + v_3;
                float n_5 = v_4;
                r_1 = n_5;
              }
              return r_1;
            }

            // materialises `result`: one work-item per element (2-D NDRange)
            __kernel void mm_map2d_1(
                __global long* weft_err,
                long n_1,
                long p_2,
                __global const float* restrict a_3,
                long m_4,
                __global float* restrict result_5,
                __global const float* restrict b_8) {
              {
                long j_7 = get_global_id(0);
                if (j_7 < p_2) {
                  {
                    long i_6 = get_global_id(1);
                    if (i_6 < n_1) {
                      float r_9 = dot__G_G(weft_err, a_3, i_6 * m_4, 1, m_4, b_8, j_7, p_2, m_4);
                      result_5[i_6 * p_2 + j_7] = r_9;
                    }
                  }
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
            // computes a scalar (one work-item), main.weft:1
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
            // computes a scalar (one work-item), main.weft:1
            __kernel void f_scalar_1(
                __global long* weft_err,
                __global const int* restrict xs_1,
                long n_2,
                __global int* restrict v_4) {
              if (!(0 < n_2)) {
                weft_fail(weft_err, 2, (long)(0), (long)(n_2));
                return;
              }
              int v_3 = xs_1[0];
              v_4[0] = v_3;
            }
            // computes a scalar (one work-item), main.weft:1
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
            // def `dot` (main.weft:2), called with materialised arrays
            float dot__G_G(
                __global long* weft_err,
                __global const float* xs,
                long xs_off,
                long xs_s0,
                long xs_n0,
                __global const float* ys,
                long ys_off,
                long ys_s0,
                long ys_n0) {
              float r_1;
              r_1 = 0e0f;
              for (long i_2 = 0; i_2 < xs_n0; i_2++) { // main.weft:2
                float v_3 = xs[xs_off + i_2 * xs_s0] * ys[ys_off + i_2 * ys_s0];
                float v_4 = r_1 + v_3;
                float n_5 = v_4;
                r_1 = n_5;
              }
              return r_1;
            }

            // def `dot` (main.weft:2), called with materialised arrays
            float dot__L_G(
                __global long* weft_err,
                __local const float* xs,
                long xs_off,
                long xs_s0,
                long xs_n0,
                __global const float* ys,
                long ys_off,
                long ys_s0,
                long ys_n0) {
              float r_1;
              r_1 = 0e0f;
              for (long i_2 = 0; i_2 < xs_n0; i_2++) { // main.weft:2
                float v_3 = xs[xs_off + i_2 * xs_s0] * ys[ys_off + i_2 * ys_s0];
                float v_4 = r_1 + v_3;
                float n_5 = v_4;
                r_1 = n_5;
              }
              return r_1;
            }

            // map@group ``: one iteration per work-group of 256
            __kernel void rows_group_0(
                __global long* weft_err,
                __global const float* restrict a_1,
                long m_2,
                long n_3,
                __global float* restrict v_4,
                __local float* t_6,
                __global const float* restrict v_8) {
              for (long grp_5 = get_group_id(0); grp_5 < n_3; grp_5 += get_num_groups(0)) { // main.weft:4
                for (long i_7 = get_local_id(0); i_7 < m_2; i_7 += get_local_size(0)) { // main.weft:4
                  t_6[i_7] = a_1[grp_5 * m_2 + i_7];
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                float r_9 = dot__L_G(weft_err, t_6, 0, 1, m_2, v_8, 0, 1, m_2);
                float r_10 = dot__G_G(weft_err, a_1, grp_5 * m_2, 1, m_2, v_8, 0, 1, m_2);
                float v_11 = r_9 + r_10;
                if ((long)get_local_id(0) == 0) {
                  v_4[grp_5] = v_11;
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
            // materialises `result`: one work-item per row
            __kernel void poly_map_0(
                __global long* weft_err,
                long n_1,
                __global const float* restrict xs_2,
                __global float* restrict result_3,
                __constant float* restrict c_8,
                long v8_9) {
              for (long i_4 = get_global_id(0); i_4 < n_1; i_4 += get_global_size(0)) {
                float r_5;
                r_5 = 0e0f;
                for (long i_6 = 0; i_6 < 8; i_6++) { // main.weft:3
                  float v_7 = r_5 * xs_2[i_4];
                  if (!(0 <= i_6 && i_6 < v8_9)) {
                    weft_fail(weft_err, 2, (long)(i_6), (long)(v8_9));
                    return;
                  }
                  float v_10 = c_8[i_6];
                  float v_11 = v_7 + v_10;
                  float n_12 = v_11;
                  r_5 = n_12;
                }
                result_3[i_4] = r_5;
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
            kernel rows_group_0 : (ASpace {global}, ASpace {global}, ASpace {local}, ASpace {constant}, ASpace {global}) -> _
              a_1 : ASpace {global}
              v_4 : ASpace {global}
              t_6 : ASpace {local}
              w_8 : ASpace {constant}
              v_13 : ASpace {global}
              p_10 : ASpace {private}
            fn dot : ∀r1 r2. (ASpace r1, ASpace r2) -> _
              xs : ASpace r1
              ys : ASpace r2
            instance rows_group_0 = rows_group_0
              a_1 : global
              v_4 : global
              t_6 : local
              w_8 : constant
              v_13 : global
              p_10 : private
              `a_1` is read : global
              `t_6` is written : local
              `w_8` is read : constant
              `p_10` is written : private
              passed to `dot` (main.weft:6) @1 -> dot__L_G
              passed to `dot` (main.weft:6) @2 -> dot__G_G
              passed to `dot` (main.weft:6) @3 -> dot__P_P
              `v_4` is written : global
            instance dot__L_G = dot [r1 := {local}, r2 := {global}]
              xs : local
              ys : global
              `xs` is read : local
              `ys` is read : global
            instance dot__G_G = dot [r1 := {global}, r2 := {global}]
              xs : global
              ys : global
              `xs` is read : global
              `ys` is read : global
            instance dot__P_P = dot [r1 := {private}, r2 := {private}]
              xs : private
              ys : private
              `xs` is read : private
              `ys` is read : private
            why
              rows_group_0.a_1 (global): a buffer the host allocates for `a`, passed to the kernel
              rows_group_0.v_4 (global): a buffer the host allocates, passed to the kernel
              rows_group_0.t_6 (local): materialised by `to_local` inside a `map@group` body (main.weft:4)
              rows_group_0.w_8 (constant): a buffer the host allocates for `w`, passed to the kernel; read-only, read alike by all work-items, and at most 64 KiB
              rows_group_0.v_13 (global): a buffer the host allocates for `v`, passed to the kernel
              rows_group_0.p_10 (private): materialised by `to_private` (main.weft:5)
              dot__P_P.xs (private): materialised by `to_private` (main.weft:5) -> passed to `dot` (main.weft:6)
              dot__P_P.ys (private): materialised by `to_private` (main.weft:5) -> passed to `dot` (main.weft:6)
              dot__G_G.xs (global): a buffer the host allocates for `a`, passed to the kernel -> passed to `dot` (main.weft:6)
              dot__G_G.ys (global): a buffer the host allocates for `v`, passed to the kernel -> passed to `dot` (main.weft:6)
              dot__L_G.xs (local): materialised by `to_local` inside a `map@group` body (main.weft:4) -> passed to `dot` (main.weft:6)
              dot__L_G.ys (global): a buffer the host allocates for `v`, passed to the kernel -> passed to `dot` (main.weft:6)
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
          v6 = alloc f32[((v0 * v1) * v4)]
          v7 = max((((256 * ((255 + (256 * ((127 + v4) / 128))) / 256)) * ((127 + v1) / 128)) * v0), 1)
          v8 = ((((10070016 * ((255 + (256 * ((127 + v4) / 128))) / 256)) * ((127 + v1) / 128)) * v0) + ((((14158848 * ((255 + (256 * ((127 + v4) / 128))) / 256)) * ((127 + v1) / 128)) * v0) * ((7 + v2) / 8)))
          v9 = (((((29995008 * ((255 + (256 * ((127 + v4) / 128))) / 256)) * ((127 + v1) / 128)) * v0) + ((((8318976 * ((255 + (256 * ((127 + v4) / 128))) / 256)) * ((127 + v1) / 128)) * v0) * ((7 + v2) / 8))) + (((((3886080000 * ((255 + (256 * ((127 + v4) / 128))) / 256)) * ((127 + v1) / 128)) * v0) + ((((3886080000 * ((255 + (256 * ((127 + v4) / 128))) / 256)) * ((127 + v1) / 128)) * v0) * ((7 + v2) / 8))) / 1000))
          v10 = (5264000000 + max(max(((v7 >= 135168) ? v8 : ((v8 * 135168) / v7)), (602020792 + (769192673 * ((7 + v2) / 8)))), ((v7 >= 135168) ? v9 : ((v9 * 135168) / v7))))
          v11 = max(((256 * ((31 + v1) / 32)) * ((7 + v0) / 8)), 1)
          v12 = ((((330 * v1) * v0) * v4) + ((((462 * v1) * v0) * v4) * v2))
          v13 = ((((((((1620 * v1) * v0) * v4) * v2) * ((max(v2, (-1 * v2)) == 0) ? 31 : ((max(v2, (-1 * v2)) <= 1) ? 1000 : ((max(v2, (-1 * v2)) <= 2) ? 1273 : ((max(v2, (-1 * v2)) <= 4) ? 1908 : ((max(v2, (-1 * v2)) <= 8) ? 3446 : ((max(v2, (-1 * v2)) <= 16) ? 6598 : 7180))))))) / 1000) + (((((50220 * v1) * v0) * v4) * v2) / 1000)) + (((((1620 * v1) * v0) * v4) * ((max(v4, (-1 * v4)) == 0) ? 31 : ((max(v4, (-1 * v4)) <= 1) ? 1000 : ((max(v4, (-1 * v4)) <= 2) ? 1273 : ((max(v4, (-1 * v4)) <= 4) ? 1908 : ((max(v4, (-1 * v4)) <= 8) ? 3446 : ((max(v4, (-1 * v4)) <= 16) ? 6598 : 7180))))))) / 1000))
          v14 = (5264000000 + max(max(((v11 >= 135168) ? v12 : ((v12 * 135168) / v11)), ((((1010102 * (((-1 + v1) + max((32 * ((31 + v1) / 32)), 1)) / max((32 * ((31 + v1) / 32)), 1))) + ((1010102 * (((-1 + v1) + max((32 * ((31 + v1) / 32)), 1)) / max((32 * ((31 + v1) / 32)), 1))) * (((-1 + v0) + max((8 * ((7 + v0) / 8)), 1)) / max((8 * ((7 + v0) / 8)), 1)))) + (((6060612 * (((-1 + v1) + max((32 * ((31 + v1) / 32)), 1)) / max((32 * ((31 + v1) / 32)), 1))) * (((-1 + v0) + max((8 * ((7 + v0) / 8)), 1)) / max((8 * ((7 + v0) / 8)), 1))) * v4)) + ((((4040408 * (((-1 + v1) + max((32 * ((31 + v1) / 32)), 1)) / max((32 * ((31 + v1) / 32)), 1))) * (((-1 + v0) + max((8 * ((7 + v0) / 8)), 1)) / max((8 * ((7 + v0) / 8)), 1))) * v4) * v2))), ((v11 >= 135168) ? v13 : ((v13 * 135168) / v11))))
          if (v10 <= v14) {
            launch mm_matmul_0 global [(((v4 + 127) / 128) * 256), ((v1 + 127) / 128), v0] local [256, 1, 1] (v3, (v2 * v1): i64, v2: i64, v0: i64, v1: i64, v5, (v4 * v2): i64, v4: i64, v6, (v4 * v1): i64, local f32[2048], local f32[2048])
          } else {
            launch mm_map2d_1 global [v1, v0] local [32, 8] (v0: i64, v1: i64, v4: i64, v3, (v2 * v1): i64, v2: i64, v5, (v4 * v2): i64, v6, (v4 * v1): i64)
          }
          output v6 f32 {offset: 0; strides: [(v4 * v1), v4, 1]; shape: [v0, v1, v4]}
        long batch_1 = (long)get_group_id(2);
        long col0_17 = (long)get_group_id(0) * 128;
        long row0_18 = (long)get_group_id(1) * 128;
        pf_85 = as_2[batch_1 * s_3 + (row0_18 + r_83) * k_4 + k_84];
        pf_97 = bs_7[batch_1 * s_8 + (col0_17 + r_95) + k_96 * m_9];
        result_10[batch_1 * s_11 + (row0_18 + ty_16 * 8) * m_9 + (col0_17 + tx_15)] = acc00_19;
    "#]].assert_eq(&format!("{plan}{lines}"));
}

#[test]
fn reduce_by_index_is_a_copy_then_one_atomic_update_per_value() {
    let float_add = "entry h (d: [m]f32) (is: [n]i64) (vs: [n]f32) : [m]f32 =
  reduce_by_index d (+) 0 is vs";
    check_kernel(
        float_add,
        expect![[r#"
            // materialises `histogram`: one work-item per row
            __kernel void h_map_0(
                __global long* weft_err,
                __global const float* restrict d_1,
                long m_2,
                __global float* restrict histogram_3) {
              for (long i_4 = get_global_id(0); i_4 < m_2; i_4 += get_global_size(0)) {
                histogram_3[i_4] = d_1[i_4];
              }
            }
            // reduce_by_index: one work-item per value, an atomic add into its bin; out-of-range indices are ignored
            __kernel void h_hist_1(
                __global long* weft_err,
                __global float* restrict histogram_1,
                long m_2,
                __global const long* restrict is_3,
                long n_4,
                __global const float* restrict vs_5) {
              for (long i_6 = get_global_id(0); i_6 < n_4; i_6 += get_global_size(0)) { // main.weft:2
                long j_7 = is_3[i_6];
                if (0 <= j_7 && j_7 < m_2) {
                  weft_atomic_add_float(&histogram_1[j_7], vs_5[i_6]);
                }
              }
            }
            // reduce_by_index: one work-item per value, an atomic add into its work-group's bins in local memory, then into the bins; out-of-range indices are ignored
            __kernel void h_hist_2(
                __global long* weft_err,
                __global float* restrict histogram_1,
                long m_2,
                __global const long* restrict is_3,
                long n_4,
                __global const float* restrict vs_5,
                __local float* bins_6) {
              for (long b_7 = get_local_id(0); b_7 < m_2; b_7 += get_local_size(0)) {
                bins_6[b_7] = (float)0;
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              for (long i_8 = get_global_id(0); i_8 < n_4; i_8 += get_global_size(0)) { // main.weft:2
                long j_9 = is_3[i_8];
                if (0 <= j_9 && j_9 < m_2) {
                  weft_atomic_add_float_local(&bins_6[j_9], vs_5[i_8]);
                }
              }
              barrier(CLK_LOCAL_MEM_FENCE);
              for (long b_10 = get_local_id(0); b_10 < m_2; b_10 += get_local_size(0)) {
                if (bins_6[b_10] != (float)0) {
                  weft_atomic_add_float(&histogram_1[b_10], bins_6[b_10]);
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
                __global float* restrict v_1) {
              v_1[0] = INFINITY;
            }
            // computes a scalar (one work-item), main.weft:2
            __kernel void h_scalar_1(
                __global long* weft_err,
                __global float* restrict v_1) {
              v_1[0] = INFINITY;
            }
            // materialises `histogram`: one work-item per row
            __kernel void h_map_2(
                __global long* weft_err,
                __global const float* restrict v_1,
                __global float* restrict histogram_2) {
              for (long i_3 = get_global_id(0); i_3 < 8; i_3 += get_global_size(0)) {
                histogram_2[i_3] = v_1[0];
              }
            }
            // reduce_by_index: one work-item per bin folds every value whose index is that bin (bins times values work)
            __kernel void h_hist_bins_3(
                __global long* weft_err,
                __global float* restrict histogram_1,
                __global const long* restrict is_2,
                long n_3,
                __global const float* restrict vs_4) {
              for (long bin_5 = get_global_id(0); bin_5 < 8; bin_5 += get_global_size(0)) { // main.weft:2
                float r_6;
                float n_7 = histogram_1[bin_5];
                r_6 = n_7;
                for (long i_8 = 0; i_8 < n_3; i_8++) {
                  long j_9 = is_2[i_8];
                  if (j_9 == bin_5) {
                    float v_10 = fmin(r_6, vs_4[i_8]);
                    float n_11 = v_10;
                    r_6 = n_11;
                  }
                }
                histogram_1[bin_5] = r_6;
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
            // materialises `updated`: one work-item per element (2-D NDRange)
            __kernel void u_map2d_0(
                __global long* weft_err,
                __global const int* restrict m_1,
                long c_2,
                long r_3,
                __global int* restrict updated_4) {
              {
                long j_6 = get_global_id(0);
                if (j_6 < c_2) {
                  {
                    long i_5 = get_global_id(1);
                    if (i_5 < r_3) {
                      updated_4[i_5 * c_2 + j_6] = m_1[i_5 * c_2 + j_6];
                    }
                  }
                }
              }
            }
            // with: one work-item checks the indices and writes the new element or row into the copy
            __kernel void u_update_1(
                __global long* weft_err,
                __global int* restrict updated_1,
                long c_2,
                long r_3,
                long i_4,
                long j_5) {
              if (!(0 <= i_4 && i_4 < r_3)) {
                weft_fail(weft_err, 1, (long)(i_4), (long)(r_3));
                return;
              }
              if (!(0 <= j_5 && j_5 < c_2)) {
                weft_fail(weft_err, 2, (long)(j_5), (long)(c_2));
                return;
              }
              updated_1[i_4 * c_2 + j_5] = 0;
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
    assert!(ordered.contains("per_"), "{ordered}");
    assert!(ordered.contains(" % 2 == 0)"), "{ordered}");
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
    assert!(plan.contains("if (I64(256) <= 4096) {"), "{plan}");
    let local = (0..c.kernels.len())
        .map(|i| crate::print_kernel(&c, i))
        .find(|k| k.contains("__local int* bins_"))
        .expect("a kernel with local bins");
    assert!(local.contains("atomic_add(&bins_"), "{local}");
    assert!(local.contains("atomic_add(&histogram_"), "{local}");
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
        kept.kernels.iter().any(|k| k.doc.contains("into the copy")),
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
    // work-item scans its contiguous share sequentially, with one pass of barriers
    // per group to turn the items' totals into carries.
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
    assert_eq!(barriers(&cpu), 2, "{cpu}");
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
    // `m` elements for each of the launch's work-items (`n` rounded up to groups).
    let expanded = allocs.iter().filter(|l| l.contains("/ 256) * 256))]")).count();
    assert!(expanded >= 1 && allocs.len() == expanded + 1, "{plan}");
    let kernel = crate::print_kernel(&c, 0);
    assert!(kernel.contains("expanded_"), "{kernel}");
    assert!(kernel.contains("get_global_size(0) * (long)get_global_size(1)"), "{kernel}");
    assert!(!kernel.contains("__private float") && !kernel.contains("float arr_"), "{kernel}");
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
            // materialises `result`: one work-item per row
            __kernel void saxpy_map_0(
                __global long* weft_err,
                long n_1,
                __global const float* restrict xs_2,
                __global const float* restrict ys_3,
                __global float* restrict result_4,
                float a_6) {
              for (long i_5 = get_global_id(0); i_5 < n_1; i_5 += get_global_size(0)) { | map2 (\x y -> a * x + y) xs ys
                float v_7 = a_6 * xs_2[i_5];             | a * x
                float v_8 = v_7 + ys_3[i_5];             | a * x + y
                result_4[i_5] = v_8;                     | a * x + y
              }
            }
        "#]],
    );
    check_line_origins(
        "def dot (a: [k]f32) (b: [k]f32) : f32 = reduce (+) 0 (map2 (*) a b)\n\
         entry rows (m: [n][k]f32) (v: [k]f32) : [n]f32 = map (\\r -> dot r v) m",
        expect![[r#"
            // def `dot` (main.weft:1), called with materialised arrays
            float dot__G_G(
                __global long* weft_err,
                __global const float* a,
                long a_off,
                long a_s0,
                long a_n0,
                __global const float* b,
                long b_off,
                long b_s0,
                long b_n0) {
              float r_1;                                 | reduce (+) 0 (map2 (*) a b)
              r_1 = 0e0f;                                | reduce (+) 0 (map2 (*) a b)
              for (long i_2 = 0; i_2 < a_n0; i_2++) { // main.weft:1 | reduce (+) 0 (map2 (*) a b)
                float v_3 = a[a_off + i_2 * a_s0] * b[b_off + i_2 * b_s0]; | map2 (*) a b
                float v_4 = r_1 + v_3;                   | reduce (+) 0 (map2 (*) a b)
                float n_5 = v_4;                         | reduce (+) 0 (map2 (*) a b)
                r_1 = n_5;                               | reduce (+) 0 (map2 (*) a b)
              }
              return r_1;                                | reduce (+) 0 (map2 (*) a b)
            }

            // materialises `result`: one work-item per row
            __kernel void rows_map_0(
                __global long* weft_err,
                long n_1,
                __global const float* restrict m_2,
                long k_3,
                __global float* restrict result_4,
                __global const float* restrict v_6) {
              for (long i_5 = get_global_id(0); i_5 < n_1; i_5 += get_global_size(0)) { | map (\r -> dot r v) m
                float r_7 = dot__G_G(weft_err, m_2, i_5 * k_3, 1, k_3, v_6, 0, 1, k_3); | dot r v
                result_4[i_5] = r_7;                     | dot r v
              }
            }
        "#]],
    );
}
