//! The arena's figures: results from the bot's side, Elo with its 95 % interval, percentiles,
//! and the printed summary.

use std::fmt::Write as _;
use std::time::Duration;

/// Wins, draws and losses from the bot's side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    /// Games the bot won.
    pub wins: u32,
    /// Drawn games.
    pub draws: u32,
    /// Games the bot lost.
    pub losses: u32,
}

impl Score {
    /// Games with a result.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }
}

/// An Elo difference and its 95 % interval; infinite where the score is 0 or 100 %.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Elo {
    /// The estimate.
    pub elo: f64,
    /// Lower bound of the 95 % interval.
    pub low: f64,
    /// Upper bound of the 95 % interval.
    pub high: f64,
}

/// Elo of a score fraction `p` (0 < p < 1; ±∞ at the ends).
fn elo_of(p: f64) -> f64 {
    if p <= 0.0 {
        f64::NEG_INFINITY
    } else if p >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / p - 1.0).log10()
    }
}

/// The Elo difference a score shows, with a 95 % interval from the normal approximation of the
/// mean per-game score (its variance measured on the games, draws included, as match runners
/// such as cutechess report it). `None` without games.
pub fn elo(score: Score) -> Option<Elo> {
    let n = f64::from(score.games());
    if n == 0.0 {
        return None;
    }
    let (w, d, l) = (
        f64::from(score.wins) / n,
        f64::from(score.draws) / n,
        f64::from(score.losses) / n,
    );
    let p = w + d / 2.0;
    let variance = w * (1.0 - p).powi(2) + d * (0.5 - p).powi(2) + l * p.powi(2);
    let margin = 1.959_963_985 * (variance / n).sqrt();
    Some(Elo {
        elo: elo_of(p),
        low: elo_of(p - margin),
        high: elo_of(p + margin),
    })
}

/// The `q`-th percentile (0-100) by the nearest-rank method: the smallest sample with at least
/// `q` % of the samples at or below it. `None` without samples.
pub fn percentile(samples: &[Duration], q: f64) -> Option<Duration> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = ((q / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// How one game ended, as the report counts it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GameRecord {
    /// 1, ½ or 0 for the bot; `None` for a game without a result (aborted, unfinished).
    pub bot_points: Option<f64>,
    /// The server's final status (`mate`, `variantEnd`, `outoftime`, ...).
    pub status: String,
    /// The bot lost on time.
    pub bot_flagged: bool,
    /// The engine lost on time.
    pub engine_flagged: bool,
    /// The engine answered an illegal move (it lost the game by resignation).
    pub engine_illegal: bool,
    /// The engine crashed or stopped answering.
    pub engine_failed: bool,
    /// The bot's clock at the end, in ms (games with a clock).
    pub bot_clock_left_ms: Option<i64>,
}

/// Everything the arena prints.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// The engine's name.
    pub engine: String,
    /// The clock as given.
    pub clock: String,
    /// The round trip charged to the bot.
    pub lag: Duration,
    /// Games asked for.
    pub games_requested: u32,
    /// Every game played, in the order they ended.
    pub games: Vec<GameRecord>,
    /// The bot's move requests the server rejected.
    pub bot_rejected_moves: usize,
    /// Response times measured by the server (state released → move request arrived).
    pub responses: Vec<Duration>,
    /// The same minus the think time, as the bot measured it.
    pub overheads: Vec<Duration>,
    /// Peak resident memory of the process (VmHWM), in kB.
    pub peak_rss_kb: Option<u64>,
    /// Problems that stopped part of the run (an engine that could not be restarted).
    pub problems: Vec<String>,
}

impl Summary {
    /// Wins, draws and losses of the games with a result.
    pub fn score(&self) -> Score {
        let mut s = Score::default();
        for g in &self.games {
            match g.bot_points {
                Some(p) if p > 0.75 => s.wins += 1,
                Some(p) if p > 0.25 => s.draws += 1,
                Some(_) => s.losses += 1,
                None => {}
            }
        }
        s
    }

    /// The text the arena prints.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let score = self.score();
        let count = |f: fn(&GameRecord) -> bool| self.games.iter().filter(|g| f(g)).count();
        let _ = writeln!(
            out,
            "Arena: atomic-bot against {} at {}, lag {} ms round trip",
            self.engine,
            self.clock,
            self.lag.as_millis()
        );
        let unfinished = self.games.len() as u32 - score.games();
        let _ = writeln!(
            out,
            "Games: {} of {} played ({} without a result)",
            self.games.len(),
            self.games_requested,
            unfinished
        );
        let points = f64::from(score.wins) + f64::from(score.draws) / 2.0;
        let pct = if score.games() == 0 {
            0.0
        } else {
            100.0 * points / f64::from(score.games())
        };
        let _ = writeln!(
            out,
            "Bot W/D/L: {}/{}/{}  score {:.1} % ({points} / {})",
            score.wins,
            score.draws,
            score.losses,
            pct,
            score.games()
        );
        if let Some(e) = elo(score) {
            let _ = writeln!(
                out,
                "Elo: {} [{}, {}] (95 %)",
                fmt_elo(e.elo),
                fmt_elo(e.low),
                fmt_elo(e.high)
            );
        }
        let _ = writeln!(
            out,
            "Time forfeits: bot {}, engine {}",
            count(|g| g.bot_flagged),
            count(|g| g.engine_flagged)
        );
        let _ = writeln!(
            out,
            "Illegal moves: bot {} rejected by the server (illegal or late), engine {}; engine crashed or hung: {}",
            self.bot_rejected_moves,
            count(|g| g.engine_illegal),
            count(|g| g.engine_failed)
        );
        let _ = writeln!(
            out,
            "Bot response (state received -> move sent, {} moves): {}",
            self.responses.len(),
            fmt_spread(&self.responses)
        );
        let _ = writeln!(
            out,
            "Bot response minus think time ({} moves): {}",
            self.overheads.len(),
            fmt_spread(&self.overheads)
        );
        let clocks: Vec<Duration> = self
            .games
            .iter()
            .filter_map(|g| g.bot_clock_left_ms)
            .map(|ms| Duration::from_millis(ms.max(0) as u64))
            .collect();
        match (percentile(&clocks, 0.0), percentile(&clocks, 50.0)) {
            (Some(min), Some(median)) => {
                let _ = writeln!(
                    out,
                    "Bot clock left at the end: min {:.2} s, median {:.2} s",
                    min.as_secs_f64(),
                    median.as_secs_f64()
                );
            }
            _ => {
                let _ = writeln!(out, "Bot clock left at the end: -");
            }
        }
        if let Some(kb) = self.peak_rss_kb {
            let _ = writeln!(out, "Peak RSS (VmHWM): {:.1} MB", kb as f64 / 1024.0);
        }
        for p in &self.problems {
            let _ = writeln!(out, "Problem: {p}");
        }
        out
    }
}

fn fmt_elo(e: f64) -> String {
    if e == f64::INFINITY {
        "+inf".into()
    } else if e == f64::NEG_INFINITY {
        "-inf".into()
    } else {
        format!("{e:+.0}")
    }
}

fn fmt_spread(samples: &[Duration]) -> String {
    let ms = |d: Option<Duration>| d.map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    if samples.is_empty() {
        return "-".into();
    }
    format!(
        "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms(percentile(samples, 50.0)),
        ms(percentile(samples, 99.0)),
        ms(percentile(samples, 100.0))
    )
}

/// The peak resident set of this process in kB (`VmHWM` of `/proc/self/status`; Linux only).
pub fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_hwm(&status)
}

fn parse_vm_hwm(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .split_ascii_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(wins: u32, draws: u32, losses: u32) -> Score {
        Score {
            wins,
            draws,
            losses,
        }
    }

    #[test]
    fn elo_of_known_scores() {
        let even = elo(score(10, 0, 10)).unwrap();
        assert!(even.elo.abs() < 1e-9);
        // Symmetric around zero.
        assert!((even.low + even.high).abs() < 1e-6);
        // 75 % is +190.8 Elo.
        let e = elo(score(3, 0, 1)).unwrap();
        assert!((e.elo - 190.85).abs() < 0.01, "{e:?}");
        assert!(elo(score(0, 0, 0)).is_none());
    }

    #[test]
    fn elo_interval_matches_the_normal_approximation() {
        // 84/49/67 (the README's 200 games against Fairy-Stockfish): 54.25 %, +30 [-12, +72].
        let e = elo(score(84, 49, 67)).unwrap();
        assert_eq!(e.elo.round(), 30.0, "{e:?}");
        assert_eq!(e.low.round(), -12.0, "{e:?}");
        assert_eq!(e.high.round(), 72.0, "{e:?}");
        // More games, same score: a narrower interval.
        let more = elo(score(840, 490, 670)).unwrap();
        assert!(more.high - more.low < (e.high - e.low) / 3.0);
    }

    #[test]
    fn elo_at_the_ends_is_infinite() {
        let all = elo(score(5, 0, 0)).unwrap();
        assert_eq!(all.elo, f64::INFINITY);
        // No variance: the interval collapses to the estimate.
        assert_eq!(all.low, f64::INFINITY);
        let none = elo(score(0, 0, 4)).unwrap();
        assert_eq!(none.elo, f64::NEG_INFINITY);
        let draws = elo(score(0, 6, 0)).unwrap();
        assert!(draws.elo.abs() < 1e-9 && draws.low.abs() < 1e-9 && draws.high.abs() < 1e-9);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let ms =
            |v: &[u64]| -> Vec<Duration> { v.iter().map(|&x| Duration::from_millis(x)).collect() };
        let s = ms(&[5, 1, 4, 2, 3]);
        assert_eq!(percentile(&s, 50.0), Some(Duration::from_millis(3)));
        assert_eq!(percentile(&s, 0.0), Some(Duration::from_millis(1)));
        assert_eq!(percentile(&s, 100.0), Some(Duration::from_millis(5)));
        assert_eq!(percentile(&s, 20.0), Some(Duration::from_millis(1)));
        assert_eq!(percentile(&s, 21.0), Some(Duration::from_millis(2)));
        let hundred: Vec<u64> = (1..=100).collect();
        assert_eq!(
            percentile(&ms(&hundred), 99.0),
            Some(Duration::from_millis(99))
        );
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn summary_counts_from_the_bots_side() {
        let g = |p: Option<f64>, bot_flagged: bool| GameRecord {
            bot_points: p,
            bot_flagged,
            bot_clock_left_ms: Some(1500),
            ..GameRecord::default()
        };
        let summary = Summary {
            engine: "E".into(),
            clock: "1+0".into(),
            games_requested: 4,
            games: vec![
                g(Some(1.0), false),
                g(Some(0.5), false),
                g(Some(0.0), true),
                g(None, false),
            ],
            ..Summary::default()
        };
        assert_eq!(summary.score(), score(1, 1, 1));
        let text = summary.render();
        assert!(text.contains("Bot W/D/L: 1/1/1"), "{text}");
        assert!(
            text.contains("Games: 4 of 4 played (1 without a result)"),
            "{text}"
        );
        assert!(text.contains("Time forfeits: bot 1, engine 0"), "{text}");
        assert!(text.contains("min 1.50 s, median 1.50 s"), "{text}");
    }

    #[test]
    fn vm_hwm_is_read_in_kb() {
        let status = "Name:\tx\nVmPeak:\t  100 kB\nVmHWM:\t   12345 kB\nVmRSS:\t 10 kB\n";
        assert_eq!(parse_vm_hwm(status), Some(12345));
        assert_eq!(parse_vm_hwm("Name: x\n"), None);
    }
}
