//! A tidy check, run as an ordinary test: no library crate has a cycle between its files.
//!
//! File A depends on file B when A names an item that B defines, by a path that starts at
//! `crate::`, `super::` or `self::`: in a `use` declaration (`use crate::x::Y`,
//! `use super::{Y, z::W}`), in code (`crate::x::y()`, `super::Y`), or through a `use` binding of
//! such a path (`use crate::procfs;` then `procfs::read_stat()`). A path is followed through
//! `use` bindings and re-exports to the file that defines the item, so `use crate::Thing`
//! depends on the file that defines `Thing`, not on `lib.rs` that re-exports it; items of other
//! crates make no edge. A `use` of a whole module is no edge by itself (the items then named
//! through it are), a glob (`use super::*`) is one to the module's file, and a `mod`
//! declaration is structure, not a use. A module naming its own child modules' items by a
//! relative path (`child::item`, `use child::Item`) is not counted either.
//!
//! What is read: every library crate's (`crates/*/src/lib.rs`, `examples/*/src/lib.rs`) module
//! tree, following `mod` declarations from `lib.rs`. Comments (doc comments too: intra-doc
//! links are not uses), string and character literals, items under `#[cfg(test)]` (test
//! modules, test-only helpers) and `tests/` directories are left out.
//!
//! A cycle is reported with the paths that make each edge, and when more files are caught up
//! in it than the shortest cycle shows, every edge between them. The scanner is a tokenizer
//! plus a shallow item parser, not a Rust parser: it knows modules, `use` trees, the names items
//! define, attributes and paths, which is all the graph needs.

mod scan;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use scan::{Crate, ModPath, Reference};

impl Crate {
    /// Where `path`, written in `module`, leads: a module, or the module that defines the item
    /// it names. `None` for another crate's items (and what cannot be found).
    fn resolve(&self, module: &[String], path: &[String], depth: usize) -> Option<Target> {
        if depth > 16 || path.is_empty() {
            return None;
        }
        // `self`, `super` and relative paths start where they are written.
        let mut current: ModPath = if path[0] == "crate" {
            Vec::new()
        } else {
            module.to_vec()
        };
        let mut i = usize::from(matches!(path[0].as_str(), "crate" | "self"));
        while path.get(i).is_some_and(|seg| seg == "super") {
            current.pop();
            i += 1;
        }
        if i == path.len() {
            return Some(Target::Module(current));
        }
        'segments: while i < path.len() {
            let seg = &path[i];
            let mut child = current.clone();
            child.push(seg.clone());
            if self.modules.contains_key(&child) {
                current = child;
                i += 1;
                continue;
            }
            let here = self.modules.get(&current)?;
            if here.items.contains(seg) {
                return Some(Target::Item(current));
            }
            if let Some((_, import)) = here.imports.iter().find(|(name, _)| name == seg) {
                match self.resolve(&current, import, depth + 1)? {
                    Target::Item(owner) => return Some(Target::Item(owner)),
                    Target::Module(target) => {
                        current = target;
                        i += 1;
                        continue;
                    }
                }
            }
            for glob in &here.globs {
                if let Some(Target::Module(target)) = self.resolve(&current, glob, depth + 1)
                    && self.names(&target, seg)
                {
                    current = target;
                    continue 'segments;
                }
            }
            // A first segment that is no local name is another crate (or the prelude, or a
            // generic parameter); a later one that is not found is an item the scanner does
            // not see (made by a macro): its module is as close as it gets.
            return (i > 0 && matches!(path[0].as_str(), "crate" | "self" | "super"))
                .then_some(Target::Item(current));
        }
        Some(Target::Module(current))
    }

    /// Whether module `module` has `name`: a child module, an item or a `use` binding.
    fn names(&self, module: &[String], name: &str) -> bool {
        let mut child = module.to_vec();
        child.push(name.to_owned());
        self.modules.contains_key(&child)
            || self.modules.get(module).is_some_and(|m| {
                m.items.contains(name) || m.imports.iter().any(|(bound, _)| bound == name)
            })
    }

    /// The file-level dependency graph: file → file → the paths that make the edge.
    fn graph(&self) -> BTreeMap<usize, BTreeMap<usize, Vec<String>>> {
        let mut graph: BTreeMap<usize, BTreeMap<usize, Vec<String>>> = BTreeMap::new();
        for reference in &self.references {
            if !self.counts(reference) {
                continue;
            }
            let target = match self.resolve(&reference.module, &reference.path, 0) {
                Some(Target::Item(module)) => module,
                Some(Target::Module(module)) if reference.glob => module,
                _ => continue,
            };
            let Some(to) = self.modules.get(&target).map(|m| m.file) else {
                continue;
            };
            if to != reference.file {
                let via = graph
                    .entry(reference.file)
                    .or_default()
                    .entry(to)
                    .or_default();
                let shown = reference.path.join("::");
                if !via.contains(&shown) {
                    via.push(shown);
                }
            }
        }
        graph
    }

    /// Whether `reference` makes an edge: a path that starts at `crate`, `super` or `self`, or
    /// at a `use` binding of such a path. A module naming its own child modules' items
    /// (`child::item`, `use child::Item`) does not count.
    fn counts(&self, reference: &Reference) -> bool {
        let rooted = |path: &[String]| {
            path.first()
                .is_some_and(|first| matches!(first.as_str(), "crate" | "super" | "self"))
        };
        rooted(&reference.path)
            || self.modules.get(&reference.module).is_some_and(|module| {
                module
                    .imports
                    .iter()
                    .any(|(name, path)| Some(name) == reference.path.first() && rooted(path))
            })
    }

    /// Every cycle, one per strongly connected group of files: `a.rs → b.rs (path) → a.rs`.
    fn cycles(&self) -> Vec<String> {
        let graph = self.graph();
        let mut found = Vec::new();
        for group in strongly_connected(self.files.len(), &graph) {
            if group.len() < 2 {
                continue;
            }
            let cycle = shortest_cycle(group[0], &group, &graph);
            let mut text = self.files[cycle[0]].display().to_string();
            for pair in cycle.windows(2) {
                let via = &graph[&pair[0]][&pair[1]];
                let _ = write!(
                    text,
                    " → {} ({})",
                    self.files[pair[1]].display(),
                    via.join(", ")
                );
            }
            if group.len() > cycle.len() - 1 {
                // More files than one cycle shows: every edge between them.
                for &from in &group {
                    for (to, via) in &graph[&from] {
                        if group.contains(to) {
                            let _ = write!(
                                text,
                                "\n    {} → {} ({})",
                                self.files[from].display(),
                                self.files[*to].display(),
                                via.join(", ")
                            );
                        }
                    }
                }
            }
            found.push(text);
        }
        found.sort();
        found
    }
}

/// What a path leads to.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// A module (a `use` of a module, or a path that ends at one).
    Module(ModPath),
    /// An item defined in this module.
    Item(ModPath),
}

/// The strongly connected groups of `graph` (Tarjan's algorithm).
fn strongly_connected(
    nodes: usize,
    graph: &BTreeMap<usize, BTreeMap<usize, Vec<String>>>,
) -> Vec<Vec<usize>> {
    struct State<'a> {
        graph: &'a BTreeMap<usize, BTreeMap<usize, Vec<String>>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        groups: Vec<Vec<usize>>,
    }
    fn visit(state: &mut State<'_>, node: usize) {
        state.index[node] = Some(state.next);
        state.low[node] = state.next;
        state.next += 1;
        state.stack.push(node);
        state.on_stack[node] = true;
        let targets: Vec<usize> = state
            .graph
            .get(&node)
            .map(|edges| edges.keys().copied().collect())
            .unwrap_or_default();
        for to in targets {
            match state.index[to] {
                None => {
                    visit(state, to);
                    state.low[node] = state.low[node].min(state.low[to]);
                }
                Some(index) if state.on_stack[to] => {
                    state.low[node] = state.low[node].min(index);
                }
                Some(_) => {}
            }
        }
        if Some(state.low[node]) == state.index[node] {
            let mut group = Vec::new();
            while let Some(top) = state.stack.pop() {
                state.on_stack[top] = false;
                group.push(top);
                if top == node {
                    break;
                }
            }
            group.sort_unstable();
            state.groups.push(group);
        }
    }
    let mut state = State {
        graph,
        index: vec![None; nodes],
        low: vec![0; nodes],
        on_stack: vec![false; nodes],
        stack: Vec::new(),
        next: 0,
        groups: Vec::new(),
    };
    for node in 0..nodes {
        if state.index[node].is_none() {
            visit(&mut state, node);
        }
    }
    state.groups
}

/// The shortest cycle through `start` inside `group` (breadth first), `start` at both ends.
fn shortest_cycle(
    start: usize,
    group: &[usize],
    graph: &BTreeMap<usize, BTreeMap<usize, Vec<String>>>,
) -> Vec<usize> {
    let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &to in graph.get(&node).map(BTreeMap::keys).into_iter().flatten() {
            if !group.contains(&to) {
                continue;
            }
            if to == start {
                let mut cycle = vec![start, node];
                let mut at = node;
                while at != start {
                    at = came_from[&at];
                    cycle.push(at);
                }
                cycle.reverse();
                return cycle;
            }
            if let std::collections::btree_map::Entry::Vacant(entry) = came_from.entry(to) {
                entry.insert(node);
                queue.push_back(to);
            }
        }
    }
    vec![start, start]
}

/// The library crates of the workspace: `(name shown, crate directory)`.
fn library_crates(root: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for parent in ["crates", "examples"] {
        let Ok(entries) = std::fs::read_dir(root.join(parent)) else {
            continue;
        };
        for entry in entries.flatten() {
            let dir = entry.path();
            if dir.join("src/lib.rs").is_file() {
                found.push((
                    format!("{parent}/{}", entry.file_name().to_string_lossy()),
                    dir,
                ));
            }
        }
    }
    found.sort();
    found
}

/// Every file cycle of every library crate, as `crate: a.rs → b.rs (path) → a.rs`, and the
/// crates' reading errors.
pub fn workspace_cycles(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for (name, dir) in library_crates(root) {
        let read = |path: &Path| std::fs::read_to_string(dir.join(path)).ok();
        let krate = Crate::read(&read);
        for error in &krate.errors {
            found.push(format!("{name}: {error}"));
        }
        for cycle in krate.cycles() {
            found.push(format!("{name}: {cycle}"));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::Path;

    use super::scan::{Crate, Tok, tokenize};
    use super::workspace_cycles;
    use crate::workspace_root;

    fn krate(files: &[(&str, &str)]) -> Crate {
        let files: HashMap<&Path, String> = files
            .iter()
            .map(|(path, text)| (Path::new(*path), (*text).to_owned()))
            .collect();
        Crate::read(&|path: &Path| files.get(path).cloned())
    }

    #[test]
    fn no_library_crate_has_a_file_cycle() {
        let cycles = workspace_cycles(&workspace_root());
        assert!(
            cycles.is_empty(),
            "file cycles (move the shared items down into a module both can use):\n  {}",
            cycles.join("\n  ")
        );
    }

    #[test]
    fn literals_and_comments_are_not_paths() {
        let toks = tokenize(
            "// crate::a\n/* crate::b /* nested */ */ \"crate::c\" r#\"crate::d\"# 'x' '\\'' b'y' \
             fn f<'a>(x: &'a str) { crate::e::F }",
        );
        let words: Vec<&str> = toks
            .iter()
            .filter_map(|t| match t {
                Tok::Ident(w) => Some(w.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(words, ["fn", "f", "x", "str", "crate", "e", "F"]);
    }

    #[test]
    fn a_cycle_through_a_use_and_a_code_path_is_found() {
        let found = krate(&[
            ("src/lib.rs", "mod a;\nmod b;\npub use a::A;\n"),
            ("src/a.rs", "use crate::b::B;\npub struct A(B);\n"),
            ("src/b.rs", "pub struct B;\nfn f() { crate::a::A(B); }\n"),
        ])
        .cycles();
        assert_eq!(
            found,
            ["src/a.rs → src/b.rs (crate::b::B) → src/a.rs (crate::a::A)"]
        );
    }

    #[test]
    fn re_exports_lead_to_the_defining_file() {
        // `crate::A` is `a.rs`'s item, re-exported by lib.rs: no cycle with lib.rs.
        let found = krate(&[
            (
                "src/lib.rs",
                "mod a;\nmod b;\npub use a::A;\npub use b::B;\n",
            ),
            ("src/a.rs", "pub struct A;\n"),
            ("src/b.rs", "use crate::A;\npub struct B(A);\n"),
        ])
        .cycles();
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn super_paths_nested_modules_and_bindings_resolve() {
        let found = krate(&[
            ("src/lib.rs", "mod jobs;\n"),
            (
                "src/jobs/mod.rs",
                "mod log;\nmod tools;\nuse self::log::Log;\npub struct Job(Log);\n",
            ),
            ("src/jobs/log.rs", "pub struct Log;\n"),
            (
                "src/jobs/tools.rs",
                "use super::{self as jobs};\nfn f() -> jobs::Job { jobs::Job::new() }\n",
            ),
        ]);
        let graph = krate_graph(&found);
        assert_eq!(
            graph,
            [
                ("src/jobs/mod.rs", "src/jobs/log.rs"),
                ("src/jobs/tools.rs", "src/jobs/mod.rs")
            ]
        );
    }

    #[test]
    fn a_parent_naming_its_children_by_relative_paths_is_no_edge() {
        // Only `self::`, `super::` and `crate::` paths count: `child::f` and `use child::F` in
        // the parent do not, `self::child::G` does.
        let found = krate(&[
            ("src/lib.rs", "mod p;\n"),
            (
                "src/p.rs",
                "mod child;\nuse child::F;\npub struct P;\nfn f() { child::f(); F; }\n",
            ),
            (
                "src/p/child.rs",
                "use super::P;\npub struct F;\npub struct G;\npub fn f() {}\n",
            ),
        ]);
        assert_eq!(krate_graph(&found), [("src/p/child.rs", "src/p.rs")]);
        let found = krate(&[
            ("src/lib.rs", "mod p;\n"),
            (
                "src/p.rs",
                "mod child;\nuse self::child::G;\npub struct P;\n",
            ),
            ("src/p/child.rs", "use super::P;\npub struct G;\n"),
        ]);
        assert_eq!(
            found.cycles(),
            ["src/p.rs → src/p/child.rs (self::child::G) → src/p.rs (super::P)"]
        );
    }

    #[test]
    fn test_only_items_are_left_out() {
        let found = krate(&[
            ("src/lib.rs", "mod a;\nmod b;\n"),
            (
                "src/a.rs",
                "pub struct A;\n#[cfg(test)]\nuse crate::b::B;\n",
            ),
            (
                "src/b.rs",
                "pub struct B;\n#[cfg(test)]\nmod tests { use crate::a::A; }\n\
                 impl B { #[cfg(test)] fn t() -> crate::a::A { crate::a::A } }\n",
            ),
        ])
        .cycles();
        assert!(found.is_empty(), "{found:?}");
    }

    fn krate_graph(krate: &Crate) -> Vec<(&str, &str)> {
        let mut edges = Vec::new();
        for (from, tos) in krate.graph() {
            for to in tos.keys() {
                edges.push((
                    krate.files[from].to_str().unwrap_or(""),
                    krate.files[*to].to_str().unwrap_or(""),
                ));
            }
        }
        edges
    }
}
