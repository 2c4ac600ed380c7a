//! Context checkpoints, for models whose cache cannot simply be cut back to an earlier token.
//!
//! A recurrent or hybrid model's state (Mamba, LFM2, Qwen 3.5 …) holds only its latest
//! position, and a sliding-window model's window layers (Gemma 3 …) may hold only the last
//! `n_swa` tokens' cells — always after a saved state is restored, since llama.cpp saves a
//! sequence without the cells its next token cannot see, and while reading when the window cache
//! is not full-size: neither can go back to token N by dropping the cells after it. A checkpoint is that part of a sequence's state (llama.cpp's `PARTIAL_ONLY`
//! state: the recurrent state or the window's cells) saved when the sequence held exactly `at`
//! tokens; the full-attention layers are cut back as usual, so restoring a checkpoint and
//! dropping every cell from `at` on leaves the cache of the first `at` tokens. They are taken
//! where a chat is cut back: where the user's last message starts (an edit, a draft typed) and a
//! few tokens before the prompt's end (a regenerated reply, a reply spelled otherwise next turn).

use llama_cpp_2::model::LlamaModel;

/// How far back a sequence's cache can be cut by dropping its last cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutBack {
    /// To any token: every layer attends to the whole context.
    Free,
    /// While the window before the cut is still cached: a sliding window of this many tokens.
    Window(usize),
    /// Not at all: recurrent layers hold only the latest state.
    Never,
}

impl CutBack {
    pub fn of(model: &LlamaModel) -> Self {
        Self::from_layout(model.is_recurrent() || model.is_hybrid(), model.n_swa() as usize)
    }

    fn from_layout(recurrent: bool, n_swa: usize) -> Self {
        match (recurrent, n_swa) {
            (true, _) => CutBack::Never,
            (false, 0) => CutBack::Free,
            (false, window) => CutBack::Window(window),
        }
    }

    pub fn needs_checkpoints(self) -> bool {
        self != CutBack::Free
    }
}

/// Tokens before the prompt's end where a checkpoint is taken: a regenerated reply reads them
/// again (the closing of the user's turn and the reply's opening), and so does a draft at the
/// next key (its last word and the closing).
pub const END_CHECKPOINT_BACK: usize = 8;
/// Checkpoints kept per sequence: the latest messages' openings and ends, as many as fit
/// `MAX_CHECKPOINT_BYTES` (a window's cells are large: ~10 MB per checkpoint for Gemma 3 1B's
/// layout, against ~0.1 MB of recurrent state for a small hybrid model), the last two always.
const MAX_CHECKPOINTS: usize = 8;
const MAX_CHECKPOINT_BYTES: usize = 32 << 20;
const MIN_CHECKPOINTS: usize = 2;

/// The non-truncatable part of a sequence's state when it held `at` tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    pub at: usize,
    /// Taken where the user's message starts (kept over the end checkpoints when space is short).
    pub opens_message: bool,
    pub data: Vec<u8>,
}

/// A sequence's checkpoints, in token order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checkpoints(Vec<Checkpoint>);

impl Checkpoints {
    pub fn new(list: Vec<Checkpoint>) -> Self {
        let mut checkpoints = Checkpoints::default();
        for checkpoint in list {
            checkpoints.add(checkpoint);
        }
        checkpoints
    }

    /// Adds one taken now, the sequence holding `checkpoint.at` tokens: those past it are stale;
    /// a message's end checkpoint replaces the one before it within the same message (a draft
    /// takes one at each key); beyond the limits the oldest end checkpoints go first.
    pub fn add(&mut self, checkpoint: Checkpoint) {
        self.0.retain(|c| c.at < checkpoint.at);
        if !checkpoint.opens_message && self.0.last().is_some_and(|last| !last.opens_message) {
            self.0.pop();
        }
        self.0.push(checkpoint);
        while self.0.len() > MAX_CHECKPOINTS || (self.bytes() > MAX_CHECKPOINT_BYTES && self.0.len() > MIN_CHECKPOINTS) {
            let older = self.0.len() - MIN_CHECKPOINTS;
            let oldest_end = self.0[..older].iter().position(|c| !c.opens_message).unwrap_or(0);
            self.0.remove(oldest_end);
        }
    }

    /// The latest checkpoint at or before `keep` tokens.
    pub fn at_or_before(&self, keep: usize) -> Option<&Checkpoint> {
        self.0.iter().rev().find(|c| c.at <= keep && c.at > 0)
    }

    /// Drops those taken after the sequence's first `keep` tokens (it was cut back there).
    pub fn cut(&mut self, keep: usize) {
        self.0.retain(|c| c.at <= keep);
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }

    pub fn list(&self) -> &[Checkpoint] {
        &self.0
    }

    pub fn bytes(&self) -> usize {
        self.0.iter().map(|c| c.data.len() + 16).sum()
    }
}

/// Where a prompt of `len` tokens, read from token `from` on, takes checkpoints: where the
/// user's message starts (when known) and `END_CHECKPOINT_BACK` tokens before its end.
pub fn marks(len: usize, from: usize, message_start: Option<usize>) -> Vec<usize> {
    let end = len.saturating_sub(END_CHECKPOINT_BACK);
    let mut marks: Vec<usize> = message_start.into_iter().chain([end]).filter(|&at| at > from && at < len).collect();
    marks.sort_unstable();
    marks.dedup();
    marks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(at: usize, opens_message: bool) -> Checkpoint {
        Checkpoint { at, opens_message, data: vec![at as u8] }
    }

    fn ats(checkpoints: &Checkpoints) -> Vec<(usize, bool)> {
        checkpoints.list().iter().map(|c| (c.at, c.opens_message)).collect()
    }

    #[test]
    fn layouts_that_cut_back_freely_take_no_checkpoints() {
        let cases = [
            ((false, 0), CutBack::Free),
            ((false, 512), CutBack::Window(512)),
            ((true, 0), CutBack::Never),
            ((true, 4096), CutBack::Never),
        ];
        for ((recurrent, n_swa), expected) in cases {
            assert_eq!(CutBack::from_layout(recurrent, n_swa), expected, "{recurrent} {n_swa}");
            assert_eq!(expected.needs_checkpoints(), expected != CutBack::Free);
        }
    }

    #[test]
    fn marks_fall_inside_what_is_read() {
        let cases = [
            ((100, 0, Some(60)), vec![60, 92]),
            ((100, 70, Some(60)), vec![92]),
            ((100, 95, Some(60)), vec![]),
            ((100, 0, None), vec![92]),
            ((100, 0, Some(92)), vec![92]),
            ((5, 0, Some(2)), vec![2]),
            ((100, 0, Some(100)), vec![92]),
        ];
        for ((len, from, start), expected) in cases {
            assert_eq!(marks(len, from, start), expected, "{len} {from} {start:?}");
        }
    }

    #[test]
    fn a_message_keeps_its_opening_and_one_end_and_stale_ones_go() {
        let mut list = Checkpoints::default();
        list.add(at(10, true));
        list.add(at(20, false));
        list.add(at(24, false)); // A draft's next key: its end replaces the last.
        assert_eq!(ats(&list), [(10, true), (24, false)]);
        list.add(at(15, false)); // Cut back and read again from 15: those past it are stale.
        assert_eq!(ats(&list), [(10, true), (15, false)]);
        list.add(at(40, true));
        list.add(at(50, false));
        assert_eq!(ats(&list), [(10, true), (15, false), (40, true), (50, false)]);
        assert_eq!(list.at_or_before(45).map(|c| c.at), Some(40));
        assert_eq!(list.at_or_before(9).map(|c| c.at), None);
        list.cut(45);
        assert_eq!(ats(&list), [(10, true), (15, false), (40, true)]);
    }

    #[test]
    fn large_checkpoints_keep_fewer_but_the_last_two() {
        let mut list = Checkpoints::default();
        for turn in 0..4 {
            list.add(Checkpoint { at: 100 * turn + 10, opens_message: true, data: vec![0; 12 << 20] });
            list.add(Checkpoint { at: 100 * turn + 90, opens_message: false, data: vec![0; 12 << 20] });
        }
        assert_eq!(ats(&list), [(310, true), (390, false)]);
        let mut huge = Checkpoints::default();
        huge.add(Checkpoint { at: 10, opens_message: true, data: vec![0; 40 << 20] });
        huge.add(Checkpoint { at: 90, opens_message: false, data: vec![0; 40 << 20] });
        assert_eq!(ats(&huge), [(10, true), (90, false)]);
    }

    #[test]
    fn beyond_the_limit_the_oldest_ends_go_first() {
        let mut list = Checkpoints::default();
        for turn in 0..6 {
            list.add(at(100 * turn + 10, true));
            list.add(at(100 * turn + 90, false));
        }
        assert_eq!(list.list().len(), MAX_CHECKPOINTS);
        let kept = [(10, true), (110, true), (210, true), (310, true), (410, true), (490, false), (510, true), (590, false)];
        assert_eq!(ats(&list), kept);
    }
}
