//! The environment variables `weft` reads, each in one place. Library crates take
//! options and never read the environment (so their tests do not depend on the shell);
//! the `weft` binary reads it here and passes what it found down (docs/cli.md,
//! "Environment").

use std::path::PathBuf;

/// `WEFT_RUNNER`: the `weft-runner` executable (else the one beside `weft`, else on
/// PATH: `weft_process::runner_path`).
pub(crate) fn runner() -> Option<PathBuf> {
    std::env::var_os("WEFT_RUNNER").filter(|path| !path.is_empty()).map(PathBuf::from)
}
