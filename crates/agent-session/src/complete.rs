//! The `complete` query: the names a word typed at a prompt may become, read on the session's
//! side (so a far side lists its own files and programs). Only names are read: a directory's
//! entries and their types, never a file's contents.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use agentsh_protocol::wire::{COMPLETIONS_MAX, CompletionKind, Completions};

/// The names `word` may become: entries of its directory (relative to `cwd`; `~/` is the
/// home directory) or commands: the functions and aliases of the session's rc `snapshot` (its
/// text) and the programs on its `PATH` (the snapshot's, else `path_var`), sorted, at most
/// [`COMPLETIONS_MAX`].
pub(crate) fn complete(
    cwd: &Path,
    word: &str,
    kind: CompletionKind,
    path_var: Option<&OsStr>,
    snapshot: Option<&str>,
) -> Completions {
    match kind {
        CompletionKind::Path => paths(cwd, word),
        CompletionKind::Command => {
            let known = snapshot.map(SnapshotNames::read).unwrap_or_default();
            let path_var = known.path.as_deref().map(OsStr::new).or(path_var);
            let mut found = commands(word, path_var);
            if !known.names.is_empty() {
                let mut names: BTreeSet<String> = found.names.into_iter().collect();
                names.extend(
                    known
                        .names
                        .into_iter()
                        .filter(|name| name.starts_with(word)),
                );
                found.names = names.into_iter().take(COMPLETIONS_MAX).collect();
            }
            found
        }
    }
}

/// What an rc snapshot tells of the commands its shells have: the names of its functions
/// (`name () ` lines, as `declare -f` writes them) and aliases (`alias name=…`), and the
/// `PATH` it exports.
#[derive(Debug, Default, PartialEq, Eq)]
struct SnapshotNames {
    names: Vec<String>,
    path: Option<String>,
}

impl SnapshotNames {
    fn read(text: &str) -> Self {
        let mut known = Self::default();
        for line in text.lines() {
            if let Some(name) = line.trim_end().strip_suffix(" ()")
                && !name.is_empty()
                && !name.contains(char::is_whitespace)
            {
                known.names.push(name.to_owned());
            } else if let Some(rest) = line.strip_prefix("alias ")
                && let Some((name, _)) = rest.split_once('=')
            {
                known.names.push(name.to_owned());
            } else if let Some(value) = line.strip_prefix("export PATH=") {
                let unquoted = value
                    .strip_prefix('\'')
                    .and_then(|v| v.strip_suffix('\''))
                    .or_else(|| value.strip_prefix('"').and_then(|v| v.strip_suffix('"')))
                    .unwrap_or(value);
                known.path = Some(unquoted.to_owned());
            }
        }
        known
    }
}

/// Entries of `word`'s directory whose names start with the rest of it; a directory's (or a
/// link to one) with a trailing `/`.
fn paths(cwd: &Path, word: &str) -> Completions {
    let (dir_part, start) = match word.rfind('/') {
        Some(at) => (&word[..=at], &word[at + 1..]),
        None => ("", word),
    };
    let dir = directory(cwd, dir_part);
    let Ok(entries) = fs::read_dir(&dir) else {
        return Completions::default();
    };
    let hidden = start.starts_with('.');
    let mut names = BTreeSet::new();
    let mut more = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with(start) || (!hidden && name.starts_with('.')) {
            continue;
        }
        if names.len() >= COMPLETIONS_MAX {
            more = true;
            break;
        }
        let is_dir = match entry.file_type() {
            Ok(kind) if kind.is_symlink() => entry.path().is_dir(),
            Ok(kind) => kind.is_dir(),
            Err(_) => false,
        };
        names.insert(if is_dir {
            format!("{name}/")
        } else {
            name.to_owned()
        });
    }
    Completions {
        names: names.into_iter().collect(),
        more,
    }
}

/// The directory a word's directory part names: `""` is `cwd`, `~/…` the home directory's,
/// an absolute path itself, anything else relative to `cwd`.
fn directory(cwd: &Path, dir_part: &str) -> PathBuf {
    if dir_part.is_empty() {
        return cwd.to_path_buf();
    }
    if let Some(rest) = dir_part.strip_prefix("~/")
        && let Some(home) = std::env::var_os("HOME")
    {
        return Path::new(&home).join(rest);
    }
    cwd.join(dir_part)
}

/// Programs on `path_var` (executable files) whose names start with `word`, each once.
fn commands(word: &str, path_var: Option<&OsStr>) -> Completions {
    let mut names = BTreeSet::new();
    let mut more = false;
    let Some(path_var) = path_var else {
        return Completions::default();
    };
    for dir in std::env::split_paths(path_var) {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if !name.starts_with(word) || names.contains(name) {
                continue;
            }
            // Links are followed: most of /usr/bin's alternatives are links.
            let executable = fs::metadata(entry.path())
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0);
            if !executable {
                continue;
            }
            if names.len() >= COMPLETIONS_MAX {
                more = true;
                break;
            }
            names.insert(name.to_owned());
        }
    }
    Completions {
        names: names.into_iter().collect(),
        more,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_list_the_words_directory_with_directories_marked() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir(dir.path().join("src")).expect("mkdir");
        fs::write(dir.path().join("src/main.rs"), "").expect("write");
        fs::write(dir.path().join("src/mod.rs"), "").expect("write");
        fs::write(dir.path().join("src/.hidden"), "").expect("write");
        fs::write(dir.path().join("setup.sh"), "").expect("write");
        let names = |word| complete(dir.path(), word, CompletionKind::Path, None, None).names;
        assert_eq!(names("s"), ["setup.sh", "src/"]);
        assert_eq!(names("src/m"), ["main.rs", "mod.rs"]);
        assert_eq!(names("src/."), [".hidden"], "hidden ones only when asked");
        assert_eq!(names("src/"), ["main.rs", "mod.rs"]);
        assert!(names("nowhere/x").is_empty());
    }

    #[test]
    fn commands_are_executables_on_path_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (one, two) = (dir.path().join("one"), dir.path().join("two"));
        for bin in [&one, &two] {
            fs::create_dir(bin).expect("mkdir");
        }
        let script = |path: PathBuf, mode| {
            fs::write(&path, "#!/bin/sh\n").expect("write");
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).expect("chmod");
        };
        script(one.join("mytool"), 0o755);
        script(two.join("mytool"), 0o755);
        script(two.join("mytext"), 0o644);
        script(two.join("myother"), 0o700);
        let path_var = std::env::join_paths([&one, &two]).expect("PATH");
        let found = complete(
            dir.path(),
            "my",
            CompletionKind::Command,
            Some(path_var.as_os_str()),
            None,
        );
        assert_eq!(found.names, ["myother", "mytool"]);
        // The rc snapshot's functions and aliases, and its PATH (here: only `one`).
        let snapshot = format!(
            "# agentsh rc snapshot\nmyfunc () \n{{ \n    echo my\n}}\nalias myalias='ls -l'\n\
             alias other='x'\nshopt -s expand_aliases\nexport PATH='{}'\n",
            one.display()
        );
        let found = complete(
            dir.path(),
            "my",
            CompletionKind::Command,
            Some(path_var.as_os_str()),
            Some(&snapshot),
        );
        assert_eq!(found.names, ["myalias", "myfunc", "mytool"]);
    }
}
