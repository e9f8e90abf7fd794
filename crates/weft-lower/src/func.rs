//! User defs called inside a kernel with materialised arrays become OpenCL functions
//! (ARCHITECTURE.md, "generated code keeps the source's functions"): each array is
//! passed as a pointer plus its layout (offset, strides and shape as `long`s), so one
//! function serves every view of an array. Pointer parameters get no address space
//! here: `crate::aspace` infers one per call and clones the function per
//! instantiation.
//!
//! Calls stay inlined when an argument is a pull array (fusion), when the def returns
//! an array or a tuple (its result would need an acceptor), and inside a `map@group`
//! body when the def (or a def it calls) has combinators that cooperate across the
//! group (`@thread`, `@group`, `to_local`).

use std::rc::Rc;

use weft_core::{FnId, Origin, Type};
use weft_plan::Elem;

use crate::LowerError;
use crate::arr::Mem;
use crate::imp::{CExpr, Cmd, FParam, FuncImp};
use crate::kernel::{KEnv, Kb, sanitize};
use crate::val::{KArr, KVal, Res};

/// How a call's arguments are passed: the key under which one def's function is
/// generated once per entry (a def called with a 1-D and a 2-D array, or with `f32`
/// and `f64` elements, needs two functions).
fn signature(args: &[KVal]) -> Option<String> {
    let mut sig = String::new();
    for arg in args {
        match arg {
            KVal::Scalar(_, elem) => sig.push_str(elem.name()),
            KVal::Arr(arr) => {
                sig.push('[');
                arr_signature(arr, &mut sig)?;
                sig.push(']');
            }
            KVal::Tuple(_) => return None,
        }
        sig.push(',');
    }
    Some(sig)
}

fn arr_signature(arr: &KArr, sig: &mut String) -> Option<()> {
    match arr {
        KArr::Mem(m) => {
            sig.push_str(&format!("{}^{}", m.elem.name(), m.shape.len()));
            Some(())
        }
        KArr::Zip(parts) => {
            sig.push('(');
            for p in parts {
                arr_signature(p, sig)?;
                sig.push(' ');
            }
            sig.push(')');
            Some(())
        }
        KArr::Pull { .. } => None,
    }
}

/// The memory leaves of a materialised array, in order.
fn mem_leaves<'a>(arr: &'a KArr, out: &mut Vec<&'a Mem<CExpr, Rc<str>>>) {
    match arr {
        KArr::Mem(m) => out.push(m),
        KArr::Zip(parts) => parts.iter().for_each(|p| mem_leaves(p, out)),
        KArr::Pull { .. } => {}
    }
}

impl Kb<'_> {
    /// Calls `func` as an OpenCL function when it qualifies; `None` means: inline it.
    pub(crate) fn call_function(
        &mut self,
        func: FnId,
        args: &[KVal],
        origin: Option<&Origin>,
    ) -> Res<Option<KVal>> {
        let callee = &self.program.functions[func];
        let Type::Scalar(ret) = &callee.ret else { return Ok(None) };
        let ret = *ret;
        if !args.iter().any(|a| matches!(a, KVal::Arr(_)))
            || (self.in_group && cooperates(self.program, func))
        {
            return Ok(None);
        }
        let Some(sig) = signature(args) else { return Ok(None) };
        let key = (func, sig);
        let existing = self.shared.borrow().fn_index.get(&key).copied();
        let index = match existing {
            Some(Some(index)) => index,
            // Tried before and failed: inline.
            Some(None) => return Ok(None),
            None => {
                let made = self.generate_function(func, args, ret);
                let mut shared = self.shared.borrow_mut();
                match made {
                    Ok(f) => {
                        let index = shared.functions.len() as u32;
                        shared.functions.push(f);
                        shared.fn_index.insert(key, Some(index));
                        index
                    }
                    Err(e) if e.unsupported => {
                        shared.fn_index.insert(key, None);
                        return Ok(None);
                    }
                    Err(e) => return Err(e),
                }
            }
        };
        let name: Rc<str> = Rc::from(self.shared.borrow().functions[index as usize].name.as_str());
        let mut cargs = Vec::new();
        for arg in args {
            match arg {
                KVal::Scalar(e, _) => cargs.push(e.clone()),
                KVal::Arr(arr) => {
                    let mut leaves = Vec::new();
                    mem_leaves(arr, &mut leaves);
                    for m in leaves {
                        cargs.push(CExpr::Var(m.buf.clone()));
                        cargs.push(m.offset.clone());
                        cargs.extend(m.strides.iter().cloned());
                        cargs.extend(m.shape.iter().cloned());
                    }
                }
                KVal::Tuple(_) => return Err(LowerError::internal("a tuple argument")),
            }
        }
        let at = self.comment(origin);
        let site = {
            let mut shared = self.shared.borrow_mut();
            shared.next_site += 1;
            let site = shared.next_site;
            if let Some(at) = at {
                shared.site_positions.insert(site, at);
            }
            site
        };
        if let Some(o) = origin {
            self.note(o, &format!("calls the OpenCL function `{name}` (generated from the def)"));
        }
        let call = CExpr::Invoke { func: index, name, site, args: cargs };
        Ok(Some(KVal::Scalar(self.tmp("r", ret, call), ret)))
    }

    /// Generates the function for `func` called with arguments shaped like `args`.
    fn generate_function(&mut self, func: FnId, args: &[KVal], ret: Elem) -> Res<FuncImp> {
        let program = self.program;
        let callee = &program.functions[func];
        let base = sanitize(callee.name.as_str());
        let name = {
            let shared = self.shared.borrow();
            let taken = |n: &str| shared.functions.iter().any(|f| f.name == n);
            let mut name = base.clone();
            let mut k = 2;
            while taken(&name) {
                name = format!("{base}_{k}");
                k += 1;
            }
            name
        };
        let mut kb = Kb::new(program, self.position, self.shared.clone());
        kb.fn_ret = Some(ret);
        kb.work_group = self.work_group;
        let mut params = Vec::new();
        let mut env = KEnv::default();
        for (param, arg) in callee.params.iter().zip(args) {
            let pname = c_name(callee.vars[*param].name.as_str(), &params);
            let value = match arg {
                KVal::Scalar(_, elem) => {
                    params.push(FParam::Scalar { name: pname.clone(), elem: *elem });
                    KVal::Scalar(CExpr::var(&pname), *elem)
                }
                KVal::Arr(arr) => KVal::Arr(param_array(&mut params, arr, &pname)?),
                KVal::Tuple(_) => return Err(LowerError::internal("a tuple argument")),
            };
            env.vars.insert(*param, value);
        }
        for param in &callee.params {
            let v = env.vars[param].clone();
            kb.bind_sizes(&mut env, &callee.vars[*param].ty, &v);
        }
        let result = kb.block(func, &mut env, callee.body)?;
        let KVal::Scalar(value, _) = result else {
            return Err(LowerError::internal("a scalar def returned a non-scalar"));
        };
        kb.emit(Cmd::Return(value));
        if !kb.params.is_empty() {
            // The body needed a kernel argument (it cannot: defs are closed), or a
            // local buffer: keep such defs inlined.
            return Err(LowerError::unsupported("a def that needs kernel arguments", None));
        }
        let crate::kernel::FunctionBody { body, var_origins } = kb.finish_function();
        let position = callee
            .origins
            .values()
            .next()
            .and_then(|o| (self.position)(o))
            .map(|p| format!(" ({})", crate::kernel::strip_column(&p)))
            .unwrap_or_default();
        Ok(FuncImp {
            name,
            params,
            ret,
            body,
            doc: format!("def `{}`{position}, called with materialised arrays", callee.name),
            var_origins,
        })
    }
}

/// Whether `func`, or a def it calls, has code that cooperates across a work-group
/// (a level other than `@seq`, or `to_local`): such a def is inlined in group code.
fn cooperates(program: &weft_core::Program, func: FnId) -> bool {
    use weft_core::Exp;
    let function = &program.functions[func];
    let mut blocks = vec![function.body];
    while let Some(block) = blocks.pop() {
        for stmt in &function.blocks[block].stmts {
            let exp = &function.exps[stmt.exp];
            let cooperative = match exp {
                Exp::Materialise { space: weft_core::Space::Local, .. } => true,
                Exp::Call { func: callee, .. } => cooperates(program, *callee),
                _ => exp.written_level().is_some_and(|l| l != weft_hir::Level::Seq),
            };
            if cooperative {
                return true;
            }
            blocks.extend(exp.nested_blocks());
        }
    }
    false
}

/// A parameter name that is valid OpenCL C and unique among `params` (layout
/// parameters are named after their array: `xs_off`, `xs_s0`, `xs_n0`).
fn c_name(source: &str, params: &[FParam]) -> String {
    const RESERVED: &[&str] = &[
        "auto", "bool", "break", "case", "char", "const", "constant", "continue", "default", "do",
        "double", "else", "enum", "extern", "float", "for", "global", "goto", "half", "if",
        "inline", "int", "kernel", "local", "long", "private", "register", "restrict", "return",
        "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "uchar", "uint",
        "ulong", "union", "unsigned", "ushort", "void", "volatile", "while",
    ];
    let mut name = sanitize(source);
    if RESERVED.contains(&name.as_str()) || name.starts_with("weft_") {
        name.push('_');
    }
    let taken = |n: &str| {
        params.iter().any(|p| match p {
            FParam::Ptr { name, .. } | FParam::Scalar { name, .. } => {
                name == n || n.strip_prefix(name.as_str()).is_some_and(|r| r.starts_with('_'))
            }
        })
    };
    let base = name.clone();
    let mut k = 2;
    while taken(&name) {
        name = format!("{base}{k}");
        k += 1;
    }
    name
}

/// Adds the pointer and layout parameters of an array argument and returns the array
/// as the function body sees it.
fn param_array(params: &mut Vec<FParam>, arr: &KArr, base: &str) -> Res<KArr> {
    Ok(match arr {
        KArr::Mem(m) => {
            let n = m.shape.len();
            params.push(FParam::Ptr {
                name: base.to_owned(),
                elem: m.elem,
                why: format!("the array parameter `{base}`"),
            });
            let scalar = |params: &mut Vec<FParam>, name: String| {
                params.push(FParam::Scalar { name: name.clone(), elem: Elem::I64 });
                CExpr::var(&name)
            };
            let offset = scalar(params, format!("{base}_off"));
            let strides = (0..n).map(|d| scalar(params, format!("{base}_s{d}"))).collect();
            let shape = (0..n).map(|d| scalar(params, format!("{base}_n{d}"))).collect();
            KArr::Mem(Mem { buf: Rc::from(base), elem: m.elem, offset, strides, shape })
        }
        KArr::Zip(parts) => KArr::Zip(
            parts
                .iter()
                .enumerate()
                .map(|(i, p)| param_array(params, p, &format!("{base}_{i}")))
                .collect::<Res<_>>()?,
        ),
        KArr::Pull { .. } => return Err(LowerError::internal("a pull array parameter")),
    })
}
