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

use std::{path::PathBuf, sync::Arc};

use crate::{
    gate::Gate,
    protocol::registry::{Operation, OperationIndex, Registry},
};

use super::{definition::AdapterDefinition, error::AdapterError};
use operation::AdapterRuntime;

/// Registers every operation of `adapters`. Errors name the adapter file;
/// a name another source already registered is one.
pub fn register(
    registry: &mut Registry,
    adapters: &[AdapterDefinition],
    gate: &Arc<Gate>,
) -> Result<usize, AdapterError> {
    let operations = operations(adapters, gate)?;
    let count = operations.len();
    for (file, operation) in operations {
        registry.register(operation).map_err(|source| AdapterError::Register { file, source })?;
    }
    Ok(count)
}

/// Replaces the operations of the adapters named `retired` with those of
/// `adapters`, all at once: the index changes only if every new operation
/// registers.
pub fn replace(
    index: &OperationIndex,
    retired: &[String],
    adapters: &[AdapterDefinition],
    gate: &Arc<Gate>,
) -> Result<usize, AdapterError> {
    let operations = operations(adapters, gate)?;
    let count = operations.len();
    index.try_update(|registry| {
        for name in retired {
            registry.remove_source(name);
        }
        for (file, operation) in operations {
            registry
                .register(operation)
                .map_err(|source| AdapterError::Register { file, source })?;
        }
        Ok(count)
    })
}

/// An adapter's operation, with the file it comes from.
type FromFile = (PathBuf, Arc<dyn Operation>);

/// Every operation of `adapters`, with the file it comes from.
fn operations(
    adapters: &[AdapterDefinition],
    gate: &Arc<Gate>,
) -> Result<Vec<FromFile>, AdapterError> {
    let mut operations: Vec<FromFile> = Vec::new();
    for definition in adapters {
        let runtime = AdapterRuntime::new(definition)
            .map_err(|source| AdapterError::HttpClient { file: definition.file.clone(), source })?;
        let runtime = Arc::new(runtime);
        for operation in &definition.operations {
            let operation = operation::operation(
                &definition.prefix,
                operation.clone(),
                runtime.clone(),
                gate.clone(),
            );
            operations.push((definition.file.clone(), Arc::new(operation)));
        }
    }
    Ok(operations)
}
