//! Records for tests, made the way the engine makes them.

use super::Event;

/// `point_started`.
pub(crate) fn started(point: &str, attempt: u32) -> Event {
    Event::PointStarted {
        point: point.into(),
        attempt,
        time: "t".into(),
    }
}

/// `boot_proven` of release 6.1 with `quiet` as command line, without a switch.
pub(crate) fn proven(point: &str, attempt: u32, boot: &str) -> Event {
    Event::BootProven {
        point: point.into(),
        attempt,
        boot_id: boot.into(),
        release: "6.1".into(),
        cmdline: "quiet".into(),
        switch_s: 0.0,
        login_s: 0.0,
        proof_s: None,
        proven_at: None,
    }
}

/// `point_done` without remarks.
pub(crate) fn done(point: &str, attempt: u32) -> Event {
    Event::PointDone {
        point: point.into(),
        attempt,
        dmesg_warnings: 0,
        failed_units: vec![],
        time: "t".into(),
    }
}
