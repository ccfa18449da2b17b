//! Models of the lichess Bot API JSON (see `API.md` §2-4), read by the rules of
//! [`crate::lichess::lenient`]: the fields the bot needs to act are strict (a game id, the move
//! list, the status, the clocks, the players' ids, a challenge id), and reading one that is
//! missing or unreadable fails with the path of the field; every other field is lenient
//! (default when missing, null or of another type, logged at debug level), unknown fields,
//! map entries and `type`s are ignored. So a lichess change never stops the bot unless it
//! removes something the bot cannot play without, and then the log says what.
//!
//! By stream: [`event`] (the event stream and challenges), [`game`] (a game's stream) and
//! [`account`] (accounts, users and error bodies); everything is re-exported here.

pub mod account;
pub mod event;
pub mod game;

pub use account::{Account, BOT_GAMES_LIMIT_KEY, ErrorBody, Perf, Playing, RateLimit, User};
pub use event::{
    Challenge, ChallengeUser, Compat, Event, GameEventInfo, Opponent, TimeControl, Variant,
};
pub use game::{ChatLine, Clock, Expiration, GameEvent, GameFull, GameState, Player};

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn parses_the_documented_examples() {
        let e: Event = serde_json::from_str(
            r#"{"type":"gameStart","game":{"fullId":"Kp4Rt9Zx2mQa","gameId":"Kp4Rt9Zx","id":"Kp4Rt9Zx",
 "fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1","color":"black","lastMove":"",
 "source":"friend","status":{"id":20,"name":"started"},"variant":{"key":"atomic","name":"Atomic"},
 "speed":"blitz","perf":"atomic","rated":true,"hasMoved":false,
 "opponent":{"id":"boomfan","username":"BoomFan","rating":1712},"isMyTurn":false,"secondsLeft":180,
 "rating":1890,"compat":{"bot":true,"board":false}}}"#,
        )
        .unwrap();
        let Event::GameStart { game } = e else {
            panic!("not a gameStart")
        };
        assert_eq!(game.id(), "Kp4Rt9Zx");
        let e: Event = serde_json::from_str(
            r#"{"type":"challenge","challenge":{"id":"Qx7Lm2Pa","url":"https://lichess.org/Qx7Lm2Pa","status":"created",
 "challenger":{"id":"boomfan","name":"BoomFan","rating":1712,"online":true,"lag":4},
 "destUser":{"id":"ouratomicbot","name":"OurAtomicBot","title":"BOT","rating":1890,"online":true},
 "variant":{"key":"atomic","name":"Atomic","short":"Atom"},"rated":true,"speed":"blitz",
 "timeControl":{"type":"clock","limit":180,"increment":2,"show":"3+2"},
 "color":"random","finalColor":"white","perf":{"icon":"x","name":"Atomic"}},
 "compat":{"bot":true,"board":false}}"#,
        )
        .unwrap();
        let Event::Challenge { challenge, compat } = e else {
            panic!("not a challenge")
        };
        assert_eq!(
            challenge.time_control,
            TimeControl::Clock {
                limit: 180,
                increment: 2
            }
        );
        assert!(compat.unwrap().bot);
        let g: GameEvent = serde_json::from_str(
            r#"{"type":"gameFull","id":"Kp4Rt9Zx","variant":{"key":"atomic","name":"Atomic","short":"Atom"},
 "clock":{"initial":180000,"increment":2000},"speed":"blitz","perf":{"name":"Atomic"},"rated":true,
 "createdAt":1785412800000,
 "white":{"id":"boomfan","name":"BoomFan","title":null,"rating":1712},
 "black":{"id":"ouratomicbot","name":"OurAtomicBot","title":"BOT","rating":1890},
 "initialFen":"startpos",
 "state":{"type":"gameState","moves":"","wtime":180000,"btime":180000,"winc":2000,"binc":2000,
  "status":"started","expiration":{"idleMillis":1850,"millisToMove":25000}}}"#,
        )
        .unwrap();
        assert!(matches!(g, GameEvent::GameFull(_)));
        let g: GameEvent =
            serde_json::from_str(r#"{"type":"opponentGone","gone":true,"claimWinInSeconds":12}"#)
                .unwrap();
        assert_eq!(
            g,
            GameEvent::OpponentGone {
                gone: true,
                claim_win_in_seconds: Some(12)
            }
        );
    }

    #[test]
    fn unknown_types_and_fields_are_tolerated() {
        let e: Event = serde_json::from_str(r#"{"type":"newThing","x":1}"#).unwrap();
        assert_eq!(e, Event::Unknown);
        let g: GameEvent = serde_json::from_str(
            r#"{"type":"gameState","moves":"e2e4","wtime":1,"btime":2,"status":"started","zzz":[1]}"#,
        )
        .unwrap();
        assert!(matches!(g, GameEvent::GameState(_)));
        let c: Challenge =
            serde_json::from_str(r#"{"id":"a","timeControl":{"type":"hourglass"}}"#).unwrap();
        assert_eq!(c.time_control, TimeControl::Unknown);
    }

    /// The issue's start-up failure: `perfs` entries that are not rating objects (lichess's
    /// `storm`/`racer`/`streak`, or anything else) made `/api/account` unreadable and the bot
    /// exit (`invalid type: integer, expected struct Perf`).
    #[test]
    fn an_account_with_perfs_of_other_shapes_is_read() {
        let a: Account = serde_json::from_str(
            r#"{"id":"ouratomicbot","username":"OurAtomicBot","title":"BOT",
              "perfs":{"atomic":{"games":12,"rating":1890,"rd":60,"prog":5,"prov":true},
                       "storm":{"runs":3,"score":12},"streak":7,"racer":null,"blitz":"n/a"},
              "createdAt":1785412800000,"count":{"all":12,"rated":"12"},"playTime":[1,2]}"#,
        )
        .unwrap();
        assert!(a.is_bot());
        assert_eq!(a.id, "ouratomicbot");
        assert_eq!(a.perfs["atomic"].rating, Some(1890));
        assert_eq!(a.perfs["storm"].rating, None);
        assert!(!a.perfs.contains_key("streak"));
        // Ratings themselves are optional: a `perfs` of another type leaves none.
        let a: Account = serde_json::from_str(r#"{"id":"b","title":"BOT","perfs":[1,2]}"#).unwrap();
        assert!(a.perfs.is_empty());
        assert_eq!(a.username, "b");
        // The id is needed, and its absence is named.
        let e = serde_json::from_str::<Account>(r#"{"username":"x","title":"BOT"}"#).unwrap_err();
        assert!(
            e.to_string().contains("field `account.id` is missing"),
            "{e}"
        );
    }

    /// Nulls, numbers for strings and strings for numbers are read; what the bot needs and
    /// cannot read is an error naming the field.
    #[test]
    fn needed_fields_are_strict_and_named_the_rest_bends() {
        let g: GameEvent = serde_json::from_str(
            r#"{"type":"gameState","moves":"e2e4 e7e5","wtime":"171430","btime":168910.0,
              "winc":null,"binc":"x","status":"started","wdraw":"true","winner":null}"#,
        )
        .unwrap();
        let GameEvent::GameState(s) = g else {
            panic!("{g:?}")
        };
        assert_eq!((s.wtime, s.btime, s.winc, s.binc), (171_430, 168_910, 0, 0));
        assert!(s.wdraw);
        for (line, field) in [
            (
                r#"{"type":"gameState","wtime":1,"btime":1,"status":"started"}"#,
                "gameState.moves",
            ),
            (
                r#"{"type":"gameState","moves":"","wtime":"soon","btime":1,"status":"started"}"#,
                "gameState.wtime",
            ),
            (
                r#"{"type":"gameState","moves":"","wtime":1,"btime":1,"status":null}"#,
                "gameState.status",
            ),
            (
                r#"{"type":"gameFull","variant":{"key":"atomic"},"white":{"id":"a"},"black":{"id":"b"},"state":{"moves":""}}"#,
                "gameFull.state.wtime",
            ),
            (
                r#"{"type":"gameFull","variant":{"key":"atomic"},"white":{"id":[1]},"black":{"id":"b"},"state":{}}"#,
                "gameFull.white.id",
            ),
        ] {
            let e = serde_json::from_str::<GameEvent>(line)
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("`{field}`")), "{line}: {e}");
        }
        for (line, field) in [
            (
                r#"{"type":"gameStart","game":{"fullId":"x","color":"white"}}"#,
                "gameStart.game.gameId",
            ),
            (
                r#"{"type":"challenge","challenge":{"status":"created"}}"#,
                "challenge.challenge.id",
            ),
            (
                r#"{"type":"challengeDeclined","challenge":7}"#,
                "challengeDeclined.challenge",
            ),
        ] {
            let e = serde_json::from_str::<Event>(line).unwrap_err().to_string();
            assert!(e.contains(&format!("`{field}`")), "{line}: {e}");
        }
        // A challenge whose unneeded parts are unreadable still has its id, and defaults that
        // the policy declines; a bad `compat` reads as absent, not as "not playable".
        let e: Event = serde_json::from_str(
            r#"{"type":"challenge","challenge":{"id":12345678,"challenger":"boomfan",
              "variant":[],"rated":"yes","timeControl":{"type":"clock","limit":"60","increment":null}},
              "compat":{"bot":"maybe"}}"#,
        )
        .unwrap();
        let Event::Challenge { challenge, compat } = e else {
            panic!("{e:?}")
        };
        assert_eq!(challenge.id, "12345678");
        assert_eq!(challenge.challenger, None);
        assert!(!challenge.rated);
        assert_eq!(
            challenge.time_control,
            TimeControl::Clock {
                limit: 60,
                increment: 0
            }
        );
        assert_eq!(compat, None);
    }

    /// The 2025-2026 additions: `expiration`, `rating`/`ratingDiff`, `nbMyTurn`, and the
    /// daily bot-game limit's `ratelimit`.
    #[test]
    fn reads_the_recent_api_additions() {
        let g: GameEvent = serde_json::from_str(
            r#"{"type":"gameState","moves":"","wtime":180000,"btime":180000,"winc":2000,
              "binc":2000,"status":"started","expiration":{"idleMillis":1850,"millisToMove":25000}}"#,
        )
        .unwrap();
        let GameEvent::GameState(s) = g else {
            panic!("{g:?}")
        };
        let exp = s.expiration.expect("expiration");
        assert_eq!(exp.left(), Duration::from_millis(23_150));
        let e: Event = serde_json::from_str(
            r#"{"type":"gameFinish","game":{"gameId":"Kp4Rt9Zx","id":"Kp4Rt9Zx","color":"black",
              "status":{"id":60,"name":"variantEnd"},"opponent":{"id":"boomfan","username":"BoomFan",
              "rating":1712,"ratingDiff":-6},"winner":"black","rating":1890,"ratingDiff":6}}"#,
        )
        .unwrap();
        let Event::GameFinish { game } = e else {
            panic!("{e:?}")
        };
        assert_eq!((game.rating, game.rating_diff), (Some(1890), Some(6)));
        assert_eq!(game.opponent.rating_diff, Some(-6));
        let p: Playing = serde_json::from_str(
            r#"{"nowPlaying":[{"gameId":"Kp4Rt9Zx","isMyTurn":true},{"fullId":"nogameid"},42],
              "nbMyTurn":1}"#,
        )
        .unwrap();
        assert_eq!(p.now_playing.len(), 1);
        assert_eq!(p.nb_my_turn, Some(1));
        let b: ErrorBody = serde_json::from_str(
            r#"{"error":"You played 100 games against other bots today, please wait before challenging another bot.",
              "ratelimit":{"key":"bot.vsBot.day","seconds":51234}}"#,
        )
        .unwrap();
        let r = b.ratelimit.expect("ratelimit");
        assert!(r.is_bot_games());
        assert_eq!(r.seconds, Some(51_234));
    }
}
