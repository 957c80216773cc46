//! Lanes: one thread per target, each running its target's work while the other targets run
//! theirs. A multi-target run is one campaign per lane; a batch is its target's campaigns one
//! after the other, in plan order.
//!
//! The engine keeps no global state besides the interrupt flag, so the threads share nothing
//! but stderr (every line prefixed `[target] `, [`Voice::Member`](super::Voice)) and Ctrl-C,
//! which stops them all at their next safe point.

/// How one lane ended.
#[derive(Debug)]
pub enum LaneEnd<R> {
    /// Its work returned.
    Done(R),
    /// Its thread panicked: an error of its target alone.
    Panicked,
    /// No thread could be started for it.
    NotStarted(std::io::Error),
}

/// Runs `work` for every `(target, item)` on its own thread, named `<prefix><target>`, and
/// returns how each lane ended, in the order of `lanes`, once every thread has ended.
pub fn run_lanes<T: Sync, R: Send>(
    prefix: &str,
    lanes: &[(String, T)],
    work: impl Fn(&str, &T) -> R + Sync,
) -> Vec<(String, LaneEnd<R>)> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = lanes
            .iter()
            .map(|(target, item)| {
                let work = &work;
                let handle = std::thread::Builder::new()
                    .name(format!("{prefix}{target}"))
                    .spawn_scoped(scope, move || work(target, item));
                (target.clone(), handle)
            })
            .collect();
        handles
            .into_iter()
            .map(|(target, handle)| {
                let end = match handle {
                    Ok(h) => h.join().map_or(LaneEnd::Panicked, LaneEnd::Done),
                    Err(e) => LaneEnd::NotStarted(e),
                };
                (target, end)
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::{LaneEnd, run_lanes};

    #[test]
    fn every_lane_ends_in_the_order_given_and_a_panic_is_its_lane_s_alone() {
        let lanes = vec![
            ("a".to_owned(), vec![1, 2]),
            ("b".to_owned(), vec![]),
            ("c".to_owned(), vec![3]),
        ];
        let ends = run_lanes("aba-test-", &lanes, |target, items: &Vec<i32>| {
            assert_eq!(
                std::thread::current().name(),
                Some(format!("aba-test-{target}").as_str())
            );
            if target == "b" {
                std::panic::panic_any("lane b fails");
            }
            items.iter().sum::<i32>()
        });
        let said: Vec<(String, Option<i32>)> = ends
            .into_iter()
            .map(|(t, end)| {
                let value = match end {
                    LaneEnd::Done(v) => Some(v),
                    LaneEnd::Panicked => None,
                    LaneEnd::NotStarted(e) => panic!("{t} not started: {e}"),
                };
                (t, value)
            })
            .collect();
        assert_eq!(
            said,
            vec![
                ("a".to_owned(), Some(3)),
                ("b".to_owned(), None),
                ("c".to_owned(), Some(3)),
            ]
        );
    }
}
