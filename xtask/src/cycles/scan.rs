//! Reading a crate's files for the cycle check: a tokenizer that leaves out comments and
//! literals, and a shallow item parser that collects each module's items and `use` bindings and
//! the paths each file names (the parent module says which of them count).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One token of Rust source: what the graph needs, everything else as `Other`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tok {
    /// An identifier or keyword (`r#` removed; `$crate` is `crate`).
    Ident(String),
    /// `::`.
    PathSep,
    /// One punctuation character.
    Punct(char),
    /// A literal (string, character, number) or a lifetime.
    Other,
}

/// Splits `text` into tokens, leaving out comments and the contents of literals.
pub(super) fn tokenize(text: &str) -> Vec<Tok> {
    let chars: Vec<char> = text.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(end) = string_literal(&chars, i) {
            toks.push(Tok::Other);
            i = end;
        } else if c == '\'' {
            toks.push(Tok::Other);
            i = quote_end(&chars, i);
        } else if c.is_ascii_digit() {
            while i < chars.len()
                && (chars[i].is_alphanumeric()
                    || chars[i] == '_'
                    || (chars[i] == '.' && at(i + 1).is_ascii_digit()))
            {
                i += 1;
            }
            toks.push(Tok::Other);
        } else if c == 'b' && at(i + 1) == '\'' {
            // A byte character, `b'x'`.
            toks.push(Tok::Other);
            i = quote_end(&chars, i + 1);
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let mut word: String = chars[start..i].iter().collect();
            if word == "r" && at(i) == '#' && (at(i + 1).is_alphabetic() || at(i + 1) == '_') {
                let start = i + 1;
                i = start;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                word = chars[start..i].iter().collect();
            }
            toks.push(Tok::Ident(word));
        } else if c == ':' && at(i + 1) == ':' {
            toks.push(Tok::PathSep);
            i += 2;
        } else if c == '$' && chars[i + 1..].starts_with(&['c', 'r', 'a', 't', 'e']) {
            toks.push(Tok::Ident("crate".to_owned()));
            i += 6;
        } else {
            toks.push(Tok::Punct(c));
            i += 1;
        }
    }
    toks
}

/// The end of a string literal starting at `i` (`"…"`, `b"…"`, `c"…"`, `r#"…"#`, `br"…"`,
/// `cr"…"`), or `None` when none starts there.
fn string_literal(chars: &[char], i: usize) -> Option<usize> {
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    // Identifier characters right before: `br` inside `abr"` is no prefix.
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return None;
    }
    let mut j = i;
    if matches!(at(j), 'b' | 'c') {
        j += 1;
    }
    let raw = at(j) == 'r';
    if raw {
        j += 1;
    }
    let mut hashes = 0;
    if raw {
        while at(j) == '#' {
            hashes += 1;
            j += 1;
        }
    }
    if at(j) != '"' {
        return None;
    }
    j += 1;
    while j < chars.len() {
        match chars[j] {
            '\\' if !raw => j += 2,
            '"' => {
                let closes = (1..=hashes).all(|k| at(j + k) == '#');
                if closes {
                    return Some(j + 1 + hashes);
                }
                j += 1;
            }
            _ => j += 1,
        }
    }
    Some(j)
}

/// The end of a character literal (`'a'`, `'\n'`, `b'x'` after its `b`) or a lifetime
/// (`'a`) starting at the quote at `i`.
fn quote_end(chars: &[char], i: usize) -> usize {
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    if at(i + 1) == '\\' {
        let mut j = i + 3;
        while j < chars.len() && chars[j] != '\'' {
            j += 1;
        }
        return j + 1;
    }
    if at(i + 2) == '\'' {
        return i + 3;
    }
    let mut j = i + 1;
    while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
        j += 1;
    }
    j
}

/// A module's path from the crate root (`[]` is the root).
pub(super) type ModPath = Vec<String>;

/// What a module holds, as far as paths are concerned.
#[derive(Debug, Default)]
pub(super) struct Module {
    /// The file it is in (an inline module's is its parent's).
    pub(super) file: usize,
    /// The names of the items it defines (functions, types, traits, constants, …).
    pub(super) items: BTreeSet<String>,
    /// `use` bindings: the name brought in, and the path as written.
    pub(super) imports: Vec<(String, Vec<String>)>,
    /// Paths of `use …::*`.
    pub(super) globs: Vec<Vec<String>>,
}

/// A path one file names: in a `use` declaration, or in code.
#[derive(Debug)]
pub(super) struct Reference {
    pub(super) file: usize,
    /// The module it is written in (for `self`, `super` and relative paths).
    pub(super) module: ModPath,
    pub(super) path: Vec<String>,
    /// A glob (`use path::*`): a use of the module itself.
    pub(super) glob: bool,
}

/// The modules, files and references of one crate.
#[derive(Debug, Default)]
pub(super) struct Crate {
    /// Paths relative to the crate directory (`src/lib.rs`, …).
    pub(super) files: Vec<PathBuf>,
    pub(super) modules: BTreeMap<ModPath, Module>,
    pub(super) references: Vec<Reference>,
    /// Problems found while reading (a `mod` whose file is missing).
    pub(super) errors: Vec<String>,
}

/// How the scanner reads a file: the crate-relative path to its text.
pub(super) type Reader<'a> = dyn Fn(&Path) -> Option<String> + 'a;

impl Crate {
    /// Reads the module tree from `src/lib.rs`.
    pub(super) fn read(read: &Reader<'_>) -> Self {
        let mut krate = Self::default();
        krate.read_file(read, Path::new("src/lib.rs"), &[], Path::new("src"));
        krate
    }

    /// Reads the file of module `module`; its `mod x;` children are in `child_dir`.
    fn read_file(&mut self, read: &Reader<'_>, path: &Path, module: &[String], child_dir: &Path) {
        let Some(text) = read(path) else {
            self.errors
                .push(format!("{} cannot be read", path.display()));
            return;
        };
        let file = self.files.len();
        self.files.push(path.to_path_buf());
        let toks = tokenize(&text);
        let mut parser = Parser {
            toks: &toks,
            pos: 0,
            file,
        };
        self.modules.entry(module.to_vec()).or_default().file = file;
        parser.items(self, read, module, child_dir);
    }

    /// The module `module` (created on first mention).
    fn module(&mut self, module: &[String]) -> &mut Module {
        self.modules.entry(module.to_vec()).or_default()
    }
}

/// The item parser over one file's tokens.
struct Parser<'t> {
    toks: &'t [Tok],
    pos: usize,
    file: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn peek_at(&self, ahead: usize) -> Option<&Tok> {
        self.toks.get(self.pos + ahead)
    }

    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }

    fn ident(&self) -> Option<&str> {
        match self.peek() {
            Some(Tok::Ident(word)) => Some(word),
            _ => None,
        }
    }

    /// Skips a balanced group starting at the open bracket under the cursor.
    fn skip_group(&mut self) {
        let mut depth = 0usize;
        while let Some(tok) = self.peek() {
            match tok {
                Tok::Punct('(' | '[' | '{') => depth += 1,
                Tok::Punct(')' | ']' | '}') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.pos += 1;
                        return;
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
    }

    /// Reads the attributes under the cursor; true when one is `#[cfg(test)]` (or a `cfg`
    /// that needs `test`, such as `cfg(all(test, feature = "x"))`).
    fn attributes(&mut self) -> bool {
        let mut test_only = false;
        while self.is_punct('#') {
            let start = self.pos;
            self.pos += 1;
            if self.is_punct('!') {
                self.pos += 1;
            }
            if !self.is_punct('[') {
                self.pos = start;
                break;
            }
            let open = self.pos;
            self.skip_group();
            let inside = &self.toks[open..self.pos];
            if inside.get(1) == Some(&Tok::Ident("cfg".to_owned())) {
                let words: Vec<&str> = inside
                    .iter()
                    .filter_map(|t| match t {
                        Tok::Ident(w) => Some(w.as_str()),
                        _ => None,
                    })
                    .collect();
                if words.contains(&"test") && !words.contains(&"not") && !words.contains(&"any") {
                    test_only = true;
                }
            }
        }
        test_only
    }

    /// Skips one item: to its `;` or the end of its outermost `{}` group.
    fn skip_item(&mut self) {
        while let Some(tok) = self.peek() {
            match tok {
                Tok::Punct(';') => {
                    self.pos += 1;
                    return;
                }
                Tok::Punct('{') => {
                    self.skip_group();
                    return;
                }
                Tok::Punct('(' | '[') => self.skip_group(),
                Tok::Punct('}') => return,
                _ => self.pos += 1,
            }
        }
    }

    /// Reads the items of a module (a file, or an inline module's braces) up to its end.
    fn items(&mut self, krate: &mut Crate, read: &Reader<'_>, module: &[String], child_dir: &Path) {
        loop {
            let test_only = self.attributes();
            let Some(tok) = self.peek() else { return };
            if tok == &Tok::Punct('}') {
                return;
            }
            if test_only {
                self.skip_item();
                continue;
            }
            if tok == &Tok::Punct(';') {
                self.pos += 1;
                continue;
            }
            if self.ident() == Some("pub") {
                self.pos += 1;
                if self.is_punct('(') {
                    self.skip_group();
                }
            }
            while matches!(
                self.ident(),
                Some("unsafe" | "async" | "default" | "auto" | "extern")
            ) {
                self.pos += 1;
                if matches!(self.peek(), Some(Tok::Other)) {
                    // `extern "C"`.
                    self.pos += 1;
                }
            }
            match self.ident() {
                Some("use") => {
                    self.pos += 1;
                    self.use_declaration(krate, module, true);
                }
                Some("mod") => {
                    self.pos += 1;
                    let Some(name) = self.ident().map(str::to_owned) else {
                        continue;
                    };
                    self.pos += 1;
                    let mut child = module.to_vec();
                    child.push(name.clone());
                    if self.is_punct('{') {
                        self.pos += 1;
                        krate.module(&child).file = self.file;
                        self.items(krate, read, &child, &child_dir.join(&name));
                        self.pos += 1;
                    } else {
                        self.pos += 1;
                        let flat = child_dir.join(format!("{name}.rs"));
                        let nested = child_dir.join(&name).join("mod.rs");
                        let path = if read(&flat).is_some() { flat } else { nested };
                        krate.read_file(read, &path, &child, &child_dir.join(&name));
                    }
                }
                Some(
                    "fn" | "struct" | "enum" | "union" | "trait" | "type" | "const" | "static",
                ) => {
                    self.pos += 1;
                    if self.ident() == Some("fn") {
                        // `const fn`.
                        self.pos += 1;
                    }
                    if let Some(name) = self.ident().map(str::to_owned) {
                        krate.module(module).items.insert(name);
                    }
                    self.code(krate, module);
                }
                Some("macro_rules") => {
                    if let Some(Tok::Ident(name)) = self.peek_at(2) {
                        krate.module(module).items.insert(name.clone());
                    }
                    self.code(krate, module);
                }
                _ => self.code(krate, module),
            }
        }
    }

    /// Reads a `use` tree (after `use`) up to its `;`. At module level (`bind`) its names are
    /// the module's bindings.
    fn use_declaration(&mut self, krate: &mut Crate, module: &[String], bind: bool) {
        let mut found = Vec::new();
        self.use_tree(&mut Vec::new(), &mut found);
        if self.is_punct(';') {
            self.pos += 1;
        }
        for (prefix, name) in found {
            let glob = name.is_none();
            if bind {
                let m = krate.module(module);
                match &name {
                    None => m.globs.push(prefix.clone()),
                    Some(name) if name != "_" => m.imports.push((name.clone(), prefix.clone())),
                    Some(_) => {}
                }
            }
            krate.references.push(Reference {
                file: self.file,
                module: module.to_vec(),
                path: prefix,
                glob,
            });
        }
    }

    /// One `use` subtree: pushes `(full path, bound name)` pairs, `None` for a glob.
    fn use_tree(
        &mut self,
        prefix: &mut Vec<String>,
        found: &mut Vec<(Vec<String>, Option<String>)>,
    ) {
        let depth = prefix.len();
        loop {
            match self.peek() {
                Some(Tok::Ident(word)) => {
                    let word = word.clone();
                    self.pos += 1;
                    if self.peek() == Some(&Tok::PathSep) {
                        self.pos += 1;
                        prefix.push(word);
                        continue;
                    }
                    let mut name = if word == "self" {
                        prefix.last().cloned().unwrap_or(word.clone())
                    } else {
                        word.clone()
                    };
                    if self.ident() == Some("as") {
                        self.pos += 1;
                        if let Some(alias) = self.ident() {
                            name = alias.to_owned();
                            self.pos += 1;
                        }
                    }
                    let mut path = prefix.clone();
                    if word != "self" {
                        path.push(word);
                    }
                    found.push((path, Some(name)));
                }
                Some(Tok::Punct('*')) => {
                    self.pos += 1;
                    found.push((prefix.clone(), None));
                }
                Some(Tok::Punct('{')) => {
                    self.pos += 1;
                    loop {
                        if self.is_punct('}') || self.peek().is_none() {
                            self.pos += 1;
                            break;
                        }
                        if self.is_punct(',') {
                            self.pos += 1;
                            continue;
                        }
                        let mut inner = prefix.clone();
                        self.use_tree(&mut inner, found);
                    }
                }
                Some(Tok::PathSep) => {
                    // `use ::std::…`: another crate.
                    self.pos += 1;
                    prefix.push("::".to_owned());
                    continue;
                }
                _ => {}
            }
            prefix.truncate(depth);
            return;
        }
    }

    /// Reads the rest of an item (signature, body), noting the paths it names, up to its `;` or
    /// the end of its outermost `{}` group. Items under `#[cfg(test)]` inside are skipped, and
    /// `use` declarations inside bodies are read as references.
    fn code(&mut self, krate: &mut Crate, module: &[String]) {
        let mut depth = 0usize;
        let mut previous_sep = false;
        while let Some(tok) = self.peek().cloned() {
            match tok {
                Tok::Punct('#') if matches!(self.peek_at(1), Some(Tok::Punct('[' | '!'))) => {
                    if self.attributes() {
                        self.skip_item();
                    }
                    previous_sep = false;
                    continue;
                }
                Tok::Punct(';') if depth == 0 => {
                    self.pos += 1;
                    return;
                }
                Tok::Punct('(' | '[' | '{') => depth += 1,
                Tok::Punct(')' | ']') => depth = depth.saturating_sub(1),
                Tok::Punct('}') => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                    if depth == 0 {
                        self.pos += 1;
                        return;
                    }
                }
                Tok::Ident(word) if word == "use" => {
                    self.pos += 1;
                    self.use_declaration(krate, module, false);
                    previous_sep = false;
                    continue;
                }
                Tok::Ident(word) if !previous_sep && self.peek_at(1) == Some(&Tok::PathSep) => {
                    let mut path = vec![word];
                    let mut at = self.pos + 1;
                    while self.toks.get(at) == Some(&Tok::PathSep) {
                        match self.toks.get(at + 1) {
                            Some(Tok::Ident(next)) => {
                                path.push(next.clone());
                                at += 2;
                            }
                            _ => break,
                        }
                    }
                    krate.references.push(Reference {
                        file: self.file,
                        module: module.to_vec(),
                        path,
                        glob: false,
                    });
                    self.pos = at;
                    previous_sep = false;
                    continue;
                }
                _ => {}
            }
            previous_sep = self.peek() == Some(&Tok::PathSep);
            self.pos += 1;
        }
    }
}
