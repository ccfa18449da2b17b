//! The client's discipline for the online move sources (tablebase, opening explorer, cloud
//! eval): a move is waiting on the answer, so a request is one attempt under the caller's time
//! limit, never retried and never queued behind a 429 pause. The per-endpoint single-flight
//! lock and the 429 pause are the client's (`Gate`): a 429 pauses that source for
//! `lichess.rate_limit_cooldown_ms` (60 s) like every endpoint, and a request during the pause
//! fails at once with [`ApiError::Paused`] (the search plays meanwhile).

use std::time::Duration;

use reqwest::{Method, StatusCode};
use tokio::time::Instant;

use super::{ApiError, Endpoint, LichessClient, error_text};

impl LichessClient {
    /// `GET url` (a whole URL: the sources live on their own hosts; the token is sent, as
    /// lichess requires since 2026) once, within `limit`. `Ok(None)` is a 404: the source has
    /// nothing for this position (the cloud eval's usual answer), not an error.
    pub async fn get_online(
        &self,
        endpoint: Endpoint,
        url: &reqwest::Url,
        limit: Duration,
    ) -> Result<Option<bytes::Bytes>, ApiError> {
        let gate = self.gate(endpoint);
        let paused = |gate: &super::Gate| {
            let until = gate.cooldown_until.lock().map_or(None, |g| *g)?;
            let left = until.checked_duration_since(Instant::now())?;
            Some(ApiError::Paused {
                endpoint,
                left_ms: left.as_millis() as u64,
            })
        };
        if let Some(e) = paused(gate) {
            return Err(e);
        }
        let attempt = async {
            let _single_flight = gate.lock.lock().await;
            // A 429 may have come while this request queued.
            if let Some(e) = paused(gate) {
                return Err(e);
            }
            let resp = self
                .request_url(Method::GET, url.as_str())
                .header(reqwest::header::ACCEPT, "application/json")
                .send()
                .await
                .map_err(|e| ApiError::Unavailable {
                    endpoint,
                    message: format!("network error: {}", e.without_url()),
                    attempts: 1,
                })?;
            let status = resp.status();
            let body = resp.bytes().await.map_err(|e| ApiError::Unavailable {
                endpoint,
                message: format!("reading the response: {}", e.without_url()),
                attempts: 1,
            })?;
            match status {
                s if s.is_success() => Ok(Some(body)),
                StatusCode::NOT_FOUND => Ok(None),
                StatusCode::TOO_MANY_REQUESTS => {
                    crate::metrics::Metrics::inc(&self.inner.metrics.rate_limited);
                    let cooldown =
                        Duration::from_millis(self.inner.settings.rate_limit_cooldown_ms);
                    gate.start_cooldown(cooldown);
                    tracing::warn!(%endpoint, cooldown_ms = cooldown.as_millis() as u64,
                        "HTTP 429: pausing this source");
                    Err(ApiError::Paused {
                        endpoint,
                        left_ms: cooldown.as_millis() as u64,
                    })
                }
                s if s.is_server_error() => Err(ApiError::Unavailable {
                    endpoint,
                    message: format!("HTTP {}: {}", s.as_u16(), error_text(&body)),
                    attempts: 1,
                }),
                s => Err(ApiError::Status {
                    endpoint,
                    status: s.as_u16(),
                    message: error_text(&body),
                }),
            }
        };
        match tokio::time::timeout(limit, attempt).await {
            Ok(r) => r,
            Err(_) => Err(ApiError::TimedOut {
                endpoint,
                limit_ms: limit.as_millis() as u64,
            }),
        }
    }
}
