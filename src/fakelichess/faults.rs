//! A seeded schedule of faults for the fake server, the failures a lichess bot meets in a long
//! run: streams cut (lichess deploys) or silent with the socket open (a connection stuck in
//! CLOSE-WAIT), 5xx and 429 answered with HTML pages as lichess's front servers send them, junk
//! lines, real lines with fields the client has never seen, and the bot process killed and
//! restarted (a crash under Docker's restart policy).
//!
//! [`schedule`] turns a seed, a duration and [`FaultRates`] into a time-ordered list; [`apply`]
//! applies one server-side fault to a [`FakeLichess`]. The lines and pages it sends are made in
//! `bad_lines.rs`, its generator is `rng.rs` (both re-exported here). The same seed gives the same list, so a
//! failing soak can be replayed. Killing a process is not the server's business: a
//! [`Fault::Restart`] is left to the caller.
//!
//! The faults that cost the bot clock time (a restart, a game stream going silent until the
//! watchdog replaces it) are spaced at least [`FaultRates::costly_gap`] apart, so that a healthy
//! bot can never lose on time because of the schedule alone: the soak judges the bot, not the
//! dice.

use std::time::Duration;

use super::FakeLichess;
pub use super::bad_lines::{
    BadLine, OVERLONG_BYTES, RATE_LIMITED_PAGE, bad_line, server_error_page, unknown_fields,
};
pub use super::rng::Rng;
use crate::lichess::client::Endpoint;

/// One fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The user's event stream is cut (a lichess deploy).
    CutEventStream,
    /// The user's stream of one running game is cut.
    CutGameStream,
    /// The user's event stream goes silent: socket open, nothing sent, not even keep-alives.
    SilenceEventStream,
    /// The user's stream of one running game goes silent (it costs the bot clock time until
    /// its watchdog replaces the stream: a costly fault).
    SilenceGameStream,
    /// The next `times` requests to `endpoint` get `status` (5xx) with an HTML page.
    ServerError {
        /// The endpoint.
        endpoint: Endpoint,
        /// 500, 502, 503 or 504.
        status: u16,
        /// How many requests in a row.
        times: usize,
    },
    /// The next request to `endpoint` gets 429 with lichess's HTML page.
    RateLimited {
        /// The endpoint.
        endpoint: Endpoint,
    },
    /// A junk line on the user's event stream.
    JunkEventLine(BadLine),
    /// A junk line on the user's stream of one running game.
    JunkGameLine(BadLine),
    /// Real lines with unknown fields: `gameStart` again (as on a reconnect) for the user's
    /// running games, and the current `gameState` of one of them.
    UnknownFields,
    /// The bot process is killed (SIGKILL) and started again: the caller's part (a costly fault).
    Restart,
}

impl Fault {
    /// Short name for summaries (one per variant, whatever its parameters).
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::CutEventStream => "cut event stream",
            Fault::CutGameStream => "cut game stream",
            Fault::SilenceEventStream => "silent event stream",
            Fault::SilenceGameStream => "silent game stream",
            Fault::ServerError { .. } => "5xx",
            Fault::RateLimited { .. } => "429",
            Fault::JunkEventLine(_) => "junk event line",
            Fault::JunkGameLine(_) => "junk game line",
            Fault::UnknownFields => "unknown fields",
            Fault::Restart => "restart (SIGKILL)",
        }
    }

    /// Whether it costs the bot clock time (spaced by [`FaultRates::costly_gap`]).
    pub fn is_costly(&self) -> bool {
        matches!(self, Fault::Restart | Fault::SilenceGameStream)
    }
}

/// Endpoints that get 5xx: every one the bot uses while playing.
pub const SERVER_ERROR_ENDPOINTS: [Endpoint; 8] = [
    Endpoint::EventStream,
    Endpoint::GameStream,
    Endpoint::Move,
    Endpoint::Accept,
    Endpoint::Decline,
    Endpoint::Account,
    Endpoint::Playing,
    Endpoint::Chat,
];

/// Endpoints that get 429. Not `move` nor `game_stream`: a 429 asks a client to wait a minute,
/// lichess does not rate-limit a bot's moves and game streams at a playing pace, and a minute's
/// pause in a bullet game is lost on time whatever the client does.
pub const RATE_LIMITED_ENDPOINTS: [Endpoint; 6] = [
    Endpoint::EventStream,
    Endpoint::Accept,
    Endpoint::Decline,
    Endpoint::Account,
    Endpoint::Playing,
    Endpoint::Chat,
];

/// How often each fault comes, per minute, and how the costly ones are spaced.
#[derive(Clone, Debug)]
pub struct FaultRates {
    /// [`Fault::Restart`].
    pub restart: f64,
    /// [`Fault::CutEventStream`].
    pub cut_event_stream: f64,
    /// [`Fault::CutGameStream`].
    pub cut_game_stream: f64,
    /// [`Fault::SilenceEventStream`].
    pub silence_event_stream: f64,
    /// [`Fault::SilenceGameStream`].
    pub silence_game_stream: f64,
    /// [`Fault::ServerError`].
    pub server_error: f64,
    /// [`Fault::RateLimited`].
    pub rate_limited: f64,
    /// [`Fault::JunkEventLine`].
    pub junk_event_line: f64,
    /// [`Fault::JunkGameLine`].
    pub junk_game_line: f64,
    /// [`Fault::UnknownFields`].
    pub unknown_fields: f64,
    /// Least time between two costly faults.
    pub costly_gap: Duration,
    /// After a stream goes silent, nothing else replaces it for this long (no cut of that kind
    /// of stream, no restart), so that only the client's watchdog can: set it above the
    /// client's idle timeout plus its longest reconnect pause.
    pub quiet_after_silence: Duration,
    /// No fault before this (the bot starts and connects).
    pub warmup: Duration,
}

impl Default for FaultRates {
    /// About 30 faults a minute, two restarts among them, costly ones 15 s apart, 25 s without
    /// a cut after a silence (lichess's keep-alives come every 7 s; a bot's watchdog is 20 s).
    fn default() -> Self {
        Self {
            restart: 2.0,
            cut_event_stream: 3.0,
            cut_game_stream: 3.0,
            silence_event_stream: 1.5,
            silence_game_stream: 1.5,
            server_error: 4.0,
            rate_limited: 2.0,
            junk_event_line: 3.0,
            junk_game_line: 4.0,
            unknown_fields: 3.0,
            costly_gap: Duration::from_secs(15),
            quiet_after_silence: Duration::from_secs(25),
            warmup: Duration::from_secs(3),
        }
    }
}

/// Draws one fault of a kind (its parameters).
type MakeFault<'a> = &'a dyn Fn(&mut Rng) -> Fault;

/// The faults of `duration` for `seed`, ordered by time (offsets from the start).
///
/// Each kind comes `rate × minutes` times (rounded, at least once when its rate is positive),
/// one at a random instant of each equal slice of the time after the warm-up, so that a short
/// run still meets every kind. Then, in time order, a fault that comes too early is moved
/// later: a costly fault closer than `costly_gap` to the previous one, a cut or restart less
/// than `quiet_after_silence` after a silence of that kind of stream. A fault moved past the
/// end is dropped.
pub fn schedule(seed: u64, duration: Duration, rates: &FaultRates) -> Vec<(Duration, Fault)> {
    let mut rng = Rng::new(seed);
    let span = duration.saturating_sub(rates.warmup);
    let minutes = span.as_secs_f64() / 60.0;
    let kinds: [(f64, MakeFault); 10] = [
        (rates.restart, &|_| Fault::Restart),
        (rates.cut_event_stream, &|_| Fault::CutEventStream),
        (rates.cut_game_stream, &|_| Fault::CutGameStream),
        (rates.silence_event_stream, &|_| Fault::SilenceEventStream),
        (rates.silence_game_stream, &|_| Fault::SilenceGameStream),
        (rates.server_error, &|r| Fault::ServerError {
            endpoint: *r.pick(&SERVER_ERROR_ENDPOINTS),
            status: *r.pick(&[500, 502, 503, 504]),
            times: 1 + r.below(2) as usize,
        }),
        (rates.rate_limited, &|r| Fault::RateLimited {
            endpoint: *r.pick(&RATE_LIMITED_ENDPOINTS),
        }),
        (rates.junk_event_line, &|r| {
            Fault::JunkEventLine(random_bad_line(r))
        }),
        (rates.junk_game_line, &|r| {
            Fault::JunkGameLine(random_bad_line(r))
        }),
        (rates.unknown_fields, &|_| Fault::UnknownFields),
    ];
    // (time, draw order, fault): the draw order keeps equal times deterministic.
    let mut queue = std::collections::BinaryHeap::new();
    if span.is_zero() {
        return Vec::new();
    }
    for (rate, make) in kinds {
        if rate <= 0.0 {
            continue;
        }
        let n = ((rate * minutes).round() as usize).max(1);
        let slice = span.div_f64(n as f64);
        for i in 0..n {
            let at = rates.warmup + slice.mul_f64(i as f64 + rng.unit());
            let order = queue.len();
            queue.push(std::cmp::Reverse((at, order, FaultKey(make(&mut rng)))));
        }
    }
    let mut out = Vec::with_capacity(queue.len());
    let mut last_costly: Option<Duration> = None;
    let (mut event_quiet, mut game_quiet) = (Duration::ZERO, Duration::ZERO);
    while let Some(std::cmp::Reverse((at, order, FaultKey(fault)))) = queue.pop() {
        let mut earliest = at;
        if fault.is_costly()
            && let Some(prev) = last_costly
        {
            earliest = earliest.max(prev + rates.costly_gap);
        }
        if matches!(fault, Fault::Restart | Fault::CutEventStream) {
            earliest = earliest.max(event_quiet);
        }
        if matches!(fault, Fault::Restart | Fault::CutGameStream) {
            earliest = earliest.max(game_quiet);
        }
        if earliest >= duration {
            continue;
        }
        if earliest > at {
            queue.push(std::cmp::Reverse((earliest, order, FaultKey(fault))));
            continue;
        }
        if fault.is_costly() {
            last_costly = Some(at);
        }
        match fault {
            Fault::SilenceEventStream => event_quiet = at + rates.quiet_after_silence,
            Fault::SilenceGameStream => game_quiet = at + rates.quiet_after_silence,
            _ => {}
        }
        out.push((at, fault));
    }
    out
}

/// A fault in the schedule's queue, ordered by nothing (time and draw order decide first, and
/// the draw order is unique).
#[derive(PartialEq, Eq)]
struct FaultKey(Fault);

impl PartialOrd for FaultKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for FaultKey {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

fn random_bad_line(rng: &mut Rng) -> BadLine {
    *rng.pick(&[BadLine::NotJson, BadLine::UnknownType, BadLine::OverLong])
}

/// The running games of `user`.
pub fn running_games(fake: &FakeLichess, user: &str) -> Vec<String> {
    fake.game_ids()
        .into_iter()
        .filter(|id| {
            fake.game(id)
                .is_some_and(|g| !g.is_over() && (g.white == user || g.black == user))
        })
        .collect()
}

/// What a fault hit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The account's event stream or an endpoint.
    Account,
    /// One game (its id).
    Game(String),
}

/// Applies a server-side fault against `user` (the bot's account): what it hit, or `None` when
/// it had no effect (a game fault needs a running game and an open stream of it;
/// [`Fault::Restart`] is never applied here). `rng` picks the game and the line.
pub fn apply(fake: &FakeLichess, user: &str, fault: &Fault, rng: &mut Rng) -> Option<Target> {
    let game = |rng: &mut Rng| {
        let games = running_games(fake, user);
        (!games.is_empty()).then(|| rng.pick(&games).clone())
    };
    let account = |hit: bool| hit.then_some(Target::Account);
    match fault {
        Fault::CutEventStream => account(fake.cut_event_stream(user)),
        Fault::CutGameStream => game(rng)
            .filter(|g| fake.cut_game_streams(g, user) > 0)
            .map(Target::Game),
        Fault::SilenceEventStream => account(fake.silence_event_stream(user)),
        Fault::SilenceGameStream => game(rng)
            .filter(|g| fake.silence_game_streams(g, user) > 0)
            .map(Target::Game),
        // Queued answers wait for the endpoint's next requests, which may be far off for one
        // the bot seldom calls: a fault is not stacked on one still waiting, so that no burst
        // of them builds up that no real outage would give.
        Fault::ServerError { endpoint, .. } | Fault::RateLimited { endpoint }
            if fake.pending_faults(*endpoint) > 0 =>
        {
            None
        }
        Fault::ServerError {
            endpoint,
            status,
            times,
        } => {
            fake.fail_next(*endpoint, *status, &server_error_page(*status), *times);
            Some(Target::Account)
        }
        Fault::RateLimited { endpoint } => {
            fake.fail_next(*endpoint, 429, RATE_LIMITED_PAGE, 1);
            Some(Target::Account)
        }
        Fault::JunkEventLine(junk) => {
            let line = bad_line(*junk, rng);
            let live = fake.event_stream_live(user);
            fake.push_event_line(user, &line);
            account(live)
        }
        Fault::JunkGameLine(junk) => {
            let g = game(rng).filter(|g| fake.game_stream_open(g, user))?;
            fake.push_game_line(&g, &bad_line(*junk, rng));
            Some(Target::Game(g))
        }
        Fault::UnknownFields => {
            let extra = unknown_fields(rng);
            let starts = fake.push_game_starts_with(user, &extra);
            match game(rng).filter(|g| fake.push_game_state_with(g, &extra)) {
                Some(g) => Some(Target::Game(g)),
                None => account(starts > 0),
            }
        }
        Fault::Restart => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_schedule_and_another_seed_another() {
        let rates = FaultRates::default();
        let d = Duration::from_secs(120);
        let a = schedule(7, d, &rates);
        assert_eq!(a, schedule(7, d, &rates));
        assert_ne!(a, schedule(8, d, &rates));
    }

    #[test]
    fn a_one_minute_schedule_holds_every_kind_in_order_after_the_warmup() {
        let rates = FaultRates::default();
        let d = Duration::from_secs(60);
        let s = schedule(1, d, &rates);
        for kind in [
            "cut event stream",
            "cut game stream",
            "silent event stream",
            "silent game stream",
            "5xx",
            "429",
            "junk event line",
            "junk game line",
            "unknown fields",
            "restart (SIGKILL)",
        ] {
            assert!(s.iter().any(|(_, f)| f.kind() == kind), "no {kind}");
        }
        assert!(s.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(s.iter().all(|(at, _)| *at >= rates.warmup && *at < d));
    }

    #[test]
    fn costly_faults_are_spaced_and_none_falls_past_the_end() {
        let rates = FaultRates {
            restart: 20.0,
            silence_game_stream: 20.0,
            ..FaultRates::default()
        };
        let d = Duration::from_secs(300);
        for seed in 0..20 {
            let costly: Vec<Duration> = schedule(seed, d, &rates)
                .into_iter()
                .filter(|(_, f)| f.is_costly())
                .map(|(at, _)| at)
                .collect();
            assert!(costly.len() >= 10, "seed {seed}: {}", costly.len());
            assert!(
                costly.windows(2).all(|w| w[1] - w[0] >= rates.costly_gap),
                "seed {seed}: {costly:?}"
            );
            assert!(costly.iter().all(|at| *at < d));
        }
    }

    #[test]
    fn no_cut_nor_restart_replaces_a_silent_stream_before_the_quiet_time() {
        let rates = FaultRates {
            silence_event_stream: 6.0,
            silence_game_stream: 6.0,
            costly_gap: Duration::from_secs(5),
            ..FaultRates::default()
        };
        let d = Duration::from_secs(600);
        for seed in 0..20 {
            let s = schedule(seed, d, &rates);
            let silences = s
                .iter()
                .filter(|(_, f)| matches!(f, Fault::SilenceEventStream | Fault::SilenceGameStream));
            assert!(silences.clone().count() >= 20, "seed {seed}");
            for (quiet, silence) in silences {
                let replaces = |f: &Fault| match silence {
                    Fault::SilenceEventStream => {
                        matches!(f, Fault::Restart | Fault::CutEventStream)
                    }
                    _ => matches!(f, Fault::Restart | Fault::CutGameStream),
                };
                assert!(
                    !s.iter().any(|(at, f)| replaces(f)
                        && *at >= *quiet
                        && *at < *quiet + rates.quiet_after_silence),
                    "seed {seed}: a stream silenced at {quiet:?} is replaced too early"
                );
            }
        }
    }

    #[test]
    fn no_fault_without_time_after_the_warmup() {
        assert!(schedule(3, Duration::from_secs(2), &FaultRates::default()).is_empty());
    }
}
