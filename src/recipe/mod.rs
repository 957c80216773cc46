//! Recipes: what one experiment is. Parsing, validation and the resolved model.

pub mod diagnostic;
pub mod ident;
pub mod limits;
pub mod load;
pub mod model;
pub mod params;
pub mod range;
pub mod resolved;
pub(crate) mod scoped_limits;

pub use load::{Diagnostics, FilesFrom, Loader, Params, RecipeError, parse};
pub use resolved::{Case, Kernel, Metric, Recipe, Workload};
