//! Golden vectors from `fixtures/sink/vectors.toml`, expected outputs checked by hand.

use agentsh_output_sink::sanitize;

use crate::util::{check_summary, run_sink, sanitizer_text, unescape};

const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fixtures/sink/vectors.toml"
);

struct Vector {
    name: String,
    input: Vec<u8>,
    output: String,
    lossy: bool,
}

fn vectors() -> Vec<Vector> {
    let text = std::fs::read_to_string(VECTORS).expect("read fixtures/sink/vectors.toml");
    let table: toml::Table = text.parse().expect("vectors.toml is TOML");
    let list = table["vector"].as_array().expect("[[vector]] entries");
    list.iter()
        .map(|entry| {
            let field = |key: &str| entry[key].as_str().unwrap_or_else(|| panic!("{key}"));
            let output = unescape(field("output"));
            Vector {
                name: field("name").to_owned(),
                input: unescape(field("input")),
                output: String::from_utf8(output).expect("outputs are UTF-8"),
                lossy: entry.get("lossy").and_then(toml::Value::as_bool) == Some(true),
            }
        })
        .collect()
}

#[test]
fn golden_vectors() {
    let vectors = vectors();
    assert!(
        vectors.len() >= 25,
        "vectors went missing: {}",
        vectors.len()
    );
    for vector in &vectors {
        let name = &vector.name;
        let whole: Vec<&[u8]> = vec![&vector.input];
        let bytewise: Vec<&[u8]> = vector.input.chunks(1).collect();
        assert_eq!(sanitize(&vector.input), vector.output, "{name}: reference");
        assert_eq!(sanitizer_text(&whole), vector.output, "{name}: one chunk");
        assert_eq!(
            sanitizer_text(&bytewise),
            vector.output,
            "{name}: byte by byte"
        );
        for max_bytes in [0, 16, 100_000] {
            for (how, chunks) in [("one chunk", &whole), ("byte by byte", &bytewise)] {
                let (summary, record, _) = run_sink(chunks, max_bytes, None);
                let what = format!("{name}: sink, max {max_bytes}, {how}");
                check_summary(&summary, &record, &vector.output, max_bytes, &what);
            }
        }
        if vector.lossy {
            assert_eq!(
                String::from_utf8_lossy(&vector.input),
                vector.output,
                "{name}: the hand-written expectation agrees with std"
            );
        }
    }
}

#[test]
fn golden_vector_names_are_unique() {
    let vectors = vectors();
    let mut names: Vec<&str> = vectors.iter().map(|v| v.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), vectors.len());
}
