//! The `atomic-bot` binary: a thin clap front over the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use atomic_bot::hosting;
use atomic_bot::lichess::app;

#[derive(Parser)]
#[command(
    name = "atomic-bot",
    version,
    about = "An Atomic chess engine and lichess bot"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Play on lichess as a bot (token from LICHESS_BOT_TOKEN or lichess.token_file).
    Lichess(app::LichessArgs),
    /// Play one game offline against a built-in opponent on a local lichess-compatible server.
    Demo(app::DemoArgs),
    /// Upgrade the lichess account to a BOT account (irreversible; needs --confirm).
    Upgrade(app::UpgradeArgs),
    /// Validate a configuration file and print the effective configuration (token redacted).
    CheckConfig {
        /// The TOML file (ATOMIC_BOT_* environment overrides are applied on top).
        file: PathBuf,
    },
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
    match cli.command {
        Some(Command::Lichess(args)) => app::lichess(args),
        Some(Command::Demo(args)) => app::demo(args),
        Some(Command::Upgrade(args)) => app::upgrade(args),
        Some(Command::CheckConfig { file }) => {
            let env = std::env::vars().collect();
            let out = hosting::check_config(&file, &env);
            report(out)
        }
        Some(Command::Healthcheck { config, file }) => {
            let source = atomic_bot::config::ConfigSource::from_cli(config);
            report(hosting::healthcheck(
                &source,
                file,
                std::time::SystemTime::now(),
            ))
        }
        None => ExitCode::SUCCESS,
    }
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
