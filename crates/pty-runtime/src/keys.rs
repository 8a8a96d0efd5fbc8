//! Key normalisation: keyboard input from the host terminal becomes what a program on
//! an `xterm-256color` PTY expects, and the kill key is recognised.
//!
//! The host terminal may speak the Kitty keyboard protocol (`CSI code;mods:event u`, and
//! `CSI 1;mods:event A`-style functional keys), xterm's `modifyOtherKeys` (`CSI 27;mods;code ~`)
//! or plain legacy sequences. [`normalize_keys`] turns all of them into legacy bytes:
//!
//! | key | bytes |
//! |---|---|
//! | Up/Down/Right/Left/Home/End | `ESC O x` in application-cursor mode, else `ESC [ x` (x = `A B C D H F`); with modifiers `ESC [ 1 ; m x` |
//! | PgUp / PgDn / Insert / Delete | `ESC [ 5 ~` / `ESC [ 6 ~` / `ESC [ 2 ~` / `ESC [ 3 ~` (with modifiers `ESC [ n ; m ~`) |
//! | Shift+Tab | `ESC [ Z` |
//! | Enter / Tab / Backspace / Esc | `\r` / `\t` / `0x7f` / `0x1b` |
//! | Ctrl+letter | its control code (`Ctrl+A` = `0x01`); also `Ctrl+@ [ \ ] ^ _ ?` and `Ctrl+Space` |
//! | Alt+key | `ESC` + the key's bytes |
//! | F1–F4 | `ESC O P`..`ESC O S` (with modifiers `ESC [ 1 ; m P`..) |
//!
//! Kitty release events are dropped, and so are Kitty events that have no legacy encoding
//! (modifier keys on their own, lock keys, media keys, F13 and above). Legacy arrows and
//! Home/End (`ESC [ x`, `ESC O x`, and `ESC [ 1 ~`/`4 ~`/`7 ~`/`8 ~` for Home/End) follow the
//! emulator's application-cursor mode too. Every other byte — text, control characters,
//! unknown or private sequences (mouse reports, focus events), and everything between the
//! bracketed-paste markers `ESC [ 200 ~` and `ESC [ 201 ~` — passes through unchanged.
//!
//! The functions are pure and keep no state between calls: a host terminal delivers each key
//! sequence in one read, and a sequence cut at the end of `input` passes through unchanged.
//!
//! [`classify_keys`] adds the kill key: Esc outside the alternate screen, Ctrl+] on it (where
//! Esc belongs to the program: vim, less, htop).
//!
//! [`encode_key`] is the one encoder of the table: it gives the bytes of a [`Key`] with its
//! [`Modifiers`] (a host terminal's key events, as the interactive mode reads them), and the
//! normalisation above and [`key_sequence`] use it too.
//!
//! [`key_sequence`] gives the same bytes for key *names* (`Enter`, `Up`, `Ctrl+C`, …: what a
//! model sends with `job_input`), and [`typed_text`] types text with each `\n` as
//! Enter.

/// `ESC`.
const ESC: u8 = 0x1b;
/// `Ctrl+]` (group separator): the kill key while a program uses the alternate screen.
pub const KILL_KEY_ALTERNATE_SCREEN: u8 = 0x1d;

/// Modifier bits of the Kitty and xterm encodings (the parameter is `1 + bits`).
const MOD_SHIFT: u32 = 1;
const MOD_ALT: u32 = 2;
const MOD_CTRL: u32 = 4;
/// Kitty event type of a key release.
const EVENT_RELEASE: u32 = 3;
/// Kitty's private-use range for functional keys.
const KITTY_FUNCTIONAL: std::ops::RangeInclusive<u32> = 57344..=63743;
/// The end marker of a bracketed paste.
const PASTE_END: &[u8] = b"\x1b[201~";

/// The terminal state a key's meaning depends on (from the emulator, see
/// [`Terminal::key_modes`](crate::Terminal::key_modes)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyModes {
    /// The program uses the alternate screen: Esc is forwarded and Ctrl+] kills.
    pub alternate_screen: bool,
    /// The program switched on application-cursor mode (`ESC [ ? 1 h`).
    pub application_cursor: bool,
}

/// What to do with a piece of keyboard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyAction {
    /// Write these (normalised) bytes to the PTY. May be empty (a release event).
    Forward(Vec<u8>),
    /// The input contains the kill key: end the command's whole process tree.
    Kill,
}

/// A key, as [`encode_key`] encodes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A character key (a letter, digit, symbol or any other character).
    Char(char),
    /// Enter (Return).
    Enter,
    /// Tab.
    Tab,
    /// Shift+Tab, as terminals report it.
    BackTab,
    /// Backspace.
    Backspace,
    /// Escape.
    Esc,
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Arrow left.
    Left,
    /// Arrow right.
    Right,
    /// Home.
    Home,
    /// End.
    End,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
    /// Insert.
    Insert,
    /// Delete (forward delete).
    Delete,
    /// A function key, `F(1)` for F1.
    F(u8),
}

/// The modifier keys held with a [`Key`] (the ones the legacy encoding has: super, hyper and
/// meta have none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Modifiers {
    /// Shift.
    pub shift: bool,
    /// Alt (Option).
    pub alt: bool,
    /// Control.
    pub ctrl: bool,
}

impl Modifiers {
    /// The modifier bits of the Kitty and xterm encodings (the parameter is `1 + bits`).
    fn bits(self) -> u32 {
        let mut bits = 0;
        if self.shift {
            bits |= MOD_SHIFT;
        }
        if self.alt {
            bits |= MOD_ALT;
        }
        if self.ctrl {
            bits |= MOD_CTRL;
        }
        bits
    }
}

/// The bytes of `key` with `mods`, as a program on an `xterm-256color` PTY expects them (the
/// table of the module docs), cursor keys in application-cursor mode when `app_cursor`;
/// `None` for a key the legacy encoding has no bytes for (Ctrl with a character that has no
/// control code, F13 and above). Alt puts `ESC` before a character, Enter, Tab, Backspace or
/// Esc, and is a modifier parameter of the others; Shift+Tab is [`Key::BackTab`].
///
/// ```
/// use agentsh_pty_runtime::{Key, Modifiers, encode_key};
/// let ctrl = Modifiers { ctrl: true, ..Modifiers::default() };
/// assert_eq!(encode_key(Key::Char('c'), ctrl, false), Some(vec![0x03]));
/// assert_eq!(encode_key(Key::Up, Modifiers::default(), true), Some(b"\x1bOA".to_vec()));
/// assert_eq!(encode_key(Key::Left, ctrl, false), Some(b"\x1b[1;5D".to_vec()));
/// assert_eq!(encode_key(Key::F(5), Modifiers::default(), false), Some(b"\x1b[15~".to_vec()));
/// ```
pub fn encode_key(key: Key, mods: Modifiers, app_cursor: bool) -> Option<Vec<u8>> {
    encode(key, mods.bits(), app_cursor)
}

/// [`encode_key`] with the modifier bits of the Kitty and xterm encodings.
fn encode(key: Key, mods: u32, app_cursor: bool) -> Option<Vec<u8>> {
    let ctrl = mods & MOD_CTRL != 0;
    Some(match key {
        Key::Char(c) if ctrl => with_alt(mods, vec![control_code(c)?]),
        Key::Char(c) => with_alt(mods, utf8(c)),
        Key::Enter => with_alt(mods, vec![b'\r']),
        Key::Tab => with_alt(mods, vec![b'\t']),
        Key::BackTab => b"\x1b[Z".to_vec(),
        Key::Backspace => with_alt(mods, vec![if ctrl { 0x08 } else { 0x7f }]),
        Key::Esc => with_alt(mods, vec![ESC]),
        Key::Up => cursor_key(b'A', mods, app_cursor),
        Key::Down => cursor_key(b'B', mods, app_cursor),
        Key::Right => cursor_key(b'C', mods, app_cursor),
        Key::Left => cursor_key(b'D', mods, app_cursor),
        Key::Home => cursor_key(b'H', mods, app_cursor),
        Key::End => cursor_key(b'F', mods, app_cursor),
        Key::PageUp => tilde_key(5, mods),
        Key::PageDown => tilde_key(6, mods),
        Key::Insert => tilde_key(2, mods),
        Key::Delete => tilde_key(3, mods),
        Key::F(n @ 1..=4) => function_key(b'P' + (n - 1), mods),
        Key::F(n) => {
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
            tilde_key(number, mods)
        }
    })
}

/// Normalises keyboard input for a program on the PTY (see the module docs for the table).
///
/// ```
/// use agentsh_pty_runtime::normalize_keys;
/// // A Kitty "Up pressed" event, with application-cursor mode on and off.
/// assert_eq!(normalize_keys(b"\x1b[1;1:1A", true), b"\x1bOA");
/// assert_eq!(normalize_keys(b"\x1b[1;1:1A", false), b"\x1b[A");
/// // Kitty Ctrl+C, then a release event (dropped), then text.
/// assert_eq!(normalize_keys(b"\x1b[99;5u\x1b[99;5:3uok", false), b"\x03ok");
/// ```
pub fn normalize_keys(input: &[u8], app_cursor: bool) -> Vec<u8> {
    scan(input, app_cursor).out
}

/// Normalises `input` and decides whether it kills the command: [`KeyAction::Kill`] when it
/// contains the Esc key outside the alternate screen, or Ctrl+] on the alternate screen;
/// otherwise [`KeyAction::Forward`] with the bytes of [`normalize_keys`].
///
/// ```
/// use agentsh_pty_runtime::{KeyAction, KeyModes, classify_keys};
/// let shell = KeyModes::default();
/// let less = KeyModes { alternate_screen: true, application_cursor: true };
/// assert_eq!(classify_keys(b"\x1b", shell), KeyAction::Kill);
/// assert_eq!(classify_keys(b"\x1b", less), KeyAction::Forward(b"\x1b".to_vec()));
/// assert_eq!(classify_keys(b"\x1d", less), KeyAction::Kill);
/// ```
pub fn classify_keys(input: &[u8], modes: KeyModes) -> KeyAction {
    let scan = scan(input, modes.application_cursor);
    let kill = if modes.alternate_screen {
        scan.saw_ctrl_bracket
    } else {
        scan.saw_escape
    };
    if kill {
        KeyAction::Kill
    } else {
        KeyAction::Forward(scan.out)
    }
}

/// The key names [`key_sequence`] accepts (case-insensitive), as its error lists them.
pub const KEY_NAMES: &str = "Enter, Tab, Esc, Up, Down, Left, Right, Home, End, PageUp, \
                             PageDown, Backspace, Delete, Ctrl+<letter>";

/// A key name [`key_sequence`] does not know. Its `Display` names it and lists the names
/// accepted: `unknown key "Foo" (keys: Enter, Tab, …)`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown key {name:?} (keys: {KEY_NAMES})")]
pub struct UnknownKey {
    /// The name as given.
    pub name: String,
}

/// The bytes of named keys, one after the other, as a program on an `xterm-256color` PTY in
/// `modes` expects them (the table of the module docs): `Enter` `\r`, `Tab` `\t`, `Esc`
/// `0x1b`, `Up`/`Down`/`Right`/`Left`/`Home`/`End` `ESC O x` in application-cursor mode else
/// `ESC [ x`, `PageUp` `ESC [ 5 ~`, `PageDown` `ESC [ 6 ~`, `Backspace` `0x7f`, `Delete`
/// `ESC [ 3 ~`, `Ctrl+<letter>` its control code. Names are case-insensitive, surrounding
/// blanks ignored. The first unknown name is an error and nothing is returned for the others.
/// Esc is a key here, never the kill key of [`classify_keys`].
///
/// ```
/// use agentsh_pty_runtime::{KeyModes, key_sequence};
/// let less = KeyModes { alternate_screen: true, application_cursor: true };
/// assert_eq!(key_sequence(&["Down", "ctrl+C"], less).unwrap(), b"\x1bOB\x03");
/// assert_eq!(key_sequence(&["up", "Enter"], KeyModes::default()).unwrap(), b"\x1b[A\r");
/// let err = key_sequence(&["Enter", "Foo"], less).unwrap_err();
/// assert!(err.to_string().starts_with(r#"unknown key "Foo" (keys: Enter, Tab, Esc, "#));
/// ```
pub fn key_sequence<S: AsRef<str>>(names: &[S], modes: KeyModes) -> Result<Vec<u8>, UnknownKey> {
    let mut out = Vec::with_capacity(names.len() * 3);
    for name in names {
        let name = name.as_ref();
        let key = named_key(name.trim(), modes.application_cursor).ok_or_else(|| UnknownKey {
            name: name.to_owned(),
        })?;
        out.extend_from_slice(&key);
    }
    Ok(out)
}

/// Text typed as is, each `\n` sent as Enter (`\r`), as a terminal's keyboard sends it.
///
/// ```
/// assert_eq!(agentsh_pty_runtime::typed_text("bob\nyes\n"), b"bob\ryes\r");
/// ```
pub fn typed_text(text: &str) -> Vec<u8> {
    text.bytes()
        .map(|b| if b == b'\n' { b'\r' } else { b })
        .collect()
}

/// The named keys, in the order of [`KEY_NAMES`] (a test keeps the two in step).
const NAMED_KEYS: [(&str, Key); 13] = [
    ("Enter", Key::Enter),
    ("Tab", Key::Tab),
    ("Esc", Key::Esc),
    ("Up", Key::Up),
    ("Down", Key::Down),
    ("Left", Key::Left),
    ("Right", Key::Right),
    ("Home", Key::Home),
    ("End", Key::End),
    ("PageUp", Key::PageUp),
    ("PageDown", Key::PageDown),
    ("Backspace", Key::Backspace),
    ("Delete", Key::Delete),
];

/// The bytes of one key name (already trimmed).
fn named_key(name: &str, app_cursor: bool) -> Option<Vec<u8>> {
    if let Some(&(_, key)) = NAMED_KEYS
        .iter()
        .find(|(known, _)| name.eq_ignore_ascii_case(known))
    {
        return encode(key, 0, app_cursor);
    }
    let (ctrl, letter) = name.split_at_checked(5)?;
    if !ctrl.eq_ignore_ascii_case("Ctrl+") {
        return None;
    }
    match letter.as_bytes() {
        &[letter] if letter.is_ascii_alphabetic() => {
            encode(Key::Char(char::from(letter)), MOD_CTRL, false)
        }
        _ => None,
    }
}

struct Scan {
    out: Vec<u8>,
    saw_escape: bool,
    saw_ctrl_bracket: bool,
}

impl Scan {
    /// Appends the legacy bytes of one key and notes whether it is a kill-key candidate.
    fn key(&mut self, bytes: &[u8]) {
        match bytes {
            [ESC] | [ESC, ESC] => self.saw_escape = true,
            [KILL_KEY_ALTERNATE_SCREEN] | [ESC, KILL_KEY_ALTERNATE_SCREEN] => {
                self.saw_ctrl_bracket = true;
            }
            _ => {}
        }
        self.out.extend_from_slice(bytes);
    }
}

fn scan(input: &[u8], app_cursor: bool) -> Scan {
    let mut scan = Scan {
        out: Vec::with_capacity(input.len()),
        saw_escape: false,
        saw_ctrl_bracket: false,
    };
    let mut i = 0;
    while i < input.len() {
        let byte = input[i];
        if byte != ESC {
            // Text and control characters pass through; find the next ESC in one go.
            let end = memchr::memchr(ESC, &input[i..]).map_or(input.len(), |at| i + at);
            let text = &input[i..end];
            scan.saw_ctrl_bracket |= text.contains(&KILL_KEY_ALTERNATE_SCREEN);
            scan.out.extend_from_slice(text);
            i = end;
            continue;
        }
        match input.get(i + 1) {
            None => {
                scan.key(&[ESC]);
                i += 1;
            }
            Some(&ESC) => {
                // Two Escs in a row (or Alt+Esc): the first is an Esc key either way.
                scan.key(&[ESC]);
                i += 1;
            }
            Some(b'[') => {
                if let Some(csi) = parse_csi(&input[i + 2..]) {
                    let whole = &input[i..i + 2 + csi.len];
                    i += 2 + csi.len;
                    if csi.is_paste_start() {
                        // Bracketed paste: everything up to the end marker is text.
                        scan.out.extend_from_slice(whole);
                        let rest = &input[i..];
                        let end = memchr::memmem::find(rest, PASTE_END)
                            .map_or(rest.len(), |at| at + PASTE_END.len());
                        scan.out.extend_from_slice(&rest[..end]);
                        i += end;
                    } else {
                        translate_csi(&csi, whole, app_cursor, &mut scan);
                    }
                } else {
                    // Not a complete CSI sequence: Alt+[ (and the rest is read as usual).
                    scan.out.extend_from_slice(&input[i..i + 2]);
                    i += 2;
                }
            }
            Some(b'O') => match input.get(i + 2) {
                Some(&last @ (b'A' | b'B' | b'C' | b'D' | b'H' | b'F')) => {
                    scan.key(&cursor_key(last, 0, app_cursor));
                    i += 3;
                }
                Some(&last @ 0x40..=0x7e) => {
                    scan.key(&[ESC, b'O', last]);
                    i += 3;
                }
                _ => {
                    // Alt+O.
                    scan.out.extend_from_slice(&[ESC, b'O']);
                    i += 2;
                }
            },
            Some(_) => {
                // Alt+key: ESC, then the key's own bytes (read as usual).
                scan.out.push(ESC);
                i += 1;
            }
        }
    }
    scan
}

/// One CSI sequence of keyboard input, without its `ESC [`.
struct Csi<'a> {
    /// Parameter bytes (`0x30..=0x3f`).
    params: &'a [u8],
    /// Intermediate bytes (`0x20..=0x2f`).
    intermediates: &'a [u8],
    /// The final byte (`0x40..=0x7e`).
    last: u8,
    /// Length of parameters, intermediates and final byte.
    len: usize,
}

impl Csi<'_> {
    fn is_paste_start(&self) -> bool {
        self.params == b"200" && self.intermediates.is_empty() && self.last == b'~'
    }

    /// `;`-separated fields, each a list of `:`-separated numbers (`None` = empty). `None` when
    /// the parameters are private (`<`, `=`, `>`, `?`) or a number is out of range.
    fn fields(&self) -> Option<Vec<Vec<Option<u32>>>> {
        if !self.intermediates.is_empty() || self.params.iter().any(|b| matches!(b, b'<'..=b'?')) {
            return None;
        }
        if self.params.is_empty() {
            return Some(Vec::new());
        }
        self.params
            .split(|&b| b == b';')
            .map(|field| {
                field
                    .split(|&b| b == b':')
                    .map(|number| {
                        if number.is_empty() {
                            return Ok(None);
                        }
                        std::str::from_utf8(number)
                            .ok()
                            .and_then(|s| s.parse::<u32>().ok())
                            .map(Some)
                            .ok_or(())
                    })
                    .collect::<Result<Vec<_>, ()>>()
                    .ok()
            })
            .collect()
    }
}

/// Parses the rest of a CSI sequence (after `ESC [`); `None` when it is cut off or malformed.
fn parse_csi(rest: &[u8]) -> Option<Csi<'_>> {
    let params_end = rest
        .iter()
        .position(|b| !(0x30..=0x3f).contains(b))
        .unwrap_or(rest.len());
    let inter_end = rest[params_end..]
        .iter()
        .position(|b| !(0x20..=0x2f).contains(b))
        .map_or(rest.len(), |at| params_end + at);
    let last = *rest.get(inter_end)?;
    if !(0x40..=0x7e).contains(&last) {
        return None;
    }
    Some(Csi {
        params: &rest[..params_end],
        intermediates: &rest[params_end..inter_end],
        last,
        len: inter_end + 1,
    })
}

/// The modifier parameter and event type of field `index` (defaults: no modifiers, press).
fn mods_and_event(fields: &[Vec<Option<u32>>], index: usize) -> (u32, u32) {
    let field = fields.get(index);
    let mods = field
        .and_then(|f| f.first().copied().flatten())
        .unwrap_or(1);
    let event = field.and_then(|f| f.get(1).copied().flatten()).unwrap_or(1);
    (mods.saturating_sub(1), event)
}

fn first_number(fields: &[Vec<Option<u32>>]) -> Option<u32> {
    fields.first().and_then(|f| f.first().copied().flatten())
}

fn translate_csi(csi: &Csi<'_>, whole: &[u8], app_cursor: bool, scan: &mut Scan) {
    let Some(fields) = csi.fields() else {
        scan.out.extend_from_slice(whole);
        return;
    };
    match csi.last {
        b'u' => {
            let Some(code) = first_number(&fields) else {
                scan.out.extend_from_slice(whole);
                return;
            };
            let shifted = fields.first().and_then(|f| f.get(1).copied().flatten());
            let (mods, event) = mods_and_event(&fields, 1);
            let text: Vec<u32> = fields
                .get(2)
                .map(|f| f.iter().filter_map(|n| *n).collect())
                .unwrap_or_default();
            if event != EVENT_RELEASE
                && let Some(bytes) = kitty_key(code, shifted, mods, &text, app_cursor)
            {
                scan.key(&bytes);
            }
        }
        b'A' | b'B' | b'C' | b'D' | b'H' | b'F' | b'P' | b'Q' | b'R' | b'S' => {
            // Legacy or Kitty functional key: no parameters, or `1;mods[:event]`.
            if !matches!(first_number(&fields), None | Some(1)) || fields.len() > 2 {
                scan.out.extend_from_slice(whole);
                return;
            }
            let (mods, event) = mods_and_event(&fields, 1);
            if event == EVENT_RELEASE {
                return;
            }
            let bytes = match csi.last {
                b'P' | b'Q' | b'R' | b'S' => function_key(csi.last, mods),
                last => cursor_key(last, mods, app_cursor),
            };
            scan.key(&bytes);
        }
        b'~' => {
            let Some(number) = first_number(&fields) else {
                scan.out.extend_from_slice(whole);
                return;
            };
            if number == 27 {
                // xterm modifyOtherKeys: CSI 27 ; mods ; code ~
                let (mods, _) = mods_and_event(&fields, 1);
                let code = fields.get(2).and_then(|f| f.first().copied().flatten());
                match code.and_then(|code| kitty_key(code, None, mods, &[], app_cursor)) {
                    Some(bytes) => scan.key(&bytes),
                    None => scan.out.extend_from_slice(whole),
                }
                return;
            }
            let (mods, event) = mods_and_event(&fields, 1);
            if event == EVENT_RELEASE {
                return;
            }
            let bytes = match number {
                1 | 7 => cursor_key(b'H', mods, app_cursor),
                4 | 8 => cursor_key(b'F', mods, app_cursor),
                13 => function_key(b'R', mods),
                _ => tilde_key(number, mods),
            };
            scan.key(&bytes);
        }
        _ => scan.out.extend_from_slice(whole),
    }
}

/// The shift/alt/ctrl bits of a modifier value (super, hyper, meta and the locks have no
/// legacy encoding and are ignored).
fn legacy_mods(mods: u32) -> u32 {
    mods & (MOD_SHIFT | MOD_ALT | MOD_CTRL)
}

/// Arrows, Home and End: `ESC O x` / `ESC [ x`, or `ESC [ 1 ; m x` with modifiers.
fn cursor_key(last: u8, mods: u32, app_cursor: bool) -> Vec<u8> {
    let mods = legacy_mods(mods);
    if mods == 0 {
        vec![ESC, if app_cursor { b'O' } else { b'[' }, last]
    } else {
        format!("\x1b[1;{}{}", mods + 1, last as char).into_bytes()
    }
}

/// F1–F4: `ESC O x`, or `ESC [ 1 ; m x` with modifiers (the cursor keys' application mode).
fn function_key(last: u8, mods: u32) -> Vec<u8> {
    cursor_key(last, mods, true)
}

/// `ESC [ n ~`, or `ESC [ n ; m ~` with modifiers.
fn tilde_key(number: u32, mods: u32) -> Vec<u8> {
    let mods = legacy_mods(mods);
    if mods == 0 {
        format!("\x1b[{number}~").into_bytes()
    } else {
        format!("\x1b[{number};{}~", mods + 1).into_bytes()
    }
}

fn with_alt(mods: u32, mut bytes: Vec<u8>) -> Vec<u8> {
    if mods & MOD_ALT != 0 {
        bytes.insert(0, ESC);
    }
    bytes
}

fn utf8(c: char) -> Vec<u8> {
    let mut buf = [0u8; 4];
    c.encode_utf8(&mut buf).as_bytes().to_vec()
}

/// The control code of Ctrl+`c`, where legacy terminals have one.
fn control_code(c: char) -> Option<u8> {
    match c {
        'a'..='z' | 'A'..='Z' => Some((c as u8) & 0x1f),
        ' ' | '@' | '2' => Some(0x00),
        '[' | '3' => Some(0x1b),
        '\\' | '4' => Some(0x1c),
        ']' | '5' => Some(0x1d),
        '^' | '6' => Some(0x1e),
        '_' | '-' | '7' => Some(0x1f),
        '?' | '8' => Some(0x7f),
        _ => None,
    }
}

/// The legacy bytes of a Kitty key event (press or repeat); `None` for keys without a legacy
/// encoding.
fn kitty_key(
    code: u32,
    shifted: Option<u32>,
    mods: u32,
    text: &[u32],
    app_cursor: bool,
) -> Option<Vec<u8>> {
    let shift = mods & MOD_SHIFT != 0;
    let ctrl = mods & MOD_CTRL != 0;
    let keypad_char = |c: u8| Some(with_alt(mods, vec![c]));
    let key = |key: Key| encode(key, mods, app_cursor);
    match code {
        27 => return key(Key::Esc),
        13 | 57414 => return key(Key::Enter),
        9 if shift => return key(Key::BackTab),
        9 => return key(Key::Tab),
        127 | 8 => return key(Key::Backspace),
        57399..=57408 => return keypad_char(b'0' + (code - 57399) as u8),
        57409 => return keypad_char(b'.'),
        57410 => return keypad_char(b'/'),
        57411 => return keypad_char(b'*'),
        57412 => return keypad_char(b'-'),
        57413 => return keypad_char(b'+'),
        57415 => return keypad_char(b'='),
        57416 => return keypad_char(b','),
        57417 => return key(Key::Left),
        57418 => return key(Key::Right),
        57419 => return key(Key::Up),
        57420 => return key(Key::Down),
        57421 => return key(Key::PageUp),
        57422 => return key(Key::PageDown),
        57423 => return key(Key::Home),
        57424 => return key(Key::End),
        57425 => return key(Key::Insert),
        57426 => return key(Key::Delete),
        _ if KITTY_FUNCTIONAL.contains(&code) => return None,
        _ => {}
    }
    let character = char::from_u32(code)?;
    // Ctrl+character where it has a control code; otherwise the character (below).
    if ctrl && let Some(bytes) = key(Key::Char(character)) {
        return Some(bytes);
    }
    if !text.is_empty() && mods & (MOD_ALT | MOD_CTRL) == 0 {
        let mut out = Vec::new();
        for &point in text {
            out.extend(utf8(char::from_u32(point)?));
        }
        return Some(out);
    }
    let base = match shifted.and_then(char::from_u32) {
        Some(upper) if shift => upper,
        _ if shift && character.is_ascii_lowercase() => character.to_ascii_uppercase(),
        _ => character,
    };
    Some(with_alt(mods, utf8(base)))
}

#[cfg(test)]
mod names_tests {
    #[test]
    fn key_names_list_the_table() {
        let names: Vec<&str> = super::NAMED_KEYS.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            super::KEY_NAMES,
            format!("{}, Ctrl+<letter>", names.join(", "))
        );
    }
}
