//! The configuration file (SPEC §12): where it is, what it may say, and what is wrong with it.
//!
//! Every key is optional; [`Settings::default`] is what an empty or absent file means. A file is
//! read whole and checked whole before anything runs: unknown keys, wrong types and bad values
//! are [`ConfigError`]s naming the file, the key (a dotted path such as `bash.max_shells` or
//! `bash_interceptor.rules[1].patern`) and the reason. Invalid interceptor *regexes* are the one
//! exception: they are not checked here but by `Interceptor::new`, which reports them as
//! warnings (SPEC §2).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};

use agentsh_bash_interceptor::Rule;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use thiserror::Error;
use toml::de::{DeTable, DeValue};

use crate::timeout::Timeout;

/// Environment variable naming the config file when `--config` is not given.
pub const CONFIG_ENV: &str = "AGENTSH_CONFIG";

/// Default of `bash.max_shells`: at most this many persistent shells are cached.
pub const DEFAULT_MAX_SHELLS: usize = agentsh_shell_executor::DEFAULT_MAX_SHELLS;
/// Default of `bash.shell_idle_minutes`: idle shells are closed after this many minutes.
pub const DEFAULT_SHELL_IDLE_MINUTES: u64 = agentsh_shell_executor::DEFAULT_IDLE_MINUTES;
/// Default of `artifacts.max_bytes`: 1 GiB in total.
pub const DEFAULT_ARTIFACTS_MAX_BYTES: u64 = agentsh_artifact_store::DEFAULT_MAX_BYTES;
/// Default of `artifacts.max_age_days`.
pub const DEFAULT_ARTIFACTS_MAX_AGE_DAYS: u32 = agentsh_artifact_store::DEFAULT_MAX_AGE_DAYS;
/// Default of `output.max_bytes`: the in-memory tail is 50 KB.
pub const DEFAULT_OUTPUT_MAX_BYTES: u64 = agentsh_output_sink::DEFAULT_MAX_BYTES as u64;

/// Everything the configuration file can set, with defaults filled in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// `[bash]`: the shells and the tool.
    pub bash: BashSettings,
    /// `[bash_interceptor]`: blocking commands that have a better tool.
    pub bash_interceptor: InterceptorSettings,
    /// `[artifacts]`: where full outputs are kept, and for how long.
    pub artifacts: ArtifactSettings,
    /// `[output]`: the in-memory output bound.
    pub output: OutputSettings,
}

/// `[bash]`.
#[derive(Debug, Clone, PartialEq)]
pub struct BashSettings {
    /// `virtual_terminal`: whether tool calls may run on a PTY (SPEC §8). Default `off`.
    pub virtual_terminal: VirtualTerminal,
    /// `shell`: the shell to run (a path, or a name looked up on `PATH`). Default: discovered.
    pub shell: Option<PathBuf>,
    /// `prefix`: put before every command (`<prefix> <command>`). `Some("")` switches off an
    /// inherited `AGENTSH_SHELL_PREFIX`. Default: none.
    pub prefix: Option<String>,
    /// `default_timeout`: seconds, for calls that give none. Default 300.
    pub default_timeout: Timeout,
    /// `max_shells`: the most persistent shells kept at once. Default 16.
    pub max_shells: usize,
    /// `shell_idle_minutes`: idle shells are closed after this long. Default 30.
    pub shell_idle_minutes: u64,
    /// `[bash.env]`: extra environment variables for every shell; they also override the
    /// hardening defaults of SPEC §7.
    pub env: BTreeMap<String, String>,
}

impl Default for BashSettings {
    fn default() -> Self {
        Self {
            virtual_terminal: VirtualTerminal::default(),
            shell: None,
            prefix: None,
            default_timeout: Timeout::DEFAULT,
            max_shells: DEFAULT_MAX_SHELLS,
            shell_idle_minutes: DEFAULT_SHELL_IDLE_MINUTES,
            env: BTreeMap::new(),
        }
    }
}

impl BashSettings {
    /// `shell_idle_minutes` as a duration.
    pub fn shell_idle_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.shell_idle_minutes.saturating_mul(60))
    }
}

/// `bash.virtual_terminal`: `"off"` (default) or `"on"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VirtualTerminal {
    /// Never run tool calls on a PTY.
    #[default]
    Off,
    /// Run tool calls on a PTY when the context has an interactive UI (SPEC §8).
    On,
}

/// Accepts exactly `"off"` or `"on"`. (Derived enum parsing would answer a non-string with
/// "wanted string or table", which names no valid value.)
impl<'de> Deserialize<'de> for VirtualTerminal {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const VALUES: &[&str] = &["off", "on"];
        struct ModeVisitor;
        impl Visitor<'_> for ModeVisitor {
            type Value = VirtualTerminal;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`off` or `on`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<VirtualTerminal, E> {
                match v {
                    "off" => Ok(VirtualTerminal::Off),
                    "on" => Ok(VirtualTerminal::On),
                    other => Err(E::unknown_variant(other, VALUES)),
                }
            }
        }
        deserializer.deserialize_any(ModeVisitor)
    }
}

/// `[bash_interceptor]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InterceptorSettings {
    /// `enabled`: default false.
    pub enabled: bool,
    /// `[[bash_interceptor.rules]]`, as written; an empty list means the default rules. Their
    /// regexes are not checked here (invalid ones become warnings, SPEC §2).
    pub rules: Vec<Rule>,
}

/// `[artifacts]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactSettings {
    /// `dir`: the store directory (absolute, `~/` expanded). Default: `$XDG_STATE_HOME/agentsh/artifacts`.
    pub dir: Option<PathBuf>,
    /// `max_bytes`: total size kept. Default 1 GiB.
    pub max_bytes: u64,
    /// `max_age_days`: older artifacts are removed. Default 7.
    pub max_age_days: u32,
}

impl Default for ArtifactSettings {
    fn default() -> Self {
        Self {
            dir: None,
            max_bytes: DEFAULT_ARTIFACTS_MAX_BYTES,
            max_age_days: DEFAULT_ARTIFACTS_MAX_AGE_DAYS,
        }
    }
}

/// `[output]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSettings {
    /// `max_bytes`: the tail of the output kept in memory and shown. Default 51,200 (50 KB).
    pub max_bytes: u64,
}

impl Default for OutputSettings {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_OUTPUT_MAX_BYTES,
        }
    }
}

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

/// A configuration that cannot be used. Every message starts `config error in <file>: `.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// A file named by `--config` or `AGENTSH_CONFIG` does not exist.
    #[error("config error in {}: file not found", path.display())]
    NotFound {
        /// The file.
        path: PathBuf,
    },
    /// The file exists but cannot be read (permissions, a directory, not UTF-8, …).
    #[error("config error in {}: cannot read the file: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is not valid TOML.
    #[error("config error in {}: line {line}, column {column}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column (in characters) of the error.
        column: usize,
        /// What the TOML parser said.
        message: String,
    },
    /// A key is unknown, has the wrong type or a bad value.
    #[error("config error in {}: {key}: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key as a dotted path: `bash.max_shells`, `bash.env.PATH`,
        /// `bash_interceptor.rules[0].tool`.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl Settings {
    /// Reads the configuration at `source` ([`config_path`]); `None` or a missing default file
    /// means defaults. `home` expands `~/` in `artifacts.dir`.
    pub fn load(source: Option<&ConfigPath>, home: Option<&Path>) -> Result<Self, ConfigError> {
        let Some(source) = source else {
            return Ok(Self::default());
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
                    Ok(Self::default())
                }
            }
            Err(source) => Err(ConfigError::Read {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Parses and checks the text of a configuration file; `file` names it in errors, `home`
    /// expands `~/` in `artifacts.dir`.
    pub fn from_toml(text: &str, file: &Path, home: Option<&Path>) -> Result<Self, ConfigError> {
        let doc = DeTable::parse(text).map_err(|err| {
            let (line, column) = err
                .span()
                .map_or((1, 1), |span| line_column(text, span.start));
            ConfigError::Syntax {
                path: file.to_path_buf(),
                line,
                column,
                message: err.message().trim().to_owned(),
            }
        })?;
        let raw = RawSettings::deserialize(toml::de::Deserializer::from(doc.clone()))
            .map_err(|err| data_error(&err, doc.get_ref(), text, file))?;
        raw.check(home)
            .map_err(|Invalid { key, reason }| ConfigError::Invalid {
                path: file.to_path_buf(),
                key,
                reason,
            })
    }
}

/// Maps a serde error in a well-formed document to the key it is about, found by its span.
fn data_error(err: &toml::de::Error, doc: &DeTable<'_>, text: &str, file: &Path) -> ConfigError {
    let message = err.message().trim().to_owned();
    let span = err.span().unwrap_or(0..0);
    if let Some(key) = key_path_at(doc, &span) {
        ConfigError::Invalid {
            path: file.to_path_buf(),
            key,
            reason: message,
        }
    } else {
        let (line, column) = line_column(text, span.start);
        ConfigError::Syntax {
            path: file.to_path_buf(),
            line,
            column,
            message,
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// One step of a key path.
enum Segment {
    Key(String),
    Index(usize),
}

/// The dotted path of the smallest key or value whose span holds `span`, if any.
fn key_path_at(doc: &DeTable<'_>, span: &Range<usize>) -> Option<String> {
    let mut finder = PathFinder {
        target: span.clone(),
        path: Vec::new(),
        best: None,
    };
    finder.table(doc);
    let (_, path) = finder.best?;
    Some(render_path(&path))
}

struct PathFinder {
    target: Range<usize>,
    path: Vec<Segment>,
    /// Span length and path of the best match so far.
    best: Option<(usize, Vec<Segment>)>,
}

impl PathFinder {
    fn table(&mut self, table: &DeTable<'_>) {
        for (key, value) in table {
            self.path.push(Segment::Key(key.get_ref().to_string()));
            self.consider(&key.span());
            self.value(value);
            self.path.pop();
        }
    }

    fn value(&mut self, value: &toml::Spanned<DeValue<'_>>) {
        self.consider(&value.span());
        match value.get_ref() {
            DeValue::Table(table) => self.table(table),
            DeValue::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    self.path.push(Segment::Index(index));
                    self.value(item);
                    self.path.pop();
                }
            }
            _ => {}
        }
    }

    /// Keeps the current path when its span holds the target and is the tightest so far (on a
    /// tie, the deeper path: a table header spans the same bytes as its first element).
    fn consider(&mut self, span: &Range<usize>) {
        let holds = span.start <= self.target.start && self.target.end <= span.end;
        if !holds || self.path.is_empty() {
            return;
        }
        let len = span.end - span.start;
        let better = match &self.best {
            None => true,
            Some((best_len, best_path)) => {
                len < *best_len || (len == *best_len && self.path.len() > best_path.len())
            }
        };
        if better {
            let copy = self
                .path
                .iter()
                .map(|segment| match segment {
                    Segment::Key(key) => Segment::Key(key.clone()),
                    Segment::Index(index) => Segment::Index(*index),
                })
                .collect();
            self.best = Some((len, copy));
        }
    }
}

fn render_path(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&display_key(key));
            }
            Segment::Index(index) => {
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
            }
        }
    }
    out
}

/// A key as TOML would write it: bare when it can be, quoted otherwise.
fn display_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        key.to_owned()
    } else {
        format!("{key:?}")
    }
}

/// A bad value found after parsing.
struct Invalid {
    key: String,
    reason: String,
}

fn invalid(key: &str, reason: impl Into<String>) -> Invalid {
    Invalid {
        key: key.to_owned(),
        reason: reason.into(),
    }
}

// The file as written. Integers are read wide and checked afterwards, so a negative or zero
// value gets a reason a user can act on rather than a type error.

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
struct RawSettings {
    bash: RawBash,
    bash_interceptor: RawInterceptor,
    artifacts: RawArtifacts,
    output: RawOutput,
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
    fn check(self, home: Option<&Path>) -> Result<Settings, Invalid> {
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
        })
    }
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
            env: self.env,
        })
    }
}

impl RawArtifacts {
    fn check(self, home: Option<&Path>) -> Result<ArtifactSettings, Invalid> {
        let dir = match self.dir {
            None => None,
            Some(dir) => Some(artifacts_dir(&dir, home)?),
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

/// `artifacts.dir`: absolute, or `~` / `~/…` expanded against `home`.
fn artifacts_dir(dir: &str, home: Option<&Path>) -> Result<PathBuf, Invalid> {
    const KEY: &str = "artifacts.dir";
    if dir.contains('\0') {
        return Err(invalid(KEY, "must not contain a NUL character"));
    }
    let expanded = if dir == "~" || dir.starts_with("~/") {
        let Some(home) = home else {
            return Err(invalid(
                KEY,
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
            KEY,
            format!("must be an absolute path or start with `~/`, got {dir:?}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Settings, String> {
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
            settings.bash.shell_idle_timeout(),
            std::time::Duration::from_secs(1800)
        );
        assert!(!settings.bash_interceptor.enabled);
        assert!(settings.bash_interceptor.rules.is_empty());
        assert_eq!(settings.artifacts.dir, None);
        assert_eq!(settings.artifacts.max_bytes, 1_073_741_824);
        assert_eq!(settings.artifacts.max_age_days, 7);
        assert_eq!(settings.output.max_bytes, 51_200);
        // Empty tables are fine too.
        assert_eq!(
            parse("[bash]\n[bash.env]\n[bash_interceptor]\n[artifacts]\n[output]\n").unwrap(),
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
    fn bad_values_name_key_and_reason() {
        let cases: &[(&str, &str)] = &[
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
                "bash.max_shell: unknown field `max_shell`, expected one of `virtual_terminal`, `shell`, `prefix`, `default_timeout`, `max_shells`, `shell_idle_minutes`, `env`",
            ),
            (
                "[outptu]\nmax_bytes = 1",
                "outptu: unknown field `outptu`, expected one of `bash`, `bash_interceptor`, `artifacts`, `output`",
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
    fn line_columns_count_characters() {
        assert_eq!(line_column("ab\ncd", 0), (1, 1));
        assert_eq!(line_column("ab\ncd", 3), (2, 1));
        assert_eq!(line_column("é = x", 2), (1, 2));
        assert_eq!(line_column("ab", 99), (1, 3));
    }
}
