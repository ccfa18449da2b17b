//! The kinds of endpoints of the Bot API: the unit of the client's single-flight lock and 429
//! cooldown, and the name its errors, logs and the local fake server use.

/// Kinds of endpoints; each has its own single-flight lock and 429 cooldown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `GET /api/account`.
    Account,
    /// `POST /api/bot/account/upgrade`.
    Upgrade,
    /// `GET /api/stream/event` (opening only).
    EventStream,
    /// `GET /api/bot/game/stream/{id}` (opening only).
    GameStream,
    /// `POST /api/bot/game/{id}/move/{uci}`.
    Move,
    /// `POST /api/bot/game/{id}/chat`.
    Chat,
    /// `POST .../abort`.
    Abort,
    /// `POST .../resign`.
    Resign,
    /// `POST .../draw/{yes|no}`.
    Draw,
    /// `POST .../takeback/{yes|no}`.
    Takeback,
    /// `POST .../claim-victory`.
    ClaimVictory,
    /// `POST .../claim-draw`.
    ClaimDraw,
    /// `POST /api/challenge/{id}/accept`.
    Accept,
    /// `POST /api/challenge/{id}/decline`.
    Decline,
    /// `POST /api/challenge/{username}`.
    CreateChallenge,
    /// `GET /api/account/playing`.
    Playing,
    /// `GET /api/bot/online` (matchmaking).
    OnlineBots,
    /// `POST /api/challenge/{id}/cancel` (matchmaking).
    CancelChallenge,
    /// `GET {tablebase}/atomic` (online move source).
    Tablebase,
    /// `GET {explorer}/lichess` (online move source).
    Explorer,
    /// `GET /api/cloud-eval` (online move source).
    CloudEval,
}

impl Endpoint {
    pub(super) const ALL: [Endpoint; 21] = [
        Endpoint::Account,
        Endpoint::Upgrade,
        Endpoint::EventStream,
        Endpoint::GameStream,
        Endpoint::Move,
        Endpoint::Chat,
        Endpoint::Abort,
        Endpoint::Resign,
        Endpoint::Draw,
        Endpoint::Takeback,
        Endpoint::ClaimVictory,
        Endpoint::ClaimDraw,
        Endpoint::Accept,
        Endpoint::Decline,
        Endpoint::CreateChallenge,
        Endpoint::Playing,
        Endpoint::OnlineBots,
        Endpoint::CancelChallenge,
        Endpoint::Tablebase,
        Endpoint::Explorer,
        Endpoint::CloudEval,
    ];

    pub(super) fn index(self) -> usize {
        Self::ALL.iter().position(|&e| e == self).unwrap_or(0)
    }

    /// Name for logs.
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::Account => "account",
            Endpoint::Upgrade => "upgrade",
            Endpoint::EventStream => "event stream",
            Endpoint::GameStream => "game stream",
            Endpoint::Move => "move",
            Endpoint::Chat => "chat",
            Endpoint::Abort => "abort",
            Endpoint::Resign => "resign",
            Endpoint::Draw => "draw",
            Endpoint::Takeback => "takeback",
            Endpoint::ClaimVictory => "claim-victory",
            Endpoint::ClaimDraw => "claim-draw",
            Endpoint::Accept => "accept",
            Endpoint::Decline => "decline",
            Endpoint::CreateChallenge => "create challenge",
            Endpoint::Playing => "playing",
            Endpoint::OnlineBots => "online bots",
            Endpoint::CancelChallenge => "cancel challenge",
            Endpoint::Tablebase => "tablebase",
            Endpoint::Explorer => "opening explorer",
            Endpoint::CloudEval => "cloud eval",
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
