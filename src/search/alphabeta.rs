//! Iterative-deepening alpha-beta (PVS) over the same evaluation and quiescence search as the
//! MCTS. An experiment (`AlphaBeta` option): how much of the gap to Fairy-Stockfish is the
//! search architecture rather than the evaluation?

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use atomic_chess::{Game, Move, MoveList, Position, Role};

use super::eval::{self, MATE, MATE_BOUND, QStats};
use super::{Limits, Proven, Score, SearchInfo, SearchParams, SearchResult};

const MAX_PLY: usize = 100;
/// Nodes between looks at the clock and the stop flag.
const CHECK_INTERVAL: u64 = 1024;

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum Bound {
    #[default]
    None,
    Exact,
    Lower,
    Upper,
}

#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    mv: Option<Move>,
    score: i32,
    depth: i16,
    bound: Bound,
}

struct Ctx<'a> {
    stop: &'a AtomicBool,
    hard: Option<Instant>,
    nodes: Option<u64>,
}

/// The alpha-beta searcher: a transposition table, killer moves and a history table.
pub struct AlphaBeta {
    tt: Vec<Entry>,
    killers: [[Option<Move>; 2]; MAX_PLY],
    history: Vec<i32>,
    keys: Vec<u64>,
    nodes: u64,
    qstats: QStats,
    aborted: bool,
    pv: Vec<[Option<Move>; MAX_PLY]>,
    pv_len: [usize; MAX_PLY],
    root_best: Option<(Move, i32)>,
    seldepth: usize,
    params: SearchParams,
}

impl AlphaBeta {
    /// A searcher whose table uses about `hash_mb` MiB.
    pub fn new(hash_mb: usize) -> AlphaBeta {
        let want = (hash_mb.max(1) << 20) / std::mem::size_of::<Entry>();
        let size = (want.next_power_of_two() / 2).max(1024);
        AlphaBeta {
            tt: vec![Entry::default(); size],
            killers: [[None; 2]; MAX_PLY],
            history: vec![0; 2 * 64 * 64],
            keys: Vec::new(),
            nodes: 0,
            qstats: QStats::default(),
            aborted: false,
            pv: vec![[None; MAX_PLY]; MAX_PLY],
            pv_len: [0; MAX_PLY],
            root_best: None,
            seldepth: 0,
            params: SearchParams::default(),
        }
    }

    /// Forgets the table (a new game).
    pub fn clear(&mut self) {
        self.tt.fill(Entry::default());
        self.history.fill(0);
    }

    /// Positions visited in the last search (tree and quiescence).
    pub fn nodes(&self) -> u64 {
        self.nodes + self.qstats.nodes
    }

    /// Searches the game's position by iterative deepening until a limit.
    pub fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        params: &SearchParams,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        let start = Instant::now();
        self.params = params.clone();
        self.nodes = 0;
        self.qstats = QStats::default();
        self.aborted = false;
        self.seldepth = 0;
        self.killers = [[None; 2]; MAX_PLY];
        for h in self.history.iter_mut() {
            *h /= 8;
        }
        self.keys.clear();
        self.keys.extend_from_slice(game.history_keys());
        let root = *game.position();
        if self.keys.last() != Some(&root.zobrist()) {
            self.keys.push(root.zobrist());
        }
        let ctx = Ctx {
            stop,
            hard: (!limits.infinite)
                .then_some(limits.hard)
                .flatten()
                .map(|h| start + h),
            nodes: limits.nodes,
        };
        let moves = root.legal_moves();
        let mut best: Option<(Move, i32)> = None;
        let mut best_pv: Vec<Move> = Vec::new();
        let mut info = None;
        let mut depth_done = 0;
        if moves.is_empty() {
            let score = if root.is_check() { -MATE } else { 0 };
            let info = self.info(start, 0, score, Vec::new());
            on_info(&info);
            return self.result(None, None, info, score);
        }
        let max_depth = limits.depth.map_or(MAX_PLY as i32 - 2, |d| d.max(1) as i32);
        for depth in 1..=max_depth {
            self.root_best = None;
            let score = self.negamax(&ctx, &root, depth, -MATE, MATE, 0, false);
            if self.aborted {
                if let Some((m, s)) = self.root_best {
                    if best.is_none_or(|(b, _)| b != m) {
                        best_pv = vec![m];
                    }
                    best = Some((m, s));
                }
                break;
            }
            depth_done = depth;
            let pv: Vec<Move> = self.pv[0][..self.pv_len[0]]
                .iter()
                .map_while(|m| *m)
                .collect();
            if let Some(&m) = pv.first() {
                best = Some((m, score));
                best_pv = pv.clone();
            }
            let line = self.info(start, depth as u32, score, pv);
            on_info(&line);
            info = Some(line);
            if limits.infinite {
                continue;
            }
            if moves.len() == 1 || score.abs() >= MATE_BOUND {
                break;
            }
            if let Some(soft) = limits.soft
                && start.elapsed() >= soft / 2
            {
                break;
            }
        }
        // Whatever happened, a legal move is returned.
        let (m, score) = best.unwrap_or((moves[0], 0));
        if best_pv.first() != Some(&m) {
            best_pv = vec![m];
        }
        let mut final_info = self.info(start, depth_done.max(1) as u32, score, best_pv.clone());
        if let Some(prev) = info
            && prev.pv.first() == Some(&m)
        {
            final_info.pv = prev.pv;
        }
        on_info(&final_info);
        let ponder = final_info.pv.get(1).copied();
        self.result(Some(m), ponder, final_info, score)
    }

    /// A fixed-depth search of `pos` (a leaf of another search) with a full window, reusing
    /// the table across calls. `keys` are the repetition keys up to and including `pos`.
    /// Returns centipawns for the side to move.
    pub fn value(&mut self, pos: &Position, keys: &[u64], depth: i32, params: &SearchParams) -> i32 {
        static NEVER: AtomicBool = AtomicBool::new(false);
        if self.params != *params {
            self.params = params.clone();
        }
        self.keys.clear();
        self.keys.extend_from_slice(keys);
        self.aborted = false;
        let ctx = Ctx {
            stop: &NEVER,
            hard: None,
            nodes: None,
        };
        self.negamax(&ctx, pos, depth, -MATE, MATE, 0, false)
    }

    fn result(
        &self,
        best_move: Option<Move>,
        ponder_move: Option<Move>,
        info: SearchInfo,
        score: i32,
    ) -> SearchResult {
        let proven = if score >= MATE_BOUND {
            Some(Proven::Win(((MATE - score + 1) / 2) as u32))
        } else if score <= -MATE_BOUND {
            Some(Proven::Loss(((MATE + score) / 2) as u32))
        } else {
            None
        };
        SearchResult {
            best_move,
            ponder_move,
            info,
            win_probability: eval::win_probability(score, self.params.eval_scale),
            proven,
        }
    }

    fn info(&self, start: Instant, depth: u32, score: i32, pv: Vec<Move>) -> SearchInfo {
        let time = start.elapsed();
        let nodes = self.nodes();
        let p = eval::win_probability(score, self.params.eval_scale);
        let win = (p * 1000.0).round() as u32;
        SearchInfo {
            depth,
            seldepth: self.seldepth as u32,
            nodes,
            nps: (nodes as f64 / time.as_secs_f64().max(1e-6)) as u64,
            time,
            score: score_of(score),
            wdl: (win, 0, 1000 - win.min(1000)),
            pv,
            hashfull: 0,
            multipv: 1,
        }
    }

    fn should_stop(&mut self, ctx: &Ctx) -> bool {
        if self.aborted {
            return true;
        }
        if self.nodes.is_multiple_of(CHECK_INTERVAL) {
            if ctx.stop.load(Ordering::Relaxed)
                || ctx.hard.is_some_and(|h| Instant::now() >= h)
                || ctx.nodes.is_some_and(|n| self.nodes() >= n)
            {
                self.aborted = true;
            }
        }
        self.aborted
    }

    #[allow(clippy::too_many_arguments)]
    fn negamax(
        &mut self,
        ctx: &Ctx,
        pos: &Position,
        mut depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        allow_null: bool,
    ) -> i32 {
        self.pv_len[ply] = ply;
        self.nodes += 1;
        if ply > 0 && self.should_stop(ctx) {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        let pv_node = beta - alpha > 1;
        let mply = ply as i32;
        if pos.board().king_of(pos.turn()).is_none() {
            return -MATE + mply;
        }
        if ply > 0 {
            let len = self.keys.len();
            let window = (pos.halfmove_clock() as usize).min(len - 1);
            if self.keys[len - 1 - window..len - 1].contains(&self.keys[len - 1]) {
                return 0;
            }
        }
        let mut moves = MoveList::new();
        pos.legal_moves_into(&mut moves);
        let in_check = pos.is_check();
        if moves.is_empty() {
            return if in_check { -MATE + mply } else { 0 };
        }
        if moves.iter().any(|&m| eval::wins_at_once(pos, m)) {
            return MATE - mply - 1;
        }
        if pos.halfmove_clock() >= 100 || pos.is_insufficient_material() {
            return 0;
        }
        if ply >= MAX_PLY - 2 {
            return eval::static_eval(pos);
        }
        if in_check {
            depth += 1;
        }
        if depth <= 0 {
            return eval::qsearch_window(pos, alpha, beta, ply as u32, &self.params, &mut self.qstats);
        }

        let key = pos.zobrist();
        let slot = key as usize & (self.tt.len() - 1);
        let entry = self.tt[slot];
        let mut tt_move = None;
        if entry.key == key && entry.bound != Bound::None {
            tt_move = entry.mv;
            if !pv_node && i32::from(entry.depth) >= depth {
                let s = from_tt(entry.score, mply);
                let cut = match entry.bound {
                    Bound::Exact => true,
                    Bound::Lower => s >= beta,
                    Bound::Upper => s <= alpha,
                    Bound::None => false,
                };
                if cut {
                    return s;
                }
            }
        }

        let static_eval = if in_check {
            -MATE
        } else {
            eval::static_eval(pos)
        };
        if !pv_node && !in_check && beta.abs() < MATE_BOUND {
            if depth <= 3 && static_eval - 150 * depth >= beta {
                return static_eval;
            }
            if allow_null && depth >= 3 && static_eval >= beta && has_pieces(pos) {
                let r = 3 + depth / 4;
                let null = pos.null_move();
                self.keys.push(null.zobrist());
                let s = -self.negamax(ctx, &null, depth - 1 - r, -beta, -beta + 1, ply + 1, false);
                self.keys.pop();
                if self.aborted {
                    return 0;
                }
                if s >= beta {
                    return if s >= MATE_BOUND { beta } else { s };
                }
            }
        }

        // Move ordering: the table's move, captures by blast balance, killers, history.
        let side = pos.turn() as usize;
        let mut scored: arrayvec::ArrayVec<(i32, Move), 256> = moves
            .iter()
            .map(|&m| {
                let s = if Some(m) == tt_move {
                    2_000_000
                } else if m.is_capture() {
                    let b = eval::blast_balance(pos, m);
                    if b >= 0 {
                        1_000_000 + b
                    } else {
                        -1_000_000 + b
                    }
                } else if m.promotion() == Some(Role::Queen) {
                    900_000
                } else if self.killers[ply][0] == Some(m) {
                    800_000
                } else if self.killers[ply][1] == Some(m) {
                    799_000
                } else {
                    self.history[hist_index(side, m)]
                };
                (s, m)
            })
            .collect();

        let orig_alpha = alpha;
        let mut best = -MATE;
        let mut best_move = None;
        let mut searched = 0;
        for i in 0..scored.len() {
            let mut top = i;
            for j in i + 1..scored.len() {
                if scored[j].0 > scored[top].0 {
                    top = j;
                }
            }
            scored.swap(i, top);
            let m = scored[i].1;
            let quiet = !m.is_capture() && m.promotion().is_none();
            let mut child = *pos;
            child.play_unchecked(m);
            self.keys.push(child.zobrist());
            let gives_check = child.is_check();
            let score = if searched == 0 {
                -self.negamax(ctx, &child, depth - 1, -beta, -alpha, ply + 1, true)
            } else {
                let mut r = 0;
                if depth >= 3 && quiet && !in_check && !gives_check && searched >= 3 {
                    r = 1 + i32::from(searched >= 8) + i32::from(depth >= 6 && searched >= 16);
                    if pv_node {
                        r -= 1;
                    }
                    r = r.clamp(0, depth - 2);
                }
                let mut s =
                    -self.negamax(ctx, &child, depth - 1 - r, -alpha - 1, -alpha, ply + 1, true);
                if s > alpha && r > 0 {
                    s = -self.negamax(ctx, &child, depth - 1, -alpha - 1, -alpha, ply + 1, true);
                }
                if s > alpha && s < beta {
                    s = -self.negamax(ctx, &child, depth - 1, -beta, -alpha, ply + 1, true);
                }
                s
            };
            self.keys.pop();
            if self.aborted {
                return 0;
            }
            searched += 1;
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    best_move = Some(m);
                    self.pv[ply][ply] = Some(m);
                    let child_len = self.pv_len[ply + 1];
                    for k in ply + 1..child_len {
                        self.pv[ply][k] = self.pv[ply + 1][k];
                    }
                    self.pv_len[ply] = child_len.max(ply + 1);
                    if ply == 0 {
                        self.root_best = Some((m, score));
                    }
                    if alpha >= beta {
                        if quiet {
                            if self.killers[ply][0] != Some(m) {
                                self.killers[ply][1] = self.killers[ply][0];
                                self.killers[ply][0] = Some(m);
                            }
                            let h = &mut self.history[hist_index(side, m)];
                            *h = (*h + depth * depth).min(700_000);
                        }
                        break;
                    }
                }
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > orig_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt[slot] = Entry {
            key,
            mv: best_move.or(tt_move),
            score: to_tt(best, mply),
            depth: depth as i16,
            bound,
        };
        best
    }
}

fn hist_index(side: usize, m: Move) -> usize {
    (side * 64 + m.from().index()) * 64 + m.to().index()
}

/// Whether the side to move has a piece other than pawns and the king (null moves are unsafe
/// in pawn endings).
fn has_pieces(pos: &Position) -> bool {
    let b = pos.board();
    (b.by_color(pos.turn()) & !b.by_role(Role::Pawn) & !b.by_role(Role::King)).any()
}

fn to_tt(score: i32, ply: i32) -> i32 {
    if score >= MATE_BOUND {
        score + ply
    } else if score <= -MATE_BOUND {
        score - ply
    } else {
        score
    }
}

fn from_tt(score: i32, ply: i32) -> i32 {
    if score >= MATE_BOUND {
        score - ply
    } else if score <= -MATE_BOUND {
        score + ply
    } else {
        score
    }
}

fn score_of(score: i32) -> Score {
    if score >= MATE_BOUND {
        Score::Mate((MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        Score::Mate(-((MATE + score) / 2))
    } else {
        Score::Cp(score)
    }
}
