//! find: every found path is kept, in its order; consecutive paths in one directory are
//! written under that directory once (`./src/shapers/` then `  git.rs`, `  ls.rs`). Not
//! shaped when an action changes what is printed (`-printf`, `-print0`, `-ls`, `-exec`, …).
//! find prints no summary; its own messages (`find: './x': Permission denied`) are kept.

use crate::engine::{Shaper, Verdict};
use crate::select::Target;

/// Actions that print something other than one path per line (or run another program).
const FORMAT_ACTIONS: &[&str] = &[
    "-printf", "-fprintf", "-print0", "-fprint0", "-fprint", "-ls", "-fls", "-exec", "-execdir",
    "-ok", "-okdir", "-delete",
];

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    if target
        .args
        .iter()
        .any(|arg| FORMAT_ACTIONS.contains(&arg.as_str()))
    {
        return None;
    }
    Some(Box::new(Find))
}

/// The length of `path`'s directory part with its last `/` (`src/a/` of `src/a/b.rs`, of
/// `src/a/b/` too), or `None` for a name without a directory.
pub(crate) fn dir_prefix(path: &str) -> Option<usize> {
    let trimmed = path.strip_suffix('/').unwrap_or(path);
    trimmed.rfind('/').map(|slash| slash + 1)
}

/// Paths grouped by their directory.
struct Find;

impl Shaper for Find {
    fn keeps_every_line(&self) -> bool {
        true
    }

    fn line(&mut self, line: &str) -> Verdict<'_> {
        if line.starts_with("find: ") {
            return Verdict::Keep;
        }
        match dir_prefix(line) {
            Some(prefix) => Verdict::Group(prefix),
            None => Verdict::Keep,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::select;

    #[test]
    fn a_path_is_grouped_by_its_directory() {
        assert_eq!(dir_prefix("./src/a.rs"), Some(6));
        assert_eq!(dir_prefix("./src/"), Some(2));
        assert_eq!(dir_prefix("."), None);
        assert_eq!(dir_prefix("a.rs"), None);
        let mut find = Find;
        assert_eq!(find.line("./src/a.rs"), Verdict::Group(6));
        assert_eq!(find.line("find: './x': Permission denied"), Verdict::Keep);
    }

    #[test]
    fn actions_that_change_the_format_are_not_shaped() {
        for command in [
            "find . -name '*.rs' -print0",
            "find . -printf '%p %s\\n'",
            "find . -type f -exec wc -l {} +",
            "find . -ls",
        ] {
            assert!(shaper(&select(command).unwrap()).is_none(), "{command}");
        }
        assert!(shaper(&select("find . -name '*.rs' -type f").unwrap()).is_some());
    }
}
