//! Online move sources: what lichess knows about a position, asked before our own search
//! (`[online]`, each source off by default):
//!
//! - the atomic **tablebase** (`GET {tablebase.url}/atomic?fen=…`) when at most
//!   `max_pieces` units are left: its best move is played without a search ([`tablebase`]);
//! - the **opening explorer** (`GET {explorer.url}/lichess?variant=atomic&fen=…`) in the first
//!   `max_ply` plies: a move chosen at random among the well-played, well-scoring ones
//!   ([`explorer`]), played only when a short search of ours does not find it losing
//!   ([`check`]);
//! - the **cloud eval** (`GET {lichess.url}/api/cloud-eval?fen=…&variant=atomic`) in the
//!   opening: the first move of its line, deep enough, with the same check ([`cloud`]).
//!
//! Each request is one attempt through the client (`LichessClient::get_online`): with the
//! token, within `timeout_ms` and never more than a tenth of the move's soft budget, and
//! paused for `lichess.rate_limit_cooldown_ms` after a 429. Any failure means the search
//! plays: the sources never hold a move up and the search never touches the network.
//! Answers are cached per game ([`OnlineSources`] is made per game), so a position is asked
//! once.

pub mod check;
pub mod cloud;
pub mod explorer;
pub mod known;
pub mod tablebase;

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use atomic_chess::{Color, Game, Move};
use tracing::{debug, info};

use crate::config::OnlineSettings;
use crate::lichess::client::{ApiError, Endpoint, LichessClient};
use crate::lichess::lenient::FromJson;
use crate::lichess::picker::{Budget, MovePicker, Pick};
use check::Verdict;
use cloud::CloudAnswer;
use explorer::ExplorerAnswer;
use tablebase::TablebaseAnswer;

/// Where a played move came from (the move's log line, `!eval`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveSource {
    /// Our search.
    Search,
    /// The lichess tablebase.
    Tablebase,
    /// The lichess opening explorer.
    Book,
    /// A lichess cloud evaluation.
    Cloud,
    /// The instant rule-based move played when the search missed its deadline.
    Fallback,
}

impl MoveSource {
    /// Its name in logs.
    pub fn name(self) -> &'static str {
        match self {
            MoveSource::Search => "search",
            MoveSource::Tablebase => "tablebase",
            MoveSource::Book => "book",
            MoveSource::Cloud => "cloud",
            MoveSource::Fallback => "fallback",
        }
    }
}

impl std::fmt::Display for MoveSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A move an online source proposes.
#[derive(Clone, Debug, PartialEq)]
pub struct Advice {
    /// The move (legal here).
    pub mv: Move,
    /// Which source.
    pub source: MoveSource,
    /// The source and what it said, for `!eval` (`tablebase (win, DTZ 7)`).
    pub note: String,
    /// Our win probability as the source sees it.
    pub win_probability: f32,
    /// For a book move: the time of the safety check and the largest loss it allows
    /// (centipawns). `None`: play it as it is (the tablebase).
    pub check: Option<(Duration, i32)>,
}

/// The move played and where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    /// The source.
    pub source: MoveSource,
    /// What the source said (`None` for the search).
    pub note: Option<String>,
}

impl Played {
    /// A move of our search.
    pub const SEARCH: Played = Played {
        source: MoveSource::Search,
        note: None,
    };
}

/// A request shorter than this is not worth sending (the answer could not come back in time).
const MIN_ASK: Duration = Duration::from_millis(10);

/// Cached answers of one game, by FEN (`None`: the source has nothing for it).
#[derive(Default)]
struct Cache {
    tablebase: HashMap<String, Option<Arc<TablebaseAnswer>>>,
    explorer: HashMap<String, Option<Arc<ExplorerAnswer>>>,
    cloud: HashMap<String, Option<Arc<CloudAnswer>>>,
    /// Every tablebase result told so far (for when the tablebase cannot be asked).
    known: known::Known,
}

/// One game's online sources: the settings, the shared client and the game's cache.
pub struct OnlineSources {
    settings: OnlineSettings,
    client: LichessClient,
    /// Seed of the book's random choices.
    seed: u64,
    cache: Mutex<Cache>,
}

/// A 64-bit mixer (splitmix64's finalizer): seeds and positions to uniform numbers.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl OnlineSources {
    /// The sources of game `game_id`, or `None` when every source is off.
    pub fn new(settings: &OnlineSettings, client: &LichessClient, game_id: &str) -> Option<Self> {
        if !(settings.tablebase.enabled || settings.explorer.enabled || settings.cloud_eval.enabled)
        {
            return None;
        }
        let seed = match settings.explorer.seed {
            0 => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                let id = game_id.bytes().fold(0u64, |h, b| mix(h ^ u64::from(b)));
                mix(now ^ id)
            }
            s => s,
        };
        Some(Self {
            settings: settings.clone(),
            client: client.clone(),
            seed,
            cache: Mutex::new(Cache::default()),
        })
    }

    /// What the sources propose for the position of `game`, within a tenth of `budget`'s soft
    /// limit per request; `None`: the search plays.
    pub async fn advise(&self, game: &Game, budget: &Budget) -> Option<Advice> {
        let pos = game.position();
        let ply = u32::try_from(game.moves().len()).unwrap_or(u32::MAX);
        let fen = pos.to_fen();
        let s = &self.settings;
        if s.tablebase.enabled && pos.board().occupied().count() <= s.tablebase.max_pieces {
            // In a tablebase position the table or the search decides; no book.
            return self.ask_tablebase(game, &fen, budget).await;
        }
        if s.explorer.enabled
            && ply < s.explorer.max_ply
            && let Some(a) = self.ask_explorer(game, &fen, budget).await
        {
            return Some(a);
        }
        if s.cloud_eval.enabled && ply < s.cloud_eval.max_ply {
            return self.ask_cloud(game, &fen, budget).await;
        }
        None
    }

    /// The moves the search should choose among when the sources gave no move: in a
    /// tablebase position, those the game's known tablebase results keep best
    /// ([`known::Known::restriction`]); empty: every move.
    pub fn known_moves(&self, game: &Game) -> Vec<Move> {
        let pos = game.position();
        let s = &self.settings.tablebase;
        if !s.enabled || pos.board().occupied().count() > s.max_pieces {
            return Vec::new();
        }
        let only = self
            .cache
            .lock()
            .map_or_else(|_| Vec::new(), |c| c.known.restriction(pos));
        if !only.is_empty() {
            info!(
                moves = only.len(),
                of = pos.legal_moves().len(),
                "tablebase: no answer; the search plays among the moves its known results keep best"
            );
        }
        only
    }

    async fn ask_tablebase(&self, game: &Game, fen: &str, budget: &Budget) -> Option<Advice> {
        let s = &self.settings.tablebase;
        let url = url(&s.url, "/atomic", &[("fen", fen)])?;
        let answer = self
            .ask(
                Endpoint::Tablebase,
                url,
                limit(s.timeout_ms, budget),
                fen,
                |c| &mut c.tablebase,
            )
            .await?;
        if let Ok(mut c) = self.cache.lock() {
            c.known.learn(game.position(), &answer);
        }
        let Some((best, ours)) = tablebase::best_move(&answer) else {
            debug!(
                category = answer.category.name(),
                "tablebase: no known best move"
            );
            return None;
        };
        let mv = legal(game, &best.uci, Endpoint::Tablebase)?;
        let mut note = format!("tablebase ({}", ours.name());
        if let Some(d) = best.dtm.or(best.dtz).filter(|d| *d != 0) {
            let kind = if best.dtm.is_some() { "DTM" } else { "DTZ" };
            note.push_str(&format!(", {kind} {}", d.unsigned_abs()));
        }
        note.push(')');
        Some(Advice {
            mv,
            source: MoveSource::Tablebase,
            note,
            win_probability: ours.win_probability(),
            check: None,
        })
    }

    async fn ask_explorer(&self, game: &Game, fen: &str, budget: &Budget) -> Option<Advice> {
        let s = &self.settings.explorer;
        let speeds = s.speeds.join(",");
        let ratings = s
            .ratings
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let mut params = vec![("variant", "atomic"), ("fen", fen)];
        if !speeds.is_empty() {
            params.push(("speeds", &speeds));
        }
        if !ratings.is_empty() {
            params.push(("ratings", &ratings));
        }
        params.extend([("topGames", "0"), ("recentGames", "0")]);
        let url = url(&s.url, "/lichess", &params)?;
        let answer = self
            .ask(
                Endpoint::Explorer,
                url,
                limit(s.timeout_ms, budget),
                fen,
                |c| &mut c.explorer,
            )
            .await?;
        let pos = game.position();
        let white = pos.turn() == Color::White;
        let candidates = explorer::candidates(&answer, white, s.min_games, s.min_score);
        let ply = game.moves().len() as u64;
        let random = mix(self.seed ^ mix(pos.zobrist() ^ ply));
        let Some(choice) = explorer::choose(&candidates, random) else {
            debug!(
                moves = answer.moves.len(),
                "explorer: no move over the thresholds"
            );
            return None;
        };
        let mv = legal(game, &choice.uci, Endpoint::Explorer)?;
        Some(Advice {
            mv,
            source: MoveSource::Book,
            note: format!(
                "opening book (lichess explorer: {} games, {:.0}%)",
                choice.games,
                choice.score * 100.0
            ),
            win_probability: choice.score as f32,
            check: Some((check_time(s.check_ms, budget), s.max_loss_cp)),
        })
    }

    async fn ask_cloud(&self, game: &Game, fen: &str, budget: &Budget) -> Option<Advice> {
        let s = &self.settings.cloud_eval;
        let base = self.client.base_url().to_owned();
        let url = url(
            &base,
            "/api/cloud-eval",
            &[("fen", fen), ("variant", "atomic")],
        )?;
        let answer = self
            .ask(
                Endpoint::CloudEval,
                url,
                limit(s.timeout_ms, budget),
                fen,
                |c| &mut c.cloud,
            )
            .await?;
        let Some((uci, line)) = cloud::book_move(&answer, s.min_depth) else {
            debug!(depth = answer.depth, "cloud eval: not deep enough");
            return None;
        };
        let mv = legal(game, uci, Endpoint::CloudEval)?;
        let white = game.position().turn() == Color::White;
        let ours = line.cp.map(|cp| if white { cp } else { -cp });
        let explorer = &self.settings.explorer;
        Some(Advice {
            mv,
            source: MoveSource::Cloud,
            note: match ours {
                Some(cp) => format!(
                    "lichess cloud eval ({:+.2} at depth {})",
                    f64::from(cp) / 100.0,
                    answer.depth
                ),
                None => format!("lichess cloud eval (depth {})", answer.depth),
            },
            win_probability: 0.5,
            check: Some((check_time(explorer.check_ms, budget), explorer.max_loss_cp)),
        })
    }

    /// The cached answer for `fen`, else one request. A 404 is cached as "nothing here"; an
    /// error is not cached (the position may be asked again once the source is back).
    async fn ask<T: FromJson>(
        &self,
        endpoint: Endpoint,
        url: reqwest::Url,
        limit: Option<Duration>,
        fen: &str,
        slot: fn(&mut Cache) -> &mut HashMap<String, Option<Arc<T>>>,
    ) -> Option<Arc<T>> {
        let cached = self
            .cache
            .lock()
            .ok()
            .and_then(|mut c| slot(&mut c).get(fen).cloned());
        if let Some(hit) = cached {
            debug!(%endpoint, "answer from the game's cache");
            return hit;
        }
        let Some(limit) = limit else {
            debug!(%endpoint, "no time to ask: the search plays");
            return None;
        };
        let answer = match self.client.get_online(endpoint, &url, limit).await {
            Ok(Some(body)) => match parse::<T>(&body) {
                Ok(a) => Some(Arc::new(a)),
                Err(e) => {
                    info!(%endpoint, error = %ApiError::Decode { endpoint, message: e },
                        "online source unusable; the search plays");
                    return None;
                }
            },
            Ok(None) => {
                debug!(%endpoint, "nothing for this position (404)");
                None
            }
            Err(e) => {
                info!(%endpoint, error = %e, "online source unavailable; the search plays");
                return None;
            }
        };
        if let Ok(mut c) = self.cache.lock() {
            slot(&mut c).insert(fen.to_owned(), answer.clone());
        }
        answer
    }
}

/// A JSON answer read with the lenient rules.
fn parse<T: FromJson>(body: &[u8]) -> Result<T, String> {
    let v: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| format!("{e}: {}", crate::lichess::ndjson::excerpt(body)))?;
    T::from_json(v).map_err(|e| e.to_string())
}

/// `base` + `path` with the query `params` (encoded).
fn url(base: &str, path: &str, params: &[(&str, &str)]) -> Option<reqwest::Url> {
    let text = format!("{}{path}", base.trim_end_matches('/'));
    match reqwest::Url::parse_with_params(&text, params) {
        Ok(u) => Some(u),
        Err(e) => {
            info!(url = %text, error = %e, "online source URL unusable");
            None
        }
    }
}

/// A request's time limit: the configured one, at most a tenth of the move's soft budget;
/// `None` when that is too short to be worth asking.
fn limit(timeout_ms: u64, budget: &Budget) -> Option<Duration> {
    let t = Duration::from_millis(timeout_ms).min(budget.soft / 10);
    (t >= MIN_ASK).then_some(t)
}

/// The safety check's time: the configured one, at most a quarter of the move's soft budget.
fn check_time(check_ms: u64, budget: &Budget) -> Duration {
    Duration::from_millis(check_ms).min(budget.soft / 4)
}

/// The source's move as a legal move here, or `None` (logged: the source is wrong).
fn legal(game: &Game, uci: &str, endpoint: Endpoint) -> Option<Move> {
    match game.position().parse_uci(uci) {
        Ok(m) => Some(m),
        Err(e) => {
            info!(%endpoint, error = %e, "the source's move is not legal here; the search plays");
            None
        }
    }
}

/// Our move: the advice when there is one (a book move only after its safety check), else a
/// search with what is left of the budget, among `only` when that is not empty (the moves the
/// known tablebase results keep best: [`OnlineSources::known_moves`]). Runs on the search's
/// blocking thread.
pub fn decide(
    picker: &mut dyn MovePicker,
    game: &Game,
    budget: &Budget,
    stop: &AtomicBool,
    advice: Option<Advice>,
    only: &[Move],
) -> (Option<Pick>, Played) {
    let Some(advice) = advice else {
        return (picker.pick_among(game, budget, stop, only), Played::SEARCH);
    };
    let played = |advice: Advice, win_probability: f32| {
        (
            Some(Pick {
                mv: advice.mv,
                win_probability,
                proven: None,
            }),
            Played {
                source: advice.source,
                note: Some(advice.note),
            },
        )
    };
    let Some((time, max_loss_cp)) = advice.check else {
        let p = advice.win_probability;
        return played(advice, p);
    };
    let started = std::time::Instant::now();
    match check::check_book_move(
        picker,
        game,
        advice.mv,
        time,
        budget.threads,
        max_loss_cp,
        stop,
    ) {
        Verdict::Safe { win_probability } => played(advice, win_probability),
        Verdict::Refused(why) => {
            info!(source = %advice.source, mv = %advice.mv, reason = %why,
                "book move refused by the safety check; the search plays");
            let spent = started.elapsed();
            let rest = Budget {
                soft: budget.soft.saturating_sub(spent),
                hard: budget.hard.saturating_sub(spent),
                threads: budget.threads,
            };
            (picker.pick(game, &rest, stop), Played::SEARCH)
        }
    }
}
