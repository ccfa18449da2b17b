//! Tunable search parameters, each also a UCI `spin` option so a tuner can reach it.
//!
//! Floats are exposed as integers with a fixed scale (for example `CPuct = 130` means 1.30), as
//! UCI spins are integers.

/// Everything tunable in the search. `Default` holds the tuned values.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchParams {
    /// PUCT exploration constant (values are win probabilities in 0..1).
    pub cpuct: f32,
    /// First-play urgency: an unvisited child is valued at its parent's value minus this times
    /// the square root of the prior mass already visited (Lc0's "reduction" strategy).
    pub fpu_reduction: f32,
    /// Softmax temperature of the policy (higher = flatter priors). The fitted logits are
    /// calibrated at 1; the search is strongest with flatter priors (2.0; docs/JOURNAL.md).
    pub policy_temperature: f32,
    /// Centipawns per logit when a score is mapped to a win probability.
    pub eval_scale: f32,
    /// Maximum plies of the leaf quiescence search.
    pub qsearch_depth: u32,
    /// Scale of the fitted policy's evaluation term in the refined priors (1 = as fitted,
    /// 0 = off: no refinement).
    pub prior_eval: f32,
    /// Visits a node needs before its priors are recomputed with the evaluation term (at most
    /// 1: from the expansion on, which costs a static evaluation per child of every node and
    /// halves the playout rate; 4 keeps most of the gain at a fraction of the cost).
    pub prior_eval_visits: u32,
    /// With randomisation on, moves whose value is within this of the best may be picked.
    pub random_window: f32,
    /// With randomisation on, only moves before this game ply are randomised.
    pub random_plies: u32,
    /// Extension factor of the soft time limit when the best move is unstable.
    pub time_extension: f32,
    /// Alpha-beta: no new iteration is started after this fraction of the soft time limit
    /// (the next one would take two to three times the time of all before it).
    pub ab_time_fraction: f32,
    /// Alpha-beta late move reductions: `AbLmrBase + ln(depth) ln(move number) / AbLmrDiv`
    /// plies (0: no late move reductions).
    pub ab_lmr_div: f32,
    /// See `ab_lmr_div`.
    pub ab_lmr_base: f32,
    /// Alpha-beta: the depth term of the late move reductions is `ln(min(depth, AbLmrDepthCap))`,
    /// so that reductions stop growing beyond this remaining depth (64: no cap). Why 12: a
    /// search given 4× the nodes of a 10+0.1 move (about a 3+2 move, where the bot plays)
    /// otherwise reduces its late moves so much near the root that it gains little from the
    /// extra depth: against Fairy-Stockfish the cap scored 76.8 % at 4× (uncapped 72.5 %) and
    /// 80.0 % at 1× (uncapped 82.8 %), 200 games each (docs/JOURNAL.md, sessions 34–35).
    pub ab_lmr_depth_cap: i32,
    /// Alpha-beta: at non-PV nodes of depth ≤ 4, captures whose blast balance loses more than
    /// this many centipawns per ply of depth are skipped (0 = off).
    pub ab_see_margin: i32,
    /// Alpha-beta: a node this deep or deeper without a table move is searched one ply less
    /// (internal iterative reduction; 0 = off).
    pub ab_iir_depth: i32,
    /// Alpha-beta: reverse futility margin per ply (centipawns).
    pub ab_rfp_margin: i32,
    /// Alpha-beta: futility margin per ply for quiet moves (centipawns).
    pub ab_futility_margin: i32,
    /// Alpha-beta: checks are extended by a ply (1) or not (0).
    pub ab_check_extension: i32,
    /// Alpha-beta: late move pruning keeps `AbLmpBase + depth²` quiet moves at depth
    /// ≤ `AbLmpDepth` (halved when the static evaluation is not improving and `AbImproving` is
    /// on).
    pub ab_lmp_base: i32,
    /// Alpha-beta: use whether the static evaluation improved on two plies before in reverse
    /// futility, late move pruning and reductions (1) or not (0).
    pub ab_improving: i32,
    /// Alpha-beta: scale the time by the best move's stability and the score's trend (1) or
    /// not (0). On since session 13: 45.8 % against 42.5 % at equal time against
    /// Fairy-Stockfish, 200 games each side by side (docs/JOURNAL.md): it spends less on settled
    /// moves and more where the choice is still open, as Fairy-Stockfish does.
    pub ab_time_stability: i32,
    /// Alpha-beta: a node whose side to move is under a blast threat is extended by a ply at
    /// any depth, like a check (1), or only at the leaves (0).
    pub ab_threat_extension: i32,
    /// Alpha-beta: weight (percent) of the pawn-structure correction history, which moves the
    /// static evaluation towards what searches of positions with the same pawns found (0 off).
    pub ab_corr_pawn: i32,
    /// Alpha-beta: weight (percent) of the correction histories keyed by each side's pieces
    /// other than pawns (0 off).
    pub ab_corr_pieces: i32,
    /// Alpha-beta: the largest correction one history entry holds (centipawns).
    pub ab_corr_max: i32,
    /// Alpha-beta: the quiescence search stands pat on the corrected evaluation (1) or on the
    /// static evaluation (0).
    pub ab_corr_qsearch: i32,
    /// Alpha-beta: late move pruning applies at depth ≤ this.
    pub ab_lmp_depth: i32,
    /// Alpha-beta: futility pruning of quiet moves applies at depth ≤ this.
    pub ab_futility_depth: i32,
    /// Alpha-beta: reverse futility pruning applies at depth ≤ this.
    pub ab_rfp_depth: i32,
    /// Alpha-beta: the null move's reduction is `3 + depth / AbNullDepthDiv`.
    pub ab_null_depth_div: i32,
    /// Alpha-beta: singular extensions from this depth on (0 = off; 8 since session 18). The
    /// table move is extended a ply when every other move, searched at half depth, falls short
    /// of its score by `AbSingularMargin` cp a ply; when they reach beta the node is cut
    /// (multi-cut); when the table move's score already beats beta it is reduced a ply.
    pub ab_singular_depth: i32,
    /// See `ab_singular_depth` (centipawns per ply of depth).
    pub ab_singular_margin: i32,
    /// See `ab_singular_depth`: plies of the negative extension.
    pub ab_singular_neg: i32,
    /// Alpha-beta with several threads: when any thread finishes an iteration, the threads
    /// still searching that depth or a shallower one abandon it and go on from the next, and
    /// the main thread reports the finished iteration as its own (1) or every thread finishes
    /// its own iterations (0). Why 1: on two threads the time to depth 20 went from 1.33× to
    /// 1.47× of one thread's (28 positions, 8 repeats) and 100 games at 10+0.1, both sides
    /// on two threads, gave +10 [−43, +64] (docs/JOURNAL.md, session 40).
    pub ab_smp_share: i32,
}

impl SearchParams {
    /// Whether the priors get the evaluation term when a node is expanded.
    pub fn eval_priors_at_expansion(&self) -> bool {
        self.prior_eval > 0.0 && self.prior_eval_visits <= 1
    }

    /// Whether a node with `visits` visits gets the evaluation term in its priors when it is
    /// expanded: always if refining starts at the first visit, and a node pruned from a full
    /// tree and expanded again gets the priors it had earned.
    pub fn expansion_with_eval(&self, visits: u32) -> bool {
        self.eval_priors_at_expansion()
            || (self.prior_eval > 0.0 && visits > self.prior_eval_visits)
    }

    /// Whether a node's priors are recomputed with the evaluation term when it has `visits`
    /// visits (once, later than its expansion).
    pub fn refines_priors_at(&self, visits: u32) -> bool {
        self.prior_eval > 0.0 && self.prior_eval_visits > 1 && visits == self.prior_eval_visits
    }
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams {
            cpuct: 1.3,
            fpu_reduction: 0.25,
            policy_temperature: 2.0,
            eval_scale: 208.0,
            qsearch_depth: 8,
            prior_eval: 1.0,
            prior_eval_visits: 4,
            random_window: 0.05,
            random_plies: 16,
            time_extension: 2.0,
            ab_time_fraction: 0.6,
            ab_lmr_div: 1.75,
            ab_lmr_base: 0.75,
            ab_lmr_depth_cap: 12,
            ab_see_margin: 100,
            ab_iir_depth: 4,
            ab_rfp_margin: 150,
            ab_futility_margin: 200,
            ab_check_extension: 1,
            ab_lmp_base: 4,
            ab_improving: 1,
            ab_time_stability: 1,
            ab_threat_extension: 1,
            ab_corr_pawn: 200,
            ab_corr_pieces: 200,
            ab_corr_max: 128,
            ab_corr_qsearch: 1,
            ab_lmp_depth: 3,
            ab_futility_depth: 2,
            ab_rfp_depth: 3,
            ab_null_depth_div: 4,
            ab_singular_depth: 8,
            ab_singular_margin: 6,
            ab_singular_neg: 1,
            ab_smp_share: 1,
        }
    }
}

/// One tunable parameter as a UCI spin option.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    /// The UCI option name.
    pub name: &'static str,
    /// Smallest allowed spin value.
    pub min: i64,
    /// Largest allowed spin value.
    pub max: i64,
    /// Spin value = parameter × scale.
    pub scale: f64,
    get: fn(&SearchParams) -> f64,
    set: fn(&mut SearchParams, f64),
}

impl ParamSpec {
    /// The parameter's current value as a spin value.
    pub fn spin(&self, params: &SearchParams) -> i64 {
        ((self.get)(params) * self.scale).round() as i64
    }

    /// Sets the parameter from a spin value, clamped to the allowed range.
    pub fn apply(&self, params: &mut SearchParams, spin: i64) {
        (self.set)(params, spin.clamp(self.min, self.max) as f64 / self.scale);
    }
}

macro_rules! spec {
    ($name:literal, $field:ident, $min:expr, $max:expr, $scale:expr, $ty:ty) => {
        ParamSpec {
            name: $name,
            min: $min,
            max: $max,
            scale: $scale,
            get: |p| p.$field as f64,
            set: |p, v| p.$field = v as $ty,
        }
    };
}

/// Every tunable parameter, in the order the UCI front lists them.
pub const PARAMS: &[ParamSpec] = &[
    spec!("CPuct", cpuct, 1, 1000, 100.0, f32),
    spec!("FpuReduction", fpu_reduction, 0, 200, 100.0, f32),
    spec!(
        "PolicyTemperature",
        policy_temperature,
        10,
        1000,
        100.0,
        f32
    ),
    spec!("EvalScale", eval_scale, 50, 2000, 1.0, f32),
    spec!("QSearchDepth", qsearch_depth, 0, 32, 1.0, u32),
    spec!("PriorEval", prior_eval, 0, 1000, 100.0, f32),
    spec!("PriorEvalVisits", prior_eval_visits, 1, 100_000, 1.0, u32),
    spec!("RandomWindow", random_window, 0, 500, 1000.0, f32),
    spec!("RandomPlies", random_plies, 0, 400, 1.0, u32),
    spec!("TimeExtension", time_extension, 100, 500, 100.0, f32),
    spec!("AbTimeFraction", ab_time_fraction, 10, 200, 100.0, f32),
    spec!("AbLmrDiv", ab_lmr_div, 0, 1000, 100.0, f32),
    spec!("AbLmrBase", ab_lmr_base, -200, 300, 100.0, f32),
    spec!("AbLmrDepthCap", ab_lmr_depth_cap, 1, 64, 1.0, i32),
    spec!("AbSeeMargin", ab_see_margin, 0, 2000, 1.0, i32),
    spec!("AbIirDepth", ab_iir_depth, 0, 64, 1.0, i32),
    spec!("AbRfpMargin", ab_rfp_margin, 0, 2000, 1.0, i32),
    spec!("AbFutilityMargin", ab_futility_margin, 0, 2000, 1.0, i32),
    spec!("AbCheckExtension", ab_check_extension, 0, 1, 1.0, i32),
    spec!("AbLmpBase", ab_lmp_base, 0, 64, 1.0, i32),
    spec!("AbImproving", ab_improving, 0, 1, 1.0, i32),
    spec!("AbTimeStability", ab_time_stability, 0, 1, 1.0, i32),
    spec!("AbThreatExtension", ab_threat_extension, 0, 1, 1.0, i32),
    spec!("AbCorrPawn", ab_corr_pawn, 0, 400, 1.0, i32),
    spec!("AbCorrPieces", ab_corr_pieces, 0, 400, 1.0, i32),
    spec!("AbCorrMax", ab_corr_max, 1, 1000, 1.0, i32),
    spec!("AbCorrQsearch", ab_corr_qsearch, 0, 1, 1.0, i32),
    spec!("AbLmpDepth", ab_lmp_depth, 0, 64, 1.0, i32),
    spec!("AbFutilityDepth", ab_futility_depth, 0, 64, 1.0, i32),
    spec!("AbRfpDepth", ab_rfp_depth, 0, 64, 1.0, i32),
    spec!("AbNullDepthDiv", ab_null_depth_div, 1, 64, 1.0, i32),
    spec!("AbSingularDepth", ab_singular_depth, 0, 64, 1.0, i32),
    spec!("AbSingularMargin", ab_singular_margin, 0, 100, 1.0, i32),
    spec!("AbSingularNeg", ab_singular_neg, 0, 3, 1.0, i32),
    spec!("AbSmpShare", ab_smp_share, 0, 1, 1.0, i32),
];

/// Finds a parameter by its UCI name (case-insensitive, as UCI option names are).
pub fn find(name: &str) -> Option<&'static ParamSpec> {
    PARAMS
        .iter()
        .find(|spec| spec.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_inside_their_ranges_and_round_trip() {
        let defaults = SearchParams::default();
        for spec in PARAMS {
            let spin = spec.spin(&defaults);
            assert!(
                spec.min <= spin && spin <= spec.max,
                "{} = {spin}",
                spec.name
            );
            let mut params = defaults.clone();
            spec.apply(&mut params, spin);
            assert_eq!(params, defaults, "{}", spec.name);
        }
    }

    #[test]
    fn apply_clamps_and_find_ignores_case() {
        let mut params = SearchParams::default();
        let spec = find("cpuct").expect("CPuct exists");
        spec.apply(&mut params, 100_000);
        assert_eq!(params.cpuct, 10.0);
        assert!(find("NoSuchParam").is_none());
    }
}
