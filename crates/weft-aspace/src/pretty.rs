//! The printer behind `weft dump --ir aspace`, snapshots and hovers.
//!
//! Layout: one block per function (kind, scheme, every pointer's row in the scheme's variables),
//! then one block per instance (name, function and instantiation, every pointer's resolved
//! space, every call's target instance), then the diagnostics with their chains. Functions and
//! instances appear in id order and variables are canonical, so the text is deterministic.

use std::fmt::{self, Write};

use crate::diagnostic::AspaceDiagnostic;
use crate::infer::Scheme;
use crate::inference::Inference;
use crate::program::{Fact, FuncId, FuncKind, Program, PtrId, Reason};
use crate::specialise::{InstanceId, Resolved};

/// Prints functions with their schemes and rows, instances with resolved spaces, and
/// diagnostics.
pub fn print(program: &Program, inference: &Inference) -> String {
    let mut out = String::new();
    print_to(&mut out, program, inference).expect("invariant: writing to a String cannot fail");
    out
}

fn print_to(out: &mut String, program: &Program, inference: &Inference) -> fmt::Result {
    for (idx, func) in program.funcs.iter().enumerate() {
        let fid = FuncId(idx as u32);
        let kind = match func.kind {
            FuncKind::Kernel => "kernel",
            FuncKind::Helper => "fn",
        };
        writeln!(out, "{kind} {} : {}", func.name, inference.scheme(fid))?;
        for (ptr_idx, ptr) in func.ptrs.iter().enumerate() {
            if let Some(row) = inference.row(fid, PtrId(ptr_idx as u32)) {
                writeln!(out, "  {} : ASpace {}", ptr.name, Scheme::display_row(row))?;
            }
        }
    }
    for (idx, instance) in inference.instances().iter().enumerate() {
        let id = InstanceId(idx as u32);
        let Some(func) = program.func(instance.func) else { continue };
        write!(out, "instance {} = {}", instance.name, func.name)?;
        if !instance.subst.is_empty() {
            let bindings: Vec<String> = instance
                .subst
                .iter()
                .enumerate()
                .map(|(var, set)| format!("r{} := {set}", var + 1))
                .collect();
            write!(out, " [{}]", bindings.join(", "))?;
        }
        if instance.generic {
            write!(out, " (generic)")?;
        }
        writeln!(out)?;
        for (ptr_idx, ptr) in func.ptrs.iter().enumerate() {
            let ptr_id = PtrId(ptr_idx as u32);
            let resolved = match inference.space_of(id, ptr_id) {
                Resolved::Space(space) if inference.row_in(id, ptr_id).is_empty() => {
                    format!("{space} (default)")
                }
                Resolved::Space(space) => space.to_string(),
                Resolved::Generic(set) => format!("generic {set}"),
            };
            writeln!(out, "  {} : {resolved}", ptr.name)?;
        }
        for (fact_idx, fact) in func.facts.iter().enumerate() {
            if !inference.is_active(instance.func, fact_idx) {
                continue;
            }
            if let Fact::Load { ptr, reason } | Fact::Store { ptr, reason } = fact {
                let resolved = match inference.space_of(id, *ptr) {
                    Resolved::Space(space) => space.to_string(),
                    Resolved::Generic(set) => format!("generic {set}"),
                };
                writeln!(out, "  {} : {resolved}", reason_text(reason))?;
            }
            if let Fact::Call { callee, reason, .. } = fact {
                let target = match inference.callee_instance(id, fact_idx) {
                    Some(callee) => inference.instance(callee).name.clone(),
                    None => format!(
                        "no instance of `{}`",
                        program.func(*callee).map_or("?", |f| &f.name)
                    ),
                };
                writeln!(out, "  {} -> {target}", reason_text(reason))?;
            }
        }
    }
    for diag in inference.diagnostics() {
        write_diagnostic(out, program, diag)?;
    }
    Ok(())
}

/// `text @site`, or `text` without a site.
pub(crate) fn reason_text(reason: &Reason) -> String {
    match reason.site {
        Some(site) => format!("{} @{}", reason.text, site.0),
        None => reason.text.clone(),
    }
}

fn write_diagnostic(out: &mut String, program: &Program, diag: &AspaceDiagnostic) -> fmt::Result {
    let func = program.func(diag.func).map_or("?", |func| func.name.as_str());
    writeln!(out, "error[{}] in `{func}`: {}", diag.code, diag.message)?;
    for reason in &diag.chain {
        writeln!(out, "  | {}", reason_text(reason))?;
    }
    Ok(())
}
