//! Who held a labgrid place for a batch's campaign, and for how long: the morning summary's
//! "lab" line, read from the `reservation` records of the campaign's own journal.
//!
//! A batch whose targets are labgrid places queues in the coordinator (the reservation is
//! the queue): each campaign reserves its place when the batch reaches it and waits there
//! behind whoever holds it. The summary says how long each campaign waited, behind whom (the
//! holder `labgrid-client show` named when the reservation was queued) and how long it held
//! the place, over every run of the campaign (a resumed one reserves again).

use std::time::Duration;

use crate::results::journal::{Event, Journal, ReservationAction};

/// A campaign's hold of its labgrid place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlaceHold {
    /// The place.
    pub place: String,
    /// Time spent in the coordinator's queue, over every run.
    pub waited: Duration,
    /// Who held the place when the campaign queued, first run first, each named once.
    pub behind: Vec<String>,
    /// Time the place was held, from each acquisition to its release.
    pub held: Duration,
    /// The last acquisition has no release after it (running, or a killed runner).
    pub holding: bool,
}

impl PlaceHold {
    /// From the journal's `reservation` records; `None` when none names a labgrid place.
    #[must_use]
    pub fn of(journal: &Journal) -> Option<PlaceHold> {
        let mut hold: Option<PlaceHold> = None;
        let mut since: Option<&str> = None;
        for event in &journal.events {
            let Event::Reservation {
                action,
                output,
                error,
                time,
                ..
            } = event
            else {
                continue;
            };
            let Some(place) = crate::labgrid::place_of(output) else {
                continue;
            };
            let h = hold.get_or_insert_with(|| PlaceHold {
                place,
                waited: Duration::ZERO,
                behind: Vec::new(),
                held: Duration::ZERO,
                holding: false,
            });
            match action {
                ReservationAction::Reserve if error.is_none() => {
                    h.waited += waited(output);
                    if let Some(holder) = behind(output)
                        && !h.behind.contains(&holder)
                    {
                        h.behind.push(holder);
                    }
                    since = Some(time);
                    h.holding = true;
                }
                ReservationAction::Reserve => {}
                ReservationAction::Release => {
                    if let Some(from) = since.take() {
                        h.held += super::stamps::between(from, time).unwrap_or_default();
                    }
                    h.holding = false;
                }
            }
        }
        hold
    }

    /// The summary's line: `labgrid place box: waited 5m 40s in the queue behind vm/alice,
    /// held it 2h 3m`.
    #[must_use]
    pub fn line(&self) -> String {
        let human = |d: Duration| humantime::format_duration(Duration::from_secs(d.as_secs()));
        let behind = if self.behind.is_empty() {
            String::new()
        } else {
            format!(" behind {}", self.behind.join(", "))
        };
        let held = match (self.holding, self.held.is_zero()) {
            (true, true) => "holds it now".to_owned(),
            (true, false) => format!("held it {} and holds it now", human(self.held)),
            (false, _) => format!("held it {}", human(self.held)),
        };
        format!(
            "labgrid place {}: waited {} in the queue{behind}, {held}",
            self.place,
            human(self.waited)
        )
    }
}

/// `reservation T allocated after N s`, summed over the record.
fn waited(output: &str) -> Duration {
    output
        .lines()
        .filter_map(|l| {
            let rest = l.split_once(" allocated after ")?.1;
            rest.strip_suffix(" s")?.parse::<u64>().ok()
        })
        .map(Duration::from_secs)
        .sum()
}

/// `place P was held by H when the reservation was queued`: H, a plain word.
fn behind(output: &str) -> Option<String> {
    output.lines().find_map(|l| {
        let rest = l.split_once(" was held by ")?.1;
        let holder = rest.strip_suffix(" when the reservation was queued")?;
        (!holder.is_empty()
            && holder.len() <= 100
            && holder
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-/@".contains(&b)))
        .then(|| holder.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::PlaceHold;
    use crate::results::journal::{Event, Journal, ReservationAction};

    fn record(action: ReservationAction, output: &str, time: &str) -> Event {
        Event::Reservation {
            action,
            command: "labgrid-client …".to_owned(),
            output: output.to_owned(),
            error: None,
            time: time.to_owned(),
        }
    }

    #[test]
    fn a_campaigns_wait_holder_and_hold_are_read_over_its_runs() {
        let journal = Journal {
            events: vec![
                record(
                    ReservationAction::Reserve,
                    "place box was held by vm/alice when the reservation was queued\nexport LG_TOKEN=AB\nreservation AB allocated after 340 s\nacquired place box",
                    "2026-12-06T01:00:00Z",
                ),
                record(
                    ReservationAction::Release,
                    "released place box",
                    "2026-12-06T02:00:00Z",
                ),
                // Resumed: its own reservation still held the place, no wait.
                record(
                    ReservationAction::Reserve,
                    "place box is still held by this campaign's reservation AB",
                    "2026-12-06T03:00:00Z",
                ),
                record(
                    ReservationAction::Release,
                    "released place box",
                    "2026-12-06T03:30:00Z",
                ),
            ],
            ..Journal::default()
        };
        let hold = PlaceHold::of(&journal).expect("a place");
        assert_eq!(hold.place, "box");
        assert_eq!(hold.waited, Duration::from_secs(340));
        assert_eq!(hold.behind, vec!["vm/alice".to_owned()]);
        assert_eq!(hold.held, Duration::from_secs(5400));
        assert!(!hold.holding);
        assert_eq!(
            hold.line(),
            "labgrid place box: waited 5m 40s in the queue behind vm/alice, held it 1h 30m"
        );
        // A forged holder is not repeated.
        let forged = Journal {
            events: vec![record(
                ReservationAction::Reserve,
                "place box was held by $(rm -rf ~) when the reservation was queued\nacquired place box",
                "2026-12-06T01:00:00Z",
            )],
            ..Journal::default()
        };
        let hold = PlaceHold::of(&forged).expect("a place");
        assert!(hold.behind.is_empty() && hold.holding);
        assert_eq!(
            hold.line(),
            "labgrid place box: waited 0s in the queue, holds it now"
        );
    }
}
