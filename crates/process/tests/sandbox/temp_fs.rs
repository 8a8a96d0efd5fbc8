//! A temp dir of limited size ([`SandboxSpec::temp_fs`]): one tmpfs, mounted at the temp dir
//! in each sandboxed child's mount namespace, the same files in every one of them, `ENOSPC`
//! past its size, and nothing of it on the host's side.

use agentsh_process::sandbox::TempFs;

use super::*;

/// `mode`'s policy for `dirs`, with `dirs.tmp` its temp dir and `temp_fs` mounted there.
fn sized(mode: SandboxMode, dirs: &Dirs, temp_fs: &TempFs) -> SandboxSpec {
    let mut policy = policy(mode, dirs, false);
    policy.temp_dir = Some(dirs.tmp.clone());
    policy.temp_fs = Some(temp_fs.clone());
    policy
}

#[test]
fn every_child_shares_one_tmpfs_that_refuses_writes_past_its_size() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let temp_fs = TempFs::new(1 << 20).expect("a 1 MiB tmpfs");
    assert_eq!(temp_fs.bytes(), 1 << 20);
    for mode in [SandboxMode::WorkspaceWrite, SandboxMode::ReadOnly] {
        // The first child writes a small file, then more than the size.
        let (code, out) = run(
            sized(mode, &dirs, &temp_fs),
            &dirs,
            "echo kept > \"$TMPDIR/small\" && echo small=$?
             head -c 2000000 /dev/zero > \"$TMPDIR/big\"; echo big=$?
             rm \"$TMPDIR/big\"
             stat -c %a \"$TMPDIR\"; df -k --output=size \"$TMPDIR\" | tail -1 | tr -d ' '",
        );
        assert_eq!(code, 0, "{mode}: {out}");
        has_line(&out, "small=0");
        has_line(&out, "big=1");
        assert!(
            out.contains("No space left on device"),
            "{mode}: the write past the size fails with ENOSPC:\n{out}"
        );
        has_line(&out, "700");
        has_line(&out, "1024");
        // A second child, in a mount namespace of its own, sees the same file.
        let (code, out) = run(sized(mode, &dirs, &temp_fs), &dirs, "cat \"$TMPDIR/small\"");
        assert_eq!((code, out.as_str()), (0, "kept\n"), "{mode}");
        // The host sees the empty directory below the mount.
        no_entries(&dirs.tmp);
    }
}

#[test]
fn a_child_without_the_tmpfs_writes_to_the_directory_itself() {
    if !sandbox_available() {
        return;
    }
    let dirs = dirs();
    let temp_fs = TempFs::new(1 << 20).expect("a 1 MiB tmpfs");
    let (code, _) = run(
        sized(SandboxMode::WorkspaceWrite, &dirs, &temp_fs),
        &dirs,
        "echo in-tmpfs > \"$TMPDIR/f\"",
    );
    assert_eq!(code, 0);
    let mut plain = policy(SandboxMode::WorkspaceWrite, &dirs, false);
    plain.temp_dir = Some(dirs.tmp.clone());
    let (code, out) = run(
        plain,
        &dirs,
        "cat \"$TMPDIR/f\" 2>&1; echo x > \"$TMPDIR/g\"",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("No such file"), "{out}");
    assert!(dirs.tmp.join("g").exists());
}
