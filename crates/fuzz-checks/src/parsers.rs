//! The parsers that see no server: tool arguments, the config file, the command-line
//! normaliser, the output sanitiser, the policy, and the proxy's request heads.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use agentsh_bash_policy::{Decision, Policy, PolicyConfig, SessionMemory, TierKind, TierSource};
use agentsh_output_sink::{OutputSink, Redactor, SecretPattern, Secrets, SinkOptions};
use agentsh_protocol::{BashArgs, JobInputArgs, JobKillArgs, JobListArgs, JobOutputArgs};
use serde_json::Value;

/// A tool call's arguments (`data` as JSON), read by each tool: either refused with a message
/// that names what is wrong, or read into arguments that, written out and read again, are the
/// same.
pub fn tool_args(data: &[u8]) {
    let Some(value) = std::str::from_utf8(data)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(text).ok())
    else {
        return;
    };
    round_trip(&value, BashArgs::from_value);
    round_trip(&value, JobOutputArgs::from_value);
    round_trip(&value, JobInputArgs::from_value);
    round_trip(&value, JobKillArgs::from_value);
    round_trip(&value, JobListArgs::from_value);
}

fn round_trip<T, E>(value: &Value, read: fn(&Value) -> Result<T, E>)
where
    T: serde::Serialize + PartialEq + std::fmt::Debug,
    E: std::fmt::Display,
{
    match read(value) {
        Ok(args) => {
            let written = serde_json::to_value(&args).expect("arguments are JSON");
            match read(&written) {
                Ok(again) => assert_eq!(again, args, "read back from {written}"),
                Err(err) => panic!("{args:?}, written as {written}, is refused: {err}"),
            }
        }
        Err(err) => assert!(
            !err.to_string().trim().is_empty(),
            "an error without a message"
        ),
    }
}

/// `data` as the text of a config file: read, or refused with an error that names the file.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let file = Path::new("/fuzz/agentsh/config.toml");
    if let Err(err) = agentsh_config::Settings::from_toml(text, file, Some(Path::new("/home/fuzz")))
    {
        let message = err.to_string();
        assert!(message.contains("/fuzz/agentsh/config.toml"), "{message}");
    }
}

/// `data` as a command line, normalised: a limit is taken out only with its producer wrapped
/// in `( … )` in the command; without one the command is the line, trimmed; and the command
/// normalised again stays as it is.
pub fn normalize(data: &[u8]) {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    let normalized = agentsh_bash_normalize::normalize(line);
    let command = &normalized.command;
    if let Some(producer) = &normalized.producer {
        let limits = normalized.limits;
        assert!(
            limits.head.is_some() != limits.tail.is_some(),
            "{normalized:?}"
        );
        let inner = command
            .get(producer.clone())
            .expect("the producer is in the command");
        // Bash's blanks: a form feed is a word (a command of that name).
        assert!(
            !inner.trim_matches([' ', '\t', '\n']).is_empty(),
            "an empty producer: {normalized:?}"
        );
        assert_eq!(
            command.get(..producer.start).map(|b| b.ends_with("( ")),
            Some(true)
        );
        assert_eq!(command.get(producer.end..), Some(" )"), "{normalized:?}");
        assert!(
            line.contains(normalized.unwrapped().trim_end_matches(" 2>&1")),
            "the unwrapped command is not the line's: {normalized:?}"
        );
    } else {
        assert!(normalized.limits.is_none(), "{normalized:?}");
        assert!(line.contains(command.as_str()), "{normalized:?}");
    }
    let again = agentsh_bash_normalize::normalize(command);
    assert_eq!(
        &again.command, command,
        "normalising twice changes the command"
    );
    assert!(
        again.limits.is_none(),
        "a second limit after the first: {again:?}"
    );
    for element in agentsh_bash_normalize::list_elements(line) {
        assert!(!element.is_empty(), "an empty list element of {line:?}");
    }
}

/// `data[0]` picks how the rest is cut into chunks; the rest is a command's output. Fed to the
/// streaming sanitiser in those chunks (and byte by byte), it gives exactly the text of the
/// one-shot reference sanitiser; fed to a sink that redacts secrets (values of variables and
/// the built-in token patterns), it gives what redacting that whole text at once gives.
pub fn sanitize(data: &[u8]) {
    let Some((&seed, stream)) = data.split_first() else {
        return;
    };
    let expected = agentsh_output_sink::sanitize(stream);
    let sizes = || {
        let mut sizes = Sizes(u32::from(seed) | 1);
        move || sizes.next()
    };
    assert_eq!(
        sanitize_in(stream, sizes()),
        expected,
        "chunks cut by seed {seed}"
    );
    let redacted = secrets().current().redact(&expected).into_owned();
    assert_eq!(
        redact_in(stream, sizes()),
        redacted,
        "redacted, chunks cut by seed {seed}"
    );
    if stream.len() <= 4096 {
        assert_eq!(sanitize_in(stream, || 1), expected, "byte by byte");
        assert_eq!(redact_in(stream, || 1), redacted, "redacted, byte by byte");
    }
}

/// Hands `stream` to `each` in chunks of the sizes `size` gives (at least a byte each).
fn in_chunks(stream: &[u8], mut size: impl FnMut() -> usize, mut each: impl FnMut(&[u8])) {
    let mut rest = stream;
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(size().clamp(1, rest.len()));
        each(chunk);
        rest = tail;
    }
}

fn sanitize_in(stream: &[u8], size: impl FnMut() -> usize) -> String {
    let mut sanitizer = agentsh_output_sink::Sanitizer::new();
    let mut out = String::new();
    in_chunks(stream, size, |chunk| {
        sanitizer.push(chunk, |text| out.push_str(text));
        let _ = sanitizer.unfinished_line();
    });
    sanitizer.finish(|text| out.push_str(text));
    out
}

/// The text a redacting sink commits for `stream` cut by `size`; its kept tail must be the
/// same text.
fn redact_in(stream: &[u8], size: impl FnMut() -> usize) -> String {
    let mut sink = OutputSink::new(SinkOptions {
        max_bytes: 1 << 20,
        secrets: Some(Arc::clone(secrets())),
        ..SinkOptions::default()
    });
    let mut live = String::new();
    in_chunks(stream, size, |chunk| {
        sink.push_with(chunk, &mut |text| live.push_str(text));
    });
    let summary = sink.dump_with(&mut |text| live.push_str(text));
    assert_eq!(summary.output, live, "the tail is not the committed text");
    live
}

/// Secret values (one inside another, one with a space) and the built-in patterns.
fn secrets() -> &'static Arc<Secrets> {
    static SECRETS: OnceLock<Arc<Secrets>> = OnceLock::new();
    SECRETS.get_or_init(|| {
        let values = [
            ("GITHUB_TOKEN", "s3cr3t-t0ken-value"),
            ("DB_PASSWORD", "pa55word-with spaces"),
            ("OVERLAP_TOKEN", "pa55word-with"),
            ("API_KEY", "kkkkkkkkkkkkkkkk"),
        ];
        Arc::new(Secrets::new(Redactor::new(
            values.map(|(name, value)| (name.to_owned(), value.to_owned())),
            SecretPattern::defaults(),
        )))
    })
}

/// Chunk sizes from 1 to 64 bytes, from a small generator (a chunking the seed repeats).
struct Sizes(u32);

impl Sizes {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        (self.0 % 64) as usize + 1
    }
}

/// The rules of a representative policy: prefixes with globs, a regex, ask, deny, and a
/// strict `unknown`.
const POLICY: &str = r#"
[policy]
default = "ask"
unknown = "deny"
[[policy.rules]]
prefix = ["git", "status"]
decision = "allow"
[[policy.rules]]
prefix = ["rm", "-*"]
decision = "deny"
reason = "no forced removal"
[[policy.rules]]
regex = "(cat|ls|echo|grep)( .*)?$"
decision = "allow"
[[policy.rules]]
prefix = ["curl"]
decision = "ask"
"#;

/// `data` as a command line judged by a representative policy, or (with a NUL byte) as the
/// text of a `[policy]` table, then a command line: the policy is built or refused with the
/// key that is wrong; a judgement is the same twice, and its decision is the strictest of its
/// segments' (allow without any).
pub fn policy(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    static DEFAULT: OnceLock<Policy> = OnceLock::new();
    let custom;
    let (built, line) = match text.split_once('\0') {
        Some((rules, line)) => match build(rules) {
            Some(Ok(policy)) => {
                custom = policy;
                (&custom, line)
            }
            Some(Err(err)) => {
                assert_eq!(err.origin, "fuzz.toml");
                assert!(!err.key.is_empty() && !err.reason.is_empty(), "{err:?}");
                return;
            }
            None => return,
        },
        None => (
            DEFAULT.get_or_init(|| {
                build(POLICY)
                    .and_then(Result::ok)
                    .expect("the policy builds")
            }),
            text,
        ),
    };
    let memory = SessionMemory::new();
    let judgement = built.judge(line, &memory);
    assert_eq!(
        built.judge(line, &memory),
        judgement,
        "judged twice, differently"
    );
    let strictest = judgement.segments.iter().map(|s| s.decision).max();
    assert_eq!(
        judgement.decision,
        strictest.unwrap_or(Decision::Allow),
        "{judgement:?}"
    );
    // Segments are not all text of the line: those of a program it hands on as a string (an
    // alias's body, `eval`'s words, `bash -c`'s argument) are that program's text.
    assert_eq!(
        judgement.first_denied().is_some(),
        judgement.decision == Decision::Deny,
        "{judgement:?}"
    );
}

/// The policy of the TOML `text` (a `[policy]` table); `None` when it is no such TOML.
fn build(text: &str) -> Option<Result<Policy, agentsh_bash_policy::PolicyError>> {
    #[derive(serde::Deserialize)]
    struct File {
        policy: PolicyConfig,
    }
    let file: File = toml::from_str(text).ok()?;
    Some(Policy::new(vec![TierSource {
        kind: TierKind::User,
        origin: "fuzz.toml".to_owned(),
        policy: file.policy,
    }]))
}

/// `data` as what a sandboxed client sends the network proxy: see
/// `agentsh_net_proxy::fuzzing::check_request_head`.
pub fn proxy_head(data: &[u8]) {
    agentsh_net_proxy::fuzzing::check_request_head(data);
}
