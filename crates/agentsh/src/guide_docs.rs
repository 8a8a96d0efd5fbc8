//! The user guide kept true: every example block of `README.md` and of the pages of `docs/`
//! (but `docs/rpc.md` and `docs/configuration.md`, which `agentsh-rpc` and `agentsh-agent-session`
//! check with their own conventions) is read by the code it describes, and every relative link
//! of those pages, and of those two, leads to a file and a heading that exist.
//!
//! Each fenced block's info string says what it holds; a block with any other info string fails:
//!
//! - `sh`: command lines, read by a small word splitter (quotes, `\` line continuations,
//!   comments, `;`, `&&`, `|`, `( )`, `{ }`, `<( )`; no expansion). In each simple command:
//!   - `agentsh …`, `cargo run -p agentsh [-- …]`, and the command after a `--` that starts with
//!     `agentsh` (`claude mcp add agentsh -- agentsh mcp`) are parsed by the binary's own
//!     command line (`agentsh_cli::Cli`);
//!   - `cargo … -p NAME` names a workspace package, `cargo install --path DIR` a directory of the
//!     repository, `cargo xtask SUB` a subcommand of `xtask` (and `cargo xtask fuzz TARGET` a
//!     fuzz target);
//!   - a word that is a JSON object (`'{"id":"1",…}'`) is a request the RPC server reads, and a
//!     `tool_call`'s arguments are read by the tool's own argument parser.
//!
//!   Other commands (`man`, `curl`, `printf`) are not checked, but every block holds at least
//!   one that is.
//! - `toml config`: an agentsh configuration file, taken by the real loader (`Settings`), its
//!   policy (rules and their `match` examples) compiled as a session would.
//! - `toml mcp-client`, `json mcp-client`: an MCP client's server list (Codex's
//!   `[mcp_servers.NAME]`, or an `mcpServers` object): each server's `command` is `agentsh`
//!   and its `args` are parsed by the binary's command line.
//! - `jsonl mcp-transcript`: an MCP exchange, one message a line, `→ ` before what the client
//!   sends and `← ` before what agentsh answers; `,…` may stand for members left out. Every line
//!   is JSON-RPC 2.0; a `tools/call` names a tool and its arguments are read by that tool's
//!   parser; every answer answers an earlier request of the same id, a tool's result holds its
//!   text.
//! - `text`: output, notices and messages shown as they look, not checked. Keep them rare.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use agentsh_cli::Cli;
use agentsh_config::Settings;
use agentsh_protocol::{
    BashArgs, JobInputArgs, JobKillArgs, JobListArgs, JobOutputArgs, TOOL_NAMES,
};
use clap::Parser;
use serde_json::Value;

use shell::{check_shell, workspace_packages};

mod shell;

/// What a fenced block holds, from its info string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Shell,
    Config,
    McpClientToml,
    McpClientJson,
    McpTranscript,
    Text,
}

impl Kind {
    fn from_info(info: &str) -> Option<Self> {
        let words: Vec<&str> = info.split_whitespace().collect();
        Some(match words.as_slice() {
            ["sh"] => Self::Shell,
            ["toml", "config"] => Self::Config,
            ["toml", "mcp-client"] => Self::McpClientToml,
            ["json", "mcp-client"] => Self::McpClientJson,
            ["jsonl", "mcp-transcript"] => Self::McpTranscript,
            ["text"] => Self::Text,
            _ => return None,
        })
    }
}

/// One fenced block of a page.
#[derive(Debug)]
struct Block {
    /// Its info string, as written.
    info: String,
    /// 1-based line number of its opening fence.
    line: usize,
    /// Its lines, each with its line end.
    body: String,
}

/// Every fenced block (three or more backticks) of `markdown`, in order; a block never closed
/// runs to the end.
fn blocks(markdown: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<(String, Block)> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.as_mut() {
            None => {
                let ticks = trimmed.chars().take_while(|&c| c == '`').count();
                if ticks >= 3 {
                    let block = Block {
                        info: trimmed[ticks..].trim().to_owned(),
                        line: index + 1,
                        body: String::new(),
                    };
                    open = Some(("`".repeat(ticks), block));
                }
            }
            Some((fence, block)) => {
                if trimmed.starts_with(fence.as_str()) && trimmed.trim_matches('`').is_empty() {
                    found.extend(open.take().map(|(_, block)| block));
                } else {
                    block.body.push_str(line);
                    block.body.push('\n');
                }
            }
        }
    }
    found.extend(open.map(|(_, block)| block));
    found
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The pages whose examples this test checks: `README.md` and `docs/*.md` but the two that have
/// tests of their own.
fn guide_pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    pages.extend(doc_pages().into_iter().filter(|page| {
        let name = page.file_name().and_then(|n| n.to_str()).unwrap_or("");
        name != "rpc.md" && name != "configuration.md"
    }));
    pages
}

/// Every Markdown file of `docs/`, sorted.
fn doc_pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ is readable")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn shown(path: &Path) -> String {
    let root = root().canonicalize().expect("root");
    let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    path.strip_prefix(&root)
        .unwrap_or(&path)
        .display()
        .to_string()
}

/// `args` (without the program's name) as the binary's command line takes them.
fn check_agentsh_args(args: &[String]) -> Result<(), String> {
    let argv = std::iter::once("agentsh").chain(args.iter().map(String::as_str));
    match Cli::try_parse_from(argv) {
        Ok(_) => Ok(()),
        Err(err)
            if matches!(
                err.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) =>
        {
            Ok(())
        }
        Err(err) => {
            let text = err.to_string();
            let first = text.lines().next().unwrap_or_default();
            Err(format!("`agentsh {}` is refused: {first}", args.join(" ")))
        }
    }
}

/// The arguments of a call of tool `name`, read by that tool's own parser.
fn check_tool_args(name: &str, arguments: &Value) -> Result<(), String> {
    let read = match name {
        "bash" => BashArgs::from_value(arguments).map(drop),
        "job_output" => JobOutputArgs::from_value(arguments).map(drop),
        "job_input" => JobInputArgs::from_value(arguments).map(drop),
        "job_kill" => JobKillArgs::from_value(arguments).map(drop),
        "job_list" => JobListArgs::from_value(arguments).map(drop),
        other => return Err(format!("`{other}` is no tool ({TOOL_NAMES:?})")),
    };
    read.map_err(|err| format!("the arguments of `{name}` are refused: {err}"))
}

// ---------------------------------------------------------------------------------------------
// Configuration, MCP client and transcript blocks.

fn check_config(body: &str) -> Result<(), String> {
    let file = Path::new("/home/ann/.config/agentsh/config.toml");
    let settings = Settings::from_toml(body, file, Some(Path::new("/home/ann")))
        .map_err(|err| format!("the loader refuses it: {err}"))?;
    let cwd = tempfile::tempdir().map_err(|err| err.to_string())?;
    settings
        .load_policy(cwd.path(), |_| None)
        .map_err(|err| format!("its policy is refused: {err}"))?;
    Ok(())
}

/// Each MCP server of a client's configuration, as (`command`, `args`).
fn check_mcp_servers<'a>(
    servers: impl Iterator<Item = (Option<&'a str>, Vec<String>)>,
) -> Result<(), String> {
    let mut count = 0;
    for (command, args) in servers {
        if command != Some("agentsh") {
            return Err(format!(
                "the server's command is {command:?}, not `agentsh`"
            ));
        }
        check_agentsh_args(&args)?;
        count += 1;
    }
    if count == 0 {
        return Err("no server".to_owned());
    }
    Ok(())
}

fn check_mcp_client_toml(body: &str) -> Result<(), String> {
    let table: toml::Table = body.parse().map_err(|err| format!("not TOML: {err}"))?;
    let servers = table
        .get("mcp_servers")
        .and_then(toml::Value::as_table)
        .ok_or("no [mcp_servers.NAME] table")?;
    check_mcp_servers(servers.values().map(|server| {
        let args = server
            .get("args")
            .and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        (server.get("command").and_then(toml::Value::as_str), args)
    }))
}

fn check_mcp_client_json(body: &str) -> Result<(), String> {
    let value: Value = serde_json::from_str(body).map_err(|err| format!("not JSON: {err}"))?;
    let servers = value["mcpServers"]
        .as_object()
        .ok_or("no `mcpServers` object")?;
    check_mcp_servers(servers.values().map(|server| {
        let args = server["args"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        (server["command"].as_str(), args)
    }))
}

fn check_mcp_transcript(body: &str) -> Result<(), String> {
    // Requests not answered yet: id (as JSON text) → the request.
    let mut waiting: BTreeMap<String, Value> = BTreeMap::new();
    for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (from_client, json) = if let Some(rest) = line.strip_prefix("→ ") {
            (true, rest)
        } else if let Some(rest) = line.strip_prefix("← ") {
            (false, rest)
        } else {
            return Err(format!(
                "a line that starts with neither `→ ` nor `← `: {line}"
            ));
        };
        let json = json.replace(",…}", "}").replace(",…]", "]");
        let message: Value =
            serde_json::from_str(&json).map_err(|err| format!("not JSON ({err}): {line}"))?;
        if message["jsonrpc"] != "2.0" {
            return Err(format!("not JSON-RPC 2.0: {line}"));
        }
        let id = message.get("id").map(Value::to_string);
        if from_client {
            let method = message["method"]
                .as_str()
                .ok_or("a message without `method`")?;
            if method == "tools/call" {
                let params = &message["params"];
                check_tool_args(
                    params["name"].as_str().unwrap_or_default(),
                    &params["arguments"],
                )?;
            }
            if let Some(id) = id {
                waiting.insert(id, message);
            }
            continue;
        }
        let id = id.ok_or_else(|| format!("an answer without an id: {line}"))?;
        let request = waiting
            .remove(&id)
            .ok_or_else(|| format!("an answer to no waiting request: {line}"))?;
        let result = &message["result"];
        if result.is_null() == message["error"].is_null() {
            return Err(format!(
                "an answer needs one of `result` and `error`: {line}"
            ));
        }
        let method = request["method"].as_str();
        if method == Some("initialize") && result["serverInfo"]["name"] != "agentsh" {
            return Err(format!("the server is not named `agentsh`: {line}"));
        }
        if method == Some("tools/call") {
            let text = &result["content"][0]["text"];
            if !text.is_string() || result["isError"].as_bool().is_none() {
                return Err(format!(
                    "a tool result needs its text and `isError`: {line}"
                ));
            }
            if !result["structuredContent"].is_null()
                && result["structuredContent"]["text"] != *text
            {
                return Err(format!("the structured text is not the text: {line}"));
            }
        }
    }
    Ok(())
}

fn check_block(kind: Kind, body: &str, packages: &BTreeSet<String>) -> Result<(), String> {
    match kind {
        Kind::Shell => check_shell(body, packages),
        Kind::Config => check_config(body),
        Kind::McpClientToml => check_mcp_client_toml(body),
        Kind::McpClientJson => check_mcp_client_json(body),
        Kind::McpTranscript => check_mcp_transcript(body),
        Kind::Text => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Links.

/// The anchor GitHub gives a heading: lower case, punctuation but `-` and `_` dropped, spaces
/// made `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of `markdown`'s headings (outside code blocks).
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut fence: Option<String> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|&c| c == '`').count();
        match &fence {
            Some(open) if ticks >= open.len() && trimmed.trim_matches('`').is_empty() => {
                fence = None;
            }
            None if ticks >= 3 => fence = Some("`".repeat(ticks)),
            None if line.starts_with('#') => {
                found.insert(slug(line.trim_start_matches('#')));
            }
            Some(_) | None => {}
        }
    }
    found
}

/// The targets of the inline links `[text](target)` of `markdown`, outside code blocks.
fn links(markdown: &str) -> Vec<String> {
    let mut found = Vec::new();
    for block_free in markdown_outside_blocks(markdown) {
        let mut rest = block_free.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                found.push(rest[..end].to_owned());
                rest = &rest[end..];
            }
        }
    }
    found
}

fn markdown_outside_blocks(markdown: &str) -> Vec<String> {
    let inside: Vec<(usize, usize)> = blocks(markdown)
        .iter()
        .map(|b| (b.line, b.line + b.body.lines().count() + 1))
        .collect();
    markdown
        .lines()
        .enumerate()
        .filter(|(index, _)| !inside.iter().any(|&(a, b)| (a..=b).contains(&(index + 1))))
        .map(|(_, line)| line.to_owned())
        .collect()
}

/// A relative link of the page at `page`: its file exists, and so does its heading.
fn check_link(page: &Path, target: &str) -> Result<(), String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return Ok(());
    }
    let (file, anchor) = match target.split_once('#') {
        Some((file, anchor)) => (file, Some(anchor)),
        None => (target, None),
    };
    let path = if file.is_empty() {
        page.to_owned()
    } else {
        page.parent().expect("a page's directory").join(file)
    };
    if !path.exists() {
        return Err(format!("`{target}`: no such file"));
    }
    if let Some(anchor) = anchor {
        if !path.is_file() || path.extension().is_none_or(|e| e != "md") {
            return Err(format!(
                "`{target}`: an anchor into what is no Markdown page"
            ));
        }
        if !anchors(&read(&path)).contains(anchor) {
            return Err(format!("`{target}`: {} has no such heading", shown(&path)));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The tests.

#[test]
fn every_example_of_the_guide_is_read_by_the_code_it_describes() {
    let packages = workspace_packages();
    let mut failures = Vec::new();
    let mut count = 0;
    for page in guide_pages() {
        for block in blocks(&read(&page)) {
            let at = format!("{}:{}", shown(&page), block.line);
            let Some(kind) = Kind::from_info(&block.info) else {
                failures.push(format!(
                    "{at}: fence info string `{}` names no kind (see the top of guide_docs.rs)",
                    block.info
                ));
                continue;
            };
            count += 1;
            if let Err(why) = check_block(kind, &block.body, &packages) {
                failures.push(format!("{at} ({}): {why}", block.info));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "guide examples that are not true:\n{}",
        failures.join("\n")
    );
    assert!(
        count > 20,
        "only {count} example blocks found: are the pages there?"
    );
}

#[test]
fn every_relative_link_leads_to_a_page_and_a_heading() {
    let mut pages = vec![root().join("README.md")];
    pages.extend(doc_pages());
    let mut failures = Vec::new();
    for page in pages {
        for target in links(&read(&page)) {
            if let Err(why) = check_link(&page, &target) {
                failures.push(format!("{}: {why}", shown(&page)));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "broken links:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_index_links_every_page_of_the_guide() {
    let index = read(&root().join("docs/README.md"));
    let linked: BTreeSet<String> = links(&index)
        .into_iter()
        .map(|t| t.split('#').next().unwrap_or_default().to_owned())
        .collect();
    let missing: Vec<String> = doc_pages()
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
        .filter(|name| name != "README.md" && !linked.contains(name))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/README.md does not link {missing:?}"
    );
}

#[test]
fn the_word_splitter_finds_the_commands_of_a_script() {
    let script = "coproc A { cargo run -q -p agentsh -- rpc; }\n\
                  X=1 agentsh exec -- 'ls | head' # a comment\n\
                  source <(agentsh completions bash)\n\
                  { printf '%s\\n' \\\n  '{\"id\":\"1\"}'\n  sleep 1; } | agentsh rpc > out.txt\n";
    let words = |line: &str| line.split(' ').map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        shell::simple_commands(script),
        [
            words("cargo run -q -p agentsh -- rpc"),
            vec![
                "agentsh".into(),
                "exec".into(),
                "--".into(),
                "ls | head".into()
            ],
            words("source"),
            words("agentsh completions bash"),
            vec!["printf".into(), "%s\\n".into(), "{\"id\":\"1\"}".into()],
            words("sleep 1"),
            words("agentsh rpc"),
        ]
    );
}

#[test]
fn a_wrong_example_is_caught() {
    let packages = workspace_packages();
    for (kind, body) in [
        (Kind::Shell, "agentsh exec --no-such-flag -- true\n"),
        (Kind::Shell, "cargo run -p agentsh -- frobnicate\n"),
        (Kind::Shell, "cargo install --path crates/nowhere\n"),
        (Kind::Shell, "cargo xtask deploy\n"),
        (Kind::Shell, "man agentsh\n"),
        (Kind::Shell, "send '{\"id\":\"1\",\"type\":\"shutdown\"}'\n"),
        (
            Kind::Shell,
            "send '{\"id\":\"1\",\"type\":\"tool_call\",\"toolCallId\":\"a\",\"name\":\"bash\",\"arguments\":{}}'\n",
        ),
        (Kind::Config, "[sandbox]\nmode = \"sideways\"\n"),
        (
            Kind::Config,
            "[[policy.rules]]\nprefix = [\"git\", \"push\"]\ndecision = \"ask\"\nmatch = [\"git status\"]\n",
        ),
        (
            Kind::McpClientToml,
            "[mcp_servers.a]\ncommand = \"agentsh\"\nargs = [\"serve\"]\n",
        ),
        (
            Kind::McpClientJson,
            "{\"mcpServers\":{\"a\":{\"command\":\"bash\",\"args\":[]}}}",
        ),
        (
            Kind::McpTranscript,
            "← {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n",
        ),
    ] {
        assert!(
            check_block(kind, body, &packages).is_err(),
            "{kind:?} passed: {body}"
        );
    }
}

#[test]
fn slugs_are_githubs() {
    assert_eq!(
        slug(" `tool_call`: a model's tool call"),
        "tool_call-a-models-tool-call"
    );
    assert_eq!(slug(" `output.max_bytes`"), "outputmax_bytes");
    assert_eq!(
        slug(" The sandbox and the network"),
        "the-sandbox-and-the-network"
    );
}
