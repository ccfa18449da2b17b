//! The searches' repetition rule: a twofold repetition since the last irreversible move is a
//! draw (as Lc0 does; a searcher that let the line go on would find the same position again
//! and the opponent could claim the third), in the MCTS solver and the alpha-beta search alike.

/// Whether the line's last position (the last of `keys`, which is not empty) repeats one of
/// the `halfmove` positions before it (those since the last irreversible move), looking no
/// further back than index `null_floor`: the alpha-beta search's last null move on the line
/// (0 when there is none, as always in the MCTS). A position before a pass that comes back
/// came back only because one side did not move; scoring it a draw let the side that passed
/// claim a draw the game does not hold (Stockfish's rule too: back to the position after the
/// pass, no further).
pub(crate) fn repeats(keys: &[u64], halfmove: u32, null_floor: usize) -> bool {
    let last = keys.len() - 1;
    let window = (halfmove as usize).min(last - null_floor);
    keys[last - window..last].contains(&keys[last])
}

#[cfg(test)]
mod tests {
    use super::repeats;

    #[test]
    fn a_repetition_is_looked_for_since_the_last_irreversible_move_and_the_last_null_move() {
        // Keys of a line: 1 2 3 4 5 6 1 (the first position again, six plies later).
        let keys = [1, 2, 3, 4, 5, 6, 1];
        assert!(repeats(&keys, 6, 0));
        assert!(repeats(&keys, 40, 0));
        // An irreversible move after the first position: not the same game position.
        assert!(!repeats(&keys, 5, 0));
        // A null move at index 3: the first position lies before the pass, so no draw...
        assert!(!repeats(&keys, 6, 3));
        // ...but a position from the pass on is a repetition like any other (4 5 6 4).
        assert!(repeats(&[1, 2, 3, 4, 5, 6, 4], 6, 3));
        assert!(repeats(&[1, 2, 3, 4, 5, 6, 4], 3, 3));
        assert!(!repeats(&[1, 2, 3, 4, 5, 6, 3], 6, 3));
        // The root alone, or a floor at the last position, finds nothing.
        assert!(!repeats(&[7], 10, 0));
        assert!(!repeats(&keys, 6, 6));
    }
}
