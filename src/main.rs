//! The `atomic-bot` binary: a thin clap front over the library.
//!
//! With no arguments it speaks UCI at once, as engines usually do (GUIs and lichess-bot start
//! engines without arguments).

use std::io::BufReader;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use atomic_bot::lichess::app;
use atomic_bot::search::SearchConfig;
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
    },
    /// Play on lichess as a bot (token from LICHESS_BOT_TOKEN or lichess.token_file).
    Lichess(app::LichessArgs),
    /// Play one game offline against a built-in opponent on a local lichess-compatible server.
    Demo(app::DemoArgs),
    /// Upgrade the lichess account to a BOT account (irreversible; needs --confirm).
    Upgrade(app::UpgradeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = || Output::new(Box::new(std::io::stdout()));
    match cli.command.unwrap_or(Mode::Uci) {
        Mode::Uci => uci::run(BufReader::new(std::io::stdin()), stdout()),
        Mode::Bench { playouts } => uci::bench::run(&stdout(), &SearchConfig::default(), playouts),
        Mode::Lichess(args) => return app::lichess(args),
        Mode::Demo(args) => return app::demo(args),
        Mode::Upgrade(args) => return app::upgrade(args),
    }
    ExitCode::SUCCESS
}
