//! Addresses a name may not resolve to: loopback, private, link-local, multicast,
//! documentation, reserved, and the like. A listed name that resolves to one of them is refused
//! unless that address is itself listed (so `evil.example` pointing at `127.0.0.1` or at the
//! cloud metadata address `169.254.169.254` reaches nothing).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `addr` is an address a resolved name must not lead to: anything that is not a
/// public unicast address. IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) and NAT64 or 6to4
/// addresses are judged by the IPv4 address they carry.
///
/// ```
/// use std::net::IpAddr;
/// use agentsh_net_proxy::is_special_address;
///
/// let ip = |text: &str| text.parse::<IpAddr>().unwrap();
/// assert!(is_special_address(ip("169.254.169.254")));
/// assert!(is_special_address(ip("::ffff:127.0.0.1")));
/// assert!(!is_special_address(ip("140.82.112.3")));
/// ```
pub fn is_special_address(addr: IpAddr) -> bool {
    match addr.to_canonical() {
        IpAddr::V4(v4) => special_v4(v4),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

/// IPv4 blocks that are not public unicast, as `(network, prefix length)`.
const V4_BLOCKS: &[([u8; 4], u32)] = &[
    ([0, 0, 0, 0], 8),       // "this network"
    ([10, 0, 0, 0], 8),      // private
    ([100, 64, 0, 0], 10),   // shared address space (CGNAT)
    ([127, 0, 0, 0], 8),     // loopback
    ([169, 254, 0, 0], 16),  // link-local (cloud metadata)
    ([172, 16, 0, 0], 12),   // private
    ([192, 0, 0, 0], 24),    // IETF protocol assignments
    ([192, 0, 2, 0], 24),    // documentation (TEST-NET-1)
    ([192, 88, 99, 0], 24),  // 6to4 relay anycast
    ([192, 168, 0, 0], 16),  // private
    ([198, 18, 0, 0], 15),   // benchmarking
    ([198, 51, 100, 0], 24), // documentation (TEST-NET-2)
    ([203, 0, 113, 0], 24),  // documentation (TEST-NET-3)
    ([224, 0, 0, 0], 4),     // multicast
    ([240, 0, 0, 0], 4),     // reserved, and the broadcast address
];

fn special_v4(addr: Ipv4Addr) -> bool {
    let bits = u32::from(addr);
    V4_BLOCKS.iter().any(|&(network, prefix)| {
        let mask = u32::MAX << (32 - prefix);
        bits & mask == u32::from(Ipv4Addr::from(network))
    })
}

fn special_v6(addr: Ipv6Addr) -> bool {
    let bits = u128::from(addr);
    let within = |network: u128, prefix: u32| bits & (u128::MAX << (128 - prefix)) == network;
    let embedded_v4 = || Ipv4Addr::from(bits as u32);
    // NAT64 (64:ff9b::/96): the IPv4 address it stands for decides.
    if within(0x0064_ff9b_u128 << 96, 96) {
        return special_v4(embedded_v4());
    }
    // 6to4 (2002::/16): the IPv4 address in bits 16..48 decides.
    if within(0x2002_u128 << 112, 16) {
        return special_v4(Ipv4Addr::from((bits >> 80) as u32));
    }
    // Only global unicast (2000::/3) is public: this leaves out the unspecified address,
    // loopback, IPv4-compatible forms, discard-only, unique local (fc00::/7), link-local
    // (fe80::/10), site-local and multicast (ff00::/8).
    if !within(0x2000_u128 << 112, 3) {
        return true;
    }
    within(0x2001_u128 << 112, 23) // IETF protocol assignments: Teredo, benchmarking, ORCHID
        || within(0x2001_0db8_u128 << 96, 32) // documentation
        || within(0x3fff_u128 << 112, 20) // documentation
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_addresses_are_recognised() {
        let cases: &[(&str, bool)] = &[
            ("0.0.0.0", true),
            ("0.1.2.3", true),
            ("10.0.0.1", true),
            ("10.255.255.255", true),
            ("100.63.255.255", false),
            ("100.64.0.1", true),
            ("100.127.255.255", true),
            ("100.128.0.0", false),
            ("127.0.0.1", true),
            ("127.255.0.9", true),
            ("169.254.169.254", true),
            ("172.15.255.255", false),
            ("172.16.0.1", true),
            ("172.31.255.255", true),
            ("172.32.0.0", false),
            ("192.0.0.8", true),
            ("192.0.2.55", true),
            ("192.88.99.1", true),
            ("192.168.1.1", true),
            ("192.169.0.1", false),
            ("198.17.255.255", false),
            ("198.18.0.1", true),
            ("198.19.255.255", true),
            ("198.20.0.0", false),
            ("198.51.100.7", true),
            ("203.0.113.9", true),
            ("224.0.0.1", true),
            ("239.255.255.250", true),
            ("240.0.0.1", true),
            ("255.255.255.255", true),
            ("1.1.1.1", false),
            ("8.8.8.8", false),
            ("140.82.112.3", false),
            ("151.101.0.223", false),
            ("::", true),
            ("::1", true),
            ("::ffff:127.0.0.1", true),
            ("::ffff:169.254.169.254", true),
            ("::ffff:10.1.2.3", true),
            ("::ffff:8.8.8.8", false),
            ("::127.0.0.1", true),
            ("::8.8.8.8", true),
            ("64:ff9b::8.8.8.8", false),
            ("64:ff9b::a9fe:a9fe", true),
            ("64:ff9b:1::1", true),
            ("100::1", true),
            ("fc00::1", true),
            ("fd12:3456::1", true),
            ("fe80::1", true),
            ("febf::1", true),
            ("fec0::1", true),
            ("ff02::1", true),
            ("2001::1", true),
            ("2001:2::1", true),
            ("2001:db8::1", true),
            ("2001:4860:4860::8888", false),
            ("2002:0808:0808::1", false),
            ("2002:7f00:0001::1", true),
            ("2606:4700::1111", false),
            ("3fff::1", true),
            ("4000::1", true),
        ];
        for (text, special) in cases {
            let addr: IpAddr = text.parse().expect("a test address");
            assert_eq!(is_special_address(addr), *special, "{text}");
        }
    }
}
