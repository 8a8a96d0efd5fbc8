//! The keys a configuration file may hold, read off the loader's own types.
//!
//! The loader is serde with `deny_unknown_fields`, so the types it deserializes are the one
//! list of accepted keys. A [`Probe`] is a deserializer that walks those types without a file:
//! it steps into one field at a time and records what the type asks for at the end of the path
//! (a table with named fields, a table of free names, an array, or a plain value). Nothing here
//! keeps a second list that could drift from the loader.

use std::cell::RefCell;
use std::fmt;

use serde::Deserialize;
use serde::de::value::StrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::Settings;
use super::load::RawSettings;

impl Settings {
    /// Every key a configuration file accepts, as dotted paths, sorted: `bash.max_shells`,
    /// `remote.command`. A table of free names is one key (`bash.env`); an array of tables is
    /// a key (`bash_interceptor.rules`) and so is each field of its tables
    /// (`bash_interceptor.rules[].pattern`). Sections (`[bash]`) are not keys themselves.
    ///
    /// Read off the types the loader deserializes, so it is exactly what the loader accepts.
    ///
    /// ```
    /// let keys = agentsh_config::Settings::config_keys();
    /// assert!(keys.iter().any(|key| key == "bash.max_shells"));
    /// assert!(keys.iter().any(|key| key == "bash_interceptor.rules[].pattern"));
    /// ```
    pub fn config_keys() -> Vec<String> {
        let mut keys = Vec::new();
        collect(&mut Vec::new(), &mut keys);
        keys.sort();
        keys
    }
}

/// One step into the configuration's types: a field of a table, or the element of an array.
#[derive(Clone, Copy)]
enum Step {
    Field(&'static str),
    Element,
}

/// What the type at the end of a path asks the deserializer for.
#[derive(Clone, Copy)]
enum Shape {
    /// A table with these fields (a section, or the tables of an array).
    Table(&'static [&'static str]),
    /// A table whose keys are free names (`bash.env`).
    FreeTable,
    /// An array.
    Array,
    /// A plain value (string, number, boolean, or a name from a list).
    Value,
}

/// Adds the keys at and under `path` to `keys`.
fn collect(path: &mut Vec<Step>, keys: &mut Vec<String>) {
    match shape(path) {
        Shape::Table(fields) => {
            for &field in fields {
                path.push(Step::Field(field));
                collect(path, keys);
                path.pop();
            }
        }
        Shape::FreeTable | Shape::Value => keys.push(written(path)),
        Shape::Array => {
            keys.push(written(path));
            path.push(Step::Element);
            if let Shape::Table(_) = shape(path) {
                collect(path, keys);
            }
            path.pop();
        }
    }
}

/// How a path is written: `bash.env`, `bash_interceptor.rules[].pattern`.
fn written(path: &[Step]) -> String {
    let mut text = String::new();
    for step in path {
        match step {
            Step::Field(name) => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(name);
            }
            Step::Element => text.push_str("[]"),
        }
    }
    text
}

/// The shape of the type at `path` in the loader's types.
fn shape(path: &[Step]) -> Shape {
    let found = RefCell::new(None);
    // The probe always ends in an error (it has no values to give): only what it recorded
    // on the way counts.
    let _ = RawSettings::deserialize(Probe {
        path,
        found: &found,
    });
    found.into_inner().unwrap_or(Shape::Value)
}

/// Why a probe stopped: it has no value to give, or the types did not have the path.
#[derive(Debug)]
struct Stop(String);

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self(msg.to_string())
    }
}

/// A deserializer that follows `path` into the types and records the [`Shape`] found at its
/// end.
struct Probe<'a> {
    path: &'a [Step],
    found: &'a RefCell<Option<Shape>>,
}

impl Probe<'_> {
    /// Records `shape` at the end of the path; the walk stops here.
    fn record<T>(&self, shape: Shape) -> Result<T, Stop> {
        if self.path.is_empty() {
            *self.found.borrow_mut() = Some(shape);
            Err(Stop("the probe has no values".to_owned()))
        } else {
            Err(Stop("the path goes on into a value".to_owned()))
        }
    }
}

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Stop> {
        self.record(Shape::Value)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        match self.path.split_first() {
            None => self.record(Shape::Table(fields)),
            Some((Step::Field(field), rest)) => visitor.visit_map(OneField {
                field: Some(field),
                value: Probe {
                    path: rest,
                    found: self.found,
                },
            }),
            Some((Step::Element, _)) => Err(Stop("a table is not an array".to_owned())),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Stop> {
        self.record(Shape::FreeTable)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.path.split_first() {
            None => self.record(Shape::Array),
            Some((Step::Element, rest)) => visitor.visit_seq(OneElement {
                element: Some(Probe {
                    path: rest,
                    found: self.found,
                }),
            }),
            Some((Step::Field(_), _)) => Err(Stop("an array has no fields".to_owned())),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct tuple tuple_struct enum identifier ignored_any
    }
}

/// A table holding one field, whose value is probed further.
struct OneField<'a> {
    field: Option<&'static str>,
    value: Probe<'a>,
}

impl<'de> MapAccess<'de> for OneField<'_> {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Stop> {
        self.field
            .take()
            .map(|field| seed.deserialize(StrDeserializer::<Stop>::new(field)))
            .transpose()
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Stop> {
        seed.deserialize(Probe {
            path: self.value.path,
            found: self.value.found,
        })
    }
}

/// An array holding one element, which is probed further.
struct OneElement<'a> {
    element: Option<Probe<'a>>,
}

impl<'de> SeqAccess<'de> for OneElement<'_> {
    type Error = Stop;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Stop> {
        self.element
            .take()
            .map(|probe| seed.deserialize(probe))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::Settings;

    #[test]
    fn lists_plain_keys_free_tables_arrays_and_the_fields_of_arrays_of_tables() {
        let keys = Settings::config_keys();
        for key in [
            "bash.max_shells",
            "bash.env",
            "bash.virtual_terminal",
            "bash_interceptor.rules",
            "bash_interceptor.rules[].flags",
            "remote.command",
            "sandbox.writable",
            "ui.theme",
            "policy.default",
            "policy.rules",
            "policy.rules[].match",
            "policy.rules[].not_match",
            "audit.path",
        ] {
            assert!(keys.iter().any(|k| k == key), "{key} missing from {keys:?}");
        }
        for not_a_key in ["bash", "remote.command[]", "bash.env[]"] {
            assert!(!keys.iter().any(|k| k == not_a_key), "{not_a_key} listed");
        }
        let mut sorted = keys.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(keys, sorted, "sorted, each once");
    }

    #[test]
    fn every_listed_key_is_accepted_by_the_loader() {
        // A file that sets one key is refused only for its value, never as an unknown key.
        let refused = |text: &str| {
            Settings::from_toml(text, std::path::Path::new("k.toml"), None)
                .err()
                .map(|err| err.to_string())
                .unwrap_or_default()
        };
        assert!(refused("[bash]\nnope = 0\n").contains("unknown field"));
        for key in Settings::config_keys() {
            let (table, name) = key.rsplit_once('.').expect("a dotted key");
            let text = if let Some(array) = table.strip_suffix("[]") {
                format!("[[{array}]]\n{name} = 0\n")
            } else {
                format!("[{table}]\n{name} = 0\n")
            };
            let error = refused(&text);
            assert!(!error.contains("unknown field"), "{key}: {error}");
        }
    }
}
