//! The project's settings file, `weft.json`, found in a file's folder or the nearest
//! ancestor that has one: which performance diagnostics are reported and on which
//! device profile. `weft check` and the language server both read it, so the editor
//! and CI report the same warnings (issue: the editor showed 45 that CI never saw).
//!
//! ```json
//! { "perfDiagnostics": true, "allow": ["bank-conflict"], "costProfile": "nvidia-h100" }
//! ```
//!
//! Every key is optional; its names are those of the server's settings (docs/lsp.md).
//! What the file says wins over an editor's settings (`allow` codes are added to
//! theirs); `weft check`'s flags win over the file (`--allow` adds to it).

use std::path::{Path, PathBuf};

/// The file's name.
pub const PROJECT_FILE: &str = "weft.json";

/// What a `weft.json` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectConfig {
    /// The file it was read from.
    pub path: PathBuf,
    pub perf_diagnostics: Option<bool>,
    pub allow: Vec<String>,
    pub cost_profile: Option<String>,
}

/// The `weft.json` of the folder `dir` or of its nearest ancestor that has one, or why
/// it cannot be read (`path: message`).
pub fn find_project_config(dir: &Path) -> Result<Option<ProjectConfig>, String> {
    for folder in dir.ancestors() {
        let path = folder.join(PROJECT_FILE);
        if path.is_file() {
            let text = std::fs::read_to_string(&path)
                .map_err(|error| format!("{}: {error}", path.display()))?;
            return parse(&text)
                .map(|config| Some(ProjectConfig { path, ..config }))
                .map_err(|error| format!("{}: {error}", folder.join(PROJECT_FILE).display()));
        }
    }
    Ok(None)
}

fn parse(text: &str) -> Result<ProjectConfig, String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let serde_json::Value::Object(map) = value else {
        return Err("expected a JSON object".to_owned());
    };
    let mut config = ProjectConfig::default();
    for (key, value) in &map {
        match key.as_str() {
            "perfDiagnostics" => {
                config.perf_diagnostics =
                    Some(value.as_bool().ok_or("`perfDiagnostics` is not true or false")?);
            }
            "allow" => {
                let codes = value.as_array().ok_or("`allow` is not a list of codes")?;
                for code in codes {
                    config
                        .allow
                        .push(code.as_str().ok_or("`allow` holds a non-string")?.to_owned());
                }
            }
            "costProfile" => {
                let name = value.as_str().ok_or("`costProfile` is not a string")?;
                config.cost_profile = Some(name.to_owned());
            }
            other => {
                return Err(format!(
                    "unknown key `{other}` (expected `perfDiagnostics`, `allow`, `costProfile`)"
                ));
            }
        }
    }
    Ok(config)
}

impl ProjectConfig {
    /// The server's settings with the file's on top: its `perfDiagnostics` and
    /// `costProfile` win, its `allow` codes are added.
    pub(crate) fn apply(&self, config: &mut crate::Config) {
        if let Some(on) = self.perf_diagnostics {
            config.perf_diagnostics = on;
        }
        if let Some(name) = &self.cost_profile {
            config.cost_profile = Some(name.clone());
            config.cost_profile_from = Some(self.path.clone());
        }
        for code in &self.allow {
            if !config.allow.contains(code) {
                config.allow.push(code.clone());
            }
        }
    }
}

/// The settings for files of a folder: the server's, under the folder's `weft.json`;
/// the file is read once per folder.
#[derive(Default)]
pub(crate) struct ProjectConfigs {
    by_dir: rustc_hash::FxHashMap<PathBuf, Option<ProjectConfig>>,
}

impl ProjectConfigs {
    /// The settings of the file at `path` (a database path).
    pub(crate) fn settings(&mut self, base: &crate::Config, path: &str) -> crate::Config {
        let dir = Path::new(path).parent().map(Path::to_path_buf).unwrap_or_default();
        let project = self
            .by_dir
            .entry(dir)
            .or_insert_with_key(|dir| find_project_config(dir).ok().flatten());
        let mut config = base.clone();
        if let Some(project) = project {
            project.apply(&mut config);
        }
        config
    }

    /// Forgets what was read (a `weft.json` changed).
    pub(crate) fn clear(&mut self) {
        self.by_dir.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_file_is_read_and_decides_over_editor_settings() {
        let root = std::env::temp_dir().join(format!("weft-project-{}", std::process::id()));
        let sub = root.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(
            root.join(PROJECT_FILE),
            r#"{ "perfDiagnostics": false, "allow": ["bank-conflict"], "costProfile": "pocl-cpu" }"#,
        )
        .unwrap();
        let config = find_project_config(&sub).unwrap().unwrap();
        assert_eq!(config.path, root.join(PROJECT_FILE));
        assert_eq!(config.perf_diagnostics, Some(false));
        let mut editor = crate::Config::default();
        editor.update(&serde_json::json!({ "allow": ["uncoalesced-access"] }));
        let file = sub.join("main.weft");
        let settings = ProjectConfigs::default().settings(&editor, file.to_str().unwrap());
        assert!(!settings.perf_diagnostics);
        assert_eq!(settings.allow, ["uncoalesced-access", "bank-conflict"]);
        assert_eq!(settings.cost_profile.as_deref(), Some("pocl-cpu"));
        // Predictions say where their profile comes from.
        assert_eq!(settings.cost_profile_from, Some(root.join(PROJECT_FILE)));
        assert!(
            settings.cost_config().profile_reason.starts_with("`costProfile` in `"),
            "{}",
            settings.cost_config().profile_reason
        );
        std::fs::write(root.join(PROJECT_FILE), r#"{ "perf": true }"#).unwrap();
        let error = find_project_config(&sub).unwrap_err();
        assert!(
            error.ends_with(
                "unknown key `perf` (expected `perfDiagnostics`, `allow`, `costProfile`)"
            ),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(root);
    }
}
