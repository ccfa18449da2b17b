//! The network's properties over many positions: the incremental update equals the refresh
//! along random games full of explosions, SIMD equals scalar, and a position and its
//! colour-flipped mirror get the same value.

use std::sync::Arc;

use atomic_chess::{Color, Move, Position};

use super::accumulator::Accumulator;
use super::features::{KingLayout, Pieces};
use super::{Kernel, Network, Stack};

/// SplitMix64 steps from `state`.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(crate::search::GOLDEN_GAMMA);
    crate::search::mix64(*state)
}

/// A random legal move, a capture half the time when there is one (explosions are what the
/// update must get right), or `None` at the game's end.
fn random_move(pos: &Position, rng: &mut u64) -> Option<Move> {
    pos.board().king_of(pos.turn())?;
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return None;
    }
    let captures: Vec<Move> = moves.iter().copied().filter(|m| m.is_capture()).collect();
    let r = next(rng);
    if !captures.is_empty() && r.is_multiple_of(2) {
        return Some(captures[(r >> 8) as usize % captures.len()]);
    }
    Some(moves[(r >> 8) as usize % moves.len()])
}

fn refreshed(net: &Network, pos: &Position) -> Accumulator {
    let mut acc = Accumulator::new(net);
    acc.refresh(net, pos.board(), &mut Pieces::new());
    acc
}

/// What kinds of change a random walk went through.
#[derive(Default)]
struct Seen {
    plies: usize,
    explosions: [usize; 2],
    big_explosions: usize,
    castles: usize,
    promotions: usize,
    en_passant: usize,
}

impl Seen {
    fn record(&mut self, pos: &Position, m: Move, child: &Position) {
        self.plies += 1;
        if m.is_capture() {
            self.explosions[pos.turn().index()] += 1;
            let gone = pos.board().occupied().count() - child.board().occupied().count();
            if gone >= 4 {
                self.big_explosions += 1;
            }
        }
        self.castles += usize::from(m.is_castle());
        self.promotions += usize::from(m.promotion().is_some());
        self.en_passant += usize::from(m.is_en_passant());
    }
}

#[test]
fn incremental_updates_equal_a_refresh_after_every_move_of_random_games() {
    incremental_equals_refresh(Network::random(32, 4, 1));
}

#[test]
fn incremental_updates_equal_a_refresh_with_inputs_keyed_by_the_king() {
    // King moves that change bucket or cross the d/e line refresh one perspective; the rest
    // update both.
    incremental_equals_refresh(Network::random_keyed(KingLayout::Mirrored8, 32, 4, 2));
}

fn incremental_equals_refresh(net: Network) {
    let net = Arc::new(net);
    let mut stack = Stack::new(Arc::clone(&net));
    let mut rng = 0x5eed_u64;
    let mut seen = Seen::default();
    for _game in 0..300 {
        let mut pos = Position::startpos();
        stack.reset(pos.board());
        let mut line = vec![pos];
        for _ply in 0..160 {
            let Some(m) = random_move(&pos, &mut rng) else {
                break;
            };
            let mut child = pos;
            child.play_unchecked(m);
            seen.record(&pos, m, &child);
            stack.push(child.board());
            // Lazily: sometimes several plies pass before an evaluation.
            if !next(&mut rng).is_multiple_of(3) {
                assert_eq!(
                    *stack.accumulator(child.board()),
                    refreshed(&net, &child),
                    "after {m} in {}",
                    pos.to_fen()
                );
            }
            line.push(child);
            pos = child;
            // Now and then the search backs up a few plies and tries another line.
            if next(&mut rng).is_multiple_of(7) && line.len() > 4 {
                for _ in 0..3 {
                    stack.pop();
                    line.pop();
                }
                pos = *line.last().expect("the root stays");
                assert_eq!(*stack.accumulator(pos.board()), refreshed(&net, &pos));
            }
        }
    }
    eprintln!(
        "{} plies, explosions {:?} ({} of four units or more), {} castles, {} promotions, {} en passant",
        seen.plies,
        seen.explosions,
        seen.big_explosions,
        seen.castles,
        seen.promotions,
        seen.en_passant
    );
    assert!(seen.plies > 10_000, "{} plies", seen.plies);
    assert!(
        seen.explosions.iter().all(|&n| n > 800),
        "{:?}",
        seen.explosions
    );
    assert!(
        seen.big_explosions > 100,
        "{} big explosions",
        seen.big_explosions
    );
    assert!(seen.castles > 10, "{} castles", seen.castles);
    assert!(seen.promotions > 10, "{} promotions", seen.promotions);
    assert!(seen.en_passant > 0, "{} en passant", seen.en_passant);
}

#[test]
fn a_position_the_stack_was_not_told_about_is_evaluated_from_scratch() {
    let net = Arc::new(Network::random(32, 2, 9));
    let mut stack = Stack::new(Arc::clone(&net));
    let start = Position::startpos();
    stack.reset(start.board());
    let other = Position::from_fen("4k3/8/8/8/8/8/4P3/4K2R w K - 0 1").expect("fen");
    // Nothing was pushed: the top entry's board does not match, and is redone.
    assert_eq!(*stack.accumulator(other.board()), refreshed(&net, &other));
    assert_eq!(*stack.accumulator(start.board()), refreshed(&net, &start));
    // Pushes beyond the capacity share the last entry and stay correct.
    let mut pos = start;
    let mut rng = 3;
    let mut boards = vec![*pos.board()];
    for _ in 0..super::stack::CAPACITY + 20 {
        match random_move(&pos, &mut rng) {
            Some(m) => pos.play_unchecked(m),
            None => pos = start,
        }
        stack.push(pos.board());
        boards.push(*pos.board());
    }
    for _ in 0..40 {
        stack.pop();
        boards.pop();
    }
    let board = *boards.last().expect("boards");
    let mut fresh = Accumulator::new(&net);
    fresh.refresh(&net, &board, &mut Pieces::new());
    assert_eq!(*stack.accumulator(&board), fresh);
}

/// The colour-flipped mirror of a FEN: ranks reversed, colours and the side to move swapped,
/// castling rights and the en-passant square mirrored.
fn mirror_fen(fen: &str) -> String {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    let swap = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_uppercase() {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect::<String>()
    };
    let board = fields[0]
        .split('/')
        .rev()
        .map(swap)
        .collect::<Vec<_>>()
        .join("/");
    let turn = if fields[1] == "w" { "b" } else { "w" };
    let castling = if fields[2] == "-" {
        "-".to_string()
    } else {
        let s = swap(fields[2]);
        let mut v: Vec<char> = s.chars().collect();
        v.sort_by_key(|c| (c.is_ascii_lowercase(), *c != 'K' && *c != 'k'));
        v.into_iter().collect()
    };
    let ep = if fields[3] == "-" {
        "-".to_string()
    } else {
        let b = fields[3].as_bytes();
        format!("{}{}", b[0] as char, (b'1' + b'8' - b[1]) as char)
    };
    format!("{board} {turn} {castling} {ep} {} {}", fields[4], fields[5])
}

#[test]
fn a_position_and_its_colour_flipped_mirror_evaluate_the_same() {
    colour_flip_evaluates_the_same(Network::random(64, 8, 5));
    colour_flip_evaluates_the_same(Network::random_keyed(KingLayout::Mirrored8, 64, 8, 6));
}

fn colour_flip_evaluates_the_same(net: Network) {
    let net = Arc::new(net);
    let mut a = Stack::new(Arc::clone(&net));
    let mut b = Stack::new(Arc::clone(&net));
    let mut rng = 77;
    let mut checked = 0;
    let mut values = std::collections::HashSet::new();
    for _ in 0..20 {
        let mut pos = Position::startpos();
        for _ in 0..60 {
            let Some(m) = random_move(&pos, &mut rng) else {
                break;
            };
            pos.play_unchecked(m);
            let fen = pos.to_fen();
            let mirrored = Position::from_fen(&mirror_fen(&fen)).expect("mirrored FEN");
            assert_eq!(mirrored.turn(), pos.turn().other());
            assert_eq!(
                mirrored.board().occupied().count(),
                pos.board().occupied().count()
            );
            let (x, y) = (a.evaluate(&pos), b.evaluate(&mirrored));
            assert_eq!(x, y, "{fen} and {}", mirrored.to_fen());
            values.insert(x);
            checked += 1;
        }
    }
    assert!(checked > 500);
    assert!(
        values.len() > 50,
        "the evaluation barely varies: {values:?}"
    );
    assert_eq!(
        mirror_fen("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQq d6 0 1"),
        "r3k2r/8/8/8/3Pp3/8/8/R3K2R b Qkq d3 0 1"
    );
}

#[test]
fn scalar_and_simd_networks_evaluate_every_position_alike() {
    let simd = Arc::new(Network::random(256, 8, 21));
    let scalar = Arc::new(Network::random(256, 8, 21).with_kernel(Kernel::Scalar));
    assert_eq!(scalar.kernel(), Kernel::Scalar);
    let (mut a, mut b) = (Stack::new(simd), Stack::new(scalar));
    let mut rng = 8;
    for _ in 0..10 {
        let mut pos = Position::startpos();
        a.reset(pos.board());
        b.reset(pos.board());
        for _ in 0..200 {
            let Some(m) = random_move(&pos, &mut rng) else {
                break;
            };
            pos.play_unchecked(m);
            a.push(pos.board());
            b.push(pos.board());
            assert_eq!(a.evaluate(&pos), b.evaluate(&pos), "{}", pos.to_fen());
        }
    }
}

#[test]
fn the_evaluation_follows_the_documented_integer_formula() {
    let net = Network::random(16, 3, 4);
    let q = net.to_quantised();
    let pos = Position::from_fen("4k3/8/8/3q4/8/8/4P3/4K2R b K - 0 1").expect("fen");
    let acc = refreshed(&net, &pos);
    // The accumulators by hand, from the flat weights.
    let mut sides = [q.ft_bias.clone(), q.ft_bias.clone()];
    for perspective in Color::ALL {
        let key = net.king_key(perspective, pos.board());
        for color in Color::ALL {
            for role in atomic_chess::Role::ALL {
                for sq in pos.board().by_color(color) & pos.board().by_role(role) {
                    let f = super::features::index(perspective, key, color, role, sq);
                    for (i, v) in sides[perspective.index()].iter_mut().enumerate() {
                        *v += q.ft_weights[f * 16 + i];
                    }
                }
            }
        }
        assert!(
            acc.values(perspective)
                .eq(sides[perspective.index()].iter().copied())
        );
    }
    let pieces = 5;
    let bucket = ((pieces - 2) * 3 / 31).min(2);
    assert_eq!(net.bucket(pieces as u32), bucket);
    let (us, them) = (&sides[Color::Black.index()], &sides[Color::White.index()]);
    let w = &q.out_weights[bucket * 32..(bucket + 1) * 32];
    let sum: i64 = us
        .iter()
        .chain(them)
        .zip(w)
        .map(|(&x, &w)| {
            let v = i64::from(x.clamp(0, 255));
            v * v * i64::from(w)
        })
        .sum();
    let want = (sum / 255 + i64::from(q.out_bias[bucket])) * 400 / (255 * 64);
    assert_eq!(i64::from(net.evaluate(&acc, Color::Black, 5)), want);
    // Buckets: two to 32 pieces spread over the buckets, the last for a full board.
    let eight = Network::random(16, 8, 1);
    assert_eq!(eight.bucket(0), 0);
    assert_eq!(eight.bucket(5), 0);
    assert_eq!(eight.bucket(6), 1);
    assert_eq!(eight.bucket(32), 7);
    assert_eq!(eight.bucket(40), 7);
}

#[test]
fn lines_started_at_unrelated_leaves_update_from_the_last_root_correctly() {
    // The MCTS's use: a new line at every leaf, the leaves from different games and depths.
    let net = Arc::new(Network::random(32, 2, 12));
    let mut stack = Stack::new(Arc::clone(&net));
    let mut rng = 99;
    let mut leaves = Vec::new();
    for _ in 0..10 {
        let mut pos = Position::startpos();
        for _ in 0..80 {
            let Some(m) = random_move(&pos, &mut rng) else {
                break;
            };
            pos.play_unchecked(m);
            leaves.push(pos);
        }
    }
    for i in 0..leaves.len() {
        // Near neighbours and far jumps alike.
        let leaf = leaves[(i * 7919 + next(&mut rng) as usize % 3) % leaves.len()];
        stack.reset(leaf.board());
        assert_eq!(*stack.accumulator(leaf.board()), refreshed(&net, &leaf));
        if let Some(m) = random_move(&leaf, &mut rng) {
            let mut child = leaf;
            child.play_unchecked(m);
            stack.push(child.board());
            assert_eq!(*stack.accumulator(child.board()), refreshed(&net, &child));
        }
    }
    assert!(leaves.len() > 300);
}

/// The trainer's float model, from the network's integers: accumulators `bias/qa + Σ w/qa`,
/// activations `clamp(x, 0, 1)²`, output `(Σ v·w/qb + bias/(qa·qb)) · scale`.
fn float_model(net: &Network, pos: &Position) -> f64 {
    let q = net.to_quantised();
    let (qa, qb, h) = (f64::from(q.qa), f64::from(q.qb), q.hidden);
    let side = |perspective: Color| -> Vec<f64> {
        let mut acc: Vec<f64> = q.ft_bias.iter().map(|&b| f64::from(b) / qa).collect();
        let key = net.king_key(perspective, pos.board());
        for color in Color::ALL {
            for role in atomic_chess::Role::ALL {
                for sq in pos.board().by_color(color) & pos.board().by_role(role) {
                    let f = super::features::index(perspective, key, color, role, sq);
                    for (i, a) in acc.iter_mut().enumerate() {
                        *a += f64::from(q.ft_weights[f * h + i]) / qa;
                    }
                }
            }
        }
        acc.iter().map(|x| x.clamp(0.0, 1.0).powi(2)).collect()
    };
    let bucket = net.bucket(pos.board().occupied().count());
    let w = &q.out_weights[bucket * 2 * h..(bucket + 1) * 2 * h];
    let v: Vec<f64> = side(pos.turn())
        .into_iter()
        .chain(side(pos.turn().other()))
        .collect();
    let dot: f64 = v.iter().zip(w).map(|(v, &w)| v * f64::from(w) / qb).sum();
    (dot + f64::from(q.out_bias[bucket]) / (qa * qb)) * f64::from(q.scale)
}

#[test]
fn the_quantised_evaluation_is_within_about_a_centipawn_of_the_float_model() {
    quantised_within_a_centipawn(Network::random(64, 4, 31));
    quantised_within_a_centipawn(Network::random_keyed(KingLayout::Mirrored8, 64, 4, 32));
}

fn quantised_within_a_centipawn(net: Network) {
    let net = Arc::new(net);
    let mut stack = Stack::new(Arc::clone(&net));
    let mut rng = 5;
    let mut worst = 0.0f64;
    for _ in 0..10 {
        let mut pos = Position::startpos();
        stack.reset(pos.board());
        for _ in 0..40 {
            let Some(m) = random_move(&pos, &mut rng) else {
                break;
            };
            pos.play_unchecked(m);
            stack.push(pos.board());
            let diff = (f64::from(stack.evaluate(&pos)) - float_model(&net, &pos)).abs();
            worst = worst.max(diff);
        }
    }
    // Two truncating divisions: the sum's by qa loses under one unit of the output layer
    // (scale / (qa·qb) = 0.025 cp), the last one under a centipawn.
    assert!(
        worst < 1.0 + 400.0 / (255.0 * 64.0),
        "{worst} cp from the float model"
    );
    assert!(worst > 0.0, "the comparison compared nothing");
}
