//! The inventory's notification commands: `on_finish` when a campaign finishes, `on_failure`
//! when it stops (not on Ctrl-C), run on the host with `{dir}`, `{reason}` and `{target}`.

use std::time::Duration;

use super::{Engine, Outcome};
use crate::{campaign::events::Warning, causes::one_line, target::host::run_host};

/// How long a notification command may take.
const HOOK_TIMEOUT: Duration = Duration::from_secs(120);

impl Engine<'_> {
    pub(super) fn notify(&mut self, outcome: &Outcome) {
        let target = self.target;
        let (command, reason) = match outcome {
            Outcome::Finished => (target.on_finish.as_ref(), "finished".to_owned()),
            Outcome::Stopped(stop) => (target.on_failure.as_ref(), stop.to_string()),
            Outcome::Interrupted => (None, String::new()),
        };
        let Some(command) = command else { return };
        let dir = self.dir.root.display().to_string();
        let vars = [
            ("dir", dir.as_str()),
            ("reason", reason.as_str()),
            ("target", target.name.as_str()),
        ];
        match run_host(command, &vars, &target.base_dir, HOOK_TIMEOUT) {
            Ok(_) => self.info(format!("ran notification command `{command}`")),
            Err(e) => self.notice(Warning::Notification(one_line(&e))),
        }
    }
}
