//! Differential testing of the two back ends: random well-typed programs (maps, zips,
//! scans, reductions, reversals, branches and integer arithmetic over two arrays and a
//! scalar), each run by the reference interpreter and by the compiled OpenCL on the
//! machine's CPU device (POCL), on random inputs; the results must be equal. Integer
//! only (every operation is exact and stays far from overflow, whose meaning differs
//! in OpenCL C), so any difference is a bug. Bounded: `WEFT_DIFF_PROGRAMS` programs
//! (default 12) from `WEFT_DIFF_SEED`; a failing program is printed whole.

#![expect(clippy::unwrap_used, reason = "the test fails loudly")]

use std::io::Write as _;
use std::process::Stdio;

mod common;

/// xorshift64*: deterministic randomness with no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Random programs: every scalar stays within (-1000, 1000) (arithmetic is taken
/// modulo 1000), every array holds such scalars, so sums of 64 of them cannot overflow.
struct Gen {
    rng: Rng,
    fresh: u32,
}

impl Gen {
    fn var(&mut self) -> String {
        self.fresh += 1;
        format!("v{}", self.fresh)
    }

    /// An `i32` expression over `vars`.
    fn scalar(&mut self, vars: &[String], depth: u32) -> String {
        let leaf = depth == 0 || self.rng.below(3) == 0;
        if leaf {
            return if self.rng.below(2) == 0 || vars.is_empty() {
                format!("{}i32", self.rng.below(10))
            } else {
                vars[self.rng.below(vars.len() as u64) as usize].clone()
            };
        }
        let a = self.scalar(vars, depth - 1);
        let b = self.scalar(vars, depth - 1);
        match self.rng.below(7) {
            0 => format!("(({a} + {b}) % 1000i32)"),
            1 => format!("(({a} - {b}) % 1000i32)"),
            2 => format!("(({a} * {b}) % 1000i32)"),
            3 => format!("(i32.max {a} {b})"),
            4 => format!("(i32.min {a} {b})"),
            5 => format!("({a} ^ {b})"),
            _ => {
                let c = self.scalar(vars, depth - 1);
                let d = self.scalar(vars, depth - 1);
                format!("(if {a} < {b} then {c} else {d})")
            }
        }
    }

    /// An `[n]i32` expression; `scalars` are in scope.
    fn array(&mut self, scalars: &[String], depth: u32) -> String {
        if depth == 0 || self.rng.below(4) == 0 {
            return if self.rng.below(2) == 0 { "xs".into() } else { "ys".into() };
        }
        match self.rng.below(5) {
            0 => {
                let v = self.var();
                let mut vars = scalars.to_vec();
                vars.push(v.clone());
                let body = self.scalar(&vars, 2);
                let inner = self.array(scalars, depth - 1);
                format!("(map (\\{v} -> {body}) {inner})")
            }
            1 => {
                let (a, b) = (self.var(), self.var());
                let mut vars = scalars.to_vec();
                vars.extend([a.clone(), b.clone()]);
                let body = self.scalar(&vars, 2);
                let left = self.array(scalars, depth - 1);
                let right = self.array(scalars, depth - 1);
                format!("(map2 (\\{a} {b} -> {body}) {left} {right})")
            }
            2 => {
                let inner = self.array(scalars, depth - 1);
                let v = self.var();
                format!("(map (\\{v} -> {v} % 1000i32) (scan (+) 0i32 {inner}))")
            }
            3 => format!("(reverse {})", self.array(scalars, depth - 1)),
            _ => {
                let total = self.array(scalars, depth - 1);
                let s = self.var();
                let mut vars = scalars.to_vec();
                vars.push(s.clone());
                let v = self.var();
                vars.push(v.clone());
                let body = self.scalar(&vars, 1);
                let inner = self.array(scalars, depth - 1);
                // A reduction used inside a map: its result is a host scalar.
                format!(
                    "(let {s} = reduce (+) 0i32 {total} % 1000i32 in map (\\{v} -> {body}) {inner})"
                )
            }
        }
    }

    fn program(&mut self) -> String {
        let scalars = vec!["k".to_owned()];
        if self.rng.below(2) == 0 {
            let body = self.array(&scalars, 3);
            format!("entry main (k: i32) (xs: [n]i32) (ys: [n]i32) : [n]i32 =\n  {body}\n")
        } else {
            let array = self.array(&scalars, 3);
            let s = self.var();
            let mut vars = scalars.clone();
            vars.push(s.clone());
            let body = self.scalar(&vars, 2);
            format!(
                "entry main (k: i32) (xs: [n]i32) (ys: [n]i32) : i32 =\n  let {s} = reduce (+) 0i32 {array} in {body}\n"
            )
        }
    }

    fn inputs(&mut self) -> String {
        let n = self.rng.below(64) + 1;
        let mut array = || {
            let items: Vec<String> =
                (0..n).map(|_| format!("{}i32", self.rng.below(1999) as i64 - 999)).collect();
            format!("[{}]", items.join(", "))
        };
        let (xs, ys) = (array(), array());
        format!("{}i32 {xs} {ys}", self.rng.below(19) as i64 - 9)
    }
}

fn run(file: &str, backend: &str, input: &str) -> (String, String, Option<i32>) {
    let mut child = common::weft_with_runner()
        .args(["run", "--backend", backend, "--device", "cpu", file])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code(),
    )
}

#[test]
fn random_programs_agree_on_both_backends() {
    let env = |name: &str, default: u64| {
        std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    };
    let n_programs = env("WEFT_DIFF_PROGRAMS", 12);
    let seed = env("WEFT_DIFF_SEED", 0x5eed_d1ff);
    let mut generator = Gen { rng: Rng(seed | 1), fresh: 0 };
    let dir = std::env::temp_dir().join(format!("weft-differential-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for idx in 0..n_programs {
        let program = generator.program();
        let input = generator.inputs();
        let file = dir.join(format!("p{idx}.weft"));
        std::fs::write(&file, &program).unwrap();
        let file = file.to_str().unwrap();
        let (want, interp_err, interp_code) = run(file, "interp", &input);
        assert_eq!(
            interp_code,
            Some(0),
            "interpreter failed:\n{program}\ninput: {input}\n{interp_err}"
        );
        let (got, cl_err, cl_code) = run(file, "opencl", &input);
        assert_eq!(cl_code, Some(0), "OpenCL failed:\n{program}\ninput: {input}\n{cl_err}");
        assert_eq!(got, want, "the back ends disagree on\n{program}\ninput: {input}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
