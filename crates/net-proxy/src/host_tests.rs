use super::*;

fn ip(text: &str) -> Host {
    Host::Ip(text.parse().expect("a test address"))
}

fn name(text: &str) -> Host {
    Host::Name(text.to_owned())
}

#[test]
fn hosts_parse_to_canonical_forms() {
    let cases: &[(&str, Result<Host, HostError>)] = &[
        ("github.com", Ok(name("github.com"))),
        ("GitHub.COM", Ok(name("github.com"))),
        ("github.com.", Ok(name("github.com"))),
        ("a-b_c.example", Ok(name("a-b_c.example"))),
        ("localhost", Ok(name("localhost"))),
        ("1password.com", Ok(name("1password.com"))),
        ("x.0xzz", Ok(name("x.0xzz"))),
        ("10.1.2.3", Ok(ip("10.1.2.3"))),
        ("127.0.0.1", Ok(ip("127.0.0.1"))),
        ("::1", Ok(ip("::1"))),
        ("::ffff:10.1.2.3", Ok(ip("10.1.2.3"))),
        ("::FFFF:7f00:1", Ok(ip("127.0.0.1"))),
        ("", Err(HostError::Empty)),
        ("127.1", Err(HostError::NonCanonical)),
        ("2130706433", Err(HostError::NonCanonical)),
        ("0x7f.1", Err(HostError::NonCanonical)),
        ("0x7f000001", Err(HostError::NonCanonical)),
        ("0177.0.0.1", Err(HostError::NonCanonical)),
        ("127.0.0.01", Err(HostError::NonCanonical)),
        ("127.0.0.1.", Err(HostError::NonCanonical)),
        ("256.1.1.1", Err(HostError::NonCanonical)),
        ("1.2.3.4.5", Err(HostError::NonCanonical)),
        ("example.123", Err(HostError::NonCanonical)),
        ("example.0x", Err(HostError::NonCanonical)),
        ("a..b", Err(HostError::Invalid)),
        (".a", Err(HostError::Invalid)),
        ("a b", Err(HostError::Invalid)),
        ("a/b", Err(HostError::Invalid)),
        ("user@host", Err(HostError::Invalid)),
        ("*.example.com", Err(HostError::Invalid)),
        ("fe80::1%eth0", Err(HostError::Invalid)),
        ("::1::2", Err(HostError::Invalid)),
        ("exämple.com", Err(HostError::Invalid)),
    ];
    for (text, expected) in cases {
        assert_eq!(&Host::parse(text), expected, "{text:?}");
    }
    let long_label = format!("{}.com", "a".repeat(64));
    assert_eq!(Host::parse(&long_label), Err(HostError::Invalid));
    let long_name = format!("{}com", "abcdefghi.".repeat(26));
    assert_eq!(Host::parse(&long_name), Err(HostError::Invalid));
}

#[test]
fn authorities_split_into_host_and_port() {
    type Case = (
        &'static str,
        Option<u16>,
        Result<(&'static str, u16), AuthorityError>,
    );
    let cases: &[Case] = &[
        ("github.com:443", None, Ok(("github.com", 443))),
        ("github.com", Some(80), Ok(("github.com", 80))),
        ("github.com", None, Err(AuthorityError::NoPort)),
        ("[::1]:443", None, Ok(("::1", 443))),
        ("[::1]", Some(80), Ok(("::1", 80))),
        ("[::1]", None, Err(AuthorityError::NoPort)),
        ("::1:443", None, Err(AuthorityError::BadBrackets)),
        ("[::1]x", None, Err(AuthorityError::BadBrackets)),
        ("[::1", None, Err(AuthorityError::BadBrackets)),
        (":443", None, Err(AuthorityError::NoHost)),
        ("[]:443", None, Err(AuthorityError::NoHost)),
        ("host:0", None, Err(AuthorityError::BadPort)),
        ("host:65536", None, Err(AuthorityError::BadPort)),
        ("host:", Some(80), Err(AuthorityError::BadPort)),
        ("host:+1", None, Err(AuthorityError::BadPort)),
        ("host:65535", None, Ok(("host", 65535))),
        ("127.1:80", None, Ok(("127.1", 80))),
    ];
    for (text, default, expected) in cases {
        assert_eq!(&split_authority(text, *default), expected, "{text:?}");
    }
}

#[test]
fn targets_are_written_as_refusals_show_them() {
    assert_eq!(target("GitHub.com", 443), "github.com:443");
    assert_eq!(target("::1", 443), "[::1]:443");
    assert_eq!(target("127.1", 80), "127.1:80");
}
