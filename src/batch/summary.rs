//! The morning summary of a batch: `summary.txt` (at most 72 columns, ready to paste into a
//! mail) and `summary.tsv` (one row per campaign, target and comparison), made from the batch
//! journal and each campaign's own results directory.
//!
//! Nothing here computes a statistic: the verdicts are each campaign's own analysis
//! ([`crate::analysis::analyze`]), read again from its raw files, so the summary says what
//! `aba report DIR` would. A campaign that never started, or has no done point, has no
//! verdict; the summary says why.

use std::{fmt::Write as _, path::Path, time::Duration};

use crate::{
    analysis::analyze,
    batch::{
        holds::PlaceHold,
        journal::{BatchJournal, Ended},
        stamps::{between, parse_time},
    },
    results::layout::ResultsDir,
};

/// The width of summary.txt.
pub const WIDTH: usize = 72;

/// Where one campaign stands on one target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobState {
    /// Never started (the queue did not reach it yet).
    Pending,
    /// Started, no end recorded: running now, or its runner was killed.
    Unended,
    /// Ended as recorded.
    Ended(Ended),
}

impl JobState {
    /// Where the summary's count lists it: finished first, never started last.
    fn rank(&self) -> u8 {
        match self {
            JobState::Ended(Ended::Finished) => 0,
            JobState::Ended(Ended::NotReproduced) => 1,
            JobState::Ended(Ended::Stopped) => 2,
            JobState::Ended(Ended::Interrupted) => 3,
            JobState::Ended(Ended::Refused) => 4,
            JobState::Ended(Ended::Failed) => 5,
            JobState::Unended => 6,
            JobState::Pending => 7,
        }
    }

    fn word(&self) -> &'static str {
        match self {
            JobState::Pending => "not started",
            JobState::Unended => "started, no end recorded",
            JobState::Ended(e) => e.word(),
        }
    }

    /// Whether `aba batch resume` has something to do for it.
    #[must_use]
    pub fn todo(&self) -> bool {
        !matches!(self, JobState::Ended(e) if e.complete())
    }
}

/// One comparison's verdict, as the campaign's own report says it.
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictLine {
    /// The series label.
    pub series: String,
    /// The candidate kernel.
    pub candidate: String,
    /// The baseline kernel.
    pub baseline: String,
    /// The verdict as printed.
    pub verdict: String,
    /// The change, percent.
    pub change_pct: f64,
}

/// One campaign on one target.
#[derive(Clone, Debug)]
pub struct JobSummary {
    /// The campaign's number in the plan.
    pub campaign: usize,
    /// The recipe's name.
    pub recipe: String,
    /// The target.
    pub target: String,
    /// Where it stands.
    pub state: JobState,
    /// Its first start.
    pub started: Option<String>,
    /// Its last end.
    pub ended: Option<String>,
    /// From its first start to its last end.
    pub duration: Option<Duration>,
    /// Its results directory, relative to the batch directory.
    pub dir: String,
    /// Whether that directory exists (a refused or failed start leaves none).
    pub exists: bool,
    /// Why it did not finish.
    pub reason: Option<String>,
    /// Its verdicts.
    pub verdicts: Vec<VerdictLine>,
    /// Why it has no verdicts, when it has a directory but no analysis.
    pub no_analysis: Option<String>,
    /// Its hold of a labgrid place: the wait in the queue, behind whom, for how long held.
    pub hold: Option<PlaceHold>,
}

/// The whole batch.
#[derive(Clone, Debug)]
pub struct BatchSummary {
    /// The batch's name.
    pub name: String,
    /// The batch directory.
    pub dir: String,
    /// When it started.
    pub started: String,
    /// The last recorded end.
    pub ended: Option<String>,
    /// Every campaign and target, in plan order.
    pub jobs: Vec<JobSummary>,
}

/// A time to the second (the journal keeps microseconds).
fn shown(text: &str) -> String {
    parse_time(text)
        .and_then(|t| t.replace_nanosecond(0).ok())
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| text.to_owned())
}

/// A duration to the second: `1h 2m 3s`.
fn human(d: Duration) -> String {
    humantime::format_duration(Duration::from_secs(d.as_secs())).to_string()
}

fn verdicts(dir: &Path) -> (Vec<VerdictLine>, Option<String>) {
    if !dir.join("journal.jsonl").is_file() {
        return (Vec::new(), None);
    }
    match analyze(&ResultsDir::open(dir)) {
        Ok(a) => {
            let lines = a
                .series
                .iter()
                .filter_map(|s| s.all.as_ref().map(|all| (s, all)))
                .flat_map(|(s, all)| {
                    all.comparisons.iter().map(|c| VerdictLine {
                        series: s.label.clone(),
                        candidate: c.candidate.clone(),
                        baseline: c.baseline.clone(),
                        verdict: c.label.clone(),
                        change_pct: c.comparison.change_pct,
                    })
                })
                .collect();
            (lines, None)
        }
        Err(e) => (Vec::new(), Some(crate::causes::one_line(&e))),
    }
}

impl BatchSummary {
    /// Reads the batch in `dir` as it stands now.
    #[must_use]
    pub fn of(dir: &Path, journal: &BatchJournal) -> BatchSummary {
        let records = journal.jobs();
        let (name, started) = journal.header();
        let mut jobs = Vec::new();
        for c in journal.campaigns() {
            for target in &c.targets {
                let rel = format!("{}/{}", c.dir, crate::results::layout::path_safe(target));
                let record = records.get(&(c.number, target.clone()));
                let state = match record {
                    None => JobState::Pending,
                    Some(r) => match &r.ended {
                        Some((e, ..)) => JobState::Ended(*e),
                        None => JobState::Unended,
                    },
                };
                let started = record.and_then(|r| r.counted_start.clone());
                let ended = record.and_then(|r| r.ended.as_ref().map(|e| e.3.clone()));
                let reason = record.and_then(|r| r.ended.as_ref().and_then(|e| e.2.clone()));
                let (verdicts, no_analysis) = verdicts(&dir.join(&rel));
                let hold =
                    crate::results::journal::Journal::read(&dir.join(&rel).join("journal.jsonl"))
                        .ok()
                        .and_then(|j| PlaceHold::of(&j));
                jobs.push(JobSummary {
                    campaign: c.number,
                    recipe: c.name.clone(),
                    target: target.clone(),
                    duration: started
                        .as_deref()
                        .zip(ended.as_deref())
                        .and_then(|(s, e)| between(s, e)),
                    state,
                    started,
                    ended,
                    exists: dir.join(&rel).is_dir(),
                    dir: rel,
                    reason,
                    verdicts,
                    no_analysis,
                    hold,
                });
            }
        }
        let ended = jobs
            .iter()
            .filter_map(|j| j.ended.clone())
            .max_by_key(|t| parse_time(t));
        BatchSummary {
            name: name.to_owned(),
            dir: dir.display().to_string(),
            started: started.to_owned(),
            ended,
            jobs,
        }
    }

    /// Whether every campaign ran to its end.
    #[must_use]
    pub fn complete(&self) -> bool {
        self.jobs.iter().all(|j| !j.state.todo())
    }

    /// `3 finished, 1 stopped`: how many campaigns (per target) ended how.
    #[must_use]
    pub fn outcome(&self) -> String {
        let mut counts: std::collections::BTreeMap<u8, (&'static str, usize)> =
            std::collections::BTreeMap::new();
        for j in &self.jobs {
            counts
                .entry(j.state.rank())
                .or_insert((j.state.word(), 0))
                .1 += 1;
        }
        counts
            .values()
            .map(|(w, n)| format!("{n} {w}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// summary.txt.
    #[must_use]
    pub fn text(&self) -> String {
        let mut out = String::new();
        let targets: std::collections::BTreeSet<&str> =
            self.jobs.iter().map(|j| j.target.as_str()).collect();
        let campaigns: std::collections::BTreeSet<usize> =
            self.jobs.iter().map(|j| j.campaign).collect();
        let head = format!(
            "Batch {}: {} {} on {} {}: {}.",
            self.name,
            campaigns.len(),
            plural(campaigns.len(), "campaign"),
            targets.len(),
            plural(targets.len(), "target"),
            self.outcome()
        );
        wrap_into(&mut out, &head, "");
        let span = match &self.ended {
            Some(end) => format!(
                "Started {}, last ended {}{}.",
                shown(&self.started),
                shown(end),
                between(&self.started, end)
                    .map(|d| format!(" ({})", human(d)))
                    .unwrap_or_default()
            ),
            None => format!("Started {}.", shown(&self.started)),
        };
        wrap_into(&mut out, &span, "");
        wrap_into(&mut out, &format!("Directory: {}", self.dir), "  ");
        for j in &self.jobs {
            out.push('\n');
            let took = match (&j.state, j.duration) {
                (JobState::Ended(_), Some(d)) => format!(" in {}", human(d)),
                _ => String::new(),
            };
            let line = format!(
                "#{} {} on {}: {}{took}",
                j.campaign,
                j.recipe,
                j.target,
                j.state.word()
            );
            wrap_into(&mut out, &line, "   ");
            let results = if j.exists {
                format!("   results: {}/", j.dir)
            } else {
                "   results: none (no campaign directory was made)".to_owned()
            };
            wrap_into(&mut out, &results, "     ");
            if let Some(hold) = &j.hold {
                wrap_into(&mut out, &format!("   lab: {}", hold.line()), "     ");
            }
            for v in &j.verdicts {
                let line = format!(
                    "   {}: {} against {} {:+.2}% {}",
                    v.series, v.candidate, v.baseline, v.change_pct, v.verdict
                );
                wrap_into(&mut out, &line, "     ");
            }
            if let Some(why) = &j.reason {
                let why = crate::text::untrusted(why, crate::text::UNTRUSTED_CHARS);
                wrap_into(&mut out, &format!("   why: {why}"), "     ");
            }
            if let Some(why) = &j.no_analysis
                && j.state != JobState::Pending
            {
                wrap_into(&mut out, &format!("   no verdicts: {why}"), "     ");
            }
        }
        if !self.complete() {
            out.push('\n');
            wrap_into(
                &mut out,
                &format!(
                    "Resume the unfinished campaigns with `aba batch resume {}`.",
                    self.dir
                ),
                "",
            );
        }
        // Names, reasons and paths come from the batch journal, anyone's file.
        crate::text::printable(&out).into_owned()
    }

    /// summary.tsv: one row per campaign, target and comparison (one row without a
    /// comparison for a campaign that has none).
    #[must_use]
    pub fn tsv(&self) -> String {
        let mut out = String::from(
            "campaign\trecipe\ttarget\toutcome\tstarted\tended\tduration_s\tdir\t\
             series\tcandidate\tbaseline\tverdict\tchange_pct\treason\t\
             place\twaited_s\theld_s\tbehind\n",
        );
        for j in &self.jobs {
            let common = [
                j.campaign.to_string(),
                j.recipe.clone(),
                j.target.clone(),
                j.state.word().to_owned(),
                j.started.clone().unwrap_or_default(),
                j.ended.clone().unwrap_or_default(),
                j.duration
                    .map(|d| d.as_secs().to_string())
                    .unwrap_or_default(),
                j.dir.clone(),
            ];
            let reason = j
                .reason
                .clone()
                .or_else(|| j.no_analysis.clone())
                .unwrap_or_default();
            let rows: Vec<[String; 5]> = if j.verdicts.is_empty() {
                vec![Default::default()]
            } else {
                j.verdicts
                    .iter()
                    .map(|v| {
                        [
                            v.series.clone(),
                            v.candidate.clone(),
                            v.baseline.clone(),
                            v.verdict.clone(),
                            format!("{:.4}", v.change_pct),
                        ]
                    })
                    .collect()
            };
            let hold = match &j.hold {
                Some(h) => [
                    h.place.clone(),
                    h.waited.as_secs().to_string(),
                    h.held.as_secs().to_string(),
                    h.behind.join(" "),
                ],
                None => Default::default(),
            };
            for row in rows {
                let fields: Vec<String> = common
                    .iter()
                    .chain(row.iter())
                    .chain(std::iter::once(&reason))
                    .chain(hold.iter())
                    .map(|f| cell(f))
                    .collect();
                let _ = writeln!(out, "{}", fields.join("\t"));
            }
        }
        out
    }
}

/// A TSV cell: tabs and line breaks become spaces, so every row stays one line.
fn cell(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

/// Appends `text` wrapped at [`WIDTH`] columns, continuation lines indented by `indent`; a
/// word longer than a line (a path) is cut.
fn wrap_into(out: &mut String, text: &str, indent: &str) {
    let lead: String = text.chars().take_while(|c| *c == ' ').collect();
    let mut line = lead.clone();
    let mut empty = true;
    for word in text.split_whitespace() {
        let mut word: String = word.to_owned();
        loop {
            let len = line.chars().count();
            let wlen = word.chars().count();
            let sep = usize::from(!empty);
            if len + sep + wlen <= WIDTH {
                if !empty {
                    line.push(' ');
                }
                line.push_str(&word);
                empty = false;
                break;
            }
            if !empty {
                out.push_str(&line);
                out.push('\n');
                line = indent.to_owned();
                empty = true;
                continue;
            }
            // A word alone longer than the line: cut it.
            let room = WIDTH.saturating_sub(len).max(1);
            let head: String = word.chars().take(room).collect();
            let rest: String = word.chars().skip(room).collect();
            line.push_str(&head);
            out.push_str(&line);
            out.push('\n');
            line = indent.to_owned();
            word = rest;
            if word.is_empty() {
                break;
            }
        }
    }
    if !empty || line.trim().is_empty() && !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::{BatchSummary, JobState, JobSummary, WIDTH, wrap_into};

    /// A batch journal's names and reasons with escape sequences and 5000 characters: the
    /// summary `aba batch status` prints shows them escaped, the reason cut.
    #[test]
    fn a_batch_journals_text_is_shown_escaped_and_cut() {
        let hostile = format!("\u{1b}]0;owned\u{7}{}", "R".repeat(5000));
        let summary = BatchSummary {
            name: "n\u{1b}[2J".to_owned(),
            dir: "d".to_owned(),
            started: "2026-07-20T00:00:00Z".to_owned(),
            ended: None,
            jobs: vec![JobSummary {
                campaign: 1,
                recipe: "r\u{7}".to_owned(),
                target: "t".to_owned(),
                state: JobState::Unended,
                started: None,
                ended: None,
                duration: None,
                dir: "x".to_owned(),
                exists: false,
                reason: Some(hostile),
                verdicts: Vec::new(),
                no_analysis: None,
                hold: None,
            }],
        };
        let text = summary.text();
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text}");
        assert!(text.contains("\\u{1b}]0;owned"), "{text}");
        assert!(text.contains("(5019 characters)"), "{text}");
    }

    #[test]
    fn wrapped_lines_keep_to_72_columns() {
        let mut out = String::new();
        let long = format!("   results: /{}/x", "d".repeat(150));
        wrap_into(&mut out, &long, "     ");
        assert_eq!(out.matches('d').count(), 150, "nothing lost: {out}");
        wrap_into(&mut out, &"word ".repeat(40), "  ");
        for line in out.lines() {
            assert!(line.chars().count() <= WIDTH, "{line:?}");
        }
        assert!(out.starts_with("   results:\n     /ddd"), "{out}");
    }
}
