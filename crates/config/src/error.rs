//! What can be wrong with a configuration or policy file, and how a parser's error becomes
//! one: a syntax error's line and column, a serde error's key.

use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;
use toml::de::DeTable;

use super::key_path::{Location, line_column, locate};

/// A configuration that cannot be used. Every message starts `config error in <file>: `.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// A file named by `--config` or `AGENTSH_CONFIG` does not exist.
    #[error("config error in {}: file not found", path.display())]
    NotFound {
        /// The file.
        path: PathBuf,
    },
    /// The file exists but cannot be read (permissions, a directory, not UTF-8, …). The text
    /// includes the reason, so the error has no separate `source()`.
    #[error("config error in {}: cannot read the file: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: io::Error,
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

/// Parses the TOML of `file`: a syntax error gives its line and column.
pub(super) fn parse_document<'t>(
    text: &'t str,
    file: &Path,
) -> Result<toml::Spanned<DeTable<'t>>, ConfigError> {
    DeTable::parse(text).map_err(|err| {
        let (line, column) = err
            .span()
            .map_or((1, 1), |span| line_column(text, span.start));
        ConfigError::Syntax {
            path: file.to_path_buf(),
            line,
            column,
            message: err.message().trim().to_owned(),
        }
    })
}

/// Maps a serde error in a well-formed document to the key it is about, found by its span.
pub(super) fn data_error(
    err: &toml::de::Error,
    doc: &DeTable<'_>,
    text: &str,
    file: &Path,
) -> ConfigError {
    let message = err.message().trim().to_owned();
    match locate(doc, text, err.span()) {
        Location::Key(key) => ConfigError::Invalid {
            path: file.to_path_buf(),
            key,
            reason: message,
        },
        Location::Position { line, column } => ConfigError::Syntax {
            path: file.to_path_buf(),
            line,
            column,
            message,
        },
    }
}
