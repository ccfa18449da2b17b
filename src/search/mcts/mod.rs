//! The Monte-Carlo tree search proper.
//!
//! One playout: walk down from the root by PUCT, play the moves on a copy of the root position,
//! stop at a node never evaluated (or a proven one), evaluate it (terminal checks, then the
//! quiescence search mapped to a win probability; no random playouts), and back the value up.
//! A node is expanded (its children created with their priors) on its second visit, so leaves
//! cost one evaluation and no memory.
//!
//! The solver: a node whose side to move can blow up the enemy king is a proven win at its first
//! visit; children that blow up the king are created as proven; mates, stalemates, repetitions,
//! the fifty-move rule and insufficient material are detected when a node is evaluated; proofs
//! propagate up in every backup (a child lost for its mover proves the parent won, all children
//! won for their movers prove it lost). Selection never enters a proven-lost child, the root
//! plays the shortest proven win at once and a proven loss only when every move is lost.
//!
//! Threads: with `threads > 1` the playouts run in batches (`batch.rs`): the search thread
//! selects several paths at once, spread by virtual losses, all threads do the leaves' pure
//! work (terminal checks, quiescence, move generation, priors, proofs of new children), and
//! the search thread applies the results in order. Every tree change above (solver, backups,
//! pruning, reuse) stays on the search thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use atomic_chess::{Game, Move, MoveList, Position};

mod batch;

use super::engine::{
    Engine, Limits, Proven, Score, SearchConfig, SearchInfo, SearchResult, SearchStats,
};
use super::eval::{self, QStats};
use super::params::SearchParams;
use super::policy;
use super::tree::{Node, NodeId, Proof, ROOT, Tree};

/// Interval between periodic `info` reports.
const INFO_INTERVAL: Duration = Duration::from_secs(1);
/// How long an infinite search with a full tree sleeps between looks at its stop flag.
const FULL_TREE_NAP: Duration = Duration::from_micros(200);
/// The clock is read once per this many playouts.
const TIME_CHECK_INTERVAL: u64 = 16;

/// The Monte-Carlo tree search. Holds the tree between searches, so the subtree of the moves
/// actually played is reused.
pub struct Mcts {
    config: SearchConfig,
    tree: Tree,
    /// The position at the tree's root, if the tree holds a search.
    root_pos: Option<Position>,
    /// Lines reported at the end of the current search (MultiPV).
    lines: usize,
    stats: SearchStats,
    qstats: QStats,
    /// The tree ran out of memory during this search.
    full: bool,
    /// Pruning cannot make room in this search (a tiny `Hash`).
    unprunable: bool,
    // Scratch buffers, kept to avoid allocations in the playout loop.
    path: Vec<NodeId>,
    keys: Vec<u64>,
    priors: policy::Priors,
    /// Scratch list of a node's child moves, for `refine_priors`.
    refine_moves: Vec<Move>,
    children: Vec<Node>,
    /// Scratch state of batched playouts (`threads > 1`).
    batch: batch::Batch,
}

impl Engine for Mcts {
    fn set_config(&mut self, config: &SearchConfig) {
        self.resize_for(config);
    }

    fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        lines: usize,
        random: Option<u64>,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        self.lines = lines.max(1);
        self.run_search(game, limits, stop, random, on_info)
    }

    fn clear(&mut self) {
        self.forget();
    }

    fn stats(&self) -> SearchStats {
        self.stats
    }
}

impl Mcts {
    /// A search with an empty tree.
    pub fn new(config: &SearchConfig) -> Mcts {
        Mcts {
            tree: Tree::new(config.hash_mb),
            config: config.clone(),
            root_pos: None,
            lines: 1,
            stats: SearchStats::default(),
            qstats: QStats::default(),
            full: false,
            unprunable: false,
            path: Vec::new(),
            keys: Vec::new(),
            priors: policy::Priors::default(),
            refine_moves: Vec::new(),
            children: Vec::new(),
            batch: batch::Batch::default(),
        }
    }

    /// Changes the configuration. A new `hash_mb` drops the tree.
    fn resize_for(&mut self, config: &SearchConfig) {
        if config.hash_mb != self.config.hash_mb {
            self.tree.resize(config.hash_mb);
            self.root_pos = None;
        }
        self.config = config.clone();
    }

    /// Forgets the tree (a new game).
    fn forget(&mut self) {
        self.tree.clear();
        self.root_pos = None;
    }

    /// Searches the game's current position. Blocking; returns when a limit is hit, `stop`
    /// becomes true, or (unless `limits.infinite`) the root is proven or has a single move.
    /// `random` picks the move among near-equal ones (randomised openings).
    fn run_search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        random: Option<u64>,
        on_info: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        let start = Instant::now();
        let root_pos = *game.position();
        self.stats = SearchStats::default();
        self.qstats = QStats::default();
        self.full = false;
        self.unprunable = false;
        self.prepare_root(game);
        self.stats.reused = u64::from(self.tree.get(ROOT).visits);

        // Repetition keys: the game's reversible history, then the root, then the path.
        self.keys.clear();
        self.keys.extend_from_slice(game.history_keys());
        if self.keys.last() != Some(&root_pos.zobrist()) {
            self.keys.push(root_pos.zobrist());
        }
        let base_keys = self.keys.len();

        let root_moves = root_pos.legal_moves();
        if root_moves.is_empty() {
            let proof =
                if root_pos.is_check() || root_pos.board().king_of(root_pos.turn()).is_none() {
                    Proof::Loss(0)
                } else {
                    Proof::Draw
                };
            self.tree.get_mut(ROOT).proof = proof;
            return self.finish(start, on_info, None);
        }
        if !self.tree.get(ROOT).is_expanded() {
            let value = 1.0
                - eval::win_probability(
                    eval::qsearch_root(
                        &root_pos,
                        &root_moves,
                        &self.config.params,
                        &mut self.qstats,
                    ),
                    self.config.params.eval_scale,
                );
            let root = self.tree.get_mut(ROOT);
            *root = Node::new(None, 1.0);
            root.visits = 1;
            root.q = value;
            // The root always fits: a fresh or at most half-full arena has room for 256 nodes.
            self.expand(ROOT, &root_pos, &root_moves);
        }
        self.refresh(ROOT);

        let single = root_moves.len() == 1;
        let threads = self.config.threads.max(1);
        if threads == 1 {
            self.run(
                &root_pos, base_keys, limits, stop, on_info, start, single, None,
            );
        } else {
            let pool = batch::Pool::new(self.config.params.clone(), threads);
            std::thread::scope(|scope| {
                let workers = (1..threads)
                    .map(|_| scope.spawn(|| pool.serve()).thread().clone())
                    .collect();
                // Dropping the crew (also on a panic) lets the workers go.
                let mut crew = batch::Crew::new(&pool, workers);
                self.run(
                    &root_pos,
                    base_keys,
                    limits,
                    stop,
                    on_info,
                    start,
                    single,
                    Some(&mut crew),
                );
            });
            self.qstats.nodes += pool.quiescence_nodes();
        }
        self.finish(start, on_info, random)
    }

    /// The playout loop of [`Mcts::run_search`]: one playout at a time, or with a crew of
    /// worker threads, one batch of playouts at a time (`batch.rs`).
    #[expect(
        clippy::too_many_arguments,
        reason = "the state of one search, passed once"
    )]
    fn run(
        &mut self,
        root_pos: &Position,
        base_keys: usize,
        limits: &Limits,
        stop: &AtomicBool,
        on_info: &mut dyn FnMut(&SearchInfo),
        start: Instant,
        single: bool,
        mut crew: Option<&mut batch::Crew>,
    ) {
        let mut last_info = start;
        let mut watch = Watch::default();
        let mut proven_at = None;
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            if self.full && self.make_room(limits, start, stop) {
                self.full = false;
            }
            if !limits.infinite && (single || self.full || self.root_settled(&mut proven_at)) {
                break;
            }
            if limits.nodes.is_some_and(|n| self.stats.playouts >= n) {
                break;
            }
            if let Some(mate) = limits.mate
                && let Proof::Win(d) = self.tree.get(ROOT).proof
                && u32::from(d).div_ceil(2) <= mate
            {
                break;
            }
            if let Some(depth) = limits.depth
                && self.stats.playouts > 0
                && self.stats.depth_sum / self.stats.playouts >= u64::from(depth)
            {
                break;
            }
            // Not before the first playouts: a root preparation that used up a tiny budget
            // must still leave a searched move, not an unvisited (arbitrary) one. A batch is
            // a few dozen playouts: the clock is read after each.
            if self.stats.playouts > 0
                && (crew.is_some() || self.stats.playouts.is_multiple_of(TIME_CHECK_INTERVAL))
            {
                let now = Instant::now();
                if !limits.infinite
                    && self.out_of_time(limits, now.duration_since(start), &mut watch)
                {
                    break;
                }
                if now.duration_since(last_info) >= INFO_INTERVAL {
                    last_info = now;
                    let info = self.line_info(start, self.best_child(ROOT, None), 1);
                    on_info(&info);
                }
            }
            if self.full {
                // Only reached when infinite: nothing more to learn, wait for `stop` without
                // burning the CPU. A short nap: the flag is polled, so the nap is the latency.
                std::thread::sleep(FULL_TREE_NAP);
                continue;
            }
            match crew.as_deref_mut() {
                None => self.playout(root_pos, base_keys),
                Some(crew) => {
                    // Never past a node limit.
                    let left = limits.nodes.map_or(u64::MAX, |n| n - self.stats.playouts);
                    let size = crew
                        .batch_size()
                        .min(usize::try_from(left).unwrap_or(usize::MAX));
                    self.batch(root_pos, base_keys, crew, size);
                }
            }
        }
        self.flush_refines();
    }

    /// Frees half of a full tree by pruning its least-visited branches (`Tree::prune`), so a
    /// long search (a slow time control, pondering, a big node budget) keeps going instead of
    /// stopping when the `Hash` is used up. Not once a timed search is past its soft limit
    /// (it would stop soon anyway); a stop request or the hard limit aborts the copy. Returns
    /// whether there is room again.
    fn make_room(&mut self, limits: &Limits, start: Instant, stop: &AtomicBool) -> bool {
        // Pruning moves nodes: refinements a batch left for the next must be done first.
        self.flush_refines();
        if !limits.infinite && limits.soft.is_some_and(|soft| start.elapsed() >= soft) {
            return false;
        }
        let hard = if limits.infinite { None } else { limits.hard };
        let abort =
            || stop.load(Ordering::Relaxed) || hard.is_some_and(|hard| start.elapsed() >= hard);
        if self.unprunable {
            return false;
        }
        let target = self.tree.capacity() / 2;
        let pruned = self.tree.prune(target, &abort).is_some();
        if pruned {
            self.stats.prunes += 1;
        } else if !abort() {
            // Even the root's children alone fill the tree: do not try again this search.
            self.unprunable = true;
        }
        pruned
    }

    /// Whether the root's proof ends the search. A proven loss or draw, or a win with the next
    /// move, ends it at once. A longer proven win keeps searching the unproven root moves for a
    /// shorter one (selection skips proven root children then) for as many playouts again as the
    /// proof took, plus a little: a shorter win is both safer and what puzzle suites expect.
    fn root_settled(&self, proven_at: &mut Option<u64>) -> bool {
        match self.tree.get(ROOT).proof {
            Proof::Unknown => false,
            Proof::Win(d) if d > 1 => {
                let at = *proven_at.get_or_insert(self.stats.playouts);
                let open = self
                    .tree
                    .get(ROOT)
                    .child_ids()
                    .any(|c| self.tree.get(c).proof == Proof::Unknown);
                !open || self.stats.playouts >= 2 * at + 2000
            }
            _ => true,
        }
    }

    /// Reuses the subtree of the moves played since the last search, or starts afresh.
    fn prepare_root(&mut self, game: &Game) {
        let target = *game.position();
        let mut reused = false;
        if let Some(old) = self.root_pos
            && !self.tree.is_empty()
        {
            // Find the old root in the game and follow the moves played since.
            let mut positions = Vec::with_capacity(game.moves().len() + 1);
            positions.push(*game.start());
            for &m in game.moves() {
                let mut next = positions[positions.len() - 1];
                next.play_unchecked(m);
                positions.push(next);
            }
            if let Some(index) = positions.iter().rposition(|p| *p == old) {
                let mut id = ROOT;
                let mut found = true;
                for &m in &game.moves()[index..] {
                    if let Some(child) = self
                        .tree
                        .get(id)
                        .child_ids()
                        .find(|&c| self.tree.get(c).mv == Some(m))
                    {
                        id = child;
                    } else {
                        found = false;
                        break;
                    }
                }
                // Nodes grow with visits: a subtree holding more than half the arena is
                // refused below anyway, so do not spend a long copy on it first.
                let share = u64::from(self.tree.get(id).visits) * self.tree.len() as u64
                    / u64::from(self.tree.get(ROOT).visits.max(1));
                if found && self.tree.get(id).visits > 0 && share * 2 <= self.tree.capacity() as u64
                {
                    self.tree.reroot(id);
                    reused = self.tree.len() * 2 <= self.tree.capacity();
                }
            }
        }
        if !reused {
            self.tree.clear();
        }
        let root = self.tree.get_mut(ROOT);
        root.mv = None;
        if !root.is_expanded() {
            // A leaf proof (a repetition, say) depended on the old path: search the root afresh.
            *root = Node::new(None, 1.0);
        }
        self.root_pos = Some(target);
    }

    /// One playout from the root.
    fn playout(&mut self, root_pos: &Position, base_keys: usize) {
        let mut pos = *root_pos;
        self.path.clear();
        self.path.push(ROOT);
        self.keys.truncate(base_keys);
        let mut id = ROOT;
        // Whether an expansion on this path changed its node's proof (children that
        // win or lose at once are created proven): the backup must then carry the change up
        // even where the new leaf's value leaves a node unchanged.
        let mut expansion_changed = false;
        let value = loop {
            let node = *self.tree.get(id);
            if let Some(exact) = node.proof.value_for_mover()
                && id != ROOT
            {
                break exact;
            }
            if node.visits == 0 {
                break self.evaluate(id, &pos);
            }
            if !node.is_expanded() {
                let mut moves = MoveList::new();
                pos.legal_moves_into(&mut moves);
                if !self.expand(id, &pos, &moves) {
                    self.full = true;
                    break node.q;
                }
                let expanded = self.tree.get(id);
                expansion_changed = expanded.proof != node.proof;
            }
            if self.config.params.refines_priors_at(node.visits) {
                self.refine_priors(id, &pos);
            }
            let child = self.select(id);
            let Some(m) = self.tree.get(child).mv else {
                break node.q;
            };
            pos.play_unchecked(m);
            self.keys.push(pos.zobrist());
            self.path.push(child);
            id = child;
        };
        let depth = (self.path.len() - 1) as u32;
        self.stats.playouts += 1;
        self.stats.depth_sum += u64::from(depth);
        self.stats.max_depth = self.stats.max_depth.max(depth);
        self.backup(value, expansion_changed);
    }

    /// First visit of a node: terminal checks, then the quiescence evaluation. Returns the value
    /// for the player who moved into the node.
    fn evaluate(&mut self, id: NodeId, pos: &Position) -> f32 {
        self.stats.positions += 1;
        let leaf = evaluate_leaf(&self.keys, pos, &self.config.params, &mut self.qstats);
        self.set_leaf(id, leaf)
    }

    /// Stores a leaf evaluation in its node; returns the value for the player who moved into it.
    fn set_leaf(&mut self, id: NodeId, leaf: Leaf) -> f32 {
        if let Some(proof) = leaf.proof {
            self.tree.get_mut(id).proof = proof;
        }
        leaf.value
    }

    /// Creates the children of `id`. Returns false if the arena is full.
    fn expand(&mut self, id: NodeId, pos: &Position, moves: &MoveList) -> bool {
        self.stats.positions += 1;
        let params = &self.config.params;
        let with_eval = params.expansion_with_eval(self.tree.get(id).visits);
        new_children(
            pos,
            moves,
            params,
            with_eval,
            &mut self.priors,
            &mut self.children,
        );
        if !self.tree.add_children(id, &self.children) {
            return false;
        }
        self.refresh(id);
        true
    }

    /// Recomputes the priors of an expanded node's children with the evaluation term, once the
    /// node has shown it is worth a static evaluation per child.
    fn refine_priors(&mut self, id: NodeId, pos: &Position) {
        let node = *self.tree.get(id);
        self.refine_moves.clear();
        self.refine_moves
            .extend(node.child_ids().filter_map(|c| self.tree.get(c).mv));
        if self.refine_moves.len() != usize::from(node.children) {
            return;
        }
        policy::priors(
            pos,
            &self.refine_moves,
            &self.config.params,
            true,
            &mut self.priors,
        );
        for (cid, &prior) in node.child_ids().zip(self.priors.iter()) {
            self.tree.get_mut(cid).prior = prior;
        }
    }

    /// PUCT selection among the children of `id`.
    fn select(&self, id: NodeId) -> NodeId {
        let node = self.tree.get(id);
        let params = &self.config.params;
        let sqrt_n = (node.visits as f32).sqrt();
        let explore = params.cpuct * sqrt_n;
        // A proven root keeps looking for a shorter win among its unproven moves only.
        let shortening = id == ROOT && matches!(node.proof, Proof::Win(_));
        let mut visited_policy = 0.0f32;
        let mut best = node.first;
        let mut best_score = f32::NEG_INFINITY;
        // Unvisited children all share the first-play value, so the best of them is the one
        // with the highest prior; it is compared once the first-play value is known.
        let mut unvisited: Option<(f32, NodeId)> = None;
        for (cid, child) in node.child_ids().zip(self.tree.children(node)) {
            // Unproven children first: they are nearly all of them.
            let q = if child.proof == Proof::Unknown {
                if child.visits == 0 {
                    if unvisited.is_none_or(|(prior, _)| child.prior > prior) {
                        unvisited = Some((child.prior, cid));
                    }
                    continue;
                }
                visited_policy += child.prior;
                child.q
            } else {
                if child.visits > 0 {
                    visited_policy += child.prior;
                }
                match child.proof {
                    _ if shortening => continue,
                    Proof::Loss(d) => 10.0 - f32::from(d) * 0.01,
                    Proof::Win(_) => continue,
                    _ => 0.5,
                }
            };
            let score = q + explore * child.prior / (1.0 + child.visits as f32);
            if score > best_score {
                best_score = score;
                best = cid;
            }
        }
        if let Some((prior, cid)) = unvisited {
            let fpu = 1.0 - node.q - params.fpu_reduction * visited_policy.sqrt();
            if fpu + explore * prior > best_score {
                best = cid;
            }
        }
        best
    }

    /// Backs `value` (for the player who moved into the leaf) up the path.
    /// Proofs are recomputed only up to the first node they leave unchanged.
    /// With `changed_above`, every node of the path is refreshed: a node expanded on the way
    /// down already holds its new values, so comparing before and after would stop too early.
    fn backup(&mut self, value: f32, changed_above: bool) {
        let mut v = value;
        let mut changed = true;
        for i in (0..self.path.len()).rev() {
            let id = self.path[i];
            let node = self.tree.get_mut(id);
            node.visits += 1;
            node.q += (v - node.q) / node.visits as f32;
            if changed && node.is_expanded() {
                let before = node.proof;
                self.refresh(id);
                changed = changed_above || before != self.tree.get(id).proof;
            }
            v = 1.0 - v;
        }
    }

    /// Recomputes the proof of an expanded node from its children's.
    fn refresh(&mut self, id: NodeId) {
        let node = *self.tree.get(id);
        let mut win: Option<u16> = None;
        let mut longest_loss = 0u16;
        let mut all_proven = true;
        let mut any_draw = false;
        for cid in node.child_ids() {
            match self.tree.get(cid).proof {
                Proof::Loss(d) => win = Some(win.map_or(d + 1, |w| w.min(d + 1))),
                Proof::Win(d) => longest_loss = longest_loss.max(d + 1),
                Proof::Draw => any_draw = true,
                Proof::Unknown => all_proven = false,
            }
        }
        let proof = match win {
            Some(d) => Proof::Win(d),
            None if all_proven && any_draw => Proof::Draw,
            None if all_proven => Proof::Loss(longest_loss),
            None => Proof::Unknown,
        };
        self.tree.get_mut(id).proof = proof;
    }

    /// The child to play from `id`: the shortest proven win; otherwise the most visited move
    /// that is not proven lost (a proven draw if the best alternative looks worse than a draw);
    /// the longest loss only if every move is lost. With `randomize`, a random pick among
    /// near-equal moves chosen with the random number `random`.
    fn best_child(&self, id: NodeId, random: Option<u64>) -> Option<NodeId> {
        let node = *self.tree.get(id);
        if !node.is_expanded() {
            return None;
        }
        let children: Vec<NodeId> = node.child_ids().collect();
        let get = |c: &NodeId| *self.tree.get(*c);
        let by_visits = |c: &NodeId| {
            let n = get(c);
            // Unvisited children tie on visits and value: the prior decides between them.
            (n.visits, (n.q * 1e6) as i64, (n.prior * 1e6) as i64)
        };
        if let Some(&win) = children
            .iter()
            .filter(|c| matches!(get(c).proof, Proof::Loss(_)))
            .min_by_key(|c| {
                (
                    proof_distance(get(c).proof),
                    std::cmp::Reverse(get(c).visits),
                )
            })
        {
            return Some(win);
        }
        let open: Vec<NodeId> = children
            .iter()
            .copied()
            .filter(|c| !matches!(get(c).proof, Proof::Win(_)))
            .collect();
        if open.is_empty() {
            return children
                .iter()
                .copied()
                .max_by_key(|c| (proof_distance(get(c).proof), get(c).visits));
        }
        let mut best = *open.iter().max_by_key(|c| by_visits(c))?;
        let best_node = get(&best);
        if best_node.proof != Proof::Draw
            && best_node.q < 0.47
            && let Some(&draw) = open.iter().find(|c| get(c).proof == Proof::Draw)
        {
            best = draw;
        }
        if let Some(random) = random
            && get(&best).proof == Proof::Unknown
        {
            let window = self.config.params.random_window;
            let best_value = get(&best).q;
            let best_visits = get(&best).visits;
            let pool: Vec<NodeId> = open
                .iter()
                .copied()
                .filter(|c| {
                    let n = get(c);
                    n.proof == Proof::Unknown
                        && n.visits * 20 >= best_visits
                        && n.q >= best_value - window
                })
                .collect();
            let total: u64 = pool.iter().map(|c| u64::from(get(c).visits)).sum();
            if total > 0 {
                let mut pick = random % total;
                for c in pool {
                    let v = u64::from(get(&c).visits);
                    if pick < v {
                        best = c;
                        break;
                    }
                    pick -= v;
                }
            }
        }
        Some(best)
    }

    /// Principal variation starting with the child `first`.
    fn pv_from(&self, first: NodeId) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut id = first;
        while let Some(m) = self.tree.get(id).mv {
            pv.push(m);
            if pv.len() >= 64 {
                break;
            }
            match self.best_child(id, None) {
                Some(next)
                    if self.tree.get(next).visits > 0
                        || self.tree.get(next).proof != Proof::Unknown =>
                {
                    id = next;
                }
                _ => break,
            }
        }
        pv
    }

    /// Score of playing the root child `child`, from the root's side to move.
    fn child_score(&self, child: &Node) -> (Score, f32, (u32, u32, u32)) {
        match child.proof {
            Proof::Loss(d) => (Score::Mate(i32::from(d) / 2 + 1), 1.0, (1000, 0, 0)),
            Proof::Win(d) => (Score::Mate(-(i32::from(d) + 1) / 2), 0.0, (0, 0, 1000)),
            Proof::Draw => (Score::Cp(0), 0.5, (0, 1000, 0)),
            Proof::Unknown => {
                let v = child.q.clamp(0.0, 1.0);
                (
                    Score::Cp(eval::centipawns(v, self.config.params.eval_scale)),
                    v,
                    SearchInfo::wdl(v),
                )
            }
        }
    }

    fn line_info(&self, start: Instant, child: Option<NodeId>, multipv: u32) -> SearchInfo {
        let elapsed = start.elapsed();
        let root = *self.tree.get(ROOT);
        let (score, _, wdl) = match (root.proof, child) {
            (Proof::Loss(d), _) => (Score::Mate(-(i32::from(d) / 2)), 0.0, (0, 0, 1000)),
            (Proof::Draw, None) => (Score::Cp(0), 0.5, (0, 1000, 0)),
            (_, Some(c)) => self.child_score(self.tree.get(c)),
            (_, None) => (Score::Cp(0), 0.5, (0, 1000, 0)),
        };
        let pv = child.map(|c| self.pv_from(c)).unwrap_or_default();
        let playouts = self.stats.playouts;
        SearchInfo {
            depth: (self.stats.depth_sum / playouts.max(1)).max(1) as u32,
            seldepth: self.stats.max_depth.max(1),
            nodes: playouts,
            nps: SearchInfo::rate(playouts, elapsed),
            time: elapsed,
            score,
            wdl,
            pv,
            hashfull: self.tree.permille_full(),
            multipv,
        }
    }

    fn finish(
        &mut self,
        start: Instant,
        on_info: &mut dyn FnMut(&SearchInfo),
        random: Option<u64>,
    ) -> SearchResult {
        self.stats.positions += self.qstats.nodes;
        let best = self.best_child(ROOT, random);
        let info = self.line_info(start, best, 1);
        on_info(&info);
        if self.lines > 1 && best.is_some() {
            let mut others: Vec<NodeId> = self
                .tree
                .get(ROOT)
                .child_ids()
                .filter(|&c| Some(c) != best)
                .collect();
            others.sort_by_key(|&c| {
                let n = self.tree.get(c);
                match n.proof {
                    Proof::Loss(d) => (0, i64::from(d)),
                    Proof::Win(d) => (2, -i64::from(d)),
                    _ => (1, -i64::from(n.visits)),
                }
            });
            for (i, c) in others.into_iter().take(self.lines - 1).enumerate() {
                let line = self.line_info(start, Some(c), i as u32 + 2);
                on_info(&line);
            }
        }
        let root = *self.tree.get(ROOT);
        let proven = match root.proof {
            Proof::Win(d) => Some(Proven::Win(u32::from(d).div_ceil(2))),
            Proof::Loss(d) => Some(Proven::Loss(u32::from(d) / 2)),
            Proof::Draw => Some(Proven::Draw),
            Proof::Unknown => None,
        };
        let estimate = best.map_or(0.5, |c| self.child_score(self.tree.get(c)).1);
        let best_move = best.and_then(|c| self.tree.get(c).mv);
        let ponder_move = best
            .and_then(|c| self.best_child(c, None))
            .and_then(|c| self.tree.get(c).mv);
        SearchResult::new(best_move, ponder_move, info, proven, estimate)
    }

    /// Whether the time limits say stop. Stops at `hard`; at `soft` unless the best move is
    /// unstable (then at `soft · extension`).
    fn out_of_time(&self, limits: &Limits, elapsed: Duration, watch: &mut Watch) -> bool {
        if limits.hard.is_some_and(|hard| elapsed >= hard) {
            return true;
        }
        let Some(soft) = limits.soft else {
            return false;
        };
        let root = self.tree.get(ROOT);
        let mut first: Option<Node> = None;
        let mut best_value: Option<Node> = None;
        for cid in root.child_ids() {
            let c = *self.tree.get(cid);
            if matches!(c.proof, Proof::Win(_)) {
                continue;
            }
            if first.is_none_or(|f| c.visits > f.visits) {
                first = Some(c);
            }
        }
        let Some(first) = first else {
            return true;
        };
        for cid in root.child_ids() {
            let c = *self.tree.get(cid);
            if c.proof == Proof::Unknown
                && c.visits * 10 >= first.visits
                && best_value.is_none_or(|b| c.q > b.q)
            {
                best_value = Some(c);
            }
        }
        let value = first.q;
        if watch.reference.is_none() && elapsed >= soft / 4 {
            watch.reference = Some(value);
        }
        let unstable = best_value.is_some_and(|b| b.mv != first.mv && b.q > value + 0.01)
            || watch.reference.is_some_and(|r| value < r - 0.05);
        let extension = f64::from(self.config.params.time_extension);
        let mut target = if unstable {
            Duration::try_from_secs_f64(soft.as_secs_f64() * extension).unwrap_or(Duration::MAX)
        } else {
            soft
        };
        if let Some(hard) = limits.hard {
            target = target.min(hard);
        }
        elapsed >= target
    }
}

/// A leaf's evaluation: its proof if the game is decided there, and its value for the player
/// who moved into it (exact for a proof).
#[derive(Clone, Copy, Debug)]
struct Leaf {
    proof: Option<Proof>,
    value: f32,
}

/// First visit of a position: terminal checks, then the quiescence evaluation. `keys` ends with
/// the repetition keys of the position's path (its own key last), back at least to its last
/// irreversible move. Pure: batched searches run it on worker threads.
fn evaluate_leaf(keys: &[u64], pos: &Position, params: &SearchParams, qstats: &mut QStats) -> Leaf {
    let mut moves = MoveList::new();
    pos.legal_moves_into(&mut moves);
    if let Some(proof) = terminal(keys, pos, &moves) {
        let value = proof.value_for_mover().unwrap_or(0.5);
        return Leaf {
            proof: Some(proof),
            value,
        };
    }
    let cp = eval::qsearch_root(pos, &moves, params, qstats);
    Leaf {
        proof: None,
        value: 1.0 - eval::win_probability(cp, params.eval_scale),
    }
}

/// The solver's view of a position reached in the tree, if the game is decided there. `keys`
/// as for [`evaluate_leaf`].
fn terminal(keys: &[u64], pos: &Position, moves: &MoveList) -> Option<Proof> {
    // Repetition (twofold, as Lc0 does): the key seen before since the last irreversible move.
    let len = keys.len();
    let window = (pos.halfmove_clock() as usize).min(len - 1);
    if keys[len - 1 - window..len - 1].contains(&keys[len - 1]) {
        return Some(Proof::Draw);
    }
    if pos.board().king_of(pos.turn()).is_none() {
        return Some(Proof::Loss(0));
    }
    if moves.is_empty() {
        return Some(if pos.is_check() {
            Proof::Loss(0)
        } else {
            Proof::Draw
        });
    }
    // Two-ply look-ahead: a king-exploding capture or a checkmate wins at once.
    if eval::any_wins_or_mates_at_once(pos, moves) {
        return Some(Proof::Win(1));
    }
    if pos.halfmove_clock() >= 100 || pos.is_insufficient_material() {
        return Some(Proof::Draw);
    }
    // The opponent's side of the look-ahead: every move allows a king-exploding capture.
    if eval::loses_at_once(pos, moves) {
        return Some(Proof::Loss(2));
    }
    None
}

/// The children of a position about to be expanded, into `children`: one per move with its
/// prior, highest prior first, and created proven where the move's outcome is known at once.
/// Pure: batched searches run it on worker threads.
fn new_children(
    pos: &Position,
    moves: &MoveList,
    params: &SearchParams,
    with_eval: bool,
    priors: &mut policy::Priors,
    children: &mut Vec<Node>,
) {
    policy::priors(pos, moves.as_slice(), params, with_eval, priors);
    children.clear();
    // Highest prior first (ties in generation order): deterministic, and the likely moves
    // are scanned first. The order is found by sorting one integer key per move (the
    // prior's descending `total_cmp` rank, then the move's index), which is cheaper than
    // sorting the nodes and gives exactly the order of a stable sort by prior.
    let mut order: arrayvec::ArrayVec<u64, 256> = priors
        .iter()
        .enumerate()
        .map(|(i, &prior)| (u64::from(descending_key(prior)) << 8) | i as u64)
        .collect();
    order.sort_unstable();
    // Under a blast threat, a move that leaves one open loses at once: create it proven.
    // The priors found out which moves do (their features include it).
    let threatened = priors.threatened;
    let checks = eval::check_squares(pos);
    for &key in &order {
        let i = (key & 0xff) as usize;
        let (m, prior) = (moves[i], priors[i]);
        let mut child = Node::new(Some(m), prior);
        if eval::wins_at_once(pos, m) || (checks.contains(m.to()) && eval::mates_at_once(pos, m)) {
            child.proof = Proof::Loss(0);
        } else if threatened && priors.leaves_threat[i] {
            child.proof = Proof::Win(1);
        }
        children.push(child);
    }
}

/// Time-management memory within one search.
#[derive(Default)]
struct Watch {
    /// The best move's value when a quarter of the soft limit had passed.
    reference: Option<f32>,
}

/// A key whose ascending order is the descending `f32::total_cmp` order of `x`.
fn descending_key(x: f32) -> u32 {
    // `total_cmp`'s own trick: flip the magnitude bits of negative numbers, so that the bits
    // compare as signed integers; then shift to unsigned and reverse.
    let bits = x.to_bits() as i32;
    let ordered = bits ^ ((((bits >> 31) as u32) >> 1) as i32);
    !((ordered as u32) ^ 0x8000_0000)
}

fn proof_distance(proof: Proof) -> u16 {
    match proof {
        Proof::Win(d) | Proof::Loss(d) => d,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_priors(searcher: &Mcts) -> Vec<(Move, f32)> {
        searcher
            .tree
            .get(ROOT)
            .child_ids()
            .map(|c| {
                let n = searcher.tree.get(c);
                (n.mv.expect("a child has a move"), n.prior)
            })
            .collect()
    }

    /// The root passes `PriorEvalVisits` visits in a search, so its children end with the
    /// evaluation-refined priors; with the term off they keep the hand-made ones. Also when a
    /// batched search refines them one batch late.
    #[test]
    fn priors_are_refined_once_a_node_has_enough_visits() {
        let pos = Position::from_fen(
            "r1bqkb1r/pppp1ppp/2n1pn2/8/3P4/2N1PN2/PPP2PPP/R1BQKB1R w KQkq - 1 4",
        )
        .expect("valid FEN");
        let game = Game::new(pos);
        let limits = Limits {
            nodes: Some(300),
            ..Limits::default()
        };
        for (prior_eval, threads) in [(0.0, 1), (0.5, 1), (0.0, 2), (0.5, 2)] {
            let params = SearchParams {
                prior_eval,
                prior_eval_visits: 8,
                ..SearchParams::default()
            };
            let mut searcher = Mcts::new(&SearchConfig {
                hash_mb: 4,
                threads,
                params: params.clone(),
                ..SearchConfig::default()
            });
            searcher.search(
                &game,
                &limits,
                &AtomicBool::new(false),
                1,
                None,
                &mut |_| {},
            );
            let children = root_priors(&searcher);
            let moves: Vec<Move> = children.iter().map(|&(m, _)| m).collect();
            let mut expected = policy::Priors::default();
            policy::priors(&pos, &moves, &params, prior_eval > 0.0, &mut expected);
            for (&(m, got), &want) in children.iter().zip(expected.iter()) {
                assert!(
                    (got - want).abs() < 1e-6,
                    "{m}: {got} vs {want} at {prior_eval}, {threads} threads"
                );
            }
        }
    }

    /// After a search every expanded node holds the proof its children give:
    /// backups carry each change up, including one made by an expansion that finds children
    /// proven at once (wins, or moves that leave a king blast open). And the visits add up:
    /// every playout through a node went on into one child, except the one that evaluated it
    /// and those that ended at it proven, so batched searches leave no virtual loss behind.
    #[test]
    fn every_node_agrees_with_its_children_after_a_search() {
        for threads in [1, 2] {
            for fen in [
                "r1bqkb1r/pppp1ppp/2n1pn2/8/3P4/2N1PN2/PPP2PPP/R1BQKB1R w KQkq - 1 4",
                "r6r/1p1k2p1/4Nn1p/pP3p2/Pn3P2/8/2P1p1PP/R1B1K2R w KQ - 3 20",
                "6k1/5ppp/8/2b5/8/4B3/5PPP/6K1 w - - 0 1",
            ] {
                let game = Game::new(Position::from_fen(fen).expect("valid FEN"));
                let mut searcher = Mcts::new(&SearchConfig {
                    hash_mb: 16,
                    threads,
                    ..SearchConfig::default()
                });
                let limits = Limits {
                    nodes: Some(4000),
                    ..Limits::default()
                };
                searcher.search(
                    &game,
                    &limits,
                    &AtomicBool::new(false),
                    1,
                    None,
                    &mut |_| {},
                );
                let stats = searcher.stats();
                let root = *searcher.tree.get(ROOT);
                // The root's first visit is its evaluation before the first playout.
                assert_eq!(
                    u64::from(root.visits),
                    stats.reused + stats.playouts + 1,
                    "{fen}, {threads} threads: root visits"
                );
                assert!(stats.playouts <= 4000, "{fen}: {} playouts", stats.playouts);
                let mut checked = 0;
                for id in 0..searcher.tree.len() as NodeId {
                    let node = *searcher.tree.get(id);
                    let through: u32 = searcher.tree.children(&node).iter().map(|c| c.visits).sum();
                    let visits = if node.visits == 0 { 0 } else { 1 + through };
                    if node.proof == Proof::Unknown {
                        assert_eq!(node.visits, visits, "{fen}, {threads} threads: node {id}");
                    } else {
                        assert!(node.visits >= visits, "{fen}, {threads} threads: node {id}");
                    }
                    if !node.is_expanded() {
                        continue;
                    }
                    searcher.refresh(id);
                    let fresh = searcher.tree.get(id);
                    assert_eq!(
                        fresh.proof, node.proof,
                        "{fen}, {threads} threads: node {id} ({:?}) is stale",
                        node.mv
                    );
                    checked += 1;
                }
                assert!(checked > 100, "{fen}: only {checked} expanded nodes");
            }
        }
    }

    #[test]
    fn descending_key_reverses_total_cmp() {
        let values = [
            f32::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            1e-30,
            0.25,
            0.5,
            1.0,
            f32::INFINITY,
            f32::NAN,
        ];
        for a in values {
            for b in values {
                assert_eq!(
                    descending_key(a).cmp(&descending_key(b)),
                    b.total_cmp(&a),
                    "{a} vs {b}"
                );
            }
        }
    }
}
