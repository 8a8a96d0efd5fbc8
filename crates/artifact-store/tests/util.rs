//! Helpers shared by the test modules.

use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use agentsh_artifact_store::{ArtifactStore, RetentionPolicy, Spill};

/// A fresh temporary directory and a store in `<tmp>/artifacts`.
pub fn new_store() -> (tempfile::TempDir, ArtifactStore) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = open(&tmp.path().join("artifacts"));
    (tmp, store)
}

/// Opens the store in `dir` with the default policy.
pub fn open(dir: &Path) -> ArtifactStore {
    ArtifactStore::open(dir, RetentionPolicy::default()).expect("open store")
}

/// Allocates an artifact, writes `bytes`, finishes it and ends the reservation; returns its id.
pub fn artifact(store: &ArtifactStore, bytes: &[u8]) -> u64 {
    let mut spill = store.allocate().expect("allocate");
    spill.write_all(bytes).expect("write");
    spill.finish().expect("finish");
    spill.id().parse().expect("numeric id")
}

/// `mode & 0o7777` of `path` as stored on disk.
pub fn mode(path: &Path) -> u32 {
    fs::metadata(path).expect("metadata").permissions().mode() & 0o7777
}

/// Sets the modification time of `path` to `age` ago.
pub fn age(path: &Path, age: Duration) {
    let when = SystemTime::now() - age;
    File::options()
        .write(true)
        .open(path)
        .expect("open for mtime")
        .set_modified(when)
        .expect("set mtime");
}

/// `n` days.
pub fn days(n: u64) -> Duration {
    Duration::from_secs(n * 86_400)
}

/// `n` hours.
pub fn hours(n: u64) -> Duration {
    Duration::from_secs(n * 3_600)
}

/// The path of artifact `id` in `store`.
pub fn artifact_path(store: &ArtifactStore, id: u64) -> PathBuf {
    store.dir().join(format!("{id}.bash.log"))
}

/// Every name in `dir` but the store's own files, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    agentsh_test_support::artifact_store_names(dir)
}
