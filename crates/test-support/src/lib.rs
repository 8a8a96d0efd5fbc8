//! Dev-only helpers shared by agentsh's integration tests.
//!
//! Containment tests start commands with a unique argv marker (`sleep 100.4711`) and then check
//! `/proc` that nothing carrying it is still alive. One scan, used by every crate's tests:
//!
//! ```
//! // Nothing runs with this argument.
//! assert!(agentsh_test_support::alive_with_arg("no-such-marker-8c1f").is_empty());
//! ```
#![deny(missing_docs)]

/// Pids of live (not zombie) processes for which `matches(cmdline)` holds; `cmdline` is the raw
/// NUL-separated `/proc/<pid>/cmdline`. Processes that end during the scan are skipped.
pub fn live_processes(matches: impl Fn(&[u8]) -> bool) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| matches(&cmdline))
                && !is_zombie(*pid)
        })
        .collect()
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

/// Whether `pid` is a zombie (or already gone).
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
