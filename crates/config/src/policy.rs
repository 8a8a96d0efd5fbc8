//! The approval policy's tiers: the managed files, the user's `[policy]`, the project's file;
//! reading each, and building the [`Policy`] they make.
//!
//! A policy file is TOML holding one `[policy]` table, as the configuration file writes it.
//! Every problem is a [`ConfigError`] naming the tier's file: a syntax error with its line and
//! column, any other key or a bad value (and, from [`Policy::new`], a bad rule or an example
//! that does not behave) with its key and reason.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use agentsh_bash_policy::{Policy, PolicyConfig, PolicyError, TierKind, TierSource};
use serde::Deserialize;

use super::error::{ConfigError, data_error, parse_document};
use super::key_path::display_key;
use super::types::Settings;

/// The managed policy file an administrator writes; read when it exists.
pub const MANAGED_POLICY_PATH: &str = "/etc/agentsh/policy.toml";
/// Environment variable naming one more managed policy file (it must exist); it never replaces
/// [`MANAGED_POLICY_PATH`].
pub const MANAGED_POLICY_ENV: &str = "AGENTSH_MANAGED_POLICY";
/// The project's policy file, relative to the session's working directory; read when it
/// exists. It may only tighten.
pub const PROJECT_POLICY_PATH: &str = ".agentsh/policy.toml";
/// The origin of the user tier when the settings were not read from a file.
pub const DEFAULTS_ORIGIN: &str = "<defaults>";

impl Settings {
    /// The policy of a session started in `cwd`: its tiers in order, the managed
    /// [`MANAGED_POLICY_PATH`] (when it exists) and the file named by [`MANAGED_POLICY_ENV`]
    /// (when set and not empty), the user's `[policy]` (left out when it sets nothing), and the
    /// project's `<cwd>/.agentsh/policy.toml` (when it exists).
    ///
    /// `env` looks a variable up (pass `std::env::var_os` in production).
    ///
    /// # Errors
    ///
    /// A file that cannot be read or checked, or (for [`MANAGED_POLICY_ENV`]) does not exist:
    /// a [`ConfigError`] naming that file.
    pub fn load_policy(
        &self,
        cwd: &Path,
        env: impl Fn(&str) -> Option<OsString>,
    ) -> Result<Policy, ConfigError> {
        self.load_policy_with(Path::new(MANAGED_POLICY_PATH), cwd, env)
    }

    /// [`load_policy`](Self::load_policy) with `managed` in place of [`MANAGED_POLICY_PATH`].
    pub(super) fn load_policy_with(
        &self,
        managed: &Path,
        cwd: &Path,
        env: impl Fn(&str) -> Option<OsString>,
    ) -> Result<Policy, ConfigError> {
        let mut tiers = managed_tiers(managed, env)?;
        tiers.extend(user_tier(&self.policy, self.config_file.as_deref()));
        tiers.extend(project_policy_tier(cwd)?);
        policy_from_tiers(tiers)
    }
}

/// The managed tiers of this machine: [`MANAGED_POLICY_PATH`] when it exists, then the file
/// named by [`MANAGED_POLICY_ENV`] when that is set and not empty (a far side of a remote
/// session adds these to the tiers its hello brought).
///
/// # Errors
///
/// A file that cannot be read or checked; the [`MANAGED_POLICY_ENV`] file missing is
/// [`ConfigError::NotFound`].
pub fn managed_policy_tiers(
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<Vec<TierSource>, ConfigError> {
    managed_tiers(Path::new(MANAGED_POLICY_PATH), env)
}

fn managed_tiers(
    managed: &Path,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<Vec<TierSource>, ConfigError> {
    let mut tiers = Vec::new();
    tiers.extend(read_tier(managed, TierKind::Managed, false)?);
    if let Some(extra) = env(MANAGED_POLICY_ENV).filter(|value| !value.is_empty()) {
        tiers.extend(read_tier(&PathBuf::from(extra), TierKind::Managed, true)?);
    }
    Ok(tiers)
}

/// The project tier of a session started in `cwd`: `<cwd>/.agentsh/policy.toml`
/// ([`PROJECT_POLICY_PATH`]), `None` when there is none.
///
/// # Errors
///
/// The file cannot be read or checked.
pub fn project_policy_tier(cwd: &Path) -> Result<Option<TierSource>, ConfigError> {
    read_tier(&cwd.join(PROJECT_POLICY_PATH), TierKind::Project, false)
}

/// Builds a policy from `tiers` (read here, or received in a remote session's hello) with
/// [`Policy::new`].
///
/// # Errors
///
/// A tier that does not check: [`ConfigError::Invalid`] with the tier's origin as the file, and
/// the key and reason of the [`PolicyError`].
pub fn policy_from_tiers(tiers: Vec<TierSource>) -> Result<Policy, ConfigError> {
    Policy::new(tiers).map_err(
        |PolicyError {
             origin,
             key,
             reason,
         }| ConfigError::Invalid {
            path: PathBuf::from(origin),
            key,
            reason,
        },
    )
}

/// The user tier of `policy` read from `file` ([`DEFAULTS_ORIGIN`] without one); `None` when
/// the policy sets nothing.
pub(super) fn user_tier(policy: &PolicyConfig, file: Option<&Path>) -> Option<TierSource> {
    (*policy != PolicyConfig::default()).then(|| TierSource {
        kind: TierKind::User,
        origin: file.map_or_else(
            || DEFAULTS_ORIGIN.to_owned(),
            |file| file.display().to_string(),
        ),
        policy: policy.clone(),
    })
}

/// Reads the policy file at `path` as a `kind` tier. A missing file is `None`, or
/// [`ConfigError::NotFound`] when `required`.
fn read_tier(
    path: &Path,
    kind: TierKind,
    required: bool,
) -> Result<Option<TierSource>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err)
            if matches!(
                err.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return if required {
                Err(ConfigError::NotFound {
                    path: path.to_path_buf(),
                })
            } else {
                Ok(None)
            };
        }
        Err(error) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                error,
            });
        }
    };
    policy_file_from_toml(&text, path, kind).map(Some)
}

/// A policy file as written: only `[policy]`.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
struct PolicyFile {
    policy: PolicyConfig,
}

/// Parses the text of the policy file `file` as a `kind` tier. Its rules are checked by
/// [`Policy::new`] when the tiers are put together.
pub(super) fn policy_file_from_toml(
    text: &str,
    file: &Path,
    kind: TierKind,
) -> Result<TierSource, ConfigError> {
    let doc = parse_document(text, file)?;
    if let Some((key, _)) = doc
        .get_ref()
        .iter()
        .find(|(key, _)| key.get_ref() != "policy")
    {
        return Err(ConfigError::Invalid {
            path: file.to_path_buf(),
            key: display_key(key.get_ref()),
            reason: "a policy file holds only a `[policy]` table".to_owned(),
        });
    }
    let parsed = PolicyFile::deserialize(toml::de::Deserializer::from(doc.clone()))
        .map_err(|err| data_error(&err, doc.get_ref(), text, file))?;
    Ok(TierSource {
        kind,
        origin: file.display().to_string(),
        policy: parsed.policy,
    })
}

#[cfg(test)]
mod tests;
