//! The digest's worked examples (002-cost-semantics.md §5) and numeric test vectors,
//! built with the graph combinators; and the greedy scheduler on hand-made DAGs.

use std::fmt::Write as _;

use expect_test::expect;
use weft_cost::graph::{Edge, EdgeKind, Graph, Resource, Sub, World, ceil_log2};
use weft_cost::profiler::box_time;
use weft_cost::schedule::{Policy, greedy};
use weft_cost::space::timeline;

// ---- E0: the toy cost semantics of the untyped lambda calculus (§5, E0) -----------

#[derive(Clone, Debug)]
enum Term {
    Var(&'static str),
    Lam(&'static str, Box<Term>),
    App(Box<Term>, Box<Term>),
}

fn lam(x: &'static str, body: Term) -> Term {
    Term::Lam(x, Box::new(body))
}

fn app(f: Term, a: Term) -> Term {
    Term::App(Box::new(f), Box::new(a))
}

/// A closure: the lambda and its environment.
#[derive(Clone, Debug)]
struct Closure {
    param: &'static str,
    body: Term,
    env: Vec<(&'static str, Closure)>,
}

fn show(t: &Term) -> String {
    match t {
        Term::Var(x) => (*x).to_owned(),
        Term::Lam(x, b) => format!("\\{x}.{}", show(b)),
        Term::App(f, a) => format!("({}) ({})", show(f), show(a)),
    }
}

/// Var: cost 1; Lam: cost 1 (a lambda is a value); App: c1 (+)0 c2 (+)0 c3 (no +1).
fn eval(g: &mut Graph, env: &[(&'static str, Closure)], t: &Term) -> (Closure, Sub) {
    match t {
        Term::Var(x) => {
            let v = env.iter().rev().find(|(n, _)| n == x).expect("bound").1.clone();
            (v, g.edge_graph(1, *x))
        }
        Term::Lam(x, b) => {
            (Closure { param: x, body: (**b).clone(), env: env.to_vec() }, g.edge_graph(1, show(t)))
        }
        Term::App(f, a) => {
            let (clo, c1) = eval(g, env, f);
            let (arg, c2) = eval(g, env, a);
            let mut inner = clo.env.clone();
            inner.push((clo.param, arg));
            let (v, c3) = eval(g, &inner, &clo.body);
            let c12 = g.seq(c1, 0, c2);
            (v, g.seq(c12, 0, c3))
        }
    }
}

#[test]
fn e0_toy_lambda_calculus_costs() {
    let programs = [
        lam("x", Term::Var("x")),
        app(lam("x", Term::Var("x")), lam("y", Term::Var("y"))),
        app(
            app(lam("x", lam("y", Term::Var("x"))), lam("a", Term::Var("a"))),
            lam("b", Term::Var("b")),
        ),
    ];
    let mut table = String::new();
    for p in &programs {
        let mut g = Graph::new();
        let (v, _) = eval(&mut g, &[], p);
        let value = show(&lam(v.param, v.body));
        let _ =
            writeln!(table, "{:<28} => {:<6} work {} span {}", show(p), value, g.work(), g.span());
    }
    expect![[r#"
        \x.x                         => \x.x   work 1 span 1
        (\x.x) (\y.y)                => \y.y   work 3 span 3
        ((\x.\y.x) (\a.a)) (\b.b)    => \a.a   work 5 span 5
    "#]]
    .assert_eq(&table);
    let mut g = Graph::new();
    eval(&mut g, &[], &programs[1]);
    expect![[r#"
        n0 -1-> n1
        n1 "\\x.x" -0-> n2
        n2 -1-> n3
        n3 "\\y.y" -0-> n4
        n4 -1-> n5
        n5 "x"
    "#]]
    .assert_eq(&g.describe());
}

// ---- E2: the element-wise product on the CPU (§5, E2) ------------------------------

/// One application `f e_i` of the reconstructed Fig. 10 chain, with its allocations
/// (`cells` per allocation; `header` adds the "+1" of `ap + |v| + 1`).
fn e2_chain(g: &mut Graph, with_closure: bool, header: u64) -> Sub {
    let mut s = g.single("");
    if with_closure {
        s = g.step(s, EdgeKind::Op, 1, "alloc closure");
        g.alloc(s.sink, "r0: closure", World::Host, 2 + header);
    }
    s = g.step(s, EdgeKind::Op, 1, "read closure");
    s = g.step(s, EdgeKind::Op, 1, "fst p");
    s = g.step(s, EdgeKind::Seq, 1, "");
    s = g.step(s, EdgeKind::Op, 1, "snd p");
    s = g.step(s, EdgeKind::Op, 1, "alloc product");
    g.alloc(s.sink, "r0: product", World::Host, 1 + header);
    s
}

/// The conventions of an E2 variant.
#[derive(Clone, Copy)]
struct Conventions {
    /// The trailing merge (dm) and result-vector allocation (da) edges of Parmap.
    merge_alloc: bool,
    /// Allocation headers and the result vector's spine in space.
    corrected_space: bool,
    /// The closure allocated once instead of per element (the footnote).
    hoisted_closure: bool,
}

fn e2_graph(n: u64, c: Conventions) -> Graph {
    let header = u64::from(c.corrected_space);
    let mut g = Graph::new();
    let chains: Vec<Sub> = (0..n).map(|_| e2_chain(&mut g, !c.hoisted_closure, header)).collect();
    let mut sub = g.par_tree(&chains);
    if c.hoisted_closure {
        let pre = g.edge_graph(1, "alloc closure once");
        g.alloc(pre.sink, "r0: closure", World::Host, 2 + header);
        sub = g.seq(pre, 0, sub);
    }
    if c.merge_alloc {
        // dm = 0 (the merge PCP, pitfall 4), da = 1.
        sub = g.step(sub, EdgeKind::Seq, 0, "merge");
        sub = g.step(sub, EdgeKind::Op, 1, "alloc result vector");
        if c.corrected_space {
            g.alloc(sub.sink, "r0: result vector", World::Host, n + 1);
        }
    }
    let _ = sub;
    g
}

fn e2_table(c: Conventions) -> String {
    let mut out = String::from("|     n        W   W/2      S  T_2 (greedy DF)  space\n");
    for n in [1u64, 2, 4, 8, 1024] {
        let g = e2_graph(n, c);
        let sched = greedy(&g, 2, Policy::DepthFirst);
        let space = timeline(&g, &sched);
        let _ = writeln!(
            out,
            "| {n:>5} {:>8} {:>5} {:>6} {:>16} {:>6}",
            g.work(),
            g.work() / 2,
            g.span(),
            sched.makespan,
            space.host.bytes
        );
    }
    out
}

#[test]
fn e2_paper_conventions() {
    // The paper's count: W = 10n - 4 (no dm/da), space 3n cells; the paper's time is
    // W/2 = 5n - 2, a lower bound (at n = 1 it is below the sequential 6).
    let c = Conventions { merge_alloc: false, corrected_space: false, hoisted_closure: false };
    for n in [1u64, 2, 3, 5, 8, 100] {
        let g = e2_graph(n, c);
        assert_eq!(g.work(), 10 * n - 4);
        assert_eq!(g.span(), 6 + 2 * ceil_log2(n));
        let sched = greedy(&g, 2, Policy::DepthFirst);
        assert_eq!(timeline(&g, &sched).host.bytes, 3 * n);
        assert!(sched.makespan >= (5 * n).saturating_sub(2).max(g.span()));
    }
    expect![[r#"
        |     n        W   W/2      S  T_2 (greedy DF)  space
        |     1        6     3      6                6      3
        |     2       16     8      8                8      6
        |     4       36    18     10               18     12
        |     8       76    38     12               38     24
        |  1024    10236  5118     26             5118   3072
    "#]]
    .assert_eq(&e2_table(c));
}

#[test]
fn e2_corrected_conventions() {
    // Corrected: Parmap's dm (= 0) and da (= 1) edges count, so W = 10n - 3 and
    // S = 7 + 2 ceil(log2 n); space counts the "+1" header of every allocation and the
    // result vector's spine (n cells + header): 3n + 2n + n + 1 = 6n + 1.
    let c = Conventions { merge_alloc: true, corrected_space: true, hoisted_closure: false };
    for n in [1u64, 2, 3, 5, 8, 100] {
        let g = e2_graph(n, c);
        assert_eq!(g.work(), 10 * n - 3);
        assert_eq!(g.span(), 7 + 2 * ceil_log2(n));
        let sched = greedy(&g, 2, Policy::DepthFirst);
        assert_eq!(timeline(&g, &sched).host.bytes, 6 * n + 1);
    }
    expect![[r#"
        |     n        W   W/2      S  T_2 (greedy DF)  space
        |     1        7     3      7                7      7
        |     2       17     8      9                9     13
        |     4       37    18     11               19     25
        |     8       77    38     13               39     49
        |  1024    10237  5118     27             5119   6145
    "#]]
    .assert_eq(&e2_table(c));
}

#[test]
fn e2_closure_allocated_once() {
    // The footnote: one closure up front; W = 5n + 1 + 4(n-1), space n + 2.
    let c = Conventions { merge_alloc: false, corrected_space: false, hoisted_closure: true };
    for n in [1u64, 2, 7, 64] {
        let g = e2_graph(n, c);
        assert_eq!(g.work(), 5 * n + 1 + 4 * (n - 1));
        let sched = greedy(&g, 2, Policy::DepthFirst);
        assert_eq!(timeline(&g, &sched).host.bytes, n + 2);
    }
}

#[test]
fn e3_device_box_rounds() {
    // n work-items of 5l + 1 each (global memory, l = 400): per-thread 2001. With
    // n = 2^20 and H = 2^18 the corrected rounds are ceil(n/H) = 4: time(D) = 8004.
    // The paper's literal rounds ceil((n/H)/k), k = n/(w*p), is 1 whenever H >= w*p.
    let (l, n, h, w, p) = (400u64, 1u64 << 20, 1u64 << 18, 32u64, 8u64);
    let per_item = 5 * l + 1;
    let k = n / (w * p);
    let literal_rounds = (n / h).div_ceil(k);
    assert_eq!(literal_rounds, 1);
    assert_eq!(per_item * literal_rounds, 2001);
    // The device graph: one n-ary fork/join over blocks of work-items (summaries).
    let mut d = Graph::new();
    let blocks: Vec<Sub> = (0..64)
        .map(|_| {
            let a = d.node("");
            let b = d.node("");
            let count = n / 64;
            d.add_edge(Edge {
                from: a,
                to: b,
                kind: EdgeKind::Summary { count },
                work: count * per_item,
                span: per_item,
                duration: count * per_item,
                resource: Resource::Cpu,
            });
            Sub { src: a, sink: b }
        })
        .collect();
    d.par_nary(&blocks, 0);
    assert_eq!(d.work(), n * per_item);
    assert_eq!(d.span(), per_item);
    assert_eq!(box_time(d.work(), d.span(), h, 0), 8004);
    // Below H items, time(D) is the per-thread cost.
    assert_eq!(box_time(1000 * per_item, per_item, h, 0), 2001);
}

// ---- Other numeric test vectors (§5) -----------------------------------------------

fn chain(g: &mut Graph, len: u64) -> Sub {
    let mut s = g.single("");
    for _ in 0..len {
        s = g.step(s, EdgeKind::Op, 1, "");
    }
    s
}

#[test]
fn parallel_pair_work_and_span() {
    // (e1 || e2) at r: (c1 (x) c2) (+)dm [u1] (+)da [u2];
    // W = W1 + W2 + 4 + dm + da, S = max(S1, S2) + 2 + dm + da.
    for (w1, w2, dm, da) in [(3, 5, 2, 1), (1, 1, 0, 1), (7, 2, 3, 4)] {
        let mut g = Graph::new();
        let c1 = chain(&mut g, w1);
        let c2 = chain(&mut g, w2);
        let p = g.par(c1, c2);
        let p = g.step(p, EdgeKind::Seq, dm, "merge");
        g.step(p, EdgeKind::Op, da, "alloc pair");
        assert_eq!(g.work(), w1 + w2 + 4 + dm + da);
        assert_eq!(g.span(), w1.max(w2) + 2 + dm + da);
    }
    let mut g = Graph::new();
    let c1 = chain(&mut g, 1);
    let c2 = chain(&mut g, 2);
    let p = g.par(c1, c2);
    g.step(p, EdgeKind::Op, 1, "alloc pair");
    expect![[r#"
        n0 -1-> n1
        n1 -1-> n6
        n2 -1-> n3
        n3 -1-> n4
        n4 -1-> n6
        n5 -1-> n0 -1-> n2
        n6 -1-> n7
        n7 "alloc pair"
    "#]]
    .assert_eq(&g.describe());
}

#[test]
fn letregion_space_rises_between_push_and_pop() {
    // [u1] -Delta_a(BSIZE)-> [u2: push] -1-> c -1-> [u3: pop], with Delta_a(64) = 7.
    let mut g = Graph::new();
    let u1 = g.single("u1");
    let u2 = g.step(u1, EdgeKind::Op, 7, "push r");
    let r = g.alloc(u2.sink, "r", World::Host, 64);
    let c = chain(&mut g, 3);
    let body = g.seq(u2, 1, c);
    let u3 = g.step(body, EdgeKind::Op, 1, "pop r");
    g.free(u3.sink, r);
    assert_eq!(g.work(), 7 + 1 + 3 + 1);
    let sched = greedy(&g, 1, Policy::DepthFirst);
    let t = timeline(&g, &sched);
    let points: Vec<(u64, u64)> = t.points.iter().map(|p| (p.time, p.host)).collect();
    assert_eq!(points, vec![(0, 0), (7, 64), (12, 0)]);
    assert_eq!((t.host.bytes, t.host.time), (64, 7));
}

// ---- The greedy scheduler ----------------------------------------------------------

/// A diamond: src -3-> a -1-> sink, src -1-> b -1-> sink.
fn diamond() -> Graph {
    let mut g = Graph::new();
    let a = g.edge_graph(3, "a");
    let b = g.edge_graph(1, "b");
    let p = g.par_weighted(a, b, [0, 0, 1, 1]);
    let _ = p;
    g
}

#[test]
fn greedy_schedule_on_a_diamond_is_exact() {
    let g = diamond();
    assert_eq!(g.work(), 6);
    assert_eq!(g.span(), 4);
    assert_eq!(greedy(&g, 1, Policy::DepthFirst).makespan, 6);
    assert_eq!(greedy(&g, 2, Policy::DepthFirst).makespan, 4);
    assert_eq!(greedy(&g, 8, Policy::BreadthFirst).makespan, 4);
}

#[test]
fn depth_first_and_breadth_first_orders_differ() {
    // Four unit leaves under a fork tree on one processor: depth-first runs a
    // leaf's whole branch first; both take W on one processor.
    let mut g = Graph::new();
    let leaves: Vec<Sub> = (0..4).map(|_| g.edge_graph(1, "leaf")).collect();
    g.par_tree(&leaves);
    let df = greedy(&g, 1, Policy::DepthFirst);
    let bf = greedy(&g, 1, Policy::BreadthFirst);
    assert_eq!(df.makespan, g.work());
    assert_eq!(bf.makespan, g.work());
    let leaf_times = |s: &weft_cost::schedule::Schedule| -> Vec<u64> {
        (0..g.nodes.len()).filter(|&v| g.nodes[v].label == "leaf").map(|v| s.node_time[v]).collect()
    };
    expect!["[3, 5, 10, 12] vs [7, 8, 9, 10]"].assert_eq(&format!(
        "{:?} vs {:?}",
        leaf_times(&df),
        leaf_times(&bf)
    ));
}

#[test]
fn device_and_bus_are_one_at_a_time() {
    // Two kernels of time 5 in parallel branches share the device; a transfer of 3 on
    // the bus overlaps with them.
    let mut g = Graph::new();
    let leaf = |g: &mut Graph, resource: Resource, d: u64| {
        let a = g.node("");
        let b = g.node("");
        g.add_edge(Edge {
            from: a,
            to: b,
            kind: EdgeKind::Op,
            work: d,
            span: d,
            duration: d,
            resource,
        });
        Sub { src: a, sink: b }
    };
    let k1 = leaf(&mut g, Resource::Gpu, 5);
    let k2 = leaf(&mut g, Resource::Gpu, 5);
    let t = leaf(&mut g, Resource::Bus, 3);
    let p = g.par_weighted(k1, k2, [0; 4]);
    g.par_weighted(p, t, [0; 4]);
    assert_eq!(g.span(), 5);
    assert_eq!(greedy(&g, 4, Policy::DepthFirst).makespan, 10);
}

/// A deterministic pseudo-random series-parallel graph with weights 0..=4.
fn random_sp(g: &mut Graph, seed: &mut u64, depth: u32) -> Sub {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let r = (*seed >> 33) % 10;
    if depth == 0 || r < 3 {
        return g.edge_graph(r % 5, "");
    }
    let a = random_sp(g, seed, depth - 1);
    let b = random_sp(g, seed, depth - 1);
    if r < 6 { g.seq(a, r % 2, b) } else { g.par(a, b) }
}

#[test]
fn greedy_time_is_within_brent_bounds() {
    let mut seed = 42;
    for case in 0..200 {
        let mut g = Graph::new();
        random_sp(&mut g, &mut seed, 8);
        let (w, s) = (g.work(), g.span());
        for p in [1u64, 2, 3, 4, 16] {
            for policy in [Policy::DepthFirst, Policy::BreadthFirst] {
                let t = greedy(&g, p as usize, policy).makespan;
                assert!(
                    t * p >= w && t >= s,
                    "case {case}: T_{p} = {t} below max(W/P, S), W {w} S {s}"
                );
                assert!(t * p <= w + s * p, "case {case}: T_{p} = {t} above W/P + S, W {w} S {s}");
                if p == 1 {
                    assert_eq!(t, w);
                }
            }
        }
    }
}
