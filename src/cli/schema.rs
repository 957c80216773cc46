//! `aba schema recipe|targets`: the JSON Schema of recipes or inventories, on stdout.

pub use crate::schema::SchemaOf;
use crate::{
    error::{Error, exit_code},
    schema::schema_json,
};

/// `aba schema OF`.
pub fn schema(of: SchemaOf) -> Result<u8, Error> {
    print!("{}", schema_json(of));
    Ok(exit_code::OK)
}
