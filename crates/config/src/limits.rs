//! `[limits]`: the resources one command tree (a foreground call's command with everything it
//! starts, or a job) may use, as written and checked, and resolved to numbers for a session.
//!
//! A memory limit may be a percent of the memory agentsh may use, which the session finds
//! (this crate reads files and runs nothing, so it is given the number:
//! [`LimitSettings::resolve`]).

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use agentsh_protocol::ResourceLimits;
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use super::key_path::{Invalid, invalid};

/// Default of `limits.memory`: half of the memory agentsh may use.
pub const DEFAULT_LIMITS_MEMORY_PERCENT: f64 = 50.0;
/// Default of `limits.processes`: tasks of one command tree at once.
pub const DEFAULT_LIMITS_PROCESSES: u64 = 4096;

/// `[limits]`: what one command tree may use. The limits bound accidents and runaway programs
/// (a command that eats the memory, forks without end or spins for hours); they are not a
/// security boundary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimitSettings {
    /// `memory`: the memory the tree may hold at once. Default 50 % of the memory agentsh may
    /// use.
    pub memory: MemoryLimit,
    /// `processes`: the tasks (processes and threads) the tree may have at once; `None`
    /// (written `"off"`): no limit. Default 4096.
    pub processes: Option<u64>,
    /// `cpu_time`: the CPU time (user and system) one call or job may use, whole seconds;
    /// `None` (written `"off"`, the default): no limit.
    pub cpu_time: Option<Duration>,
    /// `tmp_size`: bytes of the sandbox's private temporary directory, made a tmpfs of that
    /// size; `None` (written `"off"`, the default): a directory on agentsh's own `$TMPDIR`.
    /// Needs the sandbox.
    pub tmp_size: Option<u64>,
}

impl Default for LimitSettings {
    fn default() -> Self {
        Self {
            memory: MemoryLimit::Percent(DEFAULT_LIMITS_MEMORY_PERCENT),
            processes: Some(DEFAULT_LIMITS_PROCESSES),
            cpu_time: None,
            tmp_size: None,
        }
    }
}

/// `limits.memory`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemoryLimit {
    /// `"50%"`: this percent (more than 0, at most 100) of the memory agentsh may use.
    Percent(f64),
    /// `"4GiB"`, or an integer: this many bytes.
    Bytes(u64),
    /// `"off"`: no limit.
    Off,
}

impl MemoryLimit {
    /// The limit in bytes, given the memory agentsh may use (`None`: not known, when a percent
    /// gives no limit). A percent rounds down, to 1 byte at the least.
    pub fn bytes(&self, available_memory: Option<u64>) -> Option<u64> {
        match *self {
            Self::Bytes(bytes) => Some(bytes),
            Self::Off => None,
            Self::Percent(percent) => {
                let available = available_memory?;
                // `as` saturates; a percent is at most 100, so the product is at most
                // `available`.
                let bytes = (available as f64 * percent / 100.0) as u64;
                Some(bytes.clamp(1, available.max(1)))
            }
        }
    }
}

impl LimitSettings {
    /// The limits a command tree runs under, given the memory agentsh may use (the smaller of
    /// the machine's memory and the lowest memory limit of agentsh's own cgroups, as
    /// [`agentsh_process::memory_agentsh_may_use`] finds it; `None` when it is not known, and
    /// then a percent gives no memory limit). `tmp_size` is the
    /// sandbox's, not a tree's, and is not among them.
    pub fn resolve(&self, available_memory: Option<u64>) -> ResourceLimits {
        ResourceLimits {
            memory: self.memory.bytes(available_memory),
            processes: self.processes,
            cpu_time: self.cpu_time,
        }
    }
}

/// What a text is, read as a size: a number (decimals allowed: `"1.5GiB"`), an optional space
/// and an optional unit, case-insensitive: `B`, `K`/`KB`/`KiB`, `M`/`MB`/`MiB`, `G`/`GB`/`GiB`,
/// `T`/`TB`/`TiB`. Every unit is binary (1024-based): `"1KB"` is 1024 bytes, like `"1KiB"`. A
/// fraction of a byte is rounded down.
#[derive(Debug, PartialEq, Eq)]
enum Size {
    /// This many bytes.
    Bytes(u64),
    /// Not a size.
    Unreadable,
    /// More than `u64::MAX` bytes.
    TooLarge,
}

impl Size {
    /// Reads `text` as a size.
    fn of(text: &str) -> Self {
        let text = text.trim();
        let number_end = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(number_end);
        let Some((whole, fraction)) = decimal(number) else {
            return Self::Unreadable;
        };
        let shift = match unit.trim_start().to_ascii_lowercase().as_str() {
            "" | "b" => 0,
            "k" | "kb" | "kib" => 10,
            "m" | "mb" | "mib" => 20,
            "g" | "gb" | "gib" => 30,
            "t" | "tb" | "tib" => 40,
            _ => return Self::Unreadable,
        };
        // Exact in u128: at most 20 whole digits (u64::MAX has 20) and 24 fraction digits (the
        // rest cannot change a whole byte), times at most 2^40.
        let whole = whole.trim_start_matches('0');
        if whole.len() > 20 {
            return Self::TooLarge;
        }
        let fraction = &fraction[..fraction.len().min(24)];
        let value = |digits: &str| digits.parse::<u128>().unwrap_or(0);
        let scale = 10u128.pow(u32::try_from(fraction.len()).unwrap_or(0));
        let bytes = (value(whole) << shift) + ((value(fraction) << shift) / scale);
        u64::try_from(bytes).map_or(Self::TooLarge, Self::Bytes)
    }
}

/// `digits[.digits]`: the whole and the fraction digits (the fraction empty without a point).
fn decimal(number: &str) -> Option<(&str, &str)> {
    let (whole, fraction) = match number.split_once('.') {
        Some((whole, fraction)) if !fraction.is_empty() => (whole, fraction),
        Some(_) => return None,
        None => (number, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    (!whole.is_empty() && digits(whole) && digits(fraction)).then_some((whole, fraction))
}

/// What a `[limits]` key may be, for its errors.
trait Expecting {
    /// As a type error says it: `a size ("4GiB") or "off"`.
    const WHAT: &'static str;
}

/// `limits.memory`.
struct MemoryKey;
impl Expecting for MemoryKey {
    const WHAT: &'static str = r#"a size ("4GiB", "512MiB"), a percent ("50%") or "off""#;
}

/// `limits.tmp_size`.
struct SizeKey;
impl Expecting for SizeKey {
    const WHAT: &'static str = r#"a size ("4GiB", "512MiB") or "off""#;
}

/// `limits.processes`.
struct TasksKey;
impl Expecting for TasksKey {
    const WHAT: &'static str = r#"a number of tasks or "off""#;
}

/// `limits.cpu_time`.
struct SecondsKey;
impl Expecting for SecondsKey {
    const WHAT: &'static str = r#"a number of seconds or "off""#;
}

/// A `[limits]` value as written: an integer (read wide, so that a bad one is checked with a
/// reason rather than refused as a type) or a string. `K` names what the key may be.
struct Written<K>(Value, PhantomData<K>);

/// The value of a [`Written`].
enum Value {
    Integer(i128),
    Text(String),
}

impl<'de, K: Expecting> Deserialize<'de> for Written<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct WrittenVisitor<K>(PhantomData<K>);
        impl<K: Expecting> Visitor<'_> for WrittenVisitor<K> {
            type Value = Written<K>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(K::WHAT)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Written<K>, E> {
                Ok(Written(Value::Integer(v.into()), PhantomData))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Written<K>, E> {
                Ok(Written(Value::Integer(v.into()), PhantomData))
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<Written<K>, E> {
                Ok(Written(Value::Integer(v), PhantomData))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<Written<K>, E> {
                let v = i128::try_from(v).unwrap_or(i128::MAX);
                Ok(Written(Value::Integer(v), PhantomData))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Written<K>, E> {
                Ok(Written(Value::Text(v.to_owned()), PhantomData))
            }
        }
        deserializer.deserialize_any(WrittenVisitor(PhantomData))
    }
}

impl<K> Written<K> {
    /// `"off"`: `None`; else the value.
    fn unless_off(self) -> Option<Value> {
        match self.0 {
            Value::Text(text) if text == "off" => None,
            value => Some(value),
        }
    }
}

/// `[limits]` as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default, expecting = "a table")]
pub(super) struct RawLimits {
    memory: Option<Written<MemoryKey>>,
    processes: Option<Written<TasksKey>>,
    cpu_time: Option<Written<SecondsKey>>,
    tmp_size: Option<Written<SizeKey>>,
}

impl RawLimits {
    /// The settings these mean, each key checked on its own (that `tmp_size` needs the sandbox
    /// is [`check_tmp_size`]'s, on the settings as a whole).
    pub(super) fn check(self) -> Result<LimitSettings, Invalid> {
        let defaults = LimitSettings::default();
        Ok(LimitSettings {
            memory: match self.memory {
                None => defaults.memory,
                Some(written) => match written.unless_off() {
                    None => MemoryLimit::Off,
                    Some(value) => memory(value)?,
                },
            },
            processes: match self.processes {
                None => defaults.processes,
                Some(written) => written
                    .unless_off()
                    .map(|value| count::<TasksKey>("limits.processes", value))
                    .transpose()?,
            },
            cpu_time: match self.cpu_time {
                None => defaults.cpu_time,
                Some(written) => written
                    .unless_off()
                    .map(|value| count::<SecondsKey>("limits.cpu_time", value))
                    .transpose()?
                    .map(Duration::from_secs),
            },
            tmp_size: match self.tmp_size {
                None => defaults.tmp_size,
                Some(written) => written
                    .unless_off()
                    .map(|value| bytes::<SizeKey>("limits.tmp_size", value))
                    .transpose()?,
            },
        })
    }
}

/// `limits.memory` other than `"off"`: a percent, or a size.
fn memory(value: Value) -> Result<MemoryLimit, Invalid> {
    const KEY: &str = "limits.memory";
    let Value::Text(text) = &value else {
        return bytes::<MemoryKey>(KEY, value).map(MemoryLimit::Bytes);
    };
    let Some(number) = text.trim().strip_suffix('%') else {
        return bytes::<MemoryKey>(KEY, value).map(MemoryLimit::Bytes);
    };
    let number = number.trim_end();
    let Some(percent) = decimal(number).and_then(|_| number.parse::<f64>().ok()) else {
        return Err(not_a::<MemoryKey>(KEY, &format!("{text:?}")));
    };
    if percent > 0.0 && percent <= 100.0 {
        Ok(MemoryLimit::Percent(percent))
    } else {
        Err(invalid(
            KEY,
            format!("a percent must be more than 0 and at most 100, got {text:?}"),
        ))
    }
}

/// A size other than `"off"`: an integer of bytes or a size text, more than 0.
fn bytes<K: Expecting>(key: &str, value: Value) -> Result<u64, Invalid> {
    let (size, shown) = match value {
        Value::Integer(n) if n < 0 => (Size::Bytes(0), n.to_string()),
        Value::Integer(n) => (
            u64::try_from(n).map_or(Size::TooLarge, Size::Bytes),
            n.to_string(),
        ),
        Value::Text(text) => (Size::of(&text), format!("{text:?}")),
    };
    match size {
        Size::Bytes(0) => Err(invalid(
            key,
            format!(r#"must be more than 0 bytes (write "off" for no limit), got {shown}"#),
        )),
        Size::Bytes(bytes) => Ok(bytes),
        Size::TooLarge => Err(invalid(
            key,
            format!("must be at most {} bytes, got {shown}", u64::MAX),
        )),
        Size::Unreadable => Err(not_a::<K>(key, &shown)),
    }
}

/// A count other than `"off"` (`processes`, `cpu_time`): an integer, 1 or more.
fn count<K: Expecting>(key: &str, value: Value) -> Result<u64, Invalid> {
    match value {
        Value::Text(text) => Err(not_a::<K>(key, &format!("{text:?}"))),
        Value::Integer(n) if n < 1 => Err(invalid(
            key,
            format!(r#"must be at least 1 (write "off" for no limit), got {n}"#),
        )),
        Value::Integer(n) => u64::try_from(n)
            .map_err(|_| invalid(key, format!("must be at most {}, got {n}", u64::MAX))),
    }
}

/// A value that is none of what the key may be: `"lots" is not a size ("4GiB", "512MiB") or
/// "off"`.
fn not_a<K: Expecting>(key: &str, shown: &str) -> Invalid {
    invalid(key, format!("{shown} is not {}", K::WHAT))
}

/// `limits.tmp_size` needs the sandbox (`sandbox_on`): the tmpfs is the sandbox's private
/// temporary directory. Checked on the settings as a whole, since a far side may be given
/// `[limits]` and keep its own `[sandbox]`, or the other way round.
pub(super) fn check_tmp_size(limits: &LimitSettings, sandbox_on: bool) -> Result<(), Invalid> {
    if limits.tmp_size.is_some() && !sandbox_on {
        return Err(invalid(
            "limits.tmp_size",
            r#"needs the sandbox (sandbox.mode is "off"): the tmpfs is the sandbox's private temporary directory"#,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
