//! Keys from the host terminal (as crossterm parsed them) turned back into the bytes a program
//! on a PTY expects: the legacy xterm encoding of pty-runtime's one encoder ([`encode_key`]),
//! which pty-runtime then normalises (cursor keys follow the program's
//! application-cursor mode, Esc and ctrl+] are checked for the kill key there).

use agentsh_pty_runtime::{Key, Modifiers, encode_key};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// The bytes of `key`, or `None` for a release event or a key with no legacy encoding.
pub(crate) fn key_bytes(key: &KeyEvent) -> Option<Vec<u8>> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let code = match key.code {
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Tab => Key::Tab,
        KeyCode::BackTab => Key::BackTab,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Esc => Key::Esc,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::Right => Key::Right,
        KeyCode::Left => Key::Left,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Insert => Key::Insert,
        KeyCode::Delete => Key::Delete,
        KeyCode::F(n) => Key::F(n),
        _ => return None,
    };
    let mods = Modifiers {
        shift: key.modifiers.contains(KeyModifiers::SHIFT),
        alt: key.modifiers.contains(KeyModifiers::ALT),
        ctrl: key.modifiers.contains(KeyModifiers::CONTROL),
    };
    // Cursor keys as in normal mode: the PTY's normalisation applies the program's mode.
    encode_key(code, mods, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, mods: KeyModifiers) -> Option<Vec<u8>> {
        key_bytes(&KeyEvent::new(code, mods))
    }

    #[test]
    fn legacy_encodings_of_spec_8() {
        let none = KeyModifiers::NONE;
        assert_eq!(key(KeyCode::Char('a'), none), Some(b"a".to_vec()));
        assert_eq!(key(KeyCode::Char('é'), none), Some("é".as_bytes().to_vec()));
        assert_eq!(key(KeyCode::Enter, none), Some(b"\r".to_vec()));
        assert_eq!(key(KeyCode::Tab, none), Some(b"\t".to_vec()));
        assert_eq!(
            key(KeyCode::BackTab, KeyModifiers::SHIFT),
            Some(b"\x1b[Z".to_vec())
        );
        assert_eq!(key(KeyCode::Backspace, none), Some(vec![0x7f]));
        assert_eq!(key(KeyCode::Esc, none), Some(vec![0x1b]));
        assert_eq!(key(KeyCode::Up, none), Some(b"\x1b[A".to_vec()));
        assert_eq!(key(KeyCode::PageUp, none), Some(b"\x1b[5~".to_vec()));
        assert_eq!(key(KeyCode::PageDown, none), Some(b"\x1b[6~".to_vec()));
        assert_eq!(key(KeyCode::Insert, none), Some(b"\x1b[2~".to_vec()));
        assert_eq!(key(KeyCode::Delete, none), Some(b"\x1b[3~".to_vec()));
        assert_eq!(key(KeyCode::F(1), none), Some(b"\x1bOP".to_vec()));
        assert_eq!(key(KeyCode::F(5), none), Some(b"\x1b[15~".to_vec()));
    }

    #[test]
    fn control_and_alt_letters() {
        let ctrl = KeyModifiers::CONTROL;
        assert_eq!(key(KeyCode::Char('c'), ctrl), Some(vec![0x03]));
        assert_eq!(key(KeyCode::Char(']'), ctrl), Some(vec![0x1d]));
        // How crossterm reports a 0x1d byte.
        assert_eq!(key(KeyCode::Char('5'), ctrl), Some(vec![0x1d]));
        assert_eq!(
            key(KeyCode::Char('x'), KeyModifiers::ALT),
            Some(b"\x1bx".to_vec())
        );
        assert_eq!(
            key(KeyCode::Left, ctrl | KeyModifiers::SHIFT),
            Some(b"\x1b[1;6D".to_vec())
        );
    }

    #[test]
    fn releases_are_dropped() {
        let mut release = KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        assert_eq!(key_bytes(&release), None);
    }
}
