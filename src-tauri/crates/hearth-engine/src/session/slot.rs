//! One KV sequence of the session's unified cache and what is in it: its tokens, owner,
//! checkpoints, the marks a prompt stops at, and the logits after its last token when kept.

use llama_cpp_2::token::LlamaToken;

use crate::checkpoints::Checkpoints;
use crate::decoding::Lane;
use crate::kv_memory::ConversationId;
use crate::vision;

/// One KV sequence and what is in it.
pub(super) struct Slot {
    pub(super) seq: i32,
    /// Tokens whose keys and values are in the cache for `seq`, in position order. A sampled
    /// token that was never decoded (end of turn, length limit, stop) is not in it.
    pub(super) cached: Vec<LlamaToken>,
    /// The conversation whose cache this is (`None`: a one-off prompt, or none yet).
    pub(super) owner: Option<ConversationId>,
    /// A reply is writing in it.
    pub(super) busy: bool,
    /// When it last served a reply ([`super::Session::clock`]), for least-recently-used choices.
    pub(super) used_at: u64,
    /// Where its cache can be cut back to, when the model's cannot be cut back freely.
    pub(super) checkpoints: Checkpoints,
    /// Token counts at which the prompt being read takes a checkpoint (reading stops there).
    pub(super) marks: Vec<usize>,
    /// The mark where the user's last message starts.
    pub(super) message_mark: Option<usize>,
    /// The logits after the last cached token, when the read that ended there kept them (a
    /// draft read whole after a pause): a reply to exactly the cached prompt samples its first
    /// token from them and reads nothing. Any change to `cached` drops them.
    pub(super) tail_logits: Option<Vec<f32>>,
}

impl Slot {
    pub(super) fn new(seq: i32) -> Self {
        Slot {
            seq,
            cached: Vec::new(),
            owner: None,
            busy: false,
            used_at: 0,
            checkpoints: Checkpoints::default(),
            marks: Vec::new(),
            message_mark: None,
            tail_logits: None,
        }
    }

    /// Forgets what its sequence held (its cells were cleared): tokens, checkpoints, marks.
    pub(super) fn empty(&mut self) {
        self.cached.clear();
        self.checkpoints.clear();
        self.marks.clear();
        self.tail_logits = None;
    }

    /// Notes `tokens` decoded after the cached ones.
    pub(super) fn extend(&mut self, tokens: &[LlamaToken]) {
        if !tokens.is_empty() {
            self.cached.extend_from_slice(tokens);
            self.tail_logits = None;
        }
    }

    /// Notes the cache cut back to its first `keep` tokens (its cells were removed).
    pub(super) fn cut(&mut self, keep: usize) {
        self.cached.truncate(keep);
        self.checkpoints.cut(keep);
        self.tail_logits = None;
    }

    /// The logits after the last cached token, if a read that ended there kept them.
    pub(super) fn tail_logits(&self) -> Option<&[f32]> {
        self.tail_logits.as_deref()
    }

    /// The position of its `index`th cached token (of the next one at `cached.len()`): its index,
    /// but after an image a model reads in two dimensions ([`vision::position`]).
    pub(super) fn position(&self, index: usize) -> u32 {
        vision::position(&self.cached, index) as u32
    }

    /// The position the next token is decoded at.
    pub(super) fn next_pos(&self) -> usize {
        vision::position(&self.cached, self.cached.len())
    }

    /// The position of its last cell (-1: none), as llama.cpp's `seq_pos_max` has it.
    pub(super) fn last_cell_pos(&self) -> i64 {
        match self.cached.len() {
            0 => -1,
            n => vision::position(&self.cached, vision::cut_point(&self.cached, n - 1)) as i64,
        }
    }

    /// Its sequence and tokens as a decoder writes after them.
    pub(super) fn lane(&self) -> Lane<'_> {
        Lane { seq: self.seq, cached: &self.cached, next_pos: self.next_pos() as i32 }
    }

    /// How many of `want` prompt tokens can be read before the next checkpoint is due.
    pub(super) fn readable(&self, want: usize) -> usize {
        let at = self.cached.len();
        self.marks.iter().find(|&&mark| mark > at).map_or(want, |&mark| want.min(mark - at))
    }
}
