//! The static costs of small programs (`weft dump --ir costs`) and the choice of a
//! segmented reduction's kernel by predicted time.

use expect_test::{Expect, expect};
use weft_cost::profile::{DeviceProfile, builtin_profiles};
use weft_hir::RootDatabase;
use weft_plan::{Step, Var};
use weft_values::Scalar;

fn compiled(src: &str, profile: Option<&'static DeviceProfile>) -> crate::Compiled {
    let mut db = RootDatabase::default();
    let file = db.set_file("main.weft", src);
    let checked = weft_core::CheckedFile::new(&db, file).expect("test source has no errors");
    let program = weft_core::lower_file(&db, checked).expect("test source elaborates");
    let entry = program.entries[0];
    let position = |o: &weft_core::Origin| weft_core::origin_position(&db, o);
    let options = weft_lower::Options { profile, ..weft_lower::Options::default() };
    crate::compile_entry(&program, entry, &position, options).expect("compiles")
}

fn check(src: &str, expect: Expect) {
    expect.assert_eq(&compiled(src, None).costs.render());
}

#[test]
fn map_costs() {
    check(
        "entry scale (xs: [n]f32) : [n]f32 = map (\\x -> 2 * x) xs",
        expect![[r#"
            costs of entry `scale`
              kernel scale_map_0
                work-items 256*⌈global0/256⌉
                work 17*max((n_1/4), n_1 % 4) + 768*⌈global0/256⌉
                span 19*((max((n_1/4), n_1 % 4) + max(256*⌈global0/256⌉, 1) - 1)/(max(256*⌈global0/256⌉, 1))) + 3
                global reads xs_4: 20*max((n_1/4), n_1 % 4) bytes, coalesced
                global writes buf_10: 20*max((n_1/4), n_1 % 4) bytes, coalesced
              launches
                scale_map_0
                  work-items 256*((max((n/4), n % 4) + 255)/256)
                  work 768*((max((n/4), n % 4) + 255)/256) + 17*max((n/4), n % 4)
                  span 19*((max((n/4), n % 4) + max(256*((max((n/4), n % 4) + 255)/256), 1) - 1)/(max(256*((max((n/4), n % 4) + 255)/256), 1))) + 3
                  global reads xs_4: 20*max((n/4), n % 4) bytes, coalesced
                  global writes buf_10: 20*max((n/4), n % 4) bytes, coalesced
              transfers: upload 4*n bytes in 1 buffers, download 4*n bytes in 1 buffers, 0 scalar reads
        "#]],
    );
}

#[test]
fn reduce_costs() {
    check(
        "entry total (xs: [n]f32) : f32 = reduce (+) 0 xs",
        expect![[r#"
            costs of entry `total`
              kernel total_reduce_partials_0
                work-items 256*⌈global0/256⌉
                work 8*(n_1/4) + 4862*⌈global0/256⌉
                span 10*(((n_1/4) + max(256*⌈global0/256⌉, 1) - 1)/(max(256*⌈global0/256⌉, 1))) + 33
                global reads xs_9: 16*(n_1/4) + 1024*⌈global0/256⌉ bytes, coalesced
                global writes partial_48: 4*⌈global0/256⌉ bytes, uniform
                local reads red_2: 2040*⌈global0/256⌉ bytes, coalesced, reused
                local reads red_2: 4*⌈global0/256⌉ bytes, uniform, reused
                local writes red_2: 2044*⌈global0/256⌉ bytes, coalesced
                barriers 9*⌈global0/256⌉
              kernel total_reduce_total_1
                work-items 256*⌈global0/256⌉
                work 8*(groups_1/4) + 4862*⌈global0/256⌉
                span 10*(((groups_1/4) + max(256*⌈global0/256⌉, 1) - 1)/(max(256*⌈global0/256⌉, 1))) + 33
                global reads partial_9: 16*(groups_1/4) + 1024*⌈global0/256⌉ bytes, coalesced
                global writes total_44: 4*⌈global0/256⌉ bytes, uniform
                local reads red_2: 2040*⌈global0/256⌉ bytes, coalesced, reused
                local reads red_2: 4*⌈global0/256⌉ bytes, uniform, reused
                local writes red_2: 2044*⌈global0/256⌉ bytes, coalesced
                barriers 9*⌈global0/256⌉
              launches
                total_reduce_partials_0
                  work-items 256*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256)
                  work 4862*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256) + 8*(n/4)
                  span 10*(((n/4) + max(256*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256), 1) - 1)/(max(256*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256), 1))) + 33
                  global reads xs_9: 1024*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256) + 16*(n/4) bytes, coalesced
                  global writes partial_48: 4*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256) bytes, uniform
                  local reads red_2: 2040*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256) bytes, coalesced, reused
                  local reads red_2: 4*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256) bytes, uniform, reused
                  local writes red_2: 2044*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256) bytes, coalesced
                  barriers 9*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256)
                total_reduce_total_1
                  work-items 256
                  work 8*((max(1, min(((n + 255)/256), 1024)))/4) + 4862
                  span 10*((((max(1, min(((n + 255)/256), 1024)))/4) + 255)/256) + 33
                  global reads partial_9: 16*((max(1, min(((n + 255)/256), 1024)))/4) + 1024 bytes, coalesced
                  global writes total_44: 4 bytes, uniform
                  local reads red_2: 2040 bytes, coalesced, reused
                  local reads red_2: 4 bytes, uniform, reused
                  local writes red_2: 2044 bytes, coalesced
                  barriers 9
              transfers: upload 4*n bytes in 1 buffers, download 4 bytes in 1 buffers, 0 scalar reads
        "#]],
    );
}

#[test]
fn transpose_costs() {
    check(
        "entry flip (a: [n][m]f32) : [m][n]f32 = transpose a",
        expect![[r#"
            costs of entry `flip`
              kernel flip_result_copy_0
                work-items ((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1
                work 112*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1
                span 112
                global reads a_1: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, coalesced
                global writes result_4: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, coalesced
                local reads tile_5: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, stride 33, reused
                local writes tile_5: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, coalesced
                barriers ((((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1)/local0*local1)
              launches
                flip_result_copy_0
                  work-items 256*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8)
                  work 28672*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8)
                  span 112
                  global reads a_1: 4096*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8) bytes, coalesced
                  global writes result_4: 4096*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8) bytes, coalesced
                  local reads tile_5: 4096*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8) bytes, stride 33, reused
                  local writes tile_5: 4096*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8) bytes, coalesced
                  barriers ((256*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8))/256)
              transfers: upload 4*m*n bytes in 1 buffers, download 4*m*n bytes in 1 buffers, 0 scalar reads
        "#]],
    );
}

#[test]
fn matmul_costs() {
    check(
        "entry mm (a: [n][k]f32) (b: [k][m]f32) : [n][m]f32 =\n  map (\\row -> map (\\col -> reduce (+) 0 (map2 (*) row col)) (transpose b)) a",
        expect![[r#"
            costs of entry `mm`
              kernel mm_product_0
                work-items ((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1
                work 369*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ + 570*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1
                span 373*⌈k_3/8⌉ + 570
                global reads a_79: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ bytes, coalesced
                global reads b_92: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ bytes, stride m_2
                global writes buf_248: 256*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, coalesced
                local reads tile_a_4: 32*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ bytes, uniform, reused
                local reads tile_b_5: 32*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ bytes, coalesced, reused
                local writes tile_a_4: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ bytes, stride 128
                local writes tile_b_5: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ bytes, stride 128
                barriers 2*((((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉)/local0*local1)
                note: a loop bound computed from data is counted as one iteration
              launches
                mm_product_0
                  work-items 256*((16*((m + 127)/128) + 15)/16)*((16*((n + 127)/128) + 15)/16)
                  work 94464*((16*((m + 127)/128) + 15)/16)*((16*((n + 127)/128) + 15)/16)*((k + 7)/8) + 145920*((16*((m + 127)/128) + 15)/16)*((16*((n + 127)/128) + 15)/16)
                  span 373*((k + 7)/8) + 570
                  global reads a_79: 4096*((16*((m + 127)/128) + 15)/16)*((16*((n + 127)/128) + 15)/16)*((k + 7)/8) bytes, coalesced
                  global reads b_92: 4096*((16*((m + 127)/128) + 15)/16)*((16*((n + 127)/128) + 15)/16)*((k + 7)/8) bytes, stride m
                  global writes buf_248: 65536*((16*((m + 127)/128) + 15)/16)*((16*((n + 127)/128) + 15)/16) bytes, coalesced
                  local reads tile_a_4: 8192*((16*((m + 127)/128) + 15)/16)*((16*((n + 127)/128) + 15)/16)*((k + 7)/8) bytes, uniform, reused
                  local reads tile_b_5: 8192*((16*((m + 127)/128) + 15)/16)*((16*((n + 127)/128) + 15)/16)*((k + 7)/8) bytes, coalesced, reused
                  local writes tile_a_4: 4096*((16*((m + 127)/128) + 15)/16)*((16*((n + 127)/128) + 15)/16)*((k + 7)/8) bytes, stride 128
                  local writes tile_b_5: 4096*((16*((m + 127)/128) + 15)/16)*((16*((n + 127)/128) + 15)/16)*((k + 7)/8) bytes, stride 128
                  barriers 2*((256*((16*((m + 127)/128) + 15)/16)*((16*((n + 127)/128) + 15)/16)*((k + 7)/8))/256)
                  note: a loop bound computed from data is counted as one iteration
              transfers: upload 4*k*m + 4*k*n bytes in 2 buffers, download 4*m*n bytes in 1 buffers, 0 scalar reads
        "#]],
    );
}

#[test]
fn function_call_costs() {
    check(
        "def dot (xs: [k]f32) (ys: [k]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)\n\
         entry rows (a: [n][k]f32) (x: [k]f32) : [n]f32 = map (\\row -> dot row x) a",
        expect![[r#"
            costs of entry `rows`
              kernel rows_rows_staged_0
                work-items 256*⌈global0/256⌉
                work 2304*⌈global0/256⌉*⌈k_2*min(256, n_3)/256⌉ + 13*((256*k_2*min(min(256, n_3), 256)*⌈global0/256⌉)/256) + ((256*min(min(256, n_3), 256)*⌈global0/256⌉)/256) + 2560*⌈global0/256⌉
                span 15*k_2 + 11*⌈k_2*min(256, n_3)/256⌉ + 11
                global reads a_1: 1024*⌈global0/256⌉*⌈k_2*min(256, n_3)/256⌉ bytes, coalesced
                global reads x_17: 4*((256*k_2*min(min(256, n_3), 256)*⌈global0/256⌉)/256) bytes, uniform, reused
                global writes outer_22: 4*((256*min(min(256, n_3), 256)*⌈global0/256⌉)/256) bytes, coalesced
                local reads rows_4: 4*((256*k_2*min(min(256, n_3), 256)*⌈global0/256⌉)/256) bytes, stride k_2 + 1, reused
                local writes rows_4: 1024*⌈global0/256⌉*⌈k_2*min(256, n_3)/256⌉ bytes, coalesced
                special div: 512*⌈global0/256⌉*⌈k_2*min(256, n_3)/256⌉
                barriers ⌈global0/256⌉
              kernel rows_map_1
                work-items 256*⌈global0/256⌉
                work 4*k_4*n_1
                span 6*((max(256*⌈global0/256⌉, 1) + n_1 - 1)/(max(256*⌈global0/256⌉, 1)))*k_4 + 2*((max(256*⌈global0/256⌉, 1) + n_1 - 1)/(max(256*⌈global0/256⌉, 1)))
                global reads a_3: 4*k_4*n_1 bytes, stride k_4
                global reads x_8: 4*k_4*n_1 bytes, uniform, reused
                global writes outer_12: 4*n_1 bytes, coalesced
              kernel rows_group_2
                work-items 256*⌈global0/256⌉
                work 5632*max(0, ⌈k_4/256⌉)*n_1 + 5374*n_1
                span 24*((max(⌈global0/256⌉, 1) + n_1 - 1)/(max(⌈global0/256⌉, 1)))*max(0, ⌈k_4/256⌉) + 37*((max(⌈global0/256⌉, 1) + n_1 - 1)/(max(⌈global0/256⌉, 1)))
                global reads a_3: 1024*max(0, ⌈k_4/256⌉)*n_1 bytes, coalesced
                global reads x_13: 1024*max(0, ⌈k_4/256⌉)*n_1 bytes, coalesced, reused
                global writes intra_43: 1024*n_1 bytes, uniform
                local reads red_6: 2040*n_1 bytes, coalesced, reused
                local reads red_6: 1024*n_1 bytes, uniform, reused
                local writes red_6: 2044*n_1 bytes, coalesced
                barriers 11*n_1
              kernel rows_segred_3
                work-items 256*⌈global0/256⌉
                work 19*s_4*segments_1 + 4*segments_1
                span 21*((max(256*⌈global0/256⌉, 1) + segments_1 - 1)/(max(256*⌈global0/256⌉, 1)))*s_4 + 6*((max(256*⌈global0/256⌉, 1) + segments_1 - 1)/(max(256*⌈global0/256⌉, 1)))
                global reads a_15: 4*s_4*segments_1 bytes, coalesced
                global reads x_17: 4*s_4*segments_1 bytes, coalesced
                global writes partials_9: 4*segments_1 bytes, coalesced
                special div: 2*segments_1
              kernel rows_group_4
                work-items 256*⌈global0/256⌉
                work 4352*max(0, ⌈s_3/256⌉)*n_1 + 4350*n_1
                span 19*((max(⌈global0/256⌉, 1) + n_1 - 1)/(max(⌈global0/256⌉, 1)))*max(0, ⌈s_3/256⌉) + 33*((max(⌈global0/256⌉, 1) + n_1 - 1)/(max(⌈global0/256⌉, 1)))
                global reads partials_9: 1024*max(0, ⌈s_3/256⌉)*n_1 bytes, coalesced
                global writes reduced_39: 1024*n_1 bytes, uniform
                local reads red_4: 2040*n_1 bytes, coalesced, reused
                local reads red_4: 1024*n_1 bytes, uniform, reused
                local writes red_4: 2044*n_1 bytes, coalesced
                barriers 11*n_1
              kernel rows_segred_5
                work-items 256*⌈global0/256⌉
                work 3*n_1*s_2
                span 5*((max(256*⌈global0/256⌉, 1) + n_1 - 1)/(max(256*⌈global0/256⌉, 1)))*s_2 + 2*((max(256*⌈global0/256⌉, 1) + n_1 - 1)/(max(256*⌈global0/256⌉, 1)))
                global reads partials_7: 4*n_1*s_2 bytes, stride s_2
                global writes reduced_5: 4*n_1 bytes, coalesced
              launches
                rows_rows_staged_0 when n >= 32768 and k <= 32
                  work-items 256*((256*((n + 255)/256) + 255)/256)
                  work 2304*((256*((n + 255)/256) + 255)/256)*((k*min(256, n) + 255)/256) + 13*((256*((256*((n + 255)/256) + 255)/256)*k*min(min(256, n), 256))/256) + ((256*((256*((n + 255)/256) + 255)/256)*min(min(256, n), 256))/256) + 2560*((256*((n + 255)/256) + 255)/256)
                  span 11*((k*min(256, n) + 255)/256) + 15*k + 11
                  global reads a_1: 1024*((256*((n + 255)/256) + 255)/256)*((k*min(256, n) + 255)/256) bytes, coalesced
                  global reads x_17: 4*((256*((256*((n + 255)/256) + 255)/256)*k*min(min(256, n), 256))/256) bytes, uniform, reused
                  global writes outer_22: 4*((256*((256*((n + 255)/256) + 255)/256)*min(min(256, n), 256))/256) bytes, coalesced
                  local reads rows_4: 4*((256*((256*((n + 255)/256) + 255)/256)*k*min(min(256, n), 256))/256) bytes, stride k + 1, reused
                  local writes rows_4: 1024*((256*((n + 255)/256) + 255)/256)*((k*min(256, n) + 255)/256) bytes, coalesced
                  special div: 512*((256*((n + 255)/256) + 255)/256)*((k*min(256, n) + 255)/256)
                  barriers ((256*((n + 255)/256) + 255)/256)
                rows_map_1 when n >= 32768 and !(k <= 32)
                  work-items 256*((n + 255)/256)
                  work 4*k*n
                  span 6*((max(256*((n + 255)/256), 1) + n - 1)/(max(256*((n + 255)/256), 1)))*k + 2*((max(256*((n + 255)/256), 1) + n - 1)/(max(256*((n + 255)/256), 1)))
                  global reads a_3: 4*k*n bytes, stride k
                  global reads x_8: 4*k*n bytes, uniform, reused
                  global writes outer_12: 4*n bytes, coalesced
                rows_group_2 when !(n >= 32768) and n >= 128
                  work-items 256*((256*n + 255)/256)
                  work 5632*max(0, ((k + 255)/256))*n + 5374*n
                  span 24*((max(((256*n + 255)/256), 1) + n - 1)/(max(((256*n + 255)/256), 1)))*max(0, ((k + 255)/256)) + 37*((max(((256*n + 255)/256), 1) + n - 1)/(max(((256*n + 255)/256), 1)))
                  global reads a_3: 1024*max(0, ((k + 255)/256))*n bytes, coalesced
                  global reads x_13: 1024*max(0, ((k + 255)/256))*n bytes, coalesced, reused
                  global writes intra_43: 1024*n bytes, uniform
                  local reads red_6: 2040*n bytes, coalesced, reused
                  local reads red_6: 1024*n bytes, uniform, reused
                  local writes red_6: 2044*n bytes, coalesced
                  barriers 11*n
                rows_segred_3 when !(n >= 32768) and !(n >= 128)
                  work-items 256*((max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n + 255)/256)
                  work 19*((k + max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1) - 1)/(max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)))*max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n + 4*max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n
                  span 21*((k + max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1) - 1)/(max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)))*((max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n + max(256*((max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n + 255)/256), 1) - 1)/(max(256*((max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n + 255)/256), 1))) + 6*((max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n + max(256*((max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n + 255)/256), 1) - 1)/(max(256*((max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n + 255)/256), 1)))
                  global reads a_15: 4*((k + max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1) - 1)/(max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)))*max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n bytes, coalesced
                  global reads x_17: 4*((k + max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1) - 1)/(max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)))*max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n bytes, coalesced
                  global writes partials_9: 4*max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n bytes, coalesced
                  special div: 2*max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n
                rows_group_4 when !(n >= 32768) and !(n >= 128) and max(min(min((262144/(max(n, 1))), 16384), ⌈k/64⌉), 1) >= 64
                  work-items 256*((256*n + 255)/256)
                  work 4352*max(0, ((max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1) + 255)/256))*n + 4350*n
                  span 19*((max(((256*n + 255)/256), 1) + n - 1)/(max(((256*n + 255)/256), 1)))*max(0, ((max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1) + 255)/256)) + 33*((max(((256*n + 255)/256), 1) + n - 1)/(max(((256*n + 255)/256), 1)))
                  global reads partials_9: 1024*max(0, ((max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1) + 255)/256))*n bytes, coalesced
                  global writes reduced_39: 1024*n bytes, uniform
                  local reads red_4: 2040*n bytes, coalesced, reused
                  local reads red_4: 1024*n bytes, uniform, reused
                  local writes red_4: 2044*n bytes, coalesced
                  barriers 11*n
                rows_segred_5 when !(n >= 32768) and !(n >= 128) and !(max(min(min((262144/(max(n, 1))), 16384), ⌈k/64⌉), 1) >= 64)
                  work-items 256*((n + 255)/256)
                  work 3*max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n
                  span 5*((max(256*((n + 255)/256), 1) + n - 1)/(max(256*((n + 255)/256), 1)))*max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1) + 2*((max(256*((n + 255)/256), 1) + n - 1)/(max(256*((n + 255)/256), 1)))
                  global reads partials_7: 4*max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)*n bytes, stride max(min(min((262144/(max(n, 1))), 16384), ((k + 63)/64)), 1)
                  global writes reduced_5: 4*n bytes, coalesced
              transfers: upload 4*k*n + 4*k bytes in 2 buffers, download 4*n bytes in 1 buffers, 0 scalar reads
        "#]],
    );
}

/// The kernels the host plan launches for these sizes (its `let`s and `if`s
/// evaluated as the runner does).
fn launched(c: &crate::Compiled, n: i64, m: i64) -> Vec<String> {
    launched_with(c, &[&[n, m]])
}

/// [`launched`] with the dimensions of every array input.
fn launched_with(c: &crate::Compiled, shapes: &[&[i64]]) -> Vec<String> {
    let mut vars: Vec<(Var, Scalar)> = Vec::new();
    for (input, shape) in c.plan.inputs.iter().zip(shapes) {
        if let weft_plan::Input::Array { dims, .. } = input {
            for (d, size) in dims.iter().zip(shape.iter()) {
                vars.push((*d, Scalar::I64(*size)));
            }
        }
    }
    fn walk(
        steps: &[Step],
        vars: &mut Vec<(Var, Scalar)>,
        c: &crate::Compiled,
        out: &mut Vec<String>,
    ) {
        for step in steps {
            let lookup = |v: Var| vars.iter().rev().find(|(w, _)| *w == v).map(|p| p.1);
            match step {
                Step::Let { var, value } => {
                    let value = weft_plan::eval(value, &lookup).expect("host arithmetic");
                    vars.push((*var, value));
                }
                Step::If { cond, then_steps, else_steps } => {
                    let taken = weft_plan::eval(cond, &lookup) == Ok(Scalar::Bool(true));
                    walk(if taken { then_steps } else { else_steps }, vars, c, out);
                }
                Step::Launch { kernel, .. } => out.push(c.kernels[*kernel as usize].name.clone()),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(&c.plan.steps, &mut vars, c, &mut out);
    out
}

fn profile(kind: &str) -> &'static DeviceProfile {
    builtin_profiles().iter().find(|p| p.device.kind == kind).expect("a committed profile")
}

#[test]
fn segmented_reductions_are_versions_chosen_per_run_by_thresholds() {
    let src = "entry row_sums (a: [n][m]f32) : [n]f32 = map (\\row -> reduce (+) 0 row) a";
    let gpu = compiled(src, Some(profile("gpu")));
    let cpu = compiled(src, Some(profile("cpu")));
    let choices = |c: &crate::Compiled| {
        [(1_000_000, 32), (1000, 200), (64, 100_000), (100_000, 1000)]
            .map(|(n, m)| format!("{n}x{m}: {}", launched(c, n, m).join(", ")))
            .join("\n")
    };
    expect![[r#"
        H100
        1000000x32: row_sums_rows_staged_0
        1000x200: row_sums_group_2
        64x100000: row_sums_segred_3, row_sums_group_4
        100000x1000: row_sums_map_1
        POCL
        1000000x32: row_sums_map_0
        1000x200: row_sums_group_1
        64x100000: row_sums_segred_2, row_sums_group_3
        100000x1000: row_sums_map_0"#]]
    .assert_eq(&format!("H100\n{}\nPOCL\n{}", choices(&gpu), choices(&cpu)));
}

#[test]
fn products_and_transpositions_are_tiled_at_every_size() {
    // On the H100 profile the middle end writes a product as one tiled product and the
    // code generator copies a transposition through tiles, whatever the sizes.
    let mm = compiled(
        "def dot (xs: [n]f32) (ys: [n]f32) : f32 = reduce (+) 0 (map2 (*) xs ys)\n\
         entry mm (a: [n][k]f32) (b: [k][m]f32) : [n][m]f32 =\n  \
         map (\\row -> map (\\col -> dot row col) (transpose b)) a",
        Some(profile("gpu")),
    );
    let tr = compiled("entry t (a: [n][m]f32) : [m][n]f32 = transpose a", Some(profile("gpu")));
    let mut text = String::new();
    for s in [4, 64, 4096] {
        text.push_str(&format!(
            "mm {s}^3: {}\n",
            launched_with(&mm, &[&[s, s], &[s, s]]).join(", ")
        ));
    }
    for s in [8, 8192] {
        text.push_str(&format!("transpose {s}^2: {}\n", launched_with(&tr, &[&[s, s]]).join(", ")));
    }
    expect![[r#"
        mm 4^3: mm_product_0
        mm 64^3: mm_product_0
        mm 4096^3: mm_product_0
        transpose 8^2: t_result_copy_0
        transpose 8192^2: t_result_copy_0
    "#]]
    .assert_eq(&text);
}

/// A `while` loop in a kernel is counted for one iteration: the kernel's cost, and the
/// entry's prediction, say they are lower bounds; a `for` loop is counted exactly.
#[test]
fn a_while_loop_makes_the_kernel_cost_a_lower_bound() {
    let with_while = compiled(
        "entry halve (xs: [n]i64) : [n]i64 =
           map (\\x -> loop y = x while y > 1 do y / 2) xs",
        None,
    );
    let with_for = compiled(
        "entry sum_to (xs: [n]i64) : [n]i64 =
           map (\\x -> loop s = 0 for i < 8 do s + x * i) xs",
        None,
    );
    let bounds = |c: &crate::Compiled| -> Vec<bool> {
        c.costs.kernels.iter().map(|(_, cost, _)| cost.lower_bound).collect()
    };
    assert!(bounds(&with_while).contains(&true), "{}", with_while.costs.render());
    assert!(!bounds(&with_for).contains(&true), "{}", with_for.costs.render());
    let profile = builtin_profiles().iter().find(|p| p.device.kind == "gpu").expect("a GPU");
    let sizes = |v: Var| with_while.costs.names.0.get(&v).map(|_| 1000);
    let predicted = with_while.costs.predict(profile, &sizes).expect("predicted");
    assert!(predicted.total.lower_bound);
}
