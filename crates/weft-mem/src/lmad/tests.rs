//! LMAD tests: snapshots of the digest's worked examples (reference/004-lmad.md §8, E1-E6)
//! printed as Futhark prints LMADs, and proptest laws that compare every operation with a
//! naive model that materialises the array of flat addresses.

use expect_test::{Expect, expect};
use proptest::prelude::*;

use crate::lmad::{DimSlice, Lmad, LmadDim};
use weft_size::Size;

type S = Size<String>;
type L = Lmad<String>;

fn v(name: &str) -> S {
    Size::var(name.to_owned())
}

fn c(value: i64) -> S {
    Size::constant(value)
}

fn check(lmad: &L, expect: Expect) {
    expect.assert_eq(&lmad.to_string());
}

#[test]
fn row_major_prints_like_futhark() {
    check(&L::row_major(&[v("n"), v("m")]), expect!["{offset: 0; strides: [m, 1]; shape: [n, m]}"]);
    check(
        &L::row_major(&[v("a"), v("b"), v("c")]),
        expect!["{offset: 0; strides: [b*c, c, 1]; shape: [a, b, c]}"],
    );
    check(&L::row_major(&[]), expect!["{offset: 0; strides: []; shape: []}"]);
}

#[test]
fn transpose_slice_index_is_e1() {
    let a = L::row_major(&[v("n"), v("m")]);
    let b = a.transpose();
    check(&b, expect!["{offset: 0; strides: [1, m]; shape: [m, n]}"]);
    let range =
        |start: &str, len: &str| DimSlice::Range { start: v(start), len: v(len), step: c(1) };
    let c_view = b.slice(&[range("o1", "k1"), range("o2", "k2")]);
    check(&c_view, expect!["{offset: m*o2 + o1; strides: [1, m]; shape: [k1, k2]}"]);
    expect!["m*o2 + m*q + o1 + p"].assert_eq(&c_view.index(&[v("p"), v("q")]).to_string());
}

#[test]
fn transposed_join_layout_is_e3() {
    check(
        &L::row_major(&[v("n"), v("n")]).transpose(),
        expect!["{offset: 0; strides: [1, n]; shape: [n, n]}"],
    );
}

#[test]
fn memory_expansion_layouts_are_e4() {
    let a = L::row_major(&[v("m")]);
    let chunked = a.shift(&v("i").mul(&v("m")));
    check(&chunked, expect!["{offset: i*m; strides: [1]; shape: [m]}"]);
    let interleaved_base = L::new(v("i"), vec![LmadDim { stride: v("n"), shape: v("m") }]);
    check(&a.rebase(&interleaved_base).unwrap(), expect!["{offset: i; strides: [n]; shape: [m]}"]);
}

#[test]
fn kernel_result_row_is_e5() {
    check(
        &L::row_major(&[v("n"), v("m")]).index_outer(&v("i")),
        expect!["{offset: i*m; strides: [1]; shape: [m]}"],
    );
}

#[test]
fn expansion_preserves_aliasing_of_a_slice_e6() {
    let a = L::row_major(&[c(10)]);
    let b = a.slice(&[DimSlice::Range { start: c(5), len: c(3), step: c(1) }]);
    check(&b, expect!["{offset: 5; strides: [1]; shape: [3]}"]);
    // Interleaved expansion over 4 threads: thread x's address a goes to a*4 + x.
    let base = L::new(v("x"), vec![LmadDim { stride: c(4), shape: c(10) }]);
    let (a_expanded, b_expanded) = (a.rebase(&base).unwrap(), b.rebase(&base).unwrap());
    check(&b_expanded, expect!["{offset: x + 20; strides: [4]; shape: [3]}"]);
    assert_eq!(a_expanded.index(&[c(5)]), b_expanded.index(&[c(0)]));
}

#[test]
fn reverse_replicate_and_steps() {
    let a = L::row_major(&[v("n")]);
    check(&a.reverse(0), expect!["{offset: n - 1; strides: [-1]; shape: [n]}"]);
    check(&a.replicate(0, &v("k")), expect!["{offset: 0; strides: [0, 1]; shape: [k, n]}"]);
    check(
        &a.slice_dim(0, &c(1), &v("n").sub(&c(1)).div_exact(&c(2)), &c(2)),
        expect!["{offset: 1; strides: [2]; shape: [(n - 1)/2]}"],
    );
    check(
        &L::row_major(&[v("n"), v("m")]).permute(&[1, 0]).fix(1, &v("j")),
        expect!["{offset: j*m; strides: [1]; shape: [m]}"],
    );
}

#[test]
fn split_then_flatten_round_trips() {
    let a = L::row_major(&[v("n")]);
    let split = a.split(0, &c(2048));
    check(&split, expect!["{offset: 0; strides: [2048, 1]; shape: [n/2048, 2048]}"]);
    assert_eq!(split.flatten(), Some(a.clone()));
    let unflat = L::row_major(&[v("n").mul(&v("m"))]).unflatten(0, &v("n"), &v("m"));
    assert_eq!(unflat, L::row_major(&[v("n"), v("m")]));
}

#[test]
fn flatten_of_transpose_needs_a_copy() {
    let a = L::row_major(&[v("n"), v("m")]);
    assert_eq!(a.transpose().flatten(), None);
    check(&a.flatten().unwrap(), expect!["{offset: 0; strides: [1]; shape: [m*n]}"]);
}

#[test]
fn reshape_merges_and_splits_runs() {
    let a = L::row_major(&[v("n"), v("m"), v("k")]);
    check(
        &a.reshape(&[v("n").mul(&v("m")), v("k")]).unwrap(),
        expect!["{offset: 0; strides: [k, 1]; shape: [m*n, k]}"],
    );
    check(
        &a.reshape(&[v("n"), c(1), v("m").mul(&v("k"))]).unwrap(),
        expect!["{offset: 0; strides: [k*m, k*m, 1]; shape: [n, 1, k*m]}"],
    );
    // Transposing the inner two dimensions leaves the outer one mergeable with nothing.
    let b = a.permute(&[0, 2, 1]);
    check(&b, expect!["{offset: 0; strides: [k*m, 1, k]; shape: [n, k, m]}"]);
    assert_eq!(b.reshape(&[v("n"), v("k").mul(&v("m"))]), None);
    assert_eq!(
        L::row_major(&[c(6), c(2)]).reshape(&[c(4), c(3)]),
        Some(L::row_major(&[c(4), c(3)]))
    );
    assert_eq!(L::row_major(&[v("n"), v("m")]).reshape(&[v("p"), v("q")]), None);
}

#[test]
fn compose_over_a_strided_inner_layout() {
    let inner = L::row_major(&[c(4), v("n")]).slice_dim(1, &c(0), &v("n"), &c(1)).fix(0, &c(1));
    let outer = L::row_major(&[v("n")]).reverse(0);
    check(&outer.compose(&inner).unwrap(), expect!["{offset: 2*n - 1; strides: [-1]; shape: [n]}"]);
    let transposed = L::row_major(&[v("n"), v("m")]).transpose();
    assert_eq!(L::row_major(&[v("m"), v("n")]).compose(&transposed), Some(transposed.clone()));
    assert_eq!(L::row_major(&[v("m")]).compose(&transposed), None);
}

// Property tests against a materialised model.

/// A materialised array of flat addresses, row-major.
#[derive(Clone, Debug)]
struct Model {
    shape: Vec<usize>,
    data: Vec<i64>,
}

impl Model {
    fn from_fn(shape: Vec<usize>, f: impl Fn(&[usize]) -> i64) -> Model {
        let data = all_indices(&shape).iter().map(|idx| f(idx)).collect();
        Model { shape, data }
    }

    fn get(&self, idx: &[usize]) -> i64 {
        let flat = idx.iter().zip(&self.shape).fold(0, |acc, (i, n)| acc * n + i);
        self.data[flat]
    }
}

fn all_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut res = vec![Vec::new()];
    for &n in shape {
        res = res
            .into_iter()
            .flat_map(|idx| (0..n).map(move |i| [idx.clone(), vec![i]].concat()))
            .collect();
    }
    res
}

fn concrete(shape: &[usize]) -> Vec<S> {
    shape.iter().map(|&n| c(n as i64)).collect()
}

fn address(lmad: &L, idx: &[usize]) -> i64 {
    lmad.index(&concrete(idx)).as_constant().expect("concrete LMAD has constant addresses")
}

fn assert_matches(lmad: &L, model: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(&lmad.shape(), &concrete(&model.shape));
    for idx in all_indices(&model.shape) {
        prop_assert_eq!(address(lmad, &idx), model.get(&idx), "index {:?} of {}", idx, lmad);
    }
    Ok(())
}

/// Whether some single LMAD has exactly the model's addresses (brute force).
fn fits_one_lmad(model: &Model) -> bool {
    let origin = vec![0; model.shape.len()];
    let offset = model.get(&origin);
    let strides: Vec<i64> = (0..model.shape.len())
        .map(|d| {
            if model.shape[d] < 2 {
                return 0;
            }
            let mut unit = origin.clone();
            unit[d] = 1;
            model.get(&unit) - offset
        })
        .collect();
    all_indices(&model.shape).iter().all(|idx| {
        model.get(idx) == offset + idx.iter().zip(&strides).map(|(i, s)| *i as i64 * s).sum::<i64>()
    })
}

/// A pseudo-random permutation of `0..n` from a seed.
fn permutation(n: usize, mut seed: u32) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..n).collect();
    for k in (1..n).rev() {
        seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        perm.swap(k, (seed >> 8) as usize % (k + 1));
    }
    perm
}

/// A shape with `n_elements` elements, from a seed: factors dealt into up to four dims,
/// with some unit dims.
fn factor_shape(n_elements: usize, seed: u32) -> Vec<usize> {
    let n_dims = 1 + (seed % 4) as usize;
    let mut shape = vec![1; n_dims];
    let (mut rest, mut p, mut s) = (n_elements, 2, seed / 4);
    while rest > 1 {
        if rest.is_multiple_of(p) {
            rest /= p;
            shape[(s % n_dims as u32) as usize] *= p;
            s = s.wrapping_mul(31).wrapping_add(7);
        } else {
            p += 1;
        }
    }
    shape
}

/// One view operation, with parameters reduced modulo the current shape when applied.
#[derive(Clone, Debug)]
struct Op {
    kind: u8,
    a: u32,
    b: u32,
    c: u32,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    (0u8..9, any::<u32>(), any::<u32>(), any::<u32>()).prop_map(|(kind, a, b, c)| Op {
        kind,
        a,
        b,
        c,
    })
}

/// Applies `op` to both the LMAD and the model. Operations that return `None` are checked
/// against brute force and leave both unchanged.
fn apply(op: &Op, lmad: &mut L, model: &mut Model) -> Result<(), TestCaseError> {
    let rank = model.shape.len();
    let dim = if rank == 0 { 0 } else { op.a as usize % rank };
    let old = model.clone();
    match op.kind {
        0 if rank > 0 => {
            let n = old.shape[dim];
            let start = op.b as usize % n;
            let step = (op.c % 5) as i64 - 2;
            let max_len = match step {
                0 => 3,
                s if s > 0 => (n - 1 - start) / s as usize + 1,
                s => start / s.unsigned_abs() as usize + 1,
            };
            let len = 1 + (op.c / 5) as usize % max_len;
            let mut shape = old.shape.clone();
            shape[dim] = len;
            *lmad = lmad.slice_dim(dim, &c(start as i64), &c(len as i64), &c(step));
            *model = Model::from_fn(shape, |idx| {
                let mut src = idx.to_vec();
                src[dim] = (start as i64 + step * idx[dim] as i64) as usize;
                old.get(&src)
            });
        }
        1 if rank > 0 => {
            let i = op.b as usize % old.shape[dim];
            let mut shape = old.shape.clone();
            shape.remove(dim);
            *lmad = lmad.fix(dim, &c(i as i64));
            *model = Model::from_fn(shape, |idx| {
                let mut src = idx.to_vec();
                src.insert(dim, i);
                old.get(&src)
            });
        }
        2 => {
            let perm = permutation(rank, op.b);
            *lmad = lmad.permute(&perm);
            let shape = perm.iter().map(|&k| old.shape[k]).collect();
            *model = Model::from_fn(shape, |idx| {
                let mut src = vec![0; rank];
                for (k, &p) in perm.iter().enumerate() {
                    src[p] = idx[k];
                }
                old.get(&src)
            });
        }
        3 if rank > 0 => {
            *lmad = lmad.reverse(dim);
            *model = Model::from_fn(old.shape.clone(), |idx| {
                let mut src = idx.to_vec();
                src[dim] = old.shape[dim] - 1 - idx[dim];
                old.get(&src)
            });
        }
        4 if old.data.len() <= 100 => {
            let at = op.a as usize % (rank + 1);
            let n = 1 + op.b as usize % 3;
            let mut shape = old.shape.clone();
            shape.insert(at, n);
            *lmad = lmad.replicate(at, &c(n as i64));
            *model = Model::from_fn(shape, |idx| {
                let mut src = idx.to_vec();
                src.remove(at);
                old.get(&src)
            });
        }
        5 if rank >= 2 => {
            let dim = op.a as usize % (rank - 1);
            let mut shape = old.shape.clone();
            let inner = shape.remove(dim + 1);
            shape[dim] *= inner;
            let merged = Model { shape, data: old.data.clone() };
            match lmad.merge_dims(dim) {
                Some(res) => {
                    *lmad = res;
                    *model = merged;
                }
                None => prop_assert!(!fits_one_lmad(&merged), "merge refused: {}", lmad),
            }
        }
        6 if rank > 0 => {
            let n = old.shape[dim];
            let divisors: Vec<usize> = (1..=n).filter(|k| n.is_multiple_of(*k)).collect();
            let k = divisors[op.b as usize % divisors.len()];
            let mut shape = old.shape.clone();
            shape[dim] = n / k;
            shape.insert(dim + 1, k);
            *lmad = lmad.split(dim, &c(k as i64));
            *model = Model { shape, data: old.data.clone() };
        }
        7 => {
            let shape = factor_shape(old.data.len(), op.b);
            let reshaped = Model { shape: shape.clone(), data: old.data.clone() };
            match lmad.reshape(&concrete(&shape)) {
                Some(res) => {
                    *lmad = res;
                    *model = reshaped;
                }
                None => prop_assert!(
                    !fits_one_lmad(&reshaped),
                    "reshape refused: {} to {:?}",
                    lmad,
                    shape
                ),
            }
        }
        8 => {
            let by = i64::from(op.b % 7);
            *lmad = lmad.shift(&c(by));
            model.data.iter_mut().for_each(|address| *address += by);
        }
        _ => {}
    }
    Ok(())
}

fn shape_strategy() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..=4, 1..=3)
}

proptest! {
    #[test]
    fn view_chains_match_materialised_model(
        shape in shape_strategy(),
        ops in prop::collection::vec(op_strategy(), 0..8),
    ) {
        let mut lmad = L::row_major(&concrete(&shape));
        let mut model = Model::from_fn(shape.clone(), |idx| {
            idx.iter().zip(&shape).fold(0, |acc, (i, n)| acc * *n as i64 + *i as i64)
        });
        assert_matches(&lmad, &model)?;
        for op in &ops {
            apply(op, &mut lmad, &mut model)?;
            assert_matches(&lmad, &model)?;
        }
    }

    #[test]
    fn rebase_matches_materialised_model(
        shape in shape_strategy(),
        ops in prop::collection::vec(op_strategy(), 0..6),
        base_perm in any::<u32>(),
        base_reverse in any::<u32>(),
        base_offset in 0i64..5,
    ) {
        let mut lmad = L::row_major(&concrete(&shape));
        let mut model = Model::from_fn(shape.clone(), |idx| {
            idx.iter().zip(&shape).fold(0, |acc, (i, n)| acc * *n as i64 + *i as i64)
        });
        for op in &ops {
            if op.kind != 8 {
                apply(op, &mut lmad, &mut model)?;
            }
        }
        // A new base of the original shape: a permuted row-major block, permuted back, with
        // one dimension reversed, so it is usually not contiguous in row-major order.
        let perm = permutation(shape.len(), base_perm);
        let mut inverse = vec![0; perm.len()];
        for (k, &p) in perm.iter().enumerate() {
            inverse[p] = k;
        }
        let permuted: Vec<usize> = perm.iter().map(|&k| shape[k]).collect();
        let base = L::row_major_at(c(base_offset), &concrete(&permuted))
            .permute(&inverse)
            .reverse(base_reverse as usize % shape.len());
        let base_model = Model::from_fn(shape.clone(), |idx| address(&base, idx));
        if let Some(rebased) = lmad.rebase(&base) {
            let expected = Model {
                shape: model.shape.clone(),
                data: model.data.iter().map(|&a| base_model.data[a as usize]).collect(),
            };
            assert_matches(&rebased, &expected)?;
        }
        if base.reshape(&[base.n_elements()]).is_some() {
            prop_assert!(lmad.rebase(&base).is_some());
        }
    }
}

/// Applies `op` to a symbolic LMAD and to its concrete instance (`concrete_shape` is the
/// concrete LMAD's shape, used to pick parameters). Returns `None` when the op does not
/// apply or the symbolic LMAD refuses it (a symbolic refusal may be conservative).
fn apply_both(op: &Op, symbolic: &L, concrete: &L, concrete_shape: &[usize]) -> Option<(L, L)> {
    let rank = concrete_shape.len();
    let dim = if rank == 0 { 0 } else { op.a as usize % rank };
    match op.kind {
        0 | 1 if rank > 0 => {
            let i = c((op.b as usize % concrete_shape[dim]) as i64);
            Some((symbolic.fix(dim, &i), concrete.fix(dim, &i)))
        }
        2 => {
            let perm = permutation(rank, op.b);
            Some((symbolic.permute(&perm), concrete.permute(&perm)))
        }
        3 if rank > 0 => Some((symbolic.reverse(dim), concrete.reverse(dim))),
        4 => {
            let at = op.a as usize % (rank + 1);
            let n = c(1 + i64::from(op.b % 3));
            Some((symbolic.replicate(at, &n), concrete.replicate(at, &n)))
        }
        5 if rank >= 2 => {
            let dim = op.a as usize % (rank - 1);
            let merged = symbolic.merge_dims(dim)?;
            Some((merged, concrete.merge_dims(dim).expect("a symbolic merge holds concretely")))
        }
        6 if rank > 0 => {
            let n = concrete_shape[dim];
            let divisors: Vec<usize> = (1..=n).filter(|k| n.is_multiple_of(*k)).collect();
            let k = c(divisors[op.b as usize % divisors.len()] as i64);
            Some((symbolic.split(dim, &k), concrete.split(dim, &k)))
        }
        7 if rank > 0 => {
            let start = c((op.c as usize % concrete_shape[dim]) as i64);
            let len = symbolic.dims[dim].shape.sub(&start);
            let concrete_len = concrete.dims[dim].shape.sub(&start);
            Some((
                symbolic.slice_dim(dim, &start, &len, &c(1)),
                concrete.slice_dim(dim, &start, &concrete_len, &c(1)),
            ))
        }
        8 => {
            let by = v("o").mul(&c(i64::from(op.b % 3)));
            Some((symbolic.shift(&by), concrete.shift(&by.substitute(&mut |_| Some(c(5))))))
        }
        _ => None,
    }
}

proptest! {
    /// Symbolic LMADs over size variables agree with concrete ones once the variables are
    /// given values: the symbolic algebra (normal forms, `(n/k)*k = n`) is sound.
    #[test]
    fn symbolic_chains_instantiate_to_concrete_chains(
        shape in shape_strategy(),
        ops in prop::collection::vec(op_strategy(), 0..8),
    ) {
        let names = ["n0", "n1", "n2"];
        let values = |name: &String| -> Option<S> {
            if name == "o" {
                return Some(c(5));
            }
            names.iter().position(|n| n == name).map(|k| c(shape[k] as i64))
        };
        let mut symbolic = L::row_major(&names[..shape.len()].iter().map(|n| v(n)).collect::<Vec<_>>());
        let mut concrete = L::row_major(&concrete(&shape));
        for op in &ops {
            let concrete_shape: Vec<usize> = concrete
                .shape()
                .iter()
                .map(|n| n.as_constant().expect("concrete shape") as usize)
                .collect();
            let Some((next_symbolic, next_concrete)) = apply_both(op, &symbolic, &concrete, &concrete_shape) else {
                continue;
            };
            symbolic = next_symbolic;
            concrete = next_concrete;
            let instantiated = symbolic.substitute(&mut |name| values(name));
            // The stride of a dimension of size 1 is never used: compare address maps.
            let canon = |l: &L| {
                let mut l = l.clone();
                for dim in &mut l.dims {
                    if dim.shape == c(1) {
                        dim.stride = c(0);
                    }
                }
                l
            };
            prop_assert_eq!(canon(&instantiated), canon(&concrete), "symbolic {}", symbolic);
        }
    }
}
