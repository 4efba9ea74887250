//! A panic at the hook's and the server's boundary, injected through the
//! seams production uses (the hook's `answer_failing_closed`, an operation
//! registered in the router), since no input makes the analysis panic any
//! more: the call is refused (fail closed), the refusal has its audit row,
//! and the server goes on answering.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::assemble::build_loop_core;
use crate::{
    config::Config,
    hook::answer::{self, Attempt, Verdict},
    protocol::{
        envelope::Answer,
        error::ErrorCode,
        limits::Limits,
        registry::{
            CallContext, Category, Registry,
            testing::{inert, scripted},
        },
        router::Router,
        surface::{Endpoint, Surface},
    },
    safety::core::LoopCore,
    store::audit::AuditStage,
    store::audit::{self, AuditRow},
};

/// A loop over a fresh state folder, with the shipped policy.
fn loop_core(folder: &tempfile::TempDir) -> Arc<LoopCore> {
    let mut config = Config::default();
    config.data_dir = Some(folder.path().to_owned());
    Arc::new(build_loop_core(&config).unwrap())
}

/// `agent`'s one audit row: a refusal for a panic, of `event`, about
/// `hint`, in `session`.
fn assert_refused_for_a_panic(
    core: &LoopCore,
    agent: &str,
    event: &str,
    hint: &str,
    session: &str,
) {
    let rows: Vec<AuditRow> = core.store.read(|tx| audit::rows(tx, Some(agent), 10)).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(
        (row.event.name(), row.decision.name(), row.stage.map(AuditStage::name)),
        (event, "refused", Some("panic"))
    );
    assert_eq!((row.hint.as_deref(), row.session_id.as_deref()), (Some(hint), Some(session)));
}

#[test]
fn a_panic_while_the_hook_decides_is_a_deny_with_its_audit_row() {
    let folder = tempfile::tempdir().unwrap();
    let core = loop_core(&folder);
    let answer = answer::answer_failing_closed(|attempt| -> Result<Verdict, String> {
        *attempt = Some(Attempt {
            core: core.clone(),
            agent: "claude-code:tester".into(),
            session: "claude-code:s1".into(),
            action: "cargo build".into(),
        });
        panic!("injected: the evaluator failed");
    });
    assert!(matches!(answer, Verdict::Deny(_)), "{answer:?}");
    assert_refused_for_a_panic(
        &core,
        "claude-code:tester",
        "gate",
        "cargo build",
        "claude-code:s1",
    );
}

#[test]
fn a_hook_that_panics_before_it_knows_the_call_still_denies() {
    let answer = answer::answer_failing_closed(|_| -> Result<Verdict, String> {
        panic!("injected: the payload reader failed");
    });
    assert!(matches!(answer, Verdict::Deny(_)), "{answer:?}");
}

fn request(operation: &str) -> Map<String, Value> {
    json!({ "operation": operation, "params": {} }).as_object().unwrap().clone()
}

#[tokio::test]
async fn a_panic_while_serving_a_request_refuses_it_audited_and_serving_goes_on() {
    let folder = tempfile::tempdir().unwrap();
    let core = loop_core(&folder);
    let mut registry = Registry::default();
    // A handler that panics, as a bug in any handler would.
    let explode = scripted("explode", Category::Create, None, || panic!("injected: it failed"));
    registry.register(explode).unwrap();
    registry.register(inert("calm", Category::Create, None)).unwrap();
    let config = Config::default();
    let router = Router::new(
        registry,
        Surface::new(config.endpoints, config.tool_prefix),
        Limits::default(),
        Map::new(),
    )
    .with_own_failures(core.clone());
    let mut call = CallContext::new("session-1");
    call.client = Some("tester".into());
    let endpoint = Endpoint::Semantic(Category::Create);

    let Answer::One(Err(refused)) = router.answer(&call, endpoint, &request("explode")).await
    else {
        panic!("a panicking operation was not refused");
    };
    assert_eq!(refused.code, ErrorCode::InternalError);
    assert_refused_for_a_panic(&core, "tester", "request", "explode", "session-1");

    // The same router answers the next request, and the failing one again.
    let Answer::One(calm) = router.answer(&call, endpoint, &request("calm")).await else {
        panic!("one operation answered as a batch");
    };
    assert_eq!(calm.unwrap(), json!({}));
    let Answer::One(Err(again)) = router.answer(&call, endpoint, &request("explode")).await else {
        panic!("a panicking operation was not refused twice");
    };
    assert_eq!(again.code, ErrorCode::InternalError);
}
