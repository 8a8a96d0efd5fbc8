//! Tests of loading and checking settings: every error names the file, the key and the reason.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use agentsh_bash_policy::{Decision as PolicyDecision, PolicyConfig, RuleConfig};
use agentsh_process::sandbox::SandboxMode;

use super::*;
use agentsh_protocol::{Theme, Timeout};

/// The settings of the file `text` (at `/x/config.toml`, home `/home/ann`), or its error.
pub(crate) fn parse(text: &str) -> Result<Settings, String> {
    Settings::from_toml(
        text,
        Path::new("/x/config.toml"),
        Some(Path::new("/home/ann")),
    )
    .map_err(|err| err.to_string())
}

fn error(text: &str) -> String {
    parse(text).expect_err(text)
}

#[test]
fn empty_file_means_defaults() {
    let settings = parse("").unwrap();
    assert_eq!(settings, Settings::default());
    assert_eq!(settings.bash.virtual_terminal, VirtualTerminal::Off);
    assert_eq!(settings.bash.default_timeout, Timeout::clamp(300.0));
    assert_eq!(settings.bash.max_shells, 16);
    assert_eq!(settings.bash.shell_idle_minutes, 30);
    assert_eq!(
        settings.bash.snapshot_timeout,
        std::time::Duration::from_secs(10)
    );
    assert_eq!(
        settings.bash.shell_idle_timeout(),
        std::time::Duration::from_secs(1800)
    );
    assert!(!settings.bash_interceptor.enabled);
    assert!(settings.bash_interceptor.rules.is_empty());
    assert_eq!(settings.artifacts.dir, None);
    assert_eq!(settings.artifacts.max_bytes, 1_073_741_824);
    assert_eq!(settings.artifacts.max_age_days, 7);
    assert_eq!(settings.output.max_bytes, 51_200);
    assert_eq!(settings.ui.theme, Theme::Unicode);
    // Empty tables are fine too.
    assert_eq!(
        parse("[bash]\n[bash.env]\n[bash_interceptor]\n[artifacts]\n[output]\n[ui]\n").unwrap(),
        Settings::default()
    );
}

#[test]
fn values_are_read() {
    let settings = parse(
        "[bash]\ndefault_timeout = 2\nprefix = \"\"\n[artifacts]\ndir = \"~/arts\"\nmax_bytes = 0\nmax_age_days = 0\n",
    )
    .unwrap();
    assert_eq!(settings.bash.default_timeout, Timeout::clamp(2.0));
    assert_eq!(settings.bash.prefix.as_deref(), Some(""));
    for (written, millis) in [("1", 1000), ("2.5", 2500), ("60", 60_000)] {
        let settings = parse(&format!("[bash]\nsnapshot_timeout = {written}\n")).unwrap();
        assert_eq!(settings.bash.snapshot_timeout.as_millis(), millis);
    }
    assert_eq!(
        settings.artifacts.dir.as_deref(),
        Some(Path::new("/home/ann/arts"))
    );
    assert_eq!(settings.artifacts.max_bytes, 0);
    assert_eq!(settings.artifacts.max_age_days, 0);
    let settings = parse("[artifacts]\ndir = \"~\"\n").unwrap();
    assert_eq!(
        settings.artifacts.dir.as_deref(),
        Some(Path::new("/home/ann"))
    );
}

#[test]
fn the_ui_theme_is_read() {
    for theme in Theme::ALL {
        let settings = parse(&format!("[ui]\ntheme = \"{theme}\"\n")).unwrap();
        assert_eq!(settings.ui.theme, theme);
    }
    assert_eq!(
        parse("ui.theme = \"ascii\"").unwrap().ui,
        UiSettings {
            theme: Theme::Ascii
        }
    );
}

#[test]
fn the_sandbox_is_read() {
    let settings = parse("").unwrap();
    assert_eq!(settings.sandbox, SandboxSettings::default());
    assert_eq!(settings.sandbox.mode, None);
    assert!(settings.sandbox.writable.is_empty());
    assert_eq!(settings.sandbox.network, NetworkSetting::Off);
    assert_eq!(
        parse("[sandbox]\nmode = \"off\"\n").unwrap().sandbox.mode,
        None
    );
    assert_eq!(
        parse("[sandbox]\nmode = \"read-only\"\n")
            .unwrap()
            .sandbox
            .mode,
        Some(SandboxMode::ReadOnly)
    );
    let settings = parse(
        "[sandbox]\nmode = \"workspace-write\"\nnetwork = true\nwritable = [\"/opt/cache\", \"~/.cargo\", \"~\", \"build/out\", \"../shared\"]\n",
    )
    .unwrap();
    assert_eq!(
        settings.sandbox,
        SandboxSettings {
            mode: Some(SandboxMode::WorkspaceWrite),
            writable: vec![
                PathBuf::from("/opt/cache"),
                PathBuf::from("/home/ann/.cargo"),
                PathBuf::from("/home/ann"),
                // Relative paths are relative to the config file's directory.
                PathBuf::from("/x/build/out"),
                PathBuf::from("/x/../shared"),
            ],
            network: NetworkSetting::On,
        }
    );
}

#[test]
fn the_network_allowlist_is_read_and_checked() {
    let settings = parse(
        "[sandbox]\nmode = \"read-only\"\nnetwork = [\"github.com\", \"*.pythonhosted.org\", \"registry.npmjs.org:443\", \"10.1.2.3\"]\n",
    )
    .unwrap();
    assert_eq!(
        settings.sandbox.network,
        NetworkSetting::Allowlist(vec![
            "github.com".to_owned(),
            "*.pythonhosted.org".to_owned(),
            "registry.npmjs.org:443".to_owned(),
            "10.1.2.3".to_owned(),
        ])
    );
    assert_eq!(
        parse("[sandbox]\nmode = \"read-only\"\nnetwork = false\n")
            .unwrap()
            .sandbox
            .network,
        NetworkSetting::Off
    );
    // A list needs a sandbox; a bad entry names its index.
    let err = error("[sandbox]\nnetwork = [\"github.com\"]\n");
    assert!(
        err.contains(": sandbox.network: a list of hosts needs sandbox.mode"),
        "{err}"
    );
    for (bad, index) in [
        ("[\"github.com\", \"127.1\"]", 1),
        ("[\"2130706433\"]", 0),
        ("[\"a.com\", \"b.com\", \"\"]", 2),
        ("[\"*\"]", 0),
        ("[\"https://github.com\"]", 0),
        ("[\"github.com:99999\"]", 0),
        ("[\"a.*.com\"]", 0),
    ] {
        let err = error(&format!(
            "[sandbox]\nmode = \"read-only\"\nnetwork = {bad}\n"
        ));
        assert!(
            err.contains(&format!(": sandbox.network[{index}]: network entry ")),
            "{bad}: {err}"
        );
    }
    let err = error("[sandbox]\nmode = \"read-only\"\nnetwork = [\"a.com\", 1]\n");
    assert!(
        err.contains(": sandbox.network[1]: invalid type: integer"),
        "{err}"
    );
}

#[test]
fn sandbox_tilde_needs_a_home() {
    let err = Settings::from_toml(
        "[sandbox]\nwritable = [\"/a\", \"~/x\"]\n",
        Path::new("/x/config.toml"),
        None,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "config error in /x/config.toml: sandbox.writable[1]: cannot expand `~` in \"~/x\": HOME is not set"
    );
}

#[test]
fn bad_values_name_key_and_reason() {
    let cases: &[(&str, &str)] = &[
        (
            "[sandbox]\nmode = \"on\"",
            "sandbox.mode: unknown variant `on`, expected one of `off`, `read-only`, `workspace-write`",
        ),
        (
            "[sandbox]\nmode = \"Read-Only\"",
            "sandbox.mode: unknown variant `Read-Only`, expected one of `off`, `read-only`, `workspace-write`",
        ),
        (
            "[sandbox]\nwritable = [\"/a\", \"\"]",
            "sandbox.writable[1]: must not be empty",
        ),
        (
            "[sandbox]\nwritable = [\"/a\\u0000b\"]",
            "sandbox.writable[0]: must not contain a NUL character",
        ),
        (
            "[bash]\nmax_shells = 0",
            "bash.max_shells: must be at least 1, got 0",
        ),
        (
            "[bash]\nmax_shells = -2",
            "bash.max_shells: must be at least 1, got -2",
        ),
        (
            "[bash]\nmax_shells = 99999999999",
            "bash.max_shells: must be at most 4294967295, got 99999999999",
        ),
        (
            "[bash]\nshell_idle_minutes = 0",
            "bash.shell_idle_minutes: must be at least 1, got 0",
        ),
        (
            "[bash]\nsnapshot_timeout = 0.5",
            "bash.snapshot_timeout: must be a number of seconds from 1 to 60, got 0.5",
        ),
        (
            "[bash]\nsnapshot_timeout = 61",
            "bash.snapshot_timeout: must be a number of seconds from 1 to 60, got 61",
        ),
        (
            "[bash]\nsnapshot_timeout = nan",
            "bash.snapshot_timeout: must be a number of seconds from 1 to 60, got NaN",
        ),
        (
            "[bash]\ndefault_timeout = -3",
            "bash.default_timeout: must be a number of seconds from 1 to 3600, got -3",
        ),
        (
            "[bash]\ndefault_timeout = 0.5",
            "bash.default_timeout: must be a number of seconds from 1 to 3600, got 0.5",
        ),
        (
            "[bash]\ndefault_timeout = 7200",
            "bash.default_timeout: must be a number of seconds from 1 to 3600, got 7200",
        ),
        (
            "[bash]\ndefault_timeout = nan",
            "bash.default_timeout: must be a number of seconds from 1 to 3600, got NaN",
        ),
        (
            "[bash]\ndefault_timeout = inf",
            "bash.default_timeout: must be a number of seconds from 1 to 3600, got inf",
        ),
        (
            "[bash]\nshell = \"\"",
            "bash.shell: must not be empty (remove the key to use the default shell)",
        ),
        (
            "[bash.env]\n\"A=B\" = \"x\"",
            "bash.env.\"A=B\": a variable name must not contain `=` or a NUL character",
        ),
        (
            "[bash.env]\n\"\" = \"x\"",
            "bash.env.\"\": a variable name must not be empty",
        ),
        (
            "[bash.env]\nA = \"x\\u0000y\"",
            "bash.env.A: the value must not contain a NUL character",
        ),
        (
            "[artifacts]\nmax_bytes = -1",
            "artifacts.max_bytes: must not be negative, got -1",
        ),
        (
            "[artifacts]\nmax_age_days = -7",
            "artifacts.max_age_days: must not be negative, got -7",
        ),
        (
            "[artifacts]\ndir = \"rel/dir\"",
            "artifacts.dir: must be an absolute path or start with `~/`, got \"rel/dir\"",
        ),
        (
            "[output]\nmax_bytes = 0",
            "output.max_bytes: must be at least 1, got 0",
        ),
        (
            "[ui]\ntheme = \"fancy\"",
            "ui.theme: unknown theme `fancy`: expected \"unicode\", \"nerd\" or \"ascii\"",
        ),
        (
            "[ui]\ntheme = \"Unicode\"",
            "ui.theme: unknown theme `Unicode`: expected \"unicode\", \"nerd\" or \"ascii\"",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(
            error(text),
            format!("config error in /x/config.toml: {want}"),
            "{text}"
        );
    }
}

#[test]
fn type_errors_name_the_key() {
    let cases: &[(&str, &str)] = &[
        (
            "[sandbox]\nmode = true",
            "sandbox.mode: invalid type: boolean `true`, expected `off`, `read-only` or `workspace-write`",
        ),
        (
            "[sandbox]\nnetwork = \"no\"",
            "sandbox.network: invalid type: string \"no\", expected true, false or a list of hosts",
        ),
        (
            "[sandbox]\nwritable = \"/a\"",
            "sandbox.writable: invalid type: string \"/a\", expected a sequence",
        ),
        (
            "[sandbox]\nwritable = [\"/a\", 1]",
            "sandbox.writable[1]: invalid type: integer `1`, expected a string",
        ),
        (
            "sandbox = true",
            "sandbox: invalid type: boolean `true`, expected a table",
        ),
        (
            "[bash]\nmax_shells = \"4\"",
            "bash.max_shells: invalid type: string \"4\", expected an integer",
        ),
        (
            "[bash]\nmax_shells = 4.5",
            "bash.max_shells: invalid type: floating point `4.5`, expected an integer",
        ),
        (
            "[bash]\ndefault_timeout = \"30\"",
            "bash.default_timeout: invalid type: string \"30\", expected a number",
        ),
        (
            "[bash]\nvirtual_terminal = \"maybe\"",
            "bash.virtual_terminal: unknown variant `maybe`, expected `off` or `on`",
        ),
        (
            "[bash]\nvirtual_terminal = true",
            "bash.virtual_terminal: invalid type: boolean `true`, expected `off` or `on`",
        ),
        (
            "[bash.env]\nDEBUG = 1",
            "bash.env.DEBUG: invalid type: integer `1`, expected a string",
        ),
        (
            "bash = 3",
            "bash: invalid type: integer `3`, expected a table",
        ),
        (
            "[bash_interceptor]\nenabled = \"yes\"",
            "bash_interceptor.enabled: invalid type: string \"yes\", expected a boolean",
        ),
        (
            "[[bash_interceptor.rules]]\npattern = 'a'\ntool = 't'\nmessage = 'm'\n[[bash_interceptor.rules]]\npattern = 1\n",
            "bash_interceptor.rules[1].pattern: invalid type: integer `1`, expected a string",
        ),
        (
            "[[bash_interceptor.rules]]\npattern = 'a'\n",
            "bash_interceptor.rules[0]: missing field `tool`",
        ),
        (
            "[ui]\ntheme = 1",
            "ui.theme: invalid type: integer `1`, expected \"unicode\", \"nerd\" or \"ascii\"",
        ),
        (
            "[ui]\ntheme = [\"ascii\"]",
            "ui.theme: invalid type: sequence, expected \"unicode\", \"nerd\" or \"ascii\"",
        ),
        (
            "ui = \"ascii\"",
            "ui: invalid type: string \"ascii\", expected a table",
        ),
        (
            "[output]\nmax_bytes = 99999999999999999999",
            "output.max_bytes: must be at most 18446744073709551615, got 99999999999999999999",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(
            error(text),
            format!("config error in /x/config.toml: {want}"),
            "{text}"
        );
    }
}

#[test]
fn unknown_keys_name_the_key() {
    let cases: &[(&str, &str)] = &[
        (
            "[bash]\nmax_shell = 1",
            "bash.max_shell: unknown field `max_shell`, expected one of `virtual_terminal`, `shell`, `prefix`, `default_timeout`, `max_shells`, `shell_idle_minutes`, `yield_after`, `snapshot_timeout`, `env`",
        ),
        (
            "[outptu]\nmax_bytes = 1",
            "outptu: unknown field `outptu`, expected one of `bash`, `bash_interceptor`, `artifacts`, `output`, `jobs`, `mcp`, `ui`, `sandbox`, `remote`, `policy`, `audit`, `secrets`, `shape`, `limits`",
        ),
        (
            "[ui]\ntheme = \"nerd\"\nthem = \"nerd\"",
            "ui.them: unknown field `them`, expected `theme`",
        ),
        (
            "[sandbox]\nnetwrk = true",
            "sandbox.netwrk: unknown field `netwrk`, expected one of `mode`, `writable`, `network`",
        ),
        (
            "output.max_byte = 1",
            "output.max_byte: unknown field `max_byte`, expected `max_bytes`",
        ),
        (
            "[artifacts]\ndirectory = \"/x\"",
            "artifacts.directory: unknown field `directory`, expected one of `dir`, `max_bytes`, `max_age_days`",
        ),
        (
            "[[bash_interceptor.rules]]\npattern = 'a'\ntool = 't'\nmessage = 'm'\nflag = 'i'\n",
            "bash_interceptor.rules[0].flag: unknown field `flag`, expected one of `pattern`, `tool`, `message`, `flags`",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(
            error(text),
            format!("config error in /x/config.toml: {want}"),
            "{text}"
        );
    }
}

#[test]
fn syntax_errors_give_line_and_column() {
    assert_eq!(
        error("[bash]\nmax_shells = 1\n[bash\n"),
        "config error in /x/config.toml: line 3, column 6: unclosed table, expected `]`"
    );
    assert_eq!(
        error("[bash]\nmax_shells = 1\nmax_shells = 2\n"),
        "config error in /x/config.toml: line 3, column 1: duplicate key"
    );
}

#[test]
fn invalid_regexes_are_not_config_errors() {
    let settings = parse(
        "[bash_interceptor]\nenabled = true\n[[bash_interceptor.rules]]\npattern = '(unclosed'\ntool = ''\nmessage = 'm'\nflags = 'zz'\n",
    )
    .unwrap();
    assert!(settings.bash_interceptor.enabled);
    assert_eq!(settings.bash_interceptor.rules.len(), 1);
    assert_eq!(settings.bash_interceptor.rules[0].pattern, "(unclosed");
    assert_eq!(
        settings.bash_interceptor.rules[0].flags.as_deref(),
        Some("zz")
    );
}

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| {
        pairs
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| OsString::from(value))
    }
}

#[test]
fn config_path_precedence() {
    let all = env_of(&[
        ("AGENTSH_CONFIG", "/env/agentsh.toml"),
        ("XDG_CONFIG_HOME", "/xdg"),
        ("HOME", "/home/ann"),
    ]);
    assert_eq!(
        config_path(Some(Path::new("flag.toml")), &all),
        Some(ConfigPath::Flag("flag.toml".into()))
    );
    assert_eq!(
        config_path(None, &all),
        Some(ConfigPath::Env("/env/agentsh.toml".into()))
    );
    assert_eq!(
        config_path(
            None,
            env_of(&[("XDG_CONFIG_HOME", "/xdg"), ("HOME", "/home/ann")])
        ),
        Some(ConfigPath::Default("/xdg/agentsh/config.toml".into()))
    );
    let fallbacks: &[&[(&str, &str)]] = &[
        &[("HOME", "/home/ann")],
        &[
            ("AGENTSH_CONFIG", ""),
            ("XDG_CONFIG_HOME", ""),
            ("HOME", "/home/ann"),
        ],
        &[("XDG_CONFIG_HOME", "relative/dir"), ("HOME", "/home/ann")],
    ];
    for env in fallbacks {
        assert_eq!(
            config_path(None, env_of(env)),
            Some(ConfigPath::Default(
                "/home/ann/.config/agentsh/config.toml".into()
            )),
            "{env:?}"
        );
    }
    assert_eq!(config_path(None, env_of(&[])), None);
    assert!(ConfigPath::Flag("a".into()).is_required());
    assert!(ConfigPath::Env("a".into()).is_required());
    assert!(!ConfigPath::Default("a".into()).is_required());
}

#[test]
fn load_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.toml");
    assert_eq!(
        Settings::load(Some(&ConfigPath::Default(missing.clone())), None).unwrap(),
        Settings::default()
    );
    assert_eq!(Settings::load(None, None).unwrap(), Settings::default());
    for source in [
        ConfigPath::Flag(missing.clone()),
        ConfigPath::Env(missing.clone()),
    ] {
        let err = Settings::load(Some(&source), None).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("config error in {}: file not found", missing.display())
        );
    }
    // A directory where the file should be is an error even at the default location.
    let err =
        Settings::load(Some(&ConfigPath::Default(dir.path().to_path_buf())), None).unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }), "{err}");
}

#[test]
fn the_policy_is_read() {
    let settings = parse("").unwrap();
    assert_eq!(settings.policy, PolicyConfig::default());
    let settings = parse(
        "[policy]\ndefault = \"ask\"\nunknown = \"deny\"\nask_timeout = 60\n\
         [[policy.rules]]\nprefix = [\"git\", \"push\"]\ndecision = \"ask\"\nreason = \"Pushing publishes work.\"\n\
         match = [\"git push origin main\"]\nnot_match = [\"git status\"]\n\
         [[policy.rules]]\nregex = \"rm -rf /\"\ndecision = \"deny\"\n",
    )
    .unwrap();
    assert_eq!(
        settings.policy,
        PolicyConfig {
            default: Some(PolicyDecision::Ask),
            unknown: Some(PolicyDecision::Deny),
            ask_timeout: Some(60),
            rules: vec![
                RuleConfig {
                    prefix: Some(vec!["git".into(), "push".into()]),
                    regex: None,
                    decision: PolicyDecision::Ask,
                    reason: Some("Pushing publishes work.".into()),
                    matches: vec!["git push origin main".into()],
                    not_match: vec!["git status".into()],
                },
                RuleConfig {
                    prefix: None,
                    regex: Some("rm -rf /".into()),
                    decision: PolicyDecision::Deny,
                    reason: None,
                    matches: Vec::new(),
                    not_match: Vec::new(),
                },
            ],
        }
    );
    assert_eq!(
        settings.config_file.as_deref(),
        Some(Path::new("/x/config.toml"))
    );
}

#[test]
fn bad_policy_keys_name_key_and_reason() {
    let cases: &[(&str, &str)] = &[
        (
            "[policy]\ndefualt = \"ask\"",
            "policy.defualt: unknown field `defualt`, expected one of `default`, `unknown`, `ask_timeout`, `rules`",
        ),
        (
            "[policy]\ndefault = \"maybe\"",
            "policy.default: unknown variant `maybe`, expected one of `allow`, `ask`, `deny`",
        ),
        (
            "[[policy.rules]]\nprefix = [\"git\"]\ndecision = \"allow\"\n[[policy.rules]]\nprefix = [\"rm\"]\ndecision = \"never\"\n",
            "policy.rules[1].decision: unknown variant `never`, expected one of `allow`, `ask`, `deny`",
        ),
        (
            "[[policy.rules]]\nprefix = [\"git\"]\ndecision = \"ask\"\nreasn = \"x\"\n",
            "policy.rules[0].reasn: unknown field `reasn`, expected one of `prefix`, `regex`, `decision`, `reason`, `match`, `not_match`",
        ),
        (
            "[[policy.rules]]\nprefix = \"git\"\ndecision = \"ask\"\n",
            "policy.rules[0].prefix: invalid type: string \"git\", expected a sequence",
        ),
        (
            "[[policy.rules]]\nprefix = [\"git\"]\n",
            "policy.rules[0]: missing field `decision`",
        ),
        (
            "[policy]\nask_timeout = \"5\"",
            "policy.ask_timeout: invalid type: string \"5\", expected u64",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(
            error(text),
            format!("config error in /x/config.toml: {want}"),
            "{text}"
        );
    }
}

#[test]
fn the_audit_section_is_read() {
    let settings = parse("").unwrap();
    assert_eq!(settings.audit, AuditSettings::default());
    assert!(!settings.audit.enabled && !settings.audit.required);
    assert_eq!(settings.audit.path, None);
    let settings =
        parse("[audit]\nenabled = true\npath = \"~/logs/audit.jsonl\"\nrequired = true\n").unwrap();
    assert_eq!(
        settings.audit,
        AuditSettings {
            enabled: true,
            path: Some(PathBuf::from("/home/ann/logs/audit.jsonl")),
            required: true,
        }
    );
    assert_eq!(
        settings
            .audit
            .resolved_path(env_of(&[("XDG_STATE_HOME", "/s")])),
        Some(PathBuf::from("/home/ann/logs/audit.jsonl"))
    );
    let cases: &[(&str, &str)] = &[
        (
            "[audit]\npath = \"logs/a.jsonl\"",
            "audit.path: must be an absolute path or start with `~/`, got \"logs/a.jsonl\"",
        ),
        (
            "[audit]\nenabled = \"yes\"",
            "audit.enabled: invalid type: string \"yes\", expected a boolean",
        ),
        (
            "[audit]\nrequire = true",
            "audit.require: unknown field `require`, expected one of `enabled`, `path`, `required`",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(
            error(text),
            format!("config error in /x/config.toml: {want}"),
            "{text}"
        );
    }
}

#[test]
fn the_default_audit_path_follows_xdg() {
    type Env = &'static [(&'static str, &'static str)];
    let cases: &[(Env, Option<&str>)] = &[
        (
            &[("XDG_STATE_HOME", "/state"), ("HOME", "/home/ann")],
            Some("/state/agentsh/audit.jsonl"),
        ),
        (
            &[("XDG_STATE_HOME", ""), ("HOME", "/home/ann")],
            Some("/home/ann/.local/state/agentsh/audit.jsonl"),
        ),
        (
            &[("XDG_STATE_HOME", "rel"), ("HOME", "/home/ann")],
            Some("/home/ann/.local/state/agentsh/audit.jsonl"),
        ),
        (&[("HOME", "")], None),
        (&[], None),
    ];
    for (env, want) in cases {
        assert_eq!(
            default_audit_path(env_of(env)),
            want.map(PathBuf::from),
            "{env:?}"
        );
    }
}

#[test]
fn the_secrets_section_is_read_and_checked() {
    let defaults = parse("").unwrap().secrets;
    assert!(defaults.enabled && defaults.default_patterns);
    assert!(defaults.is_secret_name("GITHUB_TOKEN"));
    assert!(defaults.is_secret_name("openai_api_key"));
    assert!(defaults.is_secret_name("DATABASE_URL"));
    assert!(!defaults.is_secret_name("PATH"));
    let settings = parse(
        "[secrets]\nenv = [\"SENTRY_DSN\"]\ndefault_patterns = false\n[[secrets.patterns]]\nname = \"itk\"\nregex = \"itk_[a-z]{8}\"\n",
    )
    .unwrap()
    .secrets;
    assert!(settings.is_secret_name("sentry_dsn"));
    assert!(settings.is_secret_name("MY_TOKEN"), "the defaults stay");
    assert_eq!(settings.patterns.len(), 1);
    assert_eq!(settings.patterns[0].max_bytes, 1024);
    let names: Vec<String> = settings
        .compiled_patterns()
        .iter()
        .map(|p| p.name().to_owned())
        .collect();
    assert_eq!(names, ["itk"]);
    for (bad, key) in [
        ("env = [\"\"]", "secrets.env[0]: must not be empty"),
        (
            "[[secrets.patterns]]\nname = \"x\"\nregex = \"(\"",
            "secrets.patterns[0].regex: not a valid regex",
        ),
        (
            "[[secrets.patterns]]\nname = \"x\"\nregex = \"a*\"",
            "secrets.patterns[0].regex: matches the empty text",
        ),
        (
            "[[secrets.patterns]]\nname = \"\"\nregex = \"a\"",
            "secrets.patterns[0].name: must not be empty",
        ),
        (
            "[[secrets.patterns]]\nname = \"x\"\nregex = \"a\"\nmax_bytes = 0",
            "secrets.patterns[0].max_bytes: must be between 1 and 65536, got 0",
        ),
    ] {
        let err = error(&format!("[secrets]\n{bad}\n"));
        assert!(err.contains(key), "{bad}: {err}");
    }
}
