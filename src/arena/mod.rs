//! `atomic-bot arena`: the bot, exactly as it plays on lichess, against any UCI engine, offline.
//!
//! The local lichess-compatible server (`fakelichess`) hosts the games. The bot connects to it
//! as to lichess (HTTP client, supervisor, challenge handling, game task, time manager, the
//! configured search), with a network lag charged to its clock as lichess charges bots (the
//! server delays what it sends and what the bot posts, half the round trip each way). The
//! engine account challenges the bot from each opening's position, once with each colour, and
//! its moves are played through the server in-process, so its clock is charged only its think
//! time. The figures (results, Elo, time forfeits, failures, response times, clock left, peak
//! memory) come from the server and the bot's own turn metrics, and every game goes to the PGN.
//!
//! The arena sits at the top of the layers, beside `demo`: it uses `lichess`, `fakelichess`
//! and `search`; nothing imports it.

pub mod engine;
pub mod openings;
pub mod opponent;
pub mod report;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use secrecy::SecretString;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::{ConfigSource, Settings, TimeControl};
use crate::fakelichess::{ChallengeSpec, FakeAccount, FakeConfig, FakeLichess};
use crate::lichess::app::{init_logging, pickers, run_until_signal};
use crate::lichess::client::{Endpoint, LichessClient};
use crate::lichess::supervisor::Supervisor;
use engine::UciEngine;
use openings::Opening;
use opponent::EngineFault;
use report::{GameRecord, Summary};

/// The bot's account on the local server.
const BOT_NAME: &str = "AtomicBot";
/// How long the bot has to connect, and then to accept each challenge.
const SETUP_WAIT: Duration = Duration::from_secs(20);

/// `atomic-bot arena`.
#[derive(Clone, Debug, clap::Args)]
pub struct ArenaArgs {
    /// The opponent's command line, e.g. `"fairy-stockfish"` or `"target/release/atomic-bot
    /// uci"` (split into words, quotes group; no shell).
    #[arg(long)]
    pub engine: String,
    /// A UCI option for the engine, `Name=value` (repeatable), e.g. `--option Threads=1
    /// --option Hash=64`. `UCI_Variant` is always `atomic`.
    #[arg(long = "option", value_name = "NAME=VALUE", value_parser = parse_option)]
    pub options: Vec<(String, String)>,
    /// Games to play (colours alternate: each opening is played once with each colour).
    #[arg(long, default_value_t = 10)]
    pub games: u32,
    /// The clock as lichess writes it: minutes + increment seconds (`1+0`, `3+2`, `0.5+0` or
    /// `½+0`). Bots may not play UltraBullet (under 30 s estimated).
    #[arg(long, default_value = "1+0")]
    pub clock: TimeControl,
    /// Network round trip charged to the bot's clock, in ms (half each way, no compensation,
    /// as lichess charges bots).
    #[arg(long, default_value_t = 50)]
    pub lag_ms: u64,
    /// Write the games here (PGN, lichess-like headers; the file is replaced).
    #[arg(long)]
    pub pgn: Option<PathBuf>,
    /// Openings, one a line: UCI moves from the start position, or a FEN (`#` comments; e.g.
    /// data/balanced-starts.txt). Default: the built-in copy of data/atomic-openings.txt.
    #[arg(long, conflicts_with = "fen")]
    pub openings: Option<PathBuf>,
    /// Start every game from this position instead of the openings (repeatable: the FENs are
    /// played in turn, each once with each colour).
    #[arg(long, value_name = "FEN")]
    pub fen: Vec<String>,
    /// Games at once.
    #[arg(long, default_value_t = 1)]
    pub concurrency: u32,
    /// The bot's configuration, read as `atomic-bot lichess` reads it (default: ./config.toml if
    /// present, else built-in defaults; `ATOMIC_BOT_*` overrides apply). The arena replaces the
    /// server address, the challenge policy (its games are accepted, `max_games` = concurrency),
    /// and turns off matchmaking, the heartbeat, the metrics endpoint and the PGN folder.
    #[arg(long, env = "ATOMIC_BOT_CONFIG")]
    pub config: Option<PathBuf>,
    /// Shuffle the openings' order with this seed (default: the file's order).
    #[arg(long)]
    pub seed: Option<u64>,
}

/// A validated arena run.
#[derive(Clone, Debug)]
pub struct ArenaPlan {
    /// Engine command.
    pub engine: String,
    /// Engine options.
    pub options: Vec<(String, String)>,
    /// Games.
    pub games: u32,
    /// The clock.
    pub clock: TimeControl,
    /// Round trip charged to the bot.
    pub lag: Duration,
    /// PGN output.
    pub pgn: Option<PathBuf>,
    /// Openings in play order.
    pub openings: Vec<Opening>,
    /// Games at once.
    pub concurrency: usize,
    /// The bot's configuration (before the arena's overrides).
    pub settings: Settings,
}

/// Why the arena could not run (a setup error: the exit status is non-zero).
#[derive(Debug, thiserror::Error)]
pub enum ArenaError {
    /// A bad argument or file.
    #[error("{0}")]
    Usage(String),
    /// The engine cannot play.
    #[error(transparent)]
    Engine(#[from] engine::EngineError),
    /// The bot could not be set up or refused the games.
    #[error("{0}")]
    Bot(String),
}

/// Splits `Name=value` (the name may contain spaces: `Move Overhead=100`).
fn parse_option(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((n, v)) if !n.trim().is_empty() => Ok((n.trim().to_owned(), v.trim().to_owned())),
        _ => Err(format!("expected Name=value (like Threads=1), not {s:?}")),
    }
}

impl ArenaPlan {
    /// Checks the arguments and reads the files they name.
    pub fn from_args(args: &ArenaArgs) -> Result<ArenaPlan, ArenaError> {
        let usage = ArenaError::Usage;
        if args.games == 0 {
            return Err(usage("--games must be at least 1".into()));
        }
        if args.concurrency == 0 {
            return Err(usage("--concurrency must be at least 1".into()));
        }
        let all = if args.fen.is_empty() {
            Self::read_openings(args)?
        } else {
            args.fen
                .iter()
                .map(|f| Opening::from_fen(f).map_err(|e| usage(format!("--fen: {e}"))))
                .collect::<Result<Vec<_>, _>>()?
        };
        let order = openings::order(all.len(), args.seed);
        let openings = order.into_iter().map(|i| all[i].clone()).collect();
        let settings = Settings::load(&ConfigSource::from_cli(args.config.clone()))
            .map_err(|e| usage(e.to_string()))?;
        Ok(ArenaPlan {
            engine: args.engine.clone(),
            options: args.options.clone(),
            games: args.games,
            clock: args.clock,
            lag: Duration::from_millis(args.lag_ms),
            pgn: args.pgn.clone(),
            openings,
            concurrency: args.concurrency as usize,
            settings,
        })
    }

    /// The openings file of `--openings`, or the built-in set.
    fn read_openings(args: &ArenaArgs) -> Result<Vec<Opening>, ArenaError> {
        let usage = ArenaError::Usage;
        let text = match &args.openings {
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| usage(format!("cannot read the openings {}: {e}", path.display())))?,
            None => openings::DEFAULT_OPENINGS.to_owned(),
        };
        openings::parse(&text).map_err(|e| {
            let file = args
                .openings
                .as_ref()
                .map_or("the built-in openings".to_owned(), |p| {
                    p.display().to_string()
                });
            usage(format!("{file}: {e}"))
        })
    }

    /// Game `i`: its opening and whether the bot has White (each opening twice, colours
    /// swapped).
    fn schedule(&self, i: usize) -> (&Opening, bool) {
        (
            &self.openings[(i / 2) % self.openings.len()],
            i.is_multiple_of(2),
        )
    }

    /// The bot's configuration for the arena: the owner's, with the local server, a challenge
    /// policy that takes the arena's games, and nothing that reaches beyond the run.
    fn bot_settings(&self, url: String) -> Settings {
        let mut s = self.settings.clone();
        s.lichess.url = url;
        s.heartbeat.enabled = false;
        s.metrics.enabled = false;
        s.matchmaking.enabled = false;
        s.game.pgn_dir = None;
        let c = &mut s.challenge;
        c.variants = vec!["atomic".into()];
        c.modes = vec!["casual".into(), "rated".into()];
        c.min_initial_s = 0;
        c.max_initial_s = c.max_initial_s.max(self.clock.limit_s);
        c.min_increment_s = 0;
        c.max_increment_s = c.max_increment_s.max(self.clock.increment_s);
        c.accept_bots = true;
        c.only_bots = false;
        c.allow_list.clear();
        c.block_list.clear();
        c.max_games = self.concurrency as u32;
        c.queue_size = c.queue_size.max(self.concurrency as u32);
        s
    }
}

/// A lichess user name for the engine (letters, digits, `-` and `_`, at most 20), never the
/// bot's.
fn account_name(engine: &str) -> String {
    let mut name: String = engine
        .chars()
        .map(|c| if c == ' ' { '-' } else { c })
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(20)
        .collect();
    name = name.trim_matches('-').to_owned();
    if name.is_empty() || name.eq_ignore_ascii_case(BOT_NAME) {
        name = format!("Engine-{name}");
    }
    name
}

/// What the slots share.
struct Shared {
    plan: ArenaPlan,
    fake: FakeLichess,
    engine_user: String,
    next: AtomicUsize,
    records: Mutex<Vec<GameRecord>>,
    pgn: Mutex<Option<std::fs::File>>,
    problems: Mutex<Vec<String>>,
    stop: CancellationToken,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Runs the arena in the current runtime. `progress` gets one line per finished game.
pub async fn run_arena(
    plan: ArenaPlan,
    shutdown: CancellationToken,
    progress: impl Fn(&str) + Send + Sync + 'static,
) -> Result<Summary, ArenaError> {
    // The engine first: a bad command is the most likely setup error, and its name names the
    // opponent's account.
    let first = UciEngine::start(&plan.engine, &plan.options).await?;
    let engine_name = first.name.clone();
    let pgn = match &plan.pgn {
        Some(path) => Some(std::fs::File::create(path).map_err(|e| {
            ArenaError::Usage(format!("cannot write the PGN {}: {e}", path.display()))
        })?),
        None => None,
    };
    let bot_token = format!("lip_arena_bot{}", std::process::id());
    let engine_token = format!("lip_arena_engine{}", std::process::id());
    let engine_account = account_name(&engine_name);
    let fake = FakeLichess::start(FakeConfig {
        accounts: vec![
            FakeAccount::new(BOT_NAME, &bot_token, true),
            FakeAccount::new(&engine_account, &engine_token, true),
        ],
        ..FakeConfig::default()
    })
    .await
    .map_err(|e| ArenaError::Bot(format!("cannot start the local server: {e}")))?;
    fake.set_lag(&bot_token, plan.lag);

    let settings = Arc::new(plan.bot_settings(fake.url()));
    let client = LichessClient::new(&settings.lichess, SecretString::from(bot_token.clone()))
        .map_err(|e| ArenaError::Bot(e.to_string()))?;
    // Reports are not needed (the server is the referee), but a game task expects the channel
    // to stay open.
    let (reports_tx, mut reports_rx) = mpsc::unbounded_channel();
    tokio::spawn(async move { while reports_rx.recv().await.is_some() {} });
    let bot_pickers = pickers(&settings.search).map_err(|e| ArenaError::Bot(e.to_string()))?;
    let bot = Supervisor::new(settings.clone(), client, bot_pickers).with_reports(reports_tx);
    let turn_metrics = bot.metrics();
    let bot_stop = CancellationToken::new();
    let bot_task = tokio::spawn(bot.run(bot_stop.clone()));
    let bot_id = BOT_NAME.to_lowercase();
    if !fake
        .wait_until(SETUP_WAIT, |f| f.event_stream_connections(&bot_id) > 0)
        .await
    {
        bot_stop.cancel();
        let why = match tokio::time::timeout(Duration::from_secs(1), bot_task).await {
            Ok(Ok(Err(e))) => e.to_string(),
            _ => "it did not open its event stream".into(),
        };
        return Err(ArenaError::Bot(format!("the bot did not connect: {why}")));
    }

    let shared = Arc::new(Shared {
        engine_user: engine_account.to_lowercase(),
        plan,
        fake,
        next: AtomicUsize::new(0),
        records: Mutex::new(Vec::new()),
        pgn: Mutex::new(pgn),
        problems: Mutex::new(Vec::new()),
        stop: shutdown.child_token(),
    });
    let progress = Arc::new(progress);
    let mut slots = Vec::new();
    let mut first = Some(first);
    for slot in 0..shared.plan.concurrency {
        let shared = shared.clone();
        let engine = first.take();
        let progress = progress.clone();
        slots.push(tokio::spawn(async move {
            run_slot(slot, &shared, engine, &*progress).await
        }));
    }
    let mut fatal = None;
    for s in slots {
        match s.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                shared.stop.cancel();
                fatal.get_or_insert(e);
            }
            Err(e) => lock(&shared.problems).push(format!("a game slot panicked: {e}")),
        }
    }
    bot_stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(5), bot_task).await;
    if let Some(e) = fatal {
        return Err(e);
    }
    let bot_rejected_moves = shared
        .fake
        .requests()
        .iter()
        .filter(|r| {
            r.endpoint == Some(Endpoint::Move)
                && r.user.as_deref() == Some(&bot_id)
                && r.status != 200
        })
        .count();
    let summary = Summary {
        engine: engine_name,
        clock: shared.plan.clock.to_string(),
        lag: shared.plan.lag,
        games_requested: shared.plan.games,
        games: lock(&shared.records).clone(),
        bot_rejected_moves,
        responses: shared.fake.response_times(&bot_token),
        overheads: turn_metrics.samples(),
        peak_rss_kb: report::peak_rss_kb(),
        problems: lock(&shared.problems).clone(),
    };
    shared.fake.stop();
    Ok(summary)
}

/// One slot: plays games one after another with its own engine until none are left.
/// An error is a setup error (the bot refused the arena's challenge) that ends the run.
async fn run_slot(
    slot: usize,
    shared: &Shared,
    mut engine: Option<UciEngine>,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<(), ArenaError> {
    let plan = &shared.plan;
    loop {
        if shared.stop.is_cancelled() {
            return Ok(());
        }
        let i = shared.next.fetch_add(1, Ordering::SeqCst);
        if i >= plan.games as usize {
            return Ok(());
        }
        let ready = match engine.as_mut() {
            Some(e) => e.new_game().await,
            None => Err(engine::EngineError::Exited {
                command: plan.engine.clone(),
                stderr: String::new(),
            }),
        };
        if ready.is_err() {
            // Crashed or hung in its last game (already counted there), or never started:
            // the old process goes (killed on drop) before a new one starts.
            drop(engine.take());
            match UciEngine::start(&plan.engine, &plan.options).await {
                Ok(e) => engine = Some(e),
                Err(e) => {
                    lock(&shared.problems).push(format!(
                        "slot {slot} stopped: the engine could not be restarted: {e}"
                    ));
                    return Ok(());
                }
            }
        }
        let Some(eng) = engine.as_mut() else {
            return Ok(());
        };
        let (opening, bot_white) = plan.schedule(i);
        let spec = ChallengeSpec {
            rated: false,
            clock: Some((plan.clock.limit_s, plan.clock.increment_s)),
            days: None,
            variant: "atomic".into(),
            color: if bot_white { "black" } else { "white" }.into(),
            fen: Some(opening.fen.clone()),
        };
        let fake = &shared.fake;
        let id = fake
            .challenge(&shared.engine_user, BOT_NAME, &spec)
            .map_err(|e| ArenaError::Bot(format!("cannot create the challenge: {e}")))?;
        let answered = fake
            .wait_until(SETUP_WAIT, |f| {
                f.challenge_status(&id).is_some_and(|(s, _)| s != "created")
            })
            .await;
        match fake.challenge_status(&id) {
            Some((s, _)) if s == "accepted" => {}
            Some((s, reason)) if answered => {
                return Err(ArenaError::Bot(format!(
                    "the bot answered the arena's challenge with `{s}` ({}); check its configuration",
                    reason.unwrap_or_default()
                )));
            }
            _ => {
                let _ = fake.cancel_challenge(&id);
                return Err(ArenaError::Bot(format!(
                    "the bot did not answer the arena's challenge within {SETUP_WAIT:?}"
                )));
            }
        }
        let guard = game_guard(plan.clock);
        let played = tokio::select! {
            p = opponent::play(fake, &id, &shared.engine_user, eng) => p,
            _ = tokio::time::sleep(guard) => Err(format!("game {id} did not end within {guard:?}")),
            _ = shared.stop.cancelled() => Err(format!("game {id} interrupted")),
        };
        let played = match played {
            Ok(p) => p,
            Err(e) => {
                // End it for the bot's sake; the engine is in an unknown state.
                let _ = fake.resign(&id, &shared.engine_user);
                engine = None;
                lock(&shared.problems).push(e);
                lock(&shared.records).push(GameRecord {
                    status: "unfinished".into(),
                    ..GameRecord::default()
                });
                continue;
            }
        };
        if matches!(played.fault, Some(EngineFault::Failed(_))) {
            engine = None;
        }
        let record = record_of(
            &played,
            bot_white,
            fake.game(&id)
                .map(|g| if bot_white { g.wtime } else { g.btime }),
        );
        if let Some(file) = lock(&shared.pgn).as_mut() {
            let text = crate::lichess::pgn::render(&fake.url(), &played.full, &played.last);
            if let Err(e) = file.write_all(text.as_bytes()) {
                lock(&shared.problems).push(format!("cannot write the PGN: {e}"));
            }
        }
        progress(&format!(
            "game {:>3}/{} {} {} as {}: {} {} ({} plies)",
            i + 1,
            plan.games,
            id,
            opening.label(),
            if bot_white { "White" } else { "Black" },
            crate::lichess::pgn::result_token(&played.last),
            played.last.status,
            played.last.move_list().len()
        ));
        lock(&shared.records).push(record);
    }
}

/// The longest a game may take: both clocks, 300 increments each and a margin (the server
/// flags and the first-move deadline end every game long before).
fn game_guard(clock: TimeControl) -> Duration {
    Duration::from_secs(2 * u64::from(clock.limit_s) + 600 * u64::from(clock.increment_s) + 120)
}

/// The report's view of a finished game.
fn record_of(played: &Played, bot_white: bool, bot_clock_ms: Option<i64>) -> GameRecord {
    let last = &played.last;
    let bot = if bot_white { "white" } else { "black" };
    let bot_points = match (last.status.as_str(), last.winner.as_deref()) {
        ("aborted" | "started" | "created" | "noStart" | "unknownFinish", _) => None,
        (_, Some(w)) if w == bot => Some(1.0),
        (_, Some(_)) => Some(0.0),
        (_, None) => Some(0.5),
    };
    let flagged = last.status == "outoftime";
    GameRecord {
        bot_points,
        status: last.status.clone(),
        bot_flagged: flagged && bot_points == Some(0.0),
        engine_flagged: flagged && bot_points == Some(1.0),
        engine_illegal: matches!(played.fault, Some(EngineFault::Illegal(_))),
        engine_failed: matches!(played.fault, Some(EngineFault::Failed(_))),
        bot_clock_left_ms: played.full.clock.and(bot_clock_ms),
    }
}

use opponent::Played;

/// `atomic-bot arena`: exit 0 when the games were played (whatever the results), 2 for bad
/// arguments, 1 when the engine or the bot could not be set up.
pub fn arena(args: ArenaArgs) -> ExitCode {
    let plan = match ArenaPlan::from_args(&args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("atomic-bot: {e}");
            return ExitCode::from(2);
        }
    };
    init_logging(plan.settings.log.format, "warn");
    run_until_signal(|shutdown| async move {
        let progress = |line: &str| {
            println!("{line}");
            let _ = std::io::stdout().flush();
        };
        match run_arena(plan, shutdown, progress).await {
            Ok(summary) => {
                print!("{}", summary.render());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("atomic-bot: arena: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--clock` reads lichess's notation through the one clock type (`config::TimeControl`).
    #[test]
    fn clocks_in_lichess_notation() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            arena: ArenaArgs,
        }
        let clock = |c: &str| {
            Cli::try_parse_from(["arena", "--engine", "x", "--clock", c])
                .map(|cli| (cli.arena.clock.limit_s, cli.arena.clock.increment_s))
                .map_err(|e| e.to_string())
        };
        assert_eq!(clock("1+0"), Ok((60, 0)));
        assert_eq!(clock("3+2"), Ok((180, 2)));
        assert_eq!(clock("½+0"), Ok((30, 0)));
        assert_eq!(clock("0.5+0"), Ok((30, 0)));
        assert_eq!(clock("0.25+1"), Ok((15, 1)));
        assert!(clock("0.01+0").is_err());
        assert!(clock("1").is_err());
        assert!(clock("a+0").is_err());
        assert!(clock("1+0.5").is_err());
        assert!(clock("0.25+0").unwrap_err().contains("UltraBullet"));
    }

    #[test]
    fn options_split_at_the_first_equals_sign() {
        assert_eq!(
            parse_option("Move Overhead=100"),
            Ok(("Move Overhead".into(), "100".into()))
        );
        assert_eq!(parse_option("A=b=c"), Ok(("A".into(), "b=c".into())));
        assert!(parse_option("=3").is_err());
        assert!(parse_option("Hash").is_err());
    }

    #[test]
    fn engine_account_names_are_lichess_names_and_not_the_bots() {
        assert_eq!(
            account_name("Fairy-Stockfish 14.0.1 LB"),
            "Fairy-Stockfish-1401"
        );
        assert_eq!(account_name("AtomicBot"), "Engine-AtomicBot");
        assert_eq!(account_name("..."), "Engine-");
    }

    #[test]
    fn colours_alternate_over_the_openings() {
        let args = ArenaArgs {
            engine: "x".into(),
            options: vec![],
            games: 4,
            clock: "1+0".parse().unwrap(),
            lag_ms: 0,
            pgn: None,
            openings: None,
            fen: vec![],
            concurrency: 1,
            config: None,
            seed: None,
        };
        let mut plan = ArenaPlan::from_args(&args).unwrap();
        plan.settings = Settings::default();
        let (o0, w0) = plan.schedule(0);
        let (o1, w1) = plan.schedule(1);
        let (o2, w2) = plan.schedule(2);
        assert_eq!(o0, o1);
        assert_ne!(o1, o2);
        assert!(w0 && !w1 && w2);
    }

    /// `--fen` replaces the openings (each FEN with both colours) and a bad one is named;
    /// `--openings` takes a file of FENs (the Balanced starts).
    #[test]
    fn fens_from_the_command_line_or_a_file() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            arena: ArenaArgs,
        }
        let plan = |argv: &[&str]| {
            let mut all = vec!["arena", "--engine", "x"];
            all.extend_from_slice(argv);
            let cli = Cli::try_parse_from(all).map_err(|e| e.to_string())?;
            ArenaPlan::from_args(&cli.arena).map_err(|e| e.to_string())
        };
        let f7 = "rnbqkbnr/ppppp1pp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1";
        let d2 = "rnbqkbnr/pppppppp/8/8/8/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1";
        let p = plan(&["--fen", f7, "--fen", d2]).unwrap();
        assert_eq!(p.openings.len(), 2);
        let (o0, w0) = p.schedule(0);
        let (o1, w1) = p.schedule(1);
        let (o2, _) = p.schedule(2);
        assert_eq!((o0.fen.as_str(), w0), (f7, true));
        assert_eq!((o1.fen.as_str(), w1), (f7, false));
        assert_eq!(o2.fen, d2);

        let bad = "rnbqkbnr/ppppp1pp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - zero 1";
        let err = plan(&["--fen", f7, "--fen", bad]).unwrap_err();
        assert!(
            err.starts_with("--fen: bad FEN") && err.contains(bad),
            "{err}"
        );
        assert!(plan(&["--fen", f7, "--openings", "x.txt"]).is_err());

        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/data/balanced-starts.txt");
        let p = plan(&["--openings", file]).unwrap();
        assert_eq!(p.openings.len(), 16);
        assert!(p.openings.iter().all(|o| o.moves.is_empty()));
    }

    #[test]
    fn the_bot_settings_take_the_arenas_games() {
        let args = ArenaArgs {
            engine: "x".into(),
            options: vec![],
            games: 4,
            clock: "0.5+0".parse().unwrap(),
            lag_ms: 0,
            pgn: None,
            openings: None,
            fen: vec![],
            concurrency: 8,
            config: None,
            seed: None,
        };
        let mut plan = ArenaPlan::from_args(&args).unwrap();
        plan.settings.challenge.min_initial_s = 60;
        plan.settings.challenge.accept_bots = false;
        plan.settings.matchmaking.enabled = true;
        let s = plan.bot_settings("http://127.0.0.1:1".into());
        assert_eq!(s.challenge.max_games, 8);
        assert_eq!(s.challenge.min_initial_s, 0);
        assert!(s.challenge.accept_bots);
        assert!(!s.matchmaking.enabled && !s.heartbeat.enabled);
        assert_eq!(s.lichess.url, "http://127.0.0.1:1");
    }
}
