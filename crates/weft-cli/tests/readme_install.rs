//! The install commands the editors' READMEs give name packages that exist and build
//! the executables they promise (both once said `cargo install --path crates/weft`,
//! which does not exist).

use std::path::Path;

#[test]
fn readme_install_commands_name_packages_with_their_executables() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut found = 0;
    for readme in
        ["editors/README.md", "editors/vscode/README.md", "editors/nvim/doc/weft.txt", "README.md"]
    {
        let text = std::fs::read_to_string(root.join(readme)).unwrap();
        for (at, _) in text.match_indices("cargo install") {
            let command = text[at..].lines().next().unwrap().trim_end_matches('`');
            let Some(path) = command.split("--path ").nth(1) else { continue };
            let path = path.split([' ', '`']).next().unwrap();
            let manifest = std::fs::read_to_string(root.join(path).join("Cargo.toml"))
                .unwrap_or_else(|_| panic!("{readme}: `{command}`: no package at `{path}`"));
            // The executable the text promises (`weft`, `weft-runner`) is a bin of it.
            let promised = if path.ends_with("weft-runtime") { "weft-runner" } else { "weft" };
            assert!(
                manifest.contains(&format!("name = \"{promised}\"")),
                "{readme}: `{command}` does not build `{promised}`"
            );
            found += 1;
        }
    }
    assert!(found >= 6, "only {found} install commands found");
}
