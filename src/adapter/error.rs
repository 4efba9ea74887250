//! Why an adapter's operations could not be set up: one variant per cause,
//! each naming the adapter file, for the operator reading the start-up
//! error. (A call's own failures are `AqlError`s of the call.)

use std::path::PathBuf;

use crate::protocol::registry::RegistryError;

#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    #[error("{}: cannot create the HTTP client: {source}", file.display())]
    HttpClient {
        file: PathBuf,
        #[source]
        source: reqwest::Error,
    },
    #[error("{}: {source}", file.display())]
    Register {
        file: PathBuf,
        #[source]
        source: RegistryError,
    },
}
