//! README examples built from outside the workspace.
//!
//! Every crate README's Rust examples are doctests too (each lib.rs includes its README), but a
//! doctest sees the crate's dev-dependencies and the workspace's unified features. A downstream
//! team sees neither: it depends on one crate. So `cargo xtask ci` copies each README's Rust
//! blocks into a throwaway project outside the workspace that depends on that crate alone (plus
//! tokio for async examples, with the workspace's version and features) and builds it.
//!
//! Every project builds into one target directory of their own, `readme-examples/target` under
//! the workspace's target directory, kept from run to run: a dependency that two projects build
//! with the same features is compiled once, and a second run compiles only what changed. Each
//! project still resolves its own features, so no example sees a feature its crate does not ask
//! for. The examples are built, never run, so they build without debug info or incremental
//! state; a project's files are rewritten only when their text changes, so an unchanged example
//! is not even relinked.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::{Manifest, cargo, step};

/// Crates that are dev-only and never published: no README example to build.
pub const DEV_ONLY_CRATES: &[&str] = &["bench-support", "test-support", "fuzz-checks"];

/// The Rust code blocks of a Markdown text, as rustdoc would compile them: fenced blocks whose
/// info string is empty or names only Rust attributes (`rust`, `no_run`, `should_panic`,
/// `edition…`); `ignore`, `compile_fail` and other languages are skipped. Hidden lines (`# `)
/// are kept without their marker, as rustdoc compiles them.
pub fn rust_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<(String, String)> = None; // (fence, code)
    let mut wanted = false;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        match current.as_mut() {
            None => {
                let fence_len = trimmed.chars().take_while(|&c| c == '`').count();
                if fence_len >= 3 {
                    let info = trimmed[fence_len..].trim();
                    wanted = is_rust_info(info);
                    current = Some(("`".repeat(fence_len), String::new()));
                }
            }
            Some((fence, code)) => {
                if trimmed.starts_with(fence.as_str()) && trimmed.trim_matches('`').is_empty() {
                    if wanted {
                        blocks.push(std::mem::take(code));
                    }
                    current = None;
                } else if wanted {
                    code.push_str(unhide(line));
                    code.push('\n');
                }
            }
        }
    }
    blocks
}

fn is_rust_info(info: &str) -> bool {
    info.split([',', ' '])
        .map(str::trim)
        .filter(|word| !word.is_empty())
        .all(|word| {
            matches!(word, "rust" | "no_run" | "should_panic") || word.starts_with("edition")
        })
}

/// A rustdoc hidden line (`# code`, or a lone `#`) without its marker; `##` escapes a `#`.
fn unhide(line: &str) -> &str {
    let trimmed = line.trim_start();
    if trimmed == "#" {
        ""
    } else if trimmed.starts_with("##") {
        &trimmed[1..]
    } else if let Some(rest) = trimmed.strip_prefix("# ") {
        rest
    } else {
        line
    }
}

/// A program from a code block, wrapped the way rustdoc wraps a doctest: as is when it has its
/// own `fn main`; in a `fn main` otherwise, returning through an inner function when the block
/// ends with `Ok::<…>(())` (so it may use `?`).
pub fn program(block: &str) -> String {
    if block.contains("fn main") {
        return block.to_owned();
    }
    let last = block.lines().rev().find(|l| !l.trim().is_empty());
    if last.is_some_and(|l| l.trim_start().starts_with("Ok::<")) {
        format!(
            "fn main() {{\n    fn _inner() -> ::core::result::Result<(), impl ::core::fmt::Debug> {{\n{block}    }}\n    _inner().unwrap();\n}}\n"
        )
    } else {
        format!("fn main() {{\n{block}}}\n")
    }
}

/// Builds every crate README's Rust examples in a project of its own outside the workspace, all
/// of them into one shared target directory.
pub fn build_all(root: &Path, manifest: &Manifest) -> Result<(), String> {
    let examples_root = target_dir(root).join("readme-examples");
    let shared_target = examples_root.join(SHARED_TARGET);
    let mut built = 0;
    for (dir, package) in manifest.crates() {
        if DEV_ONLY_CRATES.contains(&dir.as_str()) {
            continue;
        }
        let crate_dir = root.join("crates").join(&dir);
        let readme = std::fs::read_to_string(crate_dir.join("README.md"))
            .map_err(|err| format!("readme examples: crates/{dir}/README.md: {err}"))?;
        let blocks = rust_blocks(&readme);
        if blocks.is_empty() {
            continue;
        }
        let project = examples_root.join(&dir);
        write_project(
            &project, root, &crate_dir, &package, &dir, &blocks, manifest,
        )?;
        let mut build = cargo();
        build
            .current_dir(&project)
            .env("CARGO_TARGET_DIR", &shared_target)
            .args(["build", "--quiet", "--bins"]);
        step(
            &format!("README example of {package}, built outside the workspace"),
            build,
        )?;
        built += blocks.len();
    }
    println!("==> README examples: {built} built outside the workspace");
    Ok(())
}

/// The name, under `readme-examples/`, of the target directory every example project shares.
/// No crate directory has this name (`crates/target` would be odd), so it never clashes with a
/// project.
const SHARED_TARGET: &str = "target";

/// The workspace's target directory: `CARGO_TARGET_DIR` when set (relative to the current
/// directory, as cargo reads it), `target/` under the workspace root otherwise.
fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => {
            std::env::current_dir().map_or_else(|_| PathBuf::from(&dir), |cwd| cwd.join(&dir))
        }
        _ => root.join("target"),
    }
}

/// The manifest of the example project of `package` (at `crate_dir`): that crate alone, tokio
/// when an example uses it, its own workspace, and a profile for code that is built but never run.
fn project_manifest(
    dir: &str,
    package: &str,
    crate_dir: &Path,
    blocks: &[String],
    manifest: &Manifest,
) -> Result<String, String> {
    let mut toml = format!(
        "[package]\nname = \"readme-{dir}\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n{package} = {{ path = {path:?} }}\n",
        path = crate_dir.display().to_string()
    );
    if blocks.iter().any(|b| b.contains("tokio")) {
        let _ = writeln!(toml, "tokio = {}", manifest.dependency_spec("tokio")?);
    }
    // Its own workspace, so the agentsh workspace's members, features and profiles stay out.
    // Every project has the same profile, so the shared target directory serves them all.
    toml.push_str("\n[workspace]\n\n[profile.dev]\ndebug = false\nincremental = false\n");
    Ok(toml)
}

fn write_project(
    project: &Path,
    root: &Path,
    crate_dir: &Path,
    package: &str,
    dir: &str,
    blocks: &[String],
    manifest: &Manifest,
) -> Result<(), String> {
    let fail =
        |what: &Path, err: std::io::Error| format!("readme examples: {}: {err}", what.display());
    let bin_dir = project.join("src").join("bin");
    std::fs::create_dir_all(&bin_dir).map_err(|err| fail(&bin_dir, err))?;

    let mut files: Vec<(PathBuf, String)> = vec![(
        project.join("Cargo.toml"),
        project_manifest(dir, package, crate_dir, blocks, manifest)?,
    )];
    let lock = std::fs::read_to_string(root.join("Cargo.lock"))
        .map_err(|err| fail(&root.join("Cargo.lock"), err))?;
    files.push((project.join("Cargo.lock"), lock));
    for (i, block) in blocks.iter().enumerate() {
        let name = format!("{}_readme_{}.rs", dir.replace('-', "_"), i + 1);
        files.push((bin_dir.join(name), program(block)));
    }

    // A binary whose block is gone from the README goes too.
    let entries = std::fs::read_dir(&bin_dir).map_err(|err| fail(&bin_dir, err))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if !files.iter().any(|(wanted, _)| *wanted == path) {
            std::fs::remove_file(&path).map_err(|err| fail(&path, err))?;
        }
    }
    for (path, text) in &files {
        write_if_changed(path, text).map_err(|err| fail(path, err))?;
    }
    Ok(())
}

/// Writes `text` to `path` unless the file already holds it, so its modification time (and with
/// it cargo's view of whether the example must be rebuilt) changes only with its text.
fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(());
    }
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{program, project_manifest, rust_blocks};
    use crate::{Manifest, workspace_root};

    #[test]
    fn a_project_depends_on_its_crate_alone_in_a_workspace_of_its_own() {
        let manifest = Manifest::load(&workspace_root()).expect("workspace manifest");
        let crate_dir = Path::new("/src/crates/protocol");
        let plain = project_manifest(
            "protocol",
            "agentsh-protocol",
            crate_dir,
            &["let a = 1;\n".to_owned()],
            &manifest,
        )
        .expect("manifest");
        let table: toml::Table = plain.parse().expect("valid TOML");
        let deps = table["dependencies"].as_table().expect("dependencies");
        assert_eq!(deps.keys().collect::<Vec<_>>(), ["agentsh-protocol"]);
        assert_eq!(
            deps["agentsh-protocol"]["path"].as_str(),
            Some("/src/crates/protocol")
        );
        assert!(
            table["workspace"]
                .as_table()
                .is_some_and(toml::Table::is_empty)
        );
        assert_eq!(table["profile"]["dev"]["debug"].as_bool(), Some(false));

        let with_tokio = project_manifest(
            "protocol",
            "agentsh-protocol",
            crate_dir,
            &["tokio::spawn(async {});\n".to_owned()],
            &manifest,
        )
        .expect("manifest");
        let table: toml::Table = with_tokio.parse().expect("valid TOML");
        assert!(table["dependencies"].get("tokio").is_some());
    }

    #[test]
    fn takes_rust_and_untagged_blocks_and_skips_the_rest() {
        let md = "text\n```rust\nlet a = 1;\n```\n```sh\nls\n```\n```\nlet b = 2;\n```\n\
                  ```rust,ignore\nnope\n```\n```text\nplain\n```\n```no_run\nlet c = 3;\n```\n";
        assert_eq!(
            rust_blocks(md),
            ["let a = 1;\n", "let b = 2;\n", "let c = 3;\n"]
        );
    }

    #[test]
    fn hidden_lines_are_compiled_without_their_marker() {
        let md = "```rust\n# use std::io;\n#\nlet x = 1;\n## not hidden\n```\n";
        assert_eq!(
            rust_blocks(md),
            ["use std::io;\n\nlet x = 1;\n# not hidden\n"]
        );
    }

    #[test]
    fn longer_fences_contain_shorter_ones() {
        let md = "````rust\nlet s = \"```\";\n````\n";
        assert_eq!(rust_blocks(md), ["let s = \"```\";\n"]);
    }

    #[test]
    fn wraps_like_rustdoc() {
        assert_eq!(program("fn main() {}\n"), "fn main() {}\n");
        assert_eq!(program("let a = 1;\n"), "fn main() {\nlet a = 1;\n}\n");
        let wrapped =
            program("let a: u8 = \"1\".parse()?;\nOk::<(), std::num::ParseIntError>(())\n");
        assert!(
            wrapped.contains("fn _inner() -> ::core::result::Result<(), impl ::core::fmt::Debug>")
        );
        assert!(wrapped.ends_with("_inner().unwrap();\n}\n"));
    }
}
