//! Showing a running campaign: two indicatif bars on a terminal (the campaign: points done and
//! an ETA that counts boots; the point: its step and run j/M), log lines printed above them;
//! plain timestamped lines when stderr is not a terminal (CI logs, `nohup`, `tee`).

use std::{
    io::{IsTerminal, Write},
    time::Duration,
};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::{
    campaign::{
        events::{CampaignEvent, Observer, Step},
        plan::format_eta,
    },
    results::samples::Status,
};

/// Renders campaign events on stderr.
pub enum Progress {
    /// Bars on a terminal.
    Bars(Bars),
    /// One line per event.
    Plain(Plain),
}

impl Progress {
    /// Bars when stderr is a terminal, plain lines otherwise.
    pub fn for_stderr() -> Progress {
        if std::io::stderr().is_terminal() {
            Progress::Bars(Bars::new())
        } else {
            Progress::Plain(Plain::default())
        }
    }

    /// One target's display in a multi-target run: plain lines prefixed `[target]`, on a
    /// terminal too, because several campaigns share one stderr and bars redrawn by
    /// independent threads would overwrite each other's lines.
    pub fn for_target(target: &str) -> Progress {
        Progress::Plain(Plain {
            prefix: format!("[{target}] "),
            ..Plain::default()
        })
    }
}

impl Observer for Progress {
    fn event(&mut self, event: &CampaignEvent) {
        match self {
            Progress::Bars(b) => b.event(event),
            Progress::Plain(p) => p.event(event),
        }
    }
}

/// The terminal display.
pub struct Bars {
    multi: MultiProgress,
    campaign: ProgressBar,
    point: ProgressBar,
    step: String,
}

impl Bars {
    fn new() -> Bars {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let campaign = multi.add(ProgressBar::new(0));
        campaign.set_style(
            ProgressStyle::with_template(
                "{prefix:.bold} [{bar:30.cyan/blue}] {pos}/{len} points  ETA {msg}",
            )
            .expect("invariant: valid template")
            .progress_chars("=> "),
        );
        campaign.set_prefix("campaign");
        let point = multi.add(ProgressBar::new(0));
        point.set_style(
            ProgressStyle::with_template("{prefix:.bold} {spinner} {msg}")
                .expect("invariant: valid template"),
        );
        point.enable_steady_tick(Duration::from_millis(200));
        Bars {
            multi,
            campaign,
            point,
            step: String::new(),
        }
    }

    fn log(&self, line: &str) {
        let _ = self.multi.println(line);
    }

    fn event(&mut self, event: &CampaignEvent) {
        match event {
            CampaignEvent::Started {
                points,
                done,
                eta,
                dir,
            } => {
                self.campaign.set_length(*points as u64);
                self.campaign.set_position(*done as u64);
                self.campaign.set_message(format_eta(*eta));
                self.log(&format!("results: {dir}"));
            }
            CampaignEvent::PointStarted { order, label, .. } => {
                self.point.set_prefix(format!("point {order} {label}"));
                self.log(&logged(event).unwrap_or_default());
            }
            CampaignEvent::Step(step) => {
                self.step = step.to_string();
                self.point.set_message(self.step.clone());
            }
            CampaignEvent::Run {
                phase,
                index,
                of,
                status,
                ..
            } => {
                let mark = if *status == Status::Ok { "" } else { " FAILED" };
                self.point.set_message(format!(
                    "{}: {} {index}/{of}{mark}",
                    self.step,
                    phase.word()
                ));
            }
            CampaignEvent::PointDone {
                label,
                elapsed,
                eta,
            } => {
                self.campaign.inc(1);
                self.campaign.set_message(format_eta(*eta));
                self.log(&format!("point {label}: done in {}", format_eta(*elapsed)));
            }
            CampaignEvent::Look { points, .. } => {
                self.campaign.set_length(*points as u64);
                self.log(&logged(event).unwrap_or_default());
            }
            CampaignEvent::PointFailed { .. }
            | CampaignEvent::Info(_)
            | CampaignEvent::Warning(_) => self.log(&logged(event).unwrap_or_default()),
        }
    }
}

/// The line both displays print for an event that is shown the same way in each.
fn logged(event: &CampaignEvent) -> Option<String> {
    match event {
        CampaignEvent::PointStarted {
            order,
            label,
            kernel,
            attempt,
        } => {
            let again = if *attempt > 1 {
                format!(" (attempt {attempt})")
            } else {
                String::new()
            };
            Some(format!("point {order} {label}: kernel {kernel}{again}"))
        }
        CampaignEvent::PointFailed {
            label,
            reason,
            retry,
        } => {
            let next = if *retry { "; redoing the point" } else { "" };
            Some(format!("point {label} failed: {reason}{next}"))
        }
        CampaignEvent::Info(text) => Some(text.clone()),
        CampaignEvent::Look {
            look,
            of,
            text,
            points,
        } => Some(format!("look {look} of {of}: {text} ({points} points)")),
        CampaignEvent::Warning(warning) => Some(format!("warning: {warning}")),
        CampaignEvent::Started { .. }
        | CampaignEvent::Step(_)
        | CampaignEvent::Run { .. }
        | CampaignEvent::PointDone { .. } => None,
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        self.point.finish_and_clear();
        self.campaign.finish();
    }
}

/// The line-per-event display.
#[derive(Default)]
pub struct Plain {
    /// `[target] ` in a multi-target run, empty otherwise.
    prefix: String,
    label: String,
    /// The step printed last: a switch reports "switching" from the engine and from each of
    /// its own phases, and one line per step is enough.
    last: Option<Step>,
}

impl Plain {
    fn line(&self, text: &str) {
        let now = time::OffsetDateTime::now_utc();
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "{:02}:{:02}:{:02} {}{text}",
            now.hour(),
            now.minute(),
            now.second(),
            self.prefix
        );
    }

    fn event(&mut self, event: &CampaignEvent) {
        match event {
            CampaignEvent::Started {
                points,
                done,
                eta,
                dir,
            } => self.line(&format!(
                "campaign: {done}/{points} points done, ETA {}; results in {dir}",
                format_eta(*eta)
            )),
            CampaignEvent::PointStarted { label, .. } => {
                self.label = label.to_string();
                self.last = None;
                self.line(&logged(event).unwrap_or_default());
            }
            CampaignEvent::Step(step) => {
                if self.last.as_ref() == Some(step) {
                    return;
                }
                self.last = Some(step.clone());
                if self.label.is_empty() {
                    self.line(&step.to_string());
                } else if !matches!(step, Step::Proving | Step::Snapshot | Step::Audit) {
                    self.line(&format!("point {}: {step}", self.label));
                }
            }
            CampaignEvent::Run {
                phase,
                index,
                status,
                ..
            } => {
                if *status != Status::Ok {
                    self.line(&format!("point {}: {phase} {index} failed", self.label));
                }
            }
            CampaignEvent::PointDone {
                label,
                elapsed,
                eta,
            } => self.line(&format!(
                "point {label}: done in {}; ETA {}",
                format_eta(*elapsed),
                format_eta(*eta)
            )),
            CampaignEvent::PointFailed { .. }
            | CampaignEvent::Look { .. }
            | CampaignEvent::Info(_)
            | CampaignEvent::Warning(_) => self.line(&logged(event).unwrap_or_default()),
        }
    }
}
