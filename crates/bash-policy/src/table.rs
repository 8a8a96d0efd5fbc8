//! Well-known programs and how each reads its command line: the global options it takes before
//! its subcommand (set aside before a rule's words are compared), the options that take a value,
//! whether single-letter options cluster (`-rf`), and which spellings of an option mean the same
//! (`-r`, `-R`, `--recursive`). One entry per program; a program outside the table is read word
//! for word (`find -delete`, `gcc -Wall` are words, never clusters).

/// How one program reads its words.
#[derive(Debug)]
pub(crate) struct Program {
    /// The names it is called by (`python`, `python3`).
    pub names: &'static [&'static str],
    /// Its first operand is a subcommand (`git push`), with global options before it.
    pub subcommands: bool,
    /// Global options that take a value (the next word, or attached: `--git-dir=x`, `-Cdir`).
    /// Any other option word before the subcommand is a global option without a value.
    pub global_values: &'static [&'static str],
    /// Global options are recognised after the subcommand too (`kubectl get pods -n x`).
    pub globals_anywhere: bool,
    /// A word starting with `+` before the subcommand is a global option (`cargo +nightly`).
    pub plus_prefix: bool,
    /// Options that name what runs and stay in the words a rule compares, with their value
    /// (`python -m pytest`); they end the global options.
    pub runs: &'static [&'static str],
    /// Options after the subcommand that take a value, by subcommand (`""`: any).
    pub values: &'static [(&'static str, &'static str)],
    /// Options whose value is optional and then only a number (`make -j 4`, `make -j`).
    pub numeric_values: &'static [&'static str],
    /// Single-letter options may be written together (`-rf` is `-r -f`).
    pub clusters: bool,
    /// Spellings of one option, by subcommand (`""`: any). The first spelling names the option.
    pub meanings: &'static [(&'static str, &'static [&'static str])],
    /// Subcommands with another name (`npm i` is `npm install`): the alias, then the name.
    pub aliases: &'static [(&'static str, &'static str)],
    /// A global option whose value makes the command unknown when it starts with this text
    /// (`git -c alias.x=…` defines a command; `""`: any value).
    pub unknown_globals: &'static [(&'static str, &'static str)],
}

impl Program {
    /// The option a spelling means for `subcommand`: the first spelling of its meaning, or the
    /// spelling itself.
    pub(crate) fn meaning<'a>(&self, subcommand: &str, spelling: &'a str) -> &'a str {
        self.meanings
            .iter()
            .filter(|(sub, _)| sub.is_empty() || *sub == subcommand)
            .find(|(_, spellings)| spellings.contains(&spelling))
            .map_or(spelling, |(_, spellings)| spellings[0])
    }

    /// A subcommand by its name (`npm i` → `install`).
    pub(crate) fn subcommand<'a>(&self, word: &'a str) -> &'a str {
        self.aliases
            .iter()
            .find(|(alias, _)| *alias == word)
            .map_or(word, |(_, name)| name)
    }

    /// Whether `option` takes a value where it stands (`global`: before the subcommand).
    pub(crate) fn takes_value(&self, subcommand: &str, option: &str, global: bool) -> bool {
        let globals = global || self.globals_anywhere;
        (globals && self.global_values.contains(&option))
            || (!global
                && self
                    .values
                    .iter()
                    .any(|(sub, o)| *o == option && (sub.is_empty() || *sub == subcommand)))
    }
}

/// The entry for a program by its base name.
pub(crate) fn program(name: &str) -> Option<&'static Program> {
    PROGRAMS.iter().find(|p| p.names.contains(&name))
}

const NONE: Program = Program {
    names: &[],
    subcommands: false,
    global_values: &[],
    globals_anywhere: false,
    plus_prefix: false,
    runs: &[],
    values: &[],
    numeric_values: &[],
    clusters: true,
    meanings: &[],
    aliases: &[],
    unknown_globals: &[],
};

static PROGRAMS: &[Program] = &[
    Program {
        names: &["git"],
        subcommands: true,
        global_values: &[
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--config-env",
            "--super-prefix",
            "--list-cmds",
        ],
        values: &[
            ("push", "-o"),
            ("push", "--push-option"),
            ("push", "--repo"),
            ("push", "--receive-pack"),
            ("push", "--exec"),
            ("clean", "-e"),
            ("clean", "--exclude"),
            ("commit", "-m"),
            ("commit", "--message"),
            ("commit", "-F"),
            ("commit", "--file"),
            ("commit", "--author"),
            ("commit", "--date"),
            ("commit", "-C"),
            ("commit", "-c"),
            ("merge", "-m"),
            ("merge", "-s"),
            ("merge", "-X"),
            ("rebase", "--onto"),
            ("rebase", "-s"),
            ("rebase", "--strategy"),
            ("rebase", "-X"),
            ("rebase", "--strategy-option"),
            ("rebase", "-x"),
            ("rebase", "--exec"),
            ("checkout", "-b"),
            ("checkout", "-B"),
            ("switch", "-c"),
            ("switch", "-C"),
        ],
        meanings: &[
            ("push", &["-f", "--force", "--force-with-lease"]),
            ("push", &["-d", "--delete"]),
            ("push", &["-u", "--set-upstream"]),
            ("push", &["-n", "--dry-run"]),
            ("push", &["--all", "--branches"]),
            ("clean", &["-f", "--force"]),
            ("clean", &["-n", "--dry-run"]),
            ("clean", &["-i", "--interactive"]),
            ("checkout", &["-f", "--force"]),
            ("switch", &["-f", "--force", "--discard-changes"]),
            ("branch", &["-d", "--delete"]),
            ("branch", &["-f", "--force"]),
            ("branch", &["-m", "--move"]),
            ("commit", &["-a", "--all"]),
            ("commit", &["-n", "--no-verify"]),
            ("rebase", &["-i", "--interactive"]),
            ("", &["-q", "--quiet"]),
            ("", &["-v", "--verbose"]),
        ],
        unknown_globals: &[
            ("-c", "alias."),
            ("--config-env", "alias."),
            ("--exec-path", ""),
        ],
        ..NONE
    },
    Program {
        names: &["rm"],
        meanings: &[
            ("", &["-r", "-R", "--recursive"]),
            ("", &["-f", "--force"]),
            ("", &["-d", "--dir"]),
            ("", &["-v", "--verbose"]),
        ],
        ..NONE
    },
    Program {
        names: &["chmod", "chown", "chgrp"],
        meanings: &[
            ("", &["-R", "--recursive"]),
            ("", &["-f", "--silent", "--quiet"]),
            ("", &["-v", "--verbose"]),
        ],
        values: &[("", "--reference")],
        ..NONE
    },
    Program {
        names: &["cargo"],
        subcommands: true,
        global_values: &["--color", "--config", "-Z", "-C", "--manifest-path"],
        plus_prefix: true,
        values: &[
            ("", "-p"),
            ("", "--package"),
            ("", "-j"),
            ("", "--jobs"),
            ("", "--target"),
            ("", "--features"),
            ("", "-F"),
            ("", "--bin"),
            ("", "--example"),
            ("", "--test"),
            ("", "--bench"),
            ("", "--profile"),
            ("", "--manifest-path"),
            ("", "--config"),
            ("", "--color"),
            ("", "--target-dir"),
            ("", "--registry"),
            ("", "--token"),
        ],
        meanings: &[
            ("", &["-p", "--package"]),
            ("", &["-r", "--release"]),
            ("", &["-q", "--quiet"]),
            ("", &["-v", "--verbose"]),
            ("", &["-j", "--jobs"]),
            ("", &["-F", "--features"]),
            ("", &["--workspace", "--all"]),
        ],
        aliases: &[
            ("b", "build"),
            ("c", "check"),
            ("t", "test"),
            ("r", "run"),
            ("d", "doc"),
            ("rm", "remove"),
        ],
        ..NONE
    },
    Program {
        names: &["npm"],
        subcommands: true,
        global_values: &["--prefix", "-C", "--dir", "--workspace", "-w"],
        values: &[
            ("", "--registry"),
            ("", "--tag"),
            ("", "--otp"),
            ("", "--access"),
        ],
        meanings: &[
            ("", &["-g", "--global"]),
            ("", &["-D", "--save-dev"]),
            ("", &["-E", "--save-exact"]),
            ("", &["-f", "--force"]),
            ("", &["-w", "--workspace"]),
        ],
        aliases: &[
            ("i", "install"),
            ("in", "install"),
            ("add", "install"),
            ("un", "uninstall"),
            ("rm", "uninstall"),
            ("r", "uninstall"),
            ("remove", "uninstall"),
            ("t", "test"),
            ("tst", "test"),
            ("run-script", "run"),
            ("rum", "run"),
            ("urn", "run"),
            ("x", "exec"),
            ("ci", "clean-install"),
        ],
        ..NONE
    },
    Program {
        names: &["pnpm"],
        subcommands: true,
        global_values: &["--prefix", "-C", "--dir", "--filter", "-F"],
        values: &[
            ("", "--filter"),
            ("", "-F"),
            ("", "--registry"),
            ("", "--tag"),
            ("", "--otp"),
            ("", "--access"),
        ],
        meanings: &[
            ("", &["-r", "--recursive"]),
            ("", &["-w", "--workspace-root"]),
            ("", &["-g", "--global"]),
            ("", &["-D", "--save-dev"]),
            ("", &["-F", "--filter"]),
        ],
        aliases: &[
            ("i", "install"),
            ("rm", "remove"),
            ("uninstall", "remove"),
            ("un", "remove"),
            ("t", "test"),
            ("run-script", "run"),
        ],
        ..NONE
    },
    Program {
        names: &["yarn"],
        subcommands: true,
        global_values: &["--cwd"],
        values: &[
            ("", "--registry"),
            ("", "--tag"),
            ("", "--otp"),
            ("", "--access"),
        ],
        meanings: &[
            ("", &["-D", "--dev"]),
            ("", &["-W", "--ignore-workspace-root-check"]),
        ],
        ..NONE
    },
    Program {
        names: &["docker", "podman"],
        subcommands: true,
        global_values: &[
            "-H",
            "--host",
            "--context",
            "-c",
            "--config",
            "-l",
            "--log-level",
            "--url",
            "--connection",
            "--root",
            "--runroot",
        ],
        values: &[
            ("run", "-v"),
            ("run", "--volume"),
            ("run", "-e"),
            ("run", "--env"),
            ("run", "-p"),
            ("run", "--publish"),
            ("run", "--name"),
            ("run", "-w"),
            ("run", "--workdir"),
            ("run", "-u"),
            ("run", "--user"),
            ("run", "--network"),
            ("run", "--entrypoint"),
            ("run", "--mount"),
            ("run", "--env-file"),
            ("run", "--platform"),
            ("exec", "-e"),
            ("exec", "--env"),
            ("exec", "-w"),
            ("exec", "--workdir"),
            ("exec", "-u"),
            ("exec", "--user"),
            ("build", "-f"),
            ("build", "--file"),
            ("build", "-t"),
            ("build", "--tag"),
            ("build", "--platform"),
            ("", "--filter"),
            ("", "--format"),
        ],
        meanings: &[
            ("run", &["-d", "--detach"]),
            ("run", &["-i", "--interactive"]),
            ("run", &["-t", "--tty"]),
            ("exec", &["-i", "--interactive"]),
            ("exec", &["-t", "--tty"]),
            ("rm", &["-f", "--force"]),
            ("rm", &["-v", "--volumes"]),
            ("rmi", &["-f", "--force"]),
            ("system", &["-a", "--all"]),
            ("system", &["-f", "--force"]),
            ("", &["-q", "--quiet"]),
        ],
        ..NONE
    },
    Program {
        names: &["kubectl"],
        subcommands: true,
        global_values: &[
            "-n",
            "--namespace",
            "--context",
            "--kubeconfig",
            "-s",
            "--server",
            "--cluster",
            "--user",
            "--token",
            "--as",
            "--as-group",
            "--request-timeout",
        ],
        globals_anywhere: true,
        values: &[
            ("", "-o"),
            ("", "--output"),
            ("", "-f"),
            ("", "--filename"),
            ("", "-l"),
            ("", "--selector"),
            ("", "-c"),
            ("", "--container"),
            ("", "--field-selector"),
            ("", "--grace-period"),
            ("", "--timeout"),
        ],
        meanings: &[
            ("", &["-A", "--all-namespaces"]),
            ("", &["-f", "--filename"]),
            ("", &["-R", "--recursive"]),
            ("", &["-l", "--selector"]),
            ("", &["-i", "--stdin"]),
            ("", &["-t", "--tty"]),
        ],
        ..NONE
    },
    Program {
        names: &["go"],
        subcommands: true,
        global_values: &["-C"],
        values: &[
            ("", "-o"),
            ("", "-run"),
            ("", "-tags"),
            ("", "-p"),
            ("", "-count"),
            ("", "-timeout"),
            ("", "-bench"),
        ],
        // `go test -run X`: single-dash long options, never clusters.
        clusters: false,
        ..NONE
    },
    Program {
        names: &["make", "gmake"],
        global_values: &[
            "-C",
            "--directory",
            "-f",
            "--file",
            "--makefile",
            "-I",
            "--include-dir",
            "-o",
            "--old-file",
            "--assume-old",
            "-W",
            "--what-if",
            "--new-file",
            "--assume-new",
        ],
        globals_anywhere: true,
        numeric_values: &["-j", "-l"],
        meanings: &[
            ("", &["-n", "--just-print", "--dry-run", "--recon"]),
            ("", &["-B", "--always-make"]),
            ("", &["-k", "--keep-going"]),
            ("", &["-s", "--silent", "--quiet"]),
            ("", &["-j", "--jobs"]),
            ("", &["-C", "--directory"]),
            ("", &["-f", "--file", "--makefile"]),
        ],
        ..NONE
    },
    Program {
        names: &["python", "python3", "python2"],
        global_values: &["-X", "-W", "--check-hash-based-pycs"],
        runs: &["-m", "-c"],
        // Options after `-m mod` are the module's: never split.
        clusters: false,
        ..NONE
    },
    Program {
        names: &["pip", "pip3"],
        subcommands: true,
        global_values: &[
            "--python",
            "--log",
            "--cache-dir",
            "--proxy",
            "--timeout",
            "--retries",
        ],
        values: &[
            ("", "-r"),
            ("", "--requirement"),
            ("", "-c"),
            ("", "--constraint"),
            ("", "-e"),
            ("", "--editable"),
            ("", "-i"),
            ("", "--index-url"),
            ("", "--extra-index-url"),
            ("", "-t"),
            ("", "--target"),
        ],
        meanings: &[
            ("install", &["-U", "--upgrade"]),
            ("install", &["-r", "--requirement"]),
            ("install", &["-e", "--editable"]),
            ("uninstall", &["-y", "--yes"]),
            ("", &["-q", "--quiet"]),
        ],
        ..NONE
    },
];
