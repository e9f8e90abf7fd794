//! `weft dump --ir STAGE FILE`: the printers of each intermediate representation.

use std::io::Write;

use crate::workspace::load;
use crate::{DumpArgs, Stage};

pub(crate) fn run(args: &DumpArgs) -> anyhow::Result<u8> {
    let (db, files) = load(std::slice::from_ref(&args.file))?;
    let Some(loaded) = files.first() else { anyhow::bail!("`{}` is not a .weft file", args.file) };
    let text = match args.ir {
        Stage::Tail => crate::apl::dump_tail(&db, loaded.file).map_err(|e| anyhow::anyhow!(e))?,
        Stage::Cst | Stage::Hir if crate::apl::is_apl(&args.file) => {
            anyhow::bail!("`{}` is an APL file: its front-end stage is `--ir tail`", args.file)
        }
        Stage::Core if crate::apl::is_apl(&args.file) => {
            let program =
                crate::run::core_program(&db, loaded.file).map_err(|e| anyhow::anyhow!(e))?;
            weft_core::pretty_program(&program)
        }
        Stage::Cst => weft_hir::parse(&db, loaded.file).debug_dump(),
        Stage::Hir => weft_hir::pretty_file(&db, loaded.file),
        Stage::Core => {
            let Some(checked) = weft_core::CheckedFile::new(&db, loaded.file) else {
                anyhow::bail!("`{}` has errors (see `weft check`)", args.file)
            };
            let program = weft_core::lower_file(&db, checked)
                .map_err(|e| anyhow::anyhow!("internal compiler error in core: {e}"))?;
            weft_core::pretty_program(&program)
        }
        Stage::Opt | Stage::Gpu => {
            let program =
                crate::run::core_program(&db, loaded.file).map_err(|e| anyhow::anyhow!(e))?;
            match args.ir {
                Stage::Opt => weft_core::pretty_program(&weft_opt::optimise_core(&program)),
                // The code generator's input (calls inlined, sequential combinators
                // fused into loops) for the steering device.
                _ => weft_opt::pretty_gpu(&weft_opt::pipeline_inlined(
                    &program,
                    crate::opencl::steering_target(),
                )),
            }
        }
        Stage::GpuMem => {
            let program =
                crate::run::core_program(&db, loaded.file).map_err(|e| anyhow::anyhow!(e))?;
            let code = weft_opencl::GpuCode::new(&program, crate::opencl::steering_target());
            weft_mem::pretty_gpu_mem(&code.gpu, &code.mem)
        }
        Stage::Mem => {
            let program =
                crate::run::core_program(&db, loaded.file).map_err(|e| anyhow::anyhow!(e))?;
            let mem = weft_mem::pipeline(&program, weft_mem::ExpandOptions::default());
            weft_mem::pretty_mem(&program, &mem)
        }
        Stage::Kernels
        | Stage::Imperative
        | Stage::Aspace
        | Stage::Opencl
        | Stage::Regions
        | Stage::Costs => {
            let program =
                crate::run::core_program(&db, loaded.file).map_err(|e| anyhow::anyhow!(e))?;
            let mut text = String::new();
            for &entry in &program.entries {
                let options = weft_lower::Options {
                    target: args.opencl.target(),
                    ..crate::environment::lower_options()
                };
                let compiled = crate::opencl::compile(&db, &program, entry, options);
                let compiled = match compiled {
                    Ok(c) => c,
                    Err(message) => {
                        text.push_str(&format!(
                            "entry `{}`: {message}\n\n",
                            program.functions[entry].name
                        ));
                        continue;
                    }
                };
                match args.ir {
                    Stage::Kernels => {
                        text.push_str(&weft_plan::print_plan(&compiled.plan));
                        for k in &compiled.kernels {
                            text.push_str(&format!("  kernel {}: {}\n", k.name, k.doc));
                        }
                    }
                    Stage::Imperative => {
                        for f in &compiled.functions {
                            text.push_str(&weft_lower::print_func_imp(f));
                        }
                        for k in &compiled.kernels {
                            text.push_str(&weft_lower::print_kernel_imp(k));
                        }
                    }
                    Stage::Aspace => {
                        text.push_str(&format!(
                            "address spaces of entry `{}`\n",
                            program.functions[entry].name
                        ));
                        text.push_str(&compiled.spaces.report);
                    }
                    Stage::Regions => {
                        let path = loaded.file.path(&db).clone();
                        let line = |origin: &weft_core::Origin| source_line(&db, &path, origin);
                        text.push_str(&weft_lower::regions::print_regions(
                            &compiled.regions,
                            &line,
                        ));
                    }
                    Stage::Costs => text.push_str(&compiled.costs.render()),
                    _ => {
                        text.push_str(&weft_plan::print_plan(&compiled.plan));
                        text.push_str(&compiled.plan.source);
                    }
                }
                text.push('\n');
            }
            text
        }
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(0)
}

/// The 1-based line of a source expression in the file at `path` (`None` in others).
pub(crate) fn source_line(
    db: &weft_hir::RootDatabase,
    path: &str,
    origin: &weft_core::Origin,
) -> Option<u32> {
    // `origin_position` writes `path:line:col`.
    let position = weft_core::origin_position(db, origin)?;
    let mut parts = position.rsplitn(3, ':');
    let _col = parts.next()?;
    let line = parts.next()?.parse().ok()?;
    (parts.next()? == path).then_some(line)
}

/// A status line for people, on stderr, so stdout stays machine-readable.
#[expect(clippy::print_stderr, reason = "status output goes to stderr")]
pub(crate) fn print_status(line: &str) {
    eprintln!("{line}");
}
