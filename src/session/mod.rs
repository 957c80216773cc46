//! A campaign's lifecycle, for every command that starts or continues campaigns (`aba run`,
//! `resume`, `calibrate`, `batch`): [`prepare`] (recipe, bindings, host builds, noise
//! profile), [`launch`] (the checks, the results directory, the lock and reservation, the
//! engine, the conclusion), [`resume`], and [`lanes`], one thread per target, shared by
//! [`multi`]-target runs and [`batch`]es.
//!
//! Who a campaign speaks as is one [`Voice`], chosen when it is prepared or resumed; its
//! progress and interim reports go through the engine's observer ([`observer`]). The command
//! line (`aba::cli`) turns its options into these calls and prints what they return.

pub mod batch;
pub mod bisect;
pub mod builds;
pub mod calibrate;
pub(crate) mod clean;
pub(crate) mod conclude;
pub(crate) mod inputs;
pub(crate) mod lanes;
pub mod launch;
pub mod multi;
pub(crate) mod observer;
pub mod prepare;
pub(crate) mod private_dir;
pub mod resume;
pub(crate) mod taken;
pub mod verify;

pub use builds::HostBuilds;
pub use inputs::{Bindings, Sources};
pub use observer::Voice;
