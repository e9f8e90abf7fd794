//! Interpreter throughput: a fused map-reduce over 10^6 `f32` (the target is
//! under 0.5 s in release).

use criterion::{Criterion, criterion_group, criterion_main};
use weft_hir::RootDatabase;
use weft_values::Value;

const SRC: &str = "entry sum_sq (xs: [n]f32) : f32 = reduce (+) 0 (map (\\x -> x * x + 1) xs)\n";

fn map_reduce(c: &mut Criterion) {
    let mut db = RootDatabase::default();
    let file = db.set_file("bench.weft", SRC);
    let checked = weft_core::CheckedFile::new(&db, file).expect("the benchmark program checks");
    let program = weft_core::lower_file(&db, checked).expect("the benchmark program elaborates");
    let entry = program.entries[0];
    #[expect(clippy::cast_precision_loss, reason = "small integers")]
    let xs: Vec<f32> = (0..1_000_000).map(|i| (i % 100) as f32 * 0.01).collect();
    let input = Value::vector(xs);
    c.bench_function("map_reduce_1e6_f32", |b| {
        b.iter(|| weft_core::run_entry(&program, entry, vec![input.clone()]).expect("runs"));
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = map_reduce
}
criterion_main!(benches);
