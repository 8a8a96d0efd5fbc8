//! Tab: completes the word under the cursor. Slash words and job ids are known here; a
//! directory's entries, `PATH`'s programs and the artifacts are read through the session (on
//! a far side, there), off the loop, and kept a short while, so the Tabs that follow cost a
//! binary search over sorted names rather than a read.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentsh_renderer::Renderer;
use agentsh_seam::wire::CompletionKind;

use super::App;
use crate::complete::{
    NameSource, SLASH_WORDS, Word, WordKind, common_prefix, partial, replacement, starting_with,
    word_at,
};
use crate::host::AppEvent;

/// How long names read for Tab are used before they are read again (a call or bang ending
/// drops them at once: it may have made or removed files).
const NAMES_FRESH: Duration = Duration::from_secs(10);

/// Names read for Tab, kept a while.
#[derive(Default)]
pub(crate) struct NameCache {
    lists: HashMap<NameSource, (Instant, Arc<Vec<String>>)>,
    /// Reads on their way.
    asked: Vec<NameSource>,
    /// The Tab that waits for a read: the line and cursor then (it completes only if they
    /// are still the same when the names come).
    waiting: Option<(NameSource, String, usize)>,
}

impl NameCache {
    /// Forgets every list (files may have changed).
    pub(crate) fn clear(&mut self) {
        self.lists.clear();
    }

    fn fresh(&self, source: &NameSource) -> Option<Arc<Vec<String>>> {
        self.lists
            .get(source)
            .filter(|(read, _)| read.elapsed() < NAMES_FRESH)
            .map(|(_, names)| Arc::clone(names))
    }
}

/// An open list of names under the input line.
pub(crate) struct Completing {
    /// The word completed.
    pub word: Word,
    /// All names of the source, sorted; the candidates are `names[range]`.
    pub names: Arc<Vec<String>>,
    /// The candidates.
    pub range: std::ops::Range<usize>,
    /// What goes before each name in the line (a path's directory part).
    pub dir: String,
    /// The candidate in the line (Tab cycles), if one is.
    pub selected: Option<usize>,
    /// Where the word's replacement ends in the line now.
    pub end: usize,
}

impl Completing {
    /// The candidates, as the list shows them (without the directory part).
    pub(crate) fn candidates(&self) -> &[String] {
        &self.names[self.range.clone()]
    }
}

impl<R: Renderer> App<R> {
    /// Tab: cycles an open list; else completes the word under the cursor.
    pub(crate) fn tab(&mut self) {
        if let Some(open) = &mut self.completing {
            let count = open.range.len();
            if count == 0 {
                return;
            }
            let next = open.selected.map_or(0, |at| (at + 1) % count);
            open.selected = Some(next);
            let name = format!("{}{}", open.dir, open.candidates()[next]);
            let text = replacement(&open.word, &name);
            self.line.replace(open.word.start, open.end, &text);
            open.end = open.word.start + text.len();
            return;
        }
        let Some(word) = word_at(self.line.text(), self.line.cursor()) else {
            return;
        };
        let (source, dir) = match word.kind {
            WordKind::Slash => {
                let names = SLASH_WORDS.iter().map(|&w| w.to_owned()).collect();
                self.offer(word, Arc::new(names), String::new());
                return;
            }
            WordKind::JobId => {
                let mut ids: Vec<String> = self
                    .session
                    .jobs_summary()
                    .into_iter()
                    .map(|job| job.id)
                    .collect();
                ids.sort();
                self.offer(word, Arc::new(ids), String::new());
                return;
            }
            WordKind::ArtifactId => (NameSource::Artifacts, String::new()),
            WordKind::Command => (NameSource::Commands, String::new()),
            WordKind::Path => {
                let at = word.typed.rfind('/').map_or(0, |at| at + 1);
                let dir = word.typed[..at].to_owned();
                let source = NameSource::Dir {
                    dir: dir.clone(),
                    hidden: word.typed[at..].starts_with('.'),
                };
                (source, dir)
            }
        };
        match self.names.fresh(&source) {
            Some(names) => self.offer(word, names, dir),
            None => self.read_names(source),
        }
    }

    /// Offers `names[..]` that fit `word` (after `dir`): one completes, several extend the
    /// word to what they share and open the list, none says so.
    fn offer(&mut self, word: Word, names: Arc<Vec<String>>, dir: String) {
        let start = &word.typed[dir.len().min(word.typed.len())..];
        let range = starting_with(&names, start);
        let cursor = self.line.cursor();
        let mut end = cursor;
        match &names[range.clone()] {
            [one] => {
                let text = replacement(&word, &format!("{dir}{one}"));
                self.line.replace(word.start, cursor, &text);
                return;
            }
            [] => {}
            [lowest, .., highest] => {
                // Sorted: what all share is what the first and the last share.
                let shared = common_prefix(&[lowest.as_str(), highest.as_str()]);
                if shared.len() > start.len() {
                    let text = partial(&word, &format!("{dir}{shared}"));
                    self.line.replace(word.start, cursor, &text);
                    end = word.start + text.len();
                }
            }
        }
        self.completing = Some(Completing {
            end,
            word,
            names,
            range,
            dir,
            selected: None,
        });
    }

    /// Reads `source`'s names through the session, off the loop; the Tab completes when they
    /// come, if the line is still as it was.
    fn read_names(&mut self, source: NameSource) {
        self.names.waiting = Some((
            source.clone(),
            self.line.text().to_owned(),
            self.line.cursor(),
        ));
        if self.names.asked.contains(&source) {
            return;
        }
        self.names.asked.push(source.clone());
        let (session, events) = (self.session.clone(), self.events.clone());
        tokio::spawn(async move {
            let names = match &source {
                NameSource::Artifacts => session.artifact_ids().await.map(|mut ids| {
                    ids.sort();
                    ids
                }),
                NameSource::Commands => session
                    .complete(String::new(), CompletionKind::Command)
                    .await
                    .map(|found| found.names),
                NameSource::Dir { dir, hidden } => {
                    let word = if *hidden {
                        format!("{dir}.")
                    } else {
                        dir.clone()
                    };
                    session
                        .complete(word, CompletionKind::Path)
                        .await
                        .map(|found| found.names)
                }
            };
            let _ = events.send(AppEvent::Named { source, names });
        });
    }

    /// Names came: kept, and the Tab that waited for them completes.
    pub(crate) fn named(&mut self, source: &NameSource, names: Result<Vec<String>, String>) {
        self.names.asked.retain(|asked| asked != source);
        // A failed read is an empty list (nothing to offer), kept as briefly as any other.
        let names = Arc::new(names.unwrap_or_default());
        self.names
            .lists
            .insert(source.clone(), (Instant::now(), names));
        let waiting = self.names.waiting.take();
        if let Some((asked, line, cursor)) = waiting {
            if asked == *source && self.line.text() == line && self.line.cursor() == cursor {
                self.tab();
            } else if asked != *source {
                self.names.waiting = Some((asked, line, cursor));
            }
        }
    }

    /// A key other than Tab closes the list (Esc only closes it).
    pub(crate) fn close_completion(&mut self) -> bool {
        self.completing.take().is_some()
    }
}
