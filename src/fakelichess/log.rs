//! The request log: every request the server answered, with the endpoint, the caller and the
//! status, for tests to check what a bot asked (never the token nor the query).
//!
//! A middleware inside the lag and the junk (`lag.rs`, `junk.rs`), so a request is logged as
//! soon as it is answered, as the server saw it.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use tokio::time::Instant;

use super::http::{Guarded, bearer, lock, user_agent};
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

/// The middleware: runs the request, then logs it with its status.
pub(crate) async fn record(State(at): State<Guarded>, request: Request, next: Next) -> Response {
    let method = request.method().to_string();
    let path = request.uri().path().to_owned();
    let token = bearer(request.headers()).map(str::to_owned);
    let user_agent = user_agent(request.headers());
    let arrived = Instant::now();
    let response = next.run(request).await;
    let status = response.status().as_u16();
    let mut inner = lock(&at.shared);
    let user = inner.user_of_token(token.as_deref());
    tracing::debug!(
        %method, %path, endpoint = at.endpoint.map_or("none", Endpoint::name),
        user = user.as_deref().unwrap_or("-"), status, "fake lichess request"
    );
    inner.requests.push(RequestRecord {
        method,
        path,
        endpoint: at.endpoint,
        user,
        user_agent,
        status,
        at: arrived,
    });
    response
}
