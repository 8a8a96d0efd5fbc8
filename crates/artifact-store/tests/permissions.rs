//! The store directory is 0700 and artifact files 0600, read back from disk, whatever the umask.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use agentsh_artifact_store::{ArtifactStore, RetentionPolicy};

use crate::child;
use crate::util::{artifact, artifact_path, mode, open};

#[test]
fn new_store_and_parents_are_private_and_files_0600() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("state").join("agentsh").join("artifacts");
    let store = open(&dir);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&tmp.path().join("state")), 0o700);
    assert_eq!(mode(&tmp.path().join("state").join("agentsh")), 0o700);
    let spill = store.allocate().expect("allocate");
    assert_eq!(mode(spill.path()), 0o600, "reserved file");
    drop(spill);
    artifact(&store, b"x\n");
    assert_eq!(mode(&artifact_path(&store, 2)), 0o600, "written file");
}

#[test]
fn an_existing_store_directory_is_made_private_again() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("artifacts");
    fs::create_dir(&dir).expect("mkdir");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).expect("chmod");
    assert_eq!(mode(&dir), 0o755);
    open(&dir);
    assert_eq!(mode(&dir), 0o700);
}

#[test]
fn a_store_path_that_is_a_file_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("artifacts");
    fs::write(&path, b"not a dir").expect("write");
    let err =
        ArtifactStore::open(&path, RetentionPolicy::default()).expect_err("a file is not a store");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "cannot create artifact store {}: ",
            path.display()
        )),
        "{text}"
    );
}

/// Runs the `umask` child: it sets `mask`, opens a store in `dir` and writes one artifact.
fn with_umask(mask: &str, dir: &Path) -> PathBuf {
    let paths = child::run(
        &mut child::command("umask", dir, None, mask),
        "ARTIFACT-PATH",
    );
    assert_eq!(paths.len(), 1);
    PathBuf::from(&paths[0])
}

#[test]
fn permissive_umask_still_gives_private_modes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("open").join("artifacts");
    let file = with_umask("000", &dir);
    assert_eq!(file, dir.join("1.bash.log"));
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&tmp.path().join("open")), 0o700);
    assert_eq!(mode(&file), 0o600);
    assert_store_files_private(&dir);
}

/// The store's own files, its id counter and retention stamp, are 0600.
fn assert_store_files_private(dir: &Path) {
    for name in agentsh_test_support::ARTIFACT_STORE_FILES {
        assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
    }
}

#[test]
fn restrictive_umask_still_gives_usable_private_modes() {
    // 0277 would leave 0500 directories and 0400 files; the store restores 0700 and 0600.
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("artifacts");
    let file = with_umask("277", &dir);
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(fs::read(&file).expect("read"), b"private\n");
    assert_store_files_private(&dir);
}

/// `ArtifactStore::default_dir()` in a child with exactly `env` set (XDG_STATE_HOME, HOME).
fn default_dir_with(env: &[(&str, &str)]) -> String {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut command = child::command("default-dir", tmp.path(), None, "");
    command.env_remove("XDG_STATE_HOME").env_remove("HOME");
    for (key, value) in env {
        command.env(key, value);
    }
    let mut lines = child::run(&mut command, "DEFAULT-DIR");
    assert_eq!(lines.len(), 1);
    lines.remove(0)
}

#[test]
fn default_dir_follows_the_xdg_rule() {
    assert_eq!(
        default_dir_with(&[("XDG_STATE_HOME", "/s"), ("HOME", "/h")]),
        "/s/agentsh/artifacts"
    );
    assert_eq!(
        default_dir_with(&[("HOME", "/h")]),
        "/h/.local/state/agentsh/artifacts"
    );
    assert_eq!(
        default_dir_with(&[("XDG_STATE_HOME", "relative"), ("HOME", "/h")]),
        "/h/.local/state/agentsh/artifacts"
    );
    assert_eq!(
        default_dir_with(&[("XDG_STATE_HOME", ""), ("HOME", "/h")]),
        "/h/.local/state/agentsh/artifacts"
    );
    assert_eq!(
        default_dir_with(&[]),
        "error: cannot locate the artifact store: XDG_STATE_HOME and HOME are unset or not \
         absolute; set artifacts.dir"
    );
}
