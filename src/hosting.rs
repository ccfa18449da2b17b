//! The operator commands behind `atomic-bot check-config FILE` and `atomic-bot healthcheck`.
//!
//! Both are plain functions returning an exit code and the text to print, so `main` stays thin
//! and the behaviour is unit-tested without spawning the binary.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::config::{ConfigError, ConfigSource, Settings, TOKEN_ENV};
use crate::heartbeat;

/// What a command prints and how it exits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Process exit code.
    pub code: i32,
    /// Text for stdout (success) or stderr (failure).
    pub text: String,
}

/// `atomic-bot check-config FILE`: loads `file` exactly as the bot would (defaults, the file,
/// then `ATOMIC_BOT_*` overrides from `env`), validates it, checks the token source without
/// revealing the token, and prints the effective configuration as TOML, with the number of
/// search threads that `search.threads` means on this machine and where it came from.
///
/// A missing token is reported but is not an error (the file may be checked on a machine that
/// does not hold the token); an unreadable token file or a malformed token is.
pub fn check_config(file: &Path, env: &HashMap<String, String>) -> Outcome {
    let source = ConfigSource {
        file: Some(file.to_path_buf()),
        file_required: true,
        env: env.clone(),
    };
    let settings = match Settings::load(&source) {
        Ok(s) => s,
        Err(e) => {
            return Outcome {
                code: 1,
                text: format!("{}: {e}\n", file.display()),
            };
        }
    };
    let token_line = match settings.token(env) {
        Ok(_) if env.get(TOKEN_ENV).is_some_and(|t| !t.trim().is_empty()) => {
            format!("# token: from {TOKEN_ENV} (redacted)")
        }
        Ok(_) => "# token: from lichess.token_file (redacted)".to_string(),
        Err(ConfigError::MissingToken) => format!(
            "# token: NOT SET: `atomic-bot lichess` needs {TOKEN_ENV} or lichess.token_file"
        ),
        Err(e) => {
            return Outcome {
                code: 1,
                text: format!("{}: {e}\n", file.display()),
            };
        }
    };
    let body = match toml::to_string_pretty(&settings) {
        Ok(t) => t,
        Err(e) => {
            return Outcome {
                code: 1,
                text: format!("cannot print the configuration: {e}\n"),
            };
        }
    };
    let mut text = String::new();
    let _ = writeln!(
        text,
        "# {}: valid. Effective configuration (defaults < file < ATOMIC_BOT_* environment):",
        file.display()
    );
    let _ = writeln!(text, "{token_line}");
    let _ = writeln!(
        text,
        "# search threads: {}",
        settings.search.effective_threads()
    );
    text.push('\n');
    text.push_str(&body);
    Outcome { code: 0, text }
}

/// `atomic-bot healthcheck`: 0 if the heartbeat (`heartbeat.path`, overridable with `file`) is
/// at most `heartbeat.max_age_s` old, 1 otherwise. The configuration comes from `source` like
/// the bot's; if it cannot be loaded the built-in defaults are used, because a health check must
/// answer rather than fail on an unrelated configuration problem (which the bot itself reports).
pub fn healthcheck(source: &ConfigSource, file: Option<PathBuf>, now: SystemTime) -> Outcome {
    let settings = Settings::load(source).unwrap_or_default();
    let path = file.unwrap_or_else(|| settings.heartbeat.path.clone());
    let health = heartbeat::check(&path, settings.heartbeat.max_age(), now);
    Outcome {
        code: health.exit_code(),
        text: format!("{health} ({})\n", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A file `name` holding `content` in a fresh directory, removed when the returned guard
    /// is dropped.
    fn temp(name: &str, content: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::Builder::new()
            .prefix("atomic-bot-hosting-")
            .tempdir()
            .unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        (dir, path)
    }

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn example_config_is_valid_and_token_redacted() {
        let (_dir, file) = temp("example.toml", include_str!("../config.example.toml"));
        let out = check_config(
            &file,
            &env(&[
                (TOKEN_ENV, "lip_SuperSecret42"),
                ("ATOMIC_BOT_CHALLENGE__MAX_GAMES", "3"),
            ]),
        );
        assert_eq!(out.code, 0, "{}", out.text);
        assert!(!out.text.contains("lip_SuperSecret42"), "{}", out.text);
        assert!(out.text.contains("redacted"), "{}", out.text);
        assert!(
            out.text.contains("# search threads: ") && out.text.contains("threads = \"auto\""),
            "{}",
            out.text
        );
        assert!(
            out.text.contains("max_games = 3"),
            "env overrides shown: {}",
            out.text
        );
        assert!(
            out.text.contains("[matchmaking]") && out.text.contains("\"3+2\""),
            "{}",
            out.text
        );
        // what is printed is itself a valid configuration with the same meaning
        let body: String = out
            .text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n");
        let (_printed_dir, printed) = temp("printed.toml", &body);
        let again = check_config(&printed, &env(&[]));
        assert_eq!(again.code, 0, "{}", again.text);
        assert!(again.text.contains("NOT SET"), "{}", again.text);
    }

    #[test]
    fn errors_name_the_key_and_never_the_token() {
        let (_dir, file) = temp("bad.toml", "[matchmaking]\ntime_controls = [\"0.25+0\"]\n");
        let out = check_config(&file, &env(&[]));
        assert_eq!(out.code, 1);
        assert!(out.text.contains("UltraBullet"), "{}", out.text);
        let (_dir, file) = temp("bad2.toml", "[metrics]\nlisten = \"nowhere\"\n");
        let out = check_config(&file, &env(&[]));
        assert!(
            out.code == 1 && out.text.contains("metrics.listen"),
            "{}",
            out.text
        );
        let (_dir, file) = temp("ok.toml", "");
        let out = check_config(&file, &env(&[(TOKEN_ENV, "not a token!")]));
        assert_eq!(out.code, 1);
        assert!(!out.text.contains("not a token"), "{}", out.text);
        let out = check_config(Path::new("/nonexistent/atomic-bot.toml"), &env(&[]));
        assert_eq!(out.code, 1);
        let (_dir, file) = temp("threads.toml", "[search]\nthreads = 0\n");
        let out = check_config(&file, &env(&[]));
        assert!(
            out.code == 1 && out.text.contains("search.threads"),
            "{}",
            out.text
        );
    }

    #[test]
    fn the_effective_search_threads_are_printed() {
        let (_dir, file) = temp("three.toml", "[search]\nthreads = 3\n");
        let out = check_config(&file, &env(&[]));
        assert_eq!(out.code, 0, "{}", out.text);
        assert!(
            out.text
                .contains("# search threads: 3 (set by search.threads)"),
            "{}",
            out.text
        );
    }

    #[test]
    fn healthcheck_uses_the_configured_path() {
        let dir = tempfile::Builder::new()
            .prefix("atomic-bot-hosting-hb-")
            .tempdir()
            .unwrap();
        let hb = dir.path().join("hb");
        let source = ConfigSource {
            file: None,
            file_required: false,
            env: env(&[("ATOMIC_BOT_HEARTBEAT__PATH", hb.to_str().unwrap())]),
        };
        assert_eq!(healthcheck(&source, None, SystemTime::now()).code, 1);
        heartbeat::Heartbeat::new(&hb)
            .write_now(SystemTime::now())
            .unwrap();
        let out = healthcheck(&source, None, SystemTime::now());
        assert_eq!(out.code, 0, "{}", out.text);
        let later = SystemTime::now() + Duration::from_secs(91);
        assert_eq!(healthcheck(&source, None, later).code, 1);
        // an explicit file wins
        assert_eq!(
            healthcheck(
                &source,
                Some(PathBuf::from("/nonexistent")),
                SystemTime::now()
            )
            .code,
            1
        );
    }
}
