//! The configuration fixtures in `fixtures/config/`: one valid file with every key, and one
//! file per kind of error, each checked for the file, the key and the reason in the message.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agentsh_bash_interceptor::Interceptor;
use agentsh_config::{ConfigPath, Settings, VirtualTerminal};
use agentsh_protocol::Timeout;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/config")
        .join(name)
}

fn load(name: &str) -> Result<Settings, String> {
    Settings::load(
        Some(&ConfigPath::Flag(fixture(name))),
        Some(Path::new("/home/ann")),
    )
    .map_err(|err| err.to_string())
}

#[test]
fn full_config_sets_every_key() {
    let settings = load("full.toml").unwrap();
    let bash = &settings.bash;
    assert_eq!(bash.virtual_terminal, VirtualTerminal::On);
    assert_eq!(bash.shell.as_deref(), Some(Path::new("/bin/zsh")));
    assert_eq!(bash.prefix.as_deref(), Some("nice -n 5"));
    assert_eq!(bash.default_timeout, Timeout::clamp(90.5));
    assert_eq!(bash.max_shells, 4);
    assert_eq!(bash.shell_idle_minutes, 10);
    assert_eq!(bash.snapshot_timeout, std::time::Duration::from_secs(30));
    assert_eq!(
        bash.env,
        BTreeMap::from([
            (
                "MY VAR".to_owned(),
                "spaces are fine in TOML keys".to_owned()
            ),
            ("RUST_BACKTRACE".to_owned(), "1".to_owned()),
        ])
    );
    assert!(settings.bash_interceptor.enabled);
    let rules = &settings.bash_interceptor.rules;
    assert_eq!(rules.len(), 2);
    assert_eq!(rules[0].pattern, r"^\s*cat\s+");
    assert_eq!(rules[0].tool, "read");
    assert_eq!(rules[1].flags.as_deref(), Some("i"));
    assert_eq!(
        settings.artifacts.dir.as_deref(),
        Some(Path::new("/var/tmp/agentsh-artifacts"))
    );
    assert_eq!(settings.artifacts.max_bytes, 10_485_760);
    assert_eq!(settings.artifacts.max_age_days, 2);
    assert_eq!(settings.output.max_bytes, 102_400);

    // The rules work as configured (the `i` flag included).
    let (interceptor, warnings) = Interceptor::new(rules);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        interceptor.check("grep -r x .", &["grep"]).map(|i| i.rule),
        Some(1)
    );
}

#[test]
fn each_broken_fixture_names_file_key_and_reason() {
    let cases: &[(&str, &str)] = &[
        (
            "unknown-key.toml",
            "bash.max_shell: unknown field `max_shell`, expected one of `virtual_terminal`, `shell`, `prefix`, `default_timeout`, `max_shells`, `shell_idle_minutes`, `yield_after`, `snapshot_timeout`, `env`",
        ),
        (
            "unknown-rule-key.toml",
            "bash_interceptor.rules[1].patern: unknown field `patern`, expected one of `pattern`, `tool`, `message`, `flags`",
        ),
        (
            "wrong-type.toml",
            "bash.default_timeout: invalid type: string \"30\", expected a number",
        ),
        (
            "wrong-type-env.toml",
            "bash.env.DEBUG: invalid type: integer `1`, expected a string",
        ),
        (
            "bad-value.toml",
            "bash.max_shells: must be at least 1, got 0",
        ),
        (
            "bad-enum.toml",
            "bash.virtual_terminal: unknown variant `maybe`, expected `off` or `on`",
        ),
        (
            "syntax-error.toml",
            "line 1, column 6: unclosed table, expected `]`",
        ),
    ];
    for (name, want) in cases {
        let path = fixture(name);
        assert_eq!(
            load(name).unwrap_err(),
            format!("config error in {}: {want}", path.display()),
            "{name}"
        );
    }
}

#[test]
fn invalid_regexes_load_and_become_warnings() {
    let settings = load("invalid-regex.toml").unwrap();
    let (interceptor, warnings) = Interceptor::new(&settings.bash_interceptor.rules);
    let indices: Vec<usize> = warnings.iter().map(|w| w.index).collect();
    assert_eq!(indices, [0, 1]);
    // No rule survived, so nothing is blocked.
    assert!(interceptor.check("cat x", &["read"]).is_none());
}
