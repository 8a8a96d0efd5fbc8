//! Ids: increasing, continued across reopen, unique across threads and processes; the fate of a
//! reservation's file.

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::os::unix::fs::symlink;

use agentsh_artifact_store::Spill;

use crate::child;
use crate::util::{age, artifact, artifact_path, days, mode, names, new_store, open};

#[test]
fn ids_start_at_one_and_continue_after_reopen() {
    let (tmp, store) = new_store();
    let ids: Vec<u64> = (0..3).map(|_| artifact(&store, b"x\n")).collect();
    assert_eq!(ids, [1, 2, 3]);
    drop(store);
    let store = open(&tmp.path().join("artifacts"));
    assert_eq!(artifact(&store, b"x\n"), 4);
    assert_eq!(store.ids().expect("ids"), [1, 2, 3, 4]);
}

#[test]
fn reopen_continues_after_the_highest_id_despite_gaps_and_foreign_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("artifacts");
    fs::create_dir(&dir).expect("mkdir");
    for name in [
        "1.bash.log",
        "5.bash.log",
        "17.txt",
        "99.bash.log.old",
        "0100.bash.log", // not canonical: not an artifact
        "x7.bash.log",
        "notes",
    ] {
        fs::write(dir.join(name), b"data\n").expect("write");
    }
    fs::create_dir(dir.join("200")).expect("mkdir");
    let store = open(&dir);
    assert_eq!(artifact(&store, b"y\n"), 6);
    assert_eq!(artifact(&store, b"y\n"), 7);
    assert_eq!(store.ids().expect("ids"), [1, 5, 6, 7]);
    assert_eq!(
        names(&dir),
        [
            "0100.bash.log",
            "1.bash.log",
            "17.txt",
            "200",
            "5.bash.log",
            "6.bash.log",
            "7.bash.log",
            "99.bash.log.old",
            "notes",
            "x7.bash.log",
        ]
    );
}

#[test]
fn ids_removed_by_retention_do_not_come_back() {
    let (tmp, store) = new_store();
    for _ in 0..3 {
        artifact(&store, b"old\n");
    }
    age(&artifact_path(&store, 3), days(30));
    drop(store);
    let store = open(&tmp.path().join("artifacts"));
    assert_eq!(store.retain().removed, [3]);
    assert_eq!(artifact(&store, b"new\n"), 4);
}

#[test]
fn a_store_whose_ids_collide_with_another_store_skips_ahead() {
    let (tmp, first) = new_store();
    // Opened before `first` allocates, so both start at id 1, as two processes would.
    let second = open(&tmp.path().join("artifacts"));
    for expected in 1..=20 {
        assert_eq!(artifact(&first, b"first\n"), expected);
    }
    assert_eq!(artifact(&second, b"second\n"), 21);
    assert_eq!(artifact(&first, b"first\n"), 22);
    assert_eq!(
        fs::read(artifact_path(&first, 21)).expect("read"),
        b"second\n"
    );
}

#[test]
fn threads_sharing_a_store_get_distinct_ids() {
    let (_tmp, store) = new_store();
    let ids: Vec<u64> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    (0..100)
                        .map(|_| artifact(&store, b"t\n"))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().expect("worker"))
            .collect()
    });
    let distinct: BTreeSet<u64> = ids.iter().copied().collect();
    assert_eq!(distinct.len(), 400);
    assert_eq!(distinct, (1..=400).collect());
}

#[test]
fn two_processes_allocating_in_one_folder_never_collide() {
    const PER_CHILD: usize = 1_000;
    let (_tmp, store_dir, signals) = child::store_and_signals();

    let children: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|label| {
            let arg = format!("{label}:{PER_CHILD}");
            let child = child::command("allocate", &store_dir, Some(&signals), &arg)
                .spawn()
                .expect("spawn child");
            (label, child)
        })
        .collect();
    // Both have opened the store (so both start from the same next id) before either allocates.
    child::wait_for_file(&signals.join("ready-a"));
    child::wait_for_file(&signals.join("ready-b"));
    fs::write(signals.join("go"), b"").expect("go signal");

    let mut all = HashSet::new();
    let store = open(&store_dir);
    for (label, process) in children {
        let output = process.wait_with_output().expect("wait child");
        let ids = child::values(&output, "ARTIFACT-ID");
        assert_eq!(ids.len(), PER_CHILD, "child {label}");
        for id in ids {
            let text = store.read(&id, None, None).expect("read artifact");
            assert_eq!(
                text.text,
                format!("{label}\n"),
                "artifact {id} of child {label}"
            );
            assert!(all.insert(id.clone()), "id {id} given to both children");
        }
    }
    assert_eq!(all.len(), 2 * PER_CHILD);
    assert_eq!(store.ids().expect("ids").len(), 2 * PER_CHILD);
}

#[test]
fn an_unused_reservation_is_removed_on_drop() {
    let (_tmp, store) = new_store();
    let spill = store.allocate().expect("allocate");
    let path = spill.path().to_owned();
    assert_eq!(path, artifact_path(&store, 1));
    assert!(path.is_file(), "the id is reserved by its file");
    drop(spill);
    assert!(!path.exists());
    assert_eq!(store.ids().expect("ids"), Vec::<u64>::new());
}

#[test]
fn an_unused_finished_reservation_is_removed_on_drop() {
    let (_tmp, store) = new_store();
    let mut spill = store.allocate().expect("allocate");
    spill.write_all(b"").expect("empty write");
    spill.finish().expect("finish");
    let path = spill.path().to_owned();
    drop(spill);
    assert!(!path.exists());
}

#[test]
fn a_used_reservation_keeps_exactly_the_bytes_written() {
    let (_tmp, store) = new_store();
    // Chunks below, at and above the 64 KiB write buffer, with lengths that do not divide it.
    let data: Vec<u8> = (0..300_000u32)
        .map(|i| b"abcdefghij\n"[(i % 11) as usize])
        .collect();
    let mut spill: Box<dyn Spill> = Box::new(store.allocate().expect("allocate"));
    let mut rest = &data[..];
    for size in [1, 7, 65_536, 3, 100_000, 65_535].into_iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (chunk, tail) = rest.split_at(size.min(rest.len()));
        spill.write_all(chunk).expect("write");
        rest = tail;
    }
    spill.finish().expect("finish");
    let id = spill.id().to_owned();
    drop(spill);
    assert_eq!(id, "1");
    assert_eq!(fs::read(artifact_path(&store, 1)).expect("read"), data);
}

#[test]
fn finish_makes_the_bytes_visible_while_the_reservation_lives() {
    let (_tmp, store) = new_store();
    let mut spill = store.allocate().expect("allocate");
    spill.write_all(b"partial\n").expect("write");
    assert_eq!(spill.bytes_written(), 8);
    assert_eq!(fs::read(spill.path()).expect("read"), b"", "still buffered");
    spill.finish().expect("finish");
    assert_eq!(fs::read(spill.path()).expect("read"), b"partial\n");
}

#[test]
fn a_used_reservation_dropped_without_finish_is_flushed_and_kept() {
    let (_tmp, store) = new_store();
    let mut spill = store.allocate().expect("allocate");
    spill.write_all(b"no finish\n").expect("write");
    drop(spill);
    assert_eq!(
        fs::read(artifact_path(&store, 1)).expect("read"),
        b"no finish\n"
    );
}

#[test]
fn discard_removes_the_file_used_or_not() {
    let (_tmp, store) = new_store();
    let mut used: Box<dyn Spill> = Box::new(store.allocate().expect("allocate"));
    used.write_all(b"will go\n").expect("write");
    used.finish().expect("finish");
    let unused: Box<dyn Spill> = Box::new(store.allocate().expect("allocate"));
    assert!(artifact_path(&store, 1).exists());
    assert!(artifact_path(&store, 2).exists());
    used.discard();
    unused.discard();
    assert_eq!(names(store.dir()), Vec::<String>::new());
    // Discarded ids are not handed out again by this store.
    assert_eq!(artifact(&store, b"next\n"), 3);
}

#[test]
fn allocation_skips_a_symlink_named_like_the_next_id() {
    let (tmp, store) = new_store();
    let outside = tmp.path().join("outside.txt");
    fs::write(&outside, b"outside\n").expect("write");
    symlink(&outside, store.dir().join("1.bash.log")).expect("symlink");
    assert_eq!(artifact(&store, b"mine\n"), 2);
    assert_eq!(fs::read(&outside).expect("read"), b"outside\n");
}

#[test]
fn a_store_directory_removed_while_open_is_made_again() {
    let (_tmp, store) = new_store();
    assert_eq!(artifact(&store, b"before\n"), 1);
    fs::remove_dir_all(store.dir()).expect("remove store");
    // The attempt that found no directory used up id 2; ids only have to keep increasing.
    let id = artifact(&store, b"after\n");
    assert!(id > 1, "id {id}");
    assert_eq!(mode(store.dir()), 0o700);
    assert_eq!(store.ids().expect("ids"), [id]);
    assert_eq!(
        fs::read(artifact_path(&store, id)).expect("read"),
        b"after\n"
    );
}
