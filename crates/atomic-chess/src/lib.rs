//! Atomic chess rules exactly as lichess plays them.
