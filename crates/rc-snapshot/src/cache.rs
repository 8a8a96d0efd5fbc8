//! The cache key of a snapshot, the files kept under it and the private directory they live
//! in.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use agentsh_process::shell::{ShellKind, ShellSpec};
use sha2::{Digest, Sha256};

use crate::error::{SnapshotError, io_error};
use crate::failure::Failure;

/// A usable snapshot file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The file to `source` in a new shell of the same kind.
    pub path: PathBuf,
    /// True when the file was already cached and no shell was started to make it.
    pub from_cache: bool,
}

/// Version of the snapshot format and script, part of the cache key: a change to what a
/// snapshot contains bumps it, so old cached files are not reused.
const FORMAT_VERSION: &str = "agentsh-rc-snapshot-1";

/// The files of one cache key `<name>` (`<kind>-<hash>[-sandboxed]`) in the cache directory.
pub(crate) struct Entry {
    /// `<name>.sh`: the snapshot.
    pub(crate) snapshot: PathBuf,
    /// `<name>.failed`: the remembered failure.
    pub(crate) failed: PathBuf,
    /// `<name>.lock`: locked while a process makes the snapshot.
    pub(crate) lock: PathBuf,
}

impl Entry {
    /// The files of `name` in `dir`.
    pub(crate) fn new(dir: &Path, name: &str) -> Self {
        Self {
            snapshot: dir.join(format!("{name}.sh")),
            failed: dir.join(format!("{name}.failed")),
            lock: dir.join(format!("{name}.lock")),
        }
    }

    /// What the cache already knows for a run with the time box `timeout`: the snapshot, or a
    /// remembered failure of `rc` that applies; `None` when it has to be made.
    pub(crate) fn lookup(
        &self,
        rc: &Path,
        timeout: std::time::Duration,
    ) -> Option<Result<Option<Snapshot>, SnapshotError>> {
        if self.snapshot.is_file() {
            return Some(Ok(Some(Snapshot {
                path: self.snapshot.clone(),
                from_cache: true,
            })));
        }
        // A record that cannot be read counts as none: the snapshot is tried again.
        let failure = fs::read_to_string(&self.failed)
            .ok()
            .and_then(|text| Failure::parse(&text))
            .filter(|failure| failure.applies_to(timeout))?;
        Some(Err(SnapshotError::Remembered {
            rc: rc.to_path_buf(),
            warning: failure.warning,
        }))
    }
}

/// The files whose size and mtime key the cache: the rc file and, for bash, `~/.bash_aliases`.
pub(crate) fn key_files(kind: ShellKind, home: &Path) -> Vec<PathBuf> {
    match kind {
        ShellKind::Bash => vec![home.join(".bashrc"), home.join(".bash_aliases")],
        ShellKind::Zsh => vec![home.join(".zshrc")],
        ShellKind::Sh => Vec::new(),
    }
}

/// Hex SHA-256 (first 128 bits) of everything a snapshot depends on.
pub(crate) fn cache_key(shell: &ShellSpec, files: &[PathBuf], path_var: Option<&OsStr>) -> String {
    let mut hasher = Sha256::new();
    let mut field = |bytes: &[u8]| {
        // Length-prefixed, so that field boundaries cannot shift.
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    field(FORMAT_VERSION.as_bytes());
    field(shell.kind.name().as_bytes());
    field(shell.path.as_os_str().as_bytes());
    field(&file_stamp(&shell.path));
    for file in files {
        field(file.as_os_str().as_bytes());
        field(&file_stamp(file));
    }
    match path_var {
        Some(path) => field(path.as_bytes()),
        None => field(b"\0no PATH"),
    }
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(32);
    for byte in &digest[..16] {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// Size and mtime (nanoseconds) of a file, or a fixed stamp for a missing one.
fn file_stamp(path: &Path) -> Vec<u8> {
    match fs::metadata(path) {
        Ok(meta) => {
            let mut stamp = Vec::with_capacity(24);
            stamp.extend_from_slice(&meta.size().to_le_bytes());
            stamp.extend_from_slice(&meta.mtime().to_le_bytes());
            stamp.extend_from_slice(&meta.mtime_nsec().to_le_bytes());
            stamp
        }
        Err(_) => b"missing".to_vec(),
    }
}

/// Creates `dir` (and missing parents) with mode 0700 and checks that it is a real directory
/// owned by this user that no one else can enter; a directory of ours with a wider mode is
/// narrowed to 0700.
pub(crate) fn ensure_private_dir(dir: &Path) -> Result<(), SnapshotError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|error| io_error("create", dir, error))?;
    let meta = fs::symlink_metadata(dir).map_err(|error| io_error("inspect", dir, error))?;
    if !meta.is_dir() || meta.uid() != rustix::process::geteuid().as_raw() {
        return Err(SnapshotError::CacheDirNotPrivate {
            path: dir.to_path_buf(),
        });
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|error| io_error("set permissions of", dir, error))?;
    }
    Ok(())
}
