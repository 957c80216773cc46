//! Who a campaign's runner speaks as, and the observer that keeps a running campaign's
//! reports current.

use crate::{
    analysis::analyze,
    campaign::events::{CampaignEvent, Observer, Warning},
    report::write_reports,
    results::layout::ResultsDir,
    ui::progress::Progress,
};

/// Who a campaign's runner speaks as: the only campaign of this `aba` (its progress may
/// draw bars, its report.txt is printed at the end), or one target of a multi-target run or
/// one lane of a batch ([`crate::session::lanes`]), whose lines on stderr carry `[target] `
/// and whose report.txt stays in its directory: the parent's combined report is what is
/// printed. It is chosen once, when a campaign is prepared or resumed, and travels with it.
#[derive(Clone, Debug)]
pub enum Voice {
    /// A single campaign.
    Alone,
    /// One target of several.
    Member(String),
}

impl Voice {
    /// Says `text` on stderr, prefixed in a multi-target run.
    pub fn say(&self, text: &str) {
        match self {
            Voice::Alone => eprintln!("{text}"),
            Voice::Member(target) => {
                for line in text.lines() {
                    crate::ui::progress::say_line(&format!("[{target}] {line}"));
                }
            }
        }
    }

    /// Prints a finished campaign's report text on stdout when the campaign is alone; a
    /// member's stays in its directory (the parent's combined report is printed instead).
    pub fn report(&self, text: &str) {
        if let Voice::Alone = self {
            print!("{text}");
        }
    }

    /// The progress display of a campaign that speaks as this voice.
    pub(crate) fn progress(&self) -> Progress {
        match self {
            Voice::Alone => Progress::for_stderr(),
            Voice::Member(target) => Progress::for_target(target),
        }
    }
}

/// Shows progress and rewrites the reports after every finished point, so a long campaign
/// can be read (and mailed) before it ends. Reports are replaced atomically.
pub(crate) struct InterimReports<'a> {
    /// What the campaign's voice shows of its events.
    pub(crate) progress: Progress,
    /// The campaign's results directory.
    pub(crate) dir: &'a ResultsDir,
}

impl Observer for InterimReports<'_> {
    fn event(&mut self, event: &CampaignEvent) {
        self.progress.event(event);
        if let CampaignEvent::PointDone { .. } = event {
            let written = analyze(self.dir)
                .map_err(|e| crate::causes::one_line(&e))
                .and_then(|a| {
                    write_reports(self.dir, &a)
                        .map(|_| ())
                        .map_err(|e| crate::causes::one_line(&e))
                });
            if let Err(e) = written {
                self.progress
                    .event(&CampaignEvent::Warning(Warning::InterimReports(e)));
            }
        }
    }
}
