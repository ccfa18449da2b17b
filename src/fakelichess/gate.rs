//! The gate in front of every endpoint: who is asking (the bearer token's account, or 401),
//! and the answers queued by [`super::FakeLichess::fail_next`], served instead of the real one
//! (a JSON body as JSON, anything else as an HTML page, as lichess's front servers send them).

use std::collections::VecDeque;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

use super::http::{Caller, bearer, error, html, json, lock};
use super::layers::Guarded;
use super::state::Inner;
use crate::lichess::client::Endpoint;

/// The middleware: 401 without a known token, a queued answer if one waits for this endpoint,
/// else the handler with the [`Caller`] set.
pub(crate) async fn admit(State(at): State<Guarded>, mut request: Request, next: Next) -> Response {
    let admitted = {
        let mut inner = lock(&at.shared);
        match inner.user_of_token(bearer(request.headers())) {
            None => Err(error(401, "No such token")),
            Some(user) => match at.endpoint.and_then(|e| inner.next_fault(e)) {
                Some((status, body)) => Err(queued(status, body)),
                None => Ok(user),
            },
        }
    };
    match admitted {
        Ok(user) => {
            request.extensions_mut().insert(Caller(user));
            next.run(request).await
        }
        Err(answer) => answer,
    }
}

/// A queued answer as sent.
fn queued(status: u16, body: String) -> Response {
    match serde_json::from_str::<Value>(&body) {
        Ok(v) => json(status, &v),
        Err(_) => html(status, body),
    }
}

impl Inner {
    /// Queues `times` answers `status` with `body` for `endpoint`.
    pub(crate) fn fail_next(&mut self, endpoint: Endpoint, status: u16, body: &str, times: usize) {
        let q = self.faults.entry(endpoint).or_default();
        for _ in 0..times {
            q.push_back((status, body.to_owned()));
        }
    }

    /// The next queued answer for `endpoint`, taken off the queue.
    fn next_fault(&mut self, endpoint: Endpoint) -> Option<(u16, String)> {
        self.faults.get_mut(&endpoint).and_then(VecDeque::pop_front)
    }

    /// Answers still queued for `endpoint`.
    pub(crate) fn pending_faults(&self, endpoint: Endpoint) -> usize {
        self.faults.get(&endpoint).map_or(0, VecDeque::len)
    }

    /// Drops every queued answer (the outage is over).
    pub(crate) fn clear_faults(&mut self) {
        self.faults.clear();
    }
}
