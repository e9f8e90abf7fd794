use expect_test::expect;

use super::*;
use crate::profile::{
    AtomicRate, CachedRead, Operations, SpecialRate, StridePoint, WideCopy, builtin_profiles,
};

/// A committed profile with round numbers, in format 1 (no operation rates): 100
/// compute units of 1000 work-items (H = 100,000), 1e12 ops/s, 1 TB/s global, 10 TB/s
/// local, 5 µs launches.
fn gpu() -> DeviceProfile {
    let mut p = builtin_profiles()[0].clone();
    p.format = 1;
    p.operations = None;
    p.device.kind = "gpu".into();
    p.device.compute_units = 100;
    p.device.max_work_group_size = 1000;
    p.device.simd_width = 32;
    p.device.max_clock_mhz = 1000;
    p.compute.f32_flops = 2e12;
    p.global.bytes_per_s = 1e12;
    p.local.bytes_per_s = 1e13;
    p.launch.kernel_s = 5e-6;
    p.global.strided = [(1, 1.0), (2, 1.5), (4, 2.0), (8, 4.0), (32, 8.0)]
        .iter()
        .map(|&(stride, slowdown)| StridePoint { stride, bytes_per_s: 1e12 / slowdown, slowdown })
        .collect();
    p.local.strided = [(1, 1.0), (2, 2.0), (4, 4.0), (8, 8.0), (16, 16.0), (32, 32.0)]
        .iter()
        .map(|&(stride, slowdown)| StridePoint { stride, bytes_per_s: 1e13 / slowdown, slowdown })
        .collect();
    p
}

/// [`gpu`] in format 2, with round operation rates: `exp` at a tenth of the plain
/// rate, a dependent operation every 100 ns (so 100,000 work-items fill the device), a
/// load latency of 200 ns (100,000 items with a word each in flight: 2 TB/s), copies of 2 and 4 words at 1.5 and 2 TB/s, cached reads at 10 TB/s.
fn gpu2() -> DeviceProfile {
    let mut p = gpu();
    p.format = 2;
    p.operations = Some(Operations {
        special: vec![SpecialRate { op: "exp".into(), per_s: 1e11 }],
        atomics: vec![
            AtomicRate { bins: 1, per_s: 1e8 },
            AtomicRate { bins: 1 << 16, per_s: 1e11 },
            AtomicRate { bins: 1 << 24, per_s: 1e10 },
        ],
        float_atomics: vec![AtomicRate { bins: 1 << 16, per_s: 5e10 }],
        local_atomics: vec![AtomicRate { bins: 256, per_s: 1e12 }],
        local_float_atomics: vec![AtomicRate { bins: 256, per_s: 1e11 }],
        wide_copies: vec![
            WideCopy { words: 2, bytes_per_s: 1.5e12 },
            WideCopy { words: 4, bytes_per_s: 2e12 },
        ],
        barrier_per_s: 1e10,
        cached_reads: vec![
            CachedRead { window_bytes: 16 << 10, bytes_per_s: 2e13 },
            CachedRead { window_bytes: 4 << 20, bytes_per_s: 1e13 },
        ],
        load_latency_s: 2e-7,
        cached_load_latency_s: 1e-7,
        op_latency_s: 1e-7,
        warm_launch_s: 2e-6,
        queued_launch_s: 1e-6,
    });
    p.device.global_mem_cache_bytes = 50 << 20;
    p
}

/// The same rates on a CPU-like device: 2 compute units of SIMD width 8 (H = 16), no
/// banks.
fn cpu() -> DeviceProfile {
    let mut p = gpu();
    p.device.kind = "cpu".into();
    p.device.compute_units = 2;
    p.device.simd_width = 8;
    for point in &mut p.local.strided {
        point.slowdown = 1.0;
    }
    p
}

const N: Var = Var(0);

fn names() -> Names {
    Names([(N, "n".to_owned())].into_iter().collect())
}

fn n() -> Expr {
    Expr::Var(N)
}

fn access(space: MemSpace, dir: Dir, count: Expr, stride: Stride) -> Access {
    Access { ptr: "xs".into(), space, dir, elem_bytes: 4, count, stride, reused: false }
}

/// `ys[i] = xs[i * s]` over n work-items.
fn copy(stride: Stride) -> Cost {
    Cost {
        items: n(),
        work: mul(n(), Expr::I64(2)),
        span: Expr::I64(2),
        accesses: vec![
            access(MemSpace::Global, Dir::Read, n(), stride),
            access(MemSpace::Global, Dir::Write, n(), Stride::Elems(Expr::I64(1))),
        ],
        special: vec![],
        barriers: Expr::I64(0),
        atomics: vec![],
        notes: vec![],
        lower_bound: false,
    }
}

/// An entry of these launches and no transfers.
fn entry_of(launches: Vec<Launch>, lower_bound: bool) -> EntryCost {
    EntryCost {
        entry: "e".into(),
        names: names(),
        kernels: vec![],
        launches,
        upload_bytes: Expr::I64(0),
        uploads: Expr::I64(0),
        download_bytes: Expr::I64(0),
        downloads: Expr::I64(0),
        scalar_reads: Expr::I64(0),
        notes: vec![],
        lower_bound,
    }
}

fn at(n: i64) -> impl Fn(Var) -> Option<i64> {
    move |v| (v == N).then_some(n)
}

#[test]
fn global_strides_use_the_first_measured_stride_at_or_above() {
    let m = Machine::of(&gpu());
    let got: Vec<f64> = [1, 2, 3, 4, 5, 8, 9, 32, 1000, -2].map(|s| m.global_slowdown(s)).to_vec();
    assert_eq!(got, [1.0, 1.5, 2.0, 2.0, 4.0, 4.0, 8.0, 8.0, 8.0, 1.5]);
}

#[test]
fn local_strides_are_bank_conflicts_of_the_largest_dividing_stride() {
    let m = Machine::of(&gpu());
    let got: Vec<f64> = [0, 1, 2, 3, 6, 12, 33, 64, 96].map(|s| m.local_slowdown(s)).to_vec();
    // gcd(s, 32): 33 is conflict-free (a padded row), 64 and 96 hit one bank 32 ways.
    assert_eq!(got, [1.0, 1.0, 2.0, 1.0, 2.0, 4.0, 1.0, 32.0, 32.0]);
}

#[test]
fn a_large_copy_is_memory_bound_at_the_measured_bandwidth() {
    let p = copy(Stride::Elems(Expr::I64(1))).predict(&gpu(), &at(1 << 24)).unwrap();
    // 2^24 items × 8 bytes at 1 TB/s = 134.2 µs, plus the 5 µs launch.
    assert!((p.memory_s - 134.217_728e-6).abs() < 1e-12, "{p:?}");
    assert!((p.seconds - 139.217_728e-6).abs() < 1e-12, "{p:?}");
    assert_eq!((p.bound, p.model), ("memory", MODEL));
    // Compute: 2^25 ops at 1e12/s = 33.6 µs.
    assert!((p.compute_s - 33.554_432e-6).abs() < 1e-12);
}

#[test]
fn uncoalesced_and_uniform_reads_scale_the_bytes() {
    let base = copy(Stride::Elems(Expr::I64(1))).predict(&gpu(), &at(1 << 24)).unwrap();
    let strided = copy(Stride::Elems(n())).predict(&gpu(), &at(1 << 24)).unwrap();
    // Reads at stride n ≥ 32 are 8× slower: (8 × 4 + 4) / (4 + 4) = 4.5× the bytes' time.
    assert!((strided.memory_s / base.memory_s - 4.5).abs() < 1e-9);
    let uniform = copy(Stride::Uniform).predict(&gpu(), &at(1 << 24)).unwrap();
    assert!((uniform.memory_s / base.memory_s - (4.0 / 32.0 + 4.0) / 8.0).abs() < 1e-9);
    let irregular = copy(Stride::Irregular).predict(&gpu(), &at(1 << 24)).unwrap();
    assert_eq!(irregular.memory_s, strided.memory_s);
}

#[test]
fn few_work_items_use_a_fraction_of_the_device() {
    // 1000 items on a device of H = 100,000: 1% occupancy, so 100× the full-device time.
    let small = copy(Stride::Elems(Expr::I64(1))).predict(&gpu(), &at(1000)).unwrap();
    assert!((small.memory_s - 1000.0 * 8.0 / 1e12 * 100.0).abs() < 1e-15, "{small:?}");
    // The same kernel on the CPU-like device (H = 16) is at full occupancy.
    let cpu = copy(Stride::Elems(Expr::I64(1))).predict(&cpu(), &at(1000)).unwrap();
    assert!((cpu.memory_s - 1000.0 * 8.0 / 1e12).abs() < 1e-15);
}

#[test]
fn the_span_bounds_compute() {
    let mut cost = copy(Stride::Elems(Expr::I64(1)));
    cost.span = Expr::I64(1_000_000);
    let p = cost.predict(&gpu(), &at(1 << 24)).unwrap();
    // 10^6 sequential operations at 1 GHz: 1 ms.
    assert!((p.compute_s - 1e-3).abs() < 1e-12);
    assert_eq!(p.bound, "compute");
}

#[test]
fn special_operations_take_their_measured_rate() {
    let mut cost = copy(Stride::Elems(Expr::I64(1)));
    cost.work = mul(n(), Expr::I64(12));
    cost.special = vec![(Special::Exp, mul(n(), Expr::I64(2)))];
    let p = cost.predict(&gpu2(), &at(1 << 24)).unwrap();
    // 10 plain operations at 1e12/s and 2 exponentials at 1e11/s per item.
    let expected = (1u64 << 24) as f64 * (10.0 / 1e12 + 2.0 / 1e11);
    assert!((p.compute_s / expected - 1.0).abs() < 1e-9, "{p:?}");
    // A format-1 profile charges them as plain operations.
    let old = cost.predict(&gpu(), &at(1 << 24)).unwrap();
    assert!((old.compute_s / ((1u64 << 24) as f64 * 12.0 / 1e12) - 1.0).abs() < 1e-9);
}

#[test]
fn small_grids_are_bound_by_latencies() {
    let cost = copy(Stride::Elems(Expr::I64(1)));
    // 1000 items, one read and one write each: two latencies (200 ns) per item, far
    // above the 8 KB's time at the bandwidth.
    let p = cost.predict(&gpu2(), &at(1000)).unwrap();
    assert!((p.memory_s - 4e-7).abs() < 1e-15, "{p:?}");
    // Compute: 2000 operations, each item issuing one per 100 ns: 1% of the device.
    assert!((p.compute_s - 2000.0 / 1e12 / 0.01).abs() < 1e-15, "{p:?}");
    // The launch is the warm empty kernel's.
    assert_eq!(p.launch_s, 2e-6);
}

#[test]
fn more_accesses_per_item_reach_the_wide_copies_bandwidth() {
    let m = Machine::of(&gpu2());
    let got = [1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 100.0].map(|a| m.global_bytes_per_s_at(a) / 1e12);
    assert_eq!(got, [1.0, 1.0, 1.25, 1.5, 1.75, 2.0, 2.0]);
    // Without wide copies, every kernel gets the one-word copy's.
    assert_eq!(Machine::of(&gpu()).global_bytes_per_s_at(8.0), 1e12);
}

#[test]
fn uniform_and_reused_reads_are_served_by_caches() {
    let mut cost = copy(Stride::Uniform);
    let uniform = cost.predict(&gpu2(), &at(1 << 24)).unwrap();
    // The read at the 16 KiB window's 20 TB/s, the write at the copy's 1 TB/s.
    let expected = (1u64 << 24) as f64 * 4.0 * (1.0 / 2e13 + 1.0 / 1e12);
    assert!((uniform.memory_s / expected - 1.0).abs() < 1e-9, "{uniform:?}");
    cost.accesses[0].stride = Stride::Elems(Expr::I64(1));
    cost.accesses[0].reused = true;
    let reused = cost.predict(&gpu2(), &at(1 << 24)).unwrap();
    let expected = (1u64 << 24) as f64 * 4.0 * (1.0 / 1e13 + 1.0 / 1e12);
    assert!((reused.memory_s / expected - 1.0).abs() < 1e-9, "{reused:?}");
}

#[test]
fn atomics_take_the_rate_of_their_bins_within_the_cache() {
    let histogram = |bins: Option<i64>, space: MemSpace, float: bool| Cost {
        atomics: vec![AtomicCount {
            ptr: "bins".into(),
            space,
            float,
            count: n(),
            bins: bins.map(Expr::I64),
        }],
        accesses: vec![],
        ..copy(Stride::Elems(Expr::I64(1)))
    };
    let time = |cost: Cost| cost.predict(&gpu2(), &at(1 << 24)).unwrap().memory_s;
    let items = (1u64 << 24) as f64;
    // 200 bins: the 65,536-bin rate (the fewest at or above).
    assert_eq!(time(histogram(Some(200), MemSpace::Global, false)), items / 1e11);
    // 2^20 bins fit the 50 MB cache: the largest measurement that fits, not 2^24's.
    assert_eq!(time(histogram(Some(1 << 20), MemSpace::Global, false)), items / 1e11);
    // 2^24 bins (64 MB) do not; unknown bins take the most bins measured.
    assert_eq!(time(histogram(Some(1 << 24), MemSpace::Global, false)), items / 1e10);
    assert_eq!(time(histogram(None, MemSpace::Global, false)), items / 1e10);
    assert_eq!(time(histogram(Some(100), MemSpace::Global, true)), items / 5e10);
    assert_eq!(time(histogram(Some(100), MemSpace::Local, true)), items / 1e11);
}

#[test]
fn printing_normalises_polynomials() {
    let e = add(
        mul(mul(n(), Expr::I64(4)), n()),
        add(ceil_div(n(), Expr::I64(256)), max(n(), Expr::I64(1))),
    );
    expect!["4*n*n + max(n, 1) + ⌈n/256⌉"].assert_eq(&show(&e, &names()));
    let e = Expr::bin(BinOp::Sub, mul(n(), Expr::I64(3)), n());
    expect!["2*n"].assert_eq(&show(&e, &names()));
}

/// Hovers print `max(256*⌈k/1024⌉, 1)`, not `max(256*((((k + 3)/4) + 255)/256), 1)`.
#[test]
fn readable_printing_finds_and_merges_ceiling_divisions() {
    // A launch's global size: ⌈n/4⌉ work-items (four elements each) rounded up to 256.
    let groups = max(
        mul(Expr::I64(256), ceil_div(ceil_div(n(), Expr::I64(4)), Expr::I64(256))),
        Expr::I64(1),
    );
    expect!["max(256*((((n + 3)/4) + 255)/256), 1)"].assert_eq(&show(&simplify(&groups), &names()));
    expect!["max(256*⌈n/1024⌉, 1)"].assert_eq(&show_readable(&groups, &names()));
    // Rounds over that many work-items: a ceiling division by a size that is not a constant.
    let rounds = ceil_div(n(), groups.clone());
    expect!["⌈n/(max(256*⌈n/1024⌉, 1))⌉"].assert_eq(&show_readable(&rounds, &names()));
    // An exact division disappears, a constant one is computed.
    let e = Expr::bin(
        BinOp::Div,
        Expr::bin(BinOp::Add, mul(Expr::I64(256), max(n(), Expr::I64(1))), Expr::I64(255)),
        Expr::I64(256),
    );
    expect!["max(n, 1)"].assert_eq(&show_readable(&e, &names()));
    let e =
        Expr::bin(BinOp::Div, Expr::bin(BinOp::Add, Expr::I64(3), Expr::I64(255)), Expr::I64(256));
    expect!["1"].assert_eq(&show_readable(&e, &names()));
    // Not a ceiling division: kept as a division.
    let e = div(add(n(), Expr::I64(7)), Expr::I64(4));
    expect!["((n + 7)/4)"].assert_eq(&show_readable(&e, &names()));
}

/// Hovers once showed `(bh*s/s) >= 128`, `(67/64)` and `(256 > 0 ? 256 : 1)`: what can
/// be computed is, whether the constants are the model's or the plan's literals.
#[test]
fn readable_printing_computes_what_it_can() {
    const S: Var = Var(7);
    let s = || Expr::Var(S);
    let names = || Names([(N, "bh".to_owned()), (S, "s".to_owned())].into_iter().collect());
    // A product divided by one of its factors.
    let e = Expr::bin(BinOp::Div, Expr::bin(BinOp::Mul, n(), s()), s());
    expect!["bh"].assert_eq(&show_readable(&e, &names()));
    // A constant condition, and a division of the plan's literals.
    let literal = |v: i64| Expr::Lit { elem: Elem::I64, bits: u64::from_ne_bytes(v.to_ne_bytes()) };
    let e = Expr::Select(
        Box::new(Expr::bin(BinOp::Gt, Expr::I64(256), Expr::I64(0))),
        Box::new(Expr::I64(256)),
        Box::new(Expr::I64(1)),
    );
    expect!["(bh/256)"].assert_eq(&show_readable(&Expr::bin(BinOp::Div, n(), e), &names()));
    let k = Expr::bin(BinOp::Div, literal(67), literal(64));
    expect!["1"].assert_eq(&show_readable(&k, &names()));
    // `max(min(x, 1), 1)` is 1 whatever `x`: a split reduction's chunk count of a short
    // row.
    let chunks = Expr::bin(
        BinOp::Max,
        Expr::bin(
            BinOp::Min,
            Expr::bin(BinOp::Min, Expr::bin(BinOp::Div, Expr::I64(131072), n()), Expr::I64(1024)),
            k,
        ),
        Expr::I64(1),
    );
    expect!["1"].assert_eq(&show_readable(&chunks, &names()));
    // Not exact: kept.
    let e = Expr::bin(BinOp::Div, Expr::bin(BinOp::Add, n(), s()), s());
    expect!["((bh + s)/s)"].assert_eq(&show_readable(&e, &names()));
}

#[test]
fn entries_add_launches_that_run_and_transfers() {
    let launch = |when: Vec<Expr>| Launch {
        kernel: 0,
        name: "copy".into(),
        when,
        repeat: Expr::I64(2),
        cost: copy(Stride::Elems(Expr::I64(1))),
    };
    let entry = EntryCost {
        entry: "e".into(),
        names: names(),
        kernels: vec![],
        launches: vec![
            launch(vec![Expr::bin(BinOp::Ge, n(), Expr::I64(10))]),
            launch(vec![Expr::bin(BinOp::Lt, n(), Expr::I64(10))]),
        ],
        upload_bytes: mul(n(), Expr::I64(4)),
        uploads: Expr::I64(1),
        download_bytes: mul(n(), Expr::I64(4)),
        downloads: Expr::I64(1),
        scalar_reads: Expr::I64(0),
        notes: vec![],
        lower_bound: false,
    };
    let profile = gpu();
    let sizes = entry.bind(&[("n", 1 << 24)]);
    let p = entry.predict(&profile, &sizes).unwrap();
    assert_eq!(p.launches.len(), 1);
    let one = copy(Stride::Elems(Expr::I64(1))).predict(&profile, &sizes).unwrap();
    assert!((p.kernels_s - 2.0 * one.seconds).abs() < 1e-15);
    let t = &profile.transfer;
    let bytes = f64::from(1u32 << 26);
    let transfer = bytes / t.host_to_device.bytes_per_s
        + t.host_to_device.latency_s
        + bytes / t.device_to_host.bytes_per_s
        + t.device_to_host.latency_s;
    assert!((p.total.transfer_s - transfer).abs() < 1e-12);
    assert!((p.total.seconds - p.kernels_s - transfer).abs() < 1e-12);
}

/// The queue, simulated: a launch the host enqueues while the device still runs the
/// one before waits in the queue and has the queued floor; one enqueued on an idle
/// device, the idle floor.
#[test]
fn launches_behind_running_work_have_the_queued_floor() {
    let launch = |name: &str, repeat: i64, size: i64| Launch {
        kernel: 0,
        name: name.into(),
        when: vec![],
        repeat: Expr::I64(repeat),
        cost: Cost { items: Expr::I64(size), ..copy(Stride::Elems(Expr::I64(1))) }
            .substitute(&|v| (v == N).then_some(Expr::I64(size))),
    };
    let entry = |launches: Vec<Launch>| entry_of(launches, false);
    let mut profile = gpu2();
    profile.launch.back_to_back_s = 10e-6;
    let floors = |e: &EntryCost| -> Vec<f64> {
        let p = e.predict(&profile, &|_| None).unwrap();
        p.launches.iter().map(|(_, p)| p.launch_s).collect()
    };
    // A long copy (2^24 items: milliseconds) then a tiny one, queued behind it.
    let long_then_tiny = entry(vec![launch("long", 1, 1 << 24), launch("tiny", 1, 256)]);
    assert_eq!(floors(&long_then_tiny), [2e-6, 1e-6]);
    // Two tiny ones: the device is idle when the host enqueues the second.
    let tiny_twice = entry(vec![launch("tiny", 1, 256), launch("tiny", 1, 256)]);
    assert_eq!(floors(&tiny_twice), [2e-6, 2e-6]);
    // Repeated: a long kernel's repetitions queue behind each other, a tiny one's do not.
    let repeated = entry(vec![launch("long", 3, 1 << 24)]);
    assert_eq!(floors(&repeated), [2e-6 + 2.0 * 1e-6]);
    let repeated = entry(vec![launch("tiny", 3, 256)]);
    assert_eq!(floors(&repeated), [3.0 * 2e-6]);
}

#[test]
fn integer_literals_print_as_numbers_and_fold() {
    // Host expressions may carry `i64` constants as literals: `16 * 16` is `256`.
    let lit = |v: i64| Expr::Lit { elem: weft_plan::Elem::I64, bits: v.cast_unsigned() };
    let e = Expr::Bin(weft_plan::BinOp::Mul, Box::new(lit(16)), Box::new(lit(16)));
    assert_eq!(crate::model::show(&e, &crate::model::Names::default()), "256");
}

/// A cost counted with a `while` loop once is a lower bound, and so is the prediction of
/// any entry that launches it (or that has a host `while` loop itself).
#[test]
fn a_while_loop_counted_once_makes_the_prediction_a_lower_bound() {
    let profile = gpu();
    let exact = copy(Stride::Elems(Expr::I64(1)));
    let counted_once = Cost { lower_bound: true, ..exact.clone() };
    assert!(!exact.predict(&profile, &at(1000)).unwrap().lower_bound);
    assert!(counted_once.predict(&profile, &at(1000)).unwrap().lower_bound);
    let launch = |cost: Cost| Launch {
        kernel: 0,
        name: "k".into(),
        when: vec![],
        repeat: Expr::I64(1),
        cost,
    };
    let bound = |e: &EntryCost| e.predict(&profile, &at(1000)).unwrap().total.lower_bound;
    assert!(!bound(&entry_of(vec![launch(exact.clone())], false)));
    assert!(bound(&entry_of(vec![launch(exact.clone()), launch(counted_once)], false)));
    assert!(bound(&entry_of(vec![launch(exact)], true)), "a host `while` loop");
}
