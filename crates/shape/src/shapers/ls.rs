//! ls: every entry is kept. A long listing (`-l`, `-la`, `-lR`) writes the mode, link count,
//! owner and group its entries share once (`-rw-r--r-- 1 ada ada ` then `  1234 Mar  1
//! 12:00 a.rs`), and leaves out its `total N` lines; a listing of several directories or a
//! recursive one (`-R`) keeps its `dir:` headers and leaves out the blank lines between them;
//! the paths of `ls src/*.rs` are grouped by directory. A plain `ls` of names, or `ls -R`
//! without `-l`, is not shaped: there is nothing to regroup, and the closing line would cost
//! more than it saves. ls prints no summary; its messages (`ls: cannot access …`) are kept.

use crate::engine::{Label, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;
use crate::shapers::find::dir_prefix;

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    let mut shorts = String::new();
    let mut longs = Vec::new();
    let mut operands = Vec::new();
    for arg in &target.args {
        if let Some(long) = arg.strip_prefix("--") {
            longs.push(long);
        } else if let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) {
            shorts.push_str(cluster);
        } else {
            operands.push(arg.as_str());
        }
    }
    let short = |flags: &str| flags.chars().any(|f| shorts.contains(f));
    // Columns, commas, one line: formats of their own (ls prints one name a line when piped).
    if short("CxmZ")
        || longs
            .iter()
            .any(|l| l.starts_with("format=") && *l != "format=long")
    {
        return None;
    }
    let long = short("lgno") || longs.contains(&"format=long");
    let owner_fields = 4 - usize::from(short("g")) - usize::from(short("oG"));
    // `ls src/*.rs`: the shell gives ls paths, and it prints them as given.
    let paths = operands.iter().any(|o| o.contains(['*', '?', '[']));
    (long || paths).then(|| {
        Box::new(Ls {
            long: long.then_some(owner_fields),
        }) as Box<dyn Shaper>
    })
}

/// An ls listing.
struct Ls {
    /// For a long listing: how many fields before the size are shared (mode, links, owner,
    /// group).
    long: Option<usize>,
}

/// The length of the first `fields` space-separated fields of `line` and the one space after
/// them, when the line has more after them.
fn fields_prefix(line: &str, fields: usize) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut at = 0;
    for _ in 0..fields {
        while bytes.get(at) == Some(&b' ') {
            at += 1;
        }
        let start = at;
        while bytes.get(at).is_some_and(|&b| b != b' ') {
            at += 1;
        }
        if at == start {
            return None;
        }
    }
    (bytes.get(at) == Some(&b' ') && at + 1 < bytes.len()).then_some(at + 1)
}

/// Whether `line` starts like a long listing's entry: a file type and nine mode letters.
fn is_long_entry(line: &str) -> bool {
    let bytes = line.as_bytes();
    bytes.len() > 10
        && b"-dlcbps".contains(&bytes[0])
        && bytes[1..10].iter().all(|b| b"rwxsStTl-".contains(b))
}

impl Shaper for Ls {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        if blank(line) {
            return Verdict::Drop(Label::Quiet);
        }
        if line.starts_with("ls: ") || line.ends_with(':') {
            return Verdict::Keep;
        }
        if let Some(fields) = self.long {
            if line.starts_with("total ") {
                return Verdict::Drop(Label::Quiet);
            }
            if is_long_entry(line) {
                return fields_prefix(line, fields).map_or(Verdict::Keep, Verdict::Group);
            }
            return Verdict::Keep;
        }
        dir_prefix(line).map_or(Verdict::Keep, Verdict::Group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::select;

    fn shaped(command: &str) -> bool {
        shaper(&select(command).unwrap()).is_some()
    }

    #[test]
    fn long_listings_and_paths_are_shaped_plain_names_not() {
        for command in [
            "ls -la",
            "ls -l src",
            "ls -lR",
            "ls src/*.rs",
            "ls -lh --color=never",
        ] {
            assert!(shaped(command), "{command}");
        }
        for command in ["ls", "ls -a src", "ls -R", "ls -C", "ls -m"] {
            assert!(!shaped(command), "{command}");
        }
    }

    #[test]
    fn entries_share_their_mode_links_owner_and_group() {
        let line = "-rw-r--r--  1 ada  staff   1234 Mar  1 12:00 a.rs";
        assert_eq!(
            fields_prefix(line, 4),
            Some("-rw-r--r--  1 ada  staff ".len())
        );
        assert_eq!(fields_prefix(line, 3), Some("-rw-r--r--  1 ada ".len()));
        assert_eq!(fields_prefix("-rw-r--r-- 1 ada", 4), None);
        let mut ls = Ls { long: Some(4) };
        assert_eq!(ls.line("total 48"), Verdict::Drop(Label::Quiet));
        assert_eq!(ls.line("./src:"), Verdict::Keep);
        assert_eq!(
            ls.line("ls: cannot access 'x': No such file or directory"),
            Verdict::Keep
        );
        assert_eq!(ls.line(line), Verdict::Group(25));
    }
}
