//! The streamable-HTTP transport, bound to loopback only.
//!
//! rmcp's `StreamableHttpService` speaks the protocol; in front of it a
//! middleware screens every POST body exactly as stdio screens a line, so
//! both transports refuse the same frames with the same answers. Host and
//! Origin validation stay on (loopback only), which keeps web pages and DNS
//! rebinding away from a server that holds an agent's safety state.
//! A client ending its session with DELETE gets 200 when the session was
//! open and 404 when it was not, the answers clients check for (rmcp's
//! own 202 makes the Python SDK log a failed termination on every close).

use std::{io, net::SocketAddr, sync::Arc};

use axum::{
    body::Body,
    extract::{Request, State},
    http::{Method, StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
};
use rmcp::transport::{
    StreamableHttpServerConfig, StreamableHttpService,
    streamable_http_server::session::{SessionManager, local::LocalSessionManager},
};
use tokio_util::sync::CancellationToken;

use crate::protocol::{limits::Limits, router::Router};

use super::{
    handler::DongleServer,
    screen::{Screened, refuse_unparseable},
    shutdown_signal,
};

/// The path MCP is served on.
pub const MCP_PATH: &str = "/mcp";

/// Bytes of an oversized body read (and counted) before giving up on it.
const MAX_BODY_DRAIN: usize = 64 * 1024 * 1024;

/// Serves MCP over HTTP at `addr` until SIGINT or SIGTERM. Refuses any
/// address that is not loopback.
pub async fn serve_http(router: Arc<Router>, addr: SocketAddr) -> io::Result<()> {
    if !addr.ip().is_loopback() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to listen on {addr}: only loopback addresses are allowed"),
        ));
    }
    let limits = *router.limits();
    let cancel = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.child_token())
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"])
        .with_max_request_body_bytes(MAX_BODY_DRAIN);
    let sessions = Arc::new(LocalSessionManager::default());
    let service: StreamableHttpService<DongleServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(DongleServer::new(router.clone())),
            sessions.clone(),
            config,
        );
    let app = axum::Router::new()
        .nest_service(MCP_PATH, service)
        .layer(middleware::from_fn_with_state(sessions, answer_session_end))
        .layer(middleware::from_fn_with_state(limits, screen_body));
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    tracing::info!("serving MCP on http://{bound}{MCP_PATH}");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            cancel.cancel();
        })
        .await
}

async fn screen_body(State(limits): State<Limits>, request: Request, next: Next) -> Response {
    // Before a byte of the body is read: a foreign page or a rebound DNS
    // name must not make the server buffer up to MAX_BODY_DRAIN first.
    if let Err(refused) = loopback_headers(request.headers()) {
        tracing::warn!(%refused, "refused an HTTP request from outside loopback");
        return (StatusCode::FORBIDDEN, refused).into_response();
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let mut stream = body.into_data_stream();
    let mut kept: Vec<u8> = Vec::new();
    let mut total = 0usize;
    while let Some(chunk) = futures::StreamExt::next(&mut stream).await {
        let Ok(chunk) = chunk else {
            return (StatusCode::BAD_REQUEST, "request body could not be read").into_response();
        };
        let room = limits.max_request_size.saturating_sub(kept.len());
        kept.extend_from_slice(chunk.get(..chunk.len().min(room)).unwrap_or_default());
        total += chunk.len();
        if total > MAX_BODY_DRAIN {
            break;
        }
    }
    match refuse_unparseable(&kept, total, &limits) {
        Some(Screened::Reply(reply)) => match serde_json::to_vec(&reply) {
            Ok(bytes) => ([(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
            Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        },
        Some(Screened::Ignore) => StatusCode::ACCEPTED.into_response(),
        Some(Screened::Message(_)) | None => {
            next.run(Request::from_parts(parts, Body::from(kept))).await
        }
    }
}

/// Answers a DELETE that ends a session as clients expect: 404 for a
/// session that is not open, 200 once an open one is closed. Anything
/// else passes through untouched.
async fn answer_session_end(
    State(sessions): State<Arc<LocalSessionManager>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::DELETE {
        return next.run(request).await;
    }
    let session = request
        .headers()
        .get(SESSION_ID_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(Arc::<str>::from);
    if let Some(session) = session
        && !sessions.has_session(&session).await.unwrap_or(false)
    {
        return (StatusCode::NOT_FOUND, "no such session").into_response();
    }
    let mut response = next.run(request).await;
    if response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

/// The header naming the session of a streamable-HTTP request.
const SESSION_ID_HEADER: &str = "mcp-session-id";

/// The `Host` must name a loopback host and an `Origin`, when sent, must be
/// plain HTTP on one: the same rule as rmcp's own check behind this one,
/// which it only makes earlier.
fn loopback_headers(headers: &header::HeaderMap) -> Result<(), &'static str> {
    let host = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .ok_or("a Host header naming a loopback host is required")?;
    if !is_loopback_authority(host) {
        return Err("the Host header does not name a loopback host");
    }
    match headers.get(header::ORIGIN).map(|value| value.to_str()) {
        None => Ok(()),
        Some(Ok(origin)) if origin.strip_prefix("http://").is_some_and(is_loopback_authority) => {
            Ok(())
        }
        Some(_) => Err("the Origin is not a loopback page"),
    }
}

/// `localhost`, `127.0.0.1` or `[::1]`, with an optional numeric port.
fn is_loopback_authority(authority: &str) -> bool {
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let Some((host, after)) = bracketed.split_once(']') else { return false };
        match (after.is_empty(), after.strip_prefix(':')) {
            (true, _) => (host, None),
            (false, Some(port)) => (host, Some(port)),
            (false, None) => return false,
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port_ok = port.is_none_or(|port| {
        !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit())
    });
    port_ok && matches!(host.to_ascii_lowercase().as_str(), "localhost" | "127.0.0.1" | "::1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_authorities_pass() {
        for good in
            ["localhost", "localhost:8080", "127.0.0.1:1", "[::1]:3000", "[::1]", "LOCALHOST:9"]
        {
            assert!(is_loopback_authority(good), "{good}");
        }
        for bad in [
            "evil.example",
            "localhost.evil.example:80",
            "127.0.0.2:80",
            "[::2]:1",
            "localhost:",
            "localhost:80x",
            "[::1]x",
            "[::1",
            "127.0.0.1:80:80",
            "",
        ] {
            assert!(!is_loopback_authority(bad), "{bad}");
        }
    }
}
