//! Iterative-deepening alpha-beta search (principal variation search) over the same atomic
//! evaluation and quiescence search as the MCTS.
//!
//! Why it exists: at equal time it beat the MCTS (docs/JOURNAL.md, "Session 8"). Atomic is
//! decided by short forcing lines; a full-width search with a transposition table proves
//! them where the MCTS samples them, and its nodes are about ten times cheaper than playouts.
//!
//! Layout: [`table`] (transposition table), [`ordering`] (move ordering), [`correction`]
//! (correction histories), `node` (the recursive search below the root), `helpers` (the
//! helper threads of lazy SMP), this module (the engine, a thread's state, iterative
//! deepening, the root with MultiPV and randomised openings, time, reports).
//!
//! Threads (lazy SMP): with `SearchConfig::threads` = N, the calling thread (the main thread)
//! runs the one-thread search while N − 1 helpers search the same root over the same
//! transposition table, each with its own [`Worker`] (histories, killers, corrections,
//! stacks). They share results through the table and, with `AbSmpShare` (the default), their
//! finished iterations (`helpers::Deepest`): a thread still inside a depth that another has
//! finished leaves it for the next, and the main thread takes the finished iteration over as
//! its own. The main thread alone reports, keeps the time and decides: the move played is the
//! best move of the last iteration it finished or took over. (Simplified ABDADA, where a
//! thread leaves for last the late moves whose child another thread is inside, raised the
//! time to depth from 1.16× to 1.26–1.36× but measured −17 [−69, +33] over 100 games at equal
//! time: removed, code in c0c674f. Playing, at the end, the best move of the deepest
//! iteration any thread finished, without sharing iterations during the search, measured +2
//! Elo [−43, +48] over 160 games: removed, code in 88a2080.) One thread is bit-for-bit the
//! search without helpers.
//!
//! What the search does per node: terminal checks as the MCTS solver makes them (king gone,
//! twofold repetition, mate/stalemate, a king-exploding capture wins at once, fifty moves,
//! insufficient material), check and blast-threat extensions, singular extensions of the
//! table move, table cut-offs, the static
//! evaluation plus the [`correction`] histories, reverse futility pruning and null move pruning
//! at non-PV nodes, then the moves in [`ordering`] order with late move reductions, futility and
//! late move pruning of quiet moves near the leaves; the quiescence search of `eval` at depth 0,
//! standing pat on the corrected evaluation.

mod correction;
mod helpers;
mod node;
mod ordering;
mod table;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::time::Instant;

use atomic_chess::{Color, Game, Move, Position};

use super::engine::{
    Engine, Limits, Proven, Score, SearchConfig, SearchInfo, SearchResult, SearchStats,
};
use super::eval::{self, Evaluator, MATE, MATE_BOUND, QStats};
use super::nnue::Network;
use super::params::SearchParams;
use correction::Correction;
use ordering::{MAX_PLY, Ordering};
use table::Table;

/// Nodes between looks at the clock and the stop flag (the node limit is checked at every node).
const CHECK_INTERVAL: u64 = 1024;
/// How long an infinite search with nothing left to search sleeps between looks at `stop`.
const IDLE_NAP: std::time::Duration = std::time::Duration::from_micros(500);
/// Half-width of the first aspiration window (centipawns).
const ASPIRATION: i32 = 40;
/// Lines searched to pick a random opening move among near-equal ones.
const RANDOM_LINES: usize = 4;

/// What one thread of a search reads inside the recursion: its limits and what the threads
/// share.
struct Ctx<'a> {
    /// The main thread's: the caller's `stop`; a helper's: set when the main thread is done.
    stop: &'a AtomicBool,
    hard: Option<Instant>,
    /// The node limit, on the nodes of every thread (each thread stops there).
    nodes: Option<u64>,
    /// The transposition table every thread reads and writes.
    table: &'a Table,
    /// Nodes of every thread, as each last published its own (every `CHECK_INTERVAL` nodes,
    /// and when it ends): with one thread, always that thread's published count.
    total: &'a AtomicU64,
    /// With several threads and `AbSmpShare`, the deepest iteration any of them finished.
    deepest: Option<&'a helpers::Deepest>,
}

/// A root move with the score of its last search (`-MATE` when it failed low).
#[derive(Clone, Debug)]
struct RootMove {
    mv: Move,
    score: i32,
    /// Random bonus (centipawns) in randomised openings; 0 otherwise.
    bonus: i32,
    pv: Vec<Move>,
}

/// The alpha-beta searcher. Keeps its transposition table and every thread's history
/// between searches.
pub struct AlphaBeta {
    table: Table,
    /// The table's size (the UCI `Hash`).
    hash_mb: usize,
    params: SearchParams,
    /// Threads of a search (`SearchConfig::threads`, at least 1).
    threads: usize,
    /// The network every thread evaluates with (`None`: the linear evaluation).
    network: Option<Arc<Network>>,
    /// One per thread that has searched: the main thread's first, then the helpers'. Kept
    /// between searches (their histories), made when the thread count first grows.
    workers: Vec<Worker>,
    /// Nodes of the last search, every thread's.
    last_nodes: u64,
    /// The selective depth the last search reported.
    last_seldepth: u32,
}

/// What one thread of a search owns: its own move ordering, correction histories, stacks and
/// counters, so that nothing on the hot path is shared but the table.
struct Worker {
    /// A copy of the engine's parameters (read at every node, so kept beside the rest).
    params: SearchParams,
    /// Late move reductions by depth and moves searched (from the parameters).
    lmr: Box<[[u8; 64]; 64]>,
    ordering: Ordering,
    correction: Correction,
    /// The static evaluation, with this thread's accumulators when it is a network.
    evaluator: Evaluator,
    /// Repetition keys: the game's reversible history, then the current line.
    keys: Vec<u64>,
    /// The index in `keys` of the current line's last null move (0 when there is none): a
    /// repetition is looked for no further back, since the pass is not a move.
    null_floor: usize,
    nodes: u64,
    qstats: QStats,
    aborted: bool,
    /// Set with `aborted` when another thread finished the iteration this one was in
    /// (`AbSmpShare`): the iteration is abandoned, not the search.
    overtaken: bool,
    /// The first iteration runs to its end whatever the limits (it takes well under a
    /// millisecond), so every search has a searched move.
    first_iteration: bool,
    seldepth: usize,
    /// Triangular principal-variation table.
    pv: Vec<[Option<Move>; MAX_PLY]>,
    pv_len: [usize; MAX_PLY],
    /// Static evaluation per ply of the current line (`-MATE` in check).
    evals: [i32; MAX_PLY],
    root_moves: Vec<RootMove>,
    /// The move a singular-extension search leaves out at each ply (`None` outside one).
    excluded: [Option<Move>; MAX_PLY],
    /// Depth of the current iteration: extensions stop past twice this many plies.
    root_depth: i32,
    /// Of `nodes()`, those already added to the search's shared total.
    published: u64,
}

impl Engine for AlphaBeta {
    /// A new `hash_mb` starts afresh (table, history and corrections); new parameters are
    /// taken at the next search.
    fn set_config(&mut self, config: &SearchConfig) {
        if config.hash_mb != self.hash_mb {
            *self = AlphaBeta::new(config);
        }
        self.threads = config.threads.max(1);
        self.network.clone_from(&config.network);
        self.set_params(&config.params);
    }

    /// Searches the game's position by iterative deepening until a limit is reached or `stop`
    /// is set, on `threads` threads. `lines` is the UCI MultiPV; `random` (a random number)
    /// asks for a random pick among near-equal moves (an opening not to be farmed).
    fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        lines: usize,
        random: Option<u64>,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        let start = Instant::now();
        self.table.new_search();
        let threads = self.threads.max(1);
        while self.workers.len() < threads {
            self.workers.push(Worker::new(&self.params));
        }
        let (main, helpers) = self.workers[..threads]
            .split_first_mut()
            .expect("at least one thread");
        main.prepare(game, &self.params, self.network.as_ref());
        let root = *game.position();
        let total = AtomicU64::new(0);
        let deepest = helpers::Deepest::new();
        // Iterations are shared for one line only: the helpers search one.
        let share = threads > 1 && self.params.ab_smp_share > 0 && lines == 1 && random.is_none();
        let ctx = Ctx {
            stop,
            hard: if limits.infinite {
                None
            } else {
                limits.hard.map(|h| start + h)
            },
            nodes: limits.nodes,
            table: &self.table,
            total: &total,
            deepest: share.then_some(&deepest),
        };

        let moves = root.legal_moves();
        if moves.is_empty() || root.board().king_of(root.turn()).is_none() {
            let lost = root.is_check() || root.board().king_of(root.turn()).is_none();
            let score = if lost { -MATE } else { 0 };
            let info = main.info(&ctx, start, 0, score, Vec::new(), 1);
            on_info(&info);
            return self.result(None, None, info, score, &root);
        }
        let moves = limits.root_moves(&moves);
        let lines = if random.is_some() {
            lines.max(RANDOM_LINES)
        } else {
            lines
        }
        .clamp(1, moves.len());
        let window = random.map_or(0, |_| {
            eval::centipawns(0.5 + self.params.random_window, self.params.eval_scale)
        });
        // A fixed random bonus per move, up to a fifth of the window: ties are broken at
        // random without changing which moves are near-equal.
        main.set_root_moves(&ctx, &root, &moves, |i| {
            random.map_or(0, |r| {
                (mix(r ^ (i as u64 + 1)) % (window as u64 / 5 + 1)) as i32
            })
        });
        let max_depth = limits.depth.map_or(MAX_PLY as i32 - 8, |d| {
            (d as i32).clamp(1, MAX_PLY as i32 - 8)
        });
        let mut main_search = || main.deepen(&ctx, &root, limits, lines, max_depth, start, on_info);
        let completed = if helpers.is_empty() {
            main_search()
        } else {
            for helper in helpers.iter_mut() {
                helper.prepare(game, &self.params, self.network.as_ref());
            }
            helpers::alongside(helpers, &ctx, &root, &moves, max_depth, main_search)
        };
        let main = &mut self.workers[0];

        if limits.infinite {
            // Pondering or `go infinite` must not answer before `stop` (or `ponderhit`), even
            // when there is nothing left to search (a mate found, the deepest iteration done).
            while !stop.load(AtomicOrdering::Relaxed) {
                std::thread::sleep(IDLE_NAP);
            }
        }
        let (depth, mut root_moves) = completed.unwrap_or_else(|| (0, main.root_moves.clone()));
        if random.is_some() {
            pick_random(&mut root_moves, lines, window);
        }
        let best = &root_moves[0];
        let mut pv = best.pv.clone();
        if pv.first() != Some(&best.mv) {
            pv = vec![best.mv];
        }
        // Every helper has published all its nodes on its way out: the count is exact.
        let info = main.info(
            &ctx,
            start,
            depth.max(1) as u32,
            best.score.max(-MATE),
            pv,
            1,
        );
        on_info(&info);
        let ponder = info.pv.get(1).copied();
        let (mv, score) = (best.mv, best.score.max(-MATE));
        self.result(Some(mv), ponder, info, score, &root)
    }

    fn prepare(&mut self) {
        self.table.commit();
    }

    /// Forgets the table and the history (a new game).
    fn clear(&mut self) {
        self.table.clear();
        for worker in &mut self.workers {
            worker.ordering.clear();
            worker.correction.clear();
        }
    }

    fn stats(&self) -> SearchStats {
        SearchStats {
            playouts: self.last_nodes,
            positions: self.last_nodes,
            max_depth: self.last_seldepth,
            ..SearchStats::default()
        }
    }
}

impl AlphaBeta {
    /// A searcher whose table uses about `config.hash_mb` MiB.
    pub fn new(config: &SearchConfig) -> AlphaBeta {
        AlphaBeta {
            table: Table::new(config.hash_mb),
            hash_mb: config.hash_mb,
            params: config.params.clone(),
            threads: config.threads.max(1),
            network: config.network.clone(),
            workers: vec![Worker::new(&config.params)],
            last_nodes: 0,
            last_seldepth: 0,
        }
    }

    /// Takes new parameters (every thread takes them at the next search).
    fn set_params(&mut self, params: &SearchParams) {
        if self.params != *params {
            self.params = params.clone();
        }
    }

    fn result(
        &mut self,
        best_move: Option<Move>,
        ponder_move: Option<Move>,
        info: SearchInfo,
        score: i32,
        root: &Position,
    ) -> SearchResult {
        self.last_seldepth = info.seldepth;
        self.last_nodes = info.nodes;
        // Only exact facts are reported as proven: a king-exploding capture now, or no move.
        // Deeper mate scores can rest on pruned moves and are shown, not claimed.
        let proven = match best_move {
            Some(m) if eval::wins_at_once(root, m) => Some(Proven::Win(1)),
            None if score == -MATE => Some(Proven::Loss(0)),
            None => Some(Proven::Draw),
            Some(_) => None,
        };
        let estimate = eval::win_probability(score, self.params.eval_scale);
        SearchResult::new(best_move, ponder_move, info, proven, estimate)
    }
}

impl Worker {
    /// A thread's state with empty histories.
    fn new(params: &SearchParams) -> Worker {
        Worker {
            params: params.clone(),
            lmr: lmr_table(params),
            ordering: Ordering::default(),
            correction: Correction::default(),
            evaluator: Evaluator::Linear,
            keys: Vec::new(),
            null_floor: 0,
            nodes: 0,
            qstats: QStats::default(),
            aborted: false,
            overtaken: false,
            first_iteration: true,
            seldepth: 0,
            pv: vec![[None; MAX_PLY]; MAX_PLY],
            pv_len: [0; MAX_PLY],
            evals: [0; MAX_PLY],
            root_moves: Vec::new(),
            excluded: [None; MAX_PLY],
            root_depth: 0,
            published: 0,
        }
    }

    /// Takes new parameters (the reduction table follows them).
    fn set_params(&mut self, params: &SearchParams) {
        if self.params != *params {
            self.params = params.clone();
            self.lmr = lmr_table(params);
        }
    }

    /// Readies the thread for a search of `game`'s position with `network` (or the linear
    /// evaluation).
    fn prepare(&mut self, game: &Game, params: &SearchParams, network: Option<&Arc<Network>>) {
        self.set_params(params);
        if !self.evaluator.is_for(network) {
            self.evaluator = Evaluator::new(network);
        }
        self.evaluator.reset(game.position());
        self.nodes = 0;
        self.qstats = QStats::default();
        self.aborted = false;
        self.overtaken = false;
        self.first_iteration = true;
        self.seldepth = 0;
        self.published = 0;
        self.ordering.new_search();
        self.keys.clear();
        self.null_floor = 0;
        self.keys.extend_from_slice(game.history_keys());
        let root = game.position().zobrist();
        if self.keys.last() != Some(&root) {
            self.keys.push(root);
        }
    }

    /// Positions this thread visited in this search (tree and quiescence nodes).
    fn nodes(&self) -> u64 {
        self.nodes + self.qstats.nodes
    }

    /// Adds the nodes not yet published to the search's total.
    fn publish(&mut self, ctx: &Ctx) {
        let nodes = self.nodes();
        ctx.total
            .fetch_add(nodes - self.published, AtomicOrdering::Relaxed);
        self.published = nodes;
    }

    /// The nodes of every thread as far as this one knows: the published total and its own
    /// unpublished nodes (with one thread, exactly its own).
    fn counted(&self, ctx: &Ctx) -> u64 {
        ctx.total.load(AtomicOrdering::Relaxed) + (self.nodes() - self.published)
    }

    /// The root moves in their first order: the table's move first, then the static order;
    /// `bonus` gives each (by index) its random bonus.
    fn set_root_moves(
        &mut self,
        ctx: &Ctx,
        root: &Position,
        moves: &[Move],
        bonus: impl Fn(usize) -> i32,
    ) {
        self.root_moves = moves
            .iter()
            .enumerate()
            .map(|(i, &mv)| RootMove {
                mv,
                score: -MATE,
                bonus: bonus(i),
                pv: vec![mv],
            })
            .collect();
        if let Some(first) = ctx.table.probe(root.zobrist()).and_then(|e| e.mv)
            && let Some(i) = self.root_moves.iter().position(|r| r.mv == first)
        {
            self.root_moves[..=i].rotate_right(1);
        }
    }

    /// The main thread's iterative deepening to `max_depth`: reports every finished iteration
    /// (its `lines` best moves), keeps the time and stops on the limits. Returns the depth and
    /// root moves of the last finished iteration (with a better move found by an unfinished
    /// one first), if one finished.
    #[allow(clippy::too_many_arguments)]
    fn deepen(
        &mut self,
        ctx: &Ctx,
        root: &Position,
        limits: &Limits,
        lines: usize,
        max_depth: i32,
        start: Instant,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) -> Option<(i32, Vec<RootMove>)> {
        let mut completed: Option<(i32, Vec<RootMove>)> = None;
        // Time stability: how often the best move changed lately, and since when it holds.
        let mut changes = 0.0f32;
        let mut stable_iterations = 0u32;
        let mut depth = 0;
        while depth < max_depth {
            depth += 1;
            self.first_iteration = depth == 1;
            self.root_depth = depth;
            let previous = completed.as_ref().map(|(_, r)| r[0].score);
            let mut score = match previous {
                Some(prev) if lines == 1 && depth >= 5 && prev.abs() < MATE_BOUND => {
                    self.aspiration(ctx, root, depth, prev)
                }
                _ => self.root(ctx, root, depth, -MATE, MATE, lines),
            };
            if let Some((done, moves)) = ctx.deepest.and_then(|d| self.take_over(d)) {
                // A helper finished this depth (or a deeper one) first: its iteration is
                // this one's, reported and timed as if the main thread had finished it.
                depth = done.max(depth);
                self.root_moves = moves;
                score = self.root_moves[0].score;
            } else if let Some(deepest) = ctx.deepest
                && !self.aborted
            {
                deepest.offer(depth, &self.root_moves);
            }
            if self.aborted {
                // A move that beat the previous best in the unfinished iteration is better
                // informed than the previous iteration's choice.
                // (With one line the root moves a move to the front only when it beats the
                // first move of this iteration.)
                if let Some((_, done)) = completed.as_mut()
                    && lines == 1
                    && self.root_moves[0].mv != done[0].mv
                {
                    let best = self.root_moves[0].clone();
                    done.retain(|r| r.mv != best.mv);
                    done.insert(0, best);
                }
                break;
            }
            let (previous_best, previous_score) = completed
                .as_ref()
                .map_or((None, score), |(_, r)| (Some(r[0].mv), r[0].score));
            changes *= 0.5;
            if previous_best.is_some_and(|b| b != self.root_moves[0].mv) {
                changes += 1.0;
                stable_iterations = 0;
            } else {
                stable_iterations += 1;
            }
            completed = Some((depth, self.root_moves.clone()));
            for i in 0..lines {
                let r = &self.root_moves[i];
                let info = self.info(
                    ctx,
                    start,
                    depth as u32,
                    r.score,
                    r.pv.clone(),
                    i as u32 + 1,
                );
                on_info(&info);
            }
            if limits.infinite {
                continue;
            }
            if self.root_moves.len() == 1 && limits.plays_a_single_move_at_once() {
                break;
            }
            // A win found by a search deep enough to have seen every reply on the way
            // (pruning spares only short lines): play it.
            if score >= MATE_BOUND
                && depth > 2 * (MATE - score)
                && limits
                    .mate
                    .is_none_or(|m| (MATE - score + 1) / 2 <= m as i32)
            {
                break;
            }
            if let Some(soft) = limits.soft {
                let factor = if self.params.ab_time_stability > 0 {
                    time_factor(
                        changes,
                        stable_iterations,
                        score - previous_score,
                        self.params.time_extension,
                    )
                } else {
                    1.0
                };
                if start.elapsed() >= soft.mul_f32(self.params.ab_time_fraction * factor) {
                    break;
                }
            }
        }

        completed
    }

    /// One iteration with an aspiration window around the previous score, widened on a fail.
    fn aspiration(&mut self, ctx: &Ctx, root: &Position, depth: i32, previous: i32) -> i32 {
        let mut delta = ASPIRATION;
        let (mut alpha, mut beta) = (previous - delta, previous + delta);
        loop {
            let score = self.root(ctx, root, depth, alpha, beta, 1);
            if self.aborted {
                return score;
            }
            if score <= alpha {
                alpha = (alpha - delta).max(-MATE);
            } else if score >= beta {
                beta = (beta + delta).min(MATE);
            } else {
                return score;
            }
            delta *= 2;
            if delta > 800 {
                alpha = -MATE;
                beta = MATE;
            }
        }
    }

    /// The root of one iteration: every move, the first `lines` with exact scores, the rest
    /// against the worst of those. Sorts the root moves best first and returns the best score.
    fn root(
        &mut self,
        ctx: &Ctx,
        root: &Position,
        depth: i32,
        alpha: i32,
        beta: i32,
        lines: usize,
    ) -> i32 {
        let mut best = -MATE;
        // Exact scores found so far in this iteration, best first (at most `lines`).
        let mut exact: arrayvec::ArrayVec<i32, 256> = arrayvec::ArrayVec::new();
        for i in 0..self.root_moves.len() {
            let (mv, bonus) = (self.root_moves[i].mv, self.root_moves[i].bonus);
            // The bar this move must clear: the worst of the best `lines` so far.
            let bar = if exact.len() >= lines {
                exact[lines - 1].max(alpha)
            } else {
                alpha
            };
            let mut child = *root;
            child.play_unchecked(mv);
            self.keys.push(child.zobrist());
            self.evaluator.push(&child);
            // Scores are compared with the move's bonus: search the child against shifted bounds.
            let (lo, hi) = (bar - bonus, beta - bonus);
            let mut score = if i < lines {
                -self.node(ctx, &child, depth - 1, -hi, -lo, 1, true, false)
            } else {
                let s = -self.node(ctx, &child, depth - 1, -lo - 1, -lo, 1, true, true);
                if s > lo && s < hi && !self.aborted {
                    -self.node(ctx, &child, depth - 1, -hi, -lo, 1, true, false)
                } else {
                    s
                }
            };
            self.keys.pop();
            self.evaluator.pop();
            if self.aborted {
                return best;
            }
            let improved = score + bonus > bar;
            if improved || i == 0 {
                if score + bonus <= bar {
                    // The first move failed low against the aspiration window: keep it first
                    // with its bound so the window widens.
                    score = score.min(bar - bonus);
                }
                let mut pv = vec![mv];
                pv.extend(self.pv[1][1..self.pv_len[1]].iter().map_while(|m| *m));
                let r = &mut self.root_moves[i];
                r.score = score;
                r.pv = pv;
                let at = exact.partition_point(|&s| s >= score + bonus);
                if at < lines {
                    if exact.len() == lines {
                        exact.pop();
                    }
                    exact.insert(at, score + bonus);
                }
            } else {
                self.root_moves[i].score = -MATE;
            }
            best = best.max(score + bonus);
            if lines == 1 && improved && i > 0 {
                // A new best move: search it first from now on.
                self.root_moves[..=i].rotate_right(1);
            }
            if best >= beta {
                break;
            }
        }
        if lines > 1 {
            // Stable: moves that failed low keep their previous order.
            self.root_moves
                .sort_by_key(|r| std::cmp::Reverse(r.score.saturating_add(r.bonus)));
        }
        best
    }

    /// A report of the search so far (nodes: every thread's, as far as this one knows).
    fn info(
        &self,
        ctx: &Ctx,
        start: Instant,
        depth: u32,
        score: i32,
        pv: Vec<Move>,
        multipv: u32,
    ) -> SearchInfo {
        let time = start.elapsed();
        let nodes = self.counted(ctx);
        let p = eval::win_probability(score, self.params.eval_scale);
        SearchInfo {
            depth,
            seldepth: (self.seldepth as u32).max(depth),
            nodes,
            nps: SearchInfo::rate(nodes, time),
            time,
            score: score_of(score),
            wdl: SearchInfo::wdl(p),
            pv,
            hashfull: ctx.table.permille_full(),
            multipv,
        }
    }

    /// Whether to abandon the search.
    fn should_stop(&mut self, ctx: &Ctx) -> bool {
        if self.nodes.is_multiple_of(CHECK_INTERVAL) {
            self.publish(ctx);
        }
        if !self.aborted
            && !self.first_iteration
            && (ctx.nodes.is_some_and(|n| self.counted(ctx) >= n)
                || (self.nodes.is_multiple_of(CHECK_INTERVAL)
                    && (ctx.stop.load(AtomicOrdering::Relaxed)
                        || ctx.hard.is_some_and(|h| Instant::now() >= h))))
        {
            self.aborted = true;
        }
        if !self.aborted
            && !self.first_iteration
            && self.nodes.is_multiple_of(CHECK_INTERVAL)
            && ctx.deepest.is_some_and(|d| d.depth() >= self.root_depth)
        {
            self.aborted = true;
            self.overtaken = true;
        }
        self.aborted
    }
}

/// Orders `root_moves` so that a random one of the best `lines` whose score is within
/// `window` centipawns of the best comes first (their bonuses already broke ties at random;
/// this spreads the choice further, weighted towards the better moves).
fn pick_random(root_moves: &mut [RootMove], lines: usize, window: i32) {
    let best = root_moves[0].score;
    if best.abs() >= MATE_BOUND {
        return;
    }
    let near = root_moves[..lines.min(root_moves.len())]
        .iter()
        .take_while(|r| r.score > -MATE && r.score >= best - window)
        .count();
    if near <= 1 {
        return;
    }
    // Deterministic given the bonuses (which came from the random number).
    let pick = root_moves[..near]
        .iter()
        .map(|r| r.bonus)
        .fold(0u64, |acc, b| mix(acc ^ b as u64))
        % near as u64;
    root_moves[..=pick as usize].rotate_right(1);
}

/// How much of the usual time an iteration may start in: more while the best move keeps
/// changing (`changes`, decayed by half an iteration) or the score falls, less once the best
/// move has held for several iterations; within `[0.5, max]`.
fn time_factor(changes: f32, stable_iterations: u32, score_change: i32, max: f32) -> f32 {
    let mut factor = 0.8 + 0.6 * changes;
    if score_change < -30 {
        factor *= 1.3;
    }
    if stable_iterations >= 4 {
        factor *= 0.8;
    }
    factor.clamp(0.5, max.max(0.5))
}

/// `AbLmrBase + ln(min(depth, AbLmrDepthCap)) ln(moves searched + 1) / AbLmrDiv`, in whole
/// plies (no reductions with `AbLmrDiv` = 0).
fn lmr_table(params: &SearchParams) -> Box<[[u8; 64]; 64]> {
    let mut table = Box::new([[0u8; 64]; 64]);
    if params.ab_lmr_div <= 0.0 {
        return table;
    }
    let cap = params.ab_lmr_depth_cap.max(1) as usize;
    for (depth, row) in table.iter_mut().enumerate().skip(1) {
        let d = depth.min(cap);
        for (searched, r) in row.iter_mut().enumerate() {
            let x = params.ab_lmr_base
                + (d as f32).ln() * ((searched + 1) as f32).ln() / params.ab_lmr_div;
            *r = x.clamp(0.0, 63.0) as u8;
        }
    }
    table
}

/// One SplitMix64 step from state `x`: the random bonuses and picks of randomised openings.
fn mix(x: u64) -> u64 {
    super::mix64(x.wrapping_add(super::GOLDEN_GAMMA))
}

/// A search score as UCI reports it.
fn score_of(score: i32) -> Score {
    if score >= MATE_BOUND {
        Score::Mate((MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        Score::Mate(-((MATE + score) / 2))
    } else {
        Score::Cp(score)
    }
}

/// Whether `color` has a piece other than pawns and the king (null moves are unsafe without).
fn has_pieces(pos: &Position, color: Color) -> bool {
    let b = pos.board();
    (b.by_color(color)
        & !b.by_role(atomic_chess::Role::Pawn)
        & !b.by_role(atomic_chess::Role::King))
    .any()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine on `threads` threads searching the starting position.
    fn search_start(threads: usize, limits: &Limits) -> (AlphaBeta, SearchResult) {
        let config = SearchConfig {
            hash_mb: 8,
            threads,
            ..SearchConfig::default()
        };
        let mut engine = AlphaBeta::new(&config);
        let game = Game::new(Position::startpos());
        let result = engine.search(&game, limits, &AtomicBool::new(false), 1, None, &mut |_| {});
        (engine, result)
    }

    #[test]
    fn helpers_search_alongside_and_their_nodes_are_counted() {
        let depth = Limits {
            depth: Some(7),
            ..Limits::default()
        };
        let (engine, result) = search_start(2, &depth);
        assert_eq!(engine.workers.len(), 2);
        assert!(engine.workers[1].nodes() > 0, "the helper searched nothing");
        let sum: u64 = engine.workers.iter().map(Worker::nodes).sum();
        assert_eq!(engine.stats().positions, sum);
        assert_eq!(result.info.nodes, sum);
        assert_eq!(result.info.depth, 7);
        // A node limit counts every thread's nodes: two threads together stop near it (a
        // helper runs on for at most a check interval and its quiescence nodes), not at twice.
        let n = 20_000;
        let nodes = Limits {
            nodes: Some(n),
            ..Limits::default()
        };
        let (engine, result) = search_start(2, &nodes);
        let total = engine.stats().positions;
        assert!(
            (n..n + n / 4).contains(&total),
            "{total} nodes for a limit of {n}"
        );
        assert!(result.best_move.is_some());
    }

    /// Root moves of `pos` with `first` first, every score `score`.
    fn root_moves_with_first(pos: &Position, first: Move, score: i32) -> Vec<RootMove> {
        let mut moves: Vec<RootMove> = pos
            .legal_moves()
            .iter()
            .map(|&mv| RootMove {
                mv,
                score,
                bonus: 0,
                pv: vec![mv],
            })
            .collect();
        let i = moves
            .iter()
            .position(|r| r.mv == first)
            .expect("a legal move");
        moves[..=i].rotate_right(1);
        moves
    }

    #[test]
    fn the_deepest_iteration_keeps_the_deepest_offer() {
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let deepest = helpers::Deepest::new();
        assert_eq!(deepest.depth(), 0);
        deepest.offer(5, &root_moves_with_first(&pos, moves[3], 7));
        deepest.offer(4, &root_moves_with_first(&pos, moves[1], 9));
        deepest.offer(5, &root_moves_with_first(&pos, moves[2], 11));
        let (depth, best) = deepest.get();
        assert_eq!((depth, deepest.depth()), (5, 5));
        assert_eq!((best[0].mv, best[0].score), (moves[3], 7));
        deepest.offer(6, &root_moves_with_first(&pos, moves[2], 11));
        assert_eq!(deepest.get().0, 6);
        assert_eq!(deepest.get().1[0].mv, moves[2]);
    }

    /// The main thread, finding that another thread finished a deeper iteration than the one
    /// it is in, reports that iteration as its own and ends there when it is the last depth.
    #[test]
    fn the_main_thread_takes_over_an_iteration_another_thread_finished() {
        let game = Game::new(Position::startpos());
        let root = *game.position();
        let params = SearchParams::default();
        let mut main = Worker::new(&params);
        main.prepare(&game, &params, None);
        let table = Table::new(8);
        let (stop, total) = (AtomicBool::new(false), AtomicU64::new(0));
        // A move the search would not choose, from a "helper" that finished depth 9.
        let odd = root.parse_uci("a2a3").unwrap();
        let deepest = helpers::Deepest::new();
        deepest.offer(9, &root_moves_with_first(&root, odd, 123));
        let ctx = Ctx {
            stop: &stop,
            hard: None,
            nodes: None,
            table: &table,
            total: &total,
            deepest: Some(&deepest),
        };
        main.set_root_moves(&ctx, &root, &root.legal_moves(), |_| 0);
        let mut reported = Vec::new();
        let limits = Limits::default();
        let done = main.deepen(&ctx, &root, &limits, 1, 9, Instant::now(), &mut |i| {
            reported.push(i.depth);
        });
        let (depth, moves) = done.expect("an iteration finished");
        assert_eq!((depth, moves[0].mv, moves[0].score), (9, odd, 123));
        assert_eq!(reported.last(), Some(&9));
        // Depth 1 is always the main thread's own; the take-over comes within a check
        // interval of nodes, long before a search of depth 9 would end.
        assert!(reported.len() < 9, "{reported:?}");
        assert!(main.nodes() < 20 * CHECK_INTERVAL, "{} nodes", main.nodes());
        // Without the shared iteration the same search finds another move at depth 9.
        main.prepare(&game, &params, None);
        let alone = Ctx {
            deepest: None,
            ..ctx
        };
        main.set_root_moves(&alone, &root, &root.legal_moves(), |_| 0);
        let (depth, moves) = main
            .deepen(&alone, &root, &limits, 1, 9, Instant::now(), &mut |_| {})
            .unwrap();
        assert_eq!(depth, 9);
        assert_ne!(moves[0].mv, odd);
    }

    #[test]
    fn the_log_reductions_grow_with_depth_and_move_number_and_a_zero_divisor_turns_them_off() {
        let params = SearchParams {
            ab_lmr_div: 2.25,
            ab_lmr_base: 0.75,
            ..SearchParams::default()
        };
        let t = lmr_table(&params);
        // 0.75 + ln 10 · ln 20 / 2.25 = 3.8.
        assert_eq!(t[10][19], 3);
        // The first move is never reduced below the base.
        assert_eq!(t[10][0], 0);
        for d in 1..63 {
            for n in 0..63 {
                assert!(t[d][n] <= t[d + 1][n] && t[d][n] <= t[d][n + 1], "{d} {n}");
            }
        }
        let off = lmr_table(&SearchParams {
            ab_lmr_div: 0.0,
            ..SearchParams::default()
        });
        assert!(off.iter().flatten().all(|&r| r == 0));
    }

    #[test]
    fn a_depth_cap_stops_the_reductions_growing_beyond_it_and_changes_nothing_below() {
        let uncapped = lmr_table(&SearchParams {
            ab_lmr_depth_cap: 64,
            ..SearchParams::default()
        });
        let capped = lmr_table(&SearchParams::default());
        assert_eq!(SearchParams::default().ab_lmr_depth_cap, 12);
        assert!(uncapped[..=12] == capped[..=12]);
        assert!(uncapped[13..] != capped[13..]);
        for d in 13..64 {
            assert_eq!(capped[d], capped[12], "depth {d}");
        }
        // 0.75 + ln 24 · ln 20 / 1.75 = 6.2 plies uncapped, 0.75 + ln 12 · ln 20 / 1.75 = 5.0.
        assert_eq!((uncapped[24][19], capped[24][19]), (6, 5));
    }

    #[test]
    fn time_grows_with_instability_and_a_falling_score_and_shrinks_when_stable() {
        let usual = time_factor(0.0, 1, 0, 2.0);
        assert!(time_factor(1.0, 0, 0, 2.0) > usual);
        assert!(time_factor(0.0, 1, -50, 2.0) > usual);
        assert!(time_factor(0.0, 6, 0, 2.0) < usual);
        // Within [0.5, TimeExtension] whatever happens.
        assert_eq!(time_factor(10.0, 0, -500, 2.0), 2.0);
        assert!(time_factor(0.0, 100, 500, 2.0) >= 0.5);
    }
}
