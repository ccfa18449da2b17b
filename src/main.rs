//! The `atomic-bot` binary: a thin clap front over the library.
//!
//! With no arguments it speaks UCI at once, as engines usually do (GUIs and lichess-bot start
//! engines without arguments).

use std::io::BufReader;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use atomic_bot::arena;
use atomic_bot::balanced;
use atomic_bot::datagen;
use atomic_bot::fakelichess::cli::{self as fake_lichess, FakeLichessArgs};
use atomic_bot::hosting;
use atomic_bot::lichess::app;
use atomic_bot::search::SearchConfig;
use atomic_bot::search::nnue::{Kernel, Network, embedded};
use atomic_bot::train;
use atomic_bot::uci::{self, Output};

#[derive(Parser)]
#[command(
    name = "atomic-bot",
    version,
    about = "An Atomic chess engine (MCTS) and lichess bot"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Mode>,
}

#[derive(Subcommand)]
enum Mode {
    /// Speak UCI on standard input and output (the default).
    Uci,
    /// Search fixed positions with a fixed budget; prints the node count and speed.
    Bench {
        /// Playouts per position.
        #[arg(long, default_value_t = uci::bench::DEFAULT_PLAYOUTS)]
        playouts: u64,
        /// Search threads (1 gives the signature; more measure the speed of batched search and,
        /// for alpha-beta, the time to depth with helper threads).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// The evaluation: `<embedded>` (the default), `<linear>` (whose signatures were those
        /// of every version before the network) or a network file; prints which SIMD kernels ran.
        #[arg(long, env = "ATOMIC_BOT_EVAL_FILE")]
        eval_file: Option<PathBuf>,
        /// Run the network on the portable scalar kernels, not the SIMD ones this machine has
        /// (to measure what SIMD gains; both compute the same integers).
        #[arg(long)]
        scalar: bool,
    },
    /// Play on lichess as a bot (token from LICHESS_BOT_TOKEN or lichess.token_file).
    Lichess(app::LichessArgs),
    /// Play one game offline against a built-in opponent on a local lichess-compatible server.
    Demo(app::DemoArgs),
    /// Play the bot, exactly as on lichess, against any UCI engine on a local server; prints
    /// W/D/L, Elo, time forfeits, response times and clock left, and writes the PGN.
    Arena(arena::ArenaArgs),
    /// Write training positions for the evaluation network from self-play at a fixed node budget.
    Datagen(datagen::DatagenArgs),
    /// Search the 16 vchess Balanced starts (one pawn removed, Black moves first) and print them
    /// ranked for White, who chooses the removal.
    Balanced(balanced::cli::BalancedArgs),
    /// Train the evaluation network on datagen's positions and write the quantised file.
    Train(train::TrainArgs),
    /// Upgrade the lichess account to a BOT account (irreversible; needs --confirm).
    Upgrade(app::UpgradeArgs),
    /// Validate a configuration file and print the effective configuration (token redacted).
    CheckConfig {
        /// The TOML file (ATOMIC_BOT_* environment overrides are applied on top).
        file: PathBuf,
    },
    /// Serve the local lichess-compatible server with one bot account until SIGTERM (for scripts
    /// that test the binary against it, such as the container smoke test).
    #[command(hide = true)]
    FakeLichess(FakeLichessArgs),
    /// Exit 0 if the event-stream heartbeat is fresh, 1 if stale or missing (Docker HEALTHCHECK).
    Healthcheck {
        /// Configuration file (for `heartbeat.path` and `heartbeat.max_age_s`).
        #[arg(long, env = "ATOMIC_BOT_CONFIG")]
        config: Option<PathBuf>,
        /// Check this heartbeat file instead of `heartbeat.path`.
        #[arg(long)]
        file: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = || Output::new(Box::new(std::io::stdout()));
    match cli.command.unwrap_or(Mode::Uci) {
        Mode::Uci => uci::run(BufReader::new(std::io::stdin()), stdout()),
        Mode::Bench {
            playouts,
            threads,
            eval_file,
            scalar,
        } => {
            let mut config = SearchConfig::default();
            let network = match eval_file {
                None => Ok(config.network.take()),
                Some(p) if p.as_os_str() == embedded::NAME => Ok(Some(embedded::network())),
                Some(p) if p.as_os_str() == embedded::LINEAR => Ok(None),
                Some(p) => Network::load(&p).map(|n| Some(Arc::new(n))),
            };
            // The scalar kernels need a copy of the weights set up for them.
            let network = network.and_then(|n| match n {
                Some(n) if scalar => Network::from_bytes(&n.to_bytes(), "the network")
                    .map(|copy| Some(Arc::new(copy.with_kernel(Kernel::Scalar)))),
                other => Ok(other),
            });
            match network {
                Ok(network) => config.network = network,
                Err(e) => {
                    eprintln!("atomic-bot: --eval-file: {e}");
                    return ExitCode::from(2);
                }
            }
            uci::bench::run(&stdout(), &config, playouts, threads);
        }
        Mode::Lichess(args) => return app::lichess(args),
        Mode::Demo(args) if args.balanced.is_some() => return balanced::cli::demo(args),
        Mode::Demo(args) => return app::demo(args, None),
        Mode::Arena(args) => return arena::arena(args),
        Mode::Datagen(args) => {
            return match datagen::run(&args, Some(std::time::Duration::from_secs(60))) {
                Ok(summary) => {
                    println!("datagen: {summary}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            };
        }
        Mode::Balanced(args) => return balanced::cli::run(&args),
        Mode::Train(args) => {
            return match train::run(&args) {
                Ok(summary) => {
                    println!("train: {summary}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            };
        }
        Mode::Upgrade(args) => return app::upgrade(args),
        Mode::FakeLichess(args) => {
            fake_lichess::log_requests();
            return app::run_until_signal(|stop| fake_lichess::serve(args, stop));
        }
        Mode::CheckConfig { file } => {
            let env = std::env::vars().collect();
            return report(hosting::check_config(&file, &env));
        }
        Mode::Healthcheck { config, file } => {
            let source = atomic_bot::config::ConfigSource::from_cli(config);
            let now = std::time::SystemTime::now();
            return report(hosting::healthcheck(&source, file, now));
        }
    }
    ExitCode::SUCCESS
}

/// Prints a command's text (stdout on success, stderr on failure) and turns its code into the
/// exit status.
fn report(out: hosting::Outcome) -> ExitCode {
    if out.code == 0 {
        print!("{}", out.text);
    } else {
        eprint!("{}", out.text);
    }
    ExitCode::from(u8::try_from(out.code).unwrap_or(1))
}
