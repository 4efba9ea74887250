//! Batch requests (`operations.md` 7, `batch-operation.schema.json`):
//! `{ operations: [{ operation, params }, …] }` through any endpoint tool.
//!
//! Items run in order, one at a time, each through the same lookup,
//! endpoint routing, validation, field selection and gate as a single
//! request. A failure does not stop the batch (7.3), a refusal does
//! (7.5.2, halt mode): when an item is refused (denied, paused for a
//! human, blocked, out of trust, rate limited, a bad token) or answers
//! with a directive that says not to continue, the batch halts there: the
//! item is reported as `halted_at` with its whole answer (a directive's
//! notifications included) and the items after it, not run, as
//! `pending_operations`, ready to be sent again (as are the items a
//! cancelled batch did not reach). A batch that is not one
//! (no items, an item without an operation name) runs nothing and fails
//! as a whole with `BATCH_VALIDATION_ERROR`. Warnings of the items have
//! no place in the batch answer's schema and are left out.

use serde_json::{Map, Value, json};

use super::{
    envelope::envelope,
    error::AqlError,
    registry::{CallContext, OperationResult},
    router::Router,
    surface::Endpoint,
};

/// The request key that makes a request a batch.
pub const OPERATIONS_KEY: &str = "operations";

/// One item of a batch, as sent.
struct Item<'a> {
    operation: &'a str,
    request: &'a Map<String, Value>,
}

/// What became of a batch that ran.
#[derive(Debug, Default)]
pub struct BatchReport {
    results: Vec<(usize, String, OperationResult)>,
    halted_at: Option<(usize, String, OperationResult)>,
    pending: Vec<Value>,
}

/// Runs a batch request; `Err` when it is malformed and nothing ran.
pub async fn run(
    router: &Router,
    call: &CallContext,
    endpoint: Endpoint,
    arguments: &Map<String, Value>,
) -> Result<BatchReport, AqlError> {
    router.limits().check_arguments(arguments)?;
    let items = items(arguments)?;
    let mut report = BatchReport::default();
    for (index, item) in items.iter().enumerate() {
        if call.cancelled.is_cancelled() {
            report.pending = pending_from(&items, index);
            break;
        }
        let item_call = call.for_batch_item();
        let result = router.handle_checked(&item_call, endpoint, item.request).await;
        let refused = result.as_ref().err().is_some_and(|error| error.code.is_refusal());
        if refused || item_call.halt.raised() {
            report.halted_at = Some((index, item.operation.to_owned(), result));
            report.pending = pending_from(&items, index + 1);
            break;
        }
        report.results.push((index, item.operation.to_owned(), result));
    }
    Ok(report)
}

/// The items of a batch, each an object naming its operation. Keys other
/// than `operations` are refused (the schema allows none), except `_`
/// metadata.
fn items(arguments: &Map<String, Value>) -> Result<Vec<Item<'_>>, AqlError> {
    if let Some(key) = arguments.keys().find(|key| *key != OPERATIONS_KEY && !key.starts_with('_'))
    {
        return Err(AqlError::batch_invalid(format!(
            "A batch request holds only 'operations', not '{key}': put each operation's parameters in its item"
        )));
    }
    let Some(Value::Array(items)) = arguments.get(OPERATIONS_KEY) else {
        return Err(AqlError::batch_invalid(
            "'operations' must be an array of { operation, params } items",
        ));
    };
    if items.is_empty() {
        return Err(AqlError::batch_invalid("Batch request must contain at least one operation"));
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| match item {
            Value::Object(request) => match request.get("operation") {
                Some(Value::String(operation)) => Ok(Item { operation, request }),
                _ => Err(AqlError::batch_invalid(format!("Item {index} of the batch has no operation name: every item needs {{ operation, params }}; nothing was run"))),
            },
            _ => Err(AqlError::batch_invalid(format!("Item {index} of the batch is not an object: every item needs {{ operation, params }}; nothing was run"))),
        })
        .collect()
}

/// The items from `first` on, which did not run.
fn pending_from(items: &[Item], first: usize) -> Vec<Value> {
    items.iter().enumerate().skip(first).map(|(index, item)| pending(index, item)).collect()
}

/// An item that did not run, with its parameters for the continuation.
fn pending(index: usize, item: &Item) -> Value {
    let mut object = Map::new();
    object.insert("index".into(), index.into());
    object.insert("operation".into(), item.operation.into());
    if let Some(params) = item.request.get("params").filter(|params| params.is_object()) {
        object.insert("params".into(), params.clone());
    }
    Value::Object(object)
}

fn result_item(index: usize, operation: &str, result: &OperationResult) -> Value {
    json!({ "index": index, "operation": operation, "result": envelope(result, &[]) })
}

impl BatchReport {
    /// The batch success response: every result, the halt and what is
    /// pending when it halted, and the summary.
    #[expect(
        clippy::indexing_slicing,
        reason = "summary is a JSON object built here: indexing it inserts a key"
    )]
    pub fn to_json(&self) -> Value {
        let succeeded = self.results.iter().filter(|(_, _, result)| result.is_ok()).count();
        let mut summary = json!({ "total": self.results.len() + usize::from(self.halted_at.is_some()) + self.pending.len(), "succeeded": succeeded, "failed": self.results.len() - succeeded });
        let mut object = Map::new();
        object.insert("success".into(), true.into());
        object.insert("data".into(), Value::Null);
        object.insert(
            "results".into(),
            self.results
                .iter()
                .map(|(index, operation, result)| result_item(*index, operation, result))
                .collect(),
        );
        if let Some((index, operation, result)) = &self.halted_at {
            object.insert("halted_at".into(), result_item(*index, operation, result));
            summary["halted"] = 1.into();
        }
        if !self.pending.is_empty() || self.halted_at.is_some() {
            object
                .entry("pending_operations")
                .or_insert_with(|| Value::Array(self.pending.clone()));
            summary["pending"] = self.pending.len().into();
        }
        object.insert("summary".into(), summary);
        Value::Object(object)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::protocol::{
        error::ErrorCode,
        limits::Limits,
        params::{ParamSpec, ParamType},
        registry::{Category, Operation, OperationFuture, OperationSpec, Registry, ReturnType},
        request::Params,
        surface::Surface,
    };

    /// Answers with the error its `code` parameter names, or echoes.
    struct Scripted(OperationSpec);

    impl Operation for Scripted {
        fn spec(&self) -> &OperationSpec {
            &self.0
        }

        fn invoke<'a>(
            &'a self,
            _router: &'a Router,
            call: &'a CallContext,
            params: Params,
        ) -> OperationFuture<'a> {
            let answer = match params.str("code") {
                Some("refuse") => {
                    Err(AqlError::new(ErrorCode::ConfirmationRequired, "ask a human", json!({})))
                }
                Some("fail") => {
                    Err(AqlError::new(ErrorCode::ToolExecutionFailed, "broke", json!({})))
                }
                Some("halt") => {
                    call.halt.raise();
                    Ok(json!({"continue": false}))
                }
                _ => Ok(json!({"echo": params.get("value"), "extra": 1})),
            };
            Box::pin(std::future::ready(answer))
        }
    }

    fn router() -> Router {
        let spec = OperationSpec {
            name: "act".into(),
            category: Category::Create,
            description: "test".into(),
            params: vec![
                ParamSpec::optional("code", ParamType::String, "what to do"),
                ParamSpec::optional("value", ParamType::Any, "echoed"),
            ],
            returns: ReturnType { name: "T", kind: "object", description: "" },
            examples: vec![],
            source: None,
            origin: None,
            danger_level: None,
            lifecycle: None,
            field_presets: Default::default(),
        };
        let mut registry = Registry::default();
        registry.register(Arc::new(Scripted(spec))).unwrap();
        Router::new(registry, Surface::default(), Limits::default(), Map::new())
    }

    fn item(code: &str) -> Value {
        json!({"operation": "act", "params": {"code": code, "value": code}})
    }

    async fn run_batch(router: &Router, call: &CallContext, items: Vec<Value>) -> Value {
        let arguments = json!({ "operations": items });
        router
            .answer(call, Endpoint::Semantic(Category::Create), arguments.as_object().unwrap())
            .await
            .envelope(&[])
    }

    #[tokio::test]
    async fn a_refusal_or_a_raised_halt_stops_the_batch_and_a_failure_does_not() {
        let router = router();
        let call = CallContext::new("s");
        for stopper in ["refuse", "halt"] {
            let answer = run_batch(
                &router,
                &call,
                vec![item("ok"), item("fail"), item(stopper), item("ok")],
            )
            .await;
            assert_eq!(
                answer["summary"],
                json!({"total": 4, "succeeded": 1, "failed": 1, "halted": 1, "pending": 1}),
                "{stopper}: {answer}"
            );
            assert_eq!(answer["halted_at"]["index"], 2);
            assert_eq!(
                answer["pending_operations"],
                json!([{"index": 3, "operation": "act", "params": {"code": "ok", "value": "ok"}}])
            );
        }
        assert!(!call.halt.raised(), "an item's halt is its own, not the caller's");
        let clean = run_batch(&router, &call, vec![item("ok"), item("ok")]).await;
        assert_eq!(clean["summary"], json!({"total": 2, "succeeded": 2, "failed": 0}));
        assert!(clean.get("halted_at").is_none() && clean.get("pending_operations").is_none());
    }

    #[tokio::test]
    async fn each_item_selects_its_own_fields() {
        let router = router();
        let mut selected = item("ok");
        selected["params"]["fields"] = json!(["echo"]);
        let answer = run_batch(&router, &CallContext::new("s"), vec![selected, item("ok")]).await;
        assert_eq!(answer["results"][0]["result"]["data"], json!({"echo": "ok"}));
        assert_eq!(answer["results"][1]["result"]["data"], json!({"echo": "ok", "extra": 1}));
    }

    #[tokio::test]
    async fn a_cancelled_batch_runs_nothing_more_and_says_what_is_pending() {
        let router = router();
        let call = CallContext::new("s");
        call.cancelled.cancel();
        let answer = run_batch(&router, &call, vec![item("ok"), item("ok")]).await;
        assert_eq!(
            answer["summary"],
            json!({"total": 2, "succeeded": 0, "failed": 0, "pending": 2})
        );
        assert!(answer.get("halted_at").is_none());
    }
}
