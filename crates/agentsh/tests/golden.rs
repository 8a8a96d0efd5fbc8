//! Golden transcripts in `fixtures/exec` and `fixtures/rpc`, compared field by field after
//! normalising what varies between runs: the temp dir (`<TMP>`), artifact ids (`<ID>`) and the
//! process marker (`$MARKER`). Each fixture was written by reading real output and checking
//! every value against the documented behaviour by hand; see the `spec` notes inside them.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{
    LIVENESS, TestEnv, assert_json_eq, assert_no_survivor, map_strings, unique_marker,
    wait_for_process,
};

fn fixtures(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(kind)
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// A test environment with the fixture's `config` (after the artifact store) and `files`
/// (name → content) in its working directory.
fn environment(case: &Value) -> TestEnv {
    let env = TestEnv::with_config(case["config"].as_str().unwrap_or(""));
    if let Some(files) = case["files"].as_object() {
        for (name, content) in files {
            std::fs::write(
                env.work_dir().join(name),
                content.as_str().expect("file text"),
            )
            .expect("write fixture file");
        }
    }
    env
}

/// Replaces `artifact://<digits>`, `/<digits>.bash.log` and `artifactId` values with `<ID>`.
fn normalise_artifact_ids(value: &mut Value) {
    map_strings(value, &|text| {
        let text = replace_digits_after(text, "artifact://", "");
        replace_digits_after(&text, "/", ".bash.log")
    });
    walk_objects(value, &mut |map| {
        if let Some(id) = map.get_mut("artifactId")
            && id.is_string()
        {
            *id = Value::from("<ID>");
        }
    });
}

/// Replaces the digits in every `<prefix><digits><suffix>` of `text` with `<ID>`.
fn replace_digits_after(text: &str, prefix: &str, suffix: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        let after = &rest[at + prefix.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        out.push_str(&rest[..at + prefix.len()]);
        if digits > 0 && after[digits..].starts_with(suffix) {
            out.push_str("<ID>");
            rest = &after[digits..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn walk_objects(value: &mut Value, f: &mut dyn FnMut(&mut serde_json::Map<String, Value>)) {
    match value {
        Value::Object(map) => {
            f(map);
            map.values_mut().for_each(|item| walk_objects(item, f));
        }
        Value::Array(items) => items.iter_mut().for_each(|item| walk_objects(item, f)),
        _ => {}
    }
}

#[test]
fn artifact_ids_are_normalised_only_where_they_are_ids() {
    let mut value = serde_json::json!({
        "text": "[Showing lines 2-3 of 3 (100B limit). Full: artifact://12]",
        "path": "/tmp/x/artifacts/12.bash.log",
        "other": "/tmp/2024/notes 7.bash.logx artifact://",
        "artifactId": "12"
    });
    normalise_artifact_ids(&mut value);
    assert_eq!(
        value,
        serde_json::json!({
            "text": "[Showing lines 2-3 of 3 (100B limit). Full: artifact://<ID>]",
            "path": "/tmp/x/artifacts/<ID>.bash.log",
            "other": "/tmp/2024/notes 7.bash.logx artifact://",
            "artifactId": "<ID>"
        })
    );
}

#[test]
fn exec_json_results_match_the_fixtures() {
    let dir = fixtures("exec");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures/exec")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    // success, non-zero, timeout, blocked, bad cwd, truncated with artifact.
    assert!(paths.len() >= 6, "{paths:?}");
    for path in paths {
        let case = read_json(&path);
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let env = environment(&case);
        let args: Vec<&str> = case["args"]
            .as_array()
            .expect("args")
            .iter()
            .map(|arg| arg.as_str().expect("string arg"))
            .collect();
        let done = env.exec(&args);
        assert_eq!(
            Value::from(done.code()),
            case["status"],
            "{name}: exit status; {done:?}"
        );
        let mut actual = done.json();
        env.normalise_paths(&mut actual);
        normalise_artifact_ids(&mut actual);
        assert_json_eq(&case["result"], &actual, &name);
    }
}

/// Runs `fixtures/rpc/session.json`: each step sends a line (`send`: a JSON object with
/// `$MARKER`/`$ARTIFACT` substituted, or `sendLine`: raw text), optionally waits for the
/// marked process (`waitForMarker`), then expects exactly the listed lines in order. An
/// expected `tool_execution_update` stands for one or more updates, the last of which must
/// match; updates not listed are skipped (zero or more may come), but must be well formed.
#[test]
fn rpc_session_matches_the_transcript() {
    let path = fixtures("rpc").join("session.json");
    let case = read_json(&path);
    let env = environment(&case);
    let marker = unique_marker();
    let mut rpc = env.rpc();
    let mut artifact = String::new();
    let mut pending: Option<Value> = None;
    for (index, step) in case["steps"].as_array().expect("steps").iter().enumerate() {
        let context = format!("step {index} ({})", step["note"].as_str().unwrap_or(""));
        let substitute = |text: &str| {
            text.replace("$MARKER", &marker)
                .replace("$ARTIFACT", &artifact)
        };
        if let Some(request) = step.get("send") {
            rpc.send(&substitute(&request.to_string()));
        } else if let Some(line) = step["sendLine"].as_str() {
            rpc.send(line);
        }
        if step["waitForMarker"] == true {
            wait_for_process(&marker);
        }
        for expected in step["expect"].as_array().expect("expect") {
            let wants_update = expected["type"] == "tool_execution_update";
            let awaited = format!("{context}, awaiting {expected}");
            let mut actual = pending
                .take()
                .unwrap_or_else(|| rpc.next_or(LIVENESS, &awaited));
            if wants_update {
                assert_eq!(
                    actual["type"], "tool_execution_update",
                    "{context}: {actual}"
                );
                loop {
                    let next = rpc.next_or(LIVENESS, &awaited);
                    if next["type"] == "tool_execution_update"
                        && next["toolCallId"] == actual["toolCallId"]
                    {
                        actual = next;
                    } else {
                        pending = Some(next);
                        break;
                    }
                }
            } else {
                while actual["type"] == "tool_execution_update" {
                    check_update_shape(&actual, &context);
                    actual = rpc.next_or(LIVENESS, &awaited);
                }
            }
            remember_artifact(&actual, &mut artifact);
            env.normalise_paths(&mut actual);
            map_strings(&mut actual, &|text| text.replace(&marker, "$MARKER"));
            normalise_artifact_ids(&mut actual);
            assert_json_eq(expected, &actual, &context);
        }
        if step["noSurvivor"] == true {
            assert_no_survivor(&marker);
        }
    }
    assert!(pending.is_none(), "unexpected line: {pending:?}");
    let (status, rest) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0));
    assert!(rest.is_empty(), "lines after the last step: {rest:#?}");
    assert_no_survivor(&marker);
}

fn check_update_shape(update: &Value, context: &str) {
    assert!(update["toolCallId"].is_string(), "{context}: {update}");
    assert_eq!(update["toolName"], "bash", "{context}: {update}");
    assert_eq!(
        update["partialResult"]["content"][0]["type"], "text",
        "{context}: {update}"
    );
    assert!(
        update["partialResult"]["content"][0]["text"].is_string(),
        "{context}: {update}"
    );
}

/// Keeps the last `artifactId` seen (for `$ARTIFACT` in later requests).
fn remember_artifact(value: &Value, artifact: &mut String) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(id)) = map.get("artifactId") {
                artifact.clone_from(id);
            }
            map.values()
                .for_each(|item| remember_artifact(item, artifact));
        }
        Value::Array(items) => items
            .iter()
            .for_each(|item| remember_artifact(item, artifact)),
        _ => {}
    }
}
