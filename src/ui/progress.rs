//! Showing a running campaign: two indicatif bars on a terminal (the campaign: points done, the
//! time elapsed and an ETA from the points' measured durations ([`crate::campaign::eta`]); the point: its step and run j/M), log lines printed above them;
//! plain timestamped lines when stderr is not a terminal (CI logs, `nohup`, `tee`). In a
//! multi-target run on a terminal each target has one line of its own (points done, the
//! point's step and run, the ETA), all drawn by one display shared by the targets' threads.

use std::{
    io::{IsTerminal, Write},
    sync::OnceLock,
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
    /// One target's line of a multi-target run on a terminal.
    Target(TargetBar),
    /// One line per event.
    Plain(Plain),
}

/// The display the targets of a multi-target run share on a terminal; `None` when stderr is
/// not one (each event is then a line of its own).
fn shared_display() -> Option<&'static MultiProgress> {
    static DISPLAY: OnceLock<Option<MultiProgress>> = OnceLock::new();
    DISPLAY
        .get_or_init(|| {
            std::io::stderr()
                .is_terminal()
                .then(|| MultiProgress::with_draw_target(ProgressDrawTarget::stderr()))
        })
        .as_ref()
}

/// Prints one line of a multi-target run on stderr: above the targets' lines when they are
/// drawn (a plain `eprintln!` would be overwritten by the next redraw).
pub fn say_line(line: &str) {
    match shared_display() {
        Some(display) => {
            let _ = display.println(line);
        }
        None => eprintln!("{line}"),
    }
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

    /// One target's display in a multi-target run: its own line of the shared display on a
    /// terminal (one drawer for every thread, so no target overwrites another's line), plain
    /// lines prefixed `[target]` otherwise.
    pub fn for_target(target: &str) -> Progress {
        match shared_display() {
            Some(display) => Progress::Target(TargetBar::new(display, target)),
            None => Progress::Plain(Plain {
                prefix: format!("[{target}] "),
                ..Plain::default()
            }),
        }
    }
}

impl Observer for Progress {
    fn event(&mut self, event: &CampaignEvent) {
        match self {
            Progress::Bars(b) => b.event(event),
            Progress::Target(t) => t.event(event),
            Progress::Plain(p) => p.event(event),
        }
    }
}

/// One target's line in a multi-target run on a terminal: `[target] [===>  ] 2/6  point b:
/// sample 3/5 · ETA 41m`; its log lines are printed above every target's line, prefixed.
pub struct TargetBar {
    display: MultiProgress,
    bar: ProgressBar,
    prefix: String,
    /// `point b`, the point under way.
    point: String,
    /// Its step (`switching`, `sample 3/5`), empty at its start.
    step: String,
    eta: String,
}

impl TargetBar {
    fn new(display: &MultiProgress, target: &str) -> TargetBar {
        let bar = display.add(ProgressBar::new(0));
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix:.bold} [{bar:20.cyan/blue}] {pos}/{len}  {elapsed_precise}  {msg}",
            )
            .expect("invariant: valid template")
            .progress_chars("=> "),
        );
        bar.set_prefix(format!("[{target}]"));
        bar.enable_steady_tick(Duration::from_millis(500));
        TargetBar {
            display: display.clone(),
            bar,
            prefix: format!("[{target}] "),
            point: "starting".to_owned(),
            step: String::new(),
            eta: String::new(),
        }
    }

    fn log(&self, line: &str) {
        let _ = self.display.println(format!("{}{line}", self.prefix));
    }

    fn show(&self) {
        let at = if self.step.is_empty() {
            self.point.clone()
        } else {
            format!("{}: {}", self.point, self.step)
        };
        self.bar.set_message(format!("{at} · ETA {}", self.eta));
    }

    fn event(&mut self, event: &CampaignEvent) {
        match event {
            CampaignEvent::Started {
                points,
                done,
                eta,
                dir,
            } => {
                self.bar.set_length(*points as u64);
                self.bar.set_position(*done as u64);
                self.eta = eta.to_string();
                self.log(&format!("results: {dir}"));
            }
            CampaignEvent::PointStarted { name, .. } => {
                self.point = format!("point {name}");
                self.step.clear();
                self.log(&logged(event).unwrap_or_default());
            }
            CampaignEvent::Step(step) => self.step = step.to_string(),
            CampaignEvent::Run {
                phase,
                index,
                of,
                status,
                eta,
                ..
            } => {
                self.step = run_text(phase.word(), *index, *of, *status);
                self.eta = eta.to_string();
            }
            CampaignEvent::PointDone { name, elapsed, eta } => {
                self.bar.inc(1);
                self.eta = eta.to_string();
                self.point = format!("point {name} done");
                self.step.clear();
                self.log(&format!("point {name}: done in {}", format_eta(*elapsed)));
            }
            CampaignEvent::Look { points, .. } => {
                self.bar.set_length(*points as u64);
                self.log(&logged(event).unwrap_or_default());
            }
            CampaignEvent::PointFailed { .. }
            | CampaignEvent::Info(_)
            | CampaignEvent::Warning(_) => self.log(&logged(event).unwrap_or_default()),
        }
        self.show();
    }
}

impl Drop for TargetBar {
    fn drop(&mut self) {
        // The redrawn line goes; where the target ended stays, as a line above the others.
        let last = format!(
            "{}/{} points; last: {}",
            self.bar.position(),
            self.bar.length().unwrap_or(0),
            self.point
        );
        self.display.remove(&self.bar);
        self.log(&last);
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
        Bars::drawn_to(ProgressDrawTarget::stderr())
    }

    fn drawn_to(target: ProgressDrawTarget) -> Bars {
        let multi = MultiProgress::with_draw_target(target);
        let campaign = multi.add(ProgressBar::new(0));
        campaign.set_style(
            ProgressStyle::with_template(
                "{prefix:.bold} [{bar:30.cyan/blue}] {pos}/{len} points  {elapsed_precise} elapsed  ETA {msg}",
            )
            .expect("invariant: valid template")
            .progress_chars("=> "),
        );
        campaign.set_prefix("campaign");
        // The elapsed time moves between events too.
        campaign.enable_steady_tick(Duration::from_secs(1));
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
                self.campaign.set_message(eta.to_string());
                self.log(&format!("results: {dir}"));
            }
            CampaignEvent::PointStarted { order, name, .. } => {
                self.point.set_prefix(format!("point {order} {name}"));
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
                eta,
                ..
            } => {
                self.campaign.set_message(eta.to_string());
                self.point.set_message(format!(
                    "{}: {}",
                    self.step,
                    run_text(phase.word(), *index, *of, *status)
                ));
            }
            CampaignEvent::PointDone { name, elapsed, eta } => {
                self.campaign.inc(1);
                self.campaign.set_message(eta.to_string());
                self.log(&format!("point {name}: done in {}", format_eta(*elapsed)));
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

/// A run's place in its phase, as the bars show it: `sample 3/5`, `warm-up 1/1 FAILED`.
fn run_text(phase: &str, index: u32, of: u32, status: Status) -> String {
    let mark = if status == Status::Ok { "" } else { " FAILED" };
    format!("{phase} {index}/{of}{mark}")
}

/// The line both displays print for an event that is shown the same way in each.
fn logged(event: &CampaignEvent) -> Option<String> {
    match event {
        CampaignEvent::PointStarted {
            order,
            name,
            kernel,
            attempt,
        } => {
            let again = if *attempt > 1 {
                format!(" (attempt {attempt})")
            } else {
                String::new()
            };
            Some(format!("point {order} {name}: kernel {kernel}{again}"))
        }
        CampaignEvent::PointFailed {
            name,
            reason,
            retry,
        } => {
            let next = if *retry { "; redoing the point" } else { "" };
            Some(format!("point {name} failed: {reason}{next}"))
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
    /// The campaign's bar stays where the campaign got to: `abandon`, not `finish`, which
    /// would move it to its length and show an interrupted campaign as "5/5 points".
    fn drop(&mut self) {
        self.point.finish_and_clear();
        self.campaign.abandon();
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
                "campaign: {done}/{points} points done, ETA {eta}; results in {dir}"
            )),
            CampaignEvent::PointStarted { name, .. } => {
                self.label.clone_from(name);
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
            CampaignEvent::PointDone { name, elapsed, eta } => self.line(&format!(
                "point {name}: done in {}; ETA {eta}",
                format_eta(*elapsed)
            )),
            CampaignEvent::PointFailed { .. }
            | CampaignEvent::Look { .. }
            | CampaignEvent::Info(_)
            | CampaignEvent::Warning(_) => self.line(&logged(event).unwrap_or_default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use indicatif::ProgressDrawTarget;

    use super::Bars;
    use crate::campaign::{eta::Eta, events::CampaignEvent};

    /// Issue 29 item 6: a campaign stopped after one of five points (Ctrl-C) leaves its bar at
    /// 1/5, not at "5/5 points".
    #[test]
    fn an_interrupted_campaign_leaves_its_bar_where_it_got_to() {
        let mut bars = Bars::drawn_to(ProgressDrawTarget::hidden());
        bars.event(&CampaignEvent::Started {
            points: 5,
            done: 0,
            eta: Eta::Unknown,
            dir: "results/x".to_owned(),
        });
        bars.event(&CampaignEvent::PointDone {
            name: "a#1".to_owned(),
            elapsed: Duration::from_secs(12),
            eta: Eta::Left(Duration::from_secs(48)),
        });
        let campaign = bars.campaign.clone();
        drop(bars);
        assert_eq!((campaign.position(), campaign.length()), (1, Some(5)));
        assert!(campaign.is_finished());
    }
}
