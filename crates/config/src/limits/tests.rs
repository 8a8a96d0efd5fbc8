//! Tests of `[limits]`: sizes, percents and `"off"` read, bad values refused with the key and
//! the reason, `tmp_size` only with the sandbox, and the limits a session resolves them to.

use std::time::Duration;

use agentsh_protocol::ResourceLimits;

use super::*;
use crate::tests::parse;

const GIB: u64 = 1 << 30;

/// The `[limits]` of a file holding `keys` (and the sandbox on, for `tmp_size`).
fn limits(keys: &str) -> LimitSettings {
    parse(&format!(
        "[sandbox]\nmode = \"read-only\"\n[limits]\n{keys}\n"
    ))
    .unwrap_or_else(|err| panic!("{keys}: {err}"))
    .limits
}

/// The error of a file holding `[limits]` `keys` (and the sandbox on), without the file's
/// name.
fn error(keys: &str) -> String {
    let err = parse(&format!(
        "[sandbox]\nmode = \"read-only\"\n[limits]\n{keys}\n"
    ))
    .expect_err(keys);
    err.strip_prefix("config error in /x/config.toml: ")
        .unwrap_or_else(|| panic!("{err}"))
        .to_owned()
}

#[test]
fn defaults_are_half_the_memory_4096_tasks_and_no_cpu_or_tmpfs_limit() {
    let defaults = parse("").unwrap().limits;
    assert_eq!(defaults, LimitSettings::default());
    assert_eq!(
        defaults,
        LimitSettings {
            memory: MemoryLimit::Percent(50.0),
            processes: Some(4096),
            cpu_time: None,
            tmp_size: None,
        }
    );
    assert_eq!(parse("[limits]\n").unwrap().limits, defaults);
    assert_eq!(
        defaults.resolve(Some(8 * GIB)),
        ResourceLimits {
            memory: Some(4 * GIB),
            processes: Some(4096),
            cpu_time: None,
        }
    );
}

#[test]
fn sizes_are_binary_in_every_form() {
    // Hand-computed: K = 1024, M = 1024², G = 1024³, T = 1024⁴.
    let cases: &[(&str, u64)] = &[
        ("4GiB", 4_294_967_296),
        ("256MiB", 268_435_456),
        ("512M", 536_870_912),
        ("1G", 1_073_741_824),
        ("1GB", 1_073_741_824),
        ("1.5GiB", 1_610_612_736),
        ("1 KB", 1024),
        ("2k", 2048),
        ("3KiB", 3072),
        ("3kib", 3072),
        ("8 mib", 8_388_608),
        ("  8MB ", 8_388_608),
        ("1T", 1_099_511_627_776),
        ("2TiB", 2_199_023_255_552),
        ("1tb", 1_099_511_627_776),
        ("100", 100),
        ("100B", 100),
        ("100 b", 100),
        ("0.5K", 512),
        ("1.25M", 1_310_720),
        // 307.2 bytes, rounded down.
        ("0.3K", 307),
        ("007G", 7_516_192_768),
        // 2^64 - 2^40: the most whole TiB that fit.
        ("16777215TiB", 18_446_742_974_197_923_840),
        ("18446744073709551615", u64::MAX),
    ];
    for &(written, want) in cases {
        assert_eq!(Size::of(written), Size::Bytes(want), "{written}");
        assert_eq!(
            limits(&format!("memory = {written:?}\ntmp_size = {written:?}")),
            LimitSettings {
                memory: MemoryLimit::Bytes(want),
                tmp_size: Some(want),
                ..LimitSettings::default()
            },
            "{written}"
        );
    }
    // A plain integer is bytes.
    assert_eq!(
        limits("memory = 1048576\ntmp_size = 4096"),
        LimitSettings {
            memory: MemoryLimit::Bytes(1_048_576),
            tmp_size: Some(4096),
            ..LimitSettings::default()
        }
    );
    for too_large in [
        "16777216TiB",
        "18446744073709551616",
        "99999999999999999999999G",
    ] {
        assert_eq!(Size::of(too_large), Size::TooLarge, "{too_large}");
    }
    for not_a_size in [
        "", "G", "lots", "4XB", "4 GiBs", "1.GiB", ".5G", "1.2.3G", "-1G", "4 G B", "1e3", "50%",
        "½G",
    ] {
        assert_eq!(Size::of(not_a_size), Size::Unreadable, "{not_a_size:?}");
    }
}

#[test]
fn memory_is_a_percent_a_size_or_off() {
    for (written, want) in [
        ("50%", 50.0),
        ("12.5%", 12.5),
        ("100%", 100.0),
        ("0.1 %", 0.1),
        ("5%", 5.0),
    ] {
        assert_eq!(
            limits(&format!("memory = {written:?}")).memory,
            MemoryLimit::Percent(want),
            "{written}"
        );
    }
    assert_eq!(limits("memory = \"off\"").memory, MemoryLimit::Off);
    assert_eq!(
        limits("memory = \"4GiB\"").memory,
        MemoryLimit::Bytes(4 * GIB)
    );
}

#[test]
fn counts_are_integers_or_off() {
    let set = limits("processes = 256\ncpu_time = 600");
    assert_eq!(set.processes, Some(256));
    assert_eq!(set.cpu_time, Some(Duration::from_secs(600)));
    let off = limits("processes = \"off\"\ncpu_time = \"off\"\ntmp_size = \"off\"");
    assert_eq!(
        (off.processes, off.cpu_time, off.tmp_size),
        (None, None, None)
    );
    assert_eq!(
        limits("processes = 1\ncpu_time = 1").cpu_time,
        Some(Duration::from_secs(1))
    );
}

#[test]
fn a_percent_is_of_the_memory_agentsh_may_use() {
    let resolve = |memory: MemoryLimit, available: Option<u64>| {
        LimitSettings {
            memory,
            ..LimitSettings::default()
        }
        .resolve(available)
        .memory
    };
    assert_eq!(
        resolve(MemoryLimit::Percent(50.0), Some(8 * GIB)),
        Some(4 * GIB)
    );
    assert_eq!(resolve(MemoryLimit::Percent(12.5), Some(1000)), Some(125));
    // 3.3 bytes, rounded down; never below 1 byte, never above what there is.
    assert_eq!(resolve(MemoryLimit::Percent(33.0), Some(10)), Some(3));
    assert_eq!(resolve(MemoryLimit::Percent(0.0001), Some(100)), Some(1));
    assert_eq!(
        resolve(MemoryLimit::Percent(100.0), Some(u64::MAX)),
        Some(u64::MAX)
    );
    assert_eq!(resolve(MemoryLimit::Percent(100.0), Some(7)), Some(7));
    // Not known: no limit from a percent; a size stands on its own.
    assert_eq!(resolve(MemoryLimit::Percent(50.0), None), None);
    assert_eq!(resolve(MemoryLimit::Bytes(5), None), Some(5));
    assert_eq!(resolve(MemoryLimit::Bytes(5), Some(GIB)), Some(5));
    assert_eq!(resolve(MemoryLimit::Off, Some(GIB)), None);
    let all = LimitSettings {
        memory: MemoryLimit::Bytes(GIB),
        processes: None,
        cpu_time: Some(Duration::from_secs(60)),
        tmp_size: Some(GIB),
    };
    assert_eq!(
        all.resolve(None),
        ResourceLimits {
            memory: Some(GIB),
            processes: None,
            cpu_time: Some(Duration::from_secs(60)),
        }
    );
}

#[test]
fn bad_values_name_the_key_and_what_was_wrong() {
    let max = u64::MAX;
    let cases = [
        (
            "memory = \"lots\"",
            r#"limits.memory: "lots" is not a size ("4GiB", "512MiB"), a percent ("50%") or "off""#
                .to_owned(),
        ),
        (
            "memory = \"4XB\"",
            r#"limits.memory: "4XB" is not a size ("4GiB", "512MiB"), a percent ("50%") or "off""#
                .to_owned(),
        ),
        (
            "memory = \"Off\"",
            r#"limits.memory: "Off" is not a size ("4GiB", "512MiB"), a percent ("50%") or "off""#
                .to_owned(),
        ),
        (
            "memory = \"half%\"",
            r#"limits.memory: "half%" is not a size ("4GiB", "512MiB"), a percent ("50%") or "off""#
                .to_owned(),
        ),
        (
            "memory = \"0%\"",
            r#"limits.memory: a percent must be more than 0 and at most 100, got "0%""#.to_owned(),
        ),
        (
            "memory = \"150%\"",
            r#"limits.memory: a percent must be more than 0 and at most 100, got "150%""#
                .to_owned(),
        ),
        (
            "memory = \"100.5%\"",
            r#"limits.memory: a percent must be more than 0 and at most 100, got "100.5%""#
                .to_owned(),
        ),
        (
            "memory = 0",
            r#"limits.memory: must be more than 0 bytes (write "off" for no limit), got 0"#
                .to_owned(),
        ),
        (
            "memory = -1",
            r#"limits.memory: must be more than 0 bytes (write "off" for no limit), got -1"#
                .to_owned(),
        ),
        (
            "memory = \"0GiB\"",
            r#"limits.memory: must be more than 0 bytes (write "off" for no limit), got "0GiB""#
                .to_owned(),
        ),
        (
            "memory = \"16777216TiB\"",
            format!(r#"limits.memory: must be at most {max} bytes, got "16777216TiB""#),
        ),
        (
            "memory = 99999999999999999999",
            format!("limits.memory: must be at most {max} bytes, got 99999999999999999999"),
        ),
        (
            "memory = 1.5",
            r#"limits.memory: invalid type: floating point `1.5`, expected a size ("4GiB", "512MiB"), a percent ("50%") or "off""#
                .to_owned(),
        ),
        (
            "memory = true",
            r#"limits.memory: invalid type: boolean `true`, expected a size ("4GiB", "512MiB"), a percent ("50%") or "off""#
                .to_owned(),
        ),
        (
            "processes = 0",
            r#"limits.processes: must be at least 1 (write "off" for no limit), got 0"#.to_owned(),
        ),
        (
            "processes = \"many\"",
            r#"limits.processes: "many" is not a number of tasks or "off""#.to_owned(),
        ),
        (
            "processes = \"4096\"",
            r#"limits.processes: "4096" is not a number of tasks or "off""#.to_owned(),
        ),
        (
            "processes = 99999999999999999999",
            format!("limits.processes: must be at most {max}, got 99999999999999999999"),
        ),
        (
            "processes = [1]",
            r#"limits.processes: invalid type: sequence, expected a number of tasks or "off""#
                .to_owned(),
        ),
        (
            "cpu_time = -3",
            r#"limits.cpu_time: must be at least 1 (write "off" for no limit), got -3"#.to_owned(),
        ),
        (
            "cpu_time = \"10m\"",
            r#"limits.cpu_time: "10m" is not a number of seconds or "off""#.to_owned(),
        ),
        (
            "cpu_time = 1.5",
            r#"limits.cpu_time: invalid type: floating point `1.5`, expected a number of seconds or "off""#
                .to_owned(),
        ),
        (
            "tmp_size = \"50%\"",
            r#"limits.tmp_size: "50%" is not a size ("4GiB", "512MiB") or "off""#.to_owned(),
        ),
        (
            "tmp_size = 0",
            r#"limits.tmp_size: must be more than 0 bytes (write "off" for no limit), got 0"#
                .to_owned(),
        ),
        (
            "tmp_size = false",
            r#"limits.tmp_size: invalid type: boolean `false`, expected a size ("4GiB", "512MiB") or "off""#
                .to_owned(),
        ),
        (
            "memroy = \"1G\"",
            "limits.memroy: unknown field `memroy`, expected one of `memory`, `processes`, `cpu_time`, `tmp_size`"
                .to_owned(),
        ),
    ];
    for (keys, want) in cases {
        assert_eq!(error(keys), want, "{keys}");
    }
    assert_eq!(
        parse("limits = 3").expect_err("not a table"),
        "config error in /x/config.toml: limits: invalid type: integer `3`, expected a table"
    );
}

#[test]
fn tmp_size_needs_the_sandbox() {
    let want = r#"config error in /x/config.toml: limits.tmp_size: needs the sandbox (sandbox.mode is "off"): the tmpfs is the sandbox's private temporary directory"#;
    assert_eq!(parse("[limits]\ntmp_size = \"1GiB\"\n").unwrap_err(), want);
    assert_eq!(
        parse("[sandbox]\nmode = \"off\"\n[limits]\ntmp_size = \"1GiB\"\n").unwrap_err(),
        want
    );
    // "off" needs nothing; a sandbox of either mode is enough.
    assert_eq!(
        parse("[limits]\ntmp_size = \"off\"\n").unwrap().limits,
        LimitSettings::default()
    );
    for mode in ["read-only", "workspace-write"] {
        let settings = parse(&format!(
            "[sandbox]\nmode = \"{mode}\"\n[limits]\ntmp_size = \"64MiB\"\n"
        ))
        .unwrap();
        assert_eq!(settings.limits.tmp_size, Some(64 << 20), "{mode}");
    }
}
