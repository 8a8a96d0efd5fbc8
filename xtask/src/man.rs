//! `cargo xtask man [DIR]`: the man pages of `agentsh`, from its clap definitions
//! (`clap_mangen`): `agentsh.1` and one page per subcommand (`agentsh-exec.1`, …), written to
//! `DIR` (default: `target/man`). Read one with `man -l target/man/agentsh.1`; install them by
//! copying them into a `man1` directory of `manpath`.

use std::path::{Path, PathBuf};

use clap::CommandFactory;

/// Writes the pages into `dir` (made if missing) and returns their paths, `agentsh.1` first.
pub fn write_pages(dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|err| format!("cannot make {}: {err}", dir.display()))?;
    let command = agentsh_cli::Cli::command();
    clap_mangen::generate_to(command, dir)
        .map_err(|err| format!("cannot write the man pages into {}: {err}", dir.display()))?;
    let mut pages: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|err| format!("cannot read {}: {err}", dir.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("agentsh") && name.ends_with(".1"))
        })
        .collect();
    pages.sort_by_key(|path| (path.file_name() != Some("agentsh.1".as_ref()), path.clone()));
    Ok(pages)
}

/// `cargo xtask man [DIR]`.
pub fn run(args: &[String], root: &Path) -> Result<(), String> {
    let dir = match args {
        [] => root.join("target").join("man"),
        [dir] => PathBuf::from(dir),
        _ => return Err("usage: cargo xtask man [DIR]".to_owned()),
    };
    for page in write_pages(&dir)? {
        println!("{}", page.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    /// The pages render with the system's `man` (as a user reads them), naming every mode.
    #[test]
    fn man_renders_the_pages() {
        let dir = tempfile::tempdir().expect("temp dir");
        let pages = write_pages(dir.path()).expect("pages");
        assert_eq!(pages[0].file_name(), Some("agentsh.1".as_ref()));
        let names: Vec<_> = pages
            .iter()
            .filter_map(|page| page.file_name()?.to_str().map(str::to_owned))
            .collect();
        for mode in [
            "exec",
            "artifact",
            "rpc",
            "mcp",
            "policy",
            "doctor",
            "completions",
        ] {
            assert!(
                names.contains(&format!("agentsh-{mode}.1")),
                "no page for {mode}: {names:?}"
            );
        }
        let output = Command::new("man")
            .args(["-P", "cat", "-l"])
            .arg(&pages[0])
            .env("MANWIDTH", "100")
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("man (scripts/install-test-deps installs man-db)");
        assert!(output.status.success(), "man failed: {output:?}");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains("agentsh"), "{text}");
        for mode in ["exec", "artifact", "rpc", "mcp", "doctor", "completions"] {
            assert!(text.contains(mode), "{mode} is not in the page:\n{text}");
        }
        assert!(
            text.contains("The bash tool runtime of an LLM coding agent"),
            "{text}"
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("warning"), "man warned: {stderr}");
    }
}
