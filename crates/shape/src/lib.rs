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
/// is known.
pub struct Plan {
    name: String,
    shaper: Box<dyn Shaper>,
    min_bytes: u64,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("name", &self.name)
            .field("min_bytes", &self.min_bytes)
            .finish_non_exhaustive()
    }
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
                shaper: Box::new(filter.shaper()),
            });
        }
        let shaper = shapers::builtin(&target)?;
        Some(Plan {
            name: target.name(),
            shaper,
            min_bytes: MIN_BYTES,
        })
    }
}

impl Plan {
    /// `<program>[ <subcommand>]`: what results name as shaped.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Outputs smaller than this are not shaped.
    pub fn min_bytes(&self) -> u64 {
        self.min_bytes
    }

    /// Starts shaping an output; the text kept is at most `max_bytes` (its end).
    pub fn run(self, max_bytes: usize) -> Run {
        Run::new(self.shaper, max_bytes)
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
