//! Hand-written host plans with tiny OpenCL kernels, shared by the library tests
//! (`runtime.rs`) and the binary tests (`runner.rs`).

#![allow(dead_code, reason = "each test binary uses some of the plans")]

use weft_plan::{
    Arg, BinOp, Elem, ErrorSite, Expr, Input, Kernel, KernelParam, Output, ParamKind, Plan, Step,
    Var,
};

/// `target/pocl-cache`, where POCL keeps built kernels between test runs.
pub(crate) fn pocl_cache_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("../pocl-cache")
}

/// Sets `POCL_CACHE_DIR` (unless set) before this process first uses OpenCL: POCL
/// reads it when it loads.
pub(crate) fn set_pocl_cache_dir() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("POCL_CACHE_DIR").is_none() {
            #[expect(
                unsafe_code,
                reason = "setting an environment variable is unsafe in edition 2024"
            )]
            // SAFETY: every test calls this before it uses OpenCL, and the other test
            // threads wait on `ONCE` meanwhile, so no thread reads the environment.
            unsafe {
                std::env::set_var("POCL_CACHE_DIR", pocl_cache_dir());
            }
        }
    });
}

const PRELUDE: &str = "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n";

fn v(n: u32) -> Expr {
    Expr::Var(Var(n))
}

fn i(n: i64) -> Expr {
    Expr::I64(n)
}

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::bin(op, a, b)
}

fn kernel(name: &str, params: &[(&str, ParamKind)]) -> Kernel {
    Kernel {
        name: name.to_owned(),
        params: params
            .iter()
            .map(|(name, kind)| KernelParam { name: (*name).to_owned(), kind: *kind })
            .collect(),
    }
}

fn plan(entry: &str, source: &str, kernels: Vec<Kernel>) -> Plan {
    Plan {
        entry: entry.to_owned(),
        source: format!("{PRELUDE}{source}"),
        kernels,
        inputs: Vec::new(),
        input_names: Vec::new(),
        n_vars: 16,
        steps: Vec::new(),
        outputs: Vec::new(),
        errors: Vec::new(),
    }
}

fn row(buf: u32, elem: Elem, len: Expr) -> Output {
    Output::Array { buf: Var(buf), elem, offset: i(0), strides: vec![i(1)], shape: vec![len] }
}

/// `maps (xs: [n]f32) (ys: [m]i64) (bs: [k]bool) = (map (*2+1) xs, map (^2) ys, map not bs)`,
/// the f32 map launched with a local size of 4 (so its global size is rounded up).
pub(crate) fn maps() -> Plan {
    let source = r"
__kernel void map_f32(__global long* weft_err, __global const float* xs, __global float* out, long n) {
  long i = get_global_id(0);
  if (i < n) { out[i] = xs[i] * 2.0f + 1.0f; }
}
__kernel void map_i64(__global long* weft_err, __global const long* ys, __global long* out, long n) {
  long i = get_global_id(0);
  if (i < n) { out[i] = ys[i] * ys[i]; }
}
__kernel void map_bool(__global long* weft_err, __global const uchar* bs, __global uchar* out, long n) {
  long i = get_global_id(0);
  if (i < n) { out[i] = !bs[i]; }
}
";
    let buffers = |elem| {
        [
            ("xs", ParamKind::Buffer(elem)),
            ("out", ParamKind::Buffer(elem)),
            ("n", ParamKind::Scalar(Elem::I64)),
        ]
    };
    let mut p = plan(
        "maps",
        source,
        vec![
            kernel("map_f32", &buffers(Elem::F32)),
            kernel("map_i64", &buffers(Elem::I64)),
            kernel("map_bool", &buffers(Elem::Bool)),
        ],
    );
    p.inputs = vec![
        Input::Array { buf: Var(0), elem: Elem::F32, dims: vec![Var(1)] },
        Input::Array { buf: Var(2), elem: Elem::I64, dims: vec![Var(3)] },
        Input::Array { buf: Var(4), elem: Elem::Bool, dims: vec![Var(5)] },
    ];
    let launch = |kernel, input, output, len| Step::Launch {
        kernel,
        global: vec![v(len)],
        local: (kernel == 0).then(|| vec![i(4)]),
        args: vec![
            Arg::Buffer(Var(input)),
            Arg::Buffer(Var(output)),
            Arg::Scalar { value: v(len), elem: Elem::I64 },
        ],
    };
    p.steps = vec![
        Step::Alloc { var: Var(6), elem: Elem::F32, len: v(1) },
        Step::Alloc { var: Var(7), elem: Elem::I64, len: v(3) },
        Step::Alloc { var: Var(8), elem: Elem::Bool, len: v(5) },
        launch(0, 0, 6, 1),
        launch(1, 2, 7, 3),
        launch(2, 4, 8, 5),
    ];
    p.outputs = vec![row(6, Elem::F32, v(1)), row(7, Elem::I64, v(3)), row(8, Elem::Bool, v(5))];
    p
}

/// `views (a: [n][m]i64)`: no kernel; returns `transpose a` (strides [1, m]), `a`
/// with its rows reversed (offset (n-1)·m, strides [-m, 1]), the element `a[0][1]`
/// as a rank-0 array, and `n * m` from the host.
pub(crate) fn views() -> Plan {
    let mut p = plan("views", "", Vec::new());
    p.source.clear();
    p.inputs = vec![Input::Array { buf: Var(0), elem: Elem::I64, dims: vec![Var(1), Var(2)] }];
    p.outputs = vec![
        Output::Array {
            buf: Var(0),
            elem: Elem::I64,
            offset: i(0),
            strides: vec![i(1), v(2)],
            shape: vec![v(2), v(1)],
        },
        Output::Array {
            buf: Var(0),
            elem: Elem::I64,
            offset: bin(BinOp::Mul, bin(BinOp::Sub, v(1), i(1)), v(2)),
            strides: vec![Expr::Neg(Box::new(v(2))), i(1)],
            shape: vec![v(1), v(2)],
        },
        Output::Array {
            buf: Var(0),
            elem: Elem::I64,
            offset: i(1),
            strides: vec![],
            shape: vec![],
        },
        Output::Host { value: bin(BinOp::Mul, v(1), v(2)), elem: Elem::I64 },
    ];
    p
}

/// `iterate (xs: [n]i64) (k: i64)`: adds 1 to every element `k` times, ping-ponging
/// between two buffers with `Alias` in a `For` loop; then doubles the whole array
/// in place while its first element is below 100 (a `While` whose condition `Read`s
/// the device).
pub(crate) fn iterate() -> Plan {
    let source = r"
__kernel void add_one(__global long* weft_err, __global const long* xs, __global long* out, long n) {
  long i = get_global_id(0);
  if (i < n) { out[i] = xs[i] + 1; }
}
__kernel void double_all(__global long* weft_err, __global long* xs, long n) {
  long i = get_global_id(0);
  if (i < n) { xs[i] = 2 * xs[i]; }
}
";
    let mut p = plan(
        "iterate",
        source,
        vec![
            kernel(
                "add_one",
                &[
                    ("xs", ParamKind::Buffer(Elem::I64)),
                    ("out", ParamKind::Buffer(Elem::I64)),
                    ("n", ParamKind::Scalar(Elem::I64)),
                ],
            ),
            kernel(
                "double_all",
                &[("xs", ParamKind::Buffer(Elem::I64)), ("n", ParamKind::Scalar(Elem::I64))],
            ),
        ],
    );
    p.inputs = vec![
        Input::Array { buf: Var(0), elem: Elem::I64, dims: vec![Var(1)] },
        Input::Scalar { var: Var(2), elem: Elem::I64 },
    ];
    let n = || Arg::Scalar { value: v(1), elem: Elem::I64 };
    p.steps = vec![
        Step::Alloc { var: Var(3), elem: Elem::I64, len: v(1) },
        Step::For {
            index: Var(4),
            bound: v(2),
            body: vec![
                Step::Launch {
                    kernel: 0,
                    global: vec![v(1)],
                    local: None,
                    args: vec![Arg::Buffer(Var(0)), Arg::Buffer(Var(3)), n()],
                },
                Step::Alias { var: Var(5), from: Var(0) },
                Step::Alias { var: Var(0), from: Var(3) },
                Step::Alias { var: Var(3), from: Var(5) },
            ],
        },
        Step::If {
            cond: bin(BinOp::Gt, v(1), i(0)),
            then_steps: vec![Step::While {
                cond_steps: vec![Step::Read {
                    var: Var(6),
                    buf: Var(0),
                    elem: Elem::I64,
                    index: i(0),
                }],
                cond: bin(BinOp::Lt, v(6), i(100)),
                body: vec![Step::Launch {
                    kernel: 1,
                    global: vec![v(1)],
                    local: None,
                    args: vec![Arg::Buffer(Var(0)), n()],
                }],
            }],
            else_steps: vec![],
        },
    ];
    p.outputs = vec![row(0, Elem::I64, v(1))];
    p
}

/// `gather (xs: [n]f32) (is: [k]i64) = map (\i -> xs[i]) is`, with the bounds check
/// in the kernel (error 1), and a host check that `k <= 2 * n` (error 2).
pub(crate) fn gather() -> Plan {
    let source = r"
__kernel void gather(__global long* weft_err, __global const float* xs, __global const long* is,
                     __global float* out, long n, long k) {
  long i = get_global_id(0);
  if (i < k) {
    long j = is[i];
    if (j < 0 || j >= n) {
      if (atom_cmpxchg(&weft_err[0], 0, 1) == 0) { weft_err[1] = j; weft_err[2] = n; }
    } else {
      out[i] = xs[j];
    }
  }
}
";
    let mut p = plan(
        "gather",
        source,
        vec![kernel(
            "gather",
            &[
                ("xs", ParamKind::Buffer(Elem::F32)),
                ("is", ParamKind::Buffer(Elem::I64)),
                ("out", ParamKind::Buffer(Elem::F32)),
                ("n", ParamKind::Scalar(Elem::I64)),
                ("k", ParamKind::Scalar(Elem::I64)),
            ],
        )],
    );
    p.inputs = vec![
        Input::Array { buf: Var(0), elem: Elem::F32, dims: vec![Var(1)] },
        Input::Array { buf: Var(2), elem: Elem::I64, dims: vec![Var(3)] },
    ];
    p.steps = vec![
        Step::Check {
            cond: bin(BinOp::Le, v(3), bin(BinOp::Mul, i(2), v(1))),
            error: 2,
            payload: vec![v(3), v(1)],
        },
        Step::Alloc { var: Var(4), elem: Elem::F32, len: v(3) },
        Step::Launch {
            kernel: 0,
            global: vec![v(3)],
            local: None,
            args: vec![
                Arg::Buffer(Var(0)),
                Arg::Buffer(Var(2)),
                Arg::Buffer(Var(4)),
                Arg::Scalar { value: v(1), elem: Elem::I64 },
                Arg::Scalar { value: v(3), elem: Elem::I64 },
            ],
        },
    ];
    p.outputs = vec![row(4, Elem::F32, v(3))];
    p.errors = vec![
        ErrorSite {
            message: "index {0} out of bounds for array of size {1}".to_owned(),
            position: Some("gather.weft:2:20".to_owned()),
        },
        ErrorSite {
            message: "size error: {0} indices for an array of {1} elements".to_owned(),
            position: Some("gather.weft:2:5".to_owned()),
        },
    ];
    p
}

/// A program that does not compile: an undeclared identifier on line 5 of the source.
pub(crate) fn broken() -> Plan {
    let source = r"
__kernel void broken(__global long* weft_err, __global float* xs) {
  long i = get_global_id(0);
  xs[i] = undeclared_thing;
}
";
    let mut p =
        plan("broken", source, vec![kernel("broken", &[("xs", ParamKind::Buffer(Elem::F32))])]);
    p.inputs = vec![Input::Array { buf: Var(0), elem: Elem::F32, dims: vec![Var(1)] }];
    p.steps = vec![Step::Launch {
        kernel: 0,
        global: vec![v(1)],
        local: None,
        args: vec![Arg::Buffer(Var(0))],
    }];
    p.outputs = vec![row(0, Elem::F32, v(1))];
    p
}

/// `sizes (n: i64)`: divides by `n` on the host when `n == 0`, else allocates `n`
/// `f64`s; returns `n`.
pub(crate) fn sizes() -> Plan {
    let mut p = plan("sizes", "", Vec::new());
    p.source.clear();
    p.inputs = vec![Input::Scalar { var: Var(0), elem: Elem::I64 }];
    p.steps = vec![Step::If {
        cond: bin(BinOp::Eq, v(0), i(0)),
        then_steps: vec![Step::Let { var: Var(1), value: bin(BinOp::Div, i(1), v(0)) }],
        else_steps: vec![Step::Alloc { var: Var(2), elem: Elem::F64, len: v(0) }],
    }];
    p.outputs = vec![Output::Host { value: v(0), elem: Elem::I64 }];
    p
}
