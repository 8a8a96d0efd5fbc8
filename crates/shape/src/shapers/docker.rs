//! docker: `build` (`buildx build`, `image build`) in BuildKit's plain progress (what it prints
//! on a pipe) or the legacy builder's, and `pull` / `push`.
//!
//! `build`: steps are told apart by their number (`#8`), since BuildKit interleaves them. The
//! header of each Dockerfile step (`#8 [4/6] RUN pip install …`) is kept; BuildKit's own steps
//! (`[internal] load …`, the builder line, `exporting to image` but for its `writing image` and
//! `naming to` lines), the layer downloads of `FROM`, `DONE`/`CACHED` lines and the output of
//! steps are left out — but a failing step's `ERROR` line keeps the output lines just before
//! it, and the error report BuildKit prints after the steps (`------`, ` > [4/6] RUN …:`, its
//! last output lines, the Dockerfile excerpt, `ERROR: failed to build: …`) is kept whole.
//!
//! `pull`/`push`: the per-layer status lines (`abc123: Pull complete`) are left out; `Digest:`,
//! `Status:` and the image's name are kept.
//!
//! Summary lines: `ERROR: failed to build: …`, `writing image sha256:…`, `naming to …`,
//! `Successfully built …` / `Successfully tagged …` (legacy), `Digest:`, `Status:`.

use std::collections::HashMap;

use crate::engine::{Label, MAX_CONTEXT, Shaper, Verdict};
use crate::select::Target;
use crate::shapers::blank;

const INTERNAL: Label<'static> = Label::Lines("BuildKit's own steps");
const LAYERS: Label<'static> = Label::Lines("layer downloads");
const OUTPUT: Label<'static> = Label::Lines("output of build steps");

pub(crate) fn shaper(target: &Target) -> Option<Box<dyn Shaper>> {
    let sub = target.subcommand.as_deref()?;
    let first_arg = target.args.first().map(String::as_str);
    let action = match (sub, first_arg) {
        ("buildx" | "image" | "builder", Some(action)) => action,
        _ => sub,
    };
    match action {
        "build" => {
            // `--progress=rawjson` is a format; `-q` prints only the image.
            let progress = target
                .args
                .iter()
                .find_map(|a| a.strip_prefix("--progress="));
            if matches!(progress, Some("rawjson")) {
                return None;
            }
            Some(Box::new(Build::default()))
        }
        "pull" | "push" => Some(Box::new(Pull)),
        _ => None,
    }
}

/// What a BuildKit step is, from its header line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// `[internal] load …`, the builder line, `resolve image config`: left out.
    Internal,
    /// `[1/6] FROM …`: the header kept, its layer downloads left out.
    From,
    /// A Dockerfile step: the header kept, its output left out.
    Run,
    /// `exporting to image`: its result lines kept.
    Export,
    /// A step that printed `ERROR`: all its lines kept.
    Failed,
}

#[derive(Default)]
struct Build {
    steps: HashMap<u32, Step>,
    /// After the steps: BuildKit's error report, kept.
    report: bool,
}

/// `#8 [4/6] RUN …` → `(8, "[4/6] RUN …")`.
fn step_line(line: &str) -> Option<(u32, &str)> {
    let rest = line.strip_prefix('#')?;
    let (number, text) = rest.split_once(' ').unwrap_or((rest, ""));
    Some((number.parse().ok()?, text))
}

/// A step's output line: `0.931 Collecting requests` (seconds since the step started).
fn is_output(text: &str) -> bool {
    let (time, _) = text.split_once(' ').unwrap_or((text, ""));
    time.split_once('.').is_some_and(|(s, ms)| {
        !s.is_empty()
            && !ms.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit())
            && ms.bytes().all(|b| b.is_ascii_digit())
    })
}

/// The kind of step a first line names.
fn step_kind(text: &str) -> Step {
    let Some(rest) = text.strip_prefix('[') else {
        return if text.starts_with("exporting to ") {
            Step::Export
        } else {
            Step::Internal
        };
    };
    let Some((tag, command)) = rest.split_once("] ") else {
        return Step::Internal;
    };
    if tag == "internal" || tag == "auth" || tag.ends_with(" internal") {
        Step::Internal
    } else if command.starts_with("FROM ") {
        Step::From
    } else {
        Step::Run
    }
}

impl Build {
    fn classify(&mut self, line: &str) -> Verdict<'static> {
        if blank(line) {
            // A blank line joins the run before it, as no item of its own.
            return Verdict::DropMore;
        }
        let Some((number, text)) = step_line(line) else {
            return self.other_line(line);
        };
        let Some(&step) = self.steps.get(&number) else {
            let step = step_kind(text);
            self.steps.insert(number, step);
            return match step {
                Step::From | Step::Run => Verdict::Keep,
                Step::Export | Step::Internal | Step::Failed => Verdict::Drop(INTERNAL),
            };
        };
        if text.starts_with("ERROR") {
            self.steps.insert(number, Step::Failed);
            return Verdict::KeepWithContext(MAX_CONTEXT);
        }
        if text.starts_with("CANCELED") {
            return Verdict::Keep;
        }
        match step {
            Step::Failed => Verdict::Keep,
            Step::Internal => Verdict::Drop(INTERNAL),
            _ if text.starts_with("DONE ") || text == "CACHED" => Verdict::Drop(Label::Quiet),
            Step::From => Verdict::Drop(LAYERS),
            Step::Export => {
                if text.starts_with("writing image ") || text.starts_with("naming to ") {
                    Verdict::Keep
                } else {
                    Verdict::Drop(INTERNAL)
                }
            }
            Step::Run if is_output(text) => Verdict::Drop(OUTPUT),
            Step::Run => Verdict::Keep,
        }
    }

    /// A line that is not a step's: the error report after the steps, or the legacy
    /// builder's output.
    fn other_line(&mut self, line: &str) -> Verdict<'static> {
        if line.starts_with("------") {
            self.report = true;
        }
        if self.report {
            return Verdict::Keep;
        }
        // The legacy builder: `Step 2/5 : RUN …`, ` ---> Running in 1a2b3c`, ` ---> 4d5e6f`.
        let trimmed = line.trim();
        if trimmed.starts_with("---> ") || trimmed.starts_with("Removing intermediate container ") {
            return Verdict::Drop(Label::Quiet);
        }
        if line.starts_with("Sending build context to Docker daemon") {
            return Verdict::Drop(Label::Quiet);
        }
        Verdict::Keep
    }
}

impl Shaper for Build {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        self.classify(line)
    }
}

/// `docker pull` / `docker push`: per-layer status lines left out.
struct Pull;

/// `1a2b3c4d5e6f: Pull complete`: a layer's short id, then its status.
fn is_layer_line(line: &str) -> bool {
    line.split_once(": ").is_some_and(|(id, _)| {
        id.len() == 12
            && id
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    })
}

impl Shaper for Pull {
    fn line(&mut self, line: &str) -> Verdict<'_> {
        if is_layer_line(line) {
            Verdict::Drop(LAYERS)
        } else if line.starts_with("Using default tag: ") || blank(line) {
            Verdict::Drop(Label::Quiet)
        } else {
            Verdict::Keep
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_step_keeps_its_lines_and_the_report() {
        let mut build = Build::default();
        let lines = [
            "#1 [internal] load build definition from Dockerfile",
            "#7 [3/5] RUN make",
            "#8 [4/5] RUN npm ci",
            "#7 0.101 cc -c a.c",
            "#8 0.512 added 3 packages",
            "#7 DONE 0.4s",
            "#8 ERROR: process \"/bin/sh -c npm ci\" did not complete successfully: exit code: 1",
            "#8 0.601 late line",
            "------",
            " > [4/5] RUN npm ci:",
            "Dockerfile:4",
        ];
        let got: Vec<Verdict<'_>> = lines.iter().map(|l| build.classify(l)).collect();
        assert_eq!(
            got,
            [
                Verdict::Drop(INTERNAL),
                Verdict::Keep,
                Verdict::Keep,
                Verdict::Drop(OUTPUT),
                Verdict::Drop(OUTPUT),
                Verdict::Drop(Label::Quiet),
                Verdict::KeepWithContext(MAX_CONTEXT),
                Verdict::Keep,
                Verdict::Keep,
                Verdict::Keep,
                Verdict::Keep,
            ]
        );
    }

    #[test]
    fn step_lines_are_read() {
        assert_eq!(step_line("#12 DONE 0.1s"), Some((12, "DONE 0.1s")));
        assert_eq!(step_line("# comment"), None);
        assert!(is_output("0.931 Collecting requests"));
        assert!(is_output("12.5 "));
        assert!(!is_output("DONE 0.4s"));
        assert!(!is_output("sha256:9f2b 3.51MB / 3.51MB 0.5s done"));
        assert_eq!(step_kind("[2/6] WORKDIR /app"), Step::Run);
        assert_eq!(step_kind("[builder 1/4] FROM golang:1.23"), Step::From);
        assert_eq!(step_kind("[internal] load .dockerignore"), Step::Internal);
        assert_eq!(step_kind("exporting to image"), Step::Export);
        assert!(is_layer_line("1a2b3c4d5e6f: Pull complete"));
        assert!(!is_layer_line("Digest: sha256:4cb3"));
    }
}
