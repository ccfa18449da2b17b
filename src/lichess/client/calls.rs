//! The typed calls of the Bot API, each through the client's discipline (`LichessClient::call`
//! and friends): account, streams, moves, chat, game actions, challenges, and matchmaking's
//! single-attempt challenge creation.

use std::time::Duration;

use reqwest::{Method, StatusCode};

use super::{ApiError, BodyReader, Endpoint, LichessClient, bot_games_limit, seg};
use crate::lichess::model::{Account, Challenge, Playing};

impl LichessClient {
    /// `GET /api/account`.
    pub async fn account(&self) -> Result<Account, ApiError> {
        self.call_json(Endpoint::Account, Method::GET, "/api/account", None)
            .await
    }

    /// `POST /api/bot/account/upgrade` (irreversible).
    pub async fn upgrade(&self) -> Result<(), ApiError> {
        self.call(
            Endpoint::Upgrade,
            Method::POST,
            "/api/bot/account/upgrade",
            None,
        )
        .await
        .map(drop)
    }

    /// `GET /api/account/playing?nb=50`: the ongoing games and `nbMyTurn`.
    pub async fn playing(&self) -> Result<Playing, ApiError> {
        self.call_json(
            Endpoint::Playing,
            Method::GET,
            "/api/account/playing?nb=50",
            None,
        )
        .await
    }

    /// Opens `/api/stream/event`.
    pub async fn stream_events(&self) -> Result<BodyReader, ApiError> {
        self.open_stream(Endpoint::EventStream, "/api/stream/event")
            .await
    }

    /// Opens `/api/bot/game/stream/{id}`.
    pub async fn stream_game(&self, game_id: &str) -> Result<BodyReader, ApiError> {
        let id = seg(game_id)?;
        self.open_stream(Endpoint::GameStream, &format!("/api/bot/game/stream/{id}"))
            .await
    }

    /// `POST /api/bot/game/{id}/move/{uci}`, optionally offering/accepting (`true`) or
    /// declining (`false`) a draw with it.
    pub async fn make_move(
        &self,
        game_id: &str,
        uci: &str,
        offering_draw: Option<bool>,
    ) -> Result<(), ApiError> {
        let mut path = format!("/api/bot/game/{}/move/{}", seg(game_id)?, seg(uci)?);
        if let Some(d) = offering_draw {
            path.push_str(if d {
                "?offeringDraw=true"
            } else {
                "?offeringDraw=false"
            });
        }
        self.call(Endpoint::Move, Method::POST, &path, None)
            .await
            .map(drop)
    }

    /// `POST /api/bot/game/{id}/chat` in the given room.
    pub async fn chat(&self, game_id: &str, room: &str, text: &str) -> Result<(), ApiError> {
        let path = format!("/api/bot/game/{}/chat", seg(game_id)?);
        self.call(
            Endpoint::Chat,
            Method::POST,
            &path,
            Some(&[("room", room), ("text", text)]),
        )
        .await
        .map(drop)
    }

    async fn game_action(
        &self,
        endpoint: Endpoint,
        game_id: &str,
        action: &str,
    ) -> Result<(), ApiError> {
        let path = format!("/api/bot/game/{}/{action}", seg(game_id)?);
        self.call(endpoint, Method::POST, &path, None)
            .await
            .map(drop)
    }

    /// `POST .../abort`.
    pub async fn abort(&self, game_id: &str) -> Result<(), ApiError> {
        self.game_action(Endpoint::Abort, game_id, "abort").await
    }

    /// `POST .../resign`.
    pub async fn resign(&self, game_id: &str) -> Result<(), ApiError> {
        self.game_action(Endpoint::Resign, game_id, "resign").await
    }

    /// `POST .../draw/{yes|no}`: offer/accept or decline a draw.
    pub async fn draw(&self, game_id: &str, accept: bool) -> Result<(), ApiError> {
        let a = if accept { "draw/yes" } else { "draw/no" };
        self.game_action(Endpoint::Draw, game_id, a).await
    }

    /// `POST .../takeback/{yes|no}`.
    pub async fn takeback(&self, game_id: &str, accept: bool) -> Result<(), ApiError> {
        let a = if accept {
            "takeback/yes"
        } else {
            "takeback/no"
        };
        self.game_action(Endpoint::Takeback, game_id, a).await
    }

    /// `POST .../claim-victory`.
    pub async fn claim_victory(&self, game_id: &str) -> Result<(), ApiError> {
        self.game_action(Endpoint::ClaimVictory, game_id, "claim-victory")
            .await
    }

    /// `POST .../claim-draw`: ends the game as a draw once the opponent has left (the
    /// `opponentGone` countdown ran out); lichess answers 400 otherwise.
    pub async fn claim_draw(&self, game_id: &str) -> Result<(), ApiError> {
        self.game_action(Endpoint::ClaimDraw, game_id, "claim-draw")
            .await
    }

    /// `POST /api/challenge/{id}/accept`. The daily bot-game limit comes back as
    /// [`ApiError::BotGameLimit`] at once.
    pub async fn accept_challenge(&self, id: &str) -> Result<(), ApiError> {
        let path = format!("/api/challenge/{}/accept", seg(id)?);
        self.call(Endpoint::Accept, Method::POST, &path, None)
            .await
            .map(drop)
    }

    /// `POST /api/challenge/{id}/decline` with a reason key.
    pub async fn decline_challenge(&self, id: &str, reason: &str) -> Result<(), ApiError> {
        let path = format!("/api/challenge/{}/decline", seg(id)?);
        self.call(
            Endpoint::Decline,
            Method::POST,
            &path,
            Some(&[("reason", reason)]),
        )
        .await
        .map(drop)
    }

    /// `POST /api/challenge/{username}` (the demo opponent uses it).
    pub async fn create_challenge(
        &self,
        username: &str,
        form: &[(&str, &str)],
    ) -> Result<Challenge, ApiError> {
        let path = format!("/api/challenge/{}", seg(username)?);
        let c: CreatedChallenge = self
            .call_json(Endpoint::CreateChallenge, Method::POST, &path, Some(form))
            .await?;
        Ok(c.into_challenge())
    }
}

/// The answer to `POST /api/challenge/{username}`: lichess wraps the challenge in
/// `{"challenge": ...}`, older servers answered with it bare; both are accepted.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum CreatedChallenge {
    Wrapped { challenge: Challenge },
    Plain(Challenge),
}

impl CreatedChallenge {
    fn into_challenge(self) -> Challenge {
        match self {
            CreatedChallenge::Wrapped { challenge } | CreatedChallenge::Plain(challenge) => {
                challenge
            }
        }
    }
}

/// What lichess answered to one attempt at creating a challenge
/// ([`LichessClient::create_challenge_once`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CreateAnswer {
    /// 2xx: the challenge id (= the future game id).
    Created(String),
    /// Any other status, with the body (JSON, HTML or empty) for the caller to read: matchmaking
    /// classifies it (`lichess::matchmaking::classify_challenge_error`).
    Refused {
        /// HTTP status.
        status: u16,
        /// The body as text.
        body: String,
    },
}

/// Matchmaking's calls (`lichess::matchmaking::api`). Creating a challenge is a single attempt
/// that hands the status and body back: matchmaking must see lichess's `ratelimit` (daily
/// bot-game limit) instead of having the request retried after a 60 s cooldown.
impl LichessClient {
    /// `GET /api/bot/online?nb=…`: the ND-JSON body, one user a line.
    pub async fn online_bots(&self, nb: u32) -> Result<String, ApiError> {
        let path = format!("/api/bot/online?nb={nb}");
        let body = self
            .call(Endpoint::OnlineBots, Method::GET, &path, None)
            .await?;
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// `POST /api/challenge/{username}` once, without retries. A 429 other than the daily
    /// bot-game limit still starts the endpoint's cooldown (and is counted).
    pub async fn create_challenge_once(
        &self,
        username: &str,
        form: &[(&str, &str)],
    ) -> Result<CreateAnswer, ApiError> {
        let endpoint = Endpoint::CreateChallenge;
        let path = format!("/api/challenge/{}", seg(username)?);
        let gate = self.gate(endpoint);
        let _single_flight = gate.lock.lock().await;
        gate.wait_cooldown(endpoint).await;
        let resp = self
            .request(Method::POST, &path)
            .timeout(Duration::from_millis(
                self.inner.settings.request_timeout_ms,
            ))
            .form(form)
            .send()
            .await
            .map_err(|e| ApiError::Unavailable {
                endpoint,
                message: format!("network error: {}", e.without_url()),
                attempts: 1,
            })?;
        let status = resp.status();
        let body = resp.bytes().await.unwrap_or_default();
        if status.is_success() {
            return serde_json::from_slice::<CreatedChallenge>(&body)
                .map(|c| CreateAnswer::Created(c.into_challenge().id))
                .map_err(|e| ApiError::Decode {
                    endpoint,
                    message: e.to_string(),
                });
        }
        // The daily bot-game limit pauses matchmaking, not the endpoint.
        if status == StatusCode::TOO_MANY_REQUESTS && bot_games_limit(&body).is_none() {
            crate::metrics::Metrics::inc(&self.inner.metrics.rate_limited);
            gate.start_cooldown(Duration::from_millis(
                self.inner.settings.rate_limit_cooldown_ms,
            ));
        }
        Ok(CreateAnswer::Refused {
            status: status.as_u16(),
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    }

    /// `POST /api/challenge/{id}/cancel`.
    pub async fn cancel_challenge(&self, id: &str) -> Result<(), ApiError> {
        let path = format!("/api/challenge/{}/cancel", seg(id)?);
        self.call(Endpoint::CancelChallenge, Method::POST, &path, None)
            .await
            .map(drop)
    }
}
