//! Retention passes: age, then size oldest first; files in use and files that are not
//! artifacts are never removed; a pass on request starts only when the last is a period old.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::Duration;

use agentsh_artifact_store::{
    ArtifactStore, DEFAULT_RETENTION_MAX_AGE_DAYS, DEFAULT_RETENTION_MAX_BYTES, RetentionPolicy,
    RetentionReport, Spill,
};

use crate::child;
use crate::util::{age, artifact, artifact_path, days, hours, names, new_store};

/// Foreign entries placed in the store; retention must leave every one of them alone.
const FOREIGN: [&str; 6] = [
    "notes.txt",
    "5.bash.log.bak",
    "007.bash.log",
    "bash.log",
    "9.txt",
    "18446744073709551616.bash.log",
];

fn add_foreign_entries(dir: &Path, outside: &Path) {
    for name in FOREIGN {
        fs::write(dir.join(name), vec![b'f'; 4096]).expect("write foreign file");
        age(&dir.join(name), days(365));
    }
    fs::create_dir(dir.join("77.bash.log")).expect("mkdir");
    fs::write(outside, b"outside\n").expect("write");
    age(outside, days(365));
    symlink(outside, dir.join("88.bash.log")).expect("symlink");
}

/// Every artifact not in use goes: all are "old" and any size is too much.
const NOTHING_KEPT: RetentionPolicy = RetentionPolicy {
    max_age_days: 0,
    max_bytes: 0,
};

/// The store at `dir` opened again with `policy`, and the report of a pass run on it now.
fn reopen(dir: &Path, policy: RetentionPolicy) -> (ArtifactStore, RetentionReport) {
    let store = ArtifactStore::open(dir, policy).expect("reopen");
    let report = store.retain();
    (store, report)
}

#[test]
fn defaults_are_seven_days_and_one_gib() {
    assert_eq!(DEFAULT_RETENTION_MAX_AGE_DAYS, 7);
    assert_eq!(DEFAULT_RETENTION_MAX_BYTES, 1_073_741_824);
    assert_eq!(
        RetentionPolicy::default(),
        RetentionPolicy {
            max_age_days: 7,
            max_bytes: 1_073_741_824
        }
    );
}

#[test]
fn artifacts_older_than_max_age_are_removed_oldest_first() {
    let (tmp, store) = new_store();
    for _ in 0..4 {
        artifact(&store, b"output\n");
    }
    age(&artifact_path(&store, 1), days(8));
    age(&artifact_path(&store, 2), days(6));
    age(&artifact_path(&store, 3), days(30));
    add_foreign_entries(store.dir(), &tmp.path().join("outside"));
    let before = names(store.dir());
    let dir = store.dir().to_owned();
    drop(store);

    let (store, report) = reopen(&dir, RetentionPolicy::default());
    assert_eq!(report.removed, [3, 1]);
    assert_eq!(report.removed_bytes, 14);
    assert!(report.in_use.is_empty());
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(store.ids().expect("ids"), [2, 4]);
    let mut expected = before;
    expected.retain(|name| name != "1.bash.log" && name != "3.bash.log");
    assert_eq!(names(&dir), expected);
    assert_eq!(
        fs::read(tmp.path().join("outside")).expect("read"),
        b"outside\n"
    );
}

#[test]
fn above_max_bytes_the_oldest_are_removed_until_under() {
    let (_tmp, store) = new_store();
    // Modification order differs from id order: oldest is 2, then 4, 3, 1.
    for (len, mtime_age) in [
        (100, hours(1)),
        (200, hours(4)),
        (300, hours(2)),
        (400, hours(3)),
    ] {
        let id = artifact(&store, &vec![b'x'; len]);
        age(&artifact_path(&store, id), mtime_age);
    }
    let dir = store.dir().to_owned();
    drop(store);

    let policy = RetentionPolicy {
        max_bytes: 600,
        ..RetentionPolicy::default()
    };
    let (store, report) = reopen(&dir, policy);
    // 1000 bytes: remove 2 (200) → 800, remove 4 (400) → 400 ≤ 600.
    assert_eq!(report.removed, [2, 4]);
    assert_eq!(report.removed_bytes, 600);
    assert_eq!(store.ids().expect("ids"), [1, 3]);

    // Exactly at the limit nothing more goes.
    let (_, report) = reopen(
        &dir,
        RetentionPolicy {
            max_bytes: 400,
            ..policy
        },
    );
    assert!(report.removed.is_empty());
    let (store, report) = reopen(
        &dir,
        RetentionPolicy {
            max_bytes: 399,
            ..policy
        },
    );
    assert_eq!(report.removed, [3]);
    assert_eq!(store.ids().expect("ids"), [1]);
}

#[test]
fn the_most_aggressive_policy_spares_files_in_use_and_foreign_files() {
    let (tmp, store) = new_store();
    artifact(&store, b"done\n");
    // In use: written and finished but still open; old and large.
    let mut busy = store.allocate().expect("allocate");
    busy.write_all(&vec![b'b'; 10_000]).expect("write");
    busy.finish().expect("finish");
    age(busy.path(), days(100));
    // In use: reserved, nothing written yet, old.
    let empty = store.allocate().expect("allocate");
    age(empty.path(), days(100));
    add_foreign_entries(store.dir(), &tmp.path().join("outside"));
    let dir = store.dir().to_owned();

    let (second, report) = reopen(&dir, NOTHING_KEPT);
    assert_eq!(report.removed, [1]);
    assert_eq!(report.in_use, [2, 3]);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(second.ids().expect("ids"), [2, 3]);
    for name in FOREIGN {
        assert_eq!(
            fs::read(dir.join(name)).expect("foreign file").len(),
            4096,
            "{name}"
        );
    }
    assert!(dir.join("77.bash.log").is_dir());
    assert!(
        fs::symlink_metadata(dir.join("88.bash.log"))
            .expect("symlink")
            .is_symlink()
    );

    // Once the reservations end, the next open removes the written one; the empty one removed
    // itself on drop.
    drop(busy);
    drop(empty);
    let (third, report) = reopen(&dir, NOTHING_KEPT);
    assert_eq!(report.removed, [2]);
    assert_eq!(third.ids().expect("ids"), Vec::<u64>::new());
}

#[test]
fn a_file_in_use_by_another_process_is_never_removed() {
    let (_tmp, dir, signals) = child::store_and_signals();
    let mut holder = child::command("hold", &dir, Some(&signals), "")
        .spawn()
        .expect("spawn child");
    let id: u64 = child::wait_for_line(&mut holder, "ARTIFACT-ID")
        .parse()
        .expect("numeric id");
    let path = dir.join(format!("{id}.bash.log"));
    age(&path, days(100));

    let (_, report) = reopen(&dir, NOTHING_KEPT);
    assert_eq!(report.in_use, [id]);
    assert!(report.removed.is_empty());
    assert_eq!(
        fs::read(&path).expect("still there"),
        b"held by another process\n"
    );

    fs::write(signals.join("release"), b"").expect("release signal");
    let output = holder.wait_with_output().expect("wait child");
    assert!(output.status.success(), "{output:?}");
    let (_, report) = reopen(&dir, NOTHING_KEPT);
    assert_eq!(report.removed, [id]);
    assert!(!path.exists());
}

#[test]
fn a_pass_on_request_starts_only_when_the_last_is_a_period_old() {
    let (_tmp, store) = new_store();
    let old = artifact(&store, b"old\n");
    age(&artifact_path(&store, old), days(30));
    let dir = store.dir().to_owned();
    drop(store);

    let store = ArtifactStore::open(&dir, RetentionPolicy::default()).expect("open");
    // Opening removes nothing by itself.
    assert_eq!(store.ids().expect("ids"), [old]);
    let pass = store
        .retain_when_due(Duration::from_secs(60))
        .expect("a store never retained is due");
    let report = pass.join().expect("retention thread");
    assert_eq!(report.removed, [old]);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(store.ids().expect("ids"), Vec::<u64>::new());

    // Within the period no pass starts, from this store or another opened on the directory.
    let second = artifact(&store, b"second\n");
    age(&artifact_path(&store, second), days(30));
    assert!(store.retain_when_due(Duration::from_secs(60)).is_none());
    let other = ArtifactStore::open(&dir, RetentionPolicy::default()).expect("open");
    assert!(other.retain_when_due(Duration::from_secs(60)).is_none());
    assert_eq!(other.ids().expect("ids"), [second]);

    // A shorter period makes it due again.
    let pass = other
        .retain_when_due(Duration::ZERO)
        .expect("due with a zero period");
    assert_eq!(pass.join().expect("retention thread").removed, [second]);
}
