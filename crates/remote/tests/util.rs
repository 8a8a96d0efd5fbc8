//! A scripted [`Transport`]: each `open` is a new in-memory channel, whose far end the test
//! gets as a [`FarEnd`] and plays the far side's `agentsh rpc` with.

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentsh_protocol::wire::{Command, HelloData, Message, RequestId, RequestType};
use agentsh_protocol::{RPC_PROTOCOL, Timeout, ToolDetails, ToolOutcome, ToolResult};
use agentsh_remote::{
    BoxFuture, Channel, DEFAULT_LEASE, FarSide, HandleError, RemoteConfig, RemoteError,
    RemoteHandle, SessionHandle, ToolCall, Transport, Value,
};
use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::sync::mpsc;

/// How long a wait for a state may take: generous, for slow machines.
pub const LIVENESS: Duration = Duration::from_secs(10);
/// What the scripted transport reaches, as it describes it.
pub const TARGET: &str = "scripted://far";
/// This side's version, as a protocol mismatch names it.
pub const VERSION: &str = "0.0.0-test";
/// The far side's version, as its `hello` answers.
pub const FAR_VERSION: &str = "9.9.9";

/// Opens in-memory channels; hands their far ends to the test.
#[derive(Debug)]
pub struct Scripted {
    opened: mpsc::UnboundedSender<FarEnd>,
    /// Errors the next opens fail with, in order.
    failures: Mutex<VecDeque<io::Error>>,
}

impl Scripted {
    /// The transport, and where the far end of each channel it opens arrives.
    pub fn new() -> (Arc<Self>, mpsc::UnboundedReceiver<FarEnd>) {
        let (opened, far_ends) = mpsc::unbounded_channel();
        let transport = Arc::new(Self {
            opened,
            failures: Mutex::default(),
        });
        (transport, far_ends)
    }

    /// The next open fails with `error`.
    pub fn fail_next(&self, error: io::Error) {
        self.failures.lock().expect("not poisoned").push_back(error);
    }
}

impl Transport for Scripted {
    fn open<'a>(&'a self, far: &'a FarSide) -> BoxFuture<'a, io::Result<Channel>> {
        Box::pin(async move {
            if let Some(error) = self.failures.lock().expect("not poisoned").pop_front() {
                return Err(error);
            }
            let (writer, far_input) = tokio::io::duplex(1 << 16);
            let (far_output, reader) = tokio::io::duplex(1 << 16);
            let (far_stderr, stderr) = tokio::io::duplex(1 << 12);
            let _ = self.opened.send(FarEnd {
                far: far.clone(),
                input: BufReader::new(far_input).lines(),
                output: far_output,
                stderr: far_stderr,
            });
            Ok(Channel {
                writer: Box::new(writer),
                reader: Box::new(reader),
                stderr: Some(Box::new(stderr)),
                child: None,
            })
        })
    }

    fn describe(&self) -> String {
        TARGET.to_owned()
    }
}

/// The far end of one channel: the test plays the far side's `agentsh rpc` on it.
#[derive(Debug)]
pub struct FarEnd {
    /// What the far side was started with.
    pub far: FarSide,
    input: Lines<BufReader<DuplexStream>>,
    output: DuplexStream,
    stderr: DuplexStream,
}

/// A request the far side got: its `id` (this side's number) and what it asks.
#[derive(Debug)]
pub struct Received {
    pub id: Option<RequestId>,
    pub command: Command,
}

impl FarEnd {
    /// The next line from this side; `None` at end of input.
    pub async fn next_line(&mut self) -> Option<String> {
        tokio::time::timeout(LIVENESS, self.input.next_line())
            .await
            .expect("this side writes within the liveness limit")
            .expect("the pipe reads")
    }

    /// The next request, read as the far side's RPC server reads it; pings are answered and
    /// passed over.
    pub async fn request(&mut self) -> Received {
        loop {
            let line = self.next_line().await.expect("a request, not end of input");
            let mut object = match serde_json::from_str::<Value>(&line) {
                Ok(Value::Object(object)) => object,
                other => panic!("no request object: {other:?} in {line}"),
            };
            let id = object.remove("id").map(RequestId::from);
            let kind = object
                .remove("type")
                .and_then(|kind| kind.as_str().map(str::to_owned))
                .expect("a type");
            let kind = RequestType::from_name(&kind).expect("a known type");
            let command = Command::from_fields(kind, Value::Object(object), &line)
                .unwrap_or_else(|err| panic!("a bad request {line}: {err:?}"));
            if command == Command::Ping {
                self.send(&Message::success(id, "ping", None)).await;
                continue;
            }
            return Received { id, command };
        }
    }

    /// Asserts that this side closed the far side's input (pings passed over).
    pub async fn expect_end_of_input(&mut self) {
        while let Some(line) = self.next_line().await {
            assert!(
                line.contains("\"ping\""),
                "a request before the end: {line}"
            );
        }
    }

    /// Writes `line` and a newline to this side.
    pub async fn send_line(&mut self, line: &str) {
        // This side may be gone already: what it does not read is lost, as on a real pipe.
        let _ = self.output.write_all(format!("{line}\n").as_bytes()).await;
    }

    /// Writes `message` as one line.
    pub async fn send(&mut self, message: &Message) {
        let line = serde_json::to_string(message).expect("a message serialises");
        self.send_line(&line).await;
    }

    /// Answers `request` successfully with `data`.
    pub async fn answer(&mut self, request: &Received, data: &impl Serialize) {
        let message = Message::with_data(request.id.clone(), request.command.name(), data);
        self.send(&message).await;
    }

    /// Answers `request` successfully with `data` written exactly so.
    pub async fn answer_raw(&mut self, request: &Received, data: &str) {
        let data = serde_json::value::RawValue::from_string(data.to_owned()).expect("JSON");
        let message = Message::success(request.id.clone(), request.command.name(), Some(data));
        self.send(&message).await;
    }

    /// Answers `request` with `success: false` and `error`.
    pub async fn fail(&mut self, request: &Received, error: &str) {
        let message = Message::failure(request.id.clone(), request.command.name(), error);
        self.send(&message).await;
    }

    /// Reads the `hello` this side sends first and answers it as a far side of this
    /// protocol; the hello.
    pub async fn hello(&mut self) -> Command {
        let hello = self.request().await;
        assert!(
            matches!(hello.command, Command::Hello { .. }),
            "{:?}",
            hello.command
        );
        let data = HelloData {
            agentsh: FAR_VERSION.to_owned(),
            protocol: u64::from(RPC_PROTOCOL),
        };
        self.answer(&hello, &data).await;
        hello.command
    }

    /// The far side dies: `stderr` is what its transport printed last, then every stream
    /// closes.
    pub async fn die(mut self, stderr: &str) {
        self.stderr
            .write_all(stderr.as_bytes())
            .await
            .expect("this side reads stderr");
        drop(self);
    }
}

/// The next far end the transport opened.
pub async fn next_far(opened: &mut mpsc::UnboundedReceiver<FarEnd>) -> FarEnd {
    tokio::time::timeout(LIVENESS, opened.recv())
        .await
        .expect("a channel opens within the liveness limit")
        .expect("the transport lives")
}

/// A config over `transport` with `settings`.
pub fn config(transport: Arc<Scripted>, settings: Option<Value>) -> RemoteConfig {
    RemoteConfig {
        transport,
        far: FarSide {
            cwd: Some("/srv/project".to_owned()),
            lease: DEFAULT_LEASE,
        },
        settings,
        version: VERSION.to_owned(),
    }
}

/// A session connected to a far side, with what is needed to play it.
pub struct Remote {
    pub session: RemoteHandle,
    pub far: FarEnd,
    pub opened: mpsc::UnboundedReceiver<FarEnd>,
    pub transport: Arc<Scripted>,
    /// The first connection's hello.
    pub hello: Command,
}

/// A `bash` `true` call (id `c1`) whose far side reads the request and closes the connection.
pub async fn call_as_far_closes(
    session: &RemoteHandle,
    mut far: FarEnd,
) -> Result<ToolOutcome, HandleError> {
    let arguments = serde_json::json!({"command": "true"});
    let (outcome, ()) = tokio::join!(
        session.tool_call(ToolCall::new("c1", "bash", &arguments)),
        async move {
            let _request = far.request().await;
            drop(far);
        }
    );
    outcome
}

/// Connects a session (with `settings`) whose far side says hello as this protocol's.
pub async fn connect(settings: Option<Value>) -> Remote {
    let (transport, mut opened) = Scripted::new();
    let connecting = RemoteHandle::connect(config(Arc::clone(&transport), settings));
    let (session, (far, hello)) = tokio::join!(connecting, async {
        let mut far = next_far(&mut opened).await;
        let hello = far.hello().await;
        (far, hello)
    });
    Remote {
        session: session.expect("the session connects"),
        far,
        opened,
        transport,
        hello,
    }
}

/// Connects with the far side played by `far_side` (which may keep the channel open by
/// returning it): the error the connect ends with.
pub async fn refused<F>(far_side: F) -> RemoteError
where
    F: AsyncFnOnce(FarEnd),
{
    let (transport, mut opened) = Scripted::new();
    let connecting = RemoteHandle::connect(config(transport, None));
    let (session, ()) = tokio::join!(connecting, async {
        far_side(next_far(&mut opened).await).await;
    });
    session.expect_err("the session is refused")
}

/// A far side's tool result with `text`, exit status `exit_code`.
pub fn far_result(text: &str, exit_code: Option<i32>, is_error: bool) -> ToolResult {
    let mut details = ToolDetails::not_run(Path::new("/srv/project"), Timeout::DEFAULT);
    details.exit_code = exit_code;
    ToolResult::new(text.to_owned(), details, is_error)
}
