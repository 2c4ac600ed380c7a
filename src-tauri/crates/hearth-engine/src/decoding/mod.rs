//! How a reply is decoded, behind the one trait the scheduler drives ([`Decoder`]).
//!
//! The scheduler (`session`) owns the context, the batch and the slots (KV sequences); a decoder
//! owns one reply's state and the slots it writes in (its lanes). Each step the scheduler asks
//! every decoder that writes for its tokens ([`Decoder::write`]), fills the rest of the batch
//! with prompt chunks ([`Decoder::prompt`]), decodes, and hands the logits back
//! ([`Decoder::after_decode`]); it copies lanes that fork and drops drafts that were rejected.
//! A new way of decoding is a new module here, not more scheduler code.
//!
//! - [`sampling`]: one lane, the sampler chain token by token, drafts checked beside it.
//! - [`beam`]: a lane per beam, forked by sharing cells.
//! - [`consensus`]: candidates that are sampling replies of their own, judged as a group.

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::mpsc::UnboundedSender;

use hearth_core::{FinishReason, GenEvent, ReplyRequest};

use crate::drafter::Drafter;

pub(crate) mod beam;
mod beam_reasoning;
pub(crate) mod consensus;
pub(crate) mod sampling;

pub(crate) use beam::{BeamReply, Fork};
pub(crate) use consensus::{Group, Member};
pub(crate) use sampling::{LogitsAt, Reply};

/// A lane as a decoder sees it: its slot's KV sequence and the tokens cached there.
pub(crate) struct Lane<'a> {
    pub seq: i32,
    pub cached: &'a [LlamaToken],
    /// The position the next token is decoded at (`cached.len()` but after an image read in
    /// two dimensions: [`crate::vision::position`]).
    pub next_pos: i32,
}

/// What a step has left when a decoder writes.
pub(crate) struct Room<'a> {
    /// Free cells of the cache.
    pub cells: usize,
    /// Free places in the batch.
    pub batch: usize,
    /// Tokens the decoders after this one write this step (drafts leave them their places).
    pub writers_after: usize,
    /// Draft models, when the model's cache lets rejected drafts be dropped (`None`: no drafts).
    pub drafters: Option<&'a mut [Drafter]>,
}

/// What a decoder put into the batch to write.
pub(crate) enum Written {
    /// The tokens each lane (by index into [`Decoder::lanes`]) gets.
    Tokens(Vec<(usize, Vec<LlamaToken>)>),
    /// The cache or the batch is too full for it: it ends (length).
    Full,
}

/// What a decoder made of the logits of the batch just decoded.
#[derive(Default)]
pub(crate) struct AfterDecode {
    /// Lanes that take a copy of another lane's cells before the next step.
    pub forks: Vec<Fork>,
    /// Drafts at the end of the first lane the sampler did not choose: their cells go.
    pub rejected: usize,
    /// It ends, and why.
    pub finish: Option<FinishReason>,
}

/// One reply being decoded, whatever its strategy.
pub(crate) trait Decoder {
    fn request(&self) -> &ReplyRequest;
    fn events(&self) -> &UnboundedSender<GenEvent>;
    /// The slots it writes in; the first holds the conversation's cache and reads the prompt.
    fn lanes(&self) -> &[usize];
    /// The consensus group it is a candidate of.
    fn member(&self) -> Option<Member> {
        None
    }
    /// Prompt tokens not yet read into the first lane; the scheduler reads them a chunk per step.
    fn prompt(&self) -> &[LlamaToken];
    /// The next `n` prompt tokens, read this step.
    fn take_prompt(&mut self, n: usize) -> Vec<LlamaToken>;
    /// The prompt's last token was put at `at` in the batch, with logits.
    fn prompt_read(&mut self, at: i32);
    /// Tokens it writes at the next step (one per lane that writes; drafts not counted).
    fn writing(&self) -> usize;
    /// Puts what it writes this step into `batch`.
    fn write(&mut self, batch: &mut LlamaBatch, lanes: &[Lane<'_>], room: Room<'_>) -> Written;
    /// Reads its logits from the batch just decoded (or from logits kept before it started).
    fn after_decode(&mut self, context: &LlamaContext<'_>, model: &LlamaModel) -> AfterDecode;
    /// Sends the rest of the reply and its stats. A beam search chooses its own reason unless
    /// `reason` is a cancel.
    fn finish(self: Box<Self>, reason: FinishReason, model: &LlamaModel);
}
