//! What a broken lichess sends, for the fault injector (`faults.rs`): junk stream lines, the
//! HTML error pages of its front servers, and fields no client knows yet.

use serde_json::{Value, json};

use super::rng::Rng;

/// A line that is no valid lichess line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadLine {
    /// Not JSON at all.
    NotJson,
    /// JSON with a `type` the client does not know (lichess adds event types).
    UnknownType,
    /// A line longer than any client should buffer ([`OVERLONG_BYTES`]).
    OverLong,
}

/// Length of a [`BadLine::OverLong`] line (1.5 MiB): lichess lines are a few kB, and a client
/// that buffers a line without bound can be made to run out of memory.
pub const OVERLONG_BYTES: usize = 3 << 19;

/// The HTML page of a 5xx (what a front server answers while lila restarts).
pub fn server_error_page(status: u16) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><title>lichess.org</title></head><body>\
         <h1>{status}</h1><p>lichess.org is having trouble right now, or is restarting. \
         Please try again in a moment.</p></body></html>"
    )
}

/// The HTML page of a 429 (lichess's edge limiter: not JSON, no `Retry-After`).
pub const RATE_LIMITED_PAGE: &str = "<!DOCTYPE html>\n<html><head><title>429 Too Many Requests\
     </title></head><body><h1>Too many requests</h1><p>Please wait a minute before you try \
     again.</p></body></html>";

/// The text of a junk line.
pub fn bad_line(kind: BadLine, rng: &mut Rng) -> String {
    match kind {
        BadLine::NotJson => rng
            .pick(&[
                "<html><body>502 Bad Gateway</body></html>",
                "{\"type\":\"gameState\",\"moves\":",
                "not json at all",
                "]]",
            ])
            .to_string(),
        BadLine::UnknownType => {
            let kind = rng.pick(&["gameStarting", "tournamentNotice", "botNews", "ping"]);
            json!({"type": kind, "payload": {"id": "abcdefgh", "list": [1, "two", null]}})
                .to_string()
        }
        BadLine::OverLong => {
            let mut s = String::with_capacity(OVERLONG_BYTES + 64);
            s.push_str("{\"type\":\"chatLine\",\"room\":\"player\",\"username\":\"x\",\"text\":\"");
            s.extend(std::iter::repeat_n('x', OVERLONG_BYTES));
            s.push_str("\"}");
            s
        }
    }
}

/// Fields no lichess client knows (yet), of assorted shapes.
pub fn unknown_fields(rng: &mut Rng) -> Value {
    let n = rng.below(1000);
    json!({
        "soakFutureField": n,
        "soakNested": {"list": [n, "two", null, {"deep": true}], "empty": {}},
        "soakNull": null,
        "soakText": "a field lichess added after this client was written",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junk_lines_are_what_they_claim() {
        let mut rng = Rng::new(5);
        for _ in 0..10 {
            let not_json = bad_line(BadLine::NotJson, &mut rng);
            assert!(
                serde_json::from_str::<Value>(&not_json).is_err(),
                "{not_json}"
            );
            let unknown: Value = serde_json::from_str(&bad_line(BadLine::UnknownType, &mut rng))
                .expect("unknown types are JSON");
            assert!(unknown["type"].is_string());
        }
        let long = bad_line(BadLine::OverLong, &mut rng);
        assert!(long.len() > OVERLONG_BYTES && !long.contains('\n'));
        assert!(!RATE_LIMITED_PAGE.trim_start().starts_with('{'));
        assert!(server_error_page(502).contains("502"));
    }
}
