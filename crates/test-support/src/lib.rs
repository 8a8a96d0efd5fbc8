//! Dev-only helpers shared by agentsh's integration tests (and benchmarks).
//!
//! - [`alive_with_arg`] / [`alive_containing`] / [`live_processes`] — containment tests start
//!   commands with a unique argv marker (`sleep 100.4711`) and then check `/proc` that nothing
//!   carrying it is still alive. One scan, used by every crate's tests. It reads `/proc` on its
//!   own on purpose, not through `agentsh-process`: a containment test must not trust the code
//!   it tests to find the survivors.
//! - [`runtime`] — the tokio runtime the async tests run on.
//! - [`which`] — a program on `PATH` (the `bash` a test pins its shell to).
//! - [`sorted_names`] — the names in a directory, sorted (what a store or private directory
//!   holds after a call).
//! - [`rerun_with_env`] — runs one test again in a copy of its test binary with an environment
//!   variable set (a process-wide mode, such as containment without cgroups, that must not
//!   leak into the other tests of the binary).
//! - [`tmux`] — a program in a pane of a private tmux server: keys in (`send-keys`), screens
//!   out (`capture-pane`), resize, exit status; the interactive mode's tests drive the binary
//!   with it, as a person at a terminal would.
//! - [`sshd`] — a private OpenSSH server on `127.0.0.1` with its client config (keys, a
//!   pre-filled `known_hosts`, the far side's own `HOME`), and variants that fail on the host
//!   key or the client key: the remote-execution tests run agentsh over it.
//! - `session` (feature `session`) — a scripted fake `SessionHandle`: the MCP server's tests
//!   drive it instead of a session.
//!
//! ```
//! // Nothing runs with this argument.
//! assert!(agentsh_test_support::alive_with_arg("no-such-marker-8c1f").is_empty());
//! let answer = agentsh_test_support::runtime().block_on(async { 6 * 7 });
//! assert_eq!(answer, 42);
//! assert!(agentsh_test_support::which("sh").is_some_and(|sh| sh.is_absolute()));
//! ```
#![deny(missing_docs)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[cfg(feature = "session")]
pub mod session;
pub mod sshd;
pub mod tmux;

/// A multi-threaded tokio runtime with two workers (the CI machine has two cores) and every
/// driver enabled: what the tests of the runtimes run on.
///
/// # Panics
///
/// When the runtime cannot be built (no threads or no epoll): nothing can be tested then.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime for the tests")
}

/// The first file called `name` in a directory of `PATH` (found by existence, as `which` would
/// without checking the execute bit).
pub fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

/// The NL2Bash corpus kept in the repository (`fixtures/corpora`), one command per line.
///
/// # Panics
///
/// When the file cannot be read: the checkout is incomplete.
pub fn nl2bash_corpus() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/corpora/nl2bash-commands.txt"
    );
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("cannot read {path}: {err}"))
}

/// How many descriptors this process has open (`/proc/self/fd`; 0 without `/proc`).
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

/// Runs the test `test` (its full path in the test binary, `module::name`) again in a new
/// process of the current test binary with `var=1`, and panics with its output unless it ran
/// and passed. Inside that copy (`var` set already) it does nothing and returns false, so a
/// test can call it at its end to run itself once more; true when the copy ran.
///
/// # Panics
///
/// When the copy cannot be started, fails, or did not run exactly that test.
pub fn rerun_with_env(test: &str, var: &str) -> bool {
    if std::env::var_os(var).is_some() {
        return false;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let output = std::process::Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads", "1"])
        .env(var, "1")
        .output()
        .expect("the test binary starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{test} with {var}=1 failed or did not run:\n{stdout}\n{stderr}"
    );
    true
}

/// Pids of live (not zombie) processes for which `matches(cmdline)` holds; `cmdline` is the raw
/// NUL-separated `/proc/<pid>/cmdline`. Processes that end during the scan are skipped.
pub fn live_processes(matches: impl Fn(&[u8]) -> bool) -> Vec<u32> {
    proc_pids()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| matches(&cmdline))
                && !is_zombie(*pid)
        })
        .collect()
}

/// The pids `/proc` lists now (none when it cannot be read).
pub(crate) fn proc_pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
}

/// Pids of live processes with an argument equal to `arg` (`sleep 100.4711` matches
/// `100.4711`; a shell whose script merely mentions it does not).
pub fn alive_with_arg(arg: &str) -> Vec<u32> {
    live_processes(|cmdline| cmdline.split(|&b| b == 0).any(|a| a == arg.as_bytes()))
}

/// Pids of live processes whose command line contains `marker` anywhere.
pub fn alive_containing(marker: &str) -> Vec<u32> {
    live_processes(|cmdline| {
        !marker.is_empty()
            && cmdline
                .windows(marker.len())
                .any(|window| window == marker.as_bytes())
    })
}

/// Sends `signal` to `pid`; `false` when it could not be sent (the process is gone, or the pid
/// does not fit a `pid_t`).
pub fn send_signal(pid: u32, signal: libc::c_int) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill(2) has no memory effects; a pid that is gone yields ESRCH.
    unsafe { libc::kill(pid, signal) == 0 }
}

/// A string found in no other process's command line (`<prefix>-<pid>-<n>-<nanos>`): put it in
/// a command's argv to find the command's processes in `/proc` ([`alive_containing`]).
pub fn unique_marker(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{prefix}-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A command that sleeps 100 s in a child of an `sh` whose argv holds `marker`.
pub fn marked_sleep(marker: &str) -> String {
    format!("sh -c 'sleep 100; : {marker}'")
}

/// Waits (at most `limit`) until a process with `marker` runs: the command really started.
/// Panics (a test failure) otherwise.
pub fn wait_for_process(marker: &str, limit: Duration) {
    let deadline = Instant::now() + limit;
    while alive_containing(marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "no process with {marker} started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Asserts that no process with `marker` is left, allowing `grace` for the last to be reaped.
pub fn assert_no_survivor(marker: &str, grace: Duration) {
    let deadline = Instant::now() + grace;
    loop {
        let left = alive_containing(marker);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes survived: {left:?} ({marker})"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` is a zombie (or already gone).
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// The store's own files beside its artifacts: the id counter and the retention stamp.
pub const ARTIFACT_STORE_FILES: [&str; 2] = [".next-id", ".retention-stamp"];

/// The names in the artifact store `dir`, sorted, without the store's own files
/// ([`ARTIFACT_STORE_FILES`]): the artifacts and whatever else is there.
pub fn artifact_store_names(dir: &std::path::Path) -> Vec<String> {
    let mut names = sorted_names(dir);
    names.retain(|name| !ARTIFACT_STORE_FILES.contains(&name.as_str()));
    names
}

/// The names of the entries of `dir`, sorted. Panics (a test failure) when `dir` cannot be read.
pub fn sorted_names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| {
            entry
                .expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_finds_files_on_path_only() {
        let sh = which("sh").expect("sh on PATH");
        assert_eq!(sh.file_name().and_then(|n| n.to_str()), Some("sh"));
        assert!(sh.is_file());
        assert_eq!(which("agentsh-no-such-program-8c1f"), None);
    }

    #[test]
    fn finds_a_running_child_by_argument_and_not_after_it_is_reaped() {
        let marker = format!("{}.{}", 100, std::process::id());
        let mut child = std::process::Command::new("sleep")
            .arg(&marker)
            .spawn()
            .expect("sleep starts");
        // The child shows its own argv only once it has exec'd `sleep`: wait for that.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while alive_with_arg(&marker).is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(alive_with_arg(&marker), [child.id()]);
        assert_eq!(alive_containing(&marker), [child.id()]);
        assert!(
            alive_with_arg(&marker[1..]).is_empty(),
            "whole arguments only"
        );
        child.kill().expect("kill");
        // A killed but unreaped child is a zombie: not alive.
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(alive_with_arg(&marker).is_empty());
        child.wait().expect("reaped");
        assert!(alive_containing(&marker).is_empty());
    }
}
