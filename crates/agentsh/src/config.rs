//! Finding and loading the configuration file (TOML, every key optional) for either mode.

use std::path::{Path, PathBuf};

use agentsh_config::{ConfigError, Settings, config_path};

/// The settings for this run: `--config FILE`, else `AGENTSH_CONFIG`, else the default file
/// (absent → defaults). `~/` in paths expands to `$HOME`.
pub fn load_settings(flag: Option<&Path>) -> Result<Settings, ConfigError> {
    let source = config_path(flag, |name| std::env::var_os(name));
    let home = std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from);
    Settings::load(source.as_ref(), home.as_deref())
}
