//! The paths `ARCHITECTURE.md` names in backticks, each checked to exist, so the map stays
//! true as files move. A path may be written from the repository root (`xtask/src/tidy.rs`),
//! from `crates/` (`rpc/src/server.rs`), or from a crate's `src/` (`shell/run.rs`).

use std::path::Path;

/// File endings that make a backticked word without a `/` a path.
const EXTENSIONS: &[&str] = &[".rs", ".md", ".toml", ".py", ".mjs", ".json", ".sh"];

/// The backticked words of `markdown` that are paths of the repository.
pub fn backticked_paths(markdown: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (index, part) in markdown.split('`').enumerate() {
        // Odd parts are inside backticks (code blocks' fences split evenly and hold no path
        // worth checking between them).
        if index % 2 == 1 && is_path(part) {
            paths.push(part.trim_end_matches('/').to_owned());
        }
    }
    paths.sort();
    paths.dedup();
    paths
}

/// Whether `word` is written as a path of the repository: path characters only, relative, a
/// `/` or a known file ending, and not a placeholder (`DIR/stop`, an all-caps first part).
fn is_path(word: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    if word.is_empty() || !word.chars().all(allowed) || word.starts_with(['/', '.']) {
        return false;
    }
    let first = word.split('/').next().unwrap_or_default();
    if first.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
        return false;
    }
    word.contains('/') || EXTENSIONS.iter().any(|ext| word.ends_with(ext))
}

/// Whether `path` exists from the root, from `crates/`, or from some crate's `src/`.
pub fn exists(root: &Path, path: &str) -> bool {
    if root.join(path).exists() || root.join("crates").join(path).exists() {
        return true;
    }
    std::fs::read_dir(root.join("crates"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| entry.path().join("src").join(path).exists())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace_root;

    #[test]
    fn every_path_in_the_architecture_exists() {
        let root = workspace_root();
        let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("readable");
        let paths = backticked_paths(&text);
        assert!(paths.len() > 40, "the map names paths: {paths:?}");
        let missing: Vec<&String> = paths.iter().filter(|path| !exists(&root, path)).collect();
        assert!(
            missing.is_empty(),
            "ARCHITECTURE.md names paths that do not exist: {missing:?}"
        );
    }

    #[test]
    fn paths_are_told_from_other_code() {
        let md = "`crates/x.rs` and `a | b`, `DIR/stop`, `/proc`, `K=V`, `shell/run.rs`, \
                  `cargo xtask ci`, `lib.rs`, `x.y`, `~/.cache`";
        assert_eq!(
            backticked_paths(md),
            ["crates/x.rs", "lib.rs", "shell/run.rs"]
        );
        let root = workspace_root();
        assert!(exists(&root, "xtask/src/paths.rs"));
        assert!(exists(&root, "rpc/src/server.rs"));
        assert!(exists(&root, "shell/run.rs"));
        assert!(!exists(&root, "rpc/src/proxy.rs"));
    }
}
