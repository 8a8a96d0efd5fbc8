//! `listen`: the socket file's mode, stale and live sockets, what is never removed.

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};

use agentsh_rpc::{ListenError, listen};
use serde_json::json;

use crate::util::{Served, World};

#[test]
fn the_socket_file_is_the_users_alone() {
    let world = World::new("");
    let path = world.socket_path();
    let runtime = agentsh_test_support::runtime();
    let _entered = runtime.enter();
    let listener = listen(&path).expect("listen");
    let meta = std::fs::symlink_metadata(&path).expect("the socket file");
    assert!(meta.file_type().is_socket());
    assert_eq!(meta.permissions().mode() & 0o7777, 0o600);
    assert_eq!(listener.path(), path);
}

#[test]
fn a_stale_socket_is_replaced() {
    let world = World::new("");
    let path = world.socket_path();
    // A server that died: its socket file stays, nobody accepts on it.
    drop(std::os::unix::net::UnixListener::bind(&path).expect("bind"));
    assert!(std::os::unix::net::UnixStream::connect(&path).is_err());
    let served = Served::start(&world, None);
    let mut client = served.connect();
    client.send(&json!({"id": "1", "type": "bash", "command": "echo served"}));
    assert_eq!(client.response("1")["data"]["output"], "served\n");
}

#[test]
fn a_live_socket_is_refused_naming_the_path() {
    let world = World::new("");
    let path = world.socket_path();
    let live = std::os::unix::net::UnixListener::bind(&path).expect("bind");
    let before = std::fs::symlink_metadata(&path).expect("the live socket");
    let runtime = agentsh_test_support::runtime();
    let _entered = runtime.enter();
    let err = listen(&path).expect_err("someone listens there");
    assert!(matches!(err, ListenError::Live(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains(&path.display().to_string()) && text.contains("another agentsh is listening"),
        "{text}"
    );
    let after = std::fs::symlink_metadata(&path).expect("still there");
    assert_eq!(after.ino(), before.ino(), "the live socket is left alone");
    // And it still works.
    let _client = std::os::unix::net::UnixStream::connect(&path).expect("connect");
    live.accept().expect("the live server accepts");
}

#[test]
fn what_is_not_a_socket_is_refused_and_left_intact() {
    let world = World::new("");
    let path = world.socket_path();
    std::fs::write(&path, "precious\n").expect("write a file");
    let runtime = agentsh_test_support::runtime();
    let _entered = runtime.enter();
    let err = listen(&path).expect_err("a regular file");
    assert!(matches!(err, ListenError::NotASocket(_)), "{err:?}");
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "precious\n");

    // A directory and a symbolic link to a stale socket are not sockets either.
    let dir = world.root().join("a-dir");
    std::fs::create_dir(&dir).expect("mkdir");
    assert!(matches!(listen(&dir), Err(ListenError::NotASocket(_))));
    assert!(dir.is_dir());
    let stale = world.root().join("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).expect("bind"));
    let link = world.root().join("link.sock");
    std::os::unix::fs::symlink(&stale, &link).expect("symlink");
    assert!(matches!(listen(&link), Err(ListenError::NotASocket(_))));
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("the link")
            .file_type()
            .is_symlink()
    );
}

#[test]
fn dropping_the_listener_removes_only_its_own_socket_file() {
    let world = World::new("");
    let path = world.socket_path();
    let runtime = agentsh_test_support::runtime();
    let _entered = runtime.enter();
    drop(listen(&path).expect("listen"));
    assert!(!path.exists(), "its socket file is removed");

    // Someone else's file put in its place since is left alone.
    let listener = listen(&path).expect("listen again");
    std::fs::remove_file(&path).expect("remove");
    std::fs::write(&path, "someone else's\n").expect("write");
    drop(listener);
    assert_eq!(
        std::fs::read_to_string(&path).expect("still there"),
        "someone else's\n"
    );
}

#[test]
fn serving_ends_by_removing_the_socket_file() {
    let world = World::new("");
    let mut served = Served::start(&world, None);
    assert!(world.socket_path().exists());
    served.shut_down();
    assert!(!world.socket_path().exists());
}
