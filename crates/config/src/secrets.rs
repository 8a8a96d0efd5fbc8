//! `[secrets]`: what is redacted from every output the model or a client reads.

use std::sync::Arc;

use agentsh_output_sink::{Redactor, SecretPattern, Secrets};
use serde::Deserialize;

use super::key_path::{Invalid, invalid};

/// The environment variable names whose values are secrets by default (glob patterns,
/// case-insensitive). `*_PWD`, not `*PWD`: the shell's `PWD` and `OLDPWD` are directories.
pub const DEFAULT_SECRET_ENV: &[&str] = &[
    "*TOKEN*",
    "*SECRET*",
    "*PASSWORD*",
    "*PASSWD*",
    "*API_KEY*",
    "*_KEY",
    "*CREDENTIAL*",
    "*PRIVATE*",
    "*PASS",
    "*PASSPHRASE*",
    "*_PWD",
    "DATABASE_URL",
];

/// Names ending with this are no secret to a glob with a `*` (`SSH_ASKPASS`, `SUDO_ASKPASS`,
/// `GIT_ASKPASS`: their values are program paths, which `*PASS` would redact everywhere); a
/// glob that names one exactly still makes it a secret.
const NOT_SECRET_SUFFIX: &str = "ASKPASS";

/// The longest match a user pattern may have when it does not say (bytes).
pub const DEFAULT_PATTERN_MAX_BYTES: usize = 1024;

/// `[secrets]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretsSettings {
    /// `enabled`: redact at all. Default true.
    pub enabled: bool,
    /// `env`: glob patterns of environment variable names whose values (8 bytes or more) are
    /// secrets: the defaults ([`DEFAULT_SECRET_ENV`]) and the user's.
    pub env: Vec<String>,
    /// `patterns`: the user's token patterns, added to the built-in ones.
    pub patterns: Vec<PatternSetting>,
    /// `default_patterns`: keep the built-in patterns. Default true.
    pub default_patterns: bool,
}

impl Default for SecretsSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            env: DEFAULT_SECRET_ENV
                .iter()
                .map(|&name| name.to_owned())
                .collect(),
            patterns: Vec::new(),
            default_patterns: true,
        }
    }
}

/// One `secrets.patterns` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternSetting {
    /// `name`: what its matches are replaced with (`[REDACTED:<name>]`).
    pub name: String,
    /// `regex`: the pattern (within a line).
    pub regex: String,
    /// `max_bytes`: its longest match. Default [`DEFAULT_PATTERN_MAX_BYTES`].
    pub max_bytes: usize,
}

impl SecretsSettings {
    /// A session's secrets: the values of agentsh's environment variables and of `bash_env`
    /// entries whose names `env` matches, and the patterns; `None` when redaction is off. Made
    /// also when there is nothing to redact yet: a password a person types is added later.
    pub fn session_secrets<'a>(
        &self,
        bash_env: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) -> Option<Arc<Secrets>> {
        if !self.enabled {
            return None;
        }
        let values = std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
            .chain(
                bash_env
                    .into_iter()
                    .map(|(name, value)| (name.clone(), value.clone())),
            )
            .filter(|(name, _)| self.is_secret_name(name));
        Some(Arc::new(Secrets::new(Redactor::new(
            values,
            self.compiled_patterns(),
        ))))
    }

    /// The patterns to match: the built-in ones unless turned off, then the user's.
    pub fn compiled_patterns(&self) -> Vec<SecretPattern> {
        let mut patterns = if self.default_patterns {
            SecretPattern::defaults()
        } else {
            Vec::new()
        };
        patterns.extend(self.patterns.iter().filter_map(|pattern| {
            SecretPattern::new(&pattern.name, &pattern.regex, pattern.max_bytes).ok()
        }));
        patterns
    }

    /// Whether the variable `name` holds a secret: a glob of `env` matches it; a name ending
    /// in `ASKPASS` (a program's path) only when a glob names it exactly.
    pub fn is_secret_name(&self, name: &str) -> bool {
        let program_path = name.to_ascii_uppercase().ends_with(NOT_SECRET_SUFFIX);
        self.env
            .iter()
            .any(|glob| (!program_path || !glob.contains('*')) && glob_matches(glob, name))
    }
}

/// `glob` (`*` any run of characters, everything else literal) against `name`, ignoring ASCII
/// case.
fn glob_matches(glob: &str, name: &str) -> bool {
    let glob = glob.to_ascii_uppercase();
    let name = name.to_ascii_uppercase();
    let mut parts = glob.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: the whole name.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// `[secrets]` as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
pub(super) struct RawSecrets {
    enabled: Option<bool>,
    env: Option<Vec<String>>,
    patterns: Option<Vec<RawPattern>>,
    default_patterns: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table with `name` and `regex`")]
struct RawPattern {
    name: String,
    regex: String,
    max_bytes: Option<u64>,
}

impl RawSecrets {
    pub(super) fn check(self) -> Result<SecretsSettings, Invalid> {
        let mut settings = SecretsSettings::default();
        if let Some(enabled) = self.enabled {
            settings.enabled = enabled;
        }
        if let Some(default_patterns) = self.default_patterns {
            settings.default_patterns = default_patterns;
        }
        for (index, name) in self.env.unwrap_or_default().into_iter().enumerate() {
            if name.is_empty() {
                return Err(invalid(
                    &format!("secrets.env[{index}]"),
                    "must not be empty",
                ));
            }
            if !settings.env.contains(&name) {
                settings.env.push(name);
            }
        }
        for (index, pattern) in self.patterns.unwrap_or_default().into_iter().enumerate() {
            let key = |field: &str| format!("secrets.patterns[{index}].{field}");
            if pattern.name.is_empty() {
                return Err(invalid(&key("name"), "must not be empty"));
            }
            match regex::Regex::new(&pattern.regex) {
                Err(err) => {
                    return Err(invalid(&key("regex"), format!("not a valid regex: {err}")));
                }
                Ok(re) if re.is_match("") => {
                    return Err(invalid(&key("regex"), "matches the empty text"));
                }
                Ok(_) => {}
            }
            let max_bytes = match pattern.max_bytes {
                None => DEFAULT_PATTERN_MAX_BYTES,
                Some(n @ 1..=65_536) => usize::try_from(n).unwrap_or(DEFAULT_PATTERN_MAX_BYTES),
                Some(n) => {
                    return Err(invalid(
                        &key("max_bytes"),
                        format!("must be between 1 and 65536, got {n}"),
                    ));
                }
            };
            settings.patterns.push(PatternSetting {
                name: pattern.name,
                regex: pattern.regex,
                max_bytes,
            });
        }
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_names_ignoring_case() {
        for (glob, name, matches) in [
            ("*TOKEN*", "GITHUB_TOKEN", true),
            ("*TOKEN*", "token_file", true),
            ("*TOKEN*", "TOKE", false),
            ("*_KEY", "OPENAI_API_KEY", true),
            ("*_KEY", "KEY", false),
            ("*_KEY", "MY_KEYS", false),
            ("DATABASE_URL", "database_url", true),
            ("DATABASE_URL", "DATABASE_URL2", false),
            ("A*B*C", "AxxBxxC", true),
            ("A*B*C", "AxxCxxB", false),
            ("*", "anything", true),
            ("*_PWD", "MYSQL_PWD", true),
            ("*_PWD", "PWD", false),
            ("*_PWD", "OLDPWD", false),
            ("*PASS", "DB_PASS", true),
            ("*PASS", "DB_PASSES", false),
        ] {
            assert_eq!(glob_matches(glob, name), matches, "{glob} {name}");
        }
    }

    #[test]
    fn the_default_names_take_passwords_and_leave_paths() {
        let defaults = SecretsSettings::default();
        for (name, secret) in [
            ("DB_PASS", true),
            ("db_pass", true),
            ("GPG_PASSPHRASE", true),
            ("MYSQL_PWD", true),
            ("REDIS_PASSWORD", true),
            ("LDAP_PASSWD", true),
            ("DATABASE_URL", true),
            // Directories and program paths.
            ("PWD", false),
            ("OLDPWD", false),
            ("SSH_ASKPASS", false),
            ("SUDO_ASKPASS", false),
            ("git_askpass", false),
            ("PATH", false),
            ("HOME", false),
        ] {
            assert_eq!(defaults.is_secret_name(name), secret, "{name}");
        }
    }

    #[test]
    fn an_askpass_name_given_exactly_is_a_secret() {
        let mut settings = SecretsSettings::default();
        settings.env.push("MY_ASKPASS".to_owned());
        assert!(settings.is_secret_name("MY_ASKPASS"));
        assert!(!settings.is_secret_name("SSH_ASKPASS"));
    }
}
