//! The fake's HTTP face: the Bot API paths the bot uses, routed by axum to the server state.
//!
//! Every route sits behind the same layers, outermost first: the lag of a lagged account,
//! the junk added to what is sent, the request log (the three in `layers.rs`) and the gate
//! (token and queued faults, `gate.rs`). A path the server does not serve gets lichess's
//! 404 and is logged with no endpoint.

use axum::Router;
use axum::extract::{Extension, Form, Path, Query, State};
use axum::handler::Handler;
use axum::http::HeaderMap;
use axum::middleware::from_fn_with_state;
use axum::response::Response;
use axum::routing::{MethodRouter, get, post};
use serde::Deserialize;
use serde_json::json;

use super::challenge_record::ChallengeSpec;
use super::gate;
use super::http::{self, Caller, lock, user_agent};
use super::layers::{self, Guarded};
use super::online_routes;
use super::state::{Res, Shared};
use crate::lichess::client::Endpoint;

/// The router of the fake server.
pub(crate) fn router(shared: &Shared) -> Router {
    let at = |endpoint: Endpoint, route: MethodRouter<Shared>| {
        let guarded = Guarded {
            shared: shared.clone(),
            endpoint: Some(endpoint),
        };
        route
            .route_layer(from_fn_with_state(guarded.clone(), gate::admit))
            .route_layer(from_fn_with_state(guarded.clone(), layers::record))
            .route_layer(from_fn_with_state(guarded.clone(), layers::decorate))
            .route_layer(from_fn_with_state(guarded, layers::delay))
    };
    let unknown = Guarded {
        shared: shared.clone(),
        endpoint: None,
    };
    let not_found = not_found.layer(from_fn_with_state(unknown, layers::record));
    use Endpoint as E;
    Router::new()
        .route("/api/account", at(E::Account, get(account)))
        .route("/api/account/playing", at(E::Playing, get(playing)))
        .route("/api/bot/account/upgrade", at(E::Upgrade, post(upgrade)))
        .route("/api/stream/event", at(E::EventStream, get(event_stream)))
        .route("/api/bot/online", at(E::OnlineBots, get(online)))
        .route(
            "/api/bot/game/stream/{id}",
            at(E::GameStream, get(game_stream)),
        )
        .route("/api/bot/game/{id}/move/{uci}", at(E::Move, post(play)))
        .route("/api/bot/game/{id}/chat", at(E::Chat, post(chat)))
        .route("/api/bot/game/{id}/abort", at(E::Abort, post(abort)))
        .route("/api/bot/game/{id}/resign", at(E::Resign, post(resign)))
        .route("/api/bot/game/{id}/draw/{answer}", at(E::Draw, post(draw)))
        .route(
            "/api/bot/game/{id}/takeback/{answer}",
            at(E::Takeback, post(takeback)),
        )
        .route(
            "/api/bot/game/{id}/claim-victory",
            at(E::ClaimVictory, post(claim_victory)),
        )
        .route(
            "/api/bot/game/{id}/claim-draw",
            at(E::ClaimDraw, post(claim_draw)),
        )
        .route(
            "/api/challenge/{id}",
            at(E::CreateChallenge, post(challenge)),
        )
        .route("/api/challenge/{id}/accept", at(E::Accept, post(accept)))
        .route("/api/challenge/{id}/decline", at(E::Decline, post(decline)))
        .route(
            "/api/challenge/{id}/cancel",
            at(E::CancelChallenge, post(cancel)),
        )
        .route("/atomic", at(E::Tablebase, get(online_routes::tablebase)))
        .route("/lichess", at(E::Explorer, get(online_routes::explorer)))
        .route(
            "/api/cloud-eval",
            at(E::CloudEval, get(online_routes::cloud_eval)),
        )
        .method_not_allowed_fallback(not_found.clone())
        .fallback(not_found)
        .with_state(shared.clone())
}

async fn not_found() -> Response {
    http::error(404, "Not found.")
}

/// `{"ok": true}`, or lichess's error answer.
fn ok(r: Res<()>) -> Response {
    match r {
        Ok(()) => http::json(200, &json!({"ok": true})),
        Err((status, e)) => http::error(status, &e),
    }
}

/// `yes`/`true` accept an offer (or make one); anything else declines.
fn yes(answer: &str) -> bool {
    matches!(answer, "yes" | "true")
}

async fn account(State(s): State<Shared>, Extension(Caller(user)): Extension<Caller>) -> Response {
    http::json(200, &lock(&s).account_json(&user))
}

/// The query of `GET /api/account/playing`.
#[derive(Deserialize)]
struct PlayingQuery {
    /// How many games (lichess: 1 to 50, 9 by default).
    nb: Option<usize>,
}

async fn playing(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Query(q): Query<PlayingQuery>,
) -> Response {
    http::json(200, &lock(&s).playing_json(&user, q.nb))
}

async fn upgrade(State(s): State<Shared>, Extension(Caller(user)): Extension<Caller>) -> Response {
    ok(lock(&s).upgrade(&user))
}

async fn event_stream(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    headers: HeaderMap,
) -> Response {
    let stream = lock(&s).open_event_stream(&user, &user_agent(&headers));
    http::stream(stream)
}

async fn online(State(s): State<Shared>, Extension(Caller(user)): Extension<Caller>) -> Response {
    http::ndjson(lock(&s).online_lines(&user))
}

async fn game_stream(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    match lock(&s).open_game_stream(&user, &user_agent(&headers), &id) {
        Ok(stream) => http::stream(stream),
        Err((status, e)) => http::error(status, &e),
    }
}

/// The query of `POST .../move/{uci}`.
#[derive(Deserialize)]
struct MoveQuery {
    #[serde(rename = "offeringDraw")]
    offering_draw: Option<bool>,
}

async fn play(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Path((id, uci)): Path<(String, String)>,
    Query(q): Query<MoveQuery>,
) -> Response {
    ok(lock(&s)
        .play(&id, &user, &uci, q.offering_draw)
        .map_err(|e| (400, e)))
}

/// The form of `POST .../chat` (the room is not checked: one chat per game here).
#[derive(Deserialize)]
struct ChatForm {
    text: Option<String>,
}

async fn chat(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Path(id): Path<String>,
    Form(form): Form<ChatForm>,
) -> Response {
    ok(lock(&s).chat(&id, &user, &form.text.unwrap_or_default()))
}

async fn abort(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    ok(lock(&s).abort(&id, &user))
}

async fn resign(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    ok(lock(&s).resign(&id, &user).map_err(|e| (400, e)))
}

async fn draw(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Path((id, answer)): Path<(String, String)>,
) -> Response {
    ok(lock(&s)
        .draw(&id, &user, yes(&answer))
        .map_err(|e| (404, e)))
}

async fn takeback(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Path((id, answer)): Path<(String, String)>,
) -> Response {
    ok(lock(&s)
        .takeback(&id, &user, yes(&answer))
        .map_err(|e| (404, e)))
}

async fn claim_victory(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    ok(lock(&s).claim(&id, &user))
}

async fn claim_draw(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    ok(lock(&s).claim_draw(&id, &user))
}

async fn accept(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    let mut inner = lock(&s);
    if let Some((status, body)) = inner.bot_limit_on_accept(&id, &user) {
        return http::json(status, &body);
    }
    ok(inner.accept(&id, &user))
}

/// The form of `POST .../decline`.
#[derive(Deserialize)]
struct DeclineForm {
    reason: Option<String>,
}

async fn decline(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Path(id): Path<String>,
    Form(form): Form<DeclineForm>,
) -> Response {
    let reason = form.reason.unwrap_or_else(|| "generic".into());
    ok(lock(&s).decline(&id, &user, &reason))
}

async fn cancel(State(s): State<Shared>, Path(id): Path<String>) -> Response {
    ok(lock(&s).cancel_challenge(&id).map_err(|e| (404, e)))
}

/// The form of `POST /api/challenge/{username}` (lichess's field names).
#[derive(Deserialize)]
struct ChallengeForm {
    rated: Option<bool>,
    #[serde(rename = "clock.limit")]
    clock_limit: Option<u32>,
    #[serde(rename = "clock.increment")]
    clock_increment: Option<u32>,
    days: Option<u32>,
    variant: Option<String>,
    color: Option<String>,
    fen: Option<String>,
}

async fn challenge(
    State(s): State<Shared>,
    Extension(Caller(user)): Extension<Caller>,
    Path(to): Path<String>,
    Form(form): Form<ChallengeForm>,
) -> Response {
    let mut inner = lock(&s);
    if let Some((status, body)) = inner.bot_limit_reply(&user, &to.to_lowercase()) {
        return http::json(status, &body);
    }
    let spec = ChallengeSpec {
        rated: form.rated == Some(true),
        clock: form
            .clock_limit
            .map(|l| (l, form.clock_increment.unwrap_or(0))),
        days: form.days,
        variant: form.variant.unwrap_or_else(|| "standard".into()),
        color: form.color.unwrap_or_else(|| "random".into()),
        fen: form.fen.filter(|f| !f.is_empty()),
    };
    match inner.create_challenge(&user, &to, &spec) {
        Ok(id) => http::json(200, &inner.challenge_json(&id)),
        Err(e) => http::error(400, &e),
    }
}

#[cfg(test)]
mod tests {
    use crate::fakelichess::{FakeAccount, FakeConfig, FakeLichess};
    use crate::lichess::client::Endpoint;

    #[tokio::test]
    async fn routes_gate_and_log() {
        let fake = FakeLichess::start(FakeConfig {
            accounts: vec![
                FakeAccount::new("Bot", "tok_bot", true),
                FakeAccount::new("Human", "tok_h", false),
            ],
            ..FakeConfig::default()
        })
        .await
        .unwrap();
        let http = reqwest::Client::new();
        let url = |path: &str| format!("{}{path}", fake.url());
        let get = |path: &str, token: &str| http.get(url(path)).bearer_auth(token).send();

        let r = get("/api/account", "tok_bot").await.unwrap();
        assert_eq!(r.status(), 200);
        let v: serde_json::Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
        assert_eq!(
            (v["id"].as_str(), v["title"].as_str()),
            (Some("bot"), Some("BOT"))
        );
        assert_eq!(get("/api/account", "nope").await.unwrap().status(), 401);
        let r = get("/api/nowhere", "tok_bot").await.unwrap();
        assert_eq!(r.status(), 404);
        assert_eq!(r.text().await.unwrap(), r#"{"error":"Not found."}"#);
        // A known path with the wrong method is no route either, as on lichess.
        let r = http.post(url("/api/account")).bearer_auth("tok_bot").send();
        assert_eq!(r.await.unwrap().status(), 404);

        // Queued answers: JSON as JSON, anything else as an HTML page; then the real one.
        fake.fail_next(Endpoint::Account, 503, "<html>down</html>", 1);
        fake.fail_next(Endpoint::Account, 429, r#"{"error":"slow down"}"#, 1);
        assert_eq!(fake.pending_faults(Endpoint::Account), 2);
        let r = get("/api/account", "tok_bot").await.unwrap();
        assert_eq!(r.status(), 503);
        assert_eq!(r.headers()["content-type"], "text/html");
        let r = get("/api/account", "tok_bot").await.unwrap();
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()["content-type"], "application/json");
        assert_eq!(get("/api/account", "tok_bot").await.unwrap().status(), 200);

        // Forms are read by name; a value of the wrong type is refused, naming the field.
        let r = http
            .post(url("/api/challenge/Human"))
            .bearer_auth("tok_bot")
            .form(&[("clock.limit", "soon"), ("variant", "atomic")])
            .send()
            .await
            .unwrap();
        assert!(r.status().is_client_error(), "{}", r.status());
        assert!(r.text().await.unwrap().contains("clock.limit"));
        let r = http
            .post(url("/api/challenge/Human"))
            .bearer_auth("tok_bot")
            .form(&[
                ("clock.limit", "60"),
                ("clock.increment", "2"),
                ("rated", "true"),
            ])
            .send()
            .await
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&r.bytes().await.unwrap()).unwrap();
        assert_eq!(v["timeControl"]["limit"], 60);
        assert_eq!(v["timeControl"]["increment"], 2);
        assert_eq!(v["rated"], true);

        let log = fake.requests();
        let endpoints: Vec<_> = log.iter().map(|r| (r.endpoint, r.status)).collect();
        assert_eq!(
            endpoints,
            vec![
                (Some(Endpoint::Account), 200),
                (Some(Endpoint::Account), 401),
                (None, 404),
                (None, 404),
                (Some(Endpoint::Account), 503),
                (Some(Endpoint::Account), 429),
                (Some(Endpoint::Account), 200),
                (Some(Endpoint::CreateChallenge), 422),
                (Some(Endpoint::CreateChallenge), 200),
            ]
        );
        assert_eq!(log[2].user.as_deref(), Some("bot"));
        assert_eq!(log[1].user, None);
        assert_eq!(log[2].path, "/api/nowhere");
    }
}
