//! Seeded junk for every JSON document the fake server sends: lichess adds fields, map
//! entries and shapes over time, and the bot must play on. [`Junk::decorate`] changes a
//! document the way such a change could, without touching what the bot needs to act:
//!
//! - extra fields (named `zz…`, never a real field) with values of any type, at every depth,
//!   so also extra entries in maps like `perfs` (an integer where a rating object would be:
//!   the entry that once made the bot exit at start-up);
//! - fields the bot does not need replaced by a value of another type, or `null`;
//! - fields the bot needs ([`needed`]) only re-typed without changing their meaning: a number
//!   sent as a string (`"wtime":"171430"`), a numeric string sent as a number, a whole number
//!   as a float, a boolean as `"true"`;
//! - extra entries of another type in lists the bot reads entry by entry (`nowPlaying`).
//!
//! The property test (`tests/lenient.rs`) runs it over recorded lichess documents; the fake
//! server applies it to its answers and stream lines after [`super::FakeLichess::junk`]
//! (the middleware `decorate`, in `layers.rs`).

use axum::body::Bytes;
use serde_json::{Map, Number, Value, json};

use crate::lichess::client::Endpoint;

/// The decorator: a seeded xorshift generator (same seed, same junk).
#[derive(Clone, Debug)]
pub struct Junk {
    rng: u64,
}

/// Paths (dot-separated, `*` for any key or index) of what the bot needs in a document of
/// `kind` (a stream line's `type`, or a reply's kind from [`reply_kind`]); a path covers
/// everything below it. Unknown kinds are needed whole.
pub fn needed(kind: &str) -> &'static [&'static str] {
    const STATE: &[&str] = &[
        "type",
        "moves",
        "wtime",
        "btime",
        "winc",
        "binc",
        "status",
        "winner",
        "wdraw",
        "bdraw",
        "wtakeback",
        "btakeback",
        "expiration",
    ];
    match kind {
        "gameStart" | "gameFinish" => &["type", "game.gameId", "game.id", "game.opponent.id"],
        "challenge" => &[
            "type",
            "challenge.id",
            "challenge.challenger.id",
            "challenge.challenger.title",
            "challenge.variant.key",
            "challenge.rated",
            "challenge.timeControl",
            "compat.bot",
        ],
        "challengeCanceled" | "challengeDeclined" => &["type", "challenge.id"],
        "gameFull" => &[
            "type",
            "variant.key",
            "clock",
            "white.id",
            "black.id",
            "initialFen",
            "state",
        ],
        "gameState" => STATE,
        "chatLine" => &["type", "room", "username", "text"],
        "opponentGone" => &["type", "gone", "claimWinInSeconds"],
        "account" => &["id", "username", "title", "perfs.atomic"],
        "playing" => &["nowPlaying.*.gameId", "nowPlaying.*.id"],
        "online" => &[
            "id",
            "username",
            "title",
            "perfs.atomic",
            "disabled",
            "tosViolation",
        ],
        "challengeCreated" => &["id", "challenge.id"],
        "tablebase" => &[
            "category",
            "dtz",
            "dtm",
            "moves.*.uci",
            "moves.*.category",
            "moves.*.dtz",
            "moves.*.dtm",
            "moves.*.checkmate",
            "moves.*.variant_loss",
        ],
        "explorer" => &[
            "moves.*.uci",
            "moves.*.white",
            "moves.*.draws",
            "moves.*.black",
        ],
        "cloudEval" => &["depth", "pvs.*.moves", "pvs.*.cp", "pvs.*.mate"],
        "error" => &["error", "ratelimit"],
        "ok" => &["ok"],
        _ => &["*"],
    }
}

/// Lists whose entries the bot reads one by one, so that an extra entry of another type may
/// be appended.
fn lists(kind: &str) -> &'static [&'static str] {
    match kind {
        "playing" => &["nowPlaying"],
        "tablebase" | "explorer" => &["moves"],
        "cloudEval" => &["pvs"],
        _ => &[],
    }
}

/// The kind of a JSON answer of `endpoint` with `status` (see [`needed`]).
pub fn reply_kind(endpoint: Endpoint, status: u16) -> &'static str {
    if status >= 400 {
        return "error";
    }
    match endpoint {
        Endpoint::Account => "account",
        Endpoint::Playing => "playing",
        Endpoint::OnlineBots => "online",
        Endpoint::CreateChallenge => "challengeCreated",
        Endpoint::Tablebase => "tablebase",
        Endpoint::Explorer => "explorer",
        Endpoint::CloudEval => "cloudEval",
        _ => "ok",
    }
}

fn matches(pattern: &[&str], path: &[String]) -> bool {
    pattern.len() <= path.len()
        && pattern
            .iter()
            .zip(path)
            .all(|(p, s)| *p == "*" || *p == s.as_str())
}

/// How a node relates to the needed paths.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Needed (or inside something needed): only re-typed, keeping its meaning.
    Needed,
    /// Holds something needed: kept, its other contents may change.
    Holder,
    /// Not needed: may be replaced by anything.
    Free,
}

fn role(kind: &str, path: &[String]) -> Role {
    let patterns = needed(kind);
    let split = |p: &'static str| p.split('.').collect::<Vec<_>>();
    if patterns.iter().any(|p| matches(&split(p), path)) {
        Role::Needed
    } else if patterns.iter().any(|p| {
        let p = split(p);
        p.len() > path.len() && matches(&p[..path.len()], path)
    }) {
        Role::Holder
    } else {
        Role::Free
    }
}

impl Junk {
    /// A decorator with this seed.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        }
    }

    /// An independent decorator (for one stream), seeded from this one.
    pub fn fork(&mut self) -> Junk {
        Junk::new(self.next())
    }

    fn next(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// Decorates `v`, a document of `kind` (see the module docs).
    pub fn decorate(&mut self, kind: &str, v: &mut Value) {
        let mut path = Vec::new();
        self.walk(kind, &mut path, v);
    }

    fn walk(&mut self, kind: &str, path: &mut Vec<String>, v: &mut Value) {
        let here = if path.is_empty() {
            Role::Holder
        } else {
            role(kind, path)
        };
        match here {
            Role::Free if self.chance(25) => {
                *v = self.wrong_type(v);
                return;
            }
            Role::Needed if self.chance(30) => retype(v, self.next()),
            _ => {}
        }
        match v {
            Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                for k in keys {
                    path.push(k.clone());
                    if let Some(child) = map.get_mut(&k) {
                        self.walk(kind, path, child);
                    }
                    path.pop();
                }
                for _ in 0..self.below(3) {
                    let key = self.junk_key();
                    let value = self.any_value(2);
                    map.insert(key, value);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    path.push(i.to_string());
                    self.walk(kind, path, item);
                    path.pop();
                }
                let joined = path.join(".");
                if lists(kind).contains(&joined.as_str()) && self.chance(50) {
                    let extra = self.any_value(1);
                    items.push(match extra {
                        Value::Object(_) => json!(42),
                        other => other,
                    });
                }
            }
            _ => {}
        }
    }

    fn junk_key(&mut self) -> String {
        format!("zz{:x}", self.next() % 0xffff)
    }

    /// A value of any type (objects and arrays `depth` levels deep at most).
    fn any_value(&mut self, depth: u32) -> Value {
        let kinds = if depth == 0 { 5 } else { 7 };
        match self.below(kinds) {
            0 => Value::Null,
            1 => json!(self.chance(50)),
            2 => json!(self.next() % 100_000),
            3 => json!(-((self.next() % 1000) as f64) / 7.0),
            4 => json!(format!("junk{}", self.next() % 1000)),
            5 => Value::Array(
                (0..self.below(3))
                    .map(|_| self.any_value(depth - 1))
                    .collect(),
            ),
            _ => {
                let mut m = Map::new();
                for _ in 0..self.below(3) {
                    let k = self.junk_key();
                    let v = self.any_value(depth - 1);
                    m.insert(k, v);
                }
                Value::Object(m)
            }
        }
    }

    /// A value of another type than `v` (or `null`).
    fn wrong_type(&mut self, v: &Value) -> Value {
        loop {
            let candidate = self.any_value(1);
            let same = std::mem::discriminant(&candidate) == std::mem::discriminant(v);
            if !same || v.is_null() {
                return candidate;
            }
        }
    }

    /// One stream line (with or without its newline): decorated when it is a JSON object,
    /// as is otherwise (keep-alives, raw junk lines). `kind` is the document kind of every
    /// line (an ND-JSON answer's), or `None` to take each line's `type` (a stream's).
    pub fn decorate_line(&mut self, line: &[u8], kind: Option<&str>) -> Bytes {
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let Ok(mut v) = serde_json::from_slice::<Value>(text) else {
            return Bytes::copy_from_slice(line);
        };
        if !v.is_object() {
            return Bytes::copy_from_slice(line);
        }
        let kind = match kind {
            Some(k) => k.to_owned(),
            None => v
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        };
        self.decorate(&kind, &mut v);
        let mut out = v.to_string().into_bytes();
        if line.ends_with(b"\n") {
            out.push(b'\n');
        }
        Bytes::from(out)
    }

    /// A chunk of ND-JSON (a stream sends a line per chunk; a finite answer sends them all in
    /// one), each line decorated (see [`Junk::decorate_line`]).
    pub(crate) fn decorate_lines(&mut self, chunk: &[u8], kind: Option<&str>) -> Bytes {
        let mut out = Vec::with_capacity(chunk.len() + 64);
        for line in chunk.split_inclusive(|&b| b == b'\n') {
            out.extend_from_slice(&self.decorate_line(line, kind));
        }
        Bytes::from(out)
    }
}

/// Re-types a needed value without changing what it says.
fn retype(v: &mut Value, pick: u64) {
    let new = match &*v {
        Value::Number(n) => match (n.as_i64(), pick % 2) {
            (Some(i), 0) if i.unsigned_abs() < (1 << 52) => {
                Number::from_f64(i as f64).map(Value::Number)
            }
            _ => Some(Value::String(n.to_string())),
        },
        Value::Bool(b) => Some(Value::String(b.to_string())),
        Value::String(s) => s
            .parse::<i64>()
            .ok()
            .filter(|i| i.to_string() == *s)
            .map(|i| json!(i)),
        _ => None,
    };
    if let Some(new) = new {
        *v = new;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needed_values_keep_their_meaning_and_free_ones_change() {
        let base = json!({"type": "gameState", "moves": "e2e4", "wtime": 1000, "btime": 900,
            "winc": 0, "binc": 0, "status": "started", "rematch": "abcdefgh"});
        let mut changed = 0;
        for seed in 0..200 {
            let mut v = base.clone();
            Junk::new(seed).decorate("gameState", &mut v);
            for k in ["moves", "status"] {
                assert_eq!(v[k], base[k], "seed {seed}: {v}");
            }
            let wtime = &v["wtime"];
            assert!(
                wtime == &json!(1000) || wtime == &json!("1000") || wtime == &json!(1000.0),
                "seed {seed}: {v}"
            );
            if v["rematch"] != base["rematch"] {
                changed += 1;
            }
            assert!(
                v.as_object()
                    .unwrap()
                    .keys()
                    .all(|k| base.get(k).is_some() || k.starts_with("zz"))
            );
        }
        assert!(changed > 20, "{changed}");
    }

    #[test]
    fn roles_follow_the_needed_paths() {
        let p = |s: &str| s.split('.').map(str::to_owned).collect::<Vec<_>>();
        assert!(role("gameFull", &p("state.wtime")) == Role::Needed);
        assert!(role("gameFull", &p("white")) == Role::Holder);
        assert!(role("gameFull", &p("white.name")) == Role::Free);
        assert!(role("playing", &p("nowPlaying.3.gameId")) == Role::Needed);
        assert!(role("mystery", &p("anything")) == Role::Needed);
    }
}
