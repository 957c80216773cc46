//! `aba compare`'s outputs from a [`Reproduction`]: the mail-ready text through the
//! `reproduction.txt.j2` template (ready blocks in its context, as `report.txt` has) and the
//! TSV. The JSON is the [`Reproduction`] itself.

use serde::Serialize;

use crate::{
    report::{
        context::block,
        error::ReportError,
        layout::{WIDTH, fit_width},
        reproduction_prose, reproduction_tables, reproduction_tsv,
        template::{REPRODUCTION_TXT, Templates},
    },
    reproduction::Reproduction,
};

/// The template context.
#[derive(Clone, Debug, Serialize)]
pub struct ReproductionContext<'a> {
    /// Every number, unrounded.
    pub reproduction: &'a Reproduction,
    /// Pre-formatted text tables (each line ≤ 72 columns).
    pub tables: ReproductionTables,
    /// Pre-formatted, wrapped prose (each line ≤ 72 columns).
    pub text: ReproductionProse,
}

/// Text tables.
#[derive(Clone, Debug, Serialize)]
pub struct ReproductionTables {
    /// Point means, the reference above the new campaign, per series.
    pub means: String,
    /// Both changes, their ratio and the verdict, per comparison.
    pub changes: String,
}

/// Prose blocks.
#[derive(Clone, Debug, Serialize)]
pub struct ReproductionProse {
    /// `new against the reference ref: 1 REPRODUCED`.
    pub title: String,
    /// One paragraph per comparison.
    pub summary: String,
    /// The environments side by side, the differences named, the limits.
    pub setup: String,
    /// Per series: CV, drift, intervals, published figures, the difference.
    pub details: String,
    /// What only one side has; empty when nothing.
    pub only: String,
    /// How to reproduce, the consistency test.
    pub footer: String,
}

impl<'a> ReproductionContext<'a> {
    /// Builds the context of `reproduction`.
    #[must_use]
    pub fn new(reproduction: &'a Reproduction) -> ReproductionContext<'a> {
        let r = reproduction;
        ReproductionContext {
            reproduction,
            tables: ReproductionTables {
                means: block(reproduction_tables::means(r)),
                changes: block(reproduction_tables::changes(r)),
            },
            text: ReproductionProse {
                title: block(reproduction_prose::title(r)),
                summary: block(reproduction_prose::summary(r)),
                setup: block(reproduction_prose::setup(r)),
                details: block(reproduction_prose::details(r)),
                only: block(reproduction_prose::only(r)),
                footer: block(reproduction_prose::footer(r)),
            },
        }
    }
}

/// The rendered text and TSV of a comparison.
#[derive(Clone, Debug)]
pub struct RenderedReproduction {
    /// The mail-ready text; every line ≤ 72 columns.
    pub text: String,
    /// The TSV.
    pub tsv: Vec<u8>,
}

/// Renders `reproduction` with `templates`.
pub fn render_reproduction(
    reproduction: &Reproduction,
    templates: &Templates,
) -> Result<RenderedReproduction, ReportError> {
    let context = ReproductionContext::new(reproduction);
    let text = templates.render(REPRODUCTION_TXT, &context)?;
    Ok(RenderedReproduction {
        text: fit_width(&text, WIDTH),
        tsv: reproduction_tsv::render(reproduction),
    })
}
