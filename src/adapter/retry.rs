//! Repeating an upstream call that failed on the way (runtime seed 004,
//! `CallOptions.retries`): one backoff for every upstream kind, so an HTTP
//! adapter's request and a downstream MCP server's tool call wait alike.
//!
//! Only a call the caller declares safe to repeat is retried (an
//! idempotent HTTP request, a read-only or idempotent tool); which
//! failures are worth another attempt is the caller's to say
//! ([`Retry`]). Between attempts the wait is `base * 2^attempt`, scaled
//! by a random factor in [0.5, 1] so that callers who failed together do
//! not retry together, capped at [`MAX_BACKOFF`]. Each retry is logged at
//! `warn` (the contract's "retry attempt") with the operation's name and
//! why, never its arguments. The client's cancellation ends the wait at
//! once.

use std::{future::Future, time::Duration};

use tokio_util::sync::CancellationToken;

pub use crate::config::{MAX_RETRIES, MAX_RETRY_BASE_MS, RetryPolicy};
use crate::protocol::error::{AqlError, ErrorCode};

/// The longest wait between two attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// What one attempt's result calls for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Retry {
    /// Keep the result.
    Done,
    /// Try again after the backoff; `why` names the failure in the log.
    Backoff { why: String },
    /// Try again after the wait the upstream asked for.
    After { wait: Duration, why: String },
}

impl RetryPolicy {
    /// The wait before retry number `attempt + 1`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let full = self.base.saturating_mul(2u32.saturating_pow(attempt)).min(MAX_BACKOFF);
        let mut byte = [0u8; 1];
        let jitter =
            if getrandom::fill(&mut byte).is_ok() { 0.5 + f64::from(byte[0]) / 510.0 } else { 1.0 };
        full.mul_f64(jitter)
    }

    /// Runs `attempt` (given its number, 0 first) until `judge` keeps a
    /// result or the retries are spent. `on_cancel` is the error a
    /// cancelled call ends with.
    pub async fn run<T, F, Fut>(
        &self,
        operation: &str,
        cancelled: &CancellationToken,
        on_cancel: impl Fn() -> AqlError,
        mut attempt: F,
        judge: impl Fn(&Result<T, AqlError>) -> Retry,
    ) -> Result<T, AqlError>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T, AqlError>>,
    {
        let mut done: u32 = 0;
        loop {
            let outcome = tokio::select! {
                () = cancelled.cancelled() => return Err(on_cancel()),
                outcome = attempt(done) => outcome,
            };
            if done >= self.max_retries {
                return outcome;
            }
            let (wait, why) = match judge(&outcome) {
                Retry::Done => return outcome,
                Retry::Backoff { why } => (self.backoff(done), why),
                Retry::After { wait, why } => (wait, why),
            };
            done += 1;
            tracing::warn!(
                operation,
                attempt = done + 1,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                why,
                "retrying an upstream call"
            );
            tokio::select! {
                () = cancelled.cancelled() => return Err(on_cancel()),
                () = tokio::time::sleep(wait) => {}
            }
        }
    }
}

/// Failures another attempt may cure: the call timed out, or the
/// connection failed or was lost. A call the client cancelled is not one
/// (its details say `cancelled`).
pub fn transient(error: &AqlError) -> bool {
    matches!(
        error.code,
        ErrorCode::TransportTimeout
            | ErrorCode::TransportConnectionRefused
            | ErrorCode::TransportNetworkError
    ) && error.details.get("cancelled").is_none()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use serde_json::json;

    use super::*;

    fn lost() -> AqlError {
        AqlError::new(ErrorCode::TransportNetworkError, "lost", json!({}))
    }

    #[test]
    fn backoff_doubles_with_jitter_up_to_the_cap() {
        let policy = RetryPolicy { max_retries: 3, base: Duration::from_millis(400) };
        for attempt in 0..4 {
            let full = Duration::from_millis(400 * 2u64.pow(attempt));
            let wait = policy.backoff(attempt);
            assert!(wait >= full / 2 && wait <= full, "attempt {attempt}: {wait:?}");
        }
        assert!(policy.backoff(20) <= MAX_BACKOFF);
    }

    #[tokio::test]
    async fn retries_what_the_judge_asks_for_and_no_more() {
        let policy = RetryPolicy { max_retries: 2, base: Duration::from_millis(1) };
        let calls = AtomicU32::new(0);
        let never = CancellationToken::new();
        let result: Result<(), AqlError> = policy
            .run(
                "op",
                &never,
                lost,
                |_| async {
                    calls.fetch_add(1, Ordering::SeqCst);
                    Err(lost())
                },
                |_| Retry::Backoff { why: "lost".into() },
            )
            .await;
        assert!(result.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 3, "the first attempt and two retries");

        calls.store(0, Ordering::SeqCst);
        let kept: Result<(), AqlError> = policy
            .run(
                "op",
                &never,
                lost,
                |_| async {
                    calls.fetch_add(1, Ordering::SeqCst);
                    Err(lost())
                },
                |_| Retry::Done,
            )
            .await;
        assert!(kept.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1, "a final failure is not repeated");

        let numbers = std::sync::Mutex::new(Vec::new());
        let second: Result<u32, AqlError> = policy
            .run(
                "op",
                &never,
                lost,
                |n| {
                    numbers.lock().unwrap().push(n);
                    async move { if n == 0 { Err(lost()) } else { Ok(n) } }
                },
                |r| if r.is_err() { Retry::Backoff { why: "lost".into() } } else { Retry::Done },
            )
            .await;
        assert_eq!(second.ok(), Some(1));
        assert_eq!(*numbers.lock().unwrap(), [0, 1]);
    }

    #[tokio::test]
    async fn a_cancelled_call_stops_waiting() {
        let policy = RetryPolicy { max_retries: 5, base: Duration::from_secs(3_600) };
        let cancelled = CancellationToken::new();
        let cancel = cancelled.clone();
        let cancelled_error = || {
            AqlError::new(
                ErrorCode::TransportNetworkError,
                "cancelled",
                json!({ "cancelled": true }),
            )
        };
        let result: Result<(), AqlError> = policy
            .run(
                "op",
                &cancelled,
                cancelled_error,
                |_| {
                    cancel.cancel();
                    async { Err(lost()) }
                },
                |_| Retry::Backoff { why: "lost".into() },
            )
            .await;
        let error = result.err().unwrap();
        assert!(error.details.contains_key("cancelled"), "{error:?}");
        assert!(!transient(&error));
        assert!(transient(&lost()));
    }
}
