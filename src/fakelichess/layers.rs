//! The layers in front of every route but the gate (`gate.rs`), outermost first: the lag of a
//! lagged account (`lag.rs`), the junk added to what is sent (`junk.rs`) and the request log
//! (`log.rs`). Those modules hold what the layers keep in the state; the layers, which read
//! the state, are here.

use std::sync::Mutex;

use axum::body::{Body, Bytes};
use axum::extract::{RawPathParams, Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::middleware::Next;
use axum::response::Response;
use futures_util::StreamExt;
use serde_json::Value;
use tokio::time::Instant;
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::http::{NDJSON, bearer, lock, user_agent};
use super::junk::{Junk, reply_kind};
use super::lag::Link;
use super::log::RequestRecord;
use super::state::{Inner, Shared};
use crate::lichess::client::Endpoint;

/// The state of a layer in front of one endpoint: the layers of every route are the same
/// functions, and this tells them which endpoint they guard (`None`: a path the server does
/// not serve, which only the request log sees).
#[derive(Clone)]
pub(crate) struct Guarded {
    /// The server state.
    pub(crate) shared: Shared,
    /// The endpoint of the route.
    pub(crate) endpoint: Option<Endpoint>,
}

/// The middleware: for a lagged account, the request waits the inbound half of the lag before
/// it is processed (a move request's response time is taken on arrival), its answer the
/// outbound half, and each line of a stream its own outbound half. Other accounts pass.
pub(crate) async fn delay(
    State(at): State<Guarded>,
    params: RawPathParams,
    request: Request,
    next: Next,
) -> Response {
    let link = lock(&at.shared).lags.link(bearer(request.headers()));
    let Some(link) = link else {
        return next.run(request).await;
    };
    let game = params
        .iter()
        .find(|(k, _)| *k == "id")
        .map(|(_, v)| v.to_owned());
    if at.endpoint == Some(Endpoint::Move)
        && let Some(id) = &game
    {
        link.note_move(&at.shared, id);
    }
    link.wait_one_way().await;
    let response = next.run(request).await;
    let stream = matches!(
        at.endpoint,
        Some(Endpoint::EventStream | Endpoint::GameStream)
    ) && response.status().is_success();
    if !stream {
        link.wait_one_way().await;
        return response;
    }
    let game = game.filter(|_| at.endpoint == Some(Endpoint::GameStream));
    let (parts, body) = response.into_parts();
    let lines = body
        .into_data_stream()
        .take_while(|chunk| std::future::ready(chunk.is_ok()))
        .filter_map(|chunk| std::future::ready(chunk.ok()));
    let delayed = UnboundedReceiverStream::new(link.relay(lines, game))
        .map(Ok::<Bytes, std::convert::Infallible>);
    Response::from_parts(parts, Body::from_stream(delayed))
}

impl Link {
    /// A move request of this account reached the server: records its response time, from
    /// the release of the line that showed the game as it is now.
    fn note_move(&self, shared: &Mutex<Inner>, game: &str) {
        let plies = lock(shared).snapshot(game).map(|g| g.moves.len());
        if let Some(n) = plies
            && let Some(t) = lock(&self.released).remove(&(game.to_owned(), n))
        {
            lock(&self.responses).push(t.elapsed());
        }
    }
}

/// The middleware: once junk is asked for ([`super::FakeLichess::junk`]), every JSON answer
/// and every ND-JSON line an endpoint sends is decorated, each answer with its own fork of the
/// generator. HTML pages (injected faults) pass as they are.
pub(crate) async fn decorate(State(at): State<Guarded>, request: Request, next: Next) -> Response {
    let junk = lock(&at.shared).junk.as_mut().map(Junk::fork);
    let response = next.run(request).await;
    let (Some(mut junk), Some(endpoint)) = (junk, at.endpoint) else {
        return response;
    };
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let (parts, body) = response.into_parts();
    if content_type.starts_with("application/json") {
        let kind = reply_kind(endpoint, parts.status.as_u16());
        let bytes = axum::body::to_bytes(body, usize::MAX)
            .await
            .unwrap_or_default();
        let body = match serde_json::from_slice::<Value>(&bytes) {
            Ok(mut v) => {
                junk.decorate(kind, &mut v);
                Body::from(v.to_string())
            }
            Err(_) => Body::from(bytes),
        };
        let mut response = Response::from_parts(parts, body);
        // The length changed; hyper sets the new one.
        response
            .headers_mut()
            .remove(axum::http::header::CONTENT_LENGTH);
        response
    } else if content_type.starts_with(NDJSON) {
        // A stream's lines say their own type; the online-bot list's do not.
        let kind = (endpoint == Endpoint::OnlineBots).then_some("online");
        let lines = body
            .into_data_stream()
            .map(move |chunk| chunk.map(|c| junk.decorate_lines(&c, kind)));
        Response::from_parts(parts, Body::from_stream(lines))
    } else {
        Response::from_parts(parts, body)
    }
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
