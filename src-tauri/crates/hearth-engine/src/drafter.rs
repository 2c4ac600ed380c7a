//! Speculative decoding with a draft model: a small model of the chatting model's vocabulary
//! writes a few tokens ahead, greedily; the model chatting checks them all in its next step and
//! its own sampler keeps them while they are what it draws (`reply.rs`), so the reply is the one
//! it would be without.
//!
//! The draft model has a context of its own with as many sequences as the session has slots.
//! A sequence follows its slot lazily: before drafting, it drops what it holds beyond the
//! tokens it shares with the slot (drafts turned down, another conversation) and reads what it
//! lacks — so a slot's cache restored from disk, a branch or a new chat need nothing else.

use std::path::Path;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use self_cell::self_cell;

use crate::prefix::shared_prefix;

use hearth_core::{BackendError, LoadParams};

/// Drafting stops at a token the draft model gives less than this probability: an unsure guess
/// is likely turned down and costs a draft step (llama.cpp's default `--draft-p-min`).
const MIN_CONFIDENCE: f32 = 0.75;
/// llama.cpp's compatibility rule: the vocabularies may differ in size by this much (added
/// tokens at the end), and must agree on every token's text from this id up (the first few are
/// control tokens models name differently).
const MAX_VOCAB_SIZE_DIFFERENCE: i32 = 128;
const VOCAB_CHECK_FROM: i32 = 5;

self_cell!(
    /// The draft model and its context, which borrows it.
    struct Loaded {
        owner: LlamaModel,
        #[covariant]
        dependent: LlamaContext,
    }
);

pub(crate) struct Drafter {
    /// The file as the request named it.
    pub path: String,
    loaded: Loaded,
    /// Per sequence, the tokens whose keys and values are in the draft context, in order.
    cached: Vec<Vec<LlamaToken>>,
    batch: LlamaBatch<'static>,
    n_batch: usize,
}

impl Drafter {
    /// Loads the draft model at `path` for `target` with `n_seq` sequences of an `n_ctx`-cell
    /// context, as `params` load the target. Refused in words when the file is not a model
    /// llama.cpp can load or its vocabulary is not the target's.
    pub fn load(path: &str, target: &LlamaModel, params: &LoadParams, n_ctx: u32, n_seq: u32) -> Result<Drafter, BackendError> {
        let refused = |reason: String| BackendError::DraftModel { path: path.to_owned(), reason };
        // The header check first: llama.cpp aborts on some damaged files instead of failing.
        let file = hearth_gguf::validate(Path::new(path)).map_err(|e| refused(e.to_string()))?;
        let backend = crate::devices::llama_backend().map_err(refused)?;
        // On the target's GPU, as far as it fits there.
        let plan = crate::offload::plan(params, &file, &crate::devices::report());
        crate::llama_log::clear();
        let model = LlamaModel::load_from_file(backend, path, &crate::load::model_params(params, &plan))
            .map_err(|e| refused(crate::llama_log::last_error().unwrap_or_else(|| format!("llama.cpp could not load it ({e})"))))?;
        if let Some(reason) = incompatibility(target, &model) {
            return Err(refused(reason));
        }
        let params = LoadParams { n_ctx: Some(n_ctx), ..params.clone() };
        let (_, context_params) = crate::load::context_params(&params, &model, n_seq, &plan.offload());
        let loaded = Loaded::try_new(model, |model| model.new_context(backend, context_params))
            .map_err(|e| refused(format!("no memory for its context of {n_ctx} tokens ({e})")))?;
        tracing::info!(%path, "draft model loaded");
        Ok(Drafter {
            path: path.to_owned(),
            loaded,
            cached: vec![Vec::new(); n_seq as usize],
            batch: LlamaBatch::new(params.n_batch as usize, 1),
            n_batch: params.n_batch as usize,
        })
    }

    /// Up to `max` tokens the draft model expects after `history` (the slot's cached tokens and
    /// the one sampled last) in sequence `seq`, fewer where it is unsure. Empty when its context
    /// has no room: drafting is only ever a gain, so nothing fails for it.
    pub fn draft(&mut self, seq: i32, history: &[LlamaToken], max: usize) -> Vec<LlamaToken> {
        let Some(cached) = self.cached.get(seq as usize) else { return Vec::new() };
        if max == 0 || history.is_empty() {
            return Vec::new();
        }
        // At least the last token is read again: its logits are what the first draft needs.
        let keep = shared_prefix(cached, history).min(history.len() - 1);
        if !self.read(seq, keep, history) {
            return Vec::new();
        }
        let mut drafts = Vec::with_capacity(max);
        loop {
            let (token, p) = likeliest(self.loaded.borrow_dependent().get_logits_ith(self.batch.n_tokens() - 1));
            if p < MIN_CONFIDENCE {
                break;
            }
            drafts.push(token);
            if drafts.len() == max || self.loaded.borrow_owner().vocab().is_eog(token) {
                break;
            }
            let at = self.cached[seq as usize].len();
            self.batch.clear();
            if self.batch.add(token, at as i32, &[seq], true).is_err() || !self.decode(seq) {
                break;
            }
            self.cached[seq as usize].push(token);
        }
        drafts
    }

    /// Makes sequence `seq` hold `history`, keeping its first `keep` tokens and reading the rest
    /// (the last with logits). False when the context has no room even after the other
    /// sequences gave theirs up.
    fn read(&mut self, seq: i32, keep: usize, history: &[LlamaToken]) -> bool {
        if !self.truncate(seq, keep) {
            return false;
        }
        let mut at = keep;
        while at < history.len() {
            let end = (at + self.n_batch).min(history.len());
            self.batch.clear();
            for (k, &token) in history[at..end].iter().enumerate() {
                let last = at + k + 1 == history.len();
                if self.batch.add(token, (at + k) as i32, &[seq], last).is_err() {
                    return false;
                }
            }
            if !self.decode(seq) {
                return false;
            }
            self.cached[seq as usize].extend_from_slice(&history[at..end]);
            at = end;
        }
        true
    }

    /// Decodes the batch for `seq`; when the cache is full, the other sequences' cells go (they
    /// are read again when next drafted for) and it is tried once more.
    fn decode(&mut self, seq: i32) -> bool {
        let (batch, cached) = (&mut self.batch, &mut self.cached);
        self.loaded.with_dependent_mut(|_, context| {
            if context.decode(batch).is_ok() {
                return true;
            }
            // A failed decode may leave part of the batch in the cache (the batch starts where
            // the sequence's cached tokens end).
            let _ = context.kv_cache_seq_rm(seq, Some(cached[seq as usize].len() as u32), None);
            for (other, tokens) in cached.iter_mut().enumerate().filter(|(other, _)| *other != seq as usize) {
                let _ = context.kv_cache_seq_rm(other as i32, None, None);
                tokens.clear();
            }
            if context.decode(batch).is_ok() {
                return true;
            }
            let _ = context.kv_cache_seq_rm(seq, None, None);
            cached[seq as usize].clear();
            false
        })
    }

    /// Drops sequence `seq`'s cells from position `keep` on.
    fn truncate(&mut self, seq: i32, keep: usize) -> bool {
        let cached = &mut self.cached[seq as usize];
        if cached.len() <= keep {
            return true;
        }
        self.loaded.with_dependent_mut(|_, context| {
            if context.kv_cache_seq_rm(seq, Some(keep as u32), None).is_ok() {
                cached.truncate(keep);
                return true;
            }
            let _ = context.kv_cache_seq_rm(seq, None, None);
            cached.clear();
            keep == 0
        })
    }
}

/// Why `draft` cannot draft for `target`, in words, by llama.cpp's rule: the same kind of
/// vocabulary, the same start and end tokens, sizes within [`MAX_VOCAB_SIZE_DIFFERENCE`] and
/// the same text for every token from [`VOCAB_CHECK_FROM`] up.
pub(crate) fn incompatibility(target: &LlamaModel, draft: &LlamaModel) -> Option<String> {
    let (t, d) = (target.vocab(), draft.vocab());
    if t.vocab_type() != d.vocab_type() {
        return Some(format!("its tokenizer is of another kind ({:?}; the model's is {:?})", d.vocab_type(), t.vocab_type()));
    }
    if (t.should_add_bos(), t.should_add_eos(), t.bos(), t.eos()) != (d.should_add_bos(), d.should_add_eos(), d.bos(), d.eos()) {
        return Some("its start and end tokens are not the model's".into());
    }
    let (n_target, n_draft) = (t.n_tokens(), d.n_tokens());
    if (n_target - n_draft).abs() > MAX_VOCAB_SIZE_DIFFERENCE {
        return Some(format!("its vocabulary has {n_draft} tokens and the model's {n_target}: another vocabulary"));
    }
    (VOCAB_CHECK_FROM..n_target.min(n_draft)).map(LlamaToken).find(|&id| t.text(id) != d.text(id)).map(|id| {
        let text =
            |vocab: &llama_cpp_2::vocab::LlamaVocab<'_>| vocab.text(id).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        format!("its token {} is {:?} where the model's is {:?}: another vocabulary", id.0, text(&d), text(&t))
    })
}

/// The likeliest token of `logits` and its probability.
fn likeliest(logits: &[f32]) -> (LlamaToken, f32) {
    let (best, max) = logits.iter().enumerate().fold((0, f32::NEG_INFINITY), |acc, (i, &l)| if l > acc.1 { (i, l) } else { acc });
    let z: f64 = logits.iter().map(|&l| f64::from(l - max).exp()).sum();
    (LlamaToken(best as i32), if z > 0.0 { (1.0 / z) as f32 } else { 0.0 })
}

#[cfg(test)]
mod tests {
    use super::likeliest;

    #[test]
    fn likeliest_is_the_softmax_maximum() {
        let (token, p) = likeliest(&[0.0, 2.0, 1.0]);
        let z = 1.0 + 2f64.exp() + 1f64.exp();
        assert_eq!(token.0, 1);
        assert!((f64::from(p) - 2f64.exp() / z).abs() < 1e-6);
        let (token, p) = likeliest(&[5.0; 4]);
        assert_eq!((token.0, p), (0, 0.25));
    }
}
