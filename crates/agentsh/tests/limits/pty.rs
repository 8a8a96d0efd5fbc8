//! Resource limits of programs on a terminal, on the real binary: a PTY job over plain RPC
//! (`pty: true`), and a foreground call on the PTY runtime (`bash.virtual_terminal = "on"`, an
//! agent's call over `--listen`, the one RPC path whose calls run on a terminal). Each ends
//! with the same limit line and `details.limit` as a piped call, on this machine's mechanism
//! and again on the watchdog.

use std::time::Duration;

use serde_json::{Value, json};

use super::{
    CPU_LINE, MECHANISMS, MEMORY_HOG, MEMORY_LINE, call_tool, gated_memory_hog, rpc_on, text,
};
use crate::interactive::VIRTUAL_TERMINAL_ON;
use crate::interactive::listen::{Client, listening_with, tool_call};
use crate::util::{LIVENESS, Rpc, TestEnv};

/// A loop that spins in the shell itself (no child to measure: the shell's own CPU time
/// counts).
const SPIN: &str = "while :; do :; done";

/// Whether the hog printed its line (a shell's report of the killed hog quotes the command,
/// which holds the word too).
fn printed_allocated(text: &str) -> bool {
    text.lines().any(|line| line.trim() == "allocated")
}

/// Starts `command` as a PTY job; the start's result.
fn pty_job(rpc: &mut Rpc, id: &str, command: &str) -> Value {
    call_tool(
        rpc,
        id,
        "bash",
        &json!({ "command": command, "run_in_background": true, "pty": true }),
    )
}

/// Waits for the `job_end` event of job 1 (or finds it among `seen`); the event.
fn job_end(rpc: &Rpc) -> Value {
    let ended = rpc.until(LIVENESS, |line| line["type"] == "job_end");
    ended.last().expect("a job_end").clone()
}

#[test]
fn a_pty_job_over_its_memory_limit_ends_and_its_job_end_says_why() {
    for mechanism in MECHANISMS {
        let env = TestEnv::with_config("[limits]\nmemory = \"256MiB\"\n");
        let mut rpc = rpc_on(&env, mechanism);
        // The job holds a little memory, waits for a file, then grows past the limit.
        let go = env.root().join("go");
        let command = gated_memory_hog(&go);
        let started = pty_job(&mut rpc, "1", &command);
        assert!(
            text(&started).contains("Running in the background as job 1"),
            "{mechanism:?}: {started}"
        );
        assert_eq!(started["details"]["job"]["pty"], true, "{started}");
        let list = call_tool(&mut rpc, "2", "job_list", &json!({}));
        assert!(
            text(&list).contains(" of 256.0MB · "),
            "{mechanism:?}: {}",
            text(&list)
        );
        std::fs::write(&go, "").expect("write the go file");
        let end = job_end(&rpc);
        assert_eq!(end["reason"]["kind"], "memory", "{mechanism:?}: {end}");
        assert_eq!(end["reason"]["limit"], 256 << 20, "{end}");
        assert!(
            end["reason"]["used"].as_u64().expect("used") >= 256 << 20,
            "{end}"
        );
        let output = call_tool(&mut rpc, "3", "job_output", &json!({ "jobId": "1" }));
        let said = text(&output);
        assert!(
            said.contains(&format!("{MEMORY_LINE}\n\n[job 1: ")),
            "{mechanism:?}: {said}"
        );
        assert!(!printed_allocated(said), "{mechanism:?}: {said}");
        assert_eq!(output["details"]["limit"]["kind"], "memory", "{output}");
        rpc.close(LIVENESS);
    }
}

#[test]
fn a_pty_job_over_its_cpu_time_ends() {
    for mechanism in MECHANISMS {
        let env = TestEnv::with_config("[limits]\ncpu_time = 2\n");
        let mut rpc = rpc_on(&env, mechanism);
        let started = pty_job(&mut rpc, "1", SPIN);
        assert!(
            text(&started).contains("Running in the background as job 1"),
            "{mechanism:?}: {started}"
        );
        let end = job_end(&rpc);
        assert_eq!(end["reason"]["kind"], "cpu_time", "{mechanism:?}: {end}");
        assert_eq!(end["reason"]["limit"], 2, "{end}");
        let used = end["reason"]["used"].as_u64().expect("used");
        assert!((2..=4).contains(&used), "{mechanism:?}: {end}");
        let output = call_tool(&mut rpc, "2", "job_output", &json!({ "jobId": "1" }));
        assert!(
            text(&output).contains(&format!("{CPU_LINE}\n\n[job 1: ")),
            "{mechanism:?}: {output}"
        );
        rpc.close(LIVENESS);
    }
}

/// A PTY job that forks up to 300 sleeping children (bounded: never a fork bomb), then ends
/// and reaps them, under `processes = 20`: the kernel refuses its forks past the limit (a
/// cgroup), or the watchdog ends the tree once it sees more; either way the limit is told.
#[test]
fn a_pty_job_over_its_process_limit_is_told() {
    const FORKS: &str = "python3 -c 'import os, signal, time\nkids = []\nrefused = 0\nfor i in range(300):\n    try:\n        pid = os.fork()\n    except OSError:\n        refused += 1\n        continue\n    if pid == 0:\n        time.sleep(30)\n        os._exit(0)\n    kids.append(pid)\n    time.sleep(0.005)\nfor pid in kids:\n    os.kill(pid, signal.SIGKILL)\nfor pid in kids:\n    os.waitpid(pid, 0)\nprint(\"forked\", len(kids), \"refused\", refused)'";
    for mechanism in MECHANISMS {
        let env = TestEnv::with_config("[limits]\nprocesses = 20\n");
        let mut rpc = rpc_on(&env, mechanism);
        let started = pty_job(&mut rpc, "1", FORKS);
        assert_eq!(started["details"]["job"]["id"], "1", "{started}");
        let end = job_end(&rpc);
        assert_eq!(end["reason"]["kind"], "processes", "{mechanism:?}: {end}");
        assert_eq!(end["reason"]["limit"], 20, "{end}");
        let output = call_tool(&mut rpc, "2", "job_output", &json!({ "jobId": "1" }));
        assert!(
            text(&output).contains(
                "[Process limit: this command's processes reached 20 at once; more were refused (limits.processes)]"
            ),
            "{mechanism:?}: {output}"
        );
        rpc.close(LIVENESS);
    }
}

/// The result of a foreground call of `command` sent by `client` (`id` names the request).
fn listen_call(client: &mut Client, id: &str, command: &str) -> Value {
    client.send(&tool_call(id, &format!("c{id}"), command));
    let lines = client.until_response(id);
    let response = lines.last().expect("the response");
    assert_eq!(response["success"], true, "{response}");
    response["data"].clone()
}

#[test]
fn a_pty_call_over_its_memory_limit_ends_with_the_limit_line() {
    for mechanism in MECHANISMS {
        let config = format!("{VIRTUAL_TERMINAL_ON}\n[limits]\nmemory = \"256MiB\"\n");
        let vars: Vec<(&str, &str)> = mechanism
            .map(|m| ("AGENTSH_LIMITS_MECHANISM", m))
            .into_iter()
            .collect();
        let Some((_tui, socket)) = listening_with("limits_pty_memory", &config, &vars) else {
            return;
        };
        let mut client = Client::connect(&socket);
        // On the terminal: its width is the pane's, not the piped runtime's.
        let cols = listen_call(&mut client, "1", "tput cols");
        assert_eq!(text(&cols).trim(), "100", "{cols}");
        let result = listen_call(&mut client, "2", MEMORY_HOG);
        let said = text(&result);
        assert!(said.ends_with(MEMORY_LINE), "{mechanism:?}: {said}");
        assert!(!printed_allocated(said), "{mechanism:?}: {said}");
        assert_eq!(result["isError"], true, "{result}");
        assert_eq!(result["details"]["exitCode"], Value::Null, "{result}");
        let limit = &result["details"]["limit"];
        assert_eq!(limit["kind"], "memory", "{mechanism:?}: {result}");
        assert_eq!(limit["limit"], 256 << 20, "{result}");
        assert!(
            limit["used"].as_u64().expect("used") >= 256 << 20,
            "{result}"
        );
        // The next call runs as usual.
        let next = listen_call(&mut client, "3", "echo still");
        assert_eq!(text(&next).trim(), "still", "{mechanism:?}: {next}");
        assert!(next["details"].get("limit").is_none(), "{next}");
    }
}

#[test]
fn a_pty_call_over_its_cpu_time_ends_after_about_that_much_cpu() {
    for mechanism in MECHANISMS {
        let config = format!("{VIRTUAL_TERMINAL_ON}\n[limits]\ncpu_time = 2\n");
        let vars: Vec<(&str, &str)> = mechanism
            .map(|m| ("AGENTSH_LIMITS_MECHANISM", m))
            .into_iter()
            .collect();
        let Some((_tui, socket)) = listening_with("limits_pty_cpu", &config, &vars) else {
            return;
        };
        let mut client = Client::connect(&socket);
        let started = std::time::Instant::now();
        let result = listen_call(&mut client, "1", &format!("sh -c '{SPIN}'"));
        let said = text(&result);
        assert!(said.ends_with(CPU_LINE), "{mechanism:?}: {said}");
        let used = result["details"]["limit"]["used"].as_u64().expect("used");
        assert!((2..=4).contains(&used), "{mechanism:?}: {result}");
        assert_eq!(result["details"]["timedOut"], false, "{result}");
        // At least the CPU time it was allowed went by (a liveness bound only above).
        assert!(
            started.elapsed() >= Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }
}
