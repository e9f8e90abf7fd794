//! OpenCL C 1.2 for Weft's kernels, and the host plan that runs them.
//!
//! [`compile_through_middle_end`] compiles an entry point through the middle end
//! (`weft-opt`, its memory from `weft-mem`, the code generator of `weft-lower`) and
//! prints its kernels as
//! one OpenCL program: a prelude of helpers (the error buffer's first-writer-wins
//! failure, integer division and powers with Weft's semantics, float atomic additions
//! when a kernel needs them), then one `__kernel`
//! per kernel, with parameters named after the source, `const` on buffers the kernel
//! only reads, and a comment with the source position on each loop.
//! [`print_program_with_origins`] and [`print_kernel_with_origins`] also give each
//! printed line the source expression it computes (from the imperative IR's
//! `var_origins` and `ptr_origins`), for the editor's kernel view to link lines of
//! generated code and of source both ways.

use rustc_hash::FxHashSet as HashSet;
use std::fmt::Write;

use weft_core::{FnId, Origin, Program};
use weft_lower::aspace::{Instance, PtrSpaces, Resolved, Space, Spaces, Target};
use weft_lower::{
    AtomicOp, CExpr, Cmd, FParam, FuncImp, KernelImp, LowerError, Options, ParLevel, Part,
    c_mem_type, c_type,
};
use weft_plan::{Elem, Kernel, KernelParam, ParamKind, Plan};

/// A compiled entry point: its host plan (with the OpenCL source), the kernels and the
/// functions generated from user defs in the imperative IR they were printed from, and
/// every pointer's inferred address space.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub plan: Plan,
    pub kernels: Vec<KernelImp>,
    pub functions: Vec<FuncImp>,
    pub spaces: Spaces,
    /// The plan's memory regions, worlds, lifetimes and transfers.
    pub regions: weft_lower::regions::Regions,
    /// Static costs of the kernels and launches (`weft_lower::cost`).
    pub costs: weft_cost::model::EntryCost,
}

/// The shape of a device from its profile: what the middle end's thresholds depend on
/// (without a profile, they take their device-independent defaults).
pub fn device_shape(profile: &weft_cost::profile::DeviceProfile) -> weft_opt::DeviceShape {
    weft_opt::DeviceShape {
        gpu: profile.device.kind == "gpu",
        compute_units: i64::from(profile.device.compute_units),
        simd_width: i64::try_from(profile.device.simd_width).unwrap_or(1),
        local_memory: i64::try_from(profile.device.local_mem_bytes).unwrap_or(i64::MAX),
    }
}

/// Compiles one entry point through the middle end for an unknown GPU (each version's
/// threshold at its device-independent default).
pub fn compile_entry(
    program: &Program,
    entry: FnId,
    position: &dyn Fn(&Origin) -> Option<String>,
    options: Options,
) -> Result<Compiled, LowerError> {
    let settings = weft_opt::Settings::default();
    let code = std::sync::Arc::new(GpuCode::new(program, settings.target()));
    compile_through_middle_end(
        &settings,
        &|| std::sync::Arc::clone(&code),
        entry,
        position,
        options,
    )
}

/// Compiles one entry point of the GPU IR with its memory (`weft_lower::lower_gpu_entry`).
pub fn compile_gpu_entry(
    program: &weft_opt::GpuProgram,
    mem: &weft_mem::GpuMemProgram,
    threshold: &dyn Fn(weft_opt::ThresholdId) -> i64,
    entry: FnId,
    position: &dyn Fn(&Origin) -> Option<String>,
    options: Options,
) -> Result<Compiled, LowerError> {
    compile_lowered(weft_lower::lower_gpu_entry(program, mem, threshold, entry, position, options)?)
}

/// The middle end's GPU IR of a program with every call inlined
/// (`weft_opt::pipeline_inlined`) and its memory (`weft_mem::annotate_gpu`): the input
/// of the code generator from the GPU IR.
#[derive(Debug, Clone)]
pub struct GpuCode {
    pub gpu: weft_opt::GpuProgram,
    pub mem: weft_mem::GpuMemProgram,
}

impl GpuCode {
    /// `program` through the middle end for `target`, with its memory.
    pub fn new(program: &Program, target: weft_opt::Target) -> GpuCode {
        let gpu = weft_opt::pipeline_inlined(program, target);
        let mem_target = match target {
            weft_opt::Target::Gpu => weft_mem::Target::Gpu,
            weft_opt::Target::Cpu => weft_mem::Target::Cpu,
        };
        let mem = weft_mem::annotate_gpu(&gpu, mem_target);
        GpuCode { gpu, mem }
    }
}

/// Compiles `entry` through the middle end with `settings` (the device's shape and the
/// tuning's thresholds): the GPU IR and its memory from `gpu_code`, made only when
/// used (callers keep it across the entries of one program), translated by
/// `weft_lower::lower_gpu_entry`. One function compiles for the command line and the
/// editor alike, so the editor shows the code that runs.
pub fn compile_through_middle_end(
    settings: &weft_opt::Settings,
    gpu_code: &dyn Fn() -> std::sync::Arc<GpuCode>,
    entry: FnId,
    position: &dyn Fn(&Origin) -> Option<String>,
    options: Options,
) -> Result<Compiled, LowerError> {
    let code = gpu_code();
    let threshold = |t: weft_opt::ThresholdId| settings.value(&code.gpu.thresholds[t]);
    compile_gpu_entry(&code.gpu, &code.mem, &threshold, entry, position, options)
}

/// Whether [`compile_through_middle_end`] compiles `entry`, without the analyses and
/// the OpenCL text it makes (`weft_lower::check_gpu_entry`): the same translation, so
/// the same error.
pub fn check_through_middle_end(
    settings: &weft_opt::Settings,
    gpu_code: &dyn Fn() -> std::sync::Arc<GpuCode>,
    entry: FnId,
    options: Options,
) -> Result<(), LowerError> {
    let code = gpu_code();
    let threshold = |t: weft_opt::ThresholdId| settings.value(&code.gpu.thresholds[t]);
    weft_lower::check_gpu_entry(&code.gpu, &code.mem, &threshold, entry, options)
}

/// The OpenCL program and plan of a lowered entry.
fn compile_lowered(lowered: weft_lower::Lowered) -> Result<Compiled, LowerError> {
    if let Some(d) = lowered.spaces.diagnostics.first() {
        // The lowering only emits programs the inference accepts; a rejection here is
        // a compiler bug, reported with the inference's reasons.
        return Err(LowerError {
            message: format!(
                "internal compiler error: address-space inference rejected the generated code: {} ({})",
                d.message,
                d.chain.join("; ")
            ),
            origin: None,
            unsupported: false,
        });
    }
    let source = print_program(&lowered.kernels, &lowered.functions, &lowered.spaces);
    let kernels = lowered
        .kernels
        .iter()
        .map(|k| Kernel {
            name: k.name.clone(),
            params: k
                .params
                .iter()
                .map(|(name, kind)| KernelParam { name: name.clone(), kind: *kind })
                .collect(),
        })
        .collect();
    let plan = Plan {
        entry: lowered.entry,
        source,
        kernels,
        inputs: lowered.inputs,
        input_names: lowered.input_names,
        n_vars: lowered.n_vars,
        steps: lowered.steps,
        outputs: lowered.outputs,
        errors: lowered.errors,
    };
    Ok(Compiled {
        plan,
        kernels: lowered.kernels,
        functions: lowered.functions,
        spaces: lowered.spaces,
        regions: lowered.regions,
        costs: lowered.costs,
    })
}

/// The first line of a program for OpenCL C 2.0: `weft-runner` builds programs that
/// start with it with `-cl-std=CL2.0` (generic address space), others with 1.2.
pub const OPENCL_20_MARKER: &str = "// Generated by the Weft compiler for OpenCL C 2.0.";

const PRELUDE: &str = r"#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

// Records run-time error `code` with its payload; the first failing work-item wins.
void weft_fail(__global long* weft_err, long code, long a, long b) {
  if (atom_cmpxchg(&weft_err[0], 0L, code) == 0L) {
    weft_err[1] = a;
    weft_err[2] = b;
  }
}
";

/// `f16` conversions, in programs that have `f16` values.
const HALF_HELPERS: &str = r"
// `f16` (docs/backend.md, section Small scalar types): stored as its 16 bits in a `ushort`,
// computed in `float`, each result rounded to the nearest `f16` (halves to even).
// `vload_half` and `vstore_half_rte` need no `cl_khr_fp16`.
float weft_h2f(ushort h) {
  return vload_half(0, (const __private half*)&h);
}

ushort weft_f2h(float x) {
  ushort h;
  vstore_half_rte(x, 0, (__private half*)&h);
  return h;
}

float weft_round_h(float x) {
  return weft_h2f(weft_f2h(x));
}

float weft_d2h_round(double x) {
  ushort h;
  vstore_half_rte(x, 0, (__private half*)&h);
  return weft_h2f(h);
}
";

/// Whether printed code uses the `f16` helpers.
fn uses_halves(code: &str) -> bool {
    ["weft_h2f(", "weft_f2h(", "weft_round_h(", "weft_d2h_round("].iter().any(|f| code.contains(f))
}

/// Atomic float additions, in programs that have them (`reduce_by_index` with `+` on
/// floats): OpenCL 1.2 has no float atomics, so a compare-and-swap loop on the bits
/// retries until no other work-item wrote in between; one helper per element type and
/// address space (a work-group's sub-histogram of float bins is in local memory).
fn float_atomics() -> String {
    let helper = |name: &str, space: &str, float: &str, bits: &str, cmpxchg: &str| {
        format!(
            "void {name}(volatile {space} {float}* p, {float} v) {{
  volatile {space} {bits}* bits = (volatile {space} {bits}*)p;
  {bits} seen, old = *bits;
  do {{
    seen = old;
    old = {cmpxchg}(bits, seen, as_{bits}(as_{float}(seen) + v));
  }} while (old != seen);
}}
"
        )
    };
    [
        "\n// Atomic float additions (`reduce_by_index` with `+`): compare-and-swap loops.\n"
            .to_owned(),
        helper("weft_atomic_add_float", "__global", "float", "uint", "atomic_cmpxchg"),
        helper("weft_atomic_add_float_local", "__local", "float", "uint", "atomic_cmpxchg"),
        helper("weft_atomic_add_double", "__global", "double", "ulong", "atom_cmpxchg"),
    ]
    .join("\n")
}

fn adds_floats_atomically(cmds: &[Cmd]) -> bool {
    cmds.iter().any(|cmd| {
        matches!(cmd, Cmd::Atomic { elem: Elem::F32 | Elem::F64, .. })
            || cmd.parts().into_iter().any(|part| match part {
                Part::Body(body) => adds_floats_atomically(body),
                Part::Expr(_) => false,
            })
    })
}

/// Integer division, remainder and power with Weft's semantics: division by zero
/// fails, `MIN / -1` wraps, negative exponents give 0. Those of the 8- and 16-bit types
/// only where `code` calls them.
fn int_helpers(out: &mut String, code: &str) {
    for (t, u, signed) in [
        ("char", "uchar", true),
        ("short", "ushort", true),
        ("uchar", "uchar", false),
        ("ushort", "ushort", false),
        ("int", "uint", true),
        ("long", "ulong", true),
        ("uint", "uint", false),
        ("ulong", "ulong", false),
    ] {
        let small = matches!(t, "char" | "short" | "uchar" | "ushort");
        if small
            && !["weft_div_", "weft_rem_", "weft_pow_"]
                .iter()
                .any(|f| code.contains(&format!("{f}{t}(")))
        {
            continue;
        }
        let wrap_neg = if signed {
            format!("if (b == -1) return ({t})(({u})0 - ({u})a);\n  ")
        } else {
            String::new()
        };
        let rem_neg = if signed { "if (b == -1) return 0;\n  ".to_owned() } else { String::new() };
        let neg_exp = if signed { "if (b < 0) return 0;\n  ".to_owned() } else { String::new() };
        let _ = write!(
            out,
            "\n{t} weft_div_{t}(__global long* weft_err, long code, {t} a, {t} b) {{\n  if (b == 0) {{ weft_fail(weft_err, code, 0, 0); return 0; }}\n  {wrap_neg}return a / b;\n}}\n\
             {t} weft_rem_{t}(__global long* weft_err, long code, {t} a, {t} b) {{\n  if (b == 0) {{ weft_fail(weft_err, code, 0, 0); return 0; }}\n  {rem_neg}return a % b;\n}}\n\
             {t} weft_pow_{t}({t} a, {t} b) {{\n  {neg_exp}{u} r = 1, x = ({u})a, e = ({u})b;\n  while (e != 0) {{ if (e & 1) r *= x; x *= x; e >>= 1; }}\n  return ({t})r;\n}}\n"
        );
    }
}

/// The whole OpenCL program: the prelude, every function clone (callees first), then
/// the kernels.
pub fn print_program(kernels: &[KernelImp], functions: &[FuncImp], spaces: &Spaces) -> String {
    program_lines(kernels, functions, spaces).text
}

/// Printed OpenCL C and, for each of its lines, the source expression that line
/// computes (`None` for the prelude, signatures, braces and comments): what links a
/// kernel view's lines to the source (Compiler Explorer's colours).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printed {
    pub text: String,
    /// One entry per line of `text`.
    pub origins: Vec<Option<Origin>>,
}

/// [`print_program`] of a compiled entry (its `plan.source`), with each line's origin.
pub fn print_program_with_origins(compiled: &Compiled) -> Printed {
    let out = program_lines(&compiled.kernels, &compiled.functions, &compiled.spaces);
    Printed { text: out.text, origins: out.lines.into_iter().map(|o| o.cloned()).collect() }
}

fn program_lines<'a>(
    kernels: &'a [KernelImp],
    functions: &'a [FuncImp],
    spaces: &'a Spaces,
) -> Out<'a> {
    let mut out = Out::default();
    out.text_lines(match spaces.target {
        Target::OpenCl12 => "// Generated by the Weft compiler for OpenCL C 1.2.",
        Target::OpenCl20 => OPENCL_20_MARKER,
    });
    let mut code = Out::default();
    let default = PtrSpaces::default();
    for inst in &spaces.instances {
        code.text_lines("");
        print_instance(&mut code, &functions[inst.func as usize], inst);
    }
    for (i, k) in kernels.iter().enumerate() {
        code.text_lines("");
        print_kernel_spaces(&mut code, k, spaces.kernels.get(i).unwrap_or(&default));
    }
    let mut helpers = PRELUDE.to_owned();
    if uses_halves(&code.text) {
        helpers.push_str(HALF_HELPERS);
    }
    if kernels.iter().any(|k| adds_floats_atomically(&k.body)) {
        helpers.push_str(&float_atomics());
    }
    int_helpers(&mut helpers, &code.text);
    out.text_lines(helpers.strip_suffix('\n').unwrap_or(&helpers));
    out.append(code);
    out
}

/// Kernel `index` of a compiled entry as OpenCL C, preceded by the function clones it
/// calls (directly or not): what "Show generated kernel" displays.
pub fn print_kernel(compiled: &Compiled, index: usize) -> String {
    print_kernel_with_origins(compiled, index).text
}

/// [`print_kernel`], with each line's origin (as [`print_program_with_origins`]).
pub fn print_kernel_with_origins(compiled: &Compiled, index: usize) -> Printed {
    let Some(kernel) = compiled.kernels.get(index) else {
        return Printed { text: String::new(), origins: Vec::new() };
    };
    let default = PtrSpaces::default();
    let ptrs = compiled.spaces.kernels.get(index).unwrap_or(&default);
    // The clones reachable from the kernel's call sites.
    let mut wanted: HashSet<String> = ptrs.calls.values().cloned().collect();
    loop {
        let before = wanted.len();
        for inst in &compiled.spaces.instances {
            if wanted.contains(&inst.name) {
                wanted.extend(inst.ptrs.calls.values().cloned());
            }
        }
        if wanted.len() == before {
            break;
        }
    }
    let mut out = Out::default();
    for inst in &compiled.spaces.instances {
        if wanted.contains(&inst.name) {
            print_instance(&mut out, &compiled.functions[inst.func as usize], inst);
            out.text_lines("");
        }
    }
    print_kernel_spaces(&mut out, kernel, ptrs);
    Printed { text: out.text, origins: out.lines.into_iter().map(|o| o.cloned()).collect() }
}

/// Printed lines, each with the source expression it computes.
#[derive(Default)]
struct Out<'a> {
    text: String,
    lines: Vec<Option<&'a Origin>>,
}

impl<'a> Out<'a> {
    /// `text` as lines (a newline added) computing `origin`.
    fn line(&mut self, origin: Option<&'a Origin>, text: &str) {
        self.text.push_str(text);
        self.text.push('\n');
        let n = text.matches('\n').count() + 1;
        self.lines.extend(std::iter::repeat_n(origin, n));
    }

    /// Lines computing nothing of the source.
    fn text_lines(&mut self, text: &str) {
        self.line(None, text);
    }

    fn append(&mut self, other: Out<'a>) {
        self.text.push_str(&other.text);
        self.lines.extend(other.lines);
    }
}

/// Which source expression each variable and pointer of a kernel or function computes.
struct Origins<'a> {
    vars: rustc_hash::FxHashMap<&'a str, &'a Origin>,
    ptrs: rustc_hash::FxHashMap<&'a str, &'a Origin>,
}

impl<'a> Origins<'a> {
    fn new(vars: &'a [(String, Origin)], ptrs: &'a [(String, Origin)]) -> Origins<'a> {
        let first = |list: &'a [(String, Origin)]| {
            let mut map = rustc_hash::FxHashMap::default();
            for (name, origin) in list {
                map.entry(name.as_str()).or_insert(origin);
            }
            map
        };
        Origins { vars: first(vars), ptrs: first(ptrs) }
    }

    /// The origin of the first variable `e` reads that has one.
    fn of_expr(&self, e: &CExpr) -> Option<&'a Origin> {
        let mut found = None;
        e.visit_vars(&mut |name| {
            if found.is_none() {
                found = self.vars.get(name).copied();
            }
        });
        found
    }

    /// What a command's own lines compute: the variable it introduces or assigns, the
    /// array it stores into, else what its expressions read.
    fn of_cmd(&self, cmd: &Cmd) -> Option<&'a Origin> {
        let var = |name: &str| self.vars.get(name).copied();
        match cmd {
            Cmd::Decl { name, init, .. } => {
                var(name).or_else(|| init.as_ref().and_then(|e| self.of_expr(e)))
            }
            Cmd::Assign { name, value } => var(name).or_else(|| self.of_expr(value)),
            Cmd::Array { name, .. } => self.ptrs.get(&**name).copied().or_else(|| var(name)),
            Cmd::Store { ptr, index, value } => self
                .ptrs
                .get(&**ptr)
                .copied()
                .or_else(|| self.of_expr(value))
                .or_else(|| self.of_expr(index)),
            Cmd::Atomic { ptr, value, fetch, .. } => self
                .ptrs
                .get(&**ptr)
                .copied()
                .or_else(|| fetch.as_deref().and_then(var))
                .or_else(|| self.of_expr(value)),
            Cmd::If { cond, .. } | Cmd::While { cond, .. } => self.of_expr(cond),
            Cmd::For { var: v, .. } | Cmd::ParFor { var: v, .. } => var(v),
            Cmd::Return(value) => self.of_expr(value),
            Cmd::VectorLoad { lanes, load, .. } => {
                lanes.first().and_then(|l| var(l)).or_else(|| self.of_expr(load))
            }
            Cmd::Fail { a, b, .. } => self.of_expr(a).or_else(|| self.of_expr(b)),
            Cmd::Barrier | Cmd::Exit | Cmd::Unroll | Cmd::Comment(_) => None,
        }
    }
}

/// The C qualifier of an inferred space (a generic pointer has none: OpenCL 2.0).
fn qualifier(r: Option<&Resolved>) -> &'static str {
    match r {
        Some(Resolved::Space(Space::Global)) => "__global ",
        Some(Resolved::Space(Space::Local)) => "__local ",
        Some(Resolved::Space(Space::Private)) => "__private ",
        Some(Resolved::Space(Space::Constant)) => "__constant ",
        Some(Resolved::Generic(_)) | None => "",
    }
}

/// One clone of a generated function.
fn print_instance<'a>(out: &mut Out<'a>, func: &'a FuncImp, inst: &Instance) {
    let mut stores = HashSet::default();
    written(&func.body, &mut stores);
    let mut halves = HashSet::default();
    half_arrays(&func.body, &mut halves);
    out.text_lines(&format!("// {}", func.doc));
    let mut params = vec!["__global long* weft_err".to_owned()];
    for p in &func.params {
        params.push(match p {
            FParam::Ptr { name, elem, .. } => {
                if *elem == Elem::F16 {
                    halves.insert(name.to_string());
                }
                let space = inst.ptrs.spaces.get(name);
                let constness = if stores.contains(name)
                    || matches!(space, Some(Resolved::Space(Space::Constant)))
                {
                    ""
                } else {
                    "const "
                };
                format!("{}{constness}{}* {name}", qualifier(space), c_mem_type(*elem))
            }
            FParam::Scalar { name, elem } => format!("{} {name}", c_type(*elem)),
        });
    }
    out.text_lines(&format!(
        "{} {}(\n    {}) {{",
        c_type(func.ret),
        inst.name,
        params.join(",\n    ")
    ));
    let origins = Origins::new(&func.var_origins, &[]);
    let ctx = Ctx { ptrs: &inst.ptrs, halves: &halves, origins: &origins };
    cmds(out, &func.body, 1, None, &ctx);
    out.text_lines("}");
}

/// The names of the arrays (`Cmd::Array`) of `f16` elements declared in `cmds`.
fn half_arrays(cmds: &[Cmd], out: &mut HashSet<String>) {
    for cmd in cmds {
        if let Cmd::Array { name, elem: Elem::F16, .. } = cmd {
            out.insert(name.to_string());
        }
        for part in cmd.parts() {
            if let Part::Body(body) = part {
                half_arrays(body, out);
            }
        }
    }
}

fn written(cmds: &[Cmd], out: &mut HashSet<String>) {
    for cmd in cmds {
        if let Cmd::Store { ptr, .. } | Cmd::Atomic { ptr, .. } = cmd {
            out.insert(ptr.to_string());
        }
        for part in cmd.parts() {
            if let Part::Body(body) = part {
                written(body, out);
            }
        }
    }
}

/// One kernel as OpenCL C, with the qualifiers the inference gave its pointers.
fn print_kernel_spaces<'a>(out: &mut Out<'a>, k: &'a KernelImp, ptrs: &PtrSpaces) {
    let mut stores = HashSet::default();
    written(&k.body, &mut stores);
    let mut halves = HashSet::default();
    half_arrays(&k.body, &mut halves);
    for (name, kind) in &k.params {
        if let ParamKind::Buffer(Elem::F16) | ParamKind::Local(Elem::F16) = kind {
            halves.insert(name.clone());
        }
    }
    out.text_lines(&format!("// {}", k.doc));
    let mut params = vec!["__global long* weft_err".to_owned()];
    for (name, kind) in &k.params {
        params.push(match kind {
            ParamKind::Buffer(elem) => {
                let space = ptrs.spaces.get(name);
                let constness = if stores.contains(name)
                    || matches!(space, Some(Resolved::Space(Space::Constant)))
                {
                    ""
                } else {
                    "const "
                };
                format!("{}{constness}{}* restrict {name}", qualifier(space), c_mem_type(*elem))
            }
            ParamKind::Scalar(elem) => format!("{} {name}", c_type(*elem)),
            ParamKind::Local(elem) => {
                format!("{}{}* {name}", qualifier(ptrs.spaces.get(name)), c_mem_type(*elem))
            }
        });
    }
    out.text_lines(&format!("__kernel void {}(\n    {}) {{", k.name, params.join(",\n    ")));
    let origins = Origins::new(&k.var_origins, &k.ptr_origins);
    // A line that computes nothing of its own computes the kernel's first expression.
    let main = k.origins.first().map(|(origin, _)| origin);
    cmds(out, &k.body, 1, main, &Ctx { ptrs, halves: &halves, origins: &origins });
    out.text_lines("}");
}

/// What printing a kernel's or a function's commands needs: its pointers' spaces and
/// which of its arrays hold `f16` (read and written through `weft_h2f`/`weft_f2h`).
struct Ctx<'c, 'a> {
    ptrs: &'c PtrSpaces,
    halves: &'c HashSet<String>,
    origins: &'c Origins<'a>,
}

/// Prints `list` at `depth`; a line whose command computes nothing of its own (a
/// barrier, a failure's exit) computes what the enclosing command does (`within`).
fn cmds<'a>(
    out: &mut Out<'a>,
    list: &[Cmd],
    depth: usize,
    within: Option<&'a Origin>,
    ctx: &Ctx<'_, 'a>,
) {
    let ptrs = ctx.ptrs;
    let pad = "  ".repeat(depth);
    for cmd in list {
        let at = ctx.origins.of_cmd(cmd).or(within);
        let mut line = |text: String| out.line(at, &text);
        match cmd {
            Cmd::Decl { name, elem, init } => match init {
                Some(init) => {
                    let init = calls(init, ctx);
                    line(format!("{pad}{} {name} = {init};", c_type(*elem)));
                }
                None => line(format!("{pad}{} {name};", c_type(*elem))),
            },
            Cmd::Array { name, elem, len, .. } => {
                let q = qualifier(ptrs.spaces.get(&**name));
                line(format!("{pad}{q}{} {name}[{len}];", c_mem_type(*elem)));
            }
            Cmd::Assign { name, value } => {
                let value = calls(value, ctx);
                line(format!("{pad}{name} = {value};"));
            }
            Cmd::Store { ptr, index, value } => {
                let (index, value) = (calls(index, ctx), calls(value, ctx));
                if ctx.halves.contains(&**ptr) {
                    line(format!("{pad}{ptr}[{index}] = weft_f2h({value});"));
                } else {
                    line(format!("{pad}{ptr}[{index}] = {value};"));
                }
            }
            Cmd::Atomic { op, elem, ptr, index, value, fetch } => {
                let (index, value) = (calls(index, ctx), calls(value, ctx));
                let local = ctx.ptrs.spaces.get(&**ptr) == Some(&Resolved::Space(Space::Local));
                let func = match (op, elem) {
                    (AtomicOp::Add, Elem::F32) if local => "weft_atomic_add_float_local",
                    (AtomicOp::Add, Elem::F32) => "weft_atomic_add_float",
                    (AtomicOp::Add, Elem::F64) => "weft_atomic_add_double",
                    (AtomicOp::Add, Elem::I64 | Elem::U64) => "atom_add",
                    (AtomicOp::Add, _) => "atomic_add",
                    (AtomicOp::Min, _) => "atomic_min",
                    (AtomicOp::Max, _) => "atomic_max",
                    (AtomicOp::Exchange, Elem::I64 | Elem::U64) => "atom_xchg",
                    (AtomicOp::Exchange, _) => "atomic_xchg",
                };
                let fetch = fetch.as_ref().map(|f| format!("{f} = ")).unwrap_or_default();
                line(format!("{pad}{fetch}{func}(&{ptr}[{index}], {value});"));
            }
            Cmd::If { cond, then_cmds, else_cmds } => {
                let cond = calls(cond, ctx);
                out.line(at, &format!("{pad}if ({cond}) {{"));
                cmds(out, then_cmds, depth + 1, at, ctx);
                if else_cmds.is_empty() {
                    out.text_lines(&format!("{pad}}}"));
                } else {
                    out.line(at, &format!("{pad}}} else {{"));
                    cmds(out, else_cmds, depth + 1, at, ctx);
                    out.text_lines(&format!("{pad}}}"));
                }
            }
            Cmd::For { var, bound, body, comment } => {
                let bound = calls(bound, ctx);
                let comment = comment.as_ref().map(|c| format!(" // {c}")).unwrap_or_default();
                out.line(
                    at,
                    &format!("{pad}for (long {var} = 0; {var} < {bound}; {var}++) {{{comment}"),
                );
                cmds(out, body, depth + 1, at, ctx);
                out.text_lines(&format!("{pad}}}"));
            }
            Cmd::ParFor { level: ParLevel::GridCovered(d), var, bound, body, comment } => {
                let bound = calls(bound, ctx);
                let comment = comment.as_ref().map(|c| format!(" // {c}")).unwrap_or_default();
                out.line(at, &format!("{pad}{{{comment}"));
                out.line(at, &format!("{pad}  long {var} = get_global_id({d});"));
                out.line(at, &format!("{pad}  if ({var} < {bound}) {{"));
                cmds(out, body, depth + 2, at, ctx);
                out.text_lines(&format!("{pad}  }}"));
                out.text_lines(&format!("{pad}}}"));
            }
            Cmd::ParFor { level, var, bound, body, comment } => {
                let bound = calls(bound, ctx);
                let (id, size) = match level {
                    ParLevel::Grid(d) | ParLevel::GridCovered(d) => {
                        (format!("get_global_id({d})"), format!("get_global_size({d})"))
                    }
                    ParLevel::Group => {
                        ("get_group_id(0)".to_owned(), "get_num_groups(0)".to_owned())
                    }
                    ParLevel::Thread => {
                        ("get_local_id(0)".to_owned(), "get_local_size(0)".to_owned())
                    }
                };
                let comment = comment.as_ref().map(|c| format!(" // {c}")).unwrap_or_default();
                out.line(
                    at,
                    &format!(
                        "{pad}for (long {var} = {id}; {var} < {bound}; {var} += {size}) {{{comment}"
                    ),
                );
                cmds(out, body, depth + 1, at, ctx);
                out.text_lines(&format!("{pad}}}"));
            }
            Cmd::While { cond_cmds, cond, body } => {
                out.line(at, &format!("{pad}while (1) {{"));
                cmds(out, cond_cmds, depth + 1, at, ctx);
                let cond = calls(cond, ctx);
                out.line(at, &format!("{pad}  if (!({cond})) break;"));
                cmds(out, body, depth + 1, at, ctx);
                out.text_lines(&format!("{pad}}}"));
            }
            Cmd::Barrier => line(format!("{pad}barrier(CLK_LOCAL_MEM_FENCE);")),
            Cmd::Fail { code, a, b } => {
                let (a, b) = (calls(a, ctx), calls(b, ctx));
                line(format!("{pad}weft_fail(weft_err, {code}, (long)({a}), (long)({b}));"));
            }
            Cmd::Return(value) => line(format!("{pad}return {};", calls(value, ctx))),
            Cmd::Comment(text) => out.text_lines(&format!("{pad}// {text}")),
            Cmd::Exit => line(format!("{pad}return;")),
            Cmd::Unroll => out.text_lines(&format!("{pad}#pragma unroll")),
            Cmd::VectorLoad { lanes, elem, load, aligned } => {
                let ty = c_type(*elem);
                let n = lanes.len();
                let vector = format!("{}_v", lanes.first().map_or("lanes", |l| &**l));
                // `vloadN` needs only the element's alignment, so a compiler that cannot
                // see more splits it; an aligned vector in a buffer is read through a
                // vector pointer, one wide load.
                let buffer = match load {
                    CExpr::Load(ptr, _) => match ptrs.spaces.get(&**ptr) {
                        Some(Resolved::Space(s @ (Space::Global | Space::Constant))) => Some(*s),
                        _ => None,
                    },
                    _ => None,
                };
                let loaded = calls(load, ctx);
                match buffer {
                    Some(space) if *aligned => {
                        let q = qualifier(Some(&Resolved::Space(space)));
                        line(format!("{pad}{ty}{n} {vector} = *(({q}const {ty}{n}*)&{loaded});"))
                    }
                    _ => line(format!("{pad}{ty}{n} {vector} = vload{n}(0, &{loaded});")),
                }
                for (i, lane) in lanes.iter().enumerate() {
                    out.line(at, &format!("{pad}{ty} {lane} = {vector}.s{i:x};"));
                }
            }
        }
    }
}

/// `e` with each call of a generated function directed to the clone its site calls,
/// and the error buffer passed first.
/// Loads from `f16` arrays read their bits through `weft_h2f`.
fn calls(e: &CExpr, ctx: &Ctx<'_, '_>) -> CExpr {
    let e = e.map_invokes(&|site, name, args| {
        let name = ctx.ptrs.calls.get(&site).map_or(name, String::as_str);
        let mut all = vec![CExpr::var("weft_err")];
        all.extend(args);
        CExpr::call(name, all)
    });
    if ctx.halves.is_empty() {
        return e;
    }
    e.map_loads(&|ptr, index| {
        let load = CExpr::load(ptr, index);
        if ctx.halves.contains(ptr) { CExpr::call("weft_h2f", vec![load]) } else { load }
    })
}

#[cfg(test)]
mod cost_tests;
#[cfg(test)]
mod tests;
