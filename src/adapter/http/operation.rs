//! An adapter operation as an MCP-AQL operation: `<adapter>__<operation>`
//! (the adapter's name with `-` as `_`), its declared parameters (plus
//! `all_pages` and `page_limit` when it paginates, and the confirmation
//! token), its description ending in
//! `[adapter 'A', METHOD /path; danger_level: L]`.
//!
//! A call is built into a request first (so a call that cannot be sent
//! never bothers a human), then judged by the gate, then counted against
//! the adapter's rate limits, and only then sent; what became of it is
//! audited after.

use std::{sync::Arc, time::Instant};

use serde_json::{Map, Value, json};

use crate::{
    adapter::{
        definition::{AdapterDefinition, OperationDefinition},
        gate::{GatedCall, OperationGate, add_token_param, take_token},
        trust::TrustLevel,
    },
    protocol::{
        error::AqlError,
        params::{ParamSpec, ParamType},
        registry::{CallContext, Operation, OperationFuture, OperationSpec, ReturnType},
        request::Params,
        router::Router,
    },
};

use super::{
    pagination,
    rate_limit::RateLimiter,
    request::{self, PreparedRequest},
    response::{self, Answer},
    transport::Transport,
};

/// What every operation of one adapter shares.
pub struct AdapterRuntime {
    pub name: String,
    pub trust: Option<TrustLevel>,
    pub transport: Transport,
    pub limiter: RateLimiter,
}

impl AdapterRuntime {
    pub fn new(definition: &AdapterDefinition) -> Result<Self, String> {
        Ok(Self {
            name: definition.name.clone(),
            trust: definition.trust,
            transport: Transport::new(definition)?,
            limiter: RateLimiter::new(&definition.name, &definition.rate_limits),
        })
    }
}

pub struct HttpOperation {
    spec: OperationSpec,
    definition: OperationDefinition,
    adapter: Arc<AdapterRuntime>,
    token_param: &'static str,
    gate: Arc<OperationGate>,
}

impl HttpOperation {
    pub fn new(prefix: &str, definition: OperationDefinition, adapter: Arc<AdapterRuntime>, gate: Arc<OperationGate>) -> Self {
        let mut params: Vec<ParamSpec> = definition
            .params
            .iter()
            .map(|p| {
                let mut spec = if p.required { ParamSpec::required(&p.name, p.ty, &p.description) } else { ParamSpec::optional(&p.name, p.ty, &p.description) };
                spec.default = p.default.clone();
                spec.allowed = p.allowed.clone();
                spec
            })
            .collect();
        if let Some(pages) = &definition.pagination {
            params.push(ParamSpec::optional("all_pages", ParamType::Boolean, "Fetch every page (up to page_limit) and return their items together").with_default(json!(false)));
            params.push(
                ParamSpec::optional("page_limit", ParamType::Integer, &format!("The most pages all_pages fetches (1 to {})", pages.max_pages))
                    .with_default(json!(pages.max_pages)),
            );
        }
        let token_param = add_token_param(&mut params);
        let description = format!(
            "{} [adapter '{}', {} {}; danger_level: {}]",
            definition.description,
            adapter.name,
            definition.method.as_str(),
            definition.path,
            definition.danger.name()
        )
        .trim_start()
        .to_owned();
        let spec = OperationSpec {
            name: format!("{prefix}__{}", definition.name),
            category: definition.category,
            description,
            params,
            returns: ReturnType { name: "ApiResponse", kind: "object", description: "The API's JSON answer; with all_pages, {items, pages, complete}" },
            examples: Vec::new(),
            source: Some(adapter.name.clone()),
        };
        Self { spec, definition, adapter, token_param, gate }
    }

    async fn call(&self, call: &CallContext, params: Params) -> Result<Value, AqlError> {
        let mut arguments = params.into_map();
        let token = take_token(&mut arguments, self.token_param);
        let paging = self.paging(&mut arguments)?;
        let prepared = request::build(self.adapter.transport.base_url(), &self.definition, &arguments)?;
        let instance = Value::Object(arguments);
        let gated = GatedCall {
            operation: &self.spec.name,
            source: &self.adapter.name,
            danger: self.definition.danger,
            arguments: &instance,
            token: token.as_deref(),
            trust: self.adapter.trust,
            requires_confirmation: self.definition.requires_confirmation,
        };
        let admitted = self.gate.admit(call, gated).await?;
        let result = self.fetch(call, prepared, paging).await;
        self.gate.record_outcome(call, &admitted, if result.is_ok() { "ok" } else { "failed" });
        result
    }

    /// `Some(page_limit)` when the call asked for all pages.
    fn paging(&self, arguments: &mut Map<String, Value>) -> Result<Option<u32>, AqlError> {
        let Some(pages) = &self.definition.pagination else { return Ok(None) };
        let all = arguments.remove("all_pages").and_then(|v| v.as_bool()).unwrap_or(false);
        let limit = arguments.remove("page_limit").and_then(|v| v.as_u64()).unwrap_or(u64::from(pages.max_pages));
        if !(1..=u64::from(pages.max_pages)).contains(&limit) {
            return Err(AqlError::bad_value(&self.spec.name, "page_limit", &format!("must be between 1 and {}", pages.max_pages)));
        }
        Ok(all.then_some(u32::try_from(limit).unwrap_or(pages.max_pages)))
    }

    async fn fetch(&self, call: &CallContext, first: PreparedRequest, page_limit: Option<u32>) -> Result<Value, AqlError> {
        let retry = self.definition.method.idempotent() && !self.definition.non_idempotent;
        let mut current = first;
        let mut items: Vec<Value> = Vec::new();
        let mut pages: u32 = 0;
        let mut warned = false;
        loop {
            if let Some(warning) = self.adapter.limiter.admit(Instant::now())?
                && !warned {
                    call.warnings.push("RATE_LIMIT_QUOTA_WARNING", warning.message, warning.details);
                    warned = true;
                }
            let received = self.adapter.transport.send(&current, retry, &call.cancelled).await?;
            let answer = Answer { status: received.status, content_type: &received.content_type, body: &received.body };
            let body = response::interpret(&self.adapter.name, &self.definition.name, &answer).map_err(|mut error| {
                if let Some(seconds) = received.retry_after_secs {
                    error.details.insert("retry_after_seconds".into(), seconds.into());
                }
                error
            })?;
            let (Some(pagination), Some(limit)) = (&self.definition.pagination, page_limit) else { return Ok(body) };
            let Some(page) = pagination::items(pagination, &body) else {
                return Err(AqlError::new(
                    crate::protocol::error::ErrorCode::SerializationParseError,
                    format!("Page {} of '{}' has no list of items at '{}'", pages + 1, self.spec.name, pagination.items_field.join(".")),
                    json!({ "operation": self.spec.name, "items_field": pagination.items_field.join(".") }),
                ));
            };
            let received_items = page.len();
            items.extend(page.iter().cloned());
            pages += 1;
            let next = pagination::next_request(pagination, self.adapter.transport.base_url(), &current, received.link.as_deref(), &body, received_items);
            match next {
                None => return Ok(json!({ "items": items, "pages": pages, "complete": true })),
                Some(_) if pages >= limit => {
                    call.warnings.push(
                        "PAGINATION_INCOMPLETE",
                        format!("Stopped after {pages} pages (page_limit); more pages exist"),
                        json!({ "operation": self.spec.name, "pages": pages, "page_limit": limit }),
                    );
                    return Ok(json!({ "items": items, "pages": pages, "complete": false }));
                }
                Some(next) => current = next,
            }
        }
    }
}

impl Operation for HttpOperation {
    fn spec(&self) -> &OperationSpec {
        &self.spec
    }

    fn invoke<'a>(&'a self, _router: &'a Router, call: &'a CallContext, params: Params) -> OperationFuture<'a> {
        Box::pin(self.call(call, params))
    }
}
