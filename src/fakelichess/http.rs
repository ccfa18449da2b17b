//! What the fake's HTTP side shares: the lock on the state, the bearer token of a request,
//! and lichess's kinds of answers (JSON, an HTML page, an ND-JSON stream). It knows nothing
//! of the state itself, so the modules the state is built from may use it.

use std::sync::{Mutex, MutexGuard};

use axum::body::{Body, Bytes};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::Value;
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::conn::Stream;

/// Locks `m`, also after a panic in another holder (the state stays usable for the tests that
/// inspect it).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// The account id of the caller, set by the gate (`gate.rs`) for the handlers.
#[derive(Clone, Debug)]
pub(crate) struct Caller(pub(crate) String);

/// The bearer token of a request.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// The User-Agent of a request (empty when absent).
pub(crate) fn user_agent(headers: &HeaderMap) -> String {
    headers
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// A JSON answer.
pub(crate) fn json(code: u16, v: &Value) -> Response {
    (
        status(code),
        [(CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

/// lichess's `{"error": text}`.
pub(crate) fn error(code: u16, text: &str) -> Response {
    json(code, &serde_json::json!({ "error": text }))
}

/// An HTML page, as lichess's front servers answer while lila is down.
pub(crate) fn html(code: u16, text: String) -> Response {
    (status(code), [(CONTENT_TYPE, "text/html")], text).into_response()
}

/// The content type of ND-JSON answers (streams and the online-bot list).
pub(crate) const NDJSON: &str = "application/x-ndjson";

/// A finite ND-JSON answer.
pub(crate) fn ndjson(lines: String) -> Response {
    (StatusCode::OK, [(CONTENT_TYPE, NDJSON)], lines).into_response()
}

/// An open stream as a response body: a line per chunk, ended when the server drops the
/// sender (a final state) or cuts it.
pub(crate) fn stream(stream: Stream) -> Response {
    let body = UnboundedReceiverStream::new(stream.rx)
        .map(Ok::<Bytes, std::convert::Infallible>)
        .take_until(stream.cut.cancelled_owned());
    (
        StatusCode::OK,
        [(CONTENT_TYPE, NDJSON)],
        Body::from_stream(body),
    )
        .into_response()
}
