//! Per-adapter request counting (`adapter/rate-limiting.md`): sliding
//! windows of a minute, an hour and a day. Before a request leaves, an API
//! limit that would be passed refuses it (`RATE_LIMIT_EXCEEDED`, with how
//! long to wait) and a quota's hard stop refuses it
//! (`RATE_LIMIT_QUOTA_EXHAUSTED`); a quota's warning threshold lets it go
//! with a `RATE_LIMIT_QUOTA_WARNING`. Counts live in memory, per dongle
//! process.

use std::{collections::VecDeque, sync::Mutex, time::Instant};

use serde_json::{Value, json};

use crate::{
    protocol::error::{AqlError, ErrorCode, LimitState, LimitWait},
    store::{now_ms, rfc3339},
};

use super::super::definition::{LimitKind, RateLimit};

pub struct RateLimiter {
    adapter: String,
    limits: Vec<RateLimit>,
    /// When each counted request left, oldest first, no older than the
    /// longest window.
    sent: Mutex<VecDeque<Instant>>,
}

/// A warning for the success envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct QuotaWarning {
    pub message: String,
    pub details: Value,
}

impl RateLimiter {
    pub fn new(adapter: &str, limits: &[RateLimit]) -> Self {
        Self {
            adapter: adapter.to_owned(),
            limits: limits.to_vec(),
            sent: Mutex::new(VecDeque::new()),
        }
    }

    /// Counts one request that is about to leave at `now`, or refuses it.
    pub fn admit(&self, now: Instant) -> Result<Option<QuotaWarning>, AqlError> {
        if self.limits.is_empty() {
            return Ok(None);
        }
        // A poisoned queue still holds instants; each change is one push
        // or pop.
        let mut sent = self.sent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let longest = self.limits.iter().map(|l| l.window.length()).max().unwrap_or_default();
        while sent.front().is_some_and(|&at| now.duration_since(at) >= longest) {
            sent.pop_front();
        }
        let mut warning = None;
        for limit in &self.limits {
            let window = limit.window.length();
            // Oldest first: the requests inside the window are a suffix.
            let first_inside =
                sent.iter().position(|&at| now.duration_since(at) < window).unwrap_or(sent.len());
            let count = (sent.len() - first_inside) as u64;
            let metric = limit.window.metric();
            match limit.kind {
                LimitKind::ApiLimit | LimitKind::QuotaStop if count >= limit.threshold => {
                    let oldest = sent.get(first_inside).copied().unwrap_or(now);
                    let wait = window.saturating_sub(now.duration_since(oldest));
                    let retry_after_seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                    let resets_at = rfc3339(
                        now_ms()
                            .saturating_add(i64::try_from(wait.as_millis()).unwrap_or(i64::MAX)),
                    );
                    let per = limit.window.window().name();
                    if limit.kind == LimitKind::ApiLimit {
                        let mut error = AqlError::new(
                            ErrorCode::RateLimitExceeded,
                            format!(
                                "API rate limit of adapter '{}' would be exceeded ({} requests per {per})",
                                self.adapter, limit.threshold
                            ),
                            json!({ "adapter": self.adapter, "metric": metric, "current": count }),
                        );
                        let state = LimitState {
                            limit: Some((limit.threshold, limit.window.window())),
                            remaining: limit.threshold.saturating_sub(count),
                            wait: Some(LimitWait { retry_after_seconds, resets_at }),
                        };
                        state.add_to(&mut error.details);
                        return Err(error);
                    }
                    return Err(AqlError::new(
                        ErrorCode::RateLimitQuotaExhausted,
                        format!(
                            "Quota exhausted: adapter '{}' reached its hard stop of {} {metric}; it resets at {resets_at}",
                            self.adapter, limit.threshold
                        ),
                        json!({ "adapter": self.adapter, "metric": metric, "current": count, "hard_stop_threshold": limit.threshold, "resets_at": resets_at, "retry_after_seconds": retry_after_seconds }),
                    ));
                }
                LimitKind::QuotaWarn if count + 1 >= limit.threshold && warning.is_none() => {
                    let mut details = json!({ "adapter": self.adapter, "metric": metric, "current": count + 1, "warn_threshold": limit.threshold });
                    if let (Some(hard_stop), Some(details)) =
                        (self.hard_stop(limit), details.as_object_mut())
                    {
                        details.insert("hard_stop_threshold".into(), hard_stop.into());
                    }
                    warning = Some(QuotaWarning {
                        message: format!(
                            "Approaching quota limit: adapter '{}' has made {} of its {metric} warning threshold {}",
                            self.adapter,
                            count + 1,
                            limit.threshold
                        ),
                        details,
                    });
                }
                _ => {}
            }
        }
        sent.push_back(now);
        Ok(warning)
    }

    /// What an upstream's own 429 can say about the limit: none remain,
    /// the wait its `Retry-After` asked for, and the adapter's declared
    /// API limit (the shortest window's) as the limit it ran into. An
    /// adapter that declares none, or a 429 without `Retry-After`, leaves
    /// those out.
    pub fn upstream_refusal(&self, retry_after_seconds: Option<u64>) -> LimitState {
        let declared =
            self.limits.iter().filter(|l| l.kind == LimitKind::ApiLimit).min_by_key(|l| l.window);
        let wait =
            retry_after_seconds.map(|seconds| LimitWait {
                retry_after_seconds: seconds,
                resets_at: rfc3339(now_ms().saturating_add(
                    i64::try_from(seconds.saturating_mul(1_000)).unwrap_or(i64::MAX),
                )),
            });
        LimitState { limit: declared.map(|l| (l.threshold, l.window.window())), remaining: 0, wait }
    }

    fn hard_stop(&self, warn: &RateLimit) -> Option<u64> {
        self.limits
            .iter()
            .find(|l| l.window == warn.window && l.kind == LimitKind::QuotaStop)
            .map(|l| l.threshold)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::adapter::definition::RateWindow;

    #[test]
    fn warn_then_stop_then_the_window_slides() {
        let limits = [
            RateLimit { window: RateWindow::Minute, threshold: 2, kind: LimitKind::QuotaWarn },
            RateLimit { window: RateWindow::Minute, threshold: 3, kind: LimitKind::QuotaStop },
        ];
        let limiter = RateLimiter::new("api", &limits);
        let start = Instant::now();
        assert_eq!(limiter.admit(start).ok(), Some(None));
        let warned = limiter
            .admit(start)
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("second call should warn"));
        assert_eq!(warned.details["current"], 2);
        assert_eq!(warned.details["hard_stop_threshold"], 3);
        assert!(limiter.admit(start).is_ok());
        let stopped =
            limiter.admit(start).err().unwrap_or_else(|| panic!("fourth call should stop"));
        assert_eq!(stopped.code, ErrorCode::RateLimitQuotaExhausted);
        assert_eq!(
            (
                &stopped.details["hard_stop_threshold"],
                &stopped.details["current"],
                &stopped.details["retry_after_seconds"]
            ),
            (&json!(3), &json!(3), &json!(60))
        );
        assert!(
            stopped.details["resets_at"]
                .as_str()
                .is_some_and(|at| humantime::parse_rfc3339(at).is_ok()),
            "{:?}",
            stopped.details
        );
        assert!(
            limiter.admit(start + Duration::from_secs(61)).is_ok(),
            "a minute later the window is empty"
        );
    }

    #[test]
    fn api_limits_refuse_before_sending_with_the_wait() {
        let limits =
            [RateLimit { window: RateWindow::Hour, threshold: 1, kind: LimitKind::ApiLimit }];
        let limiter = RateLimiter::new("api", &limits);
        let start = Instant::now();
        assert!(limiter.admit(start).is_ok());
        let refused = limiter
            .admit(start + Duration::from_secs(600))
            .err()
            .unwrap_or_else(|| panic!("over the limit"));
        assert_eq!(refused.code, ErrorCode::RateLimitExceeded);
        assert_eq!(
            (
                &refused.details["limit"],
                &refused.details["remaining"],
                &refused.details["window"],
                &refused.details["retry_after_seconds"]
            ),
            (&json!(1), &json!(0), &json!("hour"), &json!(3_000))
        );
        assert!(
            refused.details["resets_at"]
                .as_str()
                .is_some_and(|at| humantime::parse_rfc3339(at).is_ok()),
            "{:?}",
            refused.details
        );

        let upstream = limiter.upstream_refusal(Some(7));
        assert_eq!(
            (upstream.limit, upstream.remaining, upstream.wait.map(|w| w.retry_after_seconds)),
            (Some((1, crate::protocol::error::LimitWindow::Hour)), 0, Some(7))
        );
        let undeclared = RateLimiter::new("api", &[]).upstream_refusal(None);
        assert_eq!((undeclared.limit, undeclared.wait), (None, None), "nothing is made up");
    }
}
