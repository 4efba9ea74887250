//! An adapter operation as an MCP-AQL operation: `<adapter>__<operation>`
//! (the adapter's name with `-` as `_`), its declared parameters (plus
//! `all_pages` and `page_limit` when it paginates, and the confirmation
//! token), its details' description ending in
//! `[adapter 'A', METHOD /path; danger_level: L]`, and a minimal call as
//! its example (its required parameters: defaults, first allowed values,
//! or placeholders), kept only when the operation accepts it and can
//! build the request it makes.
//!
//! It runs the gate's one sequence (`gate::operation`): a call is built
//! into a request first (so a call that cannot be sent never bothers a
//! human), then judged by the gate, then counted against the adapter's
//! rate limits, and only then sent with its admission; what became of it
//! is audited after.

use std::{sync::Arc, time::Instant};

use serde_json::{Map, Value, json};

use crate::{
    adapter::definition::{AdapterDefinition, OperationDefinition},
    gate::{
        Admission, Gate,
        operation::{GatedOperation, Judged, Outcome, Prepared, SendFuture, Sent, Upstream},
        trust::TrustLevel,
    },
    protocol::{
        error::{AqlError, ErrorCode},
        params::{ParamSpec, ParamType},
        registry::{CallContext, OperationSpec, ReturnType},
        request::resolve_params,
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
    /// Its operations' name prefix.
    pub prefix: String,
    pub trust: Option<TrustLevel>,
    pub transport: Transport,
    pub limiter: RateLimiter,
}

impl AdapterRuntime {
    pub fn new(definition: &AdapterDefinition) -> Result<Self, reqwest::Error> {
        Ok(Self {
            name: definition.name.clone(),
            prefix: definition.prefix.clone(),
            trust: definition.trust,
            transport: Transport::new(definition)?,
            limiter: RateLimiter::new(&definition.name, &definition.rate_limits),
        })
    }
}

/// One adapter operation as the gate's upstream.
pub struct HttpUpstream {
    definition: OperationDefinition,
    adapter: Arc<AdapterRuntime>,
}

/// A built request, and how many pages to follow (`None`: one).
pub struct HttpCall {
    request: PreparedRequest,
    page_limit: Option<u32>,
}

/// The operation `<prefix>__<name>` for an adapter operation.
pub fn operation(
    prefix: &str,
    definition: OperationDefinition,
    adapter: Arc<AdapterRuntime>,
    gate: Arc<Gate>,
) -> GatedOperation<HttpUpstream> {
    let mut params: Vec<ParamSpec> = definition
        .params
        .iter()
        .map(|p| {
            let mut spec = if p.required {
                ParamSpec::required(&p.name, p.ty, &p.description)
            } else {
                ParamSpec::optional(&p.name, p.ty, &p.description)
            };
            spec.default = p.default.clone();
            spec.allowed = p.allowed.clone();
            spec
        })
        .collect();
    if let Some(pages) = &definition.pagination {
        params.push(
            ParamSpec::optional(
                "all_pages",
                ParamType::Boolean,
                "Fetch every page (up to page_limit) and return their items together",
            )
            .with_default(json!(false)),
        );
        params.push(
            ParamSpec::optional(
                "page_limit",
                ParamType::Integer,
                &format!("The most pages all_pages fetches (1 to {})", pages.max_pages),
            )
            .with_default(json!(pages.max_pages)),
        );
    }
    let mut spec = OperationSpec {
        name: format!("{prefix}__{}", definition.name),
        category: definition.category,
        description: definition.description.trim().to_owned(),
        params,
        returns: ReturnType {
            name: "ApiResponse",
            kind: "object",
            description: "The API's JSON answer; with all_pages, {items, pages, complete}",
        },
        examples: Vec::new(),
        source: Some(adapter.name.clone()),
        origin: Some(format!(
            "adapter '{}', {} {}",
            adapter.name,
            definition.method.as_str(),
            definition.path
        )),
        danger_level: None,
        lifecycle: None,
        field_presets: Default::default(),
    };
    spec.examples.extend(sendable_example(&spec, &definition, adapter.transport.base_url()));
    let judged = Judged {
        source: adapter.name.clone(),
        danger: definition.danger,
        trust: adapter.trust,
        requires_confirmation: definition.requires_confirmation,
    };
    GatedOperation::new(spec, judged, HttpUpstream { definition, adapter }, gate)
}

/// The spec's minimal call, if it passes the operation's validation and
/// builds a request: an example the agent can send as it is.
fn sendable_example(
    spec: &OperationSpec,
    definition: &OperationDefinition,
    base: &reqwest::Url,
) -> Option<(String, Value)> {
    let (description, params) = spec.minimal_example();
    let arguments = Map::from_iter([("params".to_owned(), params.clone())]);
    let resolved = resolve_params(spec, &arguments).ok()?;
    request::build(base, definition, &resolved.into_map()).ok()?;
    Some((description, params))
}

impl Upstream for HttpUpstream {
    type Call = HttpCall;

    fn prepare(
        &self,
        spec: &OperationSpec,
        mut arguments: Map<String, Value>,
    ) -> Result<Prepared<HttpCall>, AqlError> {
        let page_limit = self.paging(spec, &mut arguments)?;
        let request =
            request::build(self.adapter.transport.base_url(), &self.definition, &arguments)?;
        Ok(Prepared {
            call: HttpCall { request, page_limit },
            judged_arguments: Value::Object(arguments),
        })
    }

    fn send<'a>(
        &'a self,
        admission: &'a Admission,
        call: HttpCall,
        context: &'a CallContext,
    ) -> SendFuture<'a> {
        Box::pin(async move {
            let result = self.fetch(admission, context, call).await;
            Sent { outcome: if result.is_ok() { Outcome::Ok } else { Outcome::Failed }, result }
        })
    }
}

impl HttpUpstream {
    /// `Some(page_limit)` when the call asked for all pages.
    fn paging(
        &self,
        spec: &OperationSpec,
        arguments: &mut Map<String, Value>,
    ) -> Result<Option<u32>, AqlError> {
        let Some(pages) = &self.definition.pagination else { return Ok(None) };
        let all = arguments.remove("all_pages").and_then(|v| v.as_bool()).unwrap_or(false);
        let limit = arguments
            .remove("page_limit")
            .and_then(|v| v.as_u64())
            .unwrap_or(u64::from(pages.max_pages));
        if !(1..=u64::from(pages.max_pages)).contains(&limit) {
            return Err(AqlError::bad_value(
                &spec.name,
                "page_limit",
                &format!("must be between 1 and {}", pages.max_pages),
            ));
        }
        Ok(all.then_some(u32::try_from(limit).unwrap_or(pages.max_pages)))
    }

    /// A 200 or 201 answer's body against the operation's response
    /// schema, when it declares one (each page on its own).
    fn check_answer(&self, operation: &str, status: u16, body: &Value) -> Result<(), AqlError> {
        match self.definition.response_schema.as_deref() {
            Some(schema) if matches!(status, 200 | 201) => schema.check_answer(operation, body),
            _ => Ok(()),
        }
    }

    async fn fetch(
        &self,
        admission: &Admission,
        call: &CallContext,
        HttpCall { request: first, page_limit }: HttpCall,
    ) -> Result<Value, AqlError> {
        let operation = format!("{}__{}", self.adapter.prefix, self.definition.name);
        let retry = self.definition.method.idempotent() && !self.definition.non_idempotent;
        let mut current = first;
        let mut items: Vec<Value> = Vec::new();
        let mut pages: u32 = 0;
        let mut warned = false;
        loop {
            if let Some(warning) = self.adapter.limiter.admit(Instant::now())?
                && !warned
            {
                call.warnings.push("RATE_LIMIT_QUOTA_WARNING", warning.message, warning.details);
                warned = true;
            }
            let received = self
                .adapter
                .transport
                .send(admission, &operation, &current, retry, &call.cancelled)
                .await?;
            let answer = Answer {
                status: received.status,
                content_type: &received.content_type,
                body: &received.body,
            };
            let body = response::interpret(&self.adapter.name, &self.definition.name, &answer)
                .map_err(|mut error| {
                    if error.code == ErrorCode::RateLimitExceeded {
                        self.adapter
                            .limiter
                            .upstream_refusal(received.retry_after_secs)
                            .add_to(&mut error.details);
                    } else if let Some(seconds) = received.retry_after_secs {
                        error.details.insert("retry_after_seconds".into(), seconds.into());
                    }
                    error
                })?;
            self.check_answer(&operation, received.status, &body)?;
            let (Some(pagination), Some(limit)) = (&self.definition.pagination, page_limit) else {
                return Ok(body);
            };
            let Some(page) = pagination::items(pagination, &body) else {
                return Err(AqlError::new(
                    ErrorCode::SerializationParseError,
                    format!(
                        "Page {} of '{operation}' has no list of items at '{}'",
                        pages + 1,
                        pagination.items_field.join(".")
                    ),
                    json!({ "operation": operation, "items_field": pagination.items_field.join(".") }),
                ));
            };
            let received_items = page.len();
            items.extend(page.iter().cloned());
            pages += 1;
            let next = pagination::next_request(
                pagination,
                self.adapter.transport.base_url(),
                &current,
                received.link.as_deref(),
                &body,
                received_items,
            );
            match next {
                None => return Ok(json!({ "items": items, "pages": pages, "complete": true })),
                Some(_) if pages >= limit => {
                    call.warnings.push(
                        "PAGINATION_INCOMPLETE",
                        format!("Stopped after {pages} pages (page_limit); more pages exist"),
                        json!({ "operation": operation, "pages": pages, "page_limit": limit }),
                    );
                    return Ok(json!({ "items": items, "pages": pages, "complete": false }));
                }
                Some(next) => current = next,
            }
        }
    }
}
