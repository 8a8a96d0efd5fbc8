//! Tidy checks, run as ordinary tests (`cargo xtask ci` runs every test): the house rules that
//! no compiler checks.
//!
//! - README.md's and ARCHITECTURE.md's crate tables list exactly the crates under `crates/`.
//! - Every `[workspace.dependencies]` entry is used by some member.
//! - Every crate has a README, except the dev-only ones.
//! - No Rust source file is over [`MAX_LINES`] lines unless a line `// Kept as one file: <why>`
//!   near its top says why.

use std::path::{Path, PathBuf};

/// Longest Rust file (in lines) that needs no reason to stay one file.
pub const MAX_LINES: usize = 800;
/// The marker that lets a file be longer, within its first [`MARKER_WINDOW`] lines.
pub const LONG_FILE_MARKER: &str = "// Kept as one file: ";
const MARKER_WINDOW: usize = 20;

/// The first column of the Markdown table under the heading that starts with `heading`,
/// backticks removed.
pub fn table_first_column(markdown: &str, heading: &str) -> Vec<String> {
    let mut in_section = false;
    let mut names = Vec::new();
    for line in markdown.lines() {
        if line.starts_with('#') {
            in_section = line.trim_start_matches('#').trim().starts_with(heading);
            continue;
        }
        if !in_section || !line.starts_with('|') {
            continue;
        }
        let cell = line
            .trim_start_matches('|')
            .split('|')
            .next()
            .unwrap_or("")
            .trim();
        if cell.starts_with('`') {
            names.push(cell.trim_matches('`').to_owned());
        }
    }
    names
}

/// Rust files over [`MAX_LINES`] lines without the marker, as `path (N lines)`.
pub fn long_files(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack: Vec<PathBuf> = ["crates", "xtask", "examples"]
        .iter()
        .map(|d| root.join(d))
        .collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if entry.file_name() != "target" {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let lines = text.lines().count();
            let marked = text
                .lines()
                .take(MARKER_WINDOW)
                .any(|l| l.trim_start().starts_with(LONG_FILE_MARKER));
            if lines > MAX_LINES && !marked {
                let shown = path.strip_prefix(root).unwrap_or(&path);
                found.push(format!("{} ({lines} lines)", shown.display()));
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::{long_files, table_first_column};
    use crate::manifest::Manifest;
    use crate::readme::DEV_ONLY_CRATES;
    use crate::workspace_root;

    fn read(name: &str) -> String {
        std::fs::read_to_string(workspace_root().join(name)).expect("readable")
    }

    fn manifest() -> Manifest {
        Manifest::load(&workspace_root()).expect("manifests parse")
    }

    #[test]
    fn readme_crate_table_lists_exactly_the_crates() {
        let mut listed = table_first_column(&read("README.md"), "Crates");
        listed.sort();
        let mut packages: Vec<String> = manifest().crates().into_iter().map(|c| c.1).collect();
        packages.retain(|p| !DEV_ONLY_CRATES.iter().any(|d| p == &format!("agentsh-{d}")));
        packages.sort();
        assert_eq!(
            listed, packages,
            "README.md's `## Crates` table (package names) must match crates/*"
        );
    }

    #[test]
    fn architecture_crate_table_lists_exactly_the_crates() {
        let mut listed = table_first_column(&read("ARCHITECTURE.md"), "Crates");
        listed.sort();
        let dirs: Vec<String> = manifest().crates().into_iter().map(|c| c.0).collect();
        assert_eq!(
            listed, dirs,
            "ARCHITECTURE.md's `## Crates` table (directories) must match crates/*"
        );
    }

    #[test]
    fn every_workspace_dependency_is_used() {
        let manifest = manifest();
        let used = manifest.inherited_dependencies().expect("manifests parse");
        let unused: Vec<String> = manifest
            .declared_dependencies()
            .into_iter()
            .filter(|d| !used.contains(d))
            .collect();
        assert!(
            unused.is_empty(),
            "declared in [workspace.dependencies] but used by no member: {unused:?}"
        );
    }

    #[test]
    fn every_crate_has_a_readme() {
        let root = workspace_root();
        let missing: Vec<String> = manifest()
            .crates()
            .into_iter()
            .map(|c| c.0)
            .filter(|dir| !DEV_ONLY_CRATES.contains(&dir.as_str()))
            .filter(|dir| !root.join("crates").join(dir).join("README.md").is_file())
            .collect();
        assert!(
            missing.is_empty(),
            "crates without a README.md: {missing:?}"
        );
    }

    #[test]
    fn no_long_file_without_a_reason() {
        let long = long_files(&workspace_root());
        assert!(
            long.is_empty(),
            "files over {} lines need `{}<why>` near their top, or a split: {long:?}",
            super::MAX_LINES,
            super::LONG_FILE_MARKER
        );
    }

    /// The normal dependencies of the manifest at `path` (relative to the root), with whether
    /// each turns features on.
    fn dependencies(path: &str) -> Vec<(String, bool)> {
        let table: toml::Table = read(path).parse().expect("manifest parses");
        table
            .get("dependencies")
            .and_then(toml::Value::as_table)
            .map(|deps| {
                deps.iter()
                    .map(|(name, spec)| (name.clone(), spec.get("features").is_some()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A renderer needs nothing that runs commands, so a downstream renderer pulls in
    /// no tokio, no shell, no vt100. The protocol comes without its serde feature.
    #[test]
    fn widget_crates_depend_on_protocol_and_ratatui_core_only() {
        let cases: [(&str, &[&str]); 2] = [
            (
                "crates/renderer/Cargo.toml",
                &[
                    "agentsh-protocol",
                    "ratatui-core",
                    "unicode-segmentation",
                    "unicode-width",
                ],
            ),
            (
                "examples/compact-renderer/Cargo.toml",
                &["agentsh-protocol", "agentsh-renderer", "ratatui-core"],
            ),
        ];
        for (path, allowed) in cases {
            for (name, features) in dependencies(path) {
                assert!(
                    allowed.contains(&name.as_str()),
                    "{path}: `{name}` is not allowed"
                );
                assert!(!features, "{path}: `{name}` must not turn features on");
            }
        }
    }

    #[test]
    fn reads_a_table_under_its_heading_only() {
        let md = "## Other\n| `x` | y |\n## Crates\n| crate | what |\n|---|---|\n| `a` | b |\n| `c-d` | e |\n\nprose `z`\n## Next\n| `q` | r |\n";
        assert_eq!(table_first_column(md, "Crates"), ["a", "c-d"]);
    }
}
