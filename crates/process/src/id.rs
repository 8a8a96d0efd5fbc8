//! Unpredictable ids: the one generator for every id agentsh makes up (shell tags, snapshot
//! markers, session ids).
//!
//! An id is lowercase hex from the operating system's random source (`getrandom`), never a
//! time or pid seed: a command that can guess the tag of its own shell, or the marker of the
//! snapshot being taken, could forge what agentsh reads back.

/// `2 * bytes` lowercase hex digits from the operating system's random source.
///
/// # Panics
///
/// When the system has no random source at all (`getrandom` fails), which Linux and macOS never
/// report once booted: an id that is not unpredictable would break the completion protocol's
/// guarantees, so there is no weaker fallback.
///
/// ```
/// let id = agentsh_process::random_hex(6);
/// assert_eq!(id.len(), 12);
/// assert!(id.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
/// ```
#[must_use]
pub fn random_hex(bytes: usize) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut raw = vec![0u8; bytes];
    getrandom::fill(&mut raw).expect("the operating system's random source is available");
    let mut id = String::with_capacity(bytes * 2);
    for b in raw {
        id.push(char::from(HEX[usize::from(b >> 4)]));
        id.push(char::from(HEX[usize::from(b & 15)]));
    }
    id
}

#[cfg(test)]
mod tests {
    use super::random_hex;

    #[test]
    fn ids_differ_and_have_the_asked_length() {
        let a = random_hex(16);
        let b = random_hex(16);
        assert_eq!(a.len(), 32);
        assert_ne!(a, b, "128 random bits repeated");
        assert_eq!(random_hex(0), "");
    }
}
