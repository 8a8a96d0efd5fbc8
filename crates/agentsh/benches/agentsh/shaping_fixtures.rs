//! The fixture projects of the `shaping` group, built in a temp dir with no network: a git
//! repository with history, branches and uncommitted work; a Python project whose pytest suite
//! has failures; a Rust workspace with warnings and failing tests, and a copy of it that does not
//! compile; a node:test suite with failures; a C project built with make that warns and fails;
//! a source tree to search with `grep -rn` and `find`. Everything is generated from fixed data,
//! so two runs build the same projects (but for the temp dir's name).

// Kept as one file: the fixture projects' fixed data, one project after another.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// Writes `text` to `root/relative`, creating its folders.
pub(crate) fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(&path, text).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
}

/// Runs `program args` in `dir`, which must succeed.
fn run(dir: &Path, program: &str, args: &[&str], env: &[(&str, &str)]) {
    let status = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap_or_else(|err| panic!("{program}: {err}"));
    assert!(status.success(), "{program} {args:?} in {}", dir.display());
}

// --- git ------------------------------------------------------------------------------------

/// The commit messages of the git fixture, oldest first: a subject, then a body (maybe empty).
const COMMITS: &[(&str, &str)] = &[
    ("Initial project layout", ""),
    ("Add the item store with an in-memory backend", ""),
    (
        "Add a JSON API for listing items",
        "The API serves GET /items and GET /items/<sku>. Pagination follows the\n\
         usual limit/offset pair; the default page holds 50 items.",
    ),
    ("Read the configuration from inventory.toml", ""),
    ("Add a command line to import a CSV file", ""),
    (
        "Handle the error a missing SKU raises in the API",
        "A request for an unknown SKU used to end in a 500: the store raised\n\
         KeyError and nothing caught it. It now answers 404 with a JSON body\n\
         that names the SKU.",
    ),
    ("Document the configuration keys", ""),
    ("Round prices to cents when importing", ""),
    ("Add reservations to the store", ""),
    (
        "Keep reservations when an item is updated",
        "Updating an item replaced the whole record, reservations included, so\n\
         a price change released every hold on the item. The update now merges\n\
         the new fields into the record and leaves `reserved` alone.\n\
         \n\
         Found while testing the import of the spring catalogue: every held\n\
         item came back as available after the import ran.",
    ),
    ("Log the time each API request takes", ""),
    ("Fix failing test for negative quantities", ""),
    ("Add a SQLite backend for the store", ""),
    (
        "Move the backend choice into the configuration",
        "`store.backend = \"memory\" | \"sqlite\"`, with the SQLite path next to it.\n\
         The memory backend stays the default so the tests need no file.",
    ),
    ("Bump the schema version to 2", ""),
    ("Add an export command", ""),
    ("Validate quantities on import", ""),
    (
        "Retry a locked SQLite database before giving up",
        "Two importers running at once made the second fail at once with\n\
         \"database is locked\". It now waits up to five seconds, retrying every\n\
         100 ms, before it reports the failure.\n\
         \n\
         The wait is configurable as store.lock_timeout (seconds).\n\
         A value of 0 restores the old behaviour.",
    ),
    ("Add low-stock alerts", ""),
    ("Send alerts by email when configured", ""),
    ("Tidy the CLI help texts", ""),
    (
        "Stop the alert loop from sending duplicates",
        "The loop compared the new stock with the threshold only, so an item\n\
         below it triggered an alert on every pass. It now remembers what it\n\
         has reported and alerts again only once the item was restocked.",
    ),
    ("Add a health endpoint", ""),
    ("Cache item lookups for a second", ""),
    ("Speed up the CSV import by batching inserts", ""),
    (
        "Fix panic when the configuration file is empty",
        "An empty inventory.toml parsed to None and the loader indexed into it.\n\
         An empty file now means the defaults, as a missing one does.",
    ),
    ("Add the warehouse field to items", ""),
    ("Report import progress every 1000 rows", ""),
    (
        "Split the API module by resource",
        "api.py had grown past 600 lines. Items, reservations and alerts each\n\
         get a module; the routes are unchanged.\n\
         \n\
         No behaviour changes: the API tests pass untouched.",
    ),
    (
        "Add stock transfers between warehouses",
        "A transfer moves a quantity of one SKU from one warehouse to another\n\
         in one transaction: it fails as a whole when the source holds too\n\
         little, and records both movements in the ledger.\n\
         \n\
         POST /transfers takes {sku, from, to, quantity}; the CLI gains\n\
         `inventory transfer`. Reservations in the source warehouse count as\n\
         held: a transfer never takes reserved stock.",
    ),
];

/// The source files of the git fixture's project.
const GIT_FILES: &[&str] = &[
    "src/inventory/store.py",
    "src/inventory/api.py",
    "src/inventory/config.py",
    "src/inventory/cli.py",
    "src/inventory/alerts.py",
    "tests/test_store.py",
    "tests/test_api.py",
];

/// A function of the git fixture's project: the `n`th one written.
fn py_function(n: usize, words: &str) -> String {
    let name = words.to_lowercase().replace([' ', '-', '/', '.', '`'], "_");
    let name: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(40)
        .collect();
    format!(
        "\n\ndef {name}_{n}(store, item, quantity=1):\n    \
         \"\"\"{words}.\"\"\"\n    \
         if quantity <= 0:\n        \
         raise ValueError(\"quantity must be positive\")\n    \
         record = store.get(item.sku)\n    \
         record.quantity -= quantity\n    \
         store.put(record)\n    \
         log.info(\"{n}: %s now %d\", item.sku, record.quantity)\n    \
         return record\n"
    )
}

/// A git repository: 30 commits on `main` with realistic messages, two branches, and staged,
/// unstaged and untracked changes.
pub(crate) fn git_repo(dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let git = |args: &[&str], date: &str, author: (&str, &str)| {
        run(
            dir,
            "git",
            args,
            &[
                ("GIT_AUTHOR_NAME", author.0),
                ("GIT_AUTHOR_EMAIL", author.1),
                ("GIT_COMMITTER_NAME", author.0),
                ("GIT_COMMITTER_EMAIL", author.1),
                ("GIT_AUTHOR_DATE", date),
                ("GIT_COMMITTER_DATE", date),
                ("GIT_CONFIG_NOSYSTEM", "1"),
                ("GIT_CONFIG_GLOBAL", "/dev/null"),
            ],
        );
    };
    let authors = [
        ("Ann Lindqvist", "ann@example.com"),
        ("Bo Chen", "bo.chen@example.com"),
        ("Carla Mendes", "carla@example.com"),
    ];
    let date = |i: usize| format!("2025-03-{:02}T{:02}:17:00+0100", 1 + i / 2, 9 + (i % 2) * 5);
    git(&["init", "-q", "-b", "main"], &date(0), authors[0]);
    let mut files: BTreeMap<&str, String> = GIT_FILES
        .iter()
        .map(|path| {
            let head = if path.starts_with("tests/") {
                "import pytest\n\nfrom inventory import store\n".to_owned()
            } else {
                "import logging\n\nlog = logging.getLogger(__name__)\n".to_owned()
            };
            (*path, head)
        })
        .collect();
    write(
        dir,
        "README.md",
        "# inventory\n\nStock, reservations and transfers for small warehouses.\n",
    );
    let commit = |i: usize, subject: &str, body: &str, files: &BTreeMap<&str, String>| {
        for (path, text) in files {
            write(dir, path, text);
        }
        let message = if body.is_empty() {
            subject.to_owned()
        } else {
            format!("{subject}\n\n{body}")
        };
        git(&["add", "-A"], &date(i), authors[i % 3]);
        git(&["commit", "-q", "-m", &message], &date(i), authors[i % 3]);
    };
    for (i, (subject, body)) in COMMITS.iter().enumerate() {
        // Each commit adds a function to one or two files, and the big ones (a body of 5 lines or
        // more) change a third file too; every fourth one edits a line it wrote before.
        let first = GIT_FILES[i % GIT_FILES.len()];
        files
            .get_mut(first)
            .expect("a file")
            .push_str(&py_function(i, subject));
        if body.lines().count() >= 3 {
            let second = GIT_FILES[(i + 3) % GIT_FILES.len()];
            files
                .get_mut(second)
                .expect("a file")
                .push_str(&py_function(i + 100, subject));
        }
        if body.lines().count() >= 5 {
            let third = GIT_FILES[(i + 5) % GIT_FILES.len()];
            files
                .get_mut(third)
                .expect("a file")
                .push_str(&py_function(i + 200, "Record the movement in the ledger"));
        }
        if i % 4 == 3 {
            let text = files.get_mut(first).expect("a file");
            *text = text.replacen("quantity=1)", "quantity=1, *, dry_run=False)", 1);
        }
        commit(i, subject, body, &files);
        if i == 24 {
            git(&["branch", "feature/bulk-import"], &date(i), authors[0]);
            git(&["branch", "fix/rounding"], &date(i), authors[0]);
        }
    }
    // Work in progress: a staged change, unstaged edits in three files (several hunks), a
    // deleted file, untracked files.
    let store = files["src/inventory/store.py"]
        .replacen(
            "record.quantity -= quantity",
            "record.quantity -= quantity\n    record.touched = True",
            2,
        )
        .replacen("log.info(", "log.debug(", 3);
    write(dir, "src/inventory/store.py", &store);
    let api = files["src/inventory/api.py"].replacen(
        "raise ValueError(\"quantity must be positive\")",
        "raise ValueError(f\"quantity must be positive, got {quantity}\")",
        2,
    );
    write(dir, "src/inventory/api.py", &api);
    let config = format!(
        "{}{}",
        files["src/inventory/config.py"],
        py_function(300, "Read the transfer limits from the configuration")
    );
    write(dir, "src/inventory/config.py", &config);
    git(&["add", "src/inventory/config.py"], &date(30), authors[0]);
    let alerts = files["tests/test_api.py"].replacen("quantity=1", "quantity=2", 4);
    write(dir, "tests/test_api.py", &alerts);
    std::fs::remove_file(dir.join("README.md")).expect("rm README.md");
    write(
        dir,
        "src/inventory/transfers.py",
        &py_function(301, "Plan a transfer"),
    );
    write(dir, "notes.txt", "ask Bo about the ledger format\n");
    write(
        dir,
        "scripts/seed.sh",
        "#!/bin/sh\ninventory import data/seed.csv\n",
    );
}

// --- Python ---------------------------------------------------------------------------------

/// A Python project with 60 pytest tests, 3 of them failing.
pub(crate) fn python_project(dir: &Path) {
    write(
        dir,
        "shop/pricing.py",
        "\"\"\"Prices, discounts and taxes.\"\"\"\n\n\
         RATES = {\"standard\": 0.2, \"reduced\": 0.05, \"zero\": 0.0}\n\n\n\
         def net(cents, quantity):\n    return cents * quantity\n\n\n\
         def discount(cents, percent):\n    return cents - cents * percent // 100\n\n\n\
         def tax(cents, rate):\n    return round(cents * RATES[rate])\n\n\n\
         def gross(cents, quantity, rate=\"standard\"):\n    \
         subtotal = net(cents, quantity)\n    return subtotal + tax(subtotal, rate)\n",
    );
    write(
        dir,
        "shop/cart.py",
        "\"\"\"A shopping cart.\"\"\"\n\nfrom shop import pricing\n\n\n\
         class Cart:\n    def __init__(self):\n        self.lines = {}\n\n    \
         def add(self, sku, cents, quantity=1):\n        \
         line = self.lines.setdefault(sku, {\"cents\": cents, \"quantity\": 0})\n        \
         line[\"quantity\"] += quantity\n\n    \
         def remove(self, sku):\n        del self.lines[sku]\n\n    \
         def total(self, rate=\"standard\"):\n        return sum(\n            \
         pricing.gross(line[\"cents\"], line[\"quantity\"], rate) for line in self.lines.values()\n        )\n\n    \
         def summary(self):\n        \
         return {sku: line[\"quantity\"] for sku, line in self.lines.items()}\n",
    );
    write(dir, "shop/__init__.py", "");
    write(
        dir,
        "pyproject.toml",
        "[project]\nname = \"shop\"\nversion = \"0.3.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
    );
    let mut pricing = String::from("from shop import pricing\n");
    for n in 1..=22u64 {
        let (cents, quantity) = (100 * n + 99, n % 4 + 1);
        let _ = write!(
            pricing,
            "\n\ndef test_net_{n}():\n    assert pricing.net({cents}, {quantity}) == {}\n",
            cents * quantity
        );
    }
    for n in 1..=10u64 {
        let cents = 1000 * n;
        // test_discount_7 expects the discount rounded the other way: it fails.
        let want = if n == 7 {
            cents - cents * 15 / 100 + 1
        } else {
            cents - cents * 15 / 100
        };
        let _ = write!(
            pricing,
            "\n\ndef test_discount_{n}():\n    assert pricing.discount({cents}, 15) == {want}\n"
        );
    }
    for rate in ["standard", "reduced", "zero"] {
        let _ = write!(
            pricing,
            "\n\ndef test_tax_{rate}():\n    assert pricing.tax(1000, \"{rate}\") >= 0\n"
        );
    }
    // An unknown rate raises KeyError in the code under test.
    pricing.push_str(
        "\n\ndef test_tax_super_reduced():\n    assert pricing.tax(1000, \"super-reduced\") == 21\n",
    );
    write(dir, "tests/test_pricing.py", &pricing);
    let mut cart = String::from(
        "import pytest\n\nfrom shop.cart import Cart\n\n\n@pytest.fixture\ndef cart():\n    c = Cart()\n    c.add(\"A-1\", 250, 2)\n    c.add(\"B-2\", 1000)\n    return c\n",
    );
    for n in 1..=12u64 {
        let _ = write!(
            cart,
            "\n\ndef test_add_{n}(cart):\n    cart.add(\"C-{n}\", {}, {n})\n    assert cart.summary()[\"C-{n}\"] == {n}\n",
            100 + n
        );
    }
    for n in 1..=8u64 {
        let _ = write!(
            cart,
            "\n\ndef test_total_{n}(cart):\n    cart.add(\"D-{n}\", 100, {n})\n    assert cart.total(\"zero\") == {}\n",
            1500 + 100 * n
        );
    }
    cart.push_str(
        "\n\ndef test_remove_then_add(cart):\n    cart.remove(\"A-1\")\n    cart.add(\"A-1\", 250)\n    \
         assert cart.summary() == {\"A-1\": 2, \"B-2\": 1}\n",
    );
    cart.push_str(
        "\n\ndef test_remove_missing(cart):\n    with pytest.raises(KeyError):\n        cart.remove(\"Z-9\")\n",
    );
    cart.push_str("\n\ndef test_empty_total():\n    assert Cart().total() == 0\n");
    cart.push_str(
        "\n\ndef test_summary_is_a_copy(cart):\n    cart.summary()[\"A-1\"] = 99\n    assert cart.summary()[\"A-1\"] == 2\n",
    );
    write(dir, "tests/test_cart.py", &cart);
}

// --- Rust -----------------------------------------------------------------------------------

/// A Rust workspace of four crates linked by path dependencies (no registry), ~40 tests of which
/// 2 fail, with warnings; `broken` adds two compile errors to the last crate.
pub(crate) fn rust_workspace(dir: &Path, broken: bool) {
    write(
        dir,
        "Cargo.toml",
        "[workspace]\nresolver = \"2\"\nmembers = [\"ledger-core\", \"ledger-parse\", \"ledger-report\", \"ledger-store\"]\n",
    );
    let manifest = |name: &str, deps: &[&str]| {
        let deps = deps.iter().fold(String::new(), |mut out, d| {
            let _ = writeln!(out, "{d} = {{ path = \"../{d}\" }}");
            out
        });
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.4.1\"\nedition = \"2021\"\n\n[dependencies]\n{deps}"
        )
    };
    write(dir, "ledger-core/Cargo.toml", &manifest("ledger-core", &[]));
    write(
        dir,
        "ledger-parse/Cargo.toml",
        &manifest("ledger-parse", &["ledger-core"]),
    );
    write(
        dir,
        "ledger-store/Cargo.toml",
        &manifest("ledger-store", &["ledger-core"]),
    );
    write(
        dir,
        "ledger-report/Cargo.toml",
        &manifest("ledger-report", &["ledger-core", "ledger-store"]),
    );
    let mut core = String::from(
        "//! Amounts and accounts.\n\n\
         /// An amount in cents.\n#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]\npub struct Cents(pub i64);\n\n\
         impl Cents {\n    /// The sum of two amounts.\n    pub fn plus(self, other: Cents) -> Cents {\n        Cents(self.0 + other.0)\n    }\n\n    \
         /// This amount split into `parts` shares, the remainder on the first.\n    \
         pub fn split(self, parts: i64) -> Vec<Cents> {\n        let share = self.0 / parts;\n        \
         let mut shares = vec![Cents(share); parts as usize];\n        shares[0].0 += self.0 - share * parts;\n        shares\n    }\n}\n\n\
         #[cfg(test)]\nmod tests {\n    use super::*;\n",
    );
    for n in 1..=10i64 {
        let _ = write!(
            core,
            "\n    #[test]\n    fn split_{n}_ways() {{\n        let shares = Cents(1000).split({n});\n        \
             assert_eq!(shares.iter().map(|c| c.0).sum::<i64>(), 1000);\n    }}\n"
        );
    }
    core.push_str("}\n");
    write(dir, "ledger-core/src/lib.rs", &core);
    let mut parse = String::from(
        "//! Parsing ledger lines: `2025-03-01 rent -120000`.\n\n\
         use ledger_core::Cents;\nuse std::collections::HashMap;\n\n\
         /// One parsed line.\n#[derive(Debug, PartialEq)]\npub struct Entry {\n    /// The date, as written.\n    pub date: String,\n    \
         /// The account.\n    pub account: String,\n    /// The amount.\n    pub amount: Cents,\n}\n\n\
         /// Parses one line.\npub fn parse(line: &str) -> Option<Entry> {\n    let mut parts = line.split_whitespace();\n    \
         let date = parts.next()?.to_owned();\n    let account = parts.next()?.to_owned();\n    \
         let amount = Cents(parts.next()?.parse().ok()?);\n    let extra = parts.next();\n    \
         Some(Entry { date, account, amount })\n}\n\n\
         fn legacy_format(line: &str) -> bool {\n    line.contains(';')\n}\n\n\
         #[cfg(test)]\nmod tests {\n    use super::*;\n",
    );
    for n in 1..=10 {
        let _ = write!(
            parse,
            "\n    #[test]\n    fn parses_line_{n}() {{\n        \
             let entry = parse(\"2025-03-{n:02} acct{n} -{n}00\").unwrap();\n        \
             assert_eq!(entry.amount, Cents(-{n}00));\n    }}\n"
        );
    }
    parse.push_str("}\n");
    write(dir, "ledger-parse/src/lib.rs", &parse);
    let mut store = String::from(
        "//! Balances by account.\n\nuse ledger_core::Cents;\nuse std::collections::BTreeMap;\n\n\
         /// Balances by account.\n#[derive(Default)]\npub struct Store {\n    balances: BTreeMap<String, Cents>,\n}\n\n\
         impl Store {\n    /// Books `amount` on `account`.\n    pub fn book(&mut self, account: &str, amount: Cents) {\n        \
         let balance = self.balances.entry(account.to_owned()).or_insert(Cents(0));\n        *balance = balance.plus(amount);\n    }\n\n    \
         /// The balance of `account`.\n    pub fn balance(&self, account: &str) -> Cents {\n        \
         self.balances.get(account).copied().unwrap_or(Cents(0))\n    }\n\n    \
         /// Moves `amount` from one account to another; refused when `from` holds too little.\n    \
         pub fn transfer(&mut self, from: &str, to: &str, amount: Cents) -> Result<(), String> {\n        \
         if self.balance(from) < amount {\n            return Err(format!(\"{from} holds too little\"));\n        }\n        \
         self.book(from, Cents(-amount.0));\n        self.book(to, amount);\n        Ok(())\n    }\n}\n\n\
         #[cfg(test)]\nmod tests {\n    use super::*;\n",
    );
    for n in 1..=9 {
        let _ = write!(
            store,
            "\n    #[test]\n    fn books_{n}_times() {{\n        let mut store = Store::default();\n        \
             for _ in 0..{n} {{\n            store.book(\"cash\", Cents(250));\n        }}\n        \
             assert_eq!(store.balance(\"cash\"), Cents({}));\n    }}\n",
            250 * n
        );
    }
    store.push_str(
        "\n    #[test]\n    fn transfer_moves_the_amount() {\n        let mut store = Store::default();\n        \
         store.book(\"cash\", Cents(1000));\n        store.transfer(\"cash\", \"bank\", Cents(400)).unwrap();\n        \
         assert_eq!(store.balance(\"cash\"), Cents(600));\n        assert_eq!(store.balance(\"bank\"), Cents(500));\n    }\n\
         \n    #[test]\n    fn transfer_of_everything_is_allowed() {\n        let mut store = Store::default();\n        \
         store.book(\"cash\", Cents(1000));\n        store.transfer(\"cash\", \"bank\", Cents(1001)).expect(\"the whole balance may move\");\n    }\n",
    );
    store.push_str("}\n");
    write(dir, "ledger-store/src/lib.rs", &store);
    let mut report = String::from(
        "//! Reports over a store.\n\nuse ledger_core::Cents;\nuse ledger_store::Store;\n\n\
         /// One line per account: `name: balance`.\npub fn balances(store: &Store, accounts: &[&str]) -> String {\n    \
         let mut out = String::new();\n    for account in accounts {\n        \
         out.push_str(&format!(\"{account}: {}\\n\", store.balance(account).0));\n    }\n    out\n}\n",
    );
    if broken {
        report.push_str(
            "\n/// The total of `accounts`.\npub fn total(store: &Store, accounts: &[&str]) -> Cents {\n    \
             let mut sum: i64 = Cents(0);\n    for account in accounts {\n        sum = sum.plus(store.balance(account));\n    }\n    \
             sum\n}\n\n/// The average balance.\npub fn average(store: &Store, accounts: &[&str]) -> Cents {\n    \
             Cents(total(store, accounts).0 / count)\n}\n",
        );
    }
    report.push_str("\n#[cfg(test)]\nmod tests {\n    use super::*;\n");
    for n in 1..=10 {
        let _ = write!(
            report,
            "\n    #[test]\n    fn reports_{n}_accounts() {{\n        let store = Store::default();\n        \
             let names: Vec<String> = (0..{n}).map(|i| format!(\"a{{i}}\")).collect();\n        \
             let names: Vec<&str> = names.iter().map(String::as_str).collect();\n        \
             assert_eq!(balances(&store, &names).lines().count(), {n});\n    }}\n"
        );
    }
    report.push_str("}\n");
    write(dir, "ledger-report/src/lib.rs", &report);
}

// --- node -----------------------------------------------------------------------------------

/// A node:test suite: 40 tests in four files, 2 failing.
pub(crate) fn node_suite(dir: &Path) {
    write(
        dir,
        "package.json",
        "{\n  \"name\": \"slugs\",\n  \"version\": \"1.2.0\",\n  \"type\": \"module\",\n  \"scripts\": { \"test\": \"node --test\" }\n}\n",
    );
    write(
        dir,
        "src/slug.js",
        "export function slug(text) {\n  return text\n    .toLowerCase()\n    .normalize('NFKD')\n    \
         .replace(/[\\u0300-\\u036f]/g, '')\n    .replace(/[^a-z0-9]+/g, '-')\n    .replace(/^-|-$/g, '');\n}\n\n\
         export function truncate(text, max) {\n  return text.length <= max ? text : text.slice(0, max - 1) + '…';\n}\n\n\
         export function words(text) {\n  return text.split(/\\s+/).filter(Boolean);\n}\n",
    );
    let slugs = [
        ("Hello World", "hello-world"),
        ("  padded  ", "padded"),
        ("Crème brûlée", "creme-brulee"),
        ("a--b", "a-b"),
        ("Über", "uber"),
        ("C++ & Rust", "c-rust"),
        ("2025 plans", "2025-plans"),
        ("snake_case_name", "snake-case-name"),
        ("ALL CAPS", "all-caps"),
        ("dots.in.name", "dots-in-name"),
    ];
    let mut slug = String::from(
        "import { describe, it } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { slug } from '../src/slug.js';\n\ndescribe('slug', () => {\n",
    );
    for (input, want) in slugs {
        let _ = write!(
            slug,
            "  it('turns {input:?} into {want}', () => {{\n    assert.equal(slug({input:?}), {want:?});\n  }});\n"
        );
    }
    slug.push_str("});\n");
    write(dir, "test/slug.test.js", &slug);
    let mut truncate = String::from(
        "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { truncate } from '../src/slug.js';\n",
    );
    for n in 1..=10usize {
        let text = "abcdefghijklmnop";
        let want = if n == 4 {
            // Expects the ellipsis inside the limit to be three dots: fails.
            format!("{}...", &text[..n])
        } else if text.len() <= n + 5 {
            text.to_owned()
        } else {
            format!("{}…", &text[..n + 4])
        };
        let _ = write!(
            truncate,
            "\ntest('truncate to {} characters', () => {{\n  assert.equal(truncate('{text}', {}), '{want}');\n}});\n",
            n + 5,
            n + 5
        );
    }
    write(dir, "test/truncate.test.js", &truncate);
    let mut words = String::from(
        "import { describe, it } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { words } from '../src/slug.js';\n\ndescribe('words', () => {\n",
    );
    for n in 1..=10usize {
        let text: Vec<String> = (0..n).map(|i| format!("w{i}")).collect();
        let want = if n == 6 {
            // Expects the tab to be a word: fails.
            format!("{:?}", [text.clone(), vec!["\t".to_owned()]].concat())
        } else {
            format!("{text:?}")
        };
        let input = if n == 6 {
            format!("{} \t", text.join(" "))
        } else {
            text.join("  ")
        };
        let _ = write!(
            words,
            "  it('splits {n} words', () => {{\n    assert.deepEqual(words({input:?}), {want});\n  }});\n"
        );
    }
    words.push_str("});\n");
    write(dir, "test/words.test.js", &words);
    let mut more = String::from(
        "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { slug, words } from '../src/slug.js';\n",
    );
    for n in 1..=10usize {
        let _ = write!(
            more,
            "\ntest('slug of {n} words has {} dashes', () => {{\n  const text = Array.from({{ length: {n} }}, (_, i) => 'Word' + i).join(' ');\n  \
             assert.equal(slug(text).split('-').length, words(text).length);\n}});\n",
            n - 1
        );
    }
    write(dir, "test/roundtrip.test.js", &more);
}

// --- C --------------------------------------------------------------------------------------

/// A C project built by make with gcc: six files, one with warnings, the last with an error.
pub(crate) fn c_project(dir: &Path) {
    write(
        dir,
        "Makefile",
        "CC = gcc\nCFLAGS = -Wall -Wextra -O2 -Iinclude\n\
         OBJS = build/buffer.o build/hash.o build/list.o build/config.o build/main.o build/parser.o\n\n\
         all: build/app\n\nbuild/app: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n\n\
         build/%.o: src/%.c include/app.h | build\n\t$(CC) $(CFLAGS) -c $< -o $@\n\n\
         build:\n\tmkdir -p build\n\nclean:\n\trm -rf build\n\n.PHONY: all clean\n",
    );
    write(
        dir,
        "include/app.h",
        "#ifndef APP_H\n#define APP_H\n#include <stddef.h>\n\n\
         typedef struct { char *data; size_t len, cap; } buffer;\n\
         void buffer_push(buffer *b, char c);\nunsigned long hash(const char *s);\n\
         struct node { struct node *next; const char *key; };\nsize_t list_len(const struct node *n);\n\
         int config_load(const char *path);\nint parse_line(const char *line, int *out);\n#endif\n",
    );
    write(
        dir,
        "src/buffer.c",
        "#include <stdlib.h>\n#include \"app.h\"\n\nvoid buffer_push(buffer *b, char c) {\n    \
         if (b->len == b->cap) {\n        b->cap = b->cap ? b->cap * 2 : 16;\n        b->data = realloc(b->data, b->cap);\n    }\n    \
         b->data[b->len++] = c;\n}\n",
    );
    write(
        dir,
        "src/hash.c",
        "#include \"app.h\"\n\nunsigned long hash(const char *s) {\n    unsigned long h = 5381;\n    \
         while (*s)\n        h = h * 33 + (unsigned char)*s++;\n    return h;\n}\n",
    );
    write(
        dir,
        "src/list.c",
        "#include \"app.h\"\n\nsize_t list_len(const struct node *n) {\n    size_t len = 0;\n    \
         for (; n; n = n->next)\n        len++;\n    return len;\n}\n",
    );
    write(
        dir,
        "src/config.c",
        "#include <stdio.h>\n#include <string.h>\n#include \"app.h\"\n\nint config_load(const char *path) {\n    \
         FILE *f = fopen(path, \"r\");\n    char line[256];\n    int count = 0, unused;\n    \
         if (!f)\n        return -1;\n    while (fgets(line, sizeof line, f)) {\n        \
         for (int i = 0; i < strlen(line); i++)\n            if (line[i] == '=')\n                count++;\n    }\n    \
         fclose(f);\n    return count;\n}\n",
    );
    write(
        dir,
        "src/main.c",
        "#include <stdio.h>\n#include \"app.h\"\n\nint main(int argc, char **argv) {\n    \
         int n = config_load(argc > 1 ? argv[1] : \"app.conf\");\n    printf(\"%d keys, hash %lu\\n\", n, hash(\"app\"));\n    \
         return 0;\n}\n",
    );
    write(
        dir,
        "src/parser.c",
        "#include <stdlib.h>\n#include \"app.h\"\n\nint parse_line(const char *line, int *out) {\n    \
         char *end;\n    long value = strtol(line, &end, 10);\n    if (end == line)\n        return -1;\n    \
         *out = (int)valu;\n    return 0;\n}\n",
    );
}

// --- file tree ------------------------------------------------------------------------------

/// The packages of the source tree.
const PACKAGES: &[&str] = &[
    "api", "auth", "billing", "catalog", "core", "db", "events", "search", "storage", "utils",
];

/// The modules of each package.
const MODULES: &[&str] = &[
    "__init__",
    "models",
    "service",
    "views",
    "schemas",
    "errors",
    "tasks",
    "handlers",
    "helpers",
    "constants",
    "validators",
    "serializers",
];

/// A source tree of ~200 files (Python packages with tests, a JS frontend, docs) in which
/// `logger` occurs ~200 times.
pub(crate) fn file_tree(dir: &Path) {
    let mut matches = 0;
    for (p, package) in PACKAGES.iter().enumerate() {
        for (m, module) in MODULES.iter().enumerate() {
            let mut text = String::new();
            // Two modules in three log: the import line, then one or two calls.
            let logs = (p + m) % 3;
            if logs > 0 {
                text.push_str("import logging\n\nlogger = logging.getLogger(__name__)\n");
                matches += 1;
            }
            for f in 0..4 {
                let _ = write!(
                    text,
                    "\n\ndef {module}_{f}(request, *args):\n    \"\"\"{package}.{module}, step {f}.\"\"\"\n"
                );
                if f < logs {
                    let _ = writeln!(
                        text,
                        "    logger.info(\"{package}.{module}_{f} handling %s\", request.id)"
                    );
                    matches += 1;
                }
                text.push_str("    return None\n");
            }
            write(dir, &format!("src/app/{package}/{module}.py"), &text);
        }
        for t in ["test_models", "test_service", "test_views"] {
            write(
                dir,
                &format!("tests/{package}/{t}.py"),
                &format!(
                    "from app.{package} import models\n\n\ndef {t}_ok(caplog):\n    \
                     models.models_0(None)\n    assert caplog.records == []\n"
                ),
            );
        }
        write(dir, &format!("tests/{package}/__init__.py"), "");
    }
    for (c, component) in [
        "App",
        "Header",
        "Footer",
        "Cart",
        "ProductList",
        "ProductCard",
        "Search",
        "Login",
        "Checkout",
        "Orders",
        "Profile",
        "Settings",
        "Modal",
        "Toast",
        "Sidebar",
    ]
    .iter()
    .enumerate()
    {
        let mut text = format!(
            "import {{ logger }} from '../lib/logger.js';\n\nexport function {component}(props) {{\n"
        );
        matches += 1;
        if c % 2 == 0 {
            let _ = writeln!(text, "  logger.debug('render {component}', props);");
            matches += 1;
        }
        text.push_str("  return null;\n}\n");
        write(dir, &format!("web/src/components/{component}.js"), &text);
    }
    write(
        dir,
        "web/src/lib/logger.js",
        "export const logger = console;\n",
    );
    for doc in [
        "index",
        "install",
        "configuration",
        "api",
        "logging",
        "deploy",
    ] {
        write(
            dir,
            &format!("docs/{doc}.md"),
            &format!("# {doc}\n\nSee the code for details.\n"),
        );
    }
    write(dir, "README.md", "# app\n\nA service.\n");
    write(
        dir,
        "setup.py",
        "from setuptools import setup\n\nsetup(name=\"app\")\n",
    );
    assert!(
        (170..=230).contains(&matches),
        "{matches} matches of logger"
    );
}

/// A tree of `files` files whose lines all match `logger`, for the speed row: `grep -rn logger
/// .` prints them all, about `bytes` in all (the exact count is returned).
pub(crate) fn big_tree(dir: &Path, files: usize, bytes: u64) -> u64 {
    use std::io::Write;
    let mut printed = 0;
    for f in 0..files {
        let relative = format!("src/mod{f:03}/handlers.py");
        let path = dir.join(&relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
        let mut n = 0;
        while printed < bytes * (f as u64 + 1) / files as u64 {
            n += 1;
            let line = format!(
                "    logger.info(\"handler {f}.{n} took %d ms for request %s\", elapsed, request.id)"
            );
            writeln!(out, "{line}").expect("write");
            // What grep prints: `./<path>:<n>:<line>\n`.
            printed += format!("./{relative}:{n}:{line}\n").len() as u64;
        }
        out.flush().expect("flush");
    }
    printed
}
