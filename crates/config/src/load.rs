//! Finding, reading and checking the configuration file, and what can be wrong with it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agentsh_bash_interceptor::Rule;
use agentsh_bash_policy::PolicyConfig;
use agentsh_process::sandbox::SandboxMode;
use agentsh_protocol::Theme;
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use super::error::{ConfigError, data_error, parse_document};
use super::key_path::{Invalid, display_key, invalid};
use super::limits::{RawLimits, check_tmp_size};
use super::network::{NetworkSetting, RawNetwork};
use super::policy::{policy_from_tiers, user_tier};
use super::remote::RawRemote;
use super::secrets::RawSecrets;
use super::types::{
    ArtifactSettings, AuditSettings, BashSettings, DEFAULT_ARTIFACTS_MAX_AGE_DAYS,
    DEFAULT_ARTIFACTS_MAX_BYTES, DEFAULT_JOBS_MAX_LOG_BYTES, DEFAULT_JOBS_MAX_RUNNING,
    DEFAULT_MCP_YIELD_AFTER, DEFAULT_OUTPUT_MAX_BYTES, InterceptorSettings, JobSettings,
    MAX_SNAPSHOT_TIMEOUT, McpSettings, OutputSettings, SandboxSettings, Settings, ShapeSettings,
    UiSettings, VirtualTerminal, Written,
};
use agentsh_protocol::Timeout;

/// Environment variable naming the config file when `--config` is not given.
pub const CONFIG_ENV: &str = "AGENTSH_CONFIG";

/// Where the configuration comes from; see [`config_path`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigPath {
    /// `--config FILE`: must exist.
    Flag(PathBuf),
    /// `AGENTSH_CONFIG`: must exist.
    Env(PathBuf),
    /// The default location: a missing file means defaults.
    Default(PathBuf),
}

impl ConfigPath {
    /// The file.
    pub fn path(&self) -> &Path {
        match self {
            Self::Flag(path) | Self::Env(path) | Self::Default(path) => path,
        }
    }

    /// Whether a missing file is an error (it was named explicitly).
    pub fn is_required(&self) -> bool {
        !matches!(self, Self::Default(_))
    }
}

/// The configuration file to read: `explicit` (`--config FILE`), else `AGENTSH_CONFIG`, else
/// `$XDG_CONFIG_HOME/agentsh/config.toml`, else `$HOME/.config/agentsh/config.toml`. Empty
/// variables count as unset, and a relative `XDG_CONFIG_HOME` is ignored (XDG base directory
/// spec). `None` when there is no `HOME` either: defaults apply.
///
/// `env` looks a variable up (pass `std::env::var_os` in production).
pub fn config_path(
    explicit: Option<&Path>,
    env: impl Fn(&str) -> Option<OsString>,
) -> Option<ConfigPath> {
    if let Some(path) = explicit {
        return Some(ConfigPath::Flag(path.to_path_buf()));
    }
    let var = |name: &str| {
        env(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    if let Some(path) = var(CONFIG_ENV) {
        return Some(ConfigPath::Env(path));
    }
    let config_home = var("XDG_CONFIG_HOME")
        .filter(|dir| dir.is_absolute())
        .or_else(|| var("HOME").map(|home| home.join(".config")))?;
    Some(ConfigPath::Default(
        config_home.join("agentsh").join("config.toml"),
    ))
}

impl Settings {
    /// Reads the configuration at `source` ([`config_path`]); `None` or a missing default file
    /// means defaults. `home` expands `~/` in `artifacts.dir` and `sandbox.writable`, and is
    /// kept for the `~` of sections applied later
    /// ([`with_execution_settings`](Self::with_execution_settings)).
    pub fn load(source: Option<&ConfigPath>, home: Option<&Path>) -> Result<Self, ConfigError> {
        let Some(source) = source else {
            return Ok(Self::defaults_with_home(home));
        };
        let path = source.path();
        match std::fs::read_to_string(path) {
            Ok(text) => Self::from_toml(&text, path, home),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                if source.is_required() {
                    Err(ConfigError::NotFound {
                        path: path.to_path_buf(),
                    })
                } else {
                    Ok(Self::defaults_with_home(home))
                }
            }
            Err(error) => Err(ConfigError::Read {
                path: path.to_path_buf(),
                error,
            }),
        }
    }

    /// Parses and checks the text of a configuration file; `file` names it in errors (and its
    /// directory is what a relative `sandbox.writable` path is relative to), `home` expands
    /// `~/` in `artifacts.dir` and `sandbox.writable` (and is kept, as by [`load`](Self::load)).
    /// The execution sections are also kept as written
    /// ([`execution_settings`](Self::execution_settings)).
    pub fn from_toml(text: &str, file: &Path, home: Option<&Path>) -> Result<Self, ConfigError> {
        let doc = parse_document(text, file)?;
        let raw = RawSettings::deserialize(toml::de::Deserializer::from(doc.clone()))
            .map_err(|err| data_error(&err, doc.get_ref(), text, file))?;
        let relative_to = file.parent().unwrap_or(Path::new(""));
        let mut settings = raw
            .check(home, Some(relative_to))
            .and_then(|settings| settings.check_across().map(|()| settings))
            .map_err(|Invalid { key, reason }| ConfigError::Invalid {
                path: file.to_path_buf(),
                key,
                reason,
            })?;
        // The user's tier of the policy is checked now (its rules, its examples), so that a
        // broken one stops agentsh before anything runs.
        if let Some(tier) = user_tier(&settings.policy, Some(file)) {
            policy_from_tiers(vec![tier])?;
        }
        settings.config_file = Some(file.to_path_buf());
        // Kept as written for the hello of a remote session.
        let written = serde_json::Value::deserialize(toml::de::Deserializer::from(doc.clone()))
            .map_err(|err| data_error(&err, doc.get_ref(), text, file))?;
        settings.written = Written::new(&written, home);
        Ok(settings)
    }

    /// The checks between sections, on settings whose sections were each checked: that
    /// `limits.tmp_size` has a sandbox. (Apart from the sections' own checks, since a far side
    /// is given some sections and keeps its own others.)
    pub(super) fn check_across(&self) -> Result<(), Invalid> {
        check_tmp_size(&self.limits, self.sandbox.mode.is_some())
    }

    /// The defaults, recording `home` for the `~` of execution settings applied later.
    fn defaults_with_home(home: Option<&Path>) -> Self {
        Self {
            written: Written::new(&serde_json::Value::Null, home),
            ..Self::default()
        }
    }
}

// The file as written. Integers are read wide and checked afterwards, so a negative or zero
// value gets a reason a user can act on rather than a type error.

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
pub(super) struct RawSettings {
    bash: RawBash,
    bash_interceptor: RawInterceptor,
    artifacts: RawArtifacts,
    output: RawOutput,
    jobs: RawJobs,
    mcp: RawMcp,
    ui: RawUi,
    sandbox: RawSandbox,
    remote: RawRemote,
    policy: PolicyConfig,
    audit: RawAudit,
    secrets: RawSecrets,
    shape: RawShape,
    limits: RawLimits,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
struct RawShape {
    enabled: Option<bool>,
    except: Vec<String>,
    filters: Vec<agentsh_shape::FilterConfig>,
}

impl RawShape {
    fn check(self) -> Result<ShapeSettings, Invalid> {
        let mut filters = Vec::new();
        for (index, config) in self.filters.iter().enumerate() {
            filters.push(
                agentsh_shape::Filter::new(config, index)
                    .map_err(|err| invalid(&err.key, err.reason))?,
            );
        }
        Ok(ShapeSettings {
            enabled: self.enabled.unwrap_or(true),
            shaping: agentsh_shape::Shaping::new(filters, self.except.clone()),
            except: self.except,
            filters: self.filters,
        })
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
struct RawBash {
    virtual_terminal: Option<VirtualTerminal>,
    shell: Option<String>,
    prefix: Option<String>,
    default_timeout: Option<Number>,
    max_shells: Option<Integer>,
    shell_idle_minutes: Option<Integer>,
    yield_after: Option<Number>,
    snapshot_timeout: Option<Number>,
    env: BTreeMap<String, String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
struct RawInterceptor {
    enabled: Option<bool>,
    rules: Vec<Rule>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
struct RawArtifacts {
    dir: Option<String>,
    max_bytes: Option<Integer>,
    max_age_days: Option<Integer>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
struct RawOutput {
    max_bytes: Option<Integer>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
struct RawMcp {
    yield_after: Option<Number>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
struct RawJobs {
    max_running: Option<Integer>,
    max_log_bytes: Option<Integer>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
struct RawAudit {
    enabled: Option<bool>,
    path: Option<String>,
    required: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
struct RawUi {
    theme: Option<ThemeName>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
struct RawSandbox {
    mode: Option<SandboxModeName>,
    writable: Option<Vec<String>>,
    network: Option<RawNetwork>,
}

/// `sandbox.mode`: `"off"` (`None`), `"read-only"` or `"workspace-write"`.
struct SandboxModeName(Option<SandboxMode>);

impl<'de> Deserialize<'de> for SandboxModeName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const VALUES: &[&str] = &["off", "read-only", "workspace-write"];
        struct ModeVisitor;
        impl Visitor<'_> for ModeVisitor {
            type Value = SandboxModeName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`off`, `read-only` or `workspace-write`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SandboxModeName, E> {
                match v {
                    "off" => Ok(SandboxModeName(None)),
                    "read-only" => Ok(SandboxModeName(Some(SandboxMode::ReadOnly))),
                    "workspace-write" => Ok(SandboxModeName(Some(SandboxMode::WorkspaceWrite))),
                    other => Err(E::unknown_variant(other, VALUES)),
                }
            }
        }
        deserializer.deserialize_any(ModeVisitor)
    }
}

/// `ui.theme`: exactly one of the theme names. (Derived enum parsing would answer a
/// non-string with "wanted string or table", which names no valid value.)
struct ThemeName(Theme);

impl<'de> Deserialize<'de> for ThemeName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ThemeVisitor;
        impl Visitor<'_> for ThemeVisitor {
            type Value = ThemeName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"unicode\", \"nerd\" or \"ascii\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ThemeName, E> {
                v.parse().map(ThemeName).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(ThemeVisitor)
    }
}

/// A TOML integer of any size (so an out-of-range one is a bad value, not a type error).
#[derive(Clone, Copy)]
struct Integer(i128);

impl<'de> Deserialize<'de> for Integer {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IntegerVisitor;
        impl Visitor<'_> for IntegerVisitor {
            type Value = Integer;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Integer, E> {
                Ok(Integer(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Integer, E> {
                Ok(Integer(v.into()))
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<Integer, E> {
                Ok(Integer(v))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<Integer, E> {
                Ok(Integer(i128::try_from(v).unwrap_or(i128::MAX)))
            }
        }
        deserializer.deserialize_any(IntegerVisitor)
    }
}

/// A TOML integer or float.
#[derive(Clone, Copy)]
struct Number(f64);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NumberVisitor;
        impl Visitor<'_> for NumberVisitor {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Number, E> {
                Ok(Number(v))
            }
        }
        deserializer.deserialize_any(NumberVisitor)
    }
}

/// An integer within `min..=max`, or a reason naming the bound it broke.
fn ranged<T: TryFrom<i128>>(key: &str, value: Integer, min: i128, max: i128) -> Result<T, Invalid> {
    let Integer(v) = value;
    if v < min {
        return Err(invalid(
            key,
            if min == 0 {
                format!("must not be negative, got {v}")
            } else {
                format!("must be at least {min}, got {v}")
            },
        ));
    }
    if v > max {
        return Err(invalid(key, format!("must be at most {max}, got {v}")));
    }
    T::try_from(v).map_err(|_| invalid(key, format!("must be at most {max}, got {v}")))
}

impl RawSettings {
    /// The settings these mean. `home` expands `~`; a relative `sandbox.writable` path is
    /// resolved against `relative_to` (the configuration file's directory), or refused
    /// without one (settings that came in a hello have no file).
    pub(super) fn check(
        self,
        home: Option<&Path>,
        relative_to: Option<&Path>,
    ) -> Result<Settings, Invalid> {
        Ok(Settings {
            bash: self.bash.check()?,
            bash_interceptor: InterceptorSettings {
                enabled: self.bash_interceptor.enabled.unwrap_or(false),
                rules: self.bash_interceptor.rules,
            },
            artifacts: self.artifacts.check(home)?,
            output: OutputSettings {
                max_bytes: match self.output.max_bytes {
                    Some(v) => ranged("output.max_bytes", v, 1, i128::from(u64::MAX))?,
                    None => DEFAULT_OUTPUT_MAX_BYTES,
                },
            },
            jobs: JobSettings {
                max_running: match self.jobs.max_running {
                    Some(v) => ranged("jobs.max_running", v, 1, i128::from(u32::MAX))?,
                    None => DEFAULT_JOBS_MAX_RUNNING,
                },
                max_log_bytes: match self.jobs.max_log_bytes {
                    Some(v) => ranged("jobs.max_log_bytes", v, 0, i128::from(u64::MAX))?,
                    None => DEFAULT_JOBS_MAX_LOG_BYTES,
                },
            },
            mcp: McpSettings {
                yield_after: match self.mcp.yield_after {
                    None => Some(DEFAULT_MCP_YIELD_AFTER),
                    Some(value) => yield_seconds("mcp.yield_after", value)?,
                },
            },
            ui: UiSettings {
                theme: self
                    .ui
                    .theme
                    .map_or_else(Theme::default, |ThemeName(theme)| theme),
            },
            sandbox: self.sandbox.check(home, relative_to)?,
            remote: self.remote.check()?,
            policy: self.policy,
            audit: AuditSettings {
                enabled: self.audit.enabled.unwrap_or(false),
                path: match self.audit.path {
                    None => None,
                    Some(path) => Some(absolute_path("audit.path", &path, home)?),
                },
                required: self.audit.required.unwrap_or(false),
            },
            secrets: self.secrets.check()?,
            shape: self.shape.check()?,
            limits: self.limits.check()?,
            config_file: None,
            written: Written::default(),
        })
    }
}

impl RawSandbox {
    fn check(
        self,
        home: Option<&Path>,
        relative_to: Option<&Path>,
    ) -> Result<SandboxSettings, Invalid> {
        let mut writable = Vec::new();
        for (index, path) in self.writable.unwrap_or_default().iter().enumerate() {
            writable.push(writable_path(
                &format!("sandbox.writable[{index}]"),
                path,
                home,
                relative_to,
            )?);
        }
        let mode = self.mode.and_then(|SandboxModeName(mode)| mode);
        let network = match self.network {
            Some(network) => network.check(mode.is_some())?,
            None => NetworkSetting::Off,
        };
        Ok(SandboxSettings {
            mode,
            writable,
            network,
        })
    }
}

/// One `sandbox.writable` entry: `~`/`~/…` expanded against `home`, a relative path resolved
/// against `relative_to` (the directory of the configuration file), or refused without one.
fn writable_path(
    key: &str,
    path: &str,
    home: Option<&Path>,
    relative_to: Option<&Path>,
) -> Result<PathBuf, Invalid> {
    if path.is_empty() {
        return Err(invalid(key, "must not be empty"));
    }
    if path.contains('\0') {
        return Err(invalid(key, "must not contain a NUL character"));
    }
    if path == "~" || path.starts_with("~/") {
        let Some(home) = home else {
            return Err(invalid(
                key,
                format!("cannot expand `~` in {path:?}: HOME is not set"),
            ));
        };
        let rest = path
            .strip_prefix('~')
            .unwrap_or(path)
            .trim_start_matches('/');
        return Ok(if rest.is_empty() {
            home.to_path_buf()
        } else {
            home.join(rest)
        });
    }
    let path = Path::new(path);
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    let Some(dir) = relative_to else {
        return Err(invalid(
            key,
            format!(
                "a relative path ({}) has no configuration file here to be relative to: \
                 write it absolute or starting with `~/`",
                path.display()
            ),
        ));
    };
    std::path::absolute(dir.join(path)).map_err(|err| {
        invalid(
            key,
            format!(
                "cannot resolve {} against the config file's directory: {err}",
                path.display()
            ),
        )
    })
}

impl RawBash {
    fn check(self) -> Result<BashSettings, Invalid> {
        let defaults = BashSettings::default();
        let shell = match self.shell {
            Some(shell) if shell.is_empty() => {
                return Err(invalid(
                    "bash.shell",
                    "must not be empty (remove the key to use the default shell)",
                ));
            }
            Some(shell) if shell.contains('\0') => {
                return Err(invalid("bash.shell", "must not contain a NUL character"));
            }
            shell => shell.map(PathBuf::from),
        };
        if self.prefix.as_deref().is_some_and(|p| p.contains('\0')) {
            return Err(invalid("bash.prefix", "must not contain a NUL character"));
        }
        let default_timeout = match self.default_timeout {
            None => defaults.default_timeout,
            Some(Number(seconds)) => {
                let (min, max) = (Timeout::MIN.seconds(), Timeout::MAX.seconds());
                if !(min..=max).contains(&seconds) {
                    return Err(invalid(
                        "bash.default_timeout",
                        format!(
                            "must be a number of seconds from {} to {}, got {seconds}",
                            Timeout::MIN,
                            Timeout::MAX
                        ),
                    ));
                }
                Timeout::clamp(seconds)
            }
        };
        for (name, value) in &self.env {
            let key = format!("bash.env.{}", display_key(name));
            if name.is_empty() {
                return Err(invalid(&key, "a variable name must not be empty"));
            }
            if name.contains('=') || name.contains('\0') {
                return Err(invalid(
                    &key,
                    "a variable name must not contain `=` or a NUL character",
                ));
            }
            if value.contains('\0') {
                return Err(invalid(&key, "the value must not contain a NUL character"));
            }
        }
        Ok(BashSettings {
            virtual_terminal: self.virtual_terminal.unwrap_or_default(),
            shell,
            prefix: self.prefix,
            default_timeout,
            max_shells: match self.max_shells {
                Some(v) => ranged("bash.max_shells", v, 1, i128::from(u32::MAX))?,
                None => defaults.max_shells,
            },
            shell_idle_minutes: match self.shell_idle_minutes {
                // A bound that keeps minutes × 60 in seconds from overflowing anywhere.
                Some(v) => ranged("bash.shell_idle_minutes", v, 1, i128::from(u32::MAX))?,
                None => defaults.shell_idle_minutes,
            },
            yield_after: match self.yield_after {
                None => None,
                Some(value) => yield_seconds("bash.yield_after", value)?,
            },
            snapshot_timeout: match self.snapshot_timeout {
                None => defaults.snapshot_timeout,
                Some(value) => snapshot_seconds(value)?,
            },
            env: self.env,
        })
    }
}

impl RawArtifacts {
    fn check(self, home: Option<&Path>) -> Result<ArtifactSettings, Invalid> {
        let dir = match self.dir {
            None => None,
            Some(dir) => Some(absolute_path("artifacts.dir", &dir, home)?),
        };
        Ok(ArtifactSettings {
            dir,
            max_bytes: match self.max_bytes {
                Some(v) => ranged("artifacts.max_bytes", v, 0, i128::from(u64::MAX))?,
                None => DEFAULT_ARTIFACTS_MAX_BYTES,
            },
            max_age_days: match self.max_age_days {
                Some(v) => ranged("artifacts.max_age_days", v, 0, i128::from(u32::MAX))?,
                None => DEFAULT_ARTIFACTS_MAX_AGE_DAYS,
            },
        })
    }
}

/// `bash.snapshot_timeout`: seconds, from 1 to [`MAX_SNAPSHOT_TIMEOUT`].
fn snapshot_seconds(Number(seconds): Number) -> Result<Duration, Invalid> {
    let max = MAX_SNAPSHOT_TIMEOUT.as_secs_f64();
    if (1.0..=max).contains(&seconds) {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(invalid(
            "bash.snapshot_timeout",
            format!("must be a number of seconds from 1 to {max}, got {seconds}"),
        ))
    }
}

/// A `yield_after` key: seconds, 0 or more; 0 = never.
fn yield_seconds(key: &str, Number(seconds): Number) -> Result<Option<f64>, Invalid> {
    if seconds.is_finite() && seconds >= 0.0 {
        Ok((seconds > 0.0).then_some(seconds))
    } else {
        Err(invalid(
            key,
            format!("must be a number of seconds, 0 or more, got {seconds}"),
        ))
    }
}

/// A path key (`artifacts.dir`, `audit.path`): absolute, or `~` / `~/…` expanded against
/// `home`.
fn absolute_path(key: &str, dir: &str, home: Option<&Path>) -> Result<PathBuf, Invalid> {
    if dir.contains('\0') {
        return Err(invalid(key, "must not contain a NUL character"));
    }
    let expanded = if dir == "~" || dir.starts_with("~/") {
        let Some(home) = home else {
            return Err(invalid(
                key,
                format!("cannot expand `~` in {dir:?}: HOME is not set"),
            ));
        };
        home.join(dir.strip_prefix("~").unwrap_or(dir).trim_start_matches('/'))
    } else {
        PathBuf::from(dir)
    };
    if expanded.is_absolute() {
        Ok(expanded)
    } else {
        Err(invalid(
            key,
            format!("must be an absolute path or start with `~/`, got {dir:?}"),
        ))
    }
}
