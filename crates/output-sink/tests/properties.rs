//! Property tests: chunking independence, the reference oracle, the lossy
//! rule against std, suffixes and counts, head capture and `TailBuffer`.

use agentsh_output_sink::{MAX_HELD_LINE_BYTES, MAX_SEQUENCE_BYTES, TailBuffer, sanitize};
use proptest::prelude::*;
use proptest::sample::Index;

use crate::util::{check_summary, expected_tail, run_sink, sanitizer_text, split};

/// One piece of a generated stream.
fn token() -> impl Strategy<Value = Vec<u8>> {
    let escape = prop_oneof![
        (0u8..5, 0u16..400).prop_map(|(p, q)| format!("\x1b[{p};{q}m").into_bytes()),
        "[0-9;?]{0,6}[A-Za-z@~]".prop_map(|s| format!("\x1b[{s}").into_bytes()),
        "[ -~]{0,20}".prop_map(|s| format!("\x1b]0;{s}\x07").into_bytes()),
        "[ -~]{0,20}".prop_map(|s| format!("\x1b]8;;{s}\x1b\\").into_bytes()),
        "[ -~]{0,10}".prop_map(|s| format!("\x1bP{s}\x1b\\").into_bytes()),
        prop_oneof![Just("X"), Just("^"), Just("_")]
            .prop_map(|k| format!("\x1b{k}payload\x1b\\").into_bytes()),
        "[()*+#%][0-9A-Z]".prop_map(|s| format!("\x1b{s}").into_bytes()),
        "[0-9=>A-Zc\\\\]".prop_map(|s| format!("\x1b{s}").into_bytes()),
    ];
    prop_oneof![
        6 => "[a-zA-Z0-9 .,:/|=-]{1,16}".prop_map(String::into_bytes),
        3 => any::<char>().prop_map(|c| c.to_string().into_bytes()),
        1 => prop::collection::vec(0x80u8..=0xFF, 1..4),
        // A multi-byte character cut short.
        1 => (0x80u32..0x11_0000, any::<Index>()).prop_filter_map("scalar", |(code, cut)| {
            let c = char::from_u32(code)?;
            let bytes = c.to_string().into_bytes();
            Some(bytes[..=cut.index(bytes.len() - 1)].to_vec())
        }),
        3 => prop_oneof![Just(b"\r".to_vec()), Just(b"\r\n".to_vec()), Just(b"\n".to_vec())],
        1 => prop_oneof![0u8..0x20, Just(0x7F)].prop_map(|b| vec![b]),
        3 => escape.clone(),
        // A truncated escape sequence.
        2 => (escape, any::<Index>()).prop_map(|(bytes, cut)| bytes[..cut.index(bytes.len())].to_vec()),
        // Runs that cross the two bounds, within or outside a sequence.
        1 => (MAX_SEQUENCE_BYTES - 6..MAX_SEQUENCE_BYTES + 2, prop_oneof![Just(b'x'), Just(0xFE), Just(b'\n')])
            .prop_map(|(len, fill)| {
                let mut bytes = b"\x1b]".to_vec();
                bytes.resize(len, fill);
                bytes
            }),
        // A line of about the hold-back bound, often followed by a carriage return.
        1 => (
            MAX_HELD_LINE_BYTES - 3..MAX_HELD_LINE_BYTES + 4,
            prop_oneof![Just("y"), Just("é"), Just("€")],
            prop_oneof![Just(""), Just("\r"), Just("\rz")],
        )
            .prop_map(|(len, piece, end)| {
                format!("\n{}{end}", piece.repeat(len / piece.len())).into_bytes()
            }),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(token(), 0..40).prop_map(|tokens| tokens.concat())
}

proptest! {
    #[test]
    fn every_chunking_gives_the_reference_text(
        bytes in stream(),
        cuts_a in prop::collection::vec(any::<Index>(), 0..12),
        cuts_b in prop::collection::vec(any::<Index>(), 0..200),
    ) {
        let expected = sanitize(&bytes);
        prop_assert_eq!(sanitizer_text(&split(&bytes, &cuts_a)), expected.as_str());
        prop_assert_eq!(sanitizer_text(&split(&bytes, &cuts_b)), expected.as_str());
        if bytes.len() <= 2_000 {
            let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
            prop_assert_eq!(sanitizer_text(&bytewise), expected.as_str());
        }
    }

    #[test]
    fn sink_dump_and_artifact_do_not_depend_on_chunking(
        bytes in stream(),
        cuts_a in prop::collection::vec(any::<Index>(), 0..12),
        cuts_b in prop::collection::vec(any::<Index>(), 0..200),
        max_bytes in prop_oneof![Just(0usize), 1usize..8, 8usize..200, Just(5_000), Just(70_000)],
    ) {
        let expected = sanitize(&bytes);
        let (first, first_record, _) = run_sink(&split(&bytes, &cuts_a), max_bytes, None);
        let (second, second_record, _) = run_sink(&split(&bytes, &cuts_b), max_bytes, None);
        check_summary(&first, &first_record, &expected, max_bytes, "first chunking");
        check_summary(&second, &second_record, &expected, max_bytes, "second chunking");
        prop_assert_eq!(&first, &second);
        prop_assert_eq!(&first_record.bytes, &second_record.bytes);
    }

    /// What `push_with`/`dump_with` hand on is exactly the sink's committed text: the whole
    /// reference text in order, however the stream is cut, and the dump is the same as without
    /// a callback.
    #[test]
    fn push_with_hands_on_the_reference_text(
        bytes in stream(),
        cuts in prop::collection::vec(any::<Index>(), 0..40),
        max_bytes in prop_oneof![Just(0usize), 1usize..200, Just(70_000)],
    ) {
        let expected = sanitize(&bytes);
        let options = || agentsh_output_sink::SinkOptions { max_bytes, ..Default::default() };
        let mut plain = agentsh_output_sink::OutputSink::new(options());
        let mut with = agentsh_output_sink::OutputSink::new(options());
        let mut seen = String::new();
        for piece in split(&bytes, &cuts) {
            plain.push(piece);
            with.push_with(piece, &mut |text| seen.push_str(text));
        }
        let summary = with.dump_with(&mut |text| seen.push_str(text));
        prop_assert_eq!(seen.as_str(), expected.as_str());
        prop_assert_eq!(summary, plain.dump());
    }

    /// With no controls and no escapes, sanitising is `String::from_utf8_lossy`: the lossy rule
    /// is tested against std, not only against the reference.
    #[test]
    fn without_controls_sanitising_is_from_utf8_lossy(
        bytes in prop::collection::vec(
            prop_oneof![3 => 0x20u8..0x7F, 1 => Just(b'\n'), 1 => Just(b'\t'), 4 => 0x80u8..=0xFF],
            0..300,
        ).prop_filter("no C1 controls", |bytes| {
            !String::from_utf8_lossy(bytes).chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c))
        }),
        cuts in prop::collection::vec(any::<Index>(), 0..20),
    ) {
        let lossy = String::from_utf8_lossy(&bytes);
        prop_assert_eq!(sanitize(&bytes), lossy.as_ref());
        prop_assert_eq!(sanitizer_text(&split(&bytes, &cuts)), lossy.as_ref());
        let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
        prop_assert_eq!(sanitizer_text(&bytewise), lossy.as_ref());
    }

    /// Valid UTF-8 text of any script without controls passes unchanged.
    #[test]
    fn clean_text_passes_unchanged(
        text in "[^\\p{Cc}]{0,200}(\n[^\\p{Cc}]{0,50}){0,5}",
        cuts in prop::collection::vec(any::<Index>(), 0..20),
    ) {
        prop_assert_eq!(sanitize(text.as_bytes()), text.as_str());
        prop_assert_eq!(sanitizer_text(&split(text.as_bytes(), &cuts)), text.as_str());
    }

    #[test]
    fn head_capture_keeps_the_first_lines(
        bytes in stream(),
        cuts in prop::collection::vec(any::<Index>(), 0..12),
        head_lines in 0u32..6,
        max_bytes in prop_oneof![1usize..40, Just(10_000), Just(200_000)],
    ) {
        let expected = sanitize(&bytes);
        let first: String = expected.split_inclusive('\n').take(head_lines as usize).collect();
        let mut cut = first.len().min(max_bytes);
        while !first.is_char_boundary(cut) {
            cut -= 1;
        }
        let (_, _, head) = run_sink(&split(&bytes, &cuts), max_bytes, Some(head_lines));
        prop_assert_eq!(head.as_deref(), Some(&first[..cut]));
    }

    #[test]
    fn tail_buffer_snapshot_is_a_bounded_suffix(
        pieces in prop::collection::vec(".{0,30}", 0..30),
        limit in 0usize..64,
    ) {
        let mut tail = TailBuffer::new(limit);
        let mut all = String::new();
        for piece in &pieces {
            tail.push(piece);
            all.push_str(piece);
            prop_assert_eq!(tail.snapshot(), expected_tail(&all, limit));
        }
        prop_assert_eq!(tail.total_bytes(), all.len() as u64);
    }
}
