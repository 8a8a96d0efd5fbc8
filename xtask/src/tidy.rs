//! Tidy checks, run as ordinary tests (`cargo xtask ci` runs every test): the house rules that
//! no compiler checks.
//!
//! - ARCHITECTURE.md's crate table lists exactly the crates under `crates/` (README.md has no
//!   crate table: it links to the guide in `docs/` and to ARCHITECTURE.md).
//! - README.md stays short: at most [`README_MAX_LINES`] lines; the guide in `docs/` holds the
//!   rest.
//! - Every `[workspace.dependencies]` entry is used by some member.
//! - Every crate has a README, except the dev-only ones.
//! - No Rust source file is over [`MAX_LINES`] lines unless a line `// Kept as one file: <why>`
//!   near its top says why.
//! - Release builds are stripped; the `profiling` and bench profiles keep line tables.
//! - No public doc (rustdoc of a crate's sources, a README, a page of `docs/`, a Cargo
//!   `description`) cites a document outside the repository ([`cites_outside`]).

use std::path::{Path, PathBuf};

/// Longest README.md (in lines): what agentsh is, why, install, the two commands after
/// cloning, and links to the guide.
pub const README_MAX_LINES: usize = 150;

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

/// Whether `text` cites the behaviour specification kept outside the repository: its name in
/// capitals as a word of its own (not inside a longer name such as `QMAKESPEC`), a section sign
/// followed by a number (but `Unicode §3.9`, another document's), or a path into the `shared`
/// folder beside the repository.
pub fn cites_outside(text: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let spec_word = text.match_indices("SPEC").any(|(at, word)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    });
    let section = text.match_indices('§').any(|(at, sign)| {
        let after = text[at + sign.len()..].trim_start().chars().next();
        after.is_some_and(|c| c.is_ascii_digit()) && !text[..at].ends_with("Unicode ")
    });
    spec_word || section || text.contains("../shared/")
}

/// Docs that cite a document outside the repository, as `path:line`: rustdoc lines (`///`,
/// `//!`) of the sources, tests and benches under `crates/*`, `examples/*` and `xtask/src`, the
/// READMEs, ARCHITECTURE.md, the pages of `docs/`, and the `[package] description` of every
/// manifest.
pub fn outside_citations(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut report = |path: &Path, line: usize| {
        let shown = path.strip_prefix(root).unwrap_or(path);
        found.push(format!("{}:{line}", shown.display()));
    };
    let mut sources = vec![root.join("xtask").join("src")];
    let mut manifests = vec![root.join("xtask").join("Cargo.toml")];
    let mut markdown = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    if let Ok(entries) = std::fs::read_dir(root.join("docs")) {
        markdown.extend(entries.flatten().map(|e| e.path()));
    }
    for group in ["crates", "examples"] {
        let Ok(entries) = std::fs::read_dir(root.join(group)) else {
            continue;
        };
        for entry in entries.flatten() {
            for code in ["src", "tests", "benches"] {
                sources.push(entry.path().join(code));
            }
            manifests.push(entry.path().join("Cargo.toml"));
            markdown.push(entry.path().join("README.md"));
        }
    }
    while let Some(dir) = sources.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                sources.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for (index, line) in text.lines().enumerate() {
                    let trimmed = line.trim_start();
                    let doc = trimmed.starts_with("///") || trimmed.starts_with("//!");
                    if doc && cites_outside(trimmed) {
                        report(&path, index + 1);
                    }
                }
            }
        }
    }
    for path in markdown
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        for (index, line) in text.lines().enumerate() {
            if cites_outside(line) {
                report(path, index + 1);
            }
        }
    }
    for path in &manifests {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let table: toml::Table = text.parse().unwrap_or_default();
        let description = table
            .get("package")
            .and_then(|p| p.get("description"))
            .and_then(toml::Value::as_str)
            .unwrap_or("");
        if cites_outside(description) {
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with("description"))
                .map_or(0, |i| i + 1);
            report(path, line);
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::{cites_outside, long_files, outside_citations, table_first_column};
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
    fn readme_is_short() {
        let lines = read("README.md").lines().count();
        assert!(
            lines <= super::README_MAX_LINES,
            "README.md has {lines} lines, more than {}: move the detail to a page of docs/",
            super::README_MAX_LINES
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

    /// What `cargo install` builds is small (no debug info, stripped: about 12 MB where line
    /// tables made 74 MB), while benches and `--profile profiling` keep line tables and symbols
    /// for `perf`.
    #[test]
    fn release_builds_are_stripped_and_profiling_keeps_line_tables() {
        let table: toml::Table = read("Cargo.toml").parse().expect("Cargo.toml parses");
        let profile = |name: &str| table["profile"][name].as_table().expect(name).clone();
        let release = profile("release");
        assert_eq!(release.get("strip"), Some(&toml::Value::Boolean(true)));
        assert_eq!(release.get("debug"), Some(&toml::Value::Boolean(false)));
        for name in ["profiling", "bench"] {
            let kept = profile(name);
            assert_eq!(
                kept.get("debug").and_then(toml::Value::as_str),
                Some("line-tables-only"),
                "{name}"
            );
            assert_eq!(
                kept.get("strip"),
                Some(&toml::Value::Boolean(false)),
                "{name}"
            );
        }
        assert_eq!(
            profile("profiling")
                .get("inherits")
                .and_then(toml::Value::as_str),
            Some("release")
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
    fn no_public_doc_cites_a_document_outside_the_repository() {
        let found = outside_citations(&workspace_root());
        assert!(
            found.is_empty(),
            "public docs cite a document outside the repository (say the rule, or point at \
             docs/, a README or ARCHITECTURE.md): {found:?}"
        );
    }

    #[test]
    fn recognises_citations_of_the_outside_specification() {
        for cited in [
            "/// The sandbox (SPEC §16).",
            "//! SPEC: within 1 s",
            "(§11)",
            "§ 4",
            "kept beside the repository as `../shared/SPEC.md`",
        ] {
            assert!(cites_outside(cited), "{cited}");
        }
        for fine in [
            "SPEC_HARDENED",
            "QMAKESPEC",
            "Unicode §3.9",
            "writable = [\"../shared-build\"]",
            "the spec's numbers",
        ] {
            assert!(!cites_outside(fine), "{fine}");
        }
    }

    #[test]
    fn reads_a_table_under_its_heading_only() {
        let md = "## Other\n| `x` | y |\n## Crates\n| crate | what |\n|---|---|\n| `a` | b |\n| `c-d` | e |\n\nprose `z`\n## Next\n| `q` | r |\n";
        assert_eq!(table_first_column(md, "Crates"), ["a", "c-d"]);
    }
}
