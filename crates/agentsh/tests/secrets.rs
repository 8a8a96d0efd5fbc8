//! Secrets through the real binary: a token in agentsh's environment, a token and a private
//! key in no variable, printed whole, byte by byte, deep in a large output, by a background job
//! and over MCP — redacted in the result, the live updates, the artifact file and the job log;
//! and, as the positive control, kept with `[secrets] enabled = false`.

use serde_json::{Value, json};

use crate::util::{LIVENESS, Rpc, TestEnv};

/// The token agentsh's environment holds (its name matches the default `*TOKEN*`).
const TOKEN: &str = "s3cr3t-0123456789-abcdef";
/// A GitHub token in no variable.
const GHP: &str = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123";

fn rpc(env: &TestEnv) -> Rpc {
    let config = env.config_path();
    let mut command = env.command(&["rpc", "--config", config.to_str().expect("utf-8")]);
    command.env("GITHUB_TOKEN", TOKEN);
    Rpc::spawn(command)
}

/// A `tool_call` of `bash` for `command`: its events (updates) and its result.
fn call(rpc: &mut Rpc, id: &str, arguments: &Value) -> (Vec<Value>, Value) {
    call_tool(rpc, id, "bash", arguments)
}

/// A `tool_call` of tool `name`: its events (updates) and its result.
fn call_tool(rpc: &mut Rpc, id: &str, name: &str, arguments: &Value) -> (Vec<Value>, Value) {
    rpc.send_json(
        &json!({"id": id, "type": "tool_call", "toolCallId": id, "name": name,
        "arguments": arguments}),
    );
    let mut lines = rpc.until(LIVENESS * 3, |line| {
        line["type"] == "response" && line["id"] == id
    });
    let response = lines.pop().expect("the response");
    assert_eq!(response["success"], true, "{response}");
    (lines, response["data"].clone())
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// No secret anywhere in `what`.
#[track_caller]
fn assert_clean(what: &str, context: &str) {
    for secret in [TOKEN, GHP, "MIIEowIBAAKCAQEA"] {
        assert!(!what.contains(secret), "{context}: {secret} in {what:?}");
    }
}

/// The artifact file named in `result`'s notice, read from the store on disk.
fn artifact_file(env: &TestEnv, result: &Value) -> String {
    let id = result["details"]["meta"]["truncation"]["artifactId"]
        .as_str()
        .unwrap_or_else(|| panic!("an artifact: {result}"));
    let path = std::fs::read_dir(env.artifacts_dir())
        .expect("the store")
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with(id))
        })
        .unwrap_or_else(|| panic!("no file for artifact {id}"));
    std::fs::read_to_string(path).expect("read the artifact")
}

#[test]
fn secrets_are_redacted_in_results_updates_artifacts_and_jobs() {
    let env = TestEnv::new();
    let mut rpc = rpc(&env);

    let (_, result) = call(
        &mut rpc,
        "env",
        &json!({"command": "printenv GITHUB_TOKEN"}),
    );
    assert_eq!(text(&result), "[REDACTED:GITHUB_TOKEN]", "{result}");

    // One byte at a time, with pauses: the value crosses many reads.
    let (updates, result) = call(
        &mut rpc,
        "slow",
        &json!({"command": "v=$(printenv GITHUB_TOKEN); for ((i=0; i<${#v}; i++)); do printf %s \"${v:i:1}\"; sleep 0.02; done; echo"}),
    );
    assert_eq!(text(&result), "[REDACTED:GITHUB_TOKEN]", "{result}");
    for update in &updates {
        assert_clean(&update.to_string(), "a live update");
    }

    // A token and a private-key block that are in no variable.
    let (_, result) = call(
        &mut rpc,
        "patterns",
        &json!({"command": format!(
            "echo token {GHP} here; printf -- '-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA\\nzzzz\\n-----END RSA PRIVATE KEY-----\\n'"
        )}),
    );
    assert_eq!(
        text(&result),
        "token [REDACTED:github-token] here\n[REDACTED:private-key]",
        "{result}"
    );

    // 2 MB of output with the secret near the end: the result's tail, its counts and the
    // artifact file on disk are of the redacted text.
    let (_, result) = call(
        &mut rpc,
        "large",
        &json!({"command": "seq 1 300000; printenv GITHUB_TOKEN; echo end"}),
    );
    let shown = text(&result);
    assert!(
        shown.contains("[REDACTED:GITHUB_TOKEN]\nend"),
        "{}",
        &shown[shown.len().saturating_sub(300)..]
    );
    let file = artifact_file(&env, &result);
    assert!(
        file.ends_with("300000\n[REDACTED:GITHUB_TOKEN]\nend\n"),
        "the artifact's end"
    );
    assert_clean(&file, "the artifact");
    assert_eq!(
        result["details"]["meta"]["truncation"]["totalLines"], 300_002,
        "{result}"
    );
    assert_eq!(
        result["details"]["meta"]["truncation"]["totalBytes"],
        file.len(),
        "counts are of the redacted text"
    );

    // A background job: its output, its log.
    let (_, started) = call(
        &mut rpc,
        "job",
        &json!({"command": "printenv GITHUB_TOKEN; echo " .to_owned() + GHP, "run_in_background": true}),
    );
    assert_clean(&started.to_string(), "the job's start");
    // Its last line, whether the starting result showed it or it comes later.
    rpc.send_json(
        &json!({"id": "out", "type": "tool_call", "toolCallId": "out",
        "name": "job_output", "arguments": {"jobId": "1", "until": "REDACTED:github-token", "wait": 60}}),
    );
    let output = rpc.response("out");
    let shown = output["data"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let all = format!("{}\n{shown}", text(&started));
    assert!(all.contains("[REDACTED:GITHUB_TOKEN]"), "{all}");
    assert!(all.contains("[REDACTED:github-token]"), "{all}");
    assert_clean(&all, "the job's output");
    for entry in std::fs::read_dir(env.artifacts_dir())
        .expect("the store")
        .flatten()
    {
        if entry.path().is_file() {
            let bytes = std::fs::read(entry.path()).expect("read");
            assert_clean(&String::from_utf8_lossy(&bytes), "an artifact or log file");
        }
    }
    rpc.close(LIVENESS);
}

#[test]
fn with_secrets_off_the_same_value_is_kept() {
    let env = TestEnv::with_config("[secrets]\nenabled = false\n");
    let mut rpc = rpc(&env);
    let (_, result) = call(
        &mut rpc,
        "env",
        &json!({"command": "printenv GITHUB_TOKEN"}),
    );
    assert_eq!(text(&result), TOKEN, "{result}");
    rpc.close(LIVENESS);
}

#[test]
fn an_mcp_tool_call_and_an_artifact_resource_are_redacted() {
    let env = TestEnv::new();
    let config = env.config_path();
    let mut command = env.command(&["mcp", "--config", config.to_str().expect("utf-8")]);
    command.env("GITHUB_TOKEN", TOKEN);
    let mut mcp = Rpc::spawn(command);
    let answer = |mcp: &mut Rpc, id: &str, method: &str, params: Value| -> Value {
        mcp.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        mcp.until(LIVENESS * 3, |line| {
            line.get("method").is_none() && line["id"] == id
        })
        .pop()
        .expect("the answer")
    };
    answer(
        &mut mcp,
        "init",
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "secrets-test", "version": "0"}}),
    );
    mcp.send(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);
    let called = answer(
        &mut mcp,
        "call",
        "tools/call",
        json!({"name": "bash", "arguments": {"command": "seq 1 200000; printenv GITHUB_TOKEN"}}),
    );
    let shown = called["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(shown.contains("[REDACTED:GITHUB_TOKEN]"), "{called}");
    assert_clean(&called.to_string(), "the MCP result");
    let uri = shown
        .split("Full: ")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_else(|| panic!("an artifact uri in {shown}"))
        .to_owned();
    let read = answer(&mut mcp, "read", "resources/read", json!({"uri": uri}));
    let contents = read["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        contents.ends_with("[REDACTED:GITHUB_TOKEN]\n"),
        "{}",
        &read.to_string()[..300.min(read.to_string().len())]
    );
    assert_clean(contents, "the MCP resource");
    mcp.close(LIVENESS);
}

/// A PTY job's screen, a bang command's text (its command line too) and the audit log.
#[test]
fn screens_bang_texts_and_the_audit_log_are_redacted() {
    let audit = tempfile::tempdir().expect("temp dir");
    let audit_file = audit.path().join("audit.jsonl");
    let env = TestEnv::with_config(&format!(
        "[audit]\nenabled = true\npath = \"{}\"\n",
        audit_file.display()
    ));
    let mut rpc = rpc(&env);
    let (_, started) = call(
        &mut rpc,
        "pty",
        &json!({"command": "printenv GITHUB_TOKEN; sleep 1", "run_in_background": true, "pty": true}),
    );
    rpc.send_json(
        &json!({"id": "screen", "type": "tool_call", "toolCallId": "screen",
        "name": "job_output", "arguments": {"jobId": "1", "wait": 10}}),
    );
    let screen = rpc.response("screen");
    let all = format!("{}\n{screen}", text(&started));
    assert!(all.contains("[REDACTED:GITHUB_TOKEN]"), "{all}");
    assert_clean(&all, "the PTY job");

    rpc.send_json(&json!({"id": "bang", "type": "bash",
        "command": format!("echo {TOKEN} {GHP}")}));
    let bang = rpc.response("bang");
    let bang_text = bang["data"]["text"].as_str().unwrap_or_default();
    assert!(
        bang_text.starts_with("Ran `echo [REDACTED:GITHUB_TOKEN] [REDACTED:github-token]`"),
        "{bang}"
    );
    assert_clean(&bang.to_string(), "the bang response");

    call(
        &mut rpc,
        "typed",
        &json!({"command": format!("echo {GHP} > /dev/null")}),
    );
    rpc.close(LIVENESS);
    let log = std::fs::read_to_string(&audit_file).expect("the audit log");
    assert!(log.contains("[REDACTED:github-token]"), "{log}");
    assert_clean(&log, "the audit log");
}

/// A 32-byte value whose variable's name matches `*_KEY`.
const API_KEY: &str = "Kzy6kRk9ODOLs1k6rk0aZ3pQ8xWm2Lh7";

/// The reported leak: a PTY job printing a value one byte at a time, its screen read
/// meanwhile, showed all of the value printed so far. Every screen read now shows at most its
/// first 3 bytes (`[REDACTED…]` from the 4th on) and, once complete, the variable's name.
#[test]
fn a_value_printed_slowly_on_a_pty_screen_shows_no_more_than_three_bytes() {
    assert_eq!(API_KEY.len(), 32);
    let env = TestEnv::new();
    let config = env.config_path();
    let mut command = env.command(&["rpc", "--config", config.to_str().expect("utf-8")]);
    command.env("MY_API_KEY", API_KEY);
    let mut rpc = Rpc::spawn(command);
    let leaked = &API_KEY[..4];
    // It waits for a line first: the polls begin before the value does, however long the
    // start took.
    let (_, started) = call(
        &mut rpc,
        "job",
        &json!({"command": "read -r _; printf key=; v=$MY_API_KEY; for ((i=0; i<${#v}; i++)); do printf %s \"${v:i:1}\"; sleep 0.03; done; echo; echo done",
                "run_in_background": true, "pty": true}),
    );
    let id = started["details"]["job"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a job: {started}"))
        .to_owned();
    let (_, typed) = call_tool(
        &mut rpc,
        "go",
        "job_input",
        &json!({"jobId": id, "text": "\n", "wait": 0}),
    );
    let mut answers = vec![started, typed];
    let deadline = std::time::Instant::now() + LIVENESS * 3;
    for n in 0.. {
        let (_, answer) = call_tool(
            &mut rpc,
            &format!("poll-{n}"),
            "job_output",
            &json!({"jobId": id}),
        );
        let ended = answer["details"]["job"]["state"] != "running";
        answers.push(answer);
        if ended {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the job did not end");
    }
    for answer in &answers {
        let shown = answer.to_string();
        assert!(!shown.contains(leaked), "{leaked}… shown: {shown}");
    }
    // The polls saw the value being printed (else they proved nothing).
    let partial = answers
        .iter()
        .filter(|answer| text(answer).contains("key=[REDACTED…]"))
        .count();
    assert!(partial > 0, "no screen caught the value half printed");
    let last = answers.last().map(text).unwrap_or_default();
    assert!(
        last.contains("\nkey=[REDACTED:MY_API_KEY]\ndone\n"),
        "{last}"
    );
    rpc.close(LIVENESS);
    // The job's log and every other file: the whole value redacted, no start of it.
    crate::util::assert_in_no_file(env.root(), leaked);
}

/// Names of passwords are secrets by default (`*PASS`, `*PASSPHRASE*`, `*_PWD`); the
/// directories `PWD` and `OLDPWD` and askpass program paths are not.
#[test]
fn password_names_are_secrets_and_directories_and_program_paths_are_not() {
    let env = TestEnv::new();
    let work = std::fs::canonicalize(env.work_dir()).expect("the work dir");
    let work = work.to_str().expect("utf-8");
    let config = env.config_path();
    let mut command = env.command(&["rpc", "--config", config.to_str().expect("utf-8")]);
    command
        .env("DB_PASS", "hunter2hunter2")
        .env("GPG_PASSPHRASE", "correct horse battery")
        .env("MYSQL_PWD", "mysql-pwd-2024")
        .env("SSH_ASKPASS", "/usr/bin/false")
        .env("PWD", work)
        .env("OLDPWD", "/var/tmp/the-old-dir");
    let mut rpc = Rpc::spawn(command);
    let (_, result) = call(
        &mut rpc,
        "env",
        &json!({"command": "env | grep -E '^(DB_PASS|GPG_PASSPHRASE|MYSQL_PWD|SSH_ASKPASS)=' | sort"}),
    );
    assert_eq!(
        text(&result),
        "DB_PASS=[REDACTED:DB_PASS]\nGPG_PASSPHRASE=[REDACTED:GPG_PASSPHRASE]\n\
         MYSQL_PWD=[REDACTED:MYSQL_PWD]\nSSH_ASKPASS=/usr/bin/false",
        "{result}"
    );
    // A value is redacted wherever it shows, whoever prints it: these are not secrets.
    let (_, result) = call(
        &mut rpc,
        "dirs",
        &json!({"command": "pwd; echo /var/tmp/the-old-dir /usr/bin/false"}),
    );
    assert_eq!(
        text(&result),
        format!("{work}\n/var/tmp/the-old-dir /usr/bin/false"),
        "{result}"
    );
    rpc.close(LIVENESS);
}
