//! `cargo xtask vm-test`: the resource-limit tests under a real cgroup v2 kernel, for hosts
//! (as CI's) whose own kernel offers only cgroup v1 or no writable cgroups. It boots a Debian
//! kernel in a virtual machine with virtme-ng (`vng`), which runs this host's own userspace and
//! this checkout inside it (read-only, with a private `/tmp`), as root in the root cgroup of a
//! pure cgroup v2 hierarchy; there agentsh picks the cgroup v2 mechanism, which the run checks
//! (`agentsh doctor`) before it runs the limits tests of the binary, the shell executor and the
//! process crate.
//!
//! What it needs is installed by `scripts/install-vm-test-deps` (qemu, a Debian kernel package,
//! busybox for virtme-ng's initramfs, virtme-ng from PyPI). The kernel is the newest
//! `/boot/vmlinuz-*`, or `AGENTSH_VM_KERNEL`. The machine runs under software emulation unless
//! `AGENTSH_VM_KVM=1` (a nested KVM may hang at boot, as it did on the machines this was
//! written on); then a run takes a few minutes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The line the script inside the machine ends with: its exit status.
const RESULT_MARK: &str = "agentsh-vm-test-result:";

/// The test binaries to run inside, each with its name filter (libtest's arguments: a filter,
/// then any `--skip`). The far-side tests over a real sshd are left out: the machine has no
/// sshd to reach (its kernel mechanisms are what it is booted for); those over `unshare` run.
const SUITES: [(&str, &str, &str); 3] = [
    (
        "agentsh",
        "--test=integration",
        "limits:: --skip remote::limits::a_far_side_",
    ),
    ("agentsh-shell-executor", "--test=integration", "limits::"),
    ("agentsh-process", "--lib", "limits::"),
];

/// `cargo xtask vm-test`.
pub fn run(args: &[String], root: &Path) -> Result<(), String> {
    if !args.is_empty() {
        return Err("usage: cargo xtask vm-test".to_owned());
    }
    let kernel = kernel()?;
    for (program, package) in [
        ("vng", "virtme-ng (pip)"),
        ("qemu-system-x86_64", "qemu-system-x86"),
        ("busybox", "busybox-static"),
    ] {
        if which(program).is_none() {
            return Err(format!(
                "vm-test needs {program} ({package}): run scripts/install-vm-test-deps"
            ));
        }
    }
    let agentsh = build(
        root,
        &["build", "-p", "agentsh", "--bin", "agentsh"],
        "agentsh",
    )?;
    let mut script = format!(
        "set -u\nstatus=0\nline=$({} doctor 2>&1 | grep 'resource limits')\necho \"$line\"\n\
         case $line in *'cgroup v2'*) ;; *) echo 'vm-test: agentsh did not pick cgroup v2'; status=1 ;; esac\n",
        agentsh.display()
    );
    for (package, target, filter) in SUITES {
        let tests = build(
            root,
            &["test", "--no-run", "-p", package, target],
            target
                .trim_start_matches("--test=")
                .trim_start_matches("--"),
        )?;
        let _ = writeln!(
            script,
            "echo '==> {package} {filter}'\n{} {filter} --test-threads 2 || status=1",
            tests.display()
        );
    }
    let _ = writeln!(script, "echo \"{RESULT_MARK} $status\"");
    println!("==> vm-test: booting {} (cgroup v2)", kernel.display());
    let mut vng = Command::new("vng");
    if std::env::var_os("AGENTSH_VM_KVM").is_none_or(|value| value != "1") {
        vng.arg("--disable-kvm");
    }
    vng.args(["--memory", "2G", "--cpus", "2", "--user", "root", "--cwd"])
        .arg(root)
        .arg("--run")
        .arg(&kernel)
        .arg("--")
        .arg(&script)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    let output = vng
        .output()
        .map_err(|err| format!("vm-test: cannot start vng: {err}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    print!("{text}");
    match text
        .lines()
        .rev()
        .find_map(|line| line.trim().strip_prefix(RESULT_MARK))
        .map(str::trim)
    {
        Some("0") => {
            println!("==> vm-test: every limits test passed under cgroup v2");
            Ok(())
        }
        Some(status) => Err(format!(
            "vm-test: tests failed in the machine (status {status})"
        )),
        None => Err(format!(
            "vm-test: the machine ended without a result ({})",
            output.status
        )),
    }
}

/// The kernel to boot: `AGENTSH_VM_KERNEL`, else the newest `/boot/vmlinuz-*`.
fn kernel() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("AGENTSH_VM_KERNEL") {
        return Ok(PathBuf::from(path));
    }
    let mut kernels: Vec<PathBuf> = std::fs::read_dir("/boot")
        .map_err(|err| format!("vm-test: cannot read /boot: {err}"))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("vmlinuz-"))
        })
        .collect();
    kernels.sort();
    kernels.pop().ok_or_else(|| {
        "vm-test needs a kernel in /boot (linux-image-amd64): run scripts/install-vm-test-deps"
            .to_owned()
    })
}

/// Runs `cargo <args> --message-format=json` and returns the executable of the artifact whose
/// target is `name`.
fn build(root: &Path, args: &[&str], name: &str) -> Result<PathBuf, String> {
    let output = crate::cargo()
        .current_dir(root)
        .args(args)
        .arg("--message-format=json")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|err| format!("vm-test: cannot run cargo: {err}"))?;
    if !output.status.success() {
        return Err(format!("vm-test: cargo {} failed", args.join(" ")));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter(|message| {
            message["target"]["name"] == name
                || (name == "lib" && message["target"]["kind"][0] == "lib")
        })
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("vm-test: cargo {} built no {name}", args.join(" ")))
}

/// The path of `program` on `PATH`.
fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|candidate| candidate.is_file())
    })
}
