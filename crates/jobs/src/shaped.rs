//! Shaping a finished call's output (`agentsh-shape`): from the sink's whole text when it fit,
//! else from the artifact in one streaming pass. A shaped result always names an artifact
//! holding the raw output: one is written now when the output never spilled.

use std::fs::File;
use std::io::Read;

use agentsh_output_sink::Spill;
use agentsh_protocol::{OutputSummary, ShapedMeta};
use agentsh_shape::{Plan, closing_line};

use crate::JobHost;

/// Shapes an output summary, when it is shaped (a job tool's view of [`shape_output`]).
pub(crate) type ShapeFn<'a> = dyn Fn(&OutputSummary) -> Option<ShapedOutput> + 'a;

/// What the artifact is read in: large enough that a 200 MB output is few reads.
const READ_BYTES: usize = 256 * 1024;

/// The shaped text of a call's output, and what its result says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapedOutput {
    /// The body the model reads.
    pub text: String,
    /// `[Shaped output of …: N of T lines left out; full output: artifact://ID]`.
    pub closing: String,
    /// `details.meta.shaped`.
    pub meta: ShapedMeta,
}

/// Shapes an output with `plan`: `summary` is what the sink (or job log) reported — its
/// `output` is the whole output when it is not `truncated`, else the raw output is artifact
/// `summary.artifact_id`. `None` when it is not shaped: smaller than the plan's minimum,
/// unchanged by its shaper, or without an artifact that holds it whole.
pub(crate) fn shape_output(
    host: &impl JobHost,
    plan: Plan,
    summary: &OutputSummary,
) -> Option<ShapedOutput> {
    if summary.total_bytes < plan.min_bytes() || summary.artifact_error.is_some() {
        return None;
    }
    let name = plan.name().to_owned();
    let max_bytes = usize::try_from(host.limits().output_max_bytes).unwrap_or(usize::MAX);
    let mut run = plan.run(max_bytes);
    let artifact_id = if summary.truncated {
        let id = summary.artifact_id.clone()?;
        let mut file = File::open(host.artifact_path(&id)?).ok()?;
        read_text(&mut file, |text| run.push(text)).ok()?;
        id
    } else {
        run.push(&summary.output);
        String::new()
    };
    let shaped = run.finish();
    if !shaped.changed || shaped.raw_bytes != summary.total_bytes {
        return None;
    }
    let artifact_id = if summary.truncated {
        artifact_id
    } else if let Some(id) = &summary.artifact_id {
        id.clone()
    } else {
        // The output fit: the raw text becomes an artifact now, or nothing is shaped.
        let mut reservation = host.allocate_artifact()?;
        reservation.write_all(summary.output.as_bytes()).ok()?;
        reservation.finish().ok()?;
        reservation.id().to_owned()
    };
    Some(ShapedOutput {
        closing: closing_line(&name, &shaped, &artifact_id),
        meta: ShapedMeta {
            shaper: name,
            raw_lines: shaped.raw_lines,
            raw_bytes: shaped.raw_bytes,
            kept_lines: shaped.kept_lines,
            artifact_id,
        },
        text: shaped.text,
    })
}

/// Reads `file` (UTF-8 text, as the sink wrote it) in pieces that end on character boundaries.
fn read_text(file: &mut File, mut on_text: impl FnMut(&str)) -> std::io::Result<()> {
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
