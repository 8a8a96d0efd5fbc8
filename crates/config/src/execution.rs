//! The settings that shape execution, as they travel in the hello of a remote session:
//! the local side sends its sections as written, the far side applies them to its own
//! configuration and checks them by the rules of a file.

use std::path::PathBuf;

use agentsh_protocol::json_kind;
use serde_json::Value;

use super::error::ConfigError;
use super::key_path::Invalid;
use super::key_path::display_key;
use super::load::RawSettings;
use super::types::{EXECUTION_SECTIONS, Settings};

/// What stands for the file in the errors of settings that came in a hello.
pub const HELLO_SETTINGS_SOURCE: &str = "hello settings";

impl Settings {
    /// The sections that shape execution ([`EXECUTION_SECTIONS`]) as they were written in the
    /// configuration file, for the hello of a remote session: a JSON object with those present
    /// (an absent one is left out, so the far side's own defaults apply to it), their keys and
    /// values as written — `~` in a path not expanded, which the far side does against its own
    /// home. Settings not read from a file (or a file without those sections) give `{}`.
    pub fn execution_settings(&self) -> Value {
        Value::Object(self.written.sections.clone())
    }

    /// These settings with each section given in `sections` (a JSON object, as
    /// [`execution_settings`](Self::execution_settings) makes it) in place of this one's: a
    /// given section replaces the section whole, the others stay as they are.
    ///
    /// The sections are checked by the rules of a file, and the merged settings as a whole
    /// (`limits.tmp_size` needs a sandbox, given or the receiver's own); a
    /// [`ConfigError::Invalid`] names the key (`sandbox.mode`) with [`HELLO_SETTINGS_SOURCE`]
    /// for the file. A key that is not one of
    /// [`EXECUTION_SECTIONS`], a section that is not an object, or `sections` not an object
    /// (key `settings`) is an error too. `~` expands against the home these settings were read
    /// with (else `$HOME`); a relative `sandbox.writable` path is refused, there being no file
    /// for it to be relative to.
    pub fn with_execution_settings(&self, sections: &Value) -> Result<Settings, ConfigError> {
        let fail = |key: &str, reason: String| ConfigError::Invalid {
            path: PathBuf::from(HELLO_SETTINGS_SOURCE),
            key: key.to_owned(),
            reason,
        };
        let Value::Object(given) = sections else {
            return Err(fail(
                "settings",
                format!("must be an object, got {}", json_kind(sections)),
            ));
        };
        for (key, value) in given {
            if !EXECUTION_SECTIONS.contains(&key.as_str()) {
                return Err(fail(
                    &display_key(key),
                    format!(
                        "is not a section that shapes execution (those are {})",
                        EXECUTION_SECTIONS.join(", ")
                    ),
                ));
            }
            if !value.is_object() {
                return Err(fail(
                    key,
                    format!("must be a table, got {}", json_kind(value)),
                ));
            }
        }
        let raw: RawSettings = serde_path_to_error::deserialize(sections)
            .map_err(|err| fail(&err.path().to_string(), err.into_inner().to_string()))?;
        let home = self.written.home.clone().or_else(|| {
            std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(PathBuf::from)
        });
        let checked = raw
            .check(home.as_deref(), None)
            .map_err(|Invalid { key, reason }| fail(&key, reason))?;
        let mut merged = self.clone();
        for (key, value) in given {
            match key.as_str() {
                "bash" => merged.bash = checked.bash.clone(),
                "bash_interceptor" => merged.bash_interceptor = checked.bash_interceptor.clone(),
                "output" => merged.output = checked.output.clone(),
                "jobs" => merged.jobs = checked.jobs.clone(),
                "sandbox" => merged.sandbox = checked.sandbox.clone(),
                "secrets" => merged.secrets = checked.secrets.clone(),
                "shape" => merged.shape = checked.shape.clone(),
                "limits" => merged.limits = checked.limits,
                // Refused above.
                _ => continue,
            }
            merged.written.sections.insert(key.clone(), value.clone());
        }
        merged
            .check_across()
            .map_err(|Invalid { key, reason }| fail(&key, reason))?;
        Ok(merged)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use agentsh_process::sandbox::SandboxMode;
    use serde_json::json;

    use super::*;

    fn load(text: &str, home: &str) -> Settings {
        Settings::from_toml(text, Path::new("/x/config.toml"), Some(Path::new(home)))
            .unwrap_or_else(|err| panic!("{err}"))
    }

    fn apply(sections: &Value) -> Result<Settings, String> {
        load("", "/home/far")
            .with_execution_settings(sections)
            .map_err(|err| err.to_string())
    }

    const FILE: &str = r#"
[bash]
shell = "zsh"
max_shells = 3
default_timeout = 2.5
env = { A = "1", "B C" = "2" }
[bash_interceptor]
enabled = true
[[bash_interceptor.rules]]
pattern = "^cat"
tool = "read"
message = "use read"
flags = "i"
[output]
max_bytes = 1000
[jobs]
max_running = 2
[sandbox]
mode = "workspace-write"
writable = ["~/cache", "/opt/x"]
network = true
[limits]
memory = "25%"
processes = 512
cpu_time = 600
tmp_size = "1.5GiB"
[artifacts]
max_age_days = 1
[ui]
theme = "ascii"
[remote]
target = "ssh://box"
"#;

    #[test]
    fn execution_settings_are_the_sections_as_written() {
        assert_eq!(Settings::default().execution_settings(), json!({}));
        assert_eq!(load("", "/h").execution_settings(), json!({}));
        assert_eq!(
            load("[output]\nmax_bytes = 7\n[ui]\ntheme = \"nerd\"\n", "/h").execution_settings(),
            json!({"output": {"max_bytes": 7}})
        );
        assert_eq!(
            load(FILE, "/home/ann").execution_settings(),
            json!({
                "bash": {
                    "shell": "zsh",
                    "max_shells": 3,
                    "default_timeout": 2.5,
                    "env": {"A": "1", "B C": "2"},
                },
                "bash_interceptor": {
                    "enabled": true,
                    "rules": [{"pattern": "^cat", "tool": "read", "message": "use read", "flags": "i"}],
                },
                "output": {"max_bytes": 1000},
                "jobs": {"max_running": 2},
                // `~` is the far side's to expand.
                "sandbox": {"mode": "workspace-write", "writable": ["~/cache", "/opt/x"], "network": true},
                "limits": {"memory": "25%", "processes": 512, "cpu_time": 600, "tmp_size": "1.5GiB"},
            })
        );
    }

    #[test]
    fn execution_settings_applied_on_defaults_equal_the_file() {
        let local = load(FILE, "/home/far");
        let sent = local.execution_settings();
        let far = load("[artifacts]\nmax_age_days = 3\n", "/home/far")
            .with_execution_settings(&sent)
            .unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(far.bash, local.bash);
        assert_eq!(far.bash_interceptor, local.bash_interceptor);
        assert_eq!(far.output, local.output);
        assert_eq!(far.jobs, local.jobs);
        assert_eq!(far.sandbox, local.sandbox);
        assert_eq!(far.sandbox.writable[0], Path::new("/home/far/cache"));
        assert_eq!(far.limits, local.limits);
        assert_eq!(
            far.limits,
            crate::LimitSettings {
                memory: crate::MemoryLimit::Percent(25.0),
                processes: Some(512),
                cpu_time: Some(std::time::Duration::from_secs(600)),
                tmp_size: Some(1_610_612_736),
            }
        );
        // What stays with each side stays.
        assert_eq!(far.artifacts.max_age_days, 3);
        assert_eq!(far.remote, crate::RemoteSettings::default());
        // And what it now runs with is what it would send on.
        assert_eq!(far.execution_settings(), sent);
    }

    #[test]
    fn a_given_section_replaces_the_receivers_whole() {
        let base = load(
            "[bash]\nmax_shells = 3\nenv = { X = \"x\" }\n[output]\nmax_bytes = 10\n",
            "/home/far",
        );
        let merged = base
            .with_execution_settings(&json!({"bash": {"env": {"A": "1"}}, "jobs": {}}))
            .unwrap_or_else(|err| panic!("{err}"));
        assert_eq!(merged.bash.max_shells, 16);
        assert_eq!(
            merged.bash.env,
            std::collections::BTreeMap::from([("A".to_owned(), "1".to_owned())])
        );
        assert_eq!(merged.output.max_bytes, 10);
        assert_eq!(merged.jobs, crate::JobSettings::default());
        assert_eq!(
            merged.execution_settings(),
            json!({"bash": {"env": {"A": "1"}}, "output": {"max_bytes": 10}, "jobs": {}})
        );
        // Nothing given, nothing changed.
        assert_eq!(base.with_execution_settings(&json!({})).unwrap(), base);
    }

    #[test]
    fn tilde_expands_against_the_receivers_home() {
        let merged =
            apply(&json!({"sandbox": {"mode": "read-only", "writable": ["~", "~/a"]}})).unwrap();
        assert_eq!(merged.sandbox.mode, Some(SandboxMode::ReadOnly));
        assert_eq!(
            merged.sandbox.writable,
            [Path::new("/home/far"), Path::new("/home/far/a")]
        );
    }

    #[test]
    fn limits_travel_and_tmp_size_needs_a_sandbox_on_the_far_side() {
        let limits = json!({"memory": "4GiB", "processes": "off", "cpu_time": 60});
        let merged = apply(&json!({"limits": limits})).unwrap();
        assert_eq!(
            merged.limits,
            crate::LimitSettings {
                memory: crate::MemoryLimit::Bytes(4 << 30),
                processes: None,
                cpu_time: Some(std::time::Duration::from_secs(60)),
                tmp_size: None,
            }
        );
        assert_eq!(merged.execution_settings(), json!({"limits": limits}));
        // Not given: the receiver's own limits stay.
        let own = load(
            "[limits]
memory = \"off\"
",
            "/home/far",
        );
        let kept = own
            .with_execution_settings(&json!({"output": {"max_bytes": 9}}))
            .unwrap();
        assert_eq!(kept.limits.memory, crate::MemoryLimit::Off);

        // tmp_size needs a sandbox: given with it, or the receiver's own.
        let needs = "config error in hello settings: limits.tmp_size: needs the sandbox (sandbox.mode is \"off\"): the tmpfs is the sandbox's private temporary directory";
        let tmp = json!({"tmp_size": "64MiB"});
        assert_eq!(apply(&json!({"limits": tmp})), Err(needs.to_owned()));
        let with = apply(&json!({"limits": tmp, "sandbox": {"mode": "read-only"}})).unwrap();
        assert_eq!(with.limits.tmp_size, Some(64 << 20));
        let sandboxed = load(
            "[sandbox]
mode = \"read-only\"
",
            "/home/far",
        );
        let own_sandbox = sandboxed
            .with_execution_settings(&json!({"limits": tmp}))
            .unwrap();
        assert_eq!(own_sandbox.limits.tmp_size, Some(64 << 20));
        // A sandbox turned off under the receiver's own tmp_size.
        let own_tmp = load(
            "[sandbox]
mode = \"read-only\"
[limits]
tmp_size = \"1G\"
",
            "/home/far",
        );
        assert_eq!(
            own_tmp
                .with_execution_settings(&json!({"sandbox": {"mode": "off"}}))
                .map_err(|err| err.to_string()),
            Err(needs.to_owned())
        );
    }

    #[test]
    fn bad_hello_settings_name_the_key() {
        let cases = [
            (
                json!({"sandbox": {"mode": "on"}}),
                "sandbox.mode: unknown variant `on`, expected one of `off`, `read-only`, `workspace-write`",
            ),
            (
                json!({"bash": {"max_shells": 0}}),
                "bash.max_shells: must be at least 1, got 0",
            ),
            (
                json!({"output": {"max_bytes": -1}}),
                "output.max_bytes: must be at least 1, got -1",
            ),
            (
                json!({"bash": {"max_shell": 1}}),
                "bash.max_shell: unknown field `max_shell`, expected one of `virtual_terminal`, `shell`, `prefix`, `default_timeout`, `max_shells`, `shell_idle_minutes`, `yield_after`, `snapshot_timeout`, `env`",
            ),
            (
                json!({"bash": {"env": {"A": 1}}}),
                "bash.env.A: invalid type: integer `1`, expected a string",
            ),
            (
                json!({"bash_interceptor": {"rules": [{"pattern": "a", "tool": "t", "message": "m", "flag": "i"}]}}),
                "bash_interceptor.rules[0].flag: unknown field `flag`, expected one of `pattern`, `tool`, `message`, `flags`",
            ),
            (
                json!({"jobs": {"max_running": "2"}}),
                "jobs.max_running: invalid type: string \"2\", expected an integer",
            ),
            (
                json!({"sandbox": {"writable": ["build"]}}),
                "sandbox.writable[0]: a relative path (build) has no configuration file here to be relative to: write it absolute or starting with `~/`",
            ),
            (
                json!({"artifacts": {"max_age_days": 1}}),
                "artifacts: is not a section that shapes execution (those are bash, bash_interceptor, output, jobs, sandbox, secrets, shape, limits)",
            ),
            (
                json!({"remote": {}}),
                "remote: is not a section that shapes execution (those are bash, bash_interceptor, output, jobs, sandbox, secrets, shape, limits)",
            ),
            (
                json!({"limits": {"memory": "lots"}}),
                "limits.memory: \"lots\" is not a size (\"4GiB\", \"512MiB\"), a percent (\"50%\") or \"off\"",
            ),
            (
                json!({"limits": {"memory": 1.5}}),
                "limits.memory: invalid type: floating point `1.5`, expected a size (\"4GiB\", \"512MiB\"), a percent (\"50%\") or \"off\"",
            ),
            (
                json!({"limits": {"processes": 0}}),
                "limits.processes: must be at least 1 (write \"off\" for no limit), got 0",
            ),
            (
                json!({"limits": {"tmp": "1G"}}),
                "limits.tmp: unknown field `tmp`, expected one of `memory`, `processes`, `cpu_time`, `tmp_size`",
            ),
            (json!({"bash": 3}), "bash: must be a table, got a number"),
            (json!({"output": null}), "output: must be a table, got null"),
            (json!(["bash"]), "settings: must be an object, got an array"),
        ];
        for (sections, want) in cases {
            assert_eq!(
                apply(&sections),
                Err(format!("config error in hello settings: {want}")),
                "{sections}"
            );
        }
    }
}
