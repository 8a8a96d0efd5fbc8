//! The crate graph's layering, checked on the manifests: the surfaces (RPC, MCP, the
//! interactive mode) are peers over the session seam, none depending on another or on the
//! far-side client; the far-side client does not build the executor; the seam and the wire
//! build neither side. What a crate "contains" is its normal dependencies, followed
//! through every workspace crate (what `cargo tree -e normal` shows of the workspace).

use std::collections::{BTreeMap, BTreeSet};

use crate::manifest::Manifest;

/// `(crate, crates it must not contain)`, by package name.
pub const RULES: &[(&str, &[&str])] = &[
    // The surfaces: peers over the seam.
    (
        "agentsh-rpc",
        &[
            "agentsh-remote",
            "agentsh-tui",
            "agentsh-mcp",
            "agentsh-agent-session",
            "agentsh-shell-executor",
            "agentsh-pty-runtime",
        ],
    ),
    (
        "agentsh-tui",
        &["agentsh-remote", "agentsh-rpc", "agentsh-mcp"],
    ),
    (
        "agentsh-mcp",
        &[
            "agentsh-remote",
            "agentsh-rpc",
            "agentsh-tui",
            "agentsh-agent-session",
            "agentsh-shell-executor",
            "agentsh-pty-runtime",
        ],
    ),
    // The far side's client runs no command here.
    (
        "agentsh-remote",
        &[
            "agentsh-shell-executor",
            "agentsh-pty-runtime",
            "agentsh-process",
            "agentsh-agent-session",
        ],
    ),
    // The seam knows neither side and runs nothing: a far-only host builds no executor.
    (
        "agentsh-seam",
        &[
            "agentsh-shell-executor",
            "agentsh-pty-runtime",
            "agentsh-process",
            "agentsh-agent-session",
            "agentsh-remote",
        ],
    ),
    // JSON lines are bytes in, lines and JSON out: no session, executor or process.
    (
        "agentsh-jsonl",
        &[
            "agentsh-shell-executor",
            "agentsh-pty-runtime",
            "agentsh-process",
            "agentsh-agent-session",
            "agentsh-seam",
            "agentsh-remote",
        ],
    ),
    // The process's own signals: what any server can take, so it knows no session, executor
    // or process tree.
    (
        "agentsh-signals",
        &[
            "agentsh-shell-executor",
            "agentsh-pty-runtime",
            "agentsh-process",
            "agentsh-agent-session",
            "agentsh-seam",
            "agentsh-remote",
        ],
    ),
    // The rc snapshot spawns through `process`: it knows no executor and no session.
    (
        "agentsh-rc-snapshot",
        &[
            "agentsh-shell-executor",
            "agentsh-pty-runtime",
            "agentsh-agent-session",
            "agentsh-seam",
        ],
    ),
    // The policy is pure: it judges text and runs nothing.
    (
        "agentsh-bash-policy",
        &[
            "agentsh-shell-executor",
            "agentsh-pty-runtime",
            "agentsh-process",
            "agentsh-output-sink",
            "agentsh-artifact-store",
            "agentsh-agent-session",
            "agentsh-seam",
        ],
    ),
    // Shaping is pure: text in, text out; it reads files and runs nothing.
    (
        "agentsh-shape",
        &[
            "agentsh-shell-executor",
            "agentsh-pty-runtime",
            "agentsh-process",
            "agentsh-output-sink",
            "agentsh-artifact-store",
            "agentsh-agent-session",
            "agentsh-seam",
        ],
    ),
    // The network proxy serves listeners it is given: it knows no executor and no session.
    (
        "agentsh-net-proxy",
        &[
            "agentsh-shell-executor",
            "agentsh-pty-runtime",
            "agentsh-process",
            "agentsh-agent-session",
            "agentsh-seam",
        ],
    ),
    // The configuration reads files and runs nothing: no executor, no session, no surface
    // (it has `process` only for the sandbox mode the spawner enforces).
    (
        "agentsh-config",
        &[
            "agentsh-shell-executor",
            "agentsh-pty-runtime",
            "agentsh-agent-session",
            "agentsh-sandbox",
            "agentsh-jobs",
            "agentsh-seam",
            "agentsh-remote",
            "agentsh-rpc",
            "agentsh-tui",
            "agentsh-mcp",
        ],
    ),
    // Jobs meet the session through a trait they define: no session, no far side, no
    // surface.
    (
        "agentsh-jobs",
        &[
            "agentsh-agent-session",
            "agentsh-remote",
            "agentsh-rpc",
            "agentsh-tui",
            "agentsh-mcp",
        ],
    ),
    // The sandbox's preparation builds policies for the spawner: it runs no shell and knows no
    // session or surface.
    (
        "agentsh-sandbox",
        &[
            "agentsh-shell-executor",
            "agentsh-pty-runtime",
            "agentsh-agent-session",
            "agentsh-jobs",
            "agentsh-seam",
            "agentsh-remote",
            "agentsh-rpc",
            "agentsh-tui",
            "agentsh-mcp",
        ],
    ),
    // The spawner enforces the sandbox it is given: it does not prepare one.
    (
        "agentsh-process",
        &["agentsh-config", "agentsh-sandbox", "agentsh-agent-session"],
    ),
    // The local session knows no far side and no surface.
    (
        "agentsh-agent-session",
        &[
            "agentsh-remote",
            "agentsh-rpc",
            "agentsh-tui",
            "agentsh-mcp",
        ],
    ),
];

/// Every workspace crate `name` contains through normal dependencies (itself excluded).
pub fn contained(graph: &BTreeMap<String, Vec<String>>, name: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![name.to_owned()];
    while let Some(next) = stack.pop() {
        for dep in graph.get(&next).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
    seen
}

/// The workspace crates' normal dependencies on each other, by package name.
pub fn graph(manifest: &Manifest) -> BTreeMap<String, Vec<String>> {
    let names: BTreeSet<String> = manifest.crates().into_iter().map(|c| c.1).collect();
    manifest
        .crates()
        .into_iter()
        .map(|(dir, name)| {
            let deps = manifest
                .normal_dependencies(&dir)
                .into_iter()
                .filter(|dep| names.contains(dep))
                .collect();
            (name, deps)
        })
        .collect()
}

/// What breaks a rule: `crate contains forbidden (through path)`.
pub fn violations(graph: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let mut found = Vec::new();
    for (name, forbidden) in RULES {
        let contained = contained(graph, name);
        for bad in *forbidden {
            if contained.contains(*bad) {
                found.push(format!("{name} contains {bad}"));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace_root;

    #[test]
    fn the_surfaces_are_peers_over_the_seam() {
        let manifest = Manifest::load(&workspace_root()).expect("manifests parse");
        let graph = graph(&manifest);
        for (name, _) in RULES {
            assert!(
                graph.contains_key(*name),
                "{name} is a crate of the workspace"
            );
        }
        let found = violations(&graph);
        assert!(found.is_empty(), "layering broken: {found:?}");
    }

    #[test]
    fn containment_follows_every_path() {
        let graph: BTreeMap<String, Vec<String>> = [
            ("a", vec!["b"]),
            ("b", vec!["c"]),
            ("c", vec![]),
            ("d", vec!["a", "c"]),
        ]
        .into_iter()
        .map(|(name, deps)| {
            (
                name.to_owned(),
                deps.into_iter().map(str::to_owned).collect(),
            )
        })
        .collect();
        assert_eq!(
            contained(&graph, "a").into_iter().collect::<Vec<_>>(),
            ["b", "c"]
        );
        assert_eq!(contained(&graph, "c").len(), 0);
        assert_eq!(contained(&graph, "d").len(), 3);
    }
}
