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
                work n_1
                span 3*((max(256*⌈global0/256⌉, 1) + n_1 - 1)/(max(256*⌈global0/256⌉, 1)))
                global reads xs_2: 4*n_1 bytes, coalesced
                global writes result_3: 4*n_1 bytes, coalesced
              launches
                scale_map_0
                  work-items 256*((((n + 3)/4) + 255)/256)
                  work n
                  span 3*((max(256*((((n + 3)/4) + 255)/256), 1) + n - 1)/(max(256*((((n + 3)/4) + 255)/256), 1)))
                  global reads xs_2: 4*n bytes, coalesced
                  global writes result_3: 4*n bytes, coalesced
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
                work 8*(n_2/4) + 4862*⌈global0/256⌉
                span 10*(((n_2/4) + max(256*⌈global0/256⌉, 1) - 1)/(max(256*⌈global0/256⌉, 1))) + 33
                global reads xs_1: 16*(n_2/4) + 1024*⌈global0/256⌉ bytes, coalesced
                global writes partial_3: 4*⌈global0/256⌉ bytes, uniform
                local reads red_5: 2040*⌈global0/256⌉ bytes, coalesced
                local reads red_5: 4*⌈global0/256⌉ bytes, uniform
                local writes red_5: 2044*⌈global0/256⌉ bytes, coalesced
              kernel total_reduce_total_1
                work-items 256*⌈global0/256⌉
                work 8*(groups_2/4) + 4862*⌈global0/256⌉
                span 10*(((groups_2/4) + max(256*⌈global0/256⌉, 1) - 1)/(max(256*⌈global0/256⌉, 1))) + 33
                global reads partial_1: 16*(groups_2/4) + 1024*⌈global0/256⌉ bytes, coalesced
                global writes partial_3: 4*⌈global0/256⌉ bytes, uniform
                local reads red_4: 2040*⌈global0/256⌉ bytes, coalesced
                local reads red_4: 4*⌈global0/256⌉ bytes, uniform
                local writes red_4: 2044*⌈global0/256⌉ bytes, coalesced
              launches
                total_reduce_partials_0
                  work-items 256*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256)
                  work 4862*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256) + 8*(n/4)
                  span 10*(((n/4) + max(256*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256), 1) - 1)/(max(256*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256), 1))) + 33
                  global reads xs_1: 1024*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256) + 16*(n/4) bytes, coalesced
                  global writes partial_3: 4*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256) bytes, uniform
                  local reads red_5: 2040*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256) bytes, coalesced
                  local reads red_5: 4*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256) bytes, uniform
                  local writes red_5: 2044*((256*max(1, min(((n + 255)/256), 1024)) + 255)/256) bytes, coalesced
                total_reduce_total_1
                  work-items 256
                  work 8*((max(1, min(((n + 255)/256), 1024)))/4) + 4862
                  span 10*((((max(1, min(((n + 255)/256), 1024)))/4) + 255)/256) + 33
                  global reads partial_1: 16*((max(1, min(((n + 255)/256), 1024)))/4) + 1024 bytes, coalesced
                  global writes partial_3: 4 bytes, uniform
                  local reads red_4: 2040 bytes, coalesced
                  local reads red_4: 4 bytes, uniform
                  local writes red_4: 2044 bytes, coalesced
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
              kernel flip_transpose_0
                work-items ((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1
                work 112*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1
                span 112
                global reads a_1: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, coalesced
                global writes result_4: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, coalesced
                local reads tile_5: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, stride 33
                local writes tile_5: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, coalesced
              kernel flip_map2d_1
                work-items ((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1
                work 4*m_2*n_3
                span 6*((m_2 + max(((global1 + local1 - 1)/local1)*local1, 1) - 1)/(max(((global1 + local1 - 1)/local1)*local1, 1)))*((max(((global0 + local0 - 1)/local0)*local0, 1) + n_3 - 1)/(max(((global0 + local0 - 1)/local0)*local0, 1))) + 2*((max(((global0 + local0 - 1)/local0)*local0, 1) + n_3 - 1)/(max(((global0 + local0 - 1)/local0)*local0, 1)))
                global reads a_1: 4*m_2*n_3 bytes, stride m_2
                global writes result_4: 4*m_2*n_3 bytes, coalesced
              launches
                flip_transpose_0 when max(max((max(256*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8), 1) >= 135168 ? 946176*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8) : ((127892717568*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8))/(max(256*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8), 1)))), 56565712), (max(256*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8), 1) >= 135168 ? 3588096*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8) : ((484995760128*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8))/(max(256*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8), 1))))) + 5264000000 <= max(max((max(256*((m + 7)/8)*((n + 31)/32), 1) >= 135168 ? 132*m*n : (17842176*m*n/(max(256*((m + 7)/8)*((n + 31)/32), 1)))), 3030306*((m + max(8*((m + 7)/8), 1) - 1)/(max(8*((m + 7)/8), 1)))*((max(32*((n + 31)/32), 1) + n - 1)/(max(32*((n + 31)/32), 1))) + 1010102*((max(32*((n + 31)/32), 1) + n - 1)/(max(32*((n + 31)/32), 1)))), (max(256*((m + 7)/8)*((n + 31)/32), 1) >= 135168 ? 1620*m*n + ((1620*(max(m, -m) == 0 ? 31 : (max(m, -m) <= 1 ? 1000 : (max(m, -m) <= 2 ? 1273 : (max(m, -m) <= 4 ? 1908 : (max(m, -m) <= 8 ? 3446 : (max(m, -m) <= 16 ? 6598 : 7180))))))*m*n)/1000) : ((218972160*m*n + 135168*((1620*(max(m, -m) == 0 ? 31 : (max(m, -m) <= 1 ? 1000 : (max(m, -m) <= 2 ? 1273 : (max(m, -m) <= 4 ? 1908 : (max(m, -m) <= 8 ? 3446 : (max(m, -m) <= 16 ? 6598 : 7180))))))*m*n)/1000))/(max(256*((m + 7)/8)*((n + 31)/32), 1))))) + 5264000000
                  work-items 256*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8)
                  work 28672*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8)
                  span 112
                  global reads a_1: 4096*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8) bytes, coalesced
                  global writes result_4: 4096*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8) bytes, coalesced
                  local reads tile_5: 4096*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8) bytes, stride 33
                  local writes tile_5: 4096*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8) bytes, coalesced
                flip_map2d_1 when !(max(max((max(256*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8), 1) >= 135168 ? 946176*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8) : ((127892717568*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8))/(max(256*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8), 1)))), 56565712), (max(256*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8), 1) >= 135168 ? 3588096*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8) : ((484995760128*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8))/(max(256*((32*((n + 31)/32) + 31)/32)*((8*((m + 31)/32) + 7)/8), 1))))) + 5264000000 <= max(max((max(256*((m + 7)/8)*((n + 31)/32), 1) >= 135168 ? 132*m*n : (17842176*m*n/(max(256*((m + 7)/8)*((n + 31)/32), 1)))), 3030306*((m + max(8*((m + 7)/8), 1) - 1)/(max(8*((m + 7)/8), 1)))*((max(32*((n + 31)/32), 1) + n - 1)/(max(32*((n + 31)/32), 1))) + 1010102*((max(32*((n + 31)/32), 1) + n - 1)/(max(32*((n + 31)/32), 1)))), (max(256*((m + 7)/8)*((n + 31)/32), 1) >= 135168 ? 1620*m*n + ((1620*(max(m, -m) == 0 ? 31 : (max(m, -m) <= 1 ? 1000 : (max(m, -m) <= 2 ? 1273 : (max(m, -m) <= 4 ? 1908 : (max(m, -m) <= 8 ? 3446 : (max(m, -m) <= 16 ? 6598 : 7180))))))*m*n)/1000) : ((218972160*m*n + 135168*((1620*(max(m, -m) == 0 ? 31 : (max(m, -m) <= 1 ? 1000 : (max(m, -m) <= 2 ? 1273 : (max(m, -m) <= 4 ? 1908 : (max(m, -m) <= 8 ? 3446 : (max(m, -m) <= 16 ? 6598 : 7180))))))*m*n)/1000))/(max(256*((m + 7)/8)*((n + 31)/32), 1))))) + 5264000000)
                  work-items 256*((m + 7)/8)*((n + 31)/32)
                  work 4*m*n
                  span 6*((m + max(8*((m + 7)/8), 1) - 1)/(max(8*((m + 7)/8), 1)))*((max(32*((n + 31)/32), 1) + n - 1)/(max(32*((n + 31)/32), 1))) + 2*((max(32*((n + 31)/32), 1) + n - 1)/(max(32*((n + 31)/32), 1)))
                  global reads a_1: 4*m*n bytes, stride m
                  global writes result_4: 4*m*n bytes, coalesced
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
              kernel mm_matmul_0
                work-items ((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1
                work 1660*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ + 1047*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1
                span 1507*⌈k_3/8⌉ + 1047
                global reads a_4: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ + 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, coalesced
                global reads b_1: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ + 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, coalesced
                global writes result_6: 256*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, coalesced
                local reads a_tile_7: 288*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ bytes, uniform
                local reads b_tile_8: 288*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ bytes, coalesced
                local writes a_tile_7: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ + 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, stride 128
                local writes b_tile_8: 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1*⌈k_3/8⌉ + 16*((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1 bytes, coalesced
                note: a loop bound computed from data is counted as one iteration
              kernel mm_map2d_1
                work-items ((global0 + local0 - 1)/local0)*((global1 + local1 - 1)/local1)*local0*local1
                work 6*k_4*m_2*n_1 + 2*m_2*n_1
                span 8*((m_2 + max(((global0 + local0 - 1)/local0)*local0, 1) - 1)/(max(((global0 + local0 - 1)/local0)*local0, 1)))*((max(((global1 + local1 - 1)/local1)*local1, 1) + n_1 - 1)/(max(((global1 + local1 - 1)/local1)*local1, 1)))*k_4 + 4*((m_2 + max(((global0 + local0 - 1)/local0)*local0, 1) - 1)/(max(((global0 + local0 - 1)/local0)*local0, 1)))*((max(((global1 + local1 - 1)/local1)*local1, 1) + n_1 - 1)/(max(((global1 + local1 - 1)/local1)*local1, 1))) + 2*((m_2 + max(((global0 + local0 - 1)/local0)*local0, 1) - 1)/(max(((global0 + local0 - 1)/local0)*local0, 1)))
                global reads a_3: 4*k_4*m_2*n_1 bytes, uniform
                global reads b_8: 4*k_4*m_2*n_1 bytes, coalesced
                global writes result_5: 4*m_2*n_1 bytes, coalesced
              launches
                mm_matmul_0 when max(max((max(256*((256*((m + 127)/128) + 255)/256)*((n + 127)/128), 1) >= 135168 ? 14023680*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 8845056*((256*((m + 127)/128) + 255)/256)*((n + 127)/128) : ((1895552778240*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 1195568529408*((256*((m + 127)/128) + 255)/256)*((n + 127)/128))/(max(256*((256*((m + 127)/128) + 255)/256)*((n + 127)/128), 1)))), 761111857*((k + 7)/8) + 528788397), (max(256*((256*((m + 127)/128) + 255)/256)*((n + 127)/128), 1) >= 135168 ? 8318976*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 29995008*((256*((m + 127)/128) + 255)/256)*((n + 127)/128) + ((3886080000*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 3886080000*((256*((m + 127)/128) + 255)/256)*((n + 127)/128))/1000) : ((1124459347968*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 4054365241344*((256*((m + 127)/128) + 255)/256)*((n + 127)/128) + 135168*((3886080000*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 3886080000*((256*((m + 127)/128) + 255)/256)*((n + 127)/128))/1000))/(max(256*((256*((m + 127)/128) + 255)/256)*((n + 127)/128), 1))))) + 5264000000 <= max(max((max(256*((m + 31)/32)*((n + 7)/8), 1) >= 135168 ? 198*k*m*n + 66*m*n : ((26763264*k*m*n + 8921088*m*n)/(max(256*((m + 31)/32)*((n + 7)/8), 1)))), 4040408*((m + max(32*((m + 31)/32), 1) - 1)/(max(32*((m + 31)/32), 1)))*((max(8*((n + 7)/8), 1) + n - 1)/(max(8*((n + 7)/8), 1)))*k + 2020204*((m + max(32*((m + 31)/32), 1) - 1)/(max(32*((m + 31)/32), 1)))*((max(8*((n + 7)/8), 1) + n - 1)/(max(8*((n + 7)/8), 1))) + 1010102*((m + max(32*((m + 31)/32), 1) - 1)/(max(32*((m + 31)/32), 1)))), (max(256*((m + 31)/32)*((n + 7)/8), 1) >= 135168 ? 1620*k*m*n + 1620*m*n + (50220*k*m*n/1000) : ((218972160*k*m*n + 218972160*m*n + 135168*(50220*k*m*n/1000))/(max(256*((m + 31)/32)*((n + 7)/8), 1))))) + 5264000000
                  work-items 256*((256*((m + 127)/128) + 255)/256)*((n + 127)/128)
                  work 424960*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 268032*((256*((m + 127)/128) + 255)/256)*((n + 127)/128)
                  span 1507*((k + 7)/8) + 1047
                  global reads a_4: 4096*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 4096*((256*((m + 127)/128) + 255)/256)*((n + 127)/128) bytes, coalesced
                  global reads b_1: 4096*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 4096*((256*((m + 127)/128) + 255)/256)*((n + 127)/128) bytes, coalesced
                  global writes result_6: 65536*((256*((m + 127)/128) + 255)/256)*((n + 127)/128) bytes, coalesced
                  local reads a_tile_7: 73728*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) bytes, uniform
                  local reads b_tile_8: 73728*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) bytes, coalesced
                  local writes a_tile_7: 4096*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 4096*((256*((m + 127)/128) + 255)/256)*((n + 127)/128) bytes, stride 128
                  local writes b_tile_8: 4096*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 4096*((256*((m + 127)/128) + 255)/256)*((n + 127)/128) bytes, coalesced
                  note: a loop bound computed from data is counted as one iteration
                mm_map2d_1 when !(max(max((max(256*((256*((m + 127)/128) + 255)/256)*((n + 127)/128), 1) >= 135168 ? 14023680*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 8845056*((256*((m + 127)/128) + 255)/256)*((n + 127)/128) : ((1895552778240*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 1195568529408*((256*((m + 127)/128) + 255)/256)*((n + 127)/128))/(max(256*((256*((m + 127)/128) + 255)/256)*((n + 127)/128), 1)))), 761111857*((k + 7)/8) + 528788397), (max(256*((256*((m + 127)/128) + 255)/256)*((n + 127)/128), 1) >= 135168 ? 8318976*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 29995008*((256*((m + 127)/128) + 255)/256)*((n + 127)/128) + ((3886080000*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 3886080000*((256*((m + 127)/128) + 255)/256)*((n + 127)/128))/1000) : ((1124459347968*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 4054365241344*((256*((m + 127)/128) + 255)/256)*((n + 127)/128) + 135168*((3886080000*((256*((m + 127)/128) + 255)/256)*((k + 7)/8)*((n + 127)/128) + 3886080000*((256*((m + 127)/128) + 255)/256)*((n + 127)/128))/1000))/(max(256*((256*((m + 127)/128) + 255)/256)*((n + 127)/128), 1))))) + 5264000000 <= max(max((max(256*((m + 31)/32)*((n + 7)/8), 1) >= 135168 ? 198*k*m*n + 66*m*n : ((26763264*k*m*n + 8921088*m*n)/(max(256*((m + 31)/32)*((n + 7)/8), 1)))), 4040408*((m + max(32*((m + 31)/32), 1) - 1)/(max(32*((m + 31)/32), 1)))*((max(8*((n + 7)/8), 1) + n - 1)/(max(8*((n + 7)/8), 1)))*k + 2020204*((m + max(32*((m + 31)/32), 1) - 1)/(max(32*((m + 31)/32), 1)))*((max(8*((n + 7)/8), 1) + n - 1)/(max(8*((n + 7)/8), 1))) + 1010102*((m + max(32*((m + 31)/32), 1) - 1)/(max(32*((m + 31)/32), 1)))), (max(256*((m + 31)/32)*((n + 7)/8), 1) >= 135168 ? 1620*k*m*n + 1620*m*n + (50220*k*m*n/1000) : ((218972160*k*m*n + 218972160*m*n + 135168*(50220*k*m*n/1000))/(max(256*((m + 31)/32)*((n + 7)/8), 1))))) + 5264000000)
                  work-items 256*((m + 31)/32)*((n + 7)/8)
                  work 6*k*m*n + 2*m*n
                  span 8*((m + max(32*((m + 31)/32), 1) - 1)/(max(32*((m + 31)/32), 1)))*((max(8*((n + 7)/8), 1) + n - 1)/(max(8*((n + 7)/8), 1)))*k + 4*((m + max(32*((m + 31)/32), 1) - 1)/(max(32*((m + 31)/32), 1)))*((max(8*((n + 7)/8), 1) + n - 1)/(max(8*((n + 7)/8), 1))) + 2*((m + max(32*((m + 31)/32), 1) - 1)/(max(32*((m + 31)/32), 1)))
                  global reads a_3: 4*k*m*n bytes, uniform
                  global reads b_8: 4*k*m*n bytes, coalesced
                  global writes result_5: 4*m*n bytes, coalesced
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
              kernel rows_map_0
                work-items 256*⌈global0/256⌉
                work 14*k_3*n_1 + 2*n_1
                span 8*((max(256*⌈global0/256⌉, 1) + n_1 - 1)/(max(256*⌈global0/256⌉, 1)))*k_3 + 4*((max(256*⌈global0/256⌉, 1) + n_1 - 1)/(max(256*⌈global0/256⌉, 1)))
                global reads a_2: 4*k_3*n_1 bytes, stride k_3
                global reads x_6: 4*k_3*n_1 bytes, uniform
                global writes result_4: 4*n_1 bytes, coalesced
              launches
                rows_map_0
                  work-items 256*((((n + 3)/4) + 255)/256)
                  work 14*k*n + 2*n
                  span 8*((max(256*((((n + 3)/4) + 255)/256), 1) + n - 1)/(max(256*((((n + 3)/4) + 255)/256), 1)))*k + 4*((max(256*((((n + 3)/4) + 255)/256), 1) + n - 1)/(max(256*((((n + 3)/4) + 255)/256), 1)))
                  global reads a_2: 4*k*n bytes, stride k
                  global reads x_6: 4*k*n bytes, uniform
                  global writes result_4: 4*n bytes, coalesced
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
fn segmented_reductions_are_chosen_by_predicted_time() {
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
        1000000x32: row_sums_rows_staged_2
        1000x200: row_sums_rows_0
        64x100000: row_sums_rows_0
        100000x1000: row_sums_rows_0
        POCL
        1000000x32: row_sums_map_1
        1000x200: row_sums_map_1
        64x100000: row_sums_map_1
        100000x1000: row_sums_map_1"#]]
    .assert_eq(&format!("H100\n{}\nPOCL\n{}", choices(&gpu), choices(&cpu)));
    // The hover of each candidate says what was compared.
    let roles: Vec<&str> =
        gpu.kernels.iter().flat_map(|k| k.origins.iter().map(|(_, role)| role.as_str())).collect();
    assert!(roles.iter().all(|r| r.contains("picked per run by predicted time on")), "{roles:?}");
}

#[test]
fn tiling_competes_with_the_plain_kernel_by_predicted_time() {
    // On the H100 profile: the tiled kernels for large matrices, the plain one-work-item-
    // per-element kernel where a tile would be mostly empty.
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
        mm 4^3: mm_map2d_1
        mm 64^3: mm_map2d_1
        mm 4096^3: mm_matmul_0
        transpose 8^2: t_map2d_1
        transpose 8192^2: t_transpose_0
    "#]]
    .assert_eq(&text);
    let roles: Vec<&str> =
        mm.kernels.iter().flat_map(|k| k.origins.iter().map(|(_, role)| role.as_str())).collect();
    assert!(roles.iter().all(|r| r.contains("picked per run by predicted time on")), "{roles:?}");
}
