//! Shaping a finished call's output (`agentsh-shape`): from the sink's whole text when it fit,
//! else from the artifact in one streaming pass. A shaped result always names an artifact
//! holding the raw output: one is written now when the output never spilled.

use std::fs::File;

use agentsh_output_sink::Spill;
use agentsh_protocol::{OutputSummary, ShapedMeta};
use agentsh_shape::closing_line;

use crate::JobHost;

/// Shapes an output summary, when it is shaped (a job tool's view of [`shape_output`]).
pub(crate) type ShapeFn<'a> = dyn Fn(&OutputSummary) -> Option<ShapedOutput> + 'a;

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

/// Shapes the output of `command` as the session's shaping says: `summary` is what the sink
/// (or job log) reported — its `output` is the whole output when it is not `truncated`, else
/// the raw output is artifact `summary.artifact_id`. `None` when it is not shaped: shaping off
/// or no shaper for the command, smaller than the plan's minimum, unchanged by its shaper, or
/// without an artifact that holds it whole.
pub(crate) fn shape_output(
    host: &impl JobHost,
    command: &str,
    summary: &OutputSummary,
) -> Option<ShapedOutput> {
    let plan = host.shape_plan(command)?;
    if summary.total_bytes < plan.min_bytes() || summary.artifact_error.is_some() {
        return None;
    }
    let name = plan.name().to_owned();
    let max_bytes = usize::try_from(host.limits().output_max_bytes).unwrap_or(usize::MAX);
    let (shaped, artifact_id) = if summary.truncated {
        let id = summary.artifact_id.clone()?;
        let mut file = File::open(host.artifact_path(&id)?).ok()?;
        let shaped = plan
            .shape_file(
                &mut file,
                summary.total_bytes,
                summary.total_lines,
                max_bytes,
            )
            .ok()?;
        (shaped, id)
    } else {
        let mut run = plan.run(max_bytes);
        run.push(&summary.output);
        (run.finish(), String::new())
    };
    if !shaped.changed || shaped.raw_bytes != summary.total_bytes {
        return None;
    }
    // An artifact the output already has names it only once it holds all of it (a job's log
    // may still be flushing when the job is seen to have ended).
    let whole = |id: &String| {
        host.artifact_path(id)
            .and_then(|path| std::fs::metadata(path).ok())
            .is_some_and(|meta| meta.len() == summary.total_bytes)
    };
    let artifact_id = if summary.truncated {
        artifact_id
    } else if let Some(id) = summary.artifact_id.as_ref().filter(|id| whole(id)) {
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
