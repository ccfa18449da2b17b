//! The HTTP face of the online move sources (`online_tables.rs`): `GET /atomic?fen=…`,
//! `GET /lichess?variant=atomic&fen=…` and `GET /api/cloud-eval?fen=…&variant=atomic`. They sit
//! behind the same layers as every route (lag, junk, request log, token and queued faults), so
//! `fail_next` gives them 500s, junk bodies and HTML 429 pages like any endpoint.

use axum::extract::{Query, State};
use axum::response::Response;
use serde::Deserialize;

use super::http::{self, lock};
use super::state::Shared;
use crate::lichess::client::Endpoint;

/// The query of the three sources (the explorer's filters are accepted and not applied).
#[derive(Deserialize)]
pub(crate) struct SourceQuery {
    fen: Option<String>,
    variant: Option<String>,
}

/// Answers `endpoint` for the query's position, after the source's delay.
async fn answer(shared: &Shared, endpoint: Endpoint, q: SourceQuery) -> Response {
    let Some(fen) = q.fen else {
        return http::error(400, "Missing fen");
    };
    let needs_variant = endpoint != Endpoint::Tablebase;
    if needs_variant && q.variant.as_deref() != Some("atomic") {
        return http::error(400, "This server knows atomic only");
    }
    let (delay, (status, body)) = {
        let inner = lock(shared);
        (
            inner.online.delay_of(endpoint),
            inner.online.answer(endpoint, &fen),
        )
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    http::json(status, &body)
}

/// `GET /atomic`.
pub(crate) async fn tablebase(State(s): State<Shared>, Query(q): Query<SourceQuery>) -> Response {
    answer(&s, Endpoint::Tablebase, q).await
}

/// `GET /lichess`.
pub(crate) async fn explorer(State(s): State<Shared>, Query(q): Query<SourceQuery>) -> Response {
    answer(&s, Endpoint::Explorer, q).await
}

/// `GET /api/cloud-eval`.
pub(crate) async fn cloud_eval(State(s): State<Shared>, Query(q): Query<SourceQuery>) -> Response {
    answer(&s, Endpoint::CloudEval, q).await
}
