//! Key normalisation: every mapping with hand-written bytes, the kill key, and
//! properties over arbitrary input.

use agentsh_pty_runtime::{
    KeyAction, KeyModes, UnknownKey, classify_keys, key_sequence, normalize_keys, typed_text,
};
use proptest::prelude::*;

/// `(input, application cursor mode, expected bytes)`.
fn check(cases: &[(&[u8], bool, &[u8])]) {
    for &(input, app, expected) in cases {
        assert_eq!(
            normalize_keys(input, app),
            expected,
            "{:?} (app cursor {app})",
            input.escape_ascii().to_string()
        );
    }
}

#[test]
fn arrows_home_end_follow_application_cursor_mode() {
    check(&[
        // Legacy sequences, both encodings in, the mode's encoding out.
        (b"\x1b[A", true, b"\x1bOA"),
        (b"\x1b[B", true, b"\x1bOB"),
        (b"\x1b[C", true, b"\x1bOC"),
        (b"\x1b[D", true, b"\x1bOD"),
        (b"\x1b[H", true, b"\x1bOH"),
        (b"\x1b[F", true, b"\x1bOF"),
        (b"\x1bOA", false, b"\x1b[A"),
        (b"\x1bOD", false, b"\x1b[D"),
        (b"\x1bOH", false, b"\x1b[H"),
        (b"\x1bOF", false, b"\x1b[F"),
        (b"\x1b[A", false, b"\x1b[A"),
        (b"\x1bOB", true, b"\x1bOB"),
        // vt220 Home/End.
        (b"\x1b[1~", true, b"\x1bOH"),
        (b"\x1b[4~", false, b"\x1b[F"),
        (b"\x1b[7~", false, b"\x1b[H"),
        (b"\x1b[8~", true, b"\x1bOF"),
        // Kitty events: press and repeat, with and without the explicit modifier field.
        (b"\x1b[1;1:1A", true, b"\x1bOA"),
        (b"\x1b[1;1:1A", false, b"\x1b[A"),
        (b"\x1b[1;1:2B", true, b"\x1bOB"),
        (b"\x1b[1;1C", false, b"\x1b[C"),
        (b"\x1b[1;1:1H", true, b"\x1bOH"),
        (b"\x1b[1;1:1F", false, b"\x1b[F"),
        // Modifiers keep the xterm form whatever the mode.
        (b"\x1b[1;5A", true, b"\x1b[1;5A"),
        (b"\x1b[1;5:1D", true, b"\x1b[1;5D"),
        (b"\x1b[1;3:2C", false, b"\x1b[1;3C"),
        // Super/hyper/meta and the lock keys have no legacy bits.
        (b"\x1b[1;65A", true, b"\x1bOA"),
        (b"\x1b[1;129:1B", false, b"\x1b[B"),
        // Kitty keypad arrows.
        (b"\x1b[57419u", true, b"\x1bOA"),
        (b"\x1b[57417u", false, b"\x1b[D"),
    ]);
}

#[test]
fn editing_and_paging_keys() {
    check(&[
        (b"\x1b[5~", false, b"\x1b[5~"),
        (b"\x1b[6~", true, b"\x1b[6~"),
        (b"\x1b[2~", false, b"\x1b[2~"),
        (b"\x1b[3~", false, b"\x1b[3~"),
        (b"\x1b[5;1:1~", false, b"\x1b[5~"),
        (b"\x1b[6;1:2~", false, b"\x1b[6~"),
        (b"\x1b[2;1:1~", false, b"\x1b[2~"),
        (b"\x1b[3;1:1~", false, b"\x1b[3~"),
        (b"\x1b[3;5:1~", false, b"\x1b[3;5~"),
        (b"\x1b[57421u", false, b"\x1b[5~"),
        (b"\x1b[57422u", false, b"\x1b[6~"),
        (b"\x1b[57425u", false, b"\x1b[2~"),
        (b"\x1b[57426u", false, b"\x1b[3~"),
        // Shift+Tab, Enter, Tab, Backspace, Esc as Kitty events.
        (b"\x1b[9;2u", false, b"\x1b[Z"),
        (b"\x1b[9;2:1u", false, b"\x1b[Z"),
        (b"\x1b[Z", false, b"\x1b[Z"),
        (b"\x1b[13u", false, b"\r"),
        (b"\x1b[13;1:1u", false, b"\r"),
        (b"\x1b[57414u", false, b"\r"),
        (b"\x1b[9u", false, b"\t"),
        (b"\x1b[127u", false, b"\x7f"),
        (b"\x1b[127;5u", false, b"\x08"),
        (b"\x1b[27u", false, b"\x1b"),
        // Legacy forms of the same keys are already right.
        (b"\r", false, b"\r"),
        (b"\t", false, b"\t"),
        (b"\x7f", false, b"\x7f"),
        // F1–F4, F5.
        (b"\x1b[P", false, b"\x1bOP"),
        (b"\x1b[1;1:1Q", false, b"\x1bOQ"),
        (b"\x1b[13~", false, b"\x1bOR"),
        (b"\x1b[1;2S", false, b"\x1b[1;2S"),
        (b"\x1bOP", false, b"\x1bOP"),
        (b"\x1b[15;1:1~", false, b"\x1b[15~"),
    ]);
}

#[test]
fn ctrl_and_alt_combinations() {
    check(&[
        (b"\x1b[97;5u", false, b"\x01"),
        (b"\x1b[99;5u", false, b"\x03"),
        (b"\x1b[100;5:1u", false, b"\x04"),
        (b"\x1b[122;5u", false, b"\x1a"),
        (b"\x1b[97;6u", false, b"\x01"), // Ctrl+Shift+A
        (b"\x1b[93;5u", false, b"\x1d"), // Ctrl+]
        (b"\x1b[91;5u", false, b"\x1b"), // Ctrl+[
        (b"\x1b[92;5u", false, b"\x1c"),
        (b"\x1b[32;5u", false, b"\x00"), // Ctrl+Space
        (b"\x1b[64;5u", false, b"\x00"),
        (b"\x1b[94;5u", false, b"\x1e"),
        (b"\x1b[95;5u", false, b"\x1f"),
        (b"\x1b[63;5u", false, b"\x7f"),
        // Alt+letter, Alt+Ctrl+letter, Alt+Enter, Alt+Backspace.
        (b"\x1b[98;3u", false, b"\x1bb"),
        (b"\x1b[98;4u", false, b"\x1bB"),
        (b"\x1b[98;7u", false, b"\x1b\x02"),
        (b"\x1b[13;3u", false, b"\x1b\r"),
        (b"\x1b[127;3u", false, b"\x1b\x7f"),
        // Shift with the alternate (shifted) key, and Kitty's associated text.
        (b"\x1b[49:33;2u", false, b"!"),
        (b"\x1b[97;2u", false, b"A"),
        (b"\x1b[97;1;97u", false, b"a"),
        (b"\x1b[97;2;65u", false, b"A"),
        (b"\x1b[233u", false, "é".as_bytes()),
        // xterm modifyOtherKeys.
        (b"\x1b[27;5;97~", false, b"\x01"),
        (b"\x1b[27;3;120~", false, b"\x1bx"),
        // Legacy Ctrl/Alt bytes pass unchanged.
        (b"\x03", false, b"\x03"),
        (b"\x1bb", false, b"\x1bb"),
    ]);
}

#[test]
fn release_and_unrepresentable_events_are_dropped() {
    check(&[
        (b"\x1b[97;1:3u", false, b""),
        (b"\x1b[1;1:3A", true, b""),
        (b"\x1b[5;1:3~", false, b""),
        (b"\x1b[27;1:3u", false, b""),
        (b"\x1b[57441;2u", false, b""), // Left Shift on its own
        (b"\x1b[57358u", false, b""),   // Caps Lock
        (b"\x1b[57376u", false, b""),   // F13
        (b"a\x1b[97;1:3ub", false, b"ab"),
    ]);
}

#[test]
fn everything_else_passes_through_unchanged() {
    check(&[
        (b"hello, world", false, b"hello, world"),
        ("grüße €".as_bytes(), true, "grüße €".as_bytes()),
        (b"\x1b[<0;10;5M", false, b"\x1b[<0;10;5M"), // SGR mouse report
        (b"\x1b[I\x1b[O", false, b"\x1b[I\x1b[O"),   // focus events
        (b"\x1b[?62c", false, b"\x1b[?62c"),
        (b"\x1b[1;2;3x", false, b"\x1b[1;2;3x"),
        (
            b"\x1b]11;rgb:0000/0000/0000\x07",
            false,
            b"\x1b]11;rgb:0000/0000/0000\x07",
        ),
        (b"\x1b[", false, b"\x1b["), // cut off
        (b"\x1b[1;", false, b"\x1b[1;"),
        (b"\x1bO", false, b"\x1bO"),
        // A paste is text, even when it contains key sequences.
        (
            b"\x1b[200~a\x1b[Ab\x1b[201~\x1b[A",
            true,
            b"\x1b[200~a\x1b[Ab\x1b[201~\x1bOA",
        ),
    ]);
}

#[test]
fn kill_key_outside_and_on_the_alternate_screen() {
    let shell = KeyModes::default();
    let vim = KeyModes {
        alternate_screen: true,
        application_cursor: true,
    };
    for esc in [
        &b"\x1b"[..],
        b"\x1b[27u",
        b"\x1b[27;1:1u",
        b"abc\x1b",
        b"\x1b\x1b",
    ] {
        assert_eq!(classify_keys(esc, shell), KeyAction::Kill, "{esc:?}");
        assert!(
            matches!(classify_keys(esc, vim), KeyAction::Forward(_)),
            "{esc:?}"
        );
    }
    assert_eq!(
        classify_keys(b"\x1b", vim),
        KeyAction::Forward(b"\x1b".to_vec())
    );
    assert_eq!(
        classify_keys(b"\x1b[27u", vim),
        KeyAction::Forward(b"\x1b".to_vec())
    );
    for ctrl_bracket in [&b"\x1d"[..], b"\x1b[93;5u", b"\x1b[27;5;93~"] {
        assert_eq!(
            classify_keys(ctrl_bracket, vim),
            KeyAction::Kill,
            "{ctrl_bracket:?}"
        );
        assert_eq!(
            classify_keys(ctrl_bracket, shell),
            KeyAction::Forward(b"\x1d".to_vec()),
            "{ctrl_bracket:?}"
        );
    }
    // Key sequences that start with ESC are not the Esc key; nor is a release of Esc.
    for not_esc in [&b"\x1b[A"[..], b"\x1bOA", b"\x1bb", b"\x1b[27;1:3u"] {
        assert!(
            matches!(classify_keys(not_esc, shell), KeyAction::Forward(_)),
            "{not_esc:?}"
        );
    }
    assert_eq!(
        classify_keys(b"\x1b[1;1:1A", vim),
        KeyAction::Forward(b"\x1bOA".to_vec())
    );
}

fn modes(application_cursor: bool) -> KeyModes {
    KeyModes {
        alternate_screen: false,
        application_cursor,
    }
}

#[test]
fn key_names_give_their_bytes() {
    // (name, application-cursor mode on, off)
    let cases: &[(&str, &[u8], &[u8])] = &[
        ("Enter", b"\r", b"\r"),
        ("Tab", b"\t", b"\t"),
        ("Esc", b"\x1b", b"\x1b"),
        ("Up", b"\x1bOA", b"\x1b[A"),
        ("Down", b"\x1bOB", b"\x1b[B"),
        ("Right", b"\x1bOC", b"\x1b[C"),
        ("Left", b"\x1bOD", b"\x1b[D"),
        ("Home", b"\x1bOH", b"\x1b[H"),
        ("End", b"\x1bOF", b"\x1b[F"),
        ("PageUp", b"\x1b[5~", b"\x1b[5~"),
        ("PageDown", b"\x1b[6~", b"\x1b[6~"),
        ("Backspace", b"\x7f", b"\x7f"),
        ("Delete", b"\x1b[3~", b"\x1b[3~"),
        ("Ctrl+A", b"\x01", b"\x01"),
        ("Ctrl+c", b"\x03", b"\x03"),
        ("Ctrl+D", b"\x04", b"\x04"),
        ("Ctrl+Z", b"\x1a", b"\x1a"),
        // Case-insensitive, blanks around ignored.
        ("enter", b"\r", b"\r"),
        ("PAGEDOWN", b"\x1b[6~", b"\x1b[6~"),
        ("ctrl+z", b"\x1a", b"\x1a"),
        ("CTRL+L", b"\x0c", b"\x0c"),
        (" up ", b"\x1bOA", b"\x1b[A"),
    ];
    for &(name, on, off) in cases {
        assert_eq!(
            key_sequence(&[name], modes(true)).as_deref(),
            Ok(on),
            "{name}"
        );
        assert_eq!(
            key_sequence(&[name], modes(false)).as_deref(),
            Ok(off),
            "{name}"
        );
    }
    // The alternate screen changes nothing here: Esc is a key, not the kill key.
    let vim = KeyModes {
        alternate_screen: true,
        application_cursor: false,
    };
    assert_eq!(key_sequence(&["Esc"], vim).as_deref(), Ok(&b"\x1b"[..]));
}

#[test]
fn key_names_follow_each_other_in_order() {
    let names = vec!["Down".to_owned(), "Down".to_owned(), "Enter".to_owned()];
    assert_eq!(
        key_sequence(&names, modes(false)).as_deref(),
        Ok(&b"\x1b[B\x1b[B\r"[..])
    );
    let none: &[&str] = &[];
    assert_eq!(key_sequence(none, modes(true)).as_deref(), Ok(&b""[..]));
}

#[test]
fn an_unknown_key_name_is_an_error_naming_it() {
    for name in [
        "Foo",
        "",
        "Ctrl+",
        "Ctrl+1",
        "Ctrl+AB",
        "Ctrl-C",
        "Ctrl+Ä",
        "F1",
        "Escape",
        "Up\u{301}",
    ] {
        let err = key_sequence(&["Enter", name, "Tab"], modes(false)).expect_err(name);
        assert_eq!(
            err,
            UnknownKey {
                name: name.to_owned()
            }
        );
    }
    assert_eq!(
        UnknownKey {
            name: "Foo".to_owned()
        }
        .to_string(),
        "unknown key \"Foo\" (keys: Enter, Tab, Esc, Up, Down, Left, Right, Home, End, PageUp, \
         PageDown, Backspace, Delete, Ctrl+<letter>)"
    );
}

#[test]
fn typed_text_sends_newlines_as_enter() {
    assert_eq!(typed_text("bob\n"), b"bob\r");
    assert_eq!(typed_text("a\nb\n\nc"), b"a\rb\r\rc");
    assert_eq!(typed_text("tab\there é\r"), "tab\there é\r".as_bytes());
    assert_eq!(typed_text(""), b"");
}

/// Complete key sequences (not the lone Esc, which combines with what follows as Alt+key).
const KEYS: &[&[u8]] = &[
    b"\x1b[A",
    b"\x1bOB",
    b"\x1b[1;1:1C",
    b"\x1b[97;5u",
    b"\x1b[97;1:3u",
    b"\x1b[5~",
    b"\x1b[3;5:1~",
    b"\x1b[9;2u",
    b"\x1b[27;5;97~",
    b"\x1b[57441u",
    b"\x1b[<0;1;1M",
    b"\x1b[1;5A",
    b"\x1b[H",
    b"\x1b[13u",
];

proptest! {
    #[test]
    fn arbitrary_input_never_panics(input in proptest::collection::vec(any::<u8>(), 0..64), app: bool, alt: bool) {
        let out = normalize_keys(&input, app);
        let _ = classify_keys(&input, KeyModes { alternate_screen: alt, application_cursor: app });
        // Normalising never invents bytes out of nothing: at most a few per input byte.
        prop_assert!(out.len() <= input.len() * 8 + 8);
    }

    #[test]
    fn input_without_escape_passes_through(input in proptest::collection::vec(any::<u8>().prop_filter("no ESC", |b| *b != 0x1b), 0..256), app: bool) {
        prop_assert_eq!(normalize_keys(&input, app), input.clone());
        prop_assert_eq!(
            classify_keys(&input, KeyModes { alternate_screen: false, application_cursor: app }),
            KeyAction::Forward(input)
        );
    }

    #[test]
    fn text_around_keys_is_kept_and_keys_translate_alone(
        parts in proptest::collection::vec((proptest::collection::vec(any::<u8>().prop_filter("no ESC", |b| *b != 0x1b), 0..8), 0..KEYS.len()), 0..8),
        app: bool,
    ) {
        let mut input = Vec::new();
        let mut expected = Vec::new();
        for (text, key) in &parts {
            input.extend_from_slice(text);
            input.extend_from_slice(KEYS[*key]);
            expected.extend_from_slice(text);
            expected.extend(normalize_keys(KEYS[*key], app));
        }
        prop_assert_eq!(normalize_keys(&input, app), expected);
    }
}
