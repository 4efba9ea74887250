//! A real HTTP API on 127.0.0.1 for the adapter tests (axum), recording
//! every request it receives exactly as it arrived (raw path, query,
//! headers, body), with routes that misbehave on purpose.

use std::{
    collections::HashMap,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    Router,
    body::to_bytes,
    extract::{Request, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
    routing::any,
};
use serde_json::{Value, json};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The path as sent, still percent-encoded.
    pub path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

#[derive(Default)]
struct Shared {
    seen: Mutex<Vec<Seen>>,
    flaky: Mutex<HashMap<String, u32>>,
    /// How long each `/slow` request lived before its handler ended,
    /// answered or dropped because the client went away.
    slow_lifetimes: Mutex<Vec<(Duration, bool)>>,
}

/// Records how long a `/slow` handler lived, and whether it answered.
struct Lifetime {
    shared: Arc<Shared>,
    started: std::time::Instant,
    answered: bool,
}

impl Drop for Lifetime {
    fn drop(&mut self) {
        self.shared.slow_lifetimes.lock().unwrap().push((self.started.elapsed(), self.answered));
    }
}

pub struct Upstream {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

impl Upstream {
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let app = Router::new().fallback(any(respond)).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { addr, shared }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.addr.port())
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    pub fn slow_lifetimes(&self) -> Vec<(Duration, bool)> {
        self.shared.slow_lifetimes.lock().unwrap().clone()
    }

    pub fn count(&self, path_prefix: &str) -> usize {
        self.seen().iter().filter(|s| s.path.starts_with(path_prefix)).count()
    }
}

fn json_response(status: u16, body: Value) -> Response {
    (
        StatusCode::from_u16(status).unwrap(),
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn query_value(query: Option<&str>, key: &str) -> Option<String> {
    query?
        .split('&')
        .find_map(|pair| pair.split_once('=').filter(|(k, _)| *k == key).map(|(_, v)| v.to_owned()))
}

async fn respond(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = to_bytes(body, 64 << 20).await.unwrap().to_vec();
    let seen = Seen {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts.headers,
        body,
    };
    shared.seen.lock().unwrap().push(seen.clone());
    let path = seen.path.strip_prefix("/v1").unwrap_or(&seen.path).to_owned();
    let query = seen.query.as_deref();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segments.as_slice() {
        ["status", code] => {
            let code: u16 = code.parse().unwrap();
            let mut response = json_response(code, json!({ "message": format!("upstream says {code}") }));
            if code == 429 {
                // As rate-limited APIs answer: when to come back.
                response.headers_mut().insert(header::RETRY_AFTER, "0".parse().unwrap());
            }
            response
        }
        ["html"] => (StatusCode::BAD_GATEWAY, [(header::CONTENT_TYPE, "text/html")], format!("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center>{}</body></html>", "x".repeat(400))).into_response(),
        ["truncated"] => (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], "{\"items\": [1, 2").into_response(),
        ["bom"] => (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], "\u{feff}{\"ok\": true}").into_response(),
        ["empty"] => StatusCode::NO_CONTENT.into_response(),
        ["binary"] => (StatusCode::OK, [(header::CONTENT_TYPE, "application/octet-stream")], vec![0u8, 159, 146, 150, 255]).into_response(),
        ["big"] => json_response(200, json!({ "blob": "y".repeat(2 << 20) })),
        ["slow"] => {
            let mut lifetime = Lifetime { shared: shared.clone(), started: std::time::Instant::now(), answered: false };
            tokio::time::sleep(Duration::from_secs(3)).await;
            lifetime.answered = true;
            json_response(200, json!({ "late": true }))
        }
        ["flaky", id] => {
            let failures: u32 = query_value(query, "fail").and_then(|f| f.parse().ok()).unwrap_or(2);
            let mut flaky = shared.flaky.lock().unwrap();
            let count = flaky.entry((*id).to_owned()).or_insert(0);
            *count += 1;
            if *count <= failures {
                let mut response = json_response(503, json!({ "message": "try again" }));
                if let Some(after) = query_value(query, "retry_after") {
                    response.headers_mut().insert(header::RETRY_AFTER, after.parse().unwrap());
                }
                response
            } else {
                json_response(200, json!({ "attempts": *count }))
            }
        }
        ["pages", "link"] => {
            let page: u32 = query_value(query, "page").and_then(|p| p.parse().ok()).unwrap_or(1);
            let mut response = json_response(200, json!([format!("item-{page}a"), format!("item-{page}b")]));
            if page < 3 {
                let next = format!("<http://{}/v1/pages/link?page={}>; rel=\"next\"", seen.headers.get("host").and_then(|h| h.to_str().ok()).unwrap_or(""), page + 1);
                response.headers_mut().insert(header::LINK, next.parse().unwrap());
            }
            response
        }
        ["pages", "elsewhere"] => {
            let mut response = json_response(200, json!(["a"]));
            response.headers_mut().insert(header::LINK, "<http://example.com/steal?page=2>; rel=\"next\"".parse().unwrap());
            response
        }
        ["pages", "cursor"] => {
            let cursor = query_value(query, "cursor").unwrap_or_default();
            let (items, next) = match cursor.as_str() {
                "" => (json!([1, 2]), json!("c2")),
                "c2" => (json!([3, 4]), json!("c3")),
                _ => (json!([5]), Value::Null),
            };
            json_response(200, json!({ "data": items, "meta": { "next": next } }))
        }
        ["pages", "offset"] => {
            let offset: usize = query_value(query, "offset").and_then(|p| p.parse().ok()).unwrap_or(0);
            let limit: usize = query_value(query, "limit").and_then(|p| p.parse().ok()).unwrap_or(2);
            let all: Vec<usize> = (0..5).collect();
            let page: Vec<usize> = all.iter().copied().skip(offset).take(limit).collect();
            json_response(200, json!({ "items": page }))
        }
        _ => json_response(200, json!({ "method": seen.method, "path": seen.path, "query": seen.query, "body": seen.json() })),
    }
}
