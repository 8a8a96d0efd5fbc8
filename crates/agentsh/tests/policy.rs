//! The approval policy through the real binary: RPC clients that approve, approve for the
//! session, deny, never answer, or cannot be asked; `exec`; broken policies refused at start;
//! the tiers; the audit log. Every test that refuses a command checks that the file it would have
//! made does not exist: nothing runs before a decision.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{LIVENESS, Rpc, TestEnv, is_response};

/// A policy that asks for `touch`, denies `rm` and asks for what it cannot know.
const POLICY: &str = r#"
[policy]
unknown = "ask"
ask_timeout = 2

[[policy.rules]]
prefix = ["touch"]
decision = "ask"
reason = "Creates files."

[[policy.rules]]
prefix = ["rm"]
decision = "deny"
reason = "Deleting is not allowed."
match = ["rm -rf x", "sudo rm x", "bash -c 'rm x'"]
not_match = ["rmdir x"]
"#;

/// The refusal of `touch marker` where nobody can be asked: in the deny's form.
const CANNOT_ASK_TOUCH: &str = "Command needs approval and nobody can be asked in this session: \
     touch marker (Creates files.)\n\
     Do not retry it in another form; tell the user what you wanted to run.";

/// An RPC client that said it answers approval requests.
fn approving_client(env: &TestEnv) -> Rpc {
    let mut rpc = env.rpc();
    rpc.send(r#"{"id": "h", "type": "hello", "capabilities": {"approvals": true}}"#);
    let hello = rpc.response("h");
    assert_eq!(hello["success"], true, "{hello}");
    rpc
}

/// Sends a `bash` tool call.
fn call(rpc: &mut Rpc, id: &str, command: &str) {
    rpc.send_json(
        &json!({"id": id, "type": "tool_call", "toolCallId": id, "name": "bash",
                          "arguments": {"command": command}}),
    );
}

/// Lines until the next `approval_request`; returns it.
fn approval_request(rpc: &Rpc) -> Value {
    let lines = rpc.until(LIVENESS, |line| line["type"] == "approval_request");
    lines.last().cloned().expect("the request")
}

/// The text of a tool call's result response.
fn result_text(response: &Value) -> &str {
    response["data"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no result text: {response}"))
}

#[test]
fn a_client_that_approves_runs_the_command_after_its_answer() {
    let env = TestEnv::with_config(POLICY);
    let mut rpc = approving_client(&env);
    call(&mut rpc, "c1", "echo before && touch marker");
    let request = approval_request(&rpc);
    assert_eq!(request["toolCallId"], "c1");
    assert_eq!(request["command"], "echo before && touch marker");
    assert_eq!(
        request["segments"],
        json!([{"command": "touch marker", "reason": "Creates files."}])
    );
    // Nothing ran before the answer: not even the allowed first segment.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!env.work_dir().join("marker").exists());
    let id = request["requestId"].as_str().expect("requestId").to_owned();
    rpc.send_json(&json!({"id": "a", "type": "approval", "requestId": id, "decision": "allow"}));
    let lines = rpc.until(LIVENESS, |line| is_response(line, "c1"));
    let answered = lines.iter().find(|line| is_response(line, "a"));
    assert_eq!(answered.map(|line| &line["success"]), Some(&json!(true)));
    let resolved = lines
        .iter()
        .find(|line| line["type"] == "approval_resolved")
        .expect("approval_resolved");
    assert_eq!(
        resolved,
        &json!({"type": "approval_resolved", "requestId": id, "toolCallId": "c1",
                "decision": "allow", "answeredBy": "rpc"})
    );
    let response = lines.last().expect("the response");
    assert_eq!(response["data"]["isError"], false, "{response}");
    assert_eq!(result_text(response), "before");
    assert!(env.work_dir().join("marker").exists());

    // Allowed once: the same command is asked again.
    call(&mut rpc, "c2", "echo before && touch marker");
    let again = approval_request(&rpc);
    assert_eq!(again["toolCallId"], "c2");
    assert_ne!(again["requestId"], request["requestId"]);
    // An answer to a request that was answered already is refused.
    rpc.send_json(&json!({"id": "late", "type": "approval", "requestId": id, "decision": "deny"}));
    let late = rpc.response("late");
    assert_eq!(late["success"], false, "{late}");
    assert_eq!(
        late["error"],
        format!("No approval request `{id}` is waiting for an answer")
    );
}

#[test]
fn allow_for_the_session_covers_the_same_segment_but_never_an_unknown_one() {
    let env = TestEnv::with_config(POLICY);
    let mut rpc = approving_client(&env);
    call(&mut rpc, "c1", "touch one");
    let request = approval_request(&rpc);
    rpc.send_json(
        &json!({"type": "approval", "requestId": request["requestId"],
                          "decision": "allow_session"}),
    );
    let first = rpc.response("c1");
    assert_eq!(first["data"]["isError"], false, "{first}");
    // The same segment again, in another line: not asked.
    call(&mut rpc, "c2", "echo x; touch one");
    let lines = rpc.until(LIVENESS, |line| is_response(line, "c2"));
    assert!(
        lines.iter().all(|line| line["type"] != "approval_request"),
        "asked again: {lines:#?}"
    );
    assert_eq!(lines.last().expect("response")["data"]["isError"], false);
    // Another segment is asked.
    call(&mut rpc, "c3", "touch two");
    let other = approval_request(&rpc);
    assert_eq!(other["segments"][0]["command"], "touch two");
    rpc.send_json(&json!({"type": "approval", "requestId": other["requestId"],
                          "decision": "deny"}));
    assert_eq!(rpc.response("c3")["data"]["isError"], true);
    assert!(!env.work_dir().join("two").exists());

    // An unknown segment allowed "for the session" is asked again the next time.
    for id in ["u1", "u2"] {
        call(&mut rpc, id, "X=true; $X");
        let asked = approval_request(&rpc);
        assert_eq!(asked["toolCallId"], id);
        rpc.send_json(&json!({"type": "approval", "requestId": asked["requestId"],
                              "decision": "allow_session"}));
        assert_eq!(rpc.response(id)["data"]["isError"], false);
    }
}

#[test]
fn a_denied_request_runs_nothing_and_says_who_declined() {
    let env = TestEnv::with_config(POLICY);
    let mut rpc = approving_client(&env);
    call(&mut rpc, "c1", "touch marker");
    let request = approval_request(&rpc);
    rpc.send_json(
        &json!({"type": "approval", "requestId": request["requestId"],
                          "decision": "deny"}),
    );
    let response = rpc.response("c1");
    assert_eq!(response["data"]["isError"], true, "{response}");
    assert_eq!(
        result_text(&response),
        "The user declined to run: touch marker"
    );
    assert!(!env.work_dir().join("marker").exists());
}

#[test]
fn an_unanswered_request_is_denied_after_the_ask_timeout() {
    let env = TestEnv::with_config(POLICY);
    let rpc = {
        let mut rpc = approving_client(&env);
        call(&mut rpc, "c1", "touch marker");
        rpc
    };
    let request = approval_request(&rpc);
    let asked = Instant::now();
    let lines = rpc.until(LIVENESS, |line| is_response(line, "c1"));
    let waited = asked.elapsed();
    assert!(
        waited >= Duration::from_millis(1500),
        "denied after {waited:?}, before the 2 s ask_timeout"
    );
    let resolved = lines
        .iter()
        .find(|line| line["type"] == "approval_resolved")
        .expect("approval_resolved");
    assert_eq!(resolved["requestId"], request["requestId"]);
    assert_eq!(resolved["decision"], "timeout");
    assert!(resolved.get("answeredBy").is_none(), "{resolved}");
    let response = lines.last().expect("response");
    assert_eq!(
        result_text(response),
        "No answer to the approval request within 2 s: touch marker"
    );
    assert!(!env.work_dir().join("marker").exists());
}

#[test]
fn a_client_that_cannot_answer_is_never_asked() {
    let env = TestEnv::with_config(POLICY);
    let mut rpc = env.rpc();
    let asked = Instant::now();
    call(&mut rpc, "c1", "touch marker");
    let lines = rpc.until(LIVENESS, |line| is_response(line, "c1"));
    assert!(asked.elapsed() < Duration::from_secs(2), "it waited");
    assert!(lines.iter().all(|line| line["type"] != "approval_request"));
    let response = lines.last().expect("response");
    assert_eq!(response["data"]["isError"], true);
    assert_eq!(result_text(response), CANNOT_ASK_TOUCH);
    assert!(!env.work_dir().join("marker").exists());
    // A user's `bash` request on stdio is not judged.
    rpc.send(r#"{"id": "b", "type": "bash", "command": "touch mine"}"#);
    assert_eq!(rpc.response("b")["data"]["exitCode"], 0);
    assert!(env.work_dir().join("mine").exists());
}

#[test]
fn a_denied_segment_is_refused_without_asking_in_any_of_its_forms() {
    let env = TestEnv::with_config(POLICY);
    let mut rpc = approving_client(&env);
    std::fs::write(env.work_dir().join("keep"), "x").expect("write");
    for (id, command, segment) in [
        ("d1", "echo a; rm -f keep", "rm -f keep"),
        ("d2", "r''m -f keep", "r''m -f keep"),
        ("d3", "/bin/rm -f keep", "/bin/rm -f keep"),
        ("d4", "sh -c 'cd . && rm -f keep'", "rm -f keep"),
        ("d5", "echo $(rm -f keep)", "rm -f keep"),
    ] {
        call(&mut rpc, id, command);
        let lines = rpc.until(LIVENESS, |line| is_response(line, id));
        assert!(lines.iter().all(|line| line["type"] != "approval_request"));
        let response = lines.last().expect("response");
        assert_eq!(response["data"]["isError"], true, "{response}");
        assert_eq!(
            result_text(response),
            format!(
                "Command denied by policy: {segment} (Deleting is not allowed.)\n\
                 Do not retry it in another form; tell the user what you wanted to run."
            ),
            "{command}"
        );
        assert!(env.work_dir().join("keep").exists(), "{command} ran");
    }
}

#[test]
fn an_abort_while_the_request_waits_runs_nothing() {
    let env = TestEnv::with_config(POLICY);
    let mut rpc = approving_client(&env);
    call(&mut rpc, "c1", "touch marker");
    let request = approval_request(&rpc);
    rpc.send(r#"{"id": "x", "type": "abort", "toolCallId": "c1"}"#);
    let lines = rpc.until(LIVENESS, |line| is_response(line, "c1"));
    let resolved = lines
        .iter()
        .find(|line| line["type"] == "approval_resolved")
        .expect("approval_resolved");
    assert_eq!(resolved["requestId"], request["requestId"]);
    assert_eq!(resolved["decision"], "aborted");
    assert_eq!(lines.last().expect("response")["data"]["isError"], true);
    assert!(!env.work_dir().join("marker").exists());
}

#[test]
fn a_calls_timeout_starts_after_the_approval() {
    let env = TestEnv::with_config(POLICY);
    let mut rpc = approving_client(&env);
    rpc.send_json(
        &json!({"id": "c1", "type": "tool_call", "toolCallId": "c1", "name": "bash",
                          "arguments": {"command": "sleep 0.5; touch marker", "timeout": 1}}),
    );
    let request = approval_request(&rpc);
    // Longer than the call's own timeout.
    std::thread::sleep(Duration::from_millis(1500));
    rpc.send_json(
        &json!({"type": "approval", "requestId": request["requestId"],
                          "decision": "allow"}),
    );
    let response = rpc.response("c1");
    assert_eq!(response["data"]["details"]["timedOut"], false, "{response}");
    assert_eq!(response["data"]["isError"], false, "{response}");
    assert!(env.work_dir().join("marker").exists());
}

#[test]
fn exec_cannot_ask_and_a_denied_command_exits_1() {
    let env = TestEnv::with_config(POLICY);
    let denied = env.exec(&["--", "rm -rf x"]);
    assert_eq!(denied.code(), 1, "{denied:?}");
    assert!(
        denied
            .stdout
            .starts_with("Command denied by policy: rm -rf x (Deleting is not allowed.)"),
        "{denied:?}"
    );
    let asked = env.exec(&["--", "touch marker"]);
    assert_eq!(asked.code(), 1, "{asked:?}");
    assert_eq!(asked.stdout.trim_end(), CANNOT_ASK_TOUCH);
    assert!(!env.work_dir().join("marker").exists());
    let allowed = env.exec(&["--", "echo fine"]);
    assert_eq!(allowed.code(), 0, "{allowed:?}");
}

/// The user guide's policy: pushing asked, wiping the root denied, what is only known when it
/// runs asked.
const GUIDE_POLICY: &str = include_str!("../../../fixtures/policy/guide.toml");

#[test]
fn exec_judges_commands_as_their_programs_read_them() {
    let env = TestEnv::with_config(GUIDE_POLICY);
    let refused = |command: &str, text: &str| {
        let output = env.exec(&["--", command]);
        assert_eq!(output.code(), 1, "{command}: {output:?}");
        assert_eq!(output.stdout.trim_end(), text, "{command}");
    };
    let asked = |segment: &str, reason: &str| {
        format!(
            "Command needs approval and nobody can be asked in this session: {segment} \
             ({reason})\nDo not retry it in another form; tell the user what you wanted to run."
        )
    };
    // Git's global options and a subcommand only known when it runs do not skip the rule.
    for command in ["git -C . push origin master", "git --no-pager -c k=v push"] {
        refused(command, &asked(command, "Pushing publishes work."));
    }
    refused(
        "x=push; git $x origin master",
        &asked(
            "git $x origin master",
            "a word its rules compare is only known when it runs",
        ),
    );
    // Another spelling of the options is the same rule.
    refused(
        "rm --recursive --force /nonexistent-agentsh-policy-test",
        "Command denied by policy: rm --recursive --force /nonexistent-agentsh-policy-test \
         (Never delete from the root.)\n\
         Do not retry it in another form; tell the user what you wanted to run.",
    );
    // `policy check` shows the global options it set aside.
    let checked = crate::util::finish(env.command(&[
        "policy",
        "check",
        "--config",
        env.config_path().to_str().expect("utf-8"),
        "--",
        "git -C . --no-pager push origin master",
    ]));
    assert_eq!(checked.code(), 0, "{checked:?}");
    assert!(
        checked
            .stdout
            .contains("(global options set aside: -C . --no-pager)"),
        "{checked:?}"
    );
    assert!(checked.stdout.ends_with("decision: ask\n"), "{checked:?}");
    // An everyday idiom runs.
    let read = env.exec(&[
        "--",
        "printf 'a,b\\n' > f; while IFS=, read -r x y; do echo \"$y\"; done < f",
    ]);
    assert_eq!(read.code(), 0, "{read:?}");
    assert_eq!(read.stdout.trim_end(), "b");
}

#[test]
fn a_policy_whose_example_fails_refuses_to_start() {
    let env = TestEnv::with_config(
        r#"
[[policy.rules]]
prefix = ["git", "push"]
decision = "ask"
match = ["git pushy"]
"#,
    );
    for finished in [
        env.exec(&["--", "touch marker"]),
        crate::util::finish(env.command(&[
            "policy",
            "check",
            "--config",
            env.config_path().to_str().expect("utf-8"),
            "--",
            "true",
        ])),
    ] {
        assert_eq!(finished.code(), 2, "{finished:?}");
        assert!(
            finished.stderr.contains("policy.rules[0].match[0]")
                && finished.stderr.contains("git pushy")
                && finished.stderr.contains("agentsh.toml"),
            "{finished:?}"
        );
    }
    assert!(!env.work_dir().join("marker").exists());
}

#[test]
fn a_project_policy_may_only_tighten() {
    let env = TestEnv::new();
    let project = env.work_dir().join(".agentsh");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::fs::write(
        project.join("policy.toml"),
        "[[policy.rules]]\nprefix = [\"touch\"]\ndecision = \"allow\"\n",
    )
    .expect("write");
    let refused = env.exec(&["--", "touch marker"]);
    assert_eq!(refused.code(), 2, "{refused:?}");
    assert!(
        refused.stderr.contains(".agentsh/policy.toml")
            && refused.stderr.contains("policy.rules[0].decision"),
        "{refused:?}"
    );
    assert!(!env.work_dir().join("marker").exists());

    // A project deny rule applies to the session started there.
    std::fs::write(
        project.join("policy.toml"),
        "[[policy.rules]]\nprefix = [\"touch\"]\ndecision = \"deny\"\nreason = \"Project rule.\"\n",
    )
    .expect("write");
    let denied = env.exec(&["--", "touch marker"]);
    assert_eq!(denied.code(), 1, "{denied:?}");
    assert!(denied.stdout.contains("(Project rule.)"), "{denied:?}");
    assert!(!env.work_dir().join("marker").exists());
}

#[test]
fn a_managed_deny_is_not_lifted_by_the_users_allow() {
    let env =
        TestEnv::with_config("[[policy.rules]]\nprefix = [\"touch\"]\ndecision = \"allow\"\n");
    let managed = env.root().join("managed.toml");
    std::fs::write(
        &managed,
        "[[policy.rules]]\nprefix = [\"touch\"]\ndecision = \"deny\"\nreason = \"Managed.\"\n",
    )
    .expect("write");
    let config = env.config_path();
    let denied = crate::util::finish(
        env.command(&[
            "exec",
            "--config",
            config.to_str().expect("utf-8"),
            "--",
            "touch m",
        ])
        .env("AGENTSH_MANAGED_POLICY", &managed)
        .stdin(std::process::Stdio::null()),
    );
    assert_eq!(denied.code(), 1, "{denied:?}");
    assert!(
        denied
            .stdout
            .starts_with("Command denied by policy: touch m (Managed.)"),
        "{denied:?}"
    );
    assert!(!env.work_dir().join("m").exists());
    let checked = crate::util::finish(
        env.command(&[
            "policy",
            "check",
            "--config",
            config.to_str().expect("utf-8"),
            "--",
            "touch m",
        ])
        .env("AGENTSH_MANAGED_POLICY", &managed),
    );
    assert_eq!(checked.code(), 0, "{checked:?}");
    assert!(checked.stdout.contains("managed"), "{checked:?}");
    assert!(checked.stdout.ends_with("decision: deny\n"), "{checked:?}");
}

#[test]
fn the_audit_log_records_every_decision_and_end() {
    let env = TestEnv::with_config(&format!("{POLICY}\n[audit]\nenabled = true\n"));
    let mut rpc = approving_client(&env);
    // allow
    call(&mut rpc, "c1", "echo allowed");
    rpc.response("c1");
    // ask → allow
    call(&mut rpc, "c2", "touch yes");
    let request = approval_request(&rpc);
    rpc.send_json(
        &json!({"type": "approval", "requestId": request["requestId"],
                          "decision": "allow"}),
    );
    rpc.response("c2");
    // ask → deny
    call(&mut rpc, "c3", "touch no");
    let request = approval_request(&rpc);
    rpc.send_json(
        &json!({"type": "approval", "requestId": request["requestId"],
                          "decision": "deny"}),
    );
    rpc.response("c3");
    // deny
    call(&mut rpc, "c4", "rm -f x");
    rpc.response("c4");
    // a user's command
    rpc.send(r#"{"id": "b", "type": "bash", "command": "echo mine"}"#);
    rpc.response("b");
    rpc.close(LIVENESS);

    let log = env.root().join("state/agentsh/audit.jsonl");
    let text = std::fs::read_to_string(&log).expect("the audit log");
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    type Decided<'a> = (&'a str, &'a str, &'a str, Option<&'a str>, Option<&'a str>);
    let decisions: Vec<Decided<'_>> = lines
        .iter()
        .filter(|line| line["phase"] == "decision")
        .map(|line| {
            (
                line["command"].as_str().expect("command"),
                line["source"].as_str().expect("source"),
                line["decision"].as_str().expect("decision"),
                line["answer"].as_str(),
                line["answeredBy"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("echo allowed", "model", "allow", None, None),
            ("touch yes", "model", "ask", Some("allow"), Some("rpc")),
            ("touch no", "model", "ask", Some("deny"), Some("rpc")),
            ("rm -f x", "model", "deny", None, None),
            ("echo mine", "user", "allow", None, None),
        ]
    );
    for line in lines.iter().filter(|line| line["phase"] == "decision") {
        assert_eq!(line["mode"], "rpc");
        assert!(
            line["time"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{line}"
        );
        assert!(
            line["session"].is_string() && line["cwd"].is_string(),
            "{line}"
        );
    }
    let rule = lines
        .iter()
        .find(|line| line["command"] == "rm -f x")
        .and_then(|line| line["rule"].as_str());
    assert!(
        rule.is_some_and(|rule| rule.contains("rules[1]")),
        "{rule:?}"
    );
    // An end line for each command that ran: c1, c2 and the user's.
    let ends: Vec<&Value> = lines.iter().filter(|line| line["phase"] == "end").collect();
    assert_eq!(ends.len(), 3, "{ends:#?}");
    assert!(
        ends.iter()
            .all(|end| end["exitCode"] == 0 && end["durationMs"].is_u64())
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&log).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir = std::fs::metadata(log.parent().expect("dir"))
        .expect("stat")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir, 0o700);
}

#[test]
fn calls_are_judged_in_arrival_order_so_a_session_answer_covers_the_next() {
    let env = TestEnv::with_config(POLICY);
    let mut rpc = approving_client(&env);
    // Both sent before the first is answered.
    call(&mut rpc, "c1", "touch same");
    call(&mut rpc, "c2", "touch same");
    let request = approval_request(&rpc);
    assert_eq!(request["toolCallId"], "c1");
    rpc.send_json(
        &json!({"type": "approval", "requestId": request["requestId"],
                          "decision": "allow_session"}),
    );
    let mut lines = rpc.until(LIVENESS, |line| is_response(line, "c1"));
    lines.extend(rpc.until(LIVENESS, |line| is_response(line, "c2")));
    let asked = lines
        .iter()
        .filter(|line| line["type"] == "approval_request")
        .count();
    assert_eq!(asked, 0, "the second call was asked: {lines:#?}");
    assert_eq!(lines.last().expect("response")["data"]["isError"], false);
}

/// A `tool_call` of `name` with `arguments`; its response's result.
fn tool(rpc: &mut Rpc, id: &str, name: &str, arguments: &Value) -> Value {
    rpc.send_json(
        &json!({"id": id, "type": "tool_call", "toolCallId": id, "name": name,
                          "arguments": arguments}),
    );
    rpc.response(id)["data"].clone()
}

#[test]
fn text_typed_at_a_shells_prompt_in_a_pty_job_is_judged() {
    let env = TestEnv::with_config(POLICY);
    let mut rpc = approving_client(&env);
    // An interactive shell reads its commands from the terminal: that start is asked too.
    rpc.send_json(
        &json!({"id": "s", "type": "tool_call", "toolCallId": "s", "name": "bash",
        "arguments": {"command": "bash --norc --noprofile", "run_in_background": true,
                      "pty": true}}),
    );
    let start = approval_request(&rpc);
    rpc.send_json(&json!({"type": "approval", "requestId": start["requestId"],
                          "decision": "allow"}));
    let started = rpc.response("s")["data"].clone();
    let id = started["details"]["job"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a job: {started}"))
        .to_owned();
    // Until the shell waits at its prompt.
    let deadline = Instant::now() + LIVENESS;
    while tool(
        &mut rpc,
        "w",
        "job_output",
        &json!({"jobId": id, "wait": 1}),
    )["details"]["job"]["state"]
        != "waiting_for_input"
    {
        assert!(
            Instant::now() < deadline,
            "the shell never waited for input"
        );
    }
    std::fs::write(env.work_dir().join("keep"), "x").expect("write");
    // Denied outright: never typed.
    let denied = tool(
        &mut rpc,
        "d",
        "job_input",
        &json!({"jobId": id, "text": "rm -f keep\n"}),
    );
    assert_eq!(denied["isError"], true, "{denied}");
    assert!(
        result_text(&json!({"data": denied})).starts_with("Command denied by policy: rm -f keep"),
        "{denied}"
    );
    // Asked, then declined: never typed either.
    rpc.send_json(&json!({"id": "t", "type": "tool_call", "toolCallId": "t",
                          "name": "job_input", "arguments": {"jobId": id, "text": "touch typed\n"}}));
    let request = approval_request(&rpc);
    assert_eq!(request["toolCallId"], "t");
    assert_eq!(request["command"], "touch typed");
    rpc.send_json(
        &json!({"type": "approval", "requestId": request["requestId"],
                          "decision": "deny"}),
    );
    let declined = rpc.response("t");
    assert_eq!(
        result_text(&declined),
        "The user declined to run: touch typed"
    );
    // Allowed text goes in and runs.
    let fine = tool(
        &mut rpc,
        "f",
        "job_input",
        &json!({"jobId": id, "text": "echo fine > fine.txt\n"}),
    );
    assert_eq!(fine["isError"], false, "{fine}");
    let deadline = Instant::now() + LIVENESS;
    while !env.work_dir().join("fine.txt").exists() {
        assert!(Instant::now() < deadline, "the allowed line did not run");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!env.work_dir().join("typed").exists());
    assert!(env.work_dir().join("keep").exists());
    tool(&mut rpc, "k", "job_kill", &json!({"jobId": id}));
}
