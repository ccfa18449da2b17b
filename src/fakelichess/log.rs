//! The request log: every request the server answered, with the endpoint, the caller and the
//! status, for tests to check what a bot asked (never the token nor the query).
//!
//! The middleware that records (`record` in `layers.rs`) sits inside the lag and the junk, so a
//! request is logged as soon as it is answered, as the server saw it.

use tokio::time::Instant;

use crate::lichess::client::Endpoint;

/// One request seen by the server.
#[derive(Clone, Debug)]
pub struct RequestRecord {
    /// `GET`/`POST`.
    pub method: String,
    /// Path and nothing else (no query, no headers, no token).
    pub path: String,
    /// The endpoint, `None` for a path the server does not serve.
    pub endpoint: Option<Endpoint>,
    /// Authenticated user id.
    pub user: Option<String>,
    /// The User-Agent header.
    pub user_agent: String,
    /// Status answered.
    pub status: u16,
    /// When it arrived.
    pub at: Instant,
}
