//! The bisect journal, `bisect.jsonl` in the bisect directory: one JSON object a line, the
//! input first (the tree, the refs as given and the resolved first-parent line), then each
//! built commit's identity and each decided [`Record`] in the order they happened. Resume is
//! [`crate::bisect::Bisection::replay`] over the records. The file is read as untrusted
//! input: every line is bounded, and every error names the file and the line.

use std::{
    fs::{File, OpenOptions},
    io::{BufRead as _, BufReader, Read as _, Write as _},
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use super::range::RangeCommit;
use crate::bisect::Record;

/// The journal's format; a reader refuses any other.
pub const BISECT_JOURNAL_FORMAT: u32 = 1;

/// The longest line a reader accepts: a start line lists every commit with its subject.
pub const LINE_BYTES: u64 = 4 << 20;

/// The most lines a reader accepts: a bisection decides a few dozen steps at most.
pub const MAX_LINES: usize = 100_000;

/// One line of the journal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Entry {
    /// The input, the first line and only there.
    Start {
        /// [`BISECT_JOURNAL_FORMAT`].
        format: u32,
        /// The bisected git tree.
        tree: String,
        /// `--good` as given.
        good: String,
        /// `--bad` as given.
        bad: String,
        /// The first-parent line, good first and bad last.
        commits: Vec<RangeCommit>,
        /// What else the bisection was started with, which a continuation must repeat.
        setup: Setup,
    },
    /// A commit's build, stored under the bisect directory.
    Built {
        /// Its index in the line.
        commit: usize,
        /// Its hash, repeated so that a line out of place is seen.
        hash: String,
        /// The stored image, relative to the bisect directory.
        image: String,
        /// The stored configuration, relative to the bisect directory.
        config: String,
        /// The kernel's version string, when the build said it.
        version: Option<String>,
    },
    /// A decided step or a skipped commit.
    Decided {
        /// What the bisection core was told.
        record: Record,
    },
}

/// The inputs of a bisection besides its range: a continuation (`--dir` of an existing
/// bisection) must be given the same ones, or it is refused. The paths are recorded only to
/// say them: nothing is read or run from this record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// The recipe as given.
    pub recipe: String,
    /// Its SHA-256 (as bound for the target).
    pub recipe_sha256: String,
    /// The builds file as given.
    pub builds: String,
    /// Its SHA-256.
    pub builds_sha256: String,
    /// The target.
    pub target: String,
    /// The bisected series (`workload[case]/metric`).
    pub series: String,
    /// How the next commit is chosen.
    pub strategy: crate::bisect::Strategy,
    /// The series' limits (its gate first), as the recipe set them.
    pub params: crate::stats::VerdictParams,
    /// Which direction of the series is an improvement.
    pub better: crate::stats::Better,
}

/// A journal as read: its start and what followed.
#[derive(Clone, Debug, PartialEq)]
pub struct BisectJournal {
    /// The bisected tree.
    pub tree: String,
    /// `--good` as given.
    pub good: String,
    /// `--bad` as given.
    pub bad: String,
    /// The first-parent line, good first.
    pub commits: Vec<RangeCommit>,
    /// The other inputs.
    pub setup: Setup,
    /// Every `built` entry, in order.
    pub built: Vec<Entry>,
    /// Every decided record, in order: what [`crate::bisect::Bisection::replay`] takes.
    pub records: Vec<Record>,
}

/// Why a journal could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum BisectJournalError {
    /// The file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The journal.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A line is not what the journal holds there.
    #[error("{path}:{line}: {what}")]
    Line {
        /// The journal.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        what: String,
    },
}

/// Reads the journal at `path`: the start line first, then `built` and `decided` lines whose
/// commit indices lie in the line.
pub fn read(path: &Path) -> Result<BisectJournal, BisectJournalError> {
    let io = |source| BisectJournalError::Io {
        path: path.to_owned(),
        source,
    };
    let bad_line = |line: usize, what: String| BisectJournalError::Line {
        path: path.to_owned(),
        line,
        what,
    };
    let mut reader = BufReader::new(File::open(path).map_err(io)?);
    let mut journal: Option<BisectJournal> = None;
    let mut number = 0;
    loop {
        let mut bytes = Vec::new();
        let read = reader
            .by_ref()
            .take(LINE_BYTES + 1)
            .read_until(b'\n', &mut bytes)
            .map_err(io)?;
        if read == 0 {
            break;
        }
        number += 1;
        if bytes.len() as u64 > LINE_BYTES {
            return Err(bad_line(number, format!("longer than {LINE_BYTES} bytes")));
        }
        if number > MAX_LINES {
            return Err(bad_line(number, format!("more than {MAX_LINES} lines")));
        }
        if bytes.last() != Some(&b'\n') {
            return Err(bad_line(
                number,
                "the last line is cut off (no newline): the writer was stopped mid-line".into(),
            ));
        }
        let entry: Entry = serde_json::from_slice(&bytes)
            .map_err(|e| bad_line(number, format!("not a bisect journal entry: {e}")))?;
        match (&mut journal, entry) {
            (
                None,
                Entry::Start {
                    format,
                    tree,
                    good,
                    bad,
                    commits,
                    setup,
                },
            ) => {
                if format != BISECT_JOURNAL_FORMAT {
                    return Err(bad_line(
                        number,
                        format!("format {format}; this aba reads {BISECT_JOURNAL_FORMAT}"),
                    ));
                }
                if let Some(c) = commits.iter().find(|c| !is_hash(&c.hash)) {
                    return Err(bad_line(
                        number,
                        format!(
                            "commit `{}` is not a commit hash (40 or 64 lowercase hex digits)",
                            crate::text::quoted(&c.hash)
                        ),
                    ));
                }
                if commits.len() < 2 {
                    return Err(bad_line(
                        number,
                        format!(
                            "{} commits; a line has good and bad at least",
                            commits.len()
                        ),
                    ));
                }
                journal = Some(BisectJournal {
                    tree,
                    good,
                    bad,
                    commits,
                    setup,
                    built: Vec::new(),
                    records: Vec::new(),
                });
            }
            (None, _) => {
                return Err(bad_line(number, "the first line must be the start".into()));
            }
            (Some(_), Entry::Start { .. }) => {
                return Err(bad_line(number, "a second start line".into()));
            }
            (
                Some(j),
                Entry::Built {
                    commit,
                    hash,
                    image,
                    config,
                    version,
                },
            ) => match j.commits.get(commit) {
                Some(c)
                    if c.hash == hash
                        && (image != stored(&hash, IMAGE) || config != stored(&hash, CONFIG)) =>
                {
                    return Err(bad_line(
                        number,
                        format!(
                            "commit {commit}'s build must be stored as {} and {}, not {image} and {config}",
                            stored(&hash, IMAGE),
                            stored(&hash, CONFIG)
                        ),
                    ));
                }
                Some(c) if c.hash == hash => j.built.push(Entry::Built {
                    commit,
                    hash,
                    image,
                    config,
                    version,
                }),
                Some(c) => {
                    return Err(bad_line(
                        number,
                        format!("commit {commit} is {}, not {hash}", c.hash),
                    ));
                }
                None => {
                    return Err(bad_line(
                        number,
                        format!("commit {commit} is past the line's {}", j.commits.len()),
                    ));
                }
            },
            (Some(j), Entry::Decided { record }) => j.records.push(record),
        }
    }
    journal.ok_or_else(|| bad_line(1, "empty: no start line".into()))
}

/// What differs between the journal's start and `start` (the inputs of a continuation), in
/// a few words; `None` when they are the same bisection.
#[must_use]
pub fn differs(had: &BisectJournal, start: &Entry) -> Option<String> {
    let Entry::Start {
        tree,
        good,
        bad,
        commits,
        setup,
        ..
    } = start
    else {
        return Some("not a start".into());
    };
    let field = |what: &str, then: &str, now: &str| {
        (then != now).then(|| {
            format!(
                "{what} was {} then, {} now",
                crate::text::quoted(then),
                crate::text::quoted(now)
            )
        })
    };
    field("the tree", &had.tree, tree)
        .or_else(|| field("--good", &had.good, good))
        .or_else(|| field("--bad", &had.bad, bad))
        .or_else(|| field("the target", &had.setup.target, &setup.target))
        .or_else(|| field("the series", &had.setup.series, &setup.series))
        .or_else(|| {
            field(
                "the recipe's SHA-256",
                &had.setup.recipe_sha256,
                &setup.recipe_sha256,
            )
        })
        .or_else(|| {
            field(
                "the builds file's SHA-256",
                &had.setup.builds_sha256,
                &setup.builds_sha256,
            )
        })
        .or_else(|| {
            (had.setup.strategy != setup.strategy).then(|| "the strategy differs".to_owned())
        })
        .or_else(|| {
            (had.commits != *commits).then(|| {
                format!(
                    "the range resolves to {} commits now, {} then, or to other commits",
                    commits.len(),
                    had.commits.len()
                )
            })
        })
}

/// A full commit hash as git prints it: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
/// Everything the journal's hashes name (`builds/HASH/`, the reports) relies on it.
fn is_hash(text: &str) -> bool {
    matches!(text.len(), 40 | 64)
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The stored image's file name in a build's folder.
pub const IMAGE: &str = "image";
/// The stored configuration's file name in a build's folder.
pub const CONFIG: &str = "config";

/// Where a commit's build is stored, relative to the bisect directory: `builds/HASH/NAME`.
/// The only place a `built` line may name, so an edited journal cannot point aba at another
/// file to install.
#[must_use]
pub fn stored(hash: &str, name: &str) -> String {
    format!("builds/{hash}/{name}")
}

/// Appends `entry` as one line and flushes it to disk, so a kill loses at most the line
/// being written (which [`read`] then names).
pub fn append(path: &Path, entry: &Entry) -> Result<(), BisectJournalError> {
    let io = |source| BisectJournalError::Io {
        path: path.to_owned(),
        source,
    };
    let mut line = serde_json::to_vec(entry).map_err(|e| io(std::io::Error::other(e)))?;
    line.push(b'\n');
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    file.write_all(&line).map_err(io)?;
    file.sync_data().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::{BISECT_JOURNAL_FORMAT, BisectJournalError, Entry, Setup, append, read};
    use crate::{
        bisect::{BisectInput, Bisection, Record, StepResult, StepVerdict},
        session::bisect::range::RangeCommit,
        stats::{Better, VerdictParams},
    };

    fn start(n: usize) -> Entry {
        Entry::Start {
            format: BISECT_JOURNAL_FORMAT,
            tree: "/src/linux".into(),
            good: "v6.1".into(),
            bad: "HEAD".into(),
            commits: (0..=n)
                .map(|i| RangeCommit {
                    hash: format!("{i:040x}"),
                    subject: format!("commit {i}"),
                })
                .collect(),
            setup: Setup {
                recipe: "recipes/005.toml".into(),
                recipe_sha256: "0".repeat(64),
                builds: "bisect-builds.toml".into(),
                builds_sha256: "1".repeat(64),
                target: "lab".into(),
                series: "w".into(),
                strategy: crate::bisect::Strategy::Bayesian,
                params: crate::stats::VerdictParams {
                    gate_pct: 5.0,
                    drift_margin: 0.5,
                    max_drift_pct: None,
                    max_cv_pct: 10.0,
                },
                better: crate::stats::Better::Lower,
            },
        }
    }

    fn built(commit: usize) -> Entry {
        Entry::Built {
            commit,
            hash: format!("{commit:040x}"),
            image: format!("builds/{commit:040x}/image"),
            config: format!("builds/{commit:040x}/config"),
            version: Some("6.1.192-aba-lab".into()),
        }
    }

    #[test]
    fn what_is_appended_reads_back_and_replays() {
        let tmp = tempfile::tempdir().expect("tmp");
        let path = tmp.path().join("bisect.jsonl");
        append(&path, &start(8)).expect("start");
        append(&path, &built(0)).expect("built");
        let confirmed = Record::Step(StepResult {
            commit: 8,
            verdict: StepVerdict::Bad,
            label: "SIGNAL".into(),
            change_pct: Some(10.0),
            ci: Some((8.0, 12.0)),
            points: 5,
        });
        append(
            &path,
            &Entry::Decided {
                record: confirmed.clone(),
            },
        )
        .expect("decided");
        let skip = Record::Skip {
            commit: 4,
            why: "the build failed: make exited 2".into(),
        };
        append(
            &path,
            &Entry::Decided {
                record: skip.clone(),
            },
        )
        .expect("decided");
        let journal = read(&path).expect("reads");
        assert_eq!(journal.commits.len(), 9);
        assert_eq!(journal.commits[3].subject, "commit 3");
        assert_eq!(journal.built, [built(0)]);
        assert_eq!(journal.records, [confirmed, skip]);
        let hashes = journal.commits.iter().map(|c| c.hash.clone()).collect();
        let input = BisectInput::new(hashes, VerdictParams::default(), Better::Lower);
        let replayed = Bisection::replay(input, &journal.records).expect("replays");
        assert_eq!(replayed.records(), journal.records.as_slice());
    }

    fn line_error(text: &str) -> (usize, String) {
        let tmp = tempfile::tempdir().expect("tmp");
        let path = tmp.path().join("bisect.jsonl");
        std::fs::write(&path, text).expect("write");
        match read(&path) {
            Err(BisectJournalError::Line { line, what, .. }) => (line, what),
            other => panic!("expected a line error, got {other:?}"),
        }
    }

    #[test]
    fn a_broken_journal_is_named_by_file_and_line() {
        let start = serde_json::to_string(&start(4)).expect("json");
        let built_2 = serde_json::to_string(&built(2)).expect("json");
        let (line, what) = line_error(&format!("{built_2}\n"));
        assert_eq!(
            (line, what.as_str()),
            (1, "the first line must be the start")
        );
        let (line, what) = line_error(&format!("{start}\n{built_2}\n{start}\n"));
        assert_eq!((line, what.as_str()), (3, "a second start line"));
        let (line, what) = line_error(&format!("{start}\n{}\n", &built_2[..built_2.len() - 1]));
        assert_eq!(line, 2);
        assert!(what.starts_with("not a bisect journal entry"), "{what}");
        let (line, what) = line_error(&format!("{start}\n{built_2}"));
        assert_eq!(line, 2);
        assert!(what.contains("cut off"), "{what}");
        let wrong = built_2.replace(&format!("{:040x}", 2), &format!("{:040x}", 3));
        let (line, what) = line_error(&format!("{start}\n{wrong}\n"));
        assert_eq!(line, 2);
        assert!(what.starts_with("commit 2 is "), "{what}");
        let past = serde_json::to_string(&built(7)).expect("json");
        let (_, what) = line_error(&format!("{start}\n{past}\n"));
        assert_eq!(what, "commit 7 is past the line's 5");
        let (_, what) = line_error(&format!(
            "{}\n",
            start.replace("\"format\":1", "\"format\":9")
        ));
        assert_eq!(what, "format 9; this aba reads 1");
        let (line, what) = line_error("");
        assert_eq!((line, what.as_str()), (1, "empty: no start line"));
    }

    #[test]
    fn a_continuation_with_other_inputs_is_named_by_what_differs() {
        let tmp = tempfile::tempdir().expect("tmp");
        let path = tmp.path().join("bisect.jsonl");
        append(&path, &start(4)).expect("start");
        let had = read(&path).expect("reads");
        assert_eq!(super::differs(&had, &start(4)), None);
        let Entry::Start {
            format,
            tree,
            good,
            bad,
            commits,
            mut setup,
        } = start(4)
        else {
            unreachable!()
        };
        let other_good = Entry::Start {
            format,
            tree: tree.clone(),
            good: "v6.2".into(),
            bad: bad.clone(),
            commits: commits.clone(),
            setup: setup.clone(),
        };
        let why = super::differs(&had, &other_good).expect("differs");
        assert!(why.contains("--good"), "{why}");
        setup.builds_sha256 = "2".repeat(64);
        let other_builds = Entry::Start {
            format,
            tree,
            good,
            bad,
            commits,
            setup,
        };
        let why = super::differs(&had, &other_builds).expect("differs");
        assert!(why.contains("builds file"), "{why}");
    }

    #[test]
    fn a_start_whose_commit_is_not_a_hash_is_refused_at_its_line() {
        let tmp = tempfile::tempdir().expect("tmp");
        let path = tmp.path().join("bisect.jsonl");
        let Entry::Start {
            format,
            tree,
            good,
            bad,
            mut commits,
            setup,
        } = start(2)
        else {
            unreachable!()
        };
        commits[1].hash = "../../etc\u{1b}[31m".into();
        append(
            &path,
            &Entry::Start {
                format,
                tree,
                good,
                bad,
                commits,
                setup,
            },
        )
        .expect("written");
        let e = read(&path).expect_err("not a hash");
        assert!(e.to_string().contains(":1: commit"), "{e}");
        assert!(!e.to_string().contains('\u{1b}'), "{e}");
    }
}
