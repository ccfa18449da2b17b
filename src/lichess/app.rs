//! The `lichess`, `upgrade` and `demo` subcommands: argument types for the clap CLI in
//! `main.rs` and the functions it calls. They build the tokio runtime, logging and the
//! supervisor; everything else lives in the library modules so tests drive the same code.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use secrecy::SecretString;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::{ConfigSource, Engine, LogFormat, SearchSettings, Settings, TimeControl};
use crate::fakelichess::{FakeAccount, FakeConfig, FakeLichess};
use crate::lichess::client::LichessClient;
use crate::lichess::game::{GameContext, GameReport, Metrics, play_game};
use crate::lichess::picker::{PickerFactory, SearcherFactory, SimplePickerFactory};
use crate::lichess::supervisor::{BotError, Supervisor, shutdown_signal};
use crate::search::Algorithm;
use crate::search::nnue::{Network, NetworkError, embedded};

/// `atomic-bot lichess`.
#[derive(Clone, Debug, clap::Args)]
pub struct LichessArgs {
    /// Configuration file (default: ./config.toml if present, else built-in defaults).
    #[arg(long, env = "ATOMIC_BOT_CONFIG")]
    pub config: Option<PathBuf>,
}

/// `atomic-bot upgrade`.
#[derive(Clone, Debug, clap::Args)]
pub struct UpgradeArgs {
    /// Configuration file (for `lichess.url` and `lichess.token_file`).
    #[arg(long, env = "ATOMIC_BOT_CONFIG")]
    pub config: Option<PathBuf>,
    /// Really upgrade: irreversible, and only for an account that never played a game.
    #[arg(long)]
    pub confirm: bool,
}

/// `atomic-bot demo`.
#[derive(Clone, Debug, clap::Args)]
pub struct DemoArgs {
    /// The clock as lichess writes it: minutes + increment seconds (`1+1`, `3+2`, `0.5+0`).
    /// Bots may not play UltraBullet (under 30 s estimated).
    #[arg(long, default_value = "1+1")]
    pub clock: TimeControl,
    /// The bot's colour.
    #[arg(long, value_enum, default_value_t = DemoColor::Random)]
    pub color: DemoColor,
    /// Also append the PGN to this folder.
    #[arg(long)]
    pub pgn_dir: Option<PathBuf>,
    /// The engine of both players (the opponent declares a move overhead that leaves it about a
    /// quarter of the bot's think time).
    #[arg(long, value_enum, default_value_t = Engine::Alphabeta)]
    pub engine: Engine,
    /// Play from a vchess Balanced start (one pawn removed, Black moves first): the pawn's
    /// square (`e7`, `d2`), or nothing for White's best removal by a short ranking.
    #[arg(long, value_name = "PAWN", num_args = 0..=1, default_missing_value = "")]
    pub balanced: Option<String>,
}

/// The bot's colour in `atomic-bot demo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DemoColor {
    /// The bot plays White.
    White,
    /// The bot plays Black.
    Black,
    /// lichess draws the colours.
    Random,
}

impl DemoColor {
    /// The `color` the opponent's challenge asks for (the challenger's colour).
    fn challenger_color(self) -> &'static str {
        match self {
            DemoColor::White => "black",
            DemoColor::Black => "white",
            DemoColor::Random => "random",
        }
    }
}

/// Installs the tracing subscriber (see `telemetry`): stderr, `LOG_FORMAT` overrides the
/// configured format and `RUST_LOG` the configured level.
pub fn init_logging(format: LogFormat, level: &str) {
    crate::telemetry::init(crate::telemetry::format_from_env_or(format), level);
}

/// Keeps the memory of finished searches returned to the system.
///
/// glibc raises its mmap threshold each time a large block is freed, after which search trees
/// (megabytes each, reallocated between moves in every game) come from the heaps of the
/// allocating threads and are not given back: with 8 concurrent games the RSS grew to ~200 MB
/// for ~64 MB of trees. A fixed threshold (which disables that adjustment) keeps it at ~64 MB
/// (measured with `cargo bench --bench lichess_bot`, see docs/BOT.md).
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt takes two integers and only changes allocator tuning; it is called before
    // any other thread of ours exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Runs `job` on the bot's runtime with a shutdown token that the first SIGTERM/SIGINT
/// cancels (a second one exits at once): the offline commands (`demo`, `arena`) share it.
pub fn run_until_signal<F>(job: impl FnOnce(CancellationToken) -> F) -> ExitCode
where
    F: Future<Output = ExitCode>,
{
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("atomic-bot: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    rt.block_on(async move {
        let shutdown = CancellationToken::new();
        tokio::spawn(shutdown_signal(shutdown.clone()));
        job(shutdown).await
    })
}

/// The multi-threaded async runtime of the bot's commands (with the allocator tuned first).
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tune_allocator();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}

fn load(config: Option<PathBuf>) -> Result<(Settings, ConfigSource), ExitCode> {
    let source = ConfigSource::from_cli(config);
    match Settings::load(&source) {
        Ok(s) => Ok((s, source)),
        Err(e) => {
            eprintln!("atomic-bot: {e}");
            Err(ExitCode::from(2))
        }
    }
}

fn token(settings: &Settings, source: &ConfigSource) -> Result<SecretString, ExitCode> {
    settings.token(&source.env).map_err(|e| {
        eprintln!("atomic-bot: {e}");
        ExitCode::from(2)
    })
}

/// What `lichess` and `upgrade` both start with: the settings, logging, the token, a runtime and
/// a client. Errors are printed here; the caller exits with the returned code (2 for a bad
/// configuration or token, 1 otherwise).
fn connect(
    config: Option<PathBuf>,
) -> Result<(Settings, tokio::runtime::Runtime, LichessClient), ExitCode> {
    let (settings, source) = load(config)?;
    init_logging(settings.log.format, &settings.log.level);
    let token = token(&settings, &source)?;
    let rt = runtime().map_err(|e| {
        eprintln!("atomic-bot: cannot start the async runtime: {e}");
        ExitCode::FAILURE
    })?;
    // Built inside the runtime, as before: the HTTP client may spawn onto it.
    let client = rt
        .block_on(async { LichessClient::new(&settings.lichess, token) })
        .map_err(|e| {
            eprintln!("atomic-bot: {e}");
            ExitCode::FAILURE
        })?;
    Ok((settings, rt, client))
}

/// Runs the bot until SIGTERM/SIGINT (exit 0) or a fatal error (exit 1).
pub fn lichess(args: LichessArgs) -> ExitCode {
    let (settings, rt, client) = match connect(args.config) {
        Ok(ready) => ready,
        Err(c) => return c,
    };
    let pickers = match pickers(&settings.search) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("atomic-bot: configuration error: `search.eval_file`: {e}");
            return ExitCode::from(2);
        }
    };
    rt.block_on(async move {
        let shutdown = CancellationToken::new();
        if settings.metrics.enabled {
            // Validated with the configuration; served until the bot stops.
            let addr = match settings.metrics.listen_addr() {
                Ok(a) => a,
                Err((key, reason)) => {
                    eprintln!("atomic-bot: configuration error: `{key}`: {reason}");
                    return ExitCode::from(2);
                }
            };
            match crate::metrics::bind(addr).await {
                Ok(listener) => {
                    let metrics = client.metrics().clone();
                    tokio::spawn(crate::metrics::serve(
                        listener,
                        metrics,
                        shutdown.clone().cancelled_owned(),
                    ));
                }
                Err(e) => {
                    eprintln!("atomic-bot: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        tokio::spawn(shutdown_signal(shutdown.clone()));
        let bot = Supervisor::new(Arc::new(settings), client, pickers);
        match bot.run(shutdown).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                tracing::error!(error = %e, "stopping");
                eprintln!("atomic-bot: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// The move pickers the bot plays with (`search.engine`), evaluating with the network of
/// `search.eval_file`: absent or `<embedded>` the built-in network, `<linear>` the linear
/// evaluation, else a file loaded here, once, and shared by every game.
pub fn pickers(search: &SearchSettings) -> Result<Arc<dyn PickerFactory>, NetworkError> {
    let network = match &search.eval_file {
        None => Some(embedded::network()),
        Some(path) if path.as_os_str() == embedded::NAME => Some(embedded::network()),
        Some(path) if path.as_os_str() == embedded::LINEAR => None,
        Some(path) => Some(Arc::new(Network::load(path)?)),
    };
    Ok(match search.engine {
        Engine::Alphabeta => Arc::new(SearcherFactory::new(Algorithm::AlphaBeta, network)),
        Engine::Mcts => Arc::new(SearcherFactory::new(Algorithm::Mcts, network)),
        Engine::Simple => Arc::new(SimplePickerFactory::default()),
    })
}

/// Upgrades the account to a bot account (only with `--confirm`).
pub fn upgrade(args: UpgradeArgs) -> ExitCode {
    let (_settings, rt, client) = match connect(args.config) {
        Ok(ready) => ready,
        Err(c) => return c,
    };
    rt.block_on(async move {
        let account = match client.account().await {
            Ok(a) => a,
            Err(e) => {
                eprintln!("atomic-bot: {e}");
                return ExitCode::FAILURE;
            }
        };
        if account.is_bot() {
            println!("{} is already a BOT account.", account.username);
            return ExitCode::SUCCESS;
        }
        if !args.confirm {
            eprintln!(
                "This upgrades the lichess account `{}` to a BOT account. It is irreversible, \
                 the account must never have played a game, and it leaves arenas and swiss \
                 events. Run again with --confirm to do it.",
                account.username
            );
            return ExitCode::from(2);
        }
        match client.upgrade().await {
            Ok(()) => {
                println!("{} is now a BOT account.", account.username);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("atomic-bot: upgrade failed: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// What a demo produced.
#[derive(Debug)]
pub struct DemoOutcome {
    /// The bot's view of the game.
    pub report: GameReport,
}

/// Runs the offline demo inside an existing runtime: a local fake lichess on 127.0.0.1, the bot
/// connected to it exactly as to lichess, a built-in opponent challenging it.
pub async fn run_demo(
    clock: TimeControl,
    color: DemoColor,
    engine: Engine,
    pgn_dir: Option<PathBuf>,
    start_fen: Option<String>,
    shutdown: CancellationToken,
) -> Result<DemoOutcome, String> {
    let bot_token = format!("lip_demo{}", std::process::id());
    let opp_token = format!("lip_opp{}", std::process::id());
    let fake = FakeLichess::start(FakeConfig {
        accounts: vec![
            FakeAccount::new("AtomicBot", &bot_token, true),
            FakeAccount::new("DemoOpponent", &opp_token, true),
        ],
        ..FakeConfig::default()
    })
    .await
    .map_err(|e| format!("cannot start the local server: {e}"))?;
    tracing::info!(url = %fake.url(), "local lichess-compatible server started");

    let mut settings = Settings::default();
    settings.lichess.url = fake.url();
    // An offline demo must not refresh the heartbeat of a real bot on the same host.
    settings.heartbeat.enabled = false;
    settings.game.pgn_dir = pgn_dir;
    settings.search.engine = engine;
    let settings = Arc::new(settings);
    let client = LichessClient::new(&settings.lichess, SecretString::from(bot_token))
        .map_err(|e| e.to_string())?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let bot_pickers = pickers(&settings.search).map_err(|e| e.to_string())?;
    let bot = Supervisor::new(settings.clone(), client, bot_pickers).with_reports(tx);
    let bot_stop = CancellationToken::new();
    let bot_task = tokio::spawn(bot.run(bot_stop.clone()));

    // The opponent: its own client and account on the same server.
    let mut opp_settings = Settings::default();
    opp_settings.lichess.url = fake.url();
    opp_settings.game.greeting = "Hello! Let's blow things up.".into();
    opp_settings.game.goodbye = String::new();
    opp_settings.game.ponder = false;
    // The opponent plays with the same engine but declares a move overhead that keeps three
    // quarters of its clock out of the plan (the time manager reserves 30 overheads), so it
    // thinks about a quarter as long as the bot.
    opp_settings.game.move_overhead_ms = u64::from(clock.limit_s) * 25;
    opp_settings.search.hash_mb = 32;
    // One thread, as before `search.threads` meant every core: the opponent need not be strong,
    // and two searches on every core would fight over them.
    opp_settings.search.threads = crate::config::Threads::Count(1);
    let opp_search = SearchSettings {
        engine,
        ..opp_settings.search.clone()
    };
    let opp_pickers = pickers(&opp_search).map_err(|e| e.to_string())?;
    let opp_client = LichessClient::new(&opp_settings.lichess, SecretString::from(opp_token))
        .map_err(|e| e.to_string())?;
    let opp_account = opp_client.account().await.map_err(|e| e.to_string())?;
    opp_client.set_user(&opp_account.username);
    if !fake
        .wait_until(Duration::from_secs(10), |f| {
            f.event_stream_connections("atomicbot") > 0
        })
        .await
    {
        return Err("the bot did not connect".into());
    }
    let opp_color = color.challenger_color();
    let limit = clock.limit_s.to_string();
    let inc = clock.increment_s.to_string();
    let mut form = vec![
        ("variant", "atomic"),
        ("rated", "false"),
        ("clock.limit", limit.as_str()),
        ("clock.increment", inc.as_str()),
        ("color", opp_color),
    ];
    // A game from a position: the challenge's `fen`, which the server reports back as
    // `gameFull.initialFen` (the local server takes it in atomic; lichess only in standard).
    if let Some(fen) = start_fen.as_deref() {
        form.push(("fen", fen));
    }
    let challenge = opp_client
        .create_challenge("AtomicBot", &form)
        .await
        .map_err(|e| e.to_string())?;
    tracing::info!(challenge = %challenge.id, "the demo opponent challenged the bot");
    if !fake
        .wait_until(Duration::from_secs(10), |f| f.game(&challenge.id).is_some())
        .await
    {
        return Err("the bot did not accept the challenge".into());
    }
    let opp_ctx = GameContext {
        client: opp_client,
        settings: Arc::new(opp_settings),
        me: Arc::new(opp_account),
        pickers: opp_pickers,
        running: Arc::new(AtomicUsize::new(1)),
        metrics: Arc::new(Metrics::default()),
    };
    let opp_quit = CancellationToken::new();
    let opp_task = tokio::spawn(play_game(opp_ctx, challenge.id.clone(), opp_quit.clone()));

    let game_time = Duration::from_secs(
        u64::from(clock.limit_s) * 2 + u64::from(clock.increment_s) * 600 + 120,
    );
    let report = tokio::select! {
        r = rx.recv() => r.ok_or_else(|| "the bot stopped before the game ended".to_owned()),
        _ = tokio::time::sleep(game_time) => Err("the game did not end in time".to_owned()),
        _ = shutdown.cancelled() => Err("interrupted".to_owned()),
    };
    opp_quit.cancel();
    bot_stop.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(5), opp_task).await;
    match tokio::time::timeout(Duration::from_secs(5), bot_task).await {
        Ok(Ok(Err(BotError::Unauthorized(e)))) => return Err(e),
        Ok(Ok(Err(e))) => return Err(e.to_string()),
        _ => {}
    }
    fake.stop();
    report.map(|report| DemoOutcome { report })
}

/// `atomic-bot demo`: plays one game offline, from the standard start or from `start_fen`
/// (`--balanced` is resolved above this layer, by `balanced::cli`), and prints the result and
/// the PGN.
pub fn demo(args: DemoArgs, start_fen: Option<String>) -> ExitCode {
    init_logging(LogFormat::Text, "info");
    run_until_signal(|shutdown| async move {
        let played = run_demo(
            args.clock,
            args.color,
            args.engine,
            args.pgn_dir,
            start_fen,
            shutdown,
        );
        match played.await {
            Ok(out) => {
                println!(
                    "Result: {} ({}{})",
                    out.report.result,
                    out.report.status,
                    out.report
                        .winner
                        .as_deref()
                        .map(|w| format!(", {w} wins"))
                        .unwrap_or_default()
                );
                println!();
                print!("{}", out.report.pgn.unwrap_or_default());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("atomic-bot: demo failed: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pickers_load_the_eval_file_once_and_a_bad_one_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let good = dir.path().join("net.nnue");
        std::fs::write(&good, Network::random(16, 1, 1).to_bytes()).expect("written");
        let mut search = SearchSettings {
            eval_file: Some(good),
            ..SearchSettings::default()
        };
        assert!(pickers(&search).is_ok());
        let bad = dir.path().join("truncated.nnue");
        std::fs::write(&bad, &Network::random(16, 1, 1).to_bytes()[..100]).expect("written");
        search.eval_file = Some(bad);
        let e = pickers(&search).err().expect("refused");
        assert_eq!(e.field, "length");
        assert!(e.to_string().contains("truncated.nnue"), "{e}");
    }
}
