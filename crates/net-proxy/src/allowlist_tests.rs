use super::*;

fn list(entries: &[&str]) -> Allowlist {
    let entries: Vec<String> = entries.iter().map(|&e| e.to_owned()).collect();
    Allowlist::parse(&entries).expect("a valid test list")
}

#[test]
fn entries_match_hosts_and_ports() {
    let list = list(&[
        "github.com",
        "*.pythonhosted.org",
        "registry.npmjs.org:443",
        "10.1.2.3",
        "[::1]:8443",
        "fd00::7",
        "::ffff:192.168.1.9",
        "Example.ORG.",
    ]);
    let cases: &[(&str, u16, bool)] = &[
        ("github.com", 443, true),
        ("github.com", 22, true),
        ("GITHUB.com.", 443, true),
        ("api.github.com", 443, false),
        ("xgithub.com", 443, false),
        ("github.com.evil", 443, false),
        ("files.pythonhosted.org", 443, true),
        ("a.b.pythonhosted.org", 443, true),
        ("pythonhosted.org", 443, false),
        ("xpythonhosted.org", 443, false),
        (".pythonhosted.org", 443, false),
        ("registry.npmjs.org", 443, true),
        ("registry.npmjs.org", 80, false),
        ("10.1.2.3", 1, true),
        ("10.1.2.4", 80, false),
        ("[::ffff:10.1.2.3]", 80, true),
        ("::ffff:10.1.2.3", 80, true),
        ("010.1.2.3", 80, false),
        ("::1", 8443, true),
        ("[::1]", 8443, true),
        ("::1", 443, false),
        ("fd00::7", 1, true),
        ("fd00:0::7", 1, true),
        ("192.168.1.9", 80, true),
        ("example.org", 80, true),
        ("www.example.org", 80, false),
        ("127.1", 80, false),
        ("", 80, false),
    ];
    for (host, port, allowed) in cases {
        assert_eq!(list.allows(host, *port), *allowed, "{host}:{port}");
    }
}

#[test]
fn addresses_match_ip_entries_only() {
    let list = list(&["127.0.0.1:8080", "::1", "localhost"]);
    let addr = |text: &str| text.parse::<IpAddr>().expect("a test address");
    let cases: &[(&str, u16, bool)] = &[
        ("127.0.0.1", 8080, true),
        ("127.0.0.1", 8081, false),
        ("::ffff:127.0.0.1", 8080, true),
        ("127.0.0.2", 8080, false),
        ("::1", 1, true),
        ("::2", 1, false),
    ];
    for (text, port, allowed) in cases {
        assert_eq!(
            list.allows_address(addr(text), *port),
            *allowed,
            "{text}:{port}"
        );
    }
}

#[test]
fn bad_entries_are_refused_with_the_reason() {
    let cases: &[(&str, &str)] = &[
        ("", "the entry is empty"),
        (" github.com", "an entry is a host, without spaces"),
        (
            "https://github.com",
            "an entry is a host, not a URL: drop the scheme",
        ),
        ("github.com/path", "an entry is a host, without a path"),
        ("*", "`*` alone would allow every host"),
        ("*:443", "`*` alone would allow every host"),
        (
            "*.*.example.com",
            "a wildcard is allowed only as a leading `*.`",
        ),
        (
            "a.*.example.com",
            "a wildcard is allowed only as a leading `*.`",
        ),
        (
            "*example.com",
            "a wildcard is allowed only as a leading `*.`",
        ),
        (
            "*.10.1.2.3",
            "a wildcard needs a name after `*.`, not an address",
        ),
        ("github.com:0", "the port is not a number from 1 to 65535"),
        (
            "github.com:65536",
            "the port is not a number from 1 to 65535",
        ),
        (
            "github.com:https",
            "the port is not a number from 1 to 65535",
        ),
        ("github.com:", "the port is not a number from 1 to 65535"),
        ("[::1]:", "the port is not a number from 1 to 65535"),
        ("[::1]443", "only `:port` may follow `]`"),
        ("[::1", "a `[` without its `]`"),
        ("[github.com]", "brackets hold an IPv6 address"),
        ("[127.0.0.1]", "brackets hold an IPv6 address"),
        (
            "127.1",
            "a numeric host must be a canonical IP address (such as 10.1.2.3)",
        ),
        (
            "2130706433",
            "a numeric host must be a canonical IP address (such as 10.1.2.3)",
        ),
        (
            "0x7f.1",
            "a numeric host must be a canonical IP address (such as 10.1.2.3)",
        ),
        (
            "0177.0.0.1",
            "a numeric host must be a canonical IP address (such as 10.1.2.3)",
        ),
        (":443", "the host is empty"),
        ("*.", "the host is empty"),
        ("a..b", "not a host name or an IP address"),
        ("user@github.com", "not a host name or an IP address"),
    ];
    for (entry, reason) in cases {
        let err = Allowlist::parse(&[(*entry).to_owned()]).expect_err(entry);
        assert_eq!(err.entry, *entry);
        assert_eq!(err.reason, *reason, "{entry:?}");
    }
    let err = Allowlist::parse(&["github.com".into(), "127.1".into()]).expect_err("bad");
    assert_eq!(
        err.to_string(),
        "network entry `127.1`: a numeric host must be a canonical IP address (such as 10.1.2.3)"
    );
}

#[test]
fn entries_are_kept_as_written() {
    let list = list(&["GitHub.com", "[::1]:443", "*.pythonhosted.org"]);
    assert_eq!(list.display(), "GitHub.com, [::1]:443, *.pythonhosted.org");
    assert_eq!(list.entries().len(), 3);
    assert!(!list.is_empty());
    assert!(Allowlist::default().is_empty());
    assert_eq!(Allowlist::default().display(), "");
}
