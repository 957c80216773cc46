//! The context the report templates render: the whole [`Analysis`] (raw, unrounded numbers,
//! for users who build their own layout) plus ready blocks of text (`tables.*`, `text.*`,
//! `markdown.*`) so the built-in layouts need no arithmetic or formatting logic.
//!
//! Every text block has no trailing newline; the template decides the spacing.

use std::path::Path;

use serde::Serialize;

use crate::{
    analysis::Analysis,
    report::{
        case_tables,
        layout::{WIDTH, fit_width},
        mail_prose, mail_tables, markdown,
    },
};

/// The template context.
#[derive(Clone, Debug, Serialize)]
pub struct Context<'a> {
    /// Every number, unrounded.
    pub analysis: &'a Analysis,
    /// Pre-formatted text tables (each line ≤ 72 columns).
    pub tables: Tables,
    /// Pre-formatted, wrapped prose (each line ≤ 72 columns).
    pub text: Prose,
    /// Markdown tables for `README.md`.
    pub markdown: Markdown,
    /// The rendered `report.txt`, once it exists (for `README.md`).
    pub report_txt: Option<String>,
}

/// Text tables of `report.txt`.
#[derive(Clone, Debug, Serialize)]
pub struct Tables {
    /// Kernels with release and boots.
    pub kernels: String,
    /// Point means side by side in boot order, per unit.
    pub means: String,
    /// The within-boot CV of every series at every point, in boot order.
    pub cvs: String,
    /// Each candidate's change, drop-first change and verdict.
    pub changes: String,
    /// Recovery decompositions.
    pub recovery: String,
    /// The case comparisons within each kernel; empty without any.
    pub cases: String,
}

/// Prose blocks of `report.txt`.
#[derive(Clone, Debug, Serialize)]
pub struct Prose {
    /// `name: A/B/A on target …, n points`.
    pub title: String,
    /// What a reader must know first (an amended recipe); empty when nothing.
    pub notices: String,
    /// What changed in the recipe copy since the run (limits edited after it, from what to
    /// what); empty when it is the recipe the campaign ran with. Every report starts with it.
    pub preregistration: String,
    /// The recipe's description.
    pub description: String,
    /// Points, samples and settings.
    pub setup: String,
    /// The conclusion.
    pub summary: String,
    /// Per-series details: CV, drift, intervals, reasons, drop-first.
    pub details: String,
    /// `[[expect]]` checks.
    pub expect: String,
    /// The untimed correctness workloads' outcome per kernel.
    pub checks: String,
    /// What the probes gave at each point and what they kept (empty without probes).
    pub probes: String,
    /// The run audit.
    pub audit: String,
    /// The shared-boot caveat (empty unless all points shared one boot).
    pub shared_boot: String,
    /// The noise profile the campaign used, or why none (empty for older campaigns).
    pub profile: String,
    /// Environment differences between points (empty when the records agree).
    pub environment: String,
    /// How to reproduce.
    pub footer: String,
}

/// Markdown tables of `README.md`.
#[derive(Clone, Debug, Serialize)]
pub struct Markdown {
    /// Kernels.
    pub kernels: String,
    /// Points with their proven boots.
    pub points: String,
    /// Verdicts.
    pub verdicts: String,
    /// Files of the bundle.
    pub files: String,
    /// Where each kernel built on the host came from (empty when none was).
    pub sources: String,
}

/// A text block for `report.txt`: no trailing newline, no line over 72 columns.
pub(crate) fn block(text: String) -> String {
    fit_width(text.trim_end(), WIDTH)
}

/// A Markdown block: no trailing newline (Markdown lines may be long).
fn md(text: String) -> String {
    text.trim_end().to_owned()
}

impl<'a> Context<'a> {
    /// Builds the context of `analysis`, whose results directory is `root` (to list the
    /// bundle's files).
    #[must_use]
    pub fn new(analysis: &'a Analysis, root: &Path) -> Context<'a> {
        Context {
            analysis,
            tables: Tables {
                kernels: block(mail_tables::kernels(analysis)),
                means: block(mail_tables::means(analysis)),
                cvs: block(mail_tables::cvs(analysis)),
                changes: block(mail_tables::changes(analysis)),
                recovery: block(mail_tables::recovery(analysis)),
                cases: block(case_tables::cases(analysis)),
            },
            text: Prose {
                title: block(mail_prose::title(analysis)),
                notices: block(mail_prose::notices(analysis)),
                preregistration: block(mail_prose::preregistration(analysis)),
                description: block(mail_prose::description(analysis)),
                setup: block(mail_prose::setup(analysis)),
                summary: block(mail_prose::summary(analysis)),
                details: block(mail_prose::details(analysis)),
                expect: block(mail_prose::expect(analysis)),
                checks: block(mail_prose::checks(analysis)),
                probes: block(crate::report::probes::prose(analysis)),
                audit: block(mail_prose::audit(analysis)),
                shared_boot: block(mail_prose::shared_boot(analysis)),
                profile: block(mail_prose::profile(analysis)),
                environment: block(mail_prose::environment(analysis)),
                footer: block(mail_prose::footer(analysis, root)),
            },
            markdown: Markdown {
                kernels: md(markdown::kernels(analysis)),
                points: md(markdown::points(analysis)),
                verdicts: md(markdown::verdicts(analysis)),
                files: md(markdown::files(
                    root,
                    !super::source_identity_tsv::builds(analysis).is_empty(),
                    !analysis.probes.is_empty(),
                    !analysis.matched_builds.rows.is_empty(),
                )),
                sources: md(markdown::sources(analysis)),
            },
            report_txt: None,
        }
    }
}
