//! The forced-win puzzles of `tests/data/tactics.epd` (a copy of the shared public set:
//! `<fen>; bm <uci>; mate <N>; id <name>`) and a node-limited search, shared by the solver and
//! alpha-beta tests.
#![allow(dead_code)]

use std::sync::atomic::AtomicBool;

use atomic_bot::search::{Limits, SearchResult, Searcher};
use atomic_chess::Game;

/// One puzzle: the side to move wins in `mate` moves, starting with `best`.
pub struct Puzzle {
    pub fen: String,
    pub best: String,
    pub mate: u32,
    pub id: String,
}

/// The puzzles that are wins in `mate` moves.
pub fn puzzles(mate: u32) -> Vec<Puzzle> {
    include_str!("../data/tactics.epd")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let parts: Vec<&str> = line.split(';').map(str::trim).collect();
            Puzzle {
                fen: parts[0].to_string(),
                best: parts[1].trim_start_matches("bm ").to_string(),
                mate: parts[2]
                    .trim_start_matches("mate ")
                    .parse()
                    .expect("mate N"),
                id: parts[3].trim_start_matches("id ").to_string(),
            }
        })
        .filter(|p| p.mate == mate)
        .collect()
}

/// A search of `game` limited to `nodes`.
pub fn search(searcher: &mut Searcher, game: &Game, nodes: u64) -> SearchResult {
    let limits = Limits {
        nodes: Some(nodes),
        ..Limits::default()
    };
    searcher.search(game, &limits, &AtomicBool::new(false), &mut |_| {})
}
