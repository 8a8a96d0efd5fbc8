//! Lines black-box fuzzing found `agentsh rpc` reading wrong, each checked on the real binary:
//! the exact answer (ids byte for byte, as a JSON value would not show them), then that the
//! server still answers and exits 0 at end of input.

use crate::util::{LIVENESS, TestEnv};

/// Sends each line of `cases` and checks that the next line written is exactly the one paired
/// with it; then that a later request is answered and the server exits 0 at end of input.
fn check_answers(cases: &[(&[u8], &str)]) {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    for (line, answer) in cases {
        rpc.send_bytes(line);
        assert_eq!(
            rpc.next_text(LIVENESS),
            *answer,
            "for {:?}",
            String::from_utf8_lossy(line)
        );
    }
    rpc.send(r#"{"id":"after","type":"ping"}"#);
    assert_eq!(
        rpc.next_text(LIVENESS),
        r#"{"type":"response","id":"after","command":"ping","success":true}"#
    );
    let (status, rest) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0), "exit status at end of input");
    assert!(rest.is_empty(), "nothing more: {rest:?}");
}

#[test]
fn a_byte_order_mark_at_the_start_of_a_line_is_ignored() {
    // It was a parse error without the id.
    check_answers(&[
        (
            b"\xEF\xBB\xBF{\"id\":\"bom\",\"type\":\"ping\"}",
            r#"{"type":"response","id":"bom","command":"ping","success":true}"#,
        ),
        (
            b"\xEF\xBB\xBF{\"id\":\"bom-bash\",\"type\":\"bash\"}",
            r#"{"type":"response","id":"bom-bash","command":"bash","success":false,"error":"missing field `command` (a string)"}"#,
        ),
    ]);
}

#[test]
fn a_numeric_id_is_echoed_exactly_as_it_was_written() {
    // They came back rounded: `0.0`, `1.8446744073719552e19`.
    check_answers(&[
        (
            br#"{"id":1e-400,"type":"ping"}"#,
            r#"{"type":"response","id":1e-400,"command":"ping","success":true}"#,
        ),
        (
            br#"{"id":18446744073719551617,"type":"ping"}"#,
            r#"{"type":"response","id":18446744073719551617,"command":"ping","success":true}"#,
        ),
        // A refused request, and a line that is no JSON, echo it the same way.
        (
            br#"{"id":18446744073719551617,"type":"bash"}"#,
            r#"{"type":"response","id":18446744073719551617,"command":"bash","success":false,"error":"missing field `command` (a string)"}"#,
        ),
        (
            br#"{"id":1e-400,"type":"#,
            r#"{"type":"response","id":1e-400,"command":"parse","success":false,"error":"Failed to parse command: EOF while parsing a value at line 1 column 20"}"#,
        ),
    ]);
}
