//! Artifact ids: the `artifact://` syntax and the `<id>.bash.log` file names.
//!
//! An id is a canonical decimal `u64` (ASCII digits, no leading zero except `0` itself), so an id
//! never names anything but one file directly inside the store.

use std::ffi::OsStr;

use crate::ArtifactError;

/// The URL scheme prefix of an artifact reference, `artifact://`.
pub const ARTIFACT_URL_PREFIX: &str = "artifact://";

/// The suffix of an artifact file: artifact `7` is the file `7.bash.log`.
pub const ARTIFACT_FILE_SUFFIX: &str = ".bash.log";

/// `u64::MAX` has 20 digits; a longer digit string cannot be an id of this store.
const MAX_ID_DIGITS: usize = 20;

/// Checks the syntax of an artifact reference and returns its digits.
///
/// Accepts a bare id (`"7"`) or a URL (`"artifact://7"`). Only ASCII digits are accepted, so the
/// result can never contain a path separator or `..`. A syntactically valid id may still name no
/// artifact (too large, leading zeros, or simply absent): [`ArtifactStore::resolve`] reports that.
///
/// [`ArtifactStore::resolve`]: crate::ArtifactStore::resolve
///
/// ```
/// use agentsh_artifact_store::parse_artifact_id;
///
/// assert_eq!(parse_artifact_id("artifact://12").unwrap(), "12");
/// assert_eq!(parse_artifact_id("12").unwrap(), "12");
/// assert_eq!(
///     parse_artifact_id("artifact://").unwrap_err().to_string(),
///     "artifact:// URL requires a numeric ID: artifact://"
/// );
/// assert_eq!(
///     parse_artifact_id("artifact://../x").unwrap_err().to_string(),
///     "artifact:// ID must be numeric, got: ../x"
/// );
/// ```
pub fn parse_artifact_id(id_or_url: &str) -> Result<&str, ArtifactError> {
    let digits = id_or_url
        .strip_prefix(ARTIFACT_URL_PREFIX)
        .unwrap_or(id_or_url);
    if digits.is_empty() {
        return Err(ArtifactError::MissingId {
            url: id_or_url.to_owned(),
        });
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ArtifactError::NotNumeric {
            got: digits.to_owned(),
        });
    }
    Ok(digits)
}

/// The value of a canonical id string, or `None` when it is not one (empty, non-digits, leading
/// zero, more than 20 digits, above `u64::MAX`).
pub(crate) fn canonical_id(digits: &str) -> Option<u64> {
    let canonical = !digits.is_empty()
        && digits.len() <= MAX_ID_DIGITS
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !(digits.len() > 1 && digits.starts_with('0'));
    if canonical { digits.parse().ok() } else { None }
}

/// The id of an artifact file name (`7.bash.log` → 7); `None` for any other name.
pub(crate) fn id_from_file_name(name: &OsStr) -> Option<u64> {
    name.to_str()?
        .strip_suffix(ARTIFACT_FILE_SUFFIX)
        .and_then(canonical_id)
}

/// The file name of artifact `id`.
pub(crate) fn file_name(id: u64) -> String {
    format!("{id}{ARTIFACT_FILE_SUFFIX}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_ids() {
        assert_eq!(canonical_id("0"), Some(0));
        assert_eq!(canonical_id("7"), Some(7));
        assert_eq!(canonical_id("18446744073709551615"), Some(u64::MAX));
        assert_eq!(canonical_id("18446744073709551616"), None);
        assert_eq!(canonical_id("100000000000000000000"), None);
        assert_eq!(canonical_id("07"), None);
        assert_eq!(canonical_id("00"), None);
        assert_eq!(canonical_id(""), None);
        assert_eq!(canonical_id("+7"), None);
        assert_eq!(canonical_id("7 "), None);
    }

    #[test]
    fn file_names() {
        assert_eq!(file_name(42), "42.bash.log");
        assert_eq!(id_from_file_name(OsStr::new("42.bash.log")), Some(42));
        assert_eq!(id_from_file_name(OsStr::new("042.bash.log")), None);
        assert_eq!(id_from_file_name(OsStr::new("42.bash.log.tmp")), None);
        assert_eq!(id_from_file_name(OsStr::new("42.txt")), None);
        assert_eq!(id_from_file_name(OsStr::new(".bash.log")), None);
        assert_eq!(id_from_file_name(OsStr::new("x42.bash.log")), None);
    }
}
