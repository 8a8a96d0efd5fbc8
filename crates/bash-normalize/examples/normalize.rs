//! Shows what normalisation does to a command line.
//!
//! `cargo run -q -p agentsh-bash-normalize --example normalize -- 'cd src && make 2>&1 | tail -n 5'`

use agentsh_bash_normalize::normalize;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(command), None) = (args.next(), args.next()) else {
        eprintln!("usage: normalize '<command>'   (one argument: quote the whole command)");
        std::process::exit(2);
    };
    let normalized = normalize(&command);
    let show = |limit: Option<u32>| limit.map_or_else(|| "-".to_owned(), |n| n.to_string());
    println!("command: {}", normalized.command);
    println!("head: {}", show(normalized.limits.head));
    println!("tail: {}", show(normalized.limits.tail));
}
