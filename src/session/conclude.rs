//! The end of a campaign: its reports written from a fresh analysis (and its comparison with
//! the recipe's reference), a finished calibration's noise profile written, and the engine's
//! outcome turned into how the campaign ended ([`CampaignEnd`]) or the error that says it;
//! which exit code says it is `aba::error`'s to choose.

use std::path::Path;

use crate::{
    analysis::{Analysis, AnalyzeOptions, analyze, analyze_with},
    campaign::engine::Outcome,
    error::{CampaignEnd, Error},
    profile::{
        build::{Calibration, build},
        write_profile as write_profile_file,
    },
    recipe::resolved::reference_copy,
    report::{write_reports, write_reproduction},
    reproduction::{ReferenceComparison, compare_with_reference},
    results::{
        journal::{Event, Journal, now_rfc3339},
        layout::ResultsDir,
    },
    session::observer::Voice,
};

/// What `aba compare`, `aba run`, `aba resume` and `aba report` say on stderr when a
/// comparison with a reference is NOT_REPRODUCED.
pub const NOT_REPRODUCED_WARNING: &str =
    "warning: a result of the reference was not reproduced (NOT_REPRODUCED)";

/// How a comparison ends: [`CampaignEnd::NotReproduced`] when any comparison is
/// NOT_REPRODUCED (DIFFERENT and INCONCLUSIVE are reported, not failed).
#[must_use]
pub fn end_of(compared: &ReferenceComparison) -> CampaignEnd {
    CampaignEnd::finished(!compared.not_reproduced())
}

/// [`CampaignEnd::NotReproduced`] when an `[[expect]]` missed (said on stderr).
pub fn expects_end(analysis: &Analysis, voice: &Voice) -> CampaignEnd {
    let end = CampaignEnd::finished(analysis.summary.expects_reproduced != Some(false));
    if end == CampaignEnd::NotReproduced {
        voice.say("warning: a published result in [[expect]] was not reproduced");
    }
    end
}

/// [`CampaignEnd::NotReproduced`] when the comparison with the reference is (said on stderr).
pub fn reproduction_end(compared: &ReferenceComparison, voice: &Voice) -> CampaignEnd {
    let end = end_of(compared);
    if end == CampaignEnd::NotReproduced {
        voice.say(NOT_REPRODUCED_WARNING);
    }
    end
}

/// Writes every report of `results`; returns how the finished campaign ended (reproduced or
/// not) and the text `aba report` prints (report.txt, then the comparison with the reference
/// when there is one).
pub fn write_texts(
    results: &ResultsDir,
    options: AnalyzeOptions,
    voice: &Voice,
) -> Result<(CampaignEnd, String), Error> {
    let analysis = analyze_with(results, options)?;
    write_analysed(results, &analysis, voice).map(|written| (written.end, written.text))
}

/// What [`write_analysed`] wrote.
pub struct Written {
    /// Finished, or not reproduced (an `[[expect]]` or the reference).
    pub end: CampaignEnd,
    /// report.txt, then the comparison with the reference when there is one.
    pub text: String,
    /// The comparison with the recipe's reference, when it names one.
    pub reproduction: Option<ReferenceComparison>,
}

/// [`write_texts`] for an analysis already made (a multi-target report has made it for the
/// combined report).
pub fn write_analysed(
    results: &ResultsDir,
    analysis: &Analysis,
    voice: &Voice,
) -> Result<Written, Error> {
    let reports = write_reports(results, analysis)?;
    let mut text = reports.report_txt();
    let mut end = expects_end(analysis, voice);
    let reproduction = match &analysis.campaign.reference {
        Some(written) => {
            let reproduction =
                compare_with_reference(&results.root, &reference_copy(&results.root, written))?;
            let rendered = write_reproduction(results, &reproduction)?;
            text.push('\n');
            text.push_str(&rendered.text);
            end = end.max(reproduction_end(&reproduction, voice));
            Some(reproduction)
        }
        None => None,
    };
    Ok(Written {
        end,
        text,
        reproduction,
    })
}

/// When the finished campaign in `dir` is a calibration, writes its noise profile where its
/// journal says and says so; nothing for any other campaign.
pub fn write_profile(dir: &ResultsDir) -> Result<(), Error> {
    let journal = Journal::read(&dir.journal_path()).map_err(|source| Error::NotResultsDir {
        dir: dir.root.clone(),
        resumable: false,
        source,
    })?;
    let Some((recipe_name, recipe_sha256, path)) = journal.events.iter().find_map(|e| match e {
        Event::Calibration {
            recipe,
            recipe_sha256,
            profile,
            ..
        } => Some((recipe.clone(), recipe_sha256.clone(), profile.clone())),
        _ => None,
    }) else {
        return Ok(());
    };
    let analysis = analyze(dir)?;
    let recipe = dir.load_recipe()?;
    let created = now_rfc3339();
    let built = build(&Calibration {
        analysis: &analysis,
        recipe: &recipe,
        recipe_name: &recipe_name,
        recipe_sha256: &recipe_sha256,
        created: &created,
    })
    .map_err(|source| Error::Calibration {
        dir: dir.root.clone(),
        source,
    })?;
    let path = Path::new(&path);
    let replaced = path.exists();
    write_profile_file(path, &built.profile).map_err(Error::Profile)?;
    for skipped in &built.skipped {
        eprintln!("warning: not in the noise profile: {skipped}");
    }
    let p = &built.profile;
    eprintln!(
        "noise profile {}: {} ({} boots of {}, {}, {} series)",
        if replaced {
            "written over the previous one"
        } else {
            "written"
        },
        path.display(),
        p.boots,
        p.fingerprint.kernel,
        p.scope.words(),
        p.series.len(),
    );
    Ok(())
}

/// Writes the reports, prints the mail table (a campaign alone; a multi-target member's
/// stays in its directory), and turns the engine's outcome into how the campaign ended: finished
/// (reproduced or not), or the error that says why it stopped; a finished calibration also
/// writes its noise profile.
pub(crate) fn conclude(
    dir: &ResultsDir,
    outcome: Outcome,
    voice: &Voice,
) -> Result<CampaignEnd, Error> {
    let printed = write_texts(dir, AnalyzeOptions::default(), voice).map(|(end, text)| {
        voice.report(&text);
        end
    });
    match outcome {
        Outcome::Finished => {
            let end = printed?;
            voice.say(&format!("campaign finished: {}", dir.root.display()));
            write_profile(dir)?;
            Ok(end)
        }
        Outcome::Stopped(stop) => {
            if let Err(e) = printed {
                voice.say(&e.render());
            }
            Err(Error::CampaignStopped {
                dir: dir.root.clone(),
                stop: Box::new(stop),
            })
        }
        Outcome::Interrupted => {
            if let Err(e) = printed {
                voice.say(&e.render());
            }
            Err(Error::Interrupted {
                dir: dir.root.clone(),
            })
        }
    }
}
