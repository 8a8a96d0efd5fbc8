#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod engine;
mod filters;
mod select;
mod shapers;

pub use engine::{Label, MAX_CONTEXT, Run, Shaped, Shaper, Verdict, is_diagnostic};
pub use filters::{Filter, FilterConfig, FilterError};
pub use select::{Target, select};

/// Outputs smaller than this are never shaped (a user filter may set its own `min_bytes`).
pub const MIN_BYTES: u64 = 1024;

/// The shapers a session uses: the built-in ones, its user filters (which replace a built-in
/// shaper for the same program and subcommand) and the programs it never shapes.
#[derive(Debug, Clone, Default)]
pub struct Shaping {
    filters: Vec<Filter>,
    except: Vec<String>,
}

/// What a shaped command line will be shaped with: made before it runs, used once its output
/// is known (each [`run`](Plan::run) with a fresh shaper).
#[derive(Debug)]
pub struct Plan {
    name: String,
    target: Target,
    /// The user's filter that shapes it, else the built-in shaper for `target`.
    filter: Option<Filter>,
    min_bytes: u64,
    /// Its shaper leaves no line out (a listing: grep, find, ls).
    keeps_every_line: bool,
}

impl Shaping {
    /// Shaping with user `filters` (checked at load), never for the programs in `except`.
    pub fn new(filters: Vec<Filter>, except: Vec<String>) -> Self {
        Self { filters, except }
    }

    /// How `command`'s output will be shaped, or `None` when it is not (not one plain command
    /// of a program, a format asked for, a program in `except`, no shaper for it).
    pub fn plan(&self, command: &str) -> Option<Plan> {
        let target = select(command)?;
        if self.except.contains(&target.program) {
            return None;
        }
        if let Some(filter) = self.filters.iter().find(|f| f.applies(&target)) {
            return Some(Plan {
                name: filter.name(),
                min_bytes: filter.min_bytes(),
                filter: Some(filter.clone()),
                target,
                keeps_every_line: false,
            });
        }
        let keeps_every_line = shapers::builtin(&target)?.keeps_every_line();
        Some(Plan {
            name: target.name(),
            target,
            filter: None,
            min_bytes: MIN_BYTES,
            keeps_every_line,
        })
    }
}

/// Keeps every line: what a plan runs should its built-in shaper be gone (it never is).
struct KeepAll;

impl Shaper for KeepAll {
    fn line(&mut self, _: &str) -> Verdict<'_> {
        Verdict::Keep
    }
}

/// Raw bytes read from the end of an output before the rest is shaped in one pass: a listing
/// whose shaped text this much of its end fills is shaped from it alone.
const WINDOW_FACTOR: u64 = 4;

/// What a whole output is read in.
const READ_BYTES: usize = 256 * 1024;

impl Plan {
    /// `<program>[ <subcommand>]`: what results name as shaped.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Outputs smaller than this are not shaped.
    pub fn min_bytes(&self) -> u64 {
        self.min_bytes
    }

    /// Starts shaping an output with a fresh shaper; the text kept is at most `max_bytes`
    /// (its end).
    pub fn run(&self, max_bytes: usize) -> Run {
        let shaper: Box<dyn Shaper> = match &self.filter {
            Some(filter) => Box::new(filter.shaper()),
            None => shapers::builtin(&self.target).unwrap_or_else(|| Box::new(KeepAll)),
        };
        Run::new(shaper, max_bytes)
    }

    /// Shapes a whole output kept in `file` (`total_bytes` bytes, `total_lines` lines of
    /// sanitised text, as an artifact holds it) in one streaming pass. A listing's output
    /// (whose shaper leaves no line out) over four times `max_bytes` is shaped from its end
    /// when that alone fills the text: the text is then the one the whole pass would make.
    pub fn shape_file<F: std::io::Read + std::io::Seek>(
        &self,
        file: &mut F,
        total_bytes: u64,
        total_lines: u64,
        max_bytes: usize,
    ) -> std::io::Result<Shaped> {
        use std::io::{Read, SeekFrom};
        let window = (max_bytes as u64).saturating_mul(WINDOW_FACTOR);
        if self.keeps_every_line && total_bytes > window {
            file.seek(SeekFrom::Start(total_bytes - window))?;
            let mut end = Vec::new();
            (&mut *file).take(window).read_to_end(&mut end)?;
            // From the first whole line of the window.
            if let Some(at) = memchr::memchr(b'\n', &end) {
                let text = String::from_utf8_lossy(&end[at + 1..]);
                let mut run = self.run(max_bytes);
                run.push(&text);
                if run.cut_lines() > 0 {
                    let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64
                        + u64::from(!text.is_empty() && !text.ends_with('\n'));
                    let bytes = total_bytes - text.len() as u64;
                    run.skipped_before(total_lines.saturating_sub(lines), bytes);
                    return Ok(run.finish());
                }
            }
        }
        file.seek(SeekFrom::Start(0))?;
        let mut run = self.run(max_bytes);
        read_text(file, |text| run.push(text))?;
        Ok(run.finish())
    }
}

/// Reads `file` (UTF-8 text, as the sink wrote it) in pieces that end on character boundaries.
fn read_text<F: std::io::Read>(file: &mut F, mut on_text: impl FnMut(&str)) -> std::io::Result<()> {
    let mut buf = vec![0u8; READ_BYTES];
    let mut held = 0;
    loop {
        let n = file.read(&mut buf[held..])?;
        if n == 0 {
            if held > 0 {
                on_text(&String::from_utf8_lossy(&buf[..held]));
            }
            return Ok(());
        }
        let end = held + n;
        let valid = match std::str::from_utf8(&buf[..end]) {
            Ok(_) => end,
            // An incomplete character at the end waits for the next read.
            Err(err) if err.error_len().is_none() => err.valid_up_to(),
            Err(_) => {
                on_text(&String::from_utf8_lossy(&buf[..end]));
                held = 0;
                continue;
            }
        };
        if let Ok(text) = std::str::from_utf8(&buf[..valid]) {
            on_text(text);
        }
        buf.copy_within(valid..end, 0);
        held = end - valid;
    }
}

/// The closing line of a shaped result: `[Shaped output of <name>: <N> of <T> lines left out;
/// full output: artifact://ID]`.
pub fn closing_line(name: &str, shaped: &Shaped, artifact_id: &str) -> String {
    format!(
        "[Shaped output of {name}: {} of {} lines left out; full output: artifact://{artifact_id}]",
        shaped.left_out(),
        shaped.raw_lines
    )
}

/// Shapes a whole output at once with the shaper `command` would get (tests, benches and the
/// docs' examples); `None` when it is not shaped.
pub fn shape_text(
    shaping: &Shaping,
    command: &str,
    output: &str,
    max_bytes: usize,
) -> Option<Shaped> {
    let plan = shaping.plan(command)?;
    let mut run = plan.run(max_bytes);
    run.push(output);
    Some(run.finish())
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;
    use std::io::Cursor;

    use super::*;

    /// `grep -rn`-like output: files of 1 to 30 matches, some lines long.
    fn listing(lines: usize) -> String {
        let mut out = String::new();
        let (mut file, mut left) = (0, 0);
        for n in 0..lines {
            if left == 0 {
                file += 1;
                left = 1 + (file * 7) % 30;
            }
            left -= 1;
            let pad = "x".repeat((n * 13) % 90);
            let dir = file % 5;
            writeln!(out, "src/dir{dir}/file{file}.rs:{n}:    let v = {pad};").unwrap();
        }
        out
    }

    #[test]
    fn a_listing_shaped_from_its_end_is_what_the_whole_pass_makes() {
        let shaping = Shaping::default();
        for (lines, max_bytes) in [(5_000, 2_000), (20_000, 51_200), (3_000, 100), (40, 200)] {
            let output = listing(lines);
            let whole = shape_text(&shaping, "grep -rn v src", &output, max_bytes).unwrap();
            let plan = shaping.plan("grep -rn v src").unwrap();
            let total_lines = output.lines().count() as u64;
            let from_file = plan
                .shape_file(
                    &mut Cursor::new(output.as_bytes()),
                    output.len() as u64,
                    total_lines,
                    max_bytes,
                )
                .unwrap();
            assert_eq!(from_file, whole, "{lines} lines, {max_bytes} bytes");
            assert_eq!(from_file.raw_lines, total_lines);
        }
    }

    #[test]
    fn a_shaper_that_leaves_lines_out_reads_the_whole_file() {
        let shaping = Shaping::default();
        let mut output = "   Compiling x v0.1.0\n".repeat(20_000);
        output.push_str("error: the last line says it\n");
        let plan = shaping.plan("cargo build").unwrap();
        let shaped = plan
            .shape_file(
                &mut Cursor::new(output.as_bytes()),
                output.len() as u64,
                20_001,
                1024,
            )
            .unwrap();
        assert_eq!(
            shaped.text,
            "[… 20000 lines: Compiling …]\nerror: the last line says it"
        );
    }
}
