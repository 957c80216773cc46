//! `aba status DIR`: where a campaign stands, from its journal and raw data alone.

use std::{collections::HashMap, fmt::Write as _, path::Path};

use crate::text::printable;

use crate::{
    analysis::targets::TargetState,
    campaign::plan::Summary,
    error::{Error, exit_code, worst},
    inventory::Inventory,
    json::status::StatusDoc,
    json::targets::{MemberStatus, TargetsStatusDoc},
    point_name::point_name,
    recipe::resolved::point_labels,
    report::targets::state_text,
    results::{
        journal::{Event, History, Journal},
        layout::ResultsDir,
        manifest::Manifest,
        samples::{Phase, SampleTable, Status},
    },
    session::{multi::finish, observer::Voice},
};

/// Prints the state of every point (as JSON with `json`: docs/json.md).
pub fn status(dir_path: &Path, json: bool) -> Result<u8, Error> {
    if json {
        let inputs = StatusInputs::read(dir_path)?;
        print!("{}", crate::json::render(&inputs.doc()));
        return Ok(exit_code::OK);
    }
    let journal = read_journal(dir_path, &ResultsDir::open(dir_path))?;
    let history = journal.history();
    print_text(dir_path, &journal, &history)
}

/// Prints the status text of the campaign in `dir_path` from its journal, read and folded
/// once by the caller.
fn print_text(dir_path: &Path, journal: &Journal, history: &History) -> Result<u8, Error> {
    let dir = ResultsDir::open(dir_path);
    let kernels = planned_kernels(&dir);
    // A campaign that never got to its first point may have no samples.csv yet; one that
    // cannot be read is said so, never counted as no rows.
    match read_table(dir_path, &dir) {
        Ok(table) => {
            let text = render(journal, history, table.as_ref(), &kernels);
            print!("{}", printable(&text));
            Ok(exit_code::OK)
        }
        Err(e) => {
            print!("{}", printable(&render(journal, history, None, &kernels)));
            Err(e)
        }
    }
}

/// The kernel of each planned point (identifier -> kernel), from the campaign's recipe copy,
/// so that status names points as every other output does (`a#1`); empty when the copy
/// cannot be read here, and the points show as their identifiers.
fn planned_kernels(dir: &ResultsDir) -> HashMap<String, String> {
    let Ok(recipe) = dir.load_recipe() else {
        return HashMap::new();
    };
    point_labels(&recipe.sequence)
        .into_iter()
        .zip(recipe.sequence.iter().map(ToString::to_string))
        .collect()
}

/// What `aba status --json` is made from, read from one campaign directory.
pub(crate) struct StatusInputs {
    journal: Journal,
    /// The journal folded once, for the points and the open attempt's step alike.
    history: History,
    table: Option<SampleTable>,
    eta_per_point_s: Option<f64>,
}

impl StatusInputs {
    /// Reads the journal, samples.csv (none before the first point) and the plan's estimate.
    pub(crate) fn read(dir_path: &Path) -> Result<StatusInputs, Error> {
        let journal = read_journal(dir_path, &ResultsDir::open(dir_path))?;
        let history = journal.history();
        StatusInputs::with(dir_path, journal, history)
    }

    /// [`StatusInputs::read`] with the journal read and folded already.
    fn with(dir_path: &Path, journal: Journal, history: History) -> Result<StatusInputs, Error> {
        let dir = ResultsDir::open(dir_path);
        let table = read_table(dir_path, &dir)?;
        Ok(StatusInputs {
            history,
            eta_per_point_s: eta_per_point(&dir, &journal),
            journal,
            table,
        })
    }

    /// The document `aba status DIR --json` prints.
    pub(crate) fn doc(&self) -> StatusDoc<'_> {
        StatusDoc::new(
            &self.journal,
            &self.history,
            self.table.as_ref(),
            self.eta_per_point_s,
        )
    }
}

fn read_journal(dir_path: &Path, dir: &ResultsDir) -> Result<Journal, Error> {
    Journal::read(&dir.journal_path()).map_err(|source| Error::NotResultsDir {
        dir: dir_path.to_path_buf(),
        resumable: false,
        source,
    })
}

/// samples.csv; `None` when the campaign has not written it yet (an unreadable one is an
/// error, never counted as no rows).
fn read_table(dir_path: &Path, dir: &ResultsDir) -> Result<Option<SampleTable>, Error> {
    match SampleTable::read(&dir.samples_path()) {
        Ok(table) => Ok(Some(table)),
        Err(_) if !dir.samples_path().exists() => Ok(None),
        Err(source) => Err(Error::Samples {
            dir: dir_path.to_path_buf(),
            source,
        }),
    }
}

/// The plan's estimate per point, seconds: the campaign's recipe copy planned on its target
/// from the default inventory (`$ABA_TARGETS`, ./targets.toml, ~/.config/aba/targets.toml;
/// `local` is built in); `None` when either cannot be read here.
fn eta_per_point(dir: &ResultsDir, journal: &Journal) -> Option<f64> {
    let recipe = dir.load_recipe().ok()?;
    let Some(Event::Campaign { target, .. }) = journal.header() else {
        return None;
    };
    let target = Inventory::discover(None).ok()?.target(target).ok()?;
    let plan = Summary::new(&recipe, &target).ok()?;
    #[expect(
        clippy::cast_precision_loss,
        reason = "a point count is far below 2^52"
    )]
    let points = plan.points.len().max(1) as f64;
    Some(plan.eta.as_secs_f64() / points)
}

/// The status text of `journal` (folded into `history`); `kernels` gives the kernel of each
/// planned point (the journal records those of appended points), for the names a reader sees.
pub fn render(
    journal: &Journal,
    history: &History,
    table: Option<&SampleTable>,
    kernels: &HashMap<String, String>,
) -> String {
    let state = &history.campaign;
    let name = |point: &str| {
        let appended = state.appended.iter().find(|p| p.label == point);
        match appended.map(|p| &p.kernel).or_else(|| kernels.get(point)) {
            Some(kernel) => point_name(point, kernel),
            None => point.to_owned(),
        }
    };
    let mut out = String::new();
    if let Some(Event::Campaign {
        name, target, time, ..
    }) = journal.header()
    {
        let _ = writeln!(out, "campaign {name} on target {target}, started {time}");
    }
    let count = |label: &str, attempt: u32, status: Status| -> String {
        table.map_or_else(
            || "unknown".to_owned(),
            |t| {
                t.rows
                    .iter()
                    .filter(|r| {
                        t.text(r.point) == label
                            && r.attempt == attempt
                            && r.status == status
                            && r.phase == Phase::Sample
                    })
                    .count()
                    .to_string()
            },
        )
    };
    let done = state.points.iter().filter(|p| p.done.is_some()).count();
    for p in &state.points {
        let what = match (p.done, p.open) {
            (Some(a), _) => format!(
                "done (attempt {a}, {} sample rows)",
                count(&p.label, a, Status::Ok)
            ),
            (None, Some(a)) => format!(
                "in progress or interrupted (attempt {a}, {} sample rows so far)",
                count(&p.label, a, Status::Ok)
            ),
            (None, None) if p.attempts > 0 => "failed, to be redone".to_owned(),
            (None, None) => "pending".to_owned(),
        };
        let failures = if p.failures.is_empty() {
            String::new()
        } else {
            format!(
                "; {} failed attempt(s), last: {}",
                p.failures.len(),
                p.failures.last().map_or("", |f| f.1.as_str())
            )
        };
        let _ = writeln!(out, "  {:<24} {what}{failures}", name(&p.label));
    }
    let _ = writeln!(out, "{done}/{} points done", state.points.len());
    if let Some(held) = crate::json::status::ReservationJson::of(journal) {
        let _ = writeln!(out, "{}", held.line());
    }
    if let Some((look, decision)) = state.looks.last() {
        let labels: Vec<String> = state.appended.iter().map(|p| name(&p.label)).collect();
        let _ = writeln!(
            out,
            "extended: {} point(s) appended{} over {} look(s); look {look}: {}",
            labels.len(),
            if labels.is_empty() {
                String::new()
            } else {
                format!(" ({})", labels.join(", "))
            },
            state.looks.len(),
            decision.why()
        );
    }
    if state.finished {
        let _ = writeln!(out, "state: finished");
    } else if let Some(reason) = &state.stopped {
        let _ = writeln!(
            out,
            "state: stopped: {}",
            crate::text::untrusted(reason, crate::text::UNTRUSTED_CHARS)
        );
        let _ = writeln!(out, "(continue with `aba resume DIR`)");
    } else {
        let _ = writeln!(
            out,
            "state: running, or the runner was killed (`aba resume DIR` continues it)"
        );
    }
    if journal.truncated_tail {
        let _ = writeln!(
            out,
            "note: the journal ends in a partial record (the runner was killed mid-write); resume repairs it"
        );
    }
    if let Some(t) = table {
        let failed = t.rows.iter().filter(|r| r.status == Status::Failed).count();
        let discarded = t
            .rows
            .iter()
            .filter(|r| r.status == Status::Discarded)
            .count();
        let _ = writeln!(
            out,
            "samples.csv: {} rows ({failed} failed, {discarded} discarded)",
            t.rows.len()
        );
    }
    out
}

/// `aba status PARENT`: each target's status, one after the other; with `json`,
/// [`TargetsStatusDoc`].
pub fn status_parent(parent: &Path, json: bool) -> Result<u8, Error> {
    let manifest = Manifest::read(parent)?;
    if json {
        return status_json(parent, &manifest);
    }
    println!(
        "{} on {} targets, started {}",
        manifest.recipe,
        manifest.targets.len(),
        manifest.created
    );
    // Each member's journal is read and folded once, for the table and its section alike.
    let read: Vec<_> = manifest
        .members(parent)
        .map(|(_, dir)| (dir.clone(), TargetState::read(&dir)))
        .collect();
    let width = manifest
        .targets
        .iter()
        .map(|m| m.target.chars().count())
        .max()
        .unwrap_or(0);
    for (member, (_, (state, _))) in manifest.targets.iter().zip(&read) {
        println!("  {:<width$}  {}", member.target, state_text(state));
    }
    let mut codes = Vec::new();
    for (member, (dir, (state, journal))) in manifest.targets.iter().zip(&read) {
        println!("\n== target {} ({}/) ==", member.target, member.dir);
        let code = match journal {
            Some((journal, history)) => finish(
                &Voice::Member(member.target.clone()),
                print_text(dir, journal, history),
            ),
            None => {
                if let TargetState::NotStarted { why } = state {
                    println!("not started: {why}");
                }
                exit_code::OK
            }
        };
        codes.push(code);
    }
    Ok(worst(codes))
}

/// [`status`]'s JSON: each target's `aba status --json` document under its name.
fn status_json(parent: &Path, manifest: &Manifest) -> Result<u8, Error> {
    let mut members = Vec::new();
    for (member, dir) in manifest.members(parent) {
        let (progress, journal) = TargetState::read(&dir);
        let inputs = match journal {
            None => None,
            Some((journal, history)) => Some(StatusInputs::with(&dir, journal, history)?),
        };
        members.push((member, progress, inputs));
    }
    let targets = members
        .iter()
        .map(|(member, progress, inputs)| MemberStatus {
            target: &member.target,
            dir: &member.dir,
            progress,
            status: inputs.as_ref().map(StatusInputs::doc),
        })
        .collect();
    let doc = TargetsStatusDoc::new(&manifest.recipe, &manifest.created, targets);
    print!("{}", crate::json::render(&doc));
    Ok(exit_code::OK)
}
