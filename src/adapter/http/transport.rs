//! Sending an adapter's requests (runtime seed 8.3, seed 004): one reqwest
//! client (rustls) per adapter with its timeout per attempt; retries
//! (`adapter::retry`, the backoff every upstream shares) for idempotent
//! requests only, on transport failures and 429/502/503/504, waiting as
//! long as a 429/503's `Retry-After` asks (up to a minute); a response size limit enforced
//! while reading; the client's cancellation honoured at every await;
//! redirects followed only within the adapter's own origin, so a
//! credential never follows a redirect elsewhere.
//!
//! Credentials are read from the environment as each request leaves and
//! attached as sensitive headers (or the API key's query parameter). No
//! error built here carries a URL, a header or upstream transport text
//! that could hold one.

use std::time::Duration;

use reqwest::{Client, Url, header::HeaderValue, redirect};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::{
    gate::Admission,
    protocol::error::{AqlError, ErrorCode, LimitKind},
};

use super::{
    super::{
        definition::{AdapterDefinition, Auth, KeyPlace, Target},
        retry::{Retry, RetryPolicy, transient},
    },
    request::PreparedRequest,
};

/// The longest `Retry-After` the runtime waits out before retrying; a
/// longer one ends the call with the upstream's answer.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
const MAX_REDIRECTS: usize = 5;

/// An upstream's answer, read within the size limit.
#[derive(Debug)]
pub struct Received {
    pub status: u16,
    pub content_type: String,
    /// Every `Link` header, joined with commas.
    pub link: Option<String>,
    /// `Retry-After`, in seconds, on a 429 or 503.
    pub retry_after_secs: Option<u64>,
    pub body: Vec<u8>,
}

pub struct Transport {
    adapter: String,
    client: Client,
    target: Target,
    auth: Auth,
}

impl Transport {
    pub fn new(definition: &AdapterDefinition) -> Result<Self, reqwest::Error> {
        let origin = definition.target.base_url.origin();
        let policy = redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS || attempt.url().origin() != origin {
                attempt.stop()
            } else {
                attempt.follow()
            }
        });
        let client = Client::builder()
            .timeout(definition.target.timeout)
            .redirect(policy)
            .user_agent(concat!("safety-dongle/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self {
            adapter: definition.name.clone(),
            client,
            target: definition.target.clone(),
            auth: definition.auth.clone(),
        })
    }

    pub fn base_url(&self) -> &Url {
        &self.target.base_url
    }

    /// Sends `request`, which the gate admitted, retrying it when `retry`
    /// allows (an idempotent request) and the failure is worth another
    /// attempt (`adapter::retry`).
    pub async fn send(
        &self,
        _admitted: &Admission,
        operation: &str,
        request: &PreparedRequest,
        retry: bool,
        cancelled: &CancellationToken,
    ) -> Result<Received, AqlError> {
        let policy = if retry {
            self.target.retry
        } else {
            RetryPolicy { max_retries: 0, ..self.target.retry }
        };
        let judge = |outcome: &Result<Received, AqlError>| match outcome {
            Ok(received) if matches!(received.status, 429 | 502 | 503 | 504) => {
                let why = format!("HTTP {}", received.status);
                match received.retry_after_secs.map(Duration::from_secs) {
                    Some(asked) if asked > MAX_RETRY_AFTER => Retry::Done,
                    Some(wait) => Retry::After { wait, why },
                    None => Retry::Backoff { why },
                }
            }
            Err(error) if transient(error) => {
                Retry::Backoff { why: error.code.as_str().to_owned() }
            }
            _ => Retry::Done,
        };
        policy
            .run(operation, cancelled, || self.cancelled(), |_| self.attempt(request), judge)
            .await
    }

    async fn attempt(&self, request: &PreparedRequest) -> Result<Received, AqlError> {
        let mut url = request.url.clone();
        let mut builder_auth: Option<(String, HeaderValue)> = None;
        match &self.auth {
            Auth::None => {}
            Auth::Bearer { token_env } => {
                let token = secret(token_env)?;
                builder_auth = Some((
                    "authorization".into(),
                    sensitive(&format!("Bearer {token}"), token_env)?,
                ));
            }
            Auth::Basic { username_env, password_env } => {
                let user = secret(username_env)?;
                let password = secret(password_env)?;
                let encoded = base64(format!("{user}:{password}").as_bytes());
                builder_auth = Some((
                    "authorization".into(),
                    sensitive(&format!("Basic {encoded}"), username_env)?,
                ));
            }
            Auth::ApiKey { key_env, place: KeyPlace::Header(name) } => {
                builder_auth = Some((name.clone(), sensitive(&secret(key_env)?, key_env)?));
            }
            Auth::ApiKey { key_env, place: KeyPlace::Query(name) } => {
                url.query_pairs_mut().append_pair(name, &secret(key_env)?);
            }
        }
        let mut builder = self.client.request(request.method.clone(), url);
        for (name, value) in &request.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        if let Some((name, value)) = builder_auth {
            builder = builder.header(name, value);
        }
        if let Some(body) = &request.body {
            let bytes = serde_json::to_vec(body)
                .map_err(|_| AqlError::internal("a request body could not be serialised"))?;
            builder = builder.header("content-type", "application/json").body(bytes);
        }
        builder = builder.header("accept", "application/json");
        let mut response = builder.send().await.map_err(|e| self.transport_error(&e))?;
        let limit = self.target.max_response_bytes;
        if let Some(length) = response.content_length().filter(|&length| length > limit as u64) {
            return Err(self.too_large(usize::try_from(length).unwrap_or(usize::MAX)));
        }
        let status = response.status().as_u16();
        let headers = response.headers();
        let text = |name: &str| {
            headers
                .get_all(name)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let content_type = text("content-type");
        let link = Some(text("link")).filter(|l| !l.is_empty());
        let retry_after_secs =
            matches!(status, 429 | 503).then(|| retry_after(&text("retry-after"))).flatten();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport_error(&e))? {
            if body.len() + chunk.len() > limit {
                return Err(self.too_large(body.len() + chunk.len()));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Received { status, content_type, link, retry_after_secs, body })
    }

    /// An answer over the size limit, as `error-codes.md` 4.7 says:
    /// `actual` is what it declared, or what had arrived when reading
    /// stopped (so at least that much).
    fn too_large(&self, actual: usize) -> AqlError {
        let mut error = AqlError::payload_too_large(
            LimitKind::ResponseSize,
            self.target.max_response_bytes,
            actual,
        );
        error.details.insert("adapter".into(), self.adapter.clone().into());
        error
    }

    fn cancelled(&self) -> AqlError {
        AqlError::new(
            ErrorCode::TransportNetworkError,
            format!("The request to adapter '{}' was cancelled by the client", self.adapter),
            json!({ "adapter": self.adapter, "cancelled": true }),
        )
    }

    /// Seed 8.3's transport failures, from the error's kind and its inner
    /// causes (whose text never holds the URL; reqwest's own does).
    fn transport_error(&self, error: &reqwest::Error) -> AqlError {
        let host = self.target.base_url.host_str().unwrap_or("?").to_owned();
        let port = self.target.base_url.port_or_known_default().unwrap_or(0);
        let mut causes = Vec::new();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            causes.push(cause.to_string());
            source = cause.source();
        }
        let chain = causes.join(": ");
        let lower = chain.to_ascii_lowercase();
        let refused = causes.iter().any(|c| c.to_ascii_lowercase().contains("connection refused"));
        let (code, message) = if error.is_timeout() {
            (
                ErrorCode::TransportTimeout,
                format!("Request timed out after {}ms", self.target.timeout.as_millis()),
            )
        } else if lower.contains("dns error") || lower.contains("failed to lookup address") {
            (ErrorCode::TransportDnsError, format!("Could not resolve host: {host}"))
        } else if refused {
            (ErrorCode::TransportConnectionRefused, format!("Connection refused: {host}:{port}"))
        } else if lower.contains("certificate")
            || lower.contains("tls")
            || lower.contains("handshake")
        {
            (ErrorCode::TransportTlsError, format!("TLS error: {chain}"))
        } else {
            let details =
                if chain.is_empty() { "the connection failed".to_owned() } else { chain.clone() };
            (ErrorCode::TransportNetworkError, format!("Network error: {details}"))
        };
        AqlError::new(
            code,
            format!("{message} (adapter '{}')", self.adapter),
            json!({ "adapter": self.adapter }),
        )
    }
}

/// A credential from the environment; its absence names the variable,
/// never a value.
fn secret(variable: &str) -> Result<String, AqlError> {
    match std::env::var(variable) {
        Ok(value) if !value.is_empty() => Ok(value),
        _ => Err(AqlError::new(
            ErrorCode::AuthCredentialMissing,
            format!(
                "Credential not found: set the environment variable {variable} for safety-dongle"
            ),
            json!({ "env": variable }),
        )),
    }
}

fn sensitive(value: &str, variable: &str) -> Result<HeaderValue, AqlError> {
    let mut header = HeaderValue::from_str(value).map_err(|_| {
        AqlError::new(
            ErrorCode::AuthCredentialMissing,
            format!("The credential in {variable} is not valid in an HTTP header"),
            json!({ "env": variable }),
        )
    })?;
    header.set_sensitive(true);
    Ok(header)
}

/// `Retry-After` as seconds: delta-seconds or an HTTP date.
fn retry_after(value: &str) -> Option<u64> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(seconds);
    }
    let at = httpdate_to_system_time(value)?;
    Some(at.duration_since(std::time::SystemTime::now()).map_or(0, |d| d.as_secs()))
}

fn httpdate_to_system_time(value: &str) -> Option<std::time::SystemTime> {
    // IMF-fixdate, as RFC 9110 requires senders to use:
    // "Sun, 06 Nov 1994 08:49:37 GMT".
    let rest = value.split_once(", ")?.1;
    let parts: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, "GMT"] = parts.as_slice() else { return None };
    let month =
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            .iter()
            .position(|m| m == month)?
            + 1;
    let iso = format!("{year}-{month:02}-{day}T{time}Z");
    humantime::parse_rfc3339(&iso).ok()
}

/// Standard base64 with padding, for HTTP Basic credentials.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                #[expect(clippy::indexing_slicing, reason = "six bits index the 64 letters")]
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        let rows = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (input, expected) in rows {
            assert_eq!(base64(input.as_bytes()), expected);
        }
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        assert_eq!(retry_after("7"), Some(7));
        assert_eq!(retry_after("Sun, 06 Nov 1994 08:49:37 GMT"), Some(0));
        assert_eq!(retry_after("soon"), None);
    }
}
