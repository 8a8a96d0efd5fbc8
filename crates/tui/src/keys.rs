//! Keys from the host terminal (as crossterm parsed them) turned back into the bytes a program
//! on a PTY expects: the legacy xterm encoding, which pty-runtime then normalises (SPEC §8:
//! cursor keys follow the program's application-cursor mode, Esc and ctrl+] are checked for
//! the kill key there).

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// The bytes of `key`, or `None` for a release event or a key with no legacy encoding.
pub(crate) fn key_bytes(key: &KeyEvent) -> Option<Vec<u8>> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let mods = key.modifiers;
    let alt = mods.contains(KeyModifiers::ALT);
    let ctrl = mods.contains(KeyModifiers::CONTROL);
    let mut bytes = match key.code {
        KeyCode::Char(c) if ctrl => vec![control_code(c)?],
        KeyCode::Char(c) => c.to_string().into_bytes(),
        KeyCode::Enter => vec![b'\r'],
        KeyCode::Tab => vec![b'\t'],
        KeyCode::BackTab => return Some(b"\x1b[Z".to_vec()),
        KeyCode::Backspace if ctrl => vec![0x08],
        KeyCode::Backspace => vec![0x7f],
        KeyCode::Esc => vec![0x1b],
        KeyCode::Up => return Some(cursor_key(b'A', mods)),
        KeyCode::Down => return Some(cursor_key(b'B', mods)),
        KeyCode::Right => return Some(cursor_key(b'C', mods)),
        KeyCode::Left => return Some(cursor_key(b'D', mods)),
        KeyCode::Home => return Some(cursor_key(b'H', mods)),
        KeyCode::End => return Some(cursor_key(b'F', mods)),
        KeyCode::PageUp => return Some(tilde_key(5, mods)),
        KeyCode::PageDown => return Some(tilde_key(6, mods)),
        KeyCode::Insert => return Some(tilde_key(2, mods)),
        KeyCode::Delete => return Some(tilde_key(3, mods)),
        KeyCode::F(n) => return function_key(n, mods),
        _ => return None,
    };
    if alt {
        bytes.insert(0, 0x1b);
    }
    Some(bytes)
}

/// The control code of ctrl+`c`, as a terminal sends it (crossterm reports 0x1c–0x1f as
/// ctrl+4–7, as xterm's number-row aliases do).
fn control_code(c: char) -> Option<u8> {
    let code = match c.to_ascii_lowercase() {
        c @ 'a'..='z' => c as u8 - b'a' + 1,
        '@' | ' ' | '2' => 0,
        '[' | '3' => 0x1b,
        '\\' | '4' => 0x1c,
        ']' | '5' => 0x1d,
        '^' | '6' => 0x1e,
        '_' | '-' | '7' => 0x1f,
        '?' | '8' => 0x7f,
        _ => return None,
    };
    Some(code)
}

/// The xterm modifier parameter: 1 + shift + 2·alt + 4·ctrl; `None` for none.
fn modifier_param(mods: KeyModifiers) -> Option<u8> {
    let mut param = 1;
    if mods.contains(KeyModifiers::SHIFT) {
        param += 1;
    }
    if mods.contains(KeyModifiers::ALT) {
        param += 2;
    }
    if mods.contains(KeyModifiers::CONTROL) {
        param += 4;
    }
    (param > 1).then_some(param)
}

/// `ESC [ x`, or `ESC [ 1 ; m x` with modifiers.
fn cursor_key(final_byte: u8, mods: KeyModifiers) -> Vec<u8> {
    match modifier_param(mods) {
        Some(param) => format!("\x1b[1;{param}{}", final_byte as char).into_bytes(),
        None => vec![0x1b, b'[', final_byte],
    }
}

/// `ESC [ n ~`, or `ESC [ n ; m ~` with modifiers.
fn tilde_key(number: u8, mods: KeyModifiers) -> Vec<u8> {
    match modifier_param(mods) {
        Some(param) => format!("\x1b[{number};{param}~").into_bytes(),
        None => format!("\x1b[{number}~").into_bytes(),
    }
}

fn function_key(n: u8, mods: KeyModifiers) -> Option<Vec<u8>> {
    let ss3 = match n {
        1 => Some(b'P'),
        2 => Some(b'Q'),
        3 => Some(b'R'),
        4 => Some(b'S'),
        _ => None,
    };
    if let Some(final_byte) = ss3 {
        return Some(match modifier_param(mods) {
            Some(param) => format!("\x1b[1;{param}{}", final_byte as char).into_bytes(),
            None => vec![0x1b, b'O', final_byte],
        });
    }
    let number = match n {
        5 => 15,
        6 => 17,
        7 => 18,
        8 => 19,
        9 => 20,
        10 => 21,
        11 => 23,
        12 => 24,
        _ => return None,
    };
    Some(tilde_key(number, mods))
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
