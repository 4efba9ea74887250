//! The HTTP runtime of adapter files: each loaded adapter becomes
//! operations `<adapter>__<operation>` in the registry, built into requests
//! (`request`), sent (`transport`) within rate limits (`rate_limit`),
//! answered (`response`), and followed page by page (`pagination`) — every
//! call through the gate first (`operation`).

pub mod operation;
pub mod pagination;
pub mod rate_limit;
pub mod request;
pub mod response;
pub mod transport;

use std::sync::Arc;

use crate::{gate::Gate, protocol::registry::Registry};

use super::{definition::AdapterDefinition, error::AdapterError};
use operation::AdapterRuntime;

/// Registers every operation of `adapters`. Errors name the adapter file;
/// a name another source already registered is one.
pub fn register(registry: &mut Registry, adapters: &[AdapterDefinition], gate: &Arc<Gate>) -> Result<usize, AdapterError> {
    let mut count = 0;
    for definition in adapters {
        let runtime = AdapterRuntime::new(definition).map_err(|source| AdapterError::HttpClient { file: definition.file.clone(), source })?;
        let runtime = Arc::new(runtime);
        for operation in &definition.operations {
            let operation = operation::operation(&definition.prefix, operation.clone(), runtime.clone(), gate.clone());
            registry.register(Arc::new(operation)).map_err(|source| AdapterError::Register { file: definition.file.clone(), source })?;
            count += 1;
        }
    }
    Ok(count)
}
