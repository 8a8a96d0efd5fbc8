//! The audit log against real files in a temporary directory.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::*;

fn decision_entry<'a>(command: &'a str, cwd: &'a Path) -> AuditDecision<'a> {
    AuditDecision {
        session: "s1",
        mode: "rpc",
        source: AuditSource::Model,
        command,
        cwd,
        decision: Decision::Allow,
        rule: None,
        answer: None,
        answered_by: None,
    }
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect()
}

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// `2026-12-02T13:45:01.123Z`.
fn is_rfc3339_millis(time: &str) -> bool {
    let bytes = time.as_bytes();
    bytes.len() == 24
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            10 => *b == b'T',
            13 | 16 => *b == b':',
            19 => *b == b'.',
            23 => *b == b'Z',
            _ => b.is_ascii_digit(),
        })
}

#[test]
fn writes_both_line_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state/agentsh/audit.jsonl");
    let log = AuditLog::with_rotation(Some(path.clone()), false, AUDIT_ROTATE_BYTES);
    log.decision(&decision_entry("ls -la", Path::new("/work")))
        .unwrap();
    log.decision(&AuditDecision {
        source: AuditSource::User,
        decision: Decision::Ask,
        rule: Some("user /home/ann/.config/agentsh/config.toml rules[0]"),
        answer: Some("allow_session"),
        answered_by: Some(Answerer::Interactive),
        ..decision_entry("git push \"origin\"\nmain", Path::new("/work"))
    })
    .unwrap();
    log.end(&AuditEnd {
        session: "s1",
        call_id: "call-1",
        exit_code: Some(0),
        duration_ms: 1234,
        artifact_id: Some("artifact://abc"),
    });
    log.end(&AuditEnd {
        session: "s1",
        call_id: "call-2",
        exit_code: None,
        duration_ms: 0,
        artifact_id: None,
    });
    assert_eq!(log.take_warning(), None);

    let written = lines(&path);
    assert_eq!(written.len(), 4);
    for line in &written {
        let time = line["time"].as_str().unwrap();
        assert!(is_rfc3339_millis(time), "{time}");
    }
    let mut plain = written[0].clone();
    plain["time"] = Value::Null;
    assert_eq!(
        plain,
        serde_json::json!({"phase": "decision", "time": null, "session": "s1", "mode": "rpc",
            "source": "model", "command": "ls -la", "cwd": "/work", "decision": "allow"})
    );
    let mut asked = written[1].clone();
    asked["time"] = Value::Null;
    assert_eq!(
        asked,
        serde_json::json!({"phase": "decision", "time": null, "session": "s1", "mode": "rpc",
            "source": "user", "command": "git push \"origin\"\nmain", "cwd": "/work",
            "decision": "ask", "rule": "user /home/ann/.config/agentsh/config.toml rules[0]",
            "answer": "allow_session", "answeredBy": "interactive"})
    );
    let mut end = written[2].clone();
    end["time"] = Value::Null;
    assert_eq!(
        end,
        serde_json::json!({"phase": "end", "time": null, "session": "s1", "callId": "call-1",
            "exitCode": 0, "durationMs": 1234, "artifactId": "artifact://abc"})
    );
    let mut bare = written[3].clone();
    bare["time"] = Value::Null;
    assert_eq!(
        bare,
        serde_json::json!({"phase": "end", "time": null, "session": "s1", "callId": "call-2",
            "exitCode": null, "durationMs": 0})
    );
    // The keys come in the documented order (serde_json's map sorts, so read the raw text).
    let text = std::fs::read_to_string(&path).unwrap();
    let first = text.lines().next().unwrap();
    let order = [
        "phase", "time", "session", "mode", "source", "command", "cwd", "decision",
    ];
    let positions: Vec<usize> = order
        .iter()
        .map(|k| first.find(&format!("\"{k}\":")).unwrap())
        .collect();
    assert!(positions.is_sorted(), "{first}");
    assert_eq!(keys(&written[3]).len(), 6);
}

#[test]
fn the_file_is_0600_in_a_0700_directory() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let path = logs.join("audit.jsonl");
    let log = AuditLog::with_rotation(Some(path.clone()), false, AUDIT_ROTATE_BYTES);
    log.decision(&decision_entry("true", dir.path())).unwrap();
    assert_eq!(mode(&logs), 0o700);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&with_suffix(&path, ".lock")), 0o600);

    // Looser modes found are tightened.
    std::fs::set_permissions(&logs, Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&path, Permissions::from_mode(0o644)).unwrap();
    log.decision(&decision_entry("true", dir.path())).unwrap();
    assert_eq!(mode(&logs), 0o700);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(lines(&path).len(), 2);
}

#[test]
fn rotates_to_five_numbered_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let rotate_at = 400;
    let log = AuditLog::with_rotation(Some(path.clone()), false, rotate_at);
    let total = 60;
    for n in 0..total {
        log.end(&AuditEnd {
            session: "s",
            call_id: &format!("call-{n:03}"),
            exit_code: Some(0),
            duration_ms: n,
            artifact_id: None,
        });
    }
    assert_eq!(log.take_warning(), None);
    let mut kept = Vec::new();
    for name in [".5", ".4", ".3", ".2", ".1", ""] {
        let file = with_suffix(&path, name);
        assert!(file.exists(), "{} missing", file.display());
        let size = std::fs::metadata(&file).unwrap().len();
        assert!(size <= rotate_at, "{}: {size} bytes", file.display());
        assert_eq!(mode(&file), 0o600);
        kept.extend(lines(&file));
    }
    assert!(!with_suffix(&path, ".6").exists());
    // The oldest lines were dropped; what is kept is the newest, in order, none torn.
    let ids: Vec<u64> = kept
        .iter()
        .map(|l| l["durationMs"].as_u64().unwrap())
        .collect();
    assert!(ids.len() < total as usize, "nothing was dropped");
    assert_eq!(ids.last(), Some(&(total - 1)));
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");
}

#[test]
fn two_threads_append_without_torn_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    // Two logs on one file behave as two processes (each takes the flock).
    let first = AuditLog::with_rotation(Some(path.clone()), false, AUDIT_ROTATE_BYTES);
    let second = AuditLog::with_rotation(Some(path.clone()), false, AUDIT_ROTATE_BYTES);
    let per_thread = 200;
    let long = "x".repeat(3000);
    let clone = first.clone();
    std::thread::scope(|scope| {
        for (name, log) in [("a", &first), ("b", &second), ("c", &clone)] {
            let long = &long;
            scope.spawn(move || {
                for n in 0..per_thread {
                    let command = format!("{name}-{n} {long}");
                    log.decision(&decision_entry(&command, Path::new("/")))
                        .unwrap();
                }
            });
        }
    });
    let written = lines(&path);
    assert_eq!(written.len(), 3 * per_thread);
    let commands: BTreeSet<String> = written
        .iter()
        .map(|l| {
            l["command"]
                .as_str()
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(commands.len(), 3 * per_thread);
}

#[test]
fn a_failed_write_is_an_error_and_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "a file where the directory should be").unwrap();
    let path = blocker.join("audit.jsonl");
    let log = AuditLog::with_rotation(Some(path), true, AUDIT_ROTATE_BYTES);
    assert!(log.required());
    let err = log
        .decision(&decision_entry("true", dir.path()))
        .unwrap_err();
    assert!(err.contains("cannot write the audit log"), "{err}");
    assert!(err.contains("not-a-dir"), "{err}");
    let warning = log.take_warning().expect("a warning");
    assert_eq!(warning, err);
    assert_eq!(log.take_warning(), None);
    // Later failures are errors still, but warn no more.
    assert!(log.decision(&decision_entry("true", dir.path())).is_err());
    log.end(&AuditEnd {
        session: "s",
        call_id: "c",
        exit_code: None,
        duration_ms: 0,
        artifact_id: None,
    });
    assert_eq!(log.take_warning(), None);
    // An end line's failure is the warning when it comes first.
    let log = AuditLog::with_rotation(Some(blocker.join("x.jsonl")), false, AUDIT_ROTATE_BYTES);
    log.end(&AuditEnd {
        session: "s",
        call_id: "c",
        exit_code: None,
        duration_ms: 0,
        artifact_id: None,
    });
    assert!(log.take_warning().is_some());
    assert_eq!(log.take_warning(), None);
}

#[test]
fn a_symbolic_link_in_place_of_the_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere");
    std::fs::write(&target, "").unwrap();
    let path = dir.path().join("audit.jsonl");
    std::os::unix::fs::symlink(&target, &path).unwrap();
    let log = AuditLog::with_rotation(Some(path), false, AUDIT_ROTATE_BYTES);
    assert!(log.decision(&decision_entry("true", dir.path())).is_err());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
}

fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
    move |name| {
        pairs
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| OsString::from(value))
    }
}

#[test]
fn open_follows_the_settings() {
    let env = env_of(&[("XDG_STATE_HOME", "/state"), ("HOME", "/home/ann")]);
    assert!(AuditLog::open(&AuditSettings::default(), &env).is_none());
    let settings = AuditSettings {
        enabled: true,
        path: None,
        required: false,
    };
    let log = AuditLog::open(&settings, &env).expect("enabled");
    assert_eq!(log.path(), Some(Path::new("/state/agentsh/audit.jsonl")));
    assert!(!log.required());
    let log = AuditLog::open(&settings, env_of(&[("HOME", "/home/ann")])).expect("enabled");
    assert_eq!(
        log.path(),
        Some(Path::new("/home/ann/.local/state/agentsh/audit.jsonl"))
    );
    let settings = AuditSettings {
        enabled: true,
        path: Some(PathBuf::from("/var/log/a.jsonl")),
        required: true,
    };
    let log = AuditLog::open(&settings, &env).expect("enabled");
    assert_eq!(log.path(), Some(Path::new("/var/log/a.jsonl")));
    assert!(log.required());
    // Without any path, every write fails (and a required log denies).
    let settings = AuditSettings {
        enabled: true,
        path: None,
        required: true,
    };
    let log = AuditLog::open(&settings, env_of(&[])).expect("enabled");
    assert_eq!(log.path(), None);
    let err = log
        .decision(&decision_entry("true", Path::new("/")))
        .unwrap_err();
    assert!(err.contains("audit.path"), "{err}");
}
