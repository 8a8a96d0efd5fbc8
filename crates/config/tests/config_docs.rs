//! `docs/configuration.md` stays true: its keys are exactly the keys the loader accepts, each
//! says its type, default and effect, and each example is a file the loader takes.

use std::collections::BTreeSet;
use std::path::Path;

use agentsh_config::Settings;

fn doc() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/configuration.md");
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The key a `### `key`` heading documents, if the line is one.
fn heading_key(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("### ")?.trim();
    let key = inner.strip_prefix('`')?.strip_suffix('`')?;
    (!key.contains('`')).then_some(key)
}

/// Every documented key with the text of its section (up to the next heading).
fn documented(doc: &str) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = Vec::new();
    let mut current: Option<(String, String)> = None;
    let mut in_fence = false;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        if !in_fence && line.starts_with('#') {
            keys.extend(current.take());
            if let Some(key) = heading_key(line) {
                current = Some((key.to_owned(), String::new()));
            }
            continue;
        }
        if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    keys.extend(current);
    keys
}

/// The bodies of the fenced `toml` blocks of `text`.
fn toml_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match current.as_mut() {
            None if line.trim() == "```toml" => current = Some(String::new()),
            None => {}
            Some(_) if line.trim() == "```" => blocks.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    blocks
}

/// Whether `value` holds `key` (`bash.env`, `bash_interceptor.rules[].tool`: `[]` steps into
/// an array's first element).
fn sets(value: &toml::Value, key: &str) -> bool {
    let mut at = Some(value);
    for part in key.split('.') {
        let (name, element) = match part.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (part, false),
        };
        at = at.and_then(|v| v.get(name));
        if element {
            at = at.and_then(|v| v.get(0));
        }
    }
    at.is_some()
}

#[test]
fn documents_exactly_the_keys_the_loader_accepts() {
    let documented: Vec<String> = documented(&doc()).into_iter().map(|(k, _)| k).collect();
    let unique: BTreeSet<&str> = documented.iter().map(String::as_str).collect();
    assert_eq!(
        unique.len(),
        documented.len(),
        "a key is documented twice in docs/configuration.md"
    );
    let accepted = Settings::config_keys();
    let accepted: BTreeSet<&str> = accepted.iter().map(String::as_str).collect();
    let missing: Vec<&&str> = accepted.difference(&unique).collect();
    let unknown: Vec<&&str> = unique.difference(&accepted).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "docs/configuration.md and the loader disagree.\n  accepted but not documented: \
         {missing:?}\n  documented but not accepted: {unknown:?}"
    );
}

#[test]
fn every_key_says_type_default_and_effect_with_an_example_the_loader_takes() {
    let file = Path::new("/etc/agentsh/config.toml");
    for (key, body) in documented(&doc()) {
        for part in ["- Type: ", "- Default: ", "- What it changes: "] {
            assert!(body.contains(part), "{key}: no `{part}` line");
        }
        let examples = toml_blocks(&body);
        assert!(!examples.is_empty(), "{key}: no ```toml example");
        for example in examples {
            if let Err(err) = Settings::from_toml(&example, file, Some(Path::new("/home/ann"))) {
                panic!("{key}: the example is refused: {err}\n{example}");
            }
            let parsed = toml::Value::Table(example.parse().expect("the loader took it"));
            assert!(
                sets(&parsed, &key),
                "{key}: the example does not set it:\n{example}"
            );
        }
    }
}

#[test]
fn the_complete_policy_example_loads() {
    let doc = doc();
    let start = doc
        .find("A complete policy")
        .expect("the complete policy example");
    let example = toml_blocks(&doc[start..])
        .into_iter()
        .next()
        .expect("its ```toml block");
    let file = Path::new("/etc/agentsh/config.toml");
    let settings = Settings::from_toml(&example, file, Some(Path::new("/home/ann")))
        .unwrap_or_else(|err| panic!("the complete policy is refused: {err}\n{example}"));
    assert_eq!(settings.policy.rules.len(), 4);
    assert!(settings.policy.default.is_some() && settings.policy.unknown.is_some());
}

#[test]
fn the_default_secret_names_are_the_ones_in_the_code() {
    let (_, body) = documented(&doc())
        .into_iter()
        .find(|(key, _)| key == "secrets.env")
        .expect("secrets.env is documented");
    // The default list, from its `[` to its `]` (it may wrap).
    let default = body
        .split("- Default: `[")
        .nth(1)
        .and_then(|rest| rest.split("]`").next())
        .expect("a default list");
    let listed: Vec<String> = default
        .split(',')
        .map(|name| name.split_whitespace().collect::<String>().replace('"', ""))
        .collect();
    assert_eq!(listed, agentsh_config::DEFAULT_SECRET_ENV);
}
