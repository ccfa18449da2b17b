//! The long soak with faults (issue 28): the `atomic-bot lichess` binary plays against the local
//! lichess-compatible server for `SOAK_SECS` seconds (60 by default, what CI runs) while a seeded
//! fault injector (`fakelichess::faults`, seed `SOAK_SEED`) cuts and silences both kinds of
//! stream, answers 5xx and 429 with HTML pages, sends junk lines and lines with unknown fields,
//! and kills the bot process (SIGKILL) and starts it again; besides, every JSON document the
//! server sends carries seeded junk (`fakelichess::junk`: extra fields and entries, re-typed
//! values). Opponents are played here, in
//! process, by `SimplePicker` with human-like think times; new challenges keep coming at mixed
//! time controls (1+1, 2+1, 3+2, 1+0) so that several games run at once.
//!
//! It holds when no game is lost on time by the bot, aborted or claimed after the bot left; no
//! move of the bot was refused (every move POST answered 200, apart from the injected 5xx and
//! 429, which the server never applies) and the accepted ones are exactly the bot's moves of
//! each game (so none twice, none out of turn); every challenge was answered; every silent
//! stream was replaced by the bot's watchdog in time; every game is finished at the end; the bot
//! was never away from a running game long enough for lichess to let its opponent claim the
//! win; the process never died by itself; and at the end it is connected and answers a
//! challenge.
//!
//! While the process is down, the server does what lichess does: the bot's clock runs on, its
//! games are neither aborted nor adjourned, challenges wait, and once it is back the event
//! stream replays the running games and the pending challenges; lichess would let a human
//! opponent claim the win after 12 s away, so the soak measures each absence.
//!
//! A one-hour run: `SOAK_SECS=3600 cargo test --release --test soak -- --nocapture`.
//! Other knobs: `SOAK_ENGINE` (`alphabeta`, the default, `mcts` or `simple`), `SOAK_DRAIN_SECS`
//! (how long games may go on after the faults stop before the opponents resign, 20 by default)
//! `SOAK_LOG` (the bot's `RUST_LOG`, `info` by default; the end of its log is printed on failure
//! and the whole kept) and `SOAK_KEEP` (set: keep the bot's log and the applied faults,
//! `faults.log`, even when the soak holds).
//!
//! Timings are lichess's, scaled down where a minute-long run needs it: keep-alives every 2 s
//! (lichess 6-7 s) with the bot's watchdog at 5 s (default 20 s), a 2 s pause after a 429
//! (lichess asks 60 s); the first-move deadline is lichess's bullet one (20 s), and the clocks
//! are real.

mod common;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atomic_bot::fakelichess::faults::{self, Fault, FaultRates, Rng, Target};
use atomic_bot::fakelichess::{ChallengeSpec, FakeConfig, FakeLichess};
use atomic_bot::lichess::client::Endpoint;
use atomic_bot::lichess::picker::{Budget, MovePicker, SimplePicker};
use atomic_chess::{Game, Position};
use common::{BOT, BOT_TOKEN, accounts};
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep};

/// The in-process opponents (accounts of `common::accounts`).
const OPPONENTS: [&str; 3] = ["human1", "human2", "human3"];
/// Time controls of the challenges, `(limit s, increment s)`.
const CLOCKS: [(u32, u32); 4] = [(60, 1), (120, 1), (180, 2), (60, 0)];
/// Games the bot plays at once; the challenges in flight never exceed it.
const MAX_GAMES: usize = 3;
/// Keep-alive period of the fake's streams.
const KEEPALIVE: Duration = Duration::from_secs(2);
/// The bot's stream watchdog.
const IDLE_MS: u64 = 5_000;
/// The bot's longest pause between two attempts to open a stream.
const RECONNECT_MAX_MS: u64 = 3_000;
/// Lichess aborts a game whose first moves do not come within this (bullet).
const FIRST_MOVE: Duration = Duration::from_secs(20);
/// An unanswered challenge expires after this (lichess: about 20 s).
const CHALLENGE_TTL: Duration = Duration::from_secs(20);
/// Lichess lets the opponent of a player offline this long claim the win (lila's round socket:
/// the disconnect timeout of the game's speed, at least 12 s).
const GONE_AFTER: Duration = Duration::from_secs(12);

/// Never deaf: a silent stream is replaced within the watchdog's time, the longest reconnect
/// pause and a second.
fn deaf_limit() -> Duration {
    Duration::from_millis(IDLE_MS + RECONNECT_MAX_MS + 1_000)
}

/// The run's settings, from the environment.
struct Params {
    secs: u64,
    seed: u64,
    drain: Duration,
    engine: String,
    log: String,
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a whole number")),
        Err(_) => default,
    }
}

impl Params {
    fn from_env() -> Self {
        let engine = std::env::var("SOAK_ENGINE").unwrap_or_else(|_| "alphabeta".into());
        assert!(
            ["alphabeta", "mcts", "simple"].contains(&engine.as_str()),
            "SOAK_ENGINE={engine:?}: expected alphabeta, mcts or simple"
        );
        Self {
            secs: env_u64("SOAK_SECS", 60),
            seed: env_u64("SOAK_SEED", 28),
            drain: Duration::from_secs(env_u64("SOAK_DRAIN_SECS", 20)),
            engine,
            log: std::env::var("SOAK_LOG").unwrap_or_else(|_| "info".into()),
        }
    }
}

/// The bot binary pointed at the fake, its output appended to `dir/bot.log`.
fn spawn_bot(url: &str, dir: &Path, p: &Params) -> Child {
    let log = File::options()
        .create(true)
        .append(true)
        .open(dir.join("bot.log"))
        .expect("bot log file");
    let err = log.try_clone().expect("bot log file");
    Command::new(env!("CARGO_BIN_EXE_atomic-bot"))
        .arg("lichess")
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("LICHESS_BOT_TOKEN", BOT_TOKEN)
        .env("ATOMIC_BOT_LICHESS__URL", url)
        .env(
            "ATOMIC_BOT_LICHESS__STREAM_IDLE_TIMEOUT_MS",
            IDLE_MS.to_string(),
        )
        .env("ATOMIC_BOT_LICHESS__RATE_LIMIT_COOLDOWN_MS", "2000")
        .env("ATOMIC_BOT_LICHESS__RETRY_MIN_MS", "100")
        .env("ATOMIC_BOT_LICHESS__RETRY_MAX_MS", "1000")
        .env("ATOMIC_BOT_LICHESS__RETRY_MAX_TIMES", "6")
        .env("ATOMIC_BOT_LICHESS__RECONNECT_MIN_MS", "200")
        .env(
            "ATOMIC_BOT_LICHESS__RECONNECT_MAX_MS",
            RECONNECT_MAX_MS.to_string(),
        )
        .env("ATOMIC_BOT_LICHESS__HEALTHY_AFTER_MS", "10000")
        .env("ATOMIC_BOT_CHALLENGE__MAX_GAMES", MAX_GAMES.to_string())
        .env("ATOMIC_BOT_SEARCH__ENGINE", &p.engine)
        .env("ATOMIC_BOT_SEARCH__HASH_MB", "48")
        // Two cores for everything here: no thinking on the opponent's time.
        .env("ATOMIC_BOT_GAME__PONDER", "false")
        .env("ATOMIC_BOT_HEARTBEAT__PATH", dir.join("heartbeat"))
        .env("RUST_LOG", &p.log)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .spawn()
        .expect("start the bot binary")
}

/// A challenge of the run and what became of it.
struct ChallengeRec {
    id: String,
    from: &'static str,
    clock: (u32, u32),
    /// `accepted`, `declined (reason)`, `unanswered`, or `created` while in flight.
    outcome: String,
}

/// What the test's tasks count.
#[derive(Default)]
struct Tally {
    challenges: Vec<ChallengeRec>,
    /// Games (= accepted challenges) and their opponent.
    games: BTreeMap<String, &'static str>,
    /// The bot's lowest clock seen on its turn (ms) and the game.
    min_clock: Option<(i64, String)>,
    opponent_moves: usize,
    opponent_resigns: usize,
    opponent_errors: Vec<String>,
    /// When each game was first seen over (every 50 ms).
    ended: BTreeMap<String, Instant>,
}

type Shared = Arc<Mutex<Tally>>;

fn tally(t: &Shared) -> std::sync::MutexGuard<'_, Tally> {
    t.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A human-like think: mostly a second or two, sometimes quick, sometimes long, never more
/// than a twentieth of the clock left.
fn think_time(rng: &mut Rng, left_ms: i64, ply: usize) -> Duration {
    let ms = Duration::from_millis;
    if ply < 2 {
        return rng.between(ms(300), ms(1500));
    }
    let r = rng.unit();
    let base = if r < 0.3 {
        rng.between(ms(150), ms(600))
    } else if r < 0.85 {
        rng.between(ms(600), ms(2000))
    } else {
        rng.between(ms(2000), ms(5000))
    };
    base.min(ms((left_ms / 20).max(100) as u64))
}

/// Plays `me`'s side of game `id` through the fake's in-process API until the game is over;
/// resigns at its first turn after `resign_at`.
async fn opponent(
    fake: Arc<FakeLichess>,
    id: String,
    me: &'static str,
    seed: u64,
    resign_at: Instant,
    t: Shared,
) {
    let mut rng = Rng::new(seed);
    let mut picker = SimplePicker { seed };
    let budget = Budget {
        soft: Duration::from_millis(10),
        hard: Duration::from_millis(20),
        threads: 1,
    };
    let stop = AtomicBool::new(false);
    loop {
        let Some(g) = fake.game(&id) else { return };
        if g.is_over() {
            return;
        }
        let white = g.white == me;
        if (g.moves.len() % 2 == 0) != white {
            sleep(Duration::from_millis(20)).await;
            continue;
        }
        if Instant::now() >= resign_at {
            if fake.resign(&id, me).is_ok() {
                tally(&t).opponent_resigns += 1;
            }
            return;
        }
        let left = if white { g.wtime } else { g.btime };
        sleep(think_time(&mut rng, left, g.moves.len())).await;
        let Some(now) = fake.game(&id) else { return };
        if now.is_over() || now.moves.len() != g.moves.len() {
            continue;
        }
        let game = match Game::from_uci_moves(Position::startpos(), &now.moves) {
            Ok(game) => game,
            Err(e) => {
                tally(&t)
                    .opponent_errors
                    .push(format!("{id}: replaying {:?}: {e}", now.moves));
                return;
            }
        };
        let Some(pick) = picker.pick(&game, &budget, &stop) else {
            sleep(Duration::from_millis(20)).await;
            continue;
        };
        match fake.play(&id, me, &pick.mv.to_string()) {
            Ok(()) => tally(&t).opponent_moves += 1,
            Err(e) => {
                if fake.game(&id).is_some_and(|g| !g.is_over()) {
                    tally(&t).opponent_errors.push(format!("{id}: {e}"));
                }
            }
        }
    }
}

/// Challenges the bot at random intervals while `stop` is unset, never more than `MAX_GAMES`
/// games and open challenges at once; plays each accepted game with [`opponent`].
async fn challenger(
    fake: Arc<FakeLichess>,
    seed: u64,
    stop: Arc<AtomicBool>,
    resign_at: Instant,
    t: Shared,
    players: Arc<Mutex<Vec<JoinHandle<()>>>>,
) {
    let mut rng = Rng::new(seed ^ 0xC4A1_1E46);
    let in_flight = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    while !stop.load(Ordering::Relaxed) {
        sleep(rng.between(Duration::from_millis(1500), Duration::from_secs(4))).await;
        if stop.load(Ordering::Relaxed)
            || fake.running_games(BOT) + in_flight.load(Ordering::Relaxed) >= MAX_GAMES
        {
            continue;
        }
        let from = *rng.pick(&OPPONENTS);
        let clock = *rng.pick(&CLOCKS);
        let spec = ChallengeSpec {
            clock: Some(clock),
            ..ChallengeSpec::default()
        };
        let id = match fake.challenge(from, BOT, &spec) {
            Ok(id) => id,
            Err(e) => {
                tally(&t)
                    .opponent_errors
                    .push(format!("the fake refused a challenge: {e}"));
                continue;
            }
        };
        let index = {
            let mut t = tally(&t);
            t.challenges.push(ChallengeRec {
                id: id.clone(),
                from,
                clock,
                outcome: "created".into(),
            });
            t.challenges.len() - 1
        };
        in_flight.fetch_add(1, Ordering::Relaxed);
        let (fake2, t2, in_flight2, players2) =
            (fake.clone(), t.clone(), in_flight.clone(), players.clone());
        let game_seed = rng.next_u64();
        players.lock().unwrap().push(tokio::spawn(async move {
            let answered = fake2
                .wait_until(CHALLENGE_TTL, |f| {
                    f.challenge_status(&id).is_some_and(|(s, _)| s != "created")
                })
                .await;
            let outcome = match fake2.challenge_status(&id) {
                Some((s, _)) if s == "accepted" => "accepted".to_owned(),
                Some((s, reason)) if answered => format!("{s} ({})", reason.unwrap_or_default()),
                _ => {
                    let _ = fake2.cancel_challenge(&id);
                    "unanswered".to_owned()
                }
            };
            let accepted = outcome == "accepted";
            {
                let mut t = tally(&t2);
                t.challenges[index].outcome = outcome;
                if accepted {
                    t.games.insert(id.clone(), from);
                }
            }
            // An accepted one counts in `running_games` from now on.
            in_flight2.fetch_sub(1, Ordering::Relaxed);
            if accepted {
                let player = tokio::spawn(opponent(fake2, id, from, game_seed, resign_at, t2));
                players2.lock().unwrap().push(player);
            }
        }));
    }
}

/// Samples the bot's clock on its turn every 50 ms (its lowest clock left), and notes when
/// each game ends.
async fn watch_clocks(fake: Arc<FakeLichess>, t: Shared, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        let ids: Vec<String> = tally(&t).games.keys().cloned().collect();
        for id in ids {
            let Some(g) = fake.game(&id) else { continue };
            if g.is_over() {
                tally(&t).ended.entry(id).or_insert_with(Instant::now);
                continue;
            }
            if g.moves.len() < 2 {
                continue;
            }
            let bot_white = g.white == BOT;
            if (g.moves.len() % 2 == 0) != bot_white {
                continue;
            }
            let left = if bot_white { g.wtime } else { g.btime };
            let mut t = tally(&t);
            if t.min_clock.as_ref().is_none_or(|(m, _)| left < *m) {
                t.min_clock = Some((left, id));
            }
        }
        sleep(Duration::from_millis(50)).await;
    }
}

/// The bot process and what happened to it.
struct Supervised {
    child: Child,
    restarts: usize,
    /// Exits nobody asked for: `(status, seconds into the run)`.
    crashes: Vec<String>,
    /// Each kill: when, and the games running then.
    kills: Vec<(Instant, Vec<String>)>,
}

impl Supervised {
    /// Restarts the bot if it exited by itself (as Docker would), noting it.
    fn check(&mut self, url: &str, dir: &Path, p: &Params, t0: Instant) {
        if let Ok(Some(status)) = self.child.try_wait() {
            self.crashes
                .push(format!("{status} at {:.1} s", t0.elapsed().as_secs_f64()));
            self.child = spawn_bot(url, dir, p);
        }
    }

    /// Waits until `until`, checking the process.
    async fn wait(&mut self, until: Instant, url: &str, dir: &Path, p: &Params, t0: Instant) {
        while Instant::now() < until {
            self.check(url, dir, p, t0);
            sleep(Duration::from_millis(50).min(until - Instant::now())).await;
        }
    }
}

fn log_tail(dir: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(dir.join("bot.log")).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_with_faults_loses_no_game_sends_no_move_twice_and_ends_connected() {
    let p = Params::from_env();
    let fake = Arc::new(
        FakeLichess::start(FakeConfig {
            accounts: accounts(),
            keepalive: KEEPALIVE,
            first_move_timeout: FIRST_MOVE,
            ..FakeConfig::default()
        })
        .await
        .expect("fake server"),
    );
    // Every JSON document the bot reads carries seeded junk: fields lichess might add, values
    // of other types where the bot does not need them (`fakelichess::junk`).
    fake.junk(p.seed);
    let url = fake.url();
    let dir = tempfile::Builder::new()
        .prefix("atomic-bot-soak-")
        .tempdir()
        .expect("temp dir");
    let rates = FaultRates {
        // Only the bot's watchdog may replace a silent stream: it must, in time.
        quiet_after_silence: deaf_limit() + Duration::from_secs(1),
        ..FaultRates::default()
    };
    let schedule = faults::schedule(p.seed, Duration::from_secs(p.secs), &rates);
    println!(
        "soak: {} s, seed {}, engine {}, {} faults scheduled, bot log {}",
        p.secs,
        p.seed,
        p.engine,
        schedule.len(),
        dir.path().join("bot.log").display()
    );

    let mut bot = Supervised {
        child: spawn_bot(&url, dir.path(), &p),
        restarts: 0,
        crashes: Vec::new(),
        kills: Vec::new(),
    };
    assert!(
        fake.wait_until(Duration::from_secs(60), |f| f.event_stream_connections(BOT)
            >= 1)
            .await,
        "the bot never opened its event stream:\n{}",
        log_tail(dir.path(), 60)
    );

    let t0 = Instant::now();
    let faults_end = t0 + Duration::from_secs(p.secs);
    let resign_at = faults_end + p.drain;
    let t: Shared = Arc::default();
    let stop_challenges = Arc::new(AtomicBool::new(false));
    let stop_watch = Arc::new(AtomicBool::new(false));
    let players = Arc::new(Mutex::new(Vec::new()));
    let challenges = tokio::spawn(challenger(
        fake.clone(),
        p.seed,
        stop_challenges.clone(),
        resign_at,
        t.clone(),
        players.clone(),
    ));
    let watch = tokio::spawn(watch_clocks(fake.clone(), t.clone(), stop_watch.clone()));

    // The faults, in order.
    let mut rng = Rng::new(p.seed ^ 0xFA17_5EED);
    let mut counts: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    // Each silence that took effect: when, and the stream (the account's or a game's).
    let mut silences: Vec<(Instant, Target)> = Vec::new();
    let mut fault_log = File::create(dir.path().join("faults.log")).expect("fault log");
    let _ = writeln!(
        fault_log,
        "seed {}; times from {} ms after the Unix epoch",
        p.seed,
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    for (at, fault) in &schedule {
        bot.wait(t0 + *at, &url, dir.path(), &p, t0).await;
        let applied = match fault {
            Fault::Restart => {
                let running = faults::running_games(&fake, BOT);
                let _ = bot.child.kill();
                let _ = bot.child.wait();
                bot.kills.push((Instant::now(), running));
                // Down for up to a second, as under a restart policy.
                sleep(rng.between(Duration::ZERO, Duration::from_secs(1))).await;
                bot.child = spawn_bot(&url, dir.path(), &p);
                bot.restarts += 1;
                true
            }
            f => {
                let hit = faults::apply(&fake, BOT, f, &mut rng);
                if matches!(f, Fault::SilenceEventStream | Fault::SilenceGameStream)
                    && let Some(target) = &hit
                {
                    silences.push((Instant::now(), target.clone()));
                }
                hit.is_some()
            }
        };
        let _ = writeln!(
            fault_log,
            "{:9.3} s  {fault:?}{}",
            t0.elapsed().as_secs_f64(),
            if applied { "" } else { "  (no effect)" }
        );
        let c = counts.entry(fault.kind()).or_default();
        c.0 += 1;
        c.1 += usize::from(applied);
    }
    bot.wait(faults_end, &url, dir.path(), &p, t0).await;
    // The outage is over: answers queued for endpoints the bot has not called since are dropped.
    fake.clear_faults();

    // No new challenges; the games run on, then the opponents resign.
    stop_challenges.store(true, Ordering::Relaxed);
    let _ = challenges.await;
    let limit = resign_at + Duration::from_secs(90);
    while Instant::now() < limit {
        let open = tally(&t).challenges.iter().any(|c| c.outcome == "created");
        if !open && fake.running_games(BOT) == 0 {
            break;
        }
        bot.wait(
            Instant::now() + Duration::from_millis(200),
            &url,
            dir.path(),
            &p,
            t0,
        )
        .await;
    }
    let handles: Vec<JoinHandle<()>> = std::mem::take(&mut *players.lock().unwrap());
    for h in handles {
        h.abort();
        let _ = h.await;
    }
    stop_watch.store(true, Ordering::Relaxed);
    let _ = watch.await;

    // Connected at the end: the event stream is open and a challenge gets its answer.
    let connected = fake
        .wait_until(Duration::from_secs(IDLE_MS / 1000 + 10), |f| {
            f.event_stream_live(BOT)
        })
        .await;
    let probe = fake
        .challenge(
            "human1",
            BOT,
            &ChallengeSpec {
                variant: "standard".into(),
                ..ChallengeSpec::default()
            },
        )
        .expect("probe challenge");
    let probe_answered = fake
        .wait_until(CHALLENGE_TTL, |f| {
            f.challenge_status(&probe)
                .is_some_and(|(s, _)| s == "declined")
        })
        .await;
    bot.check(&url, dir.path(), &p, t0);
    let _ = bot.child.kill();
    let _ = bot.child.wait();

    // The verdict.
    let t = tally(&t);
    let requests = fake.requests();
    let mut failures: Vec<String> = Vec::new();
    let mut results: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_clock: BTreeMap<String, usize> = BTreeMap::new();
    let mut bot_moves = 0usize;
    for c in &t.challenges {
        if c.outcome == "unanswered" {
            failures.push(format!(
                "challenge {} from {} ({}+{}) never answered",
                c.id, c.from, c.clock.0, c.clock.1
            ));
        }
    }
    for (id, opp) in &t.games {
        let Some(g) = fake.game(id) else {
            failures.push(format!("game {id} vanished"));
            continue;
        };
        let bot_white = g.white == BOT;
        let bot_color = if bot_white { "white" } else { "black" };
        let clock = t
            .challenges
            .iter()
            .find(|c| &c.id == id)
            .map(|c| format!("{}+{}", c.clock.0 / 60, c.clock.1))
            .unwrap_or_default();
        *by_clock.entry(clock.clone()).or_default() += 1;
        let result = match (g.status.as_str(), g.winner.as_deref()) {
            (s, None) => s.to_owned(),
            (s, Some(w)) if w == bot_color => format!("{s}, bot won"),
            (s, Some(_)) => format!("{s}, bot lost"),
        };
        *results.entry(result.clone()).or_default() += 1;
        let lost_on_time = g.status == "outoftime" && g.winner.as_deref() != Some(bot_color);
        if g.status == "started"
            || g.status == "aborted"
            || g.status == "noStart"
            || g.status == "timeout"
            || lost_on_time
        {
            failures.push(format!(
                "game {id} ({clock}, bot {bot_color} against {opp}): {result} after {} plies, \
                 clocks {} / {} ms",
                g.moves.len(),
                g.wtime,
                g.btime
            ));
        }
        // Every accepted move POST of the bot is one of its moves: none twice, none out of turn.
        let prefix = format!("/api/bot/game/{id}/move/");
        let posts: Vec<_> = requests
            .iter()
            .filter(|r| r.user.as_deref() == Some(BOT) && r.path.starts_with(&prefix))
            .collect();
        let accepted = posts.iter().filter(|r| r.status == 200).count();
        let own = (0..g.moves.len())
            .filter(|i| (i % 2 == 0) == bot_white)
            .count();
        bot_moves += accepted;
        if accepted != own {
            failures.push(format!(
                "game {id}: {accepted} move POSTs of the bot accepted for its {own} moves"
            ));
        }
        for r in &posts {
            if r.status != 200 && r.status != 429 && r.status < 500 {
                failures.push(format!(
                    "game {id}: the bot's {} was answered {} (a move sent twice, out of turn \
                     or illegal)",
                    r.path, r.status
                ));
            }
        }
    }
    // Away from a running game (killed, until its stream of that game is open again).
    let mut longest_away = Duration::ZERO;
    for (killed, games) in &bot.kills {
        for id in games {
            let path = format!("/api/bot/game/stream/{id}");
            let back = requests
                .iter()
                .find(|r| {
                    r.at > *killed
                        && r.status == 200
                        && r.user.as_deref() == Some(BOT)
                        && r.path == path
                })
                .map(|r| r.at - *killed);
            match back {
                Some(away) => longest_away = longest_away.max(away),
                None if fake.game(id).is_some_and(|g| g.is_over()) => {}
                None => failures.push(format!("game {id}: the bot never came back after a kill")),
            }
        }
    }
    if longest_away >= GONE_AFTER {
        failures.push(format!(
            "the bot was away from a running game for {longest_away:?} after a kill: lichess \
             lets the opponent claim the win after {GONE_AFTER:?}"
        ));
    }
    let deaf_limit = deaf_limit();
    let mut longest_deaf = Duration::ZERO;
    for (silenced, target) in &silences {
        let path = match target {
            Target::Account => "/api/stream/event".to_owned(),
            Target::Game(id) => format!("/api/bot/game/stream/{id}"),
        };
        let replaced = requests
            .iter()
            .find(|r| r.at > *silenced && r.user.as_deref() == Some(BOT) && r.path == path)
            .map(|r| r.at - *silenced);
        let ended = match target {
            Target::Game(id) => t
                .ended
                .get(id)
                .map(|at| at.saturating_duration_since(*silenced)),
            Target::Account => None,
        };
        let deaf = match (replaced, ended) {
            (Some(r), Some(e)) => r.min(e),
            (Some(r), None) => r,
            (None, Some(e)) => e,
            (None, None) => Instant::now() - *silenced,
        };
        longest_deaf = longest_deaf.max(deaf);
        if deaf > deaf_limit {
            failures.push(format!(
                "{path} went silent at {:.1} s and stayed so for {deaf:?} (watchdog {IDLE_MS} ms)",
                (*silenced - t0).as_secs_f64()
            ));
        }
    }
    if !bot.crashes.is_empty() {
        failures.push(format!("the bot exited by itself: {:?}", bot.crashes));
    }
    if !connected {
        failures.push("no live event stream at the end".into());
    }
    if !probe_answered {
        failures.push("the final challenge was never declined: the bot is deaf".into());
    }
    if t.games.is_empty() || bot_moves == 0 {
        failures.push("no game was played".into());
    }
    failures.extend(t.opponent_errors.iter().map(|e| format!("opponent: {e}")));

    let mut statuses: BTreeMap<(String, u16), usize> = BTreeMap::new();
    for r in requests.iter().filter(|r| r.user.as_deref() == Some(BOT)) {
        if r.status == 429 || r.status >= 500 {
            let endpoint = r.endpoint.map_or("unknown", Endpoint::name);
            *statuses.entry((endpoint.to_owned(), r.status)).or_default() += 1;
        }
    }
    println!(
        "soak summary (seed {}, {} s, engine {}):",
        p.seed, p.secs, p.engine
    );
    let mut answers: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &t.challenges {
        *answers.entry(c.outcome.as_str()).or_default() += 1;
    }
    println!(
        "  challenges {} {answers:?}, games {} {by_clock:?}",
        t.challenges.len(),
        t.games.len(),
    );
    println!("  results {results:?}");
    println!(
        "  moves: bot {bot_moves}, opponents {} (opponents resigned {} at the end)",
        t.opponent_moves, t.opponent_resigns
    );
    println!(
        "  restarts {} (SIGKILL), longest away from a game {:.1} s, event-stream connections {}",
        bot.restarts,
        longest_away.as_secs_f64(),
        fake.event_stream_connections(BOT)
    );
    println!(
        "  silent streams {}, longest until replaced {:.1} s (watchdog {:.1} s)",
        silences.len(),
        longest_deaf.as_secs_f64(),
        IDLE_MS as f64 / 1000.0
    );
    println!("  faults (scheduled, took effect): {counts:?}");
    println!("  injected answers the bot received (endpoint, status): {statuses:?}");
    match &t.min_clock {
        Some((ms, id)) => println!("  the bot's lowest clock on its turn: {ms} ms (game {id})"),
        None => println!("  the bot's lowest clock on its turn: no sample"),
    }
    if !failures.is_empty() {
        let tail = log_tail(dir.path(), 120);
        let kept = dir.keep();
        panic!(
            "soak failed (seed {}):\n  {}\nbot log and fault log kept in {}; the bot log's \
             end:\n{tail}",
            p.seed,
            failures.join("\n  "),
            kept.display()
        );
    }
    if std::env::var_os("SOAK_KEEP").is_some() {
        println!("  bot log and fault log kept in {}", dir.keep().display());
    }
}

/// A stream of the fake read as raw lines (what a client would see on the wire).
struct RawStream {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buf: Vec<u8>,
}

impl RawStream {
    async fn open(url: &str, token: &str) -> RawStream {
        use futures_util::StreamExt;
        let resp = reqwest::Client::new()
            .get(url)
            .bearer_auth(token)
            .send()
            .await
            .expect("stream request");
        assert_eq!(resp.status(), 200, "{url}");
        RawStream {
            body: resp.bytes_stream().boxed(),
            buf: Vec::new(),
        }
    }

    /// The next line (`""` for a keep-alive), `None` at the end of the stream, or `Err` when
    /// nothing came within `within`.
    async fn line(&mut self, within: Duration) -> Result<Option<String>, ()> {
        use futures_util::StreamExt;
        let deadline = Instant::now() + within;
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                return Ok(Some(String::from_utf8_lossy(&line[..i]).into_owned()));
            }
            match tokio::time::timeout_at(deadline, self.body.next()).await {
                Err(_) => return Err(()),
                Ok(None | Some(Err(_))) => return Ok(None),
                Ok(Some(Ok(chunk))) => self.buf.extend_from_slice(&chunk),
            }
        }
    }

    /// The next line that is not a keep-alive, parsed.
    async fn json(&mut self, within: Duration) -> serde_json::Value {
        loop {
            match self.line(within).await {
                Ok(Some(l)) if l.is_empty() => {}
                Ok(Some(l)) => return serde_json::from_str(&l).expect("a JSON line"),
                other => panic!("expected a line, got {other:?}"),
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_hooks_silence_cut_and_decorate_the_live_streams() {
    let fake = FakeLichess::start(FakeConfig {
        accounts: accounts(),
        keepalive: Duration::from_millis(100),
        ..FakeConfig::default()
    })
    .await
    .expect("fake server");
    let url = fake.url();
    let mut events = RawStream::open(&format!("{url}/api/stream/event"), BOT_TOKEN).await;
    let id = fake
        .challenge("human1", BOT, &ChallengeSpec::default())
        .expect("challenge");
    assert_eq!(
        events.json(Duration::from_secs(2)).await["type"],
        "challenge"
    );
    let accept = reqwest::Client::new()
        .post(format!("{url}/api/challenge/{id}/accept"))
        .bearer_auth(BOT_TOKEN)
        .send()
        .await
        .expect("accept");
    assert_eq!(accept.status(), 200);
    assert_eq!(
        events.json(Duration::from_secs(2)).await["type"],
        "gameStart"
    );
    let mut game = RawStream::open(&format!("{url}/api/bot/game/stream/{id}"), BOT_TOKEN).await;
    assert_eq!(game.json(Duration::from_secs(2)).await["type"], "gameFull");
    assert_eq!(faults::running_games(&fake, BOT), vec![id.clone()]);

    // Unknown fields on real lines: a gameStart replay and the current gameState.
    let mut rng = Rng::new(1);
    let target = faults::apply(&fake, BOT, &Fault::UnknownFields, &mut rng);
    assert_eq!(target, Some(Target::Game(id.clone())));
    let start = events.json(Duration::from_secs(2)).await;
    assert_eq!(start["type"], "gameStart");
    assert_eq!(start["game"]["id"], id.as_str());
    assert!(start["soakNested"].is_object() && start["game"]["soakText"].is_string());
    let state = game.json(Duration::from_secs(2)).await;
    assert_eq!(
        (state["type"].as_str(), state["moves"].as_str()),
        (Some("gameState"), Some(""))
    );
    assert!(state["soakFutureField"].is_number());

    // Junk reaches the stream as it is.
    assert!(
        faults::apply(
            &fake,
            BOT,
            &Fault::JunkGameLine(faults::BadLine::OverLong),
            &mut rng
        )
        .is_some()
    );
    let long = loop {
        match game.line(Duration::from_secs(2)).await {
            Ok(Some(l)) if l.is_empty() => {}
            other => break other.expect("a line").expect("a line"),
        }
    };
    assert!(long.len() > faults::OVERLONG_BYTES);

    // Silence: the socket stays open, and nothing comes, not even keep-alives.
    assert_eq!(
        faults::apply(&fake, BOT, &Fault::SilenceGameStream, &mut rng),
        Some(Target::Game(id.clone()))
    );
    while game.line(Duration::from_millis(50)).await.is_ok() {}
    assert_eq!(game.line(Duration::from_millis(500)).await, Err(()));
    assert!(fake.game_stream_open(&id, BOT));
    assert!(fake.event_stream_live(BOT));
    assert!(faults::apply(&fake, BOT, &Fault::SilenceEventStream, &mut rng).is_some());
    assert!(!fake.event_stream_live(BOT));
    while events.line(Duration::from_millis(50)).await.is_ok() {}
    assert_eq!(events.line(Duration::from_millis(500)).await, Err(()));

    // Cuts end the streams at once.
    assert!(faults::apply(&fake, BOT, &Fault::CutGameStream, &mut rng).is_some());
    assert_eq!(game.line(Duration::from_secs(2)).await, Ok(None));
    assert!(!fake.game_stream_open(&id, BOT));
    assert!(faults::apply(&fake, BOT, &Fault::CutEventStream, &mut rng).is_some());
    assert_eq!(events.line(Duration::from_secs(2)).await, Ok(None));
    // Nothing left to cut or silence.
    assert_eq!(
        faults::apply(&fake, BOT, &Fault::CutGameStream, &mut rng),
        None
    );
    assert_eq!(
        faults::apply(&fake, BOT, &Fault::SilenceEventStream, &mut rng),
        None
    );
    assert_eq!(faults::apply(&fake, BOT, &Fault::Restart, &mut rng), None);

    // 429 and 5xx come as HTML pages, as many times as scheduled, never stacked on answers
    // still waiting.
    let limited = Fault::RateLimited {
        endpoint: Endpoint::Playing,
    };
    let failing = Fault::ServerError {
        endpoint: Endpoint::Playing,
        status: 502,
        times: 2,
    };
    let http = reqwest::Client::new();
    let playing = || async {
        let resp = http
            .get(format!("{url}/api/account/playing"))
            .bearer_auth(BOT_TOKEN)
            .send()
            .await
            .expect("playing");
        let html = resp
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/html"));
        (resp.status().as_u16(), html)
    };
    assert_eq!(
        faults::apply(&fake, BOT, &limited, &mut rng),
        Some(Target::Account)
    );
    assert_eq!(faults::apply(&fake, BOT, &failing, &mut rng), None);
    assert_eq!(fake.pending_faults(Endpoint::Playing), 1);
    assert_eq!(playing().await, (429, true));
    assert_eq!(
        faults::apply(&fake, BOT, &failing, &mut rng),
        Some(Target::Account)
    );
    assert_eq!(playing().await, (502, true));
    assert_eq!(playing().await, (502, true));
    assert_eq!(playing().await, (200, false));
    faults::apply(&fake, BOT, &failing, &mut rng);
    fake.clear_faults();
    assert_eq!(fake.pending_faults(Endpoint::Playing), 0);
    assert_eq!(playing().await, (200, false));
}
