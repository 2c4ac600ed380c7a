//! Decoding strategies beyond plain sampling, on the real model: speculative decoding leaves
//! the reply exactly as it is without it; consensus writes its candidates side by side and
//! keeps the one that agrees most with the others; beam search finds the likeliest reply.

mod common;

use hearth_core::{
    CancelFlag, ChatBackend, ChatMessage, Constraint, FinishReason, GenEvent, MbrUtility, ReplyRequest, Role, SamplingParams, Speculative,
    Strategy, TokenLogprob, TokenProbs,
};

use common::{engine_with_context, greedy, loaded_engine, reply, reply_error, reply_with_logprobs, user};

/// A reply that copies most of its prompt: prompt lookup's best case.
const EDIT: &str = "Correct the spelling mistakes in this paragraph and write the whole paragraph out again: \
    The history of bred is the history of peple settling down. Grain that could be stored thru winter \
    let villages grow, and the oven becam the warm centre of the house. Bakers lerned to keep a piece \
    of yesterdays dough to raise todays loaf, long before anyone knew that yeast was alive.";

fn lookup(params: SamplingParams) -> SamplingParams {
    SamplingParams { speculative: Speculative::PromptLookup, ..params }
}

#[tokio::test]
async fn prompt_lookup_writes_the_same_reply_with_fewer_steps_and_leaves_a_valid_cache() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let edit = user(EDIT);
    // Every run below reads the prompt from the cache the first one left (all but its last
    // token), so they differ only in drafting: a cold prefill's logits can part from a cached
    // prompt's at a greedy near-tie.
    reply(&engine, &edit, greedy(1), None).await;
    let plain = reply(&engine, &edit, greedy(120), None).await;
    assert!(plain.text.contains("yeast was alive"), "{:?}", plain.text);
    let drafted = reply(&engine, &edit, lookup(greedy(120)), None).await;
    assert_eq!(drafted.text, plain.text);
    assert_eq!(drafted.stats.completion_tokens, plain.stats.completion_tokens);
    let (accepted, tried) = (drafted.stats.accepted_tokens, drafted.stats.drafted_tokens);
    // Most of the reply is copied: most tokens came as accepted drafts, several per step.
    assert!(accepted * 2 > drafted.stats.completion_tokens && accepted <= tried, "{:?}", drafted.stats);
    assert_eq!((plain.stats.drafted_tokens, plain.stats.accepted_tokens), (0, 0));

    // Cut anywhere inside a run of drafts — a stop string, the length limit — the reply ends
    // where it ends without them.
    let words: Vec<&str> = plain.text.split(' ').collect();
    let stop = words[words.len() / 2].to_owned();
    let cut_at = plain.text.find(&stop).unwrap();
    for (params, expected, reason) in [
        (SamplingParams { stop: vec![stop.clone()], ..greedy(120) }, &plain.text[..cut_at], FinishReason::StopString),
        (greedy(23), "", FinishReason::Length),
    ] {
        let want = if expected.is_empty() { reply(&engine, &edit, params.clone(), None).await.text } else { expected.to_owned() };
        let got = reply(&engine, &edit, lookup(params.clone()), None).await;
        assert_eq!((got.text.as_str(), got.reason), (want.as_str(), reason), "{params:?}");
    }

    // The drafts the sampler turned down left the cache: the next turn reuses the whole
    // conversation and writes what an engine that never drafted writes.
    let mut next = edit.clone();
    next.push(ChatMessage::new(Role::Assistant, drafted.text.clone()));
    next.push(ChatMessage::new(Role::User, "Now say it again in one short sentence."));
    let followed = reply(&engine, &next, lookup(greedy(40)), None).await;
    assert!(followed.stats.cached_tokens > drafted.stats.prompt_tokens, "{:?}", followed.stats);
    let clean = loaded_engine().await;
    let yardstick = reply(&clean, &next, greedy(40), None).await;
    assert_eq!(followed.text, yardstick.text);
}

fn draft_model(path: &std::path::Path, params: SamplingParams) -> SamplingParams {
    SamplingParams { speculative: Speculative::DraftModel, draft_model: Some(path.display().to_string()), ..params }
}

#[tokio::test]
async fn a_draft_model_writes_ahead_and_the_reply_stays_the_same() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    // The model drafts for itself: the same vocabulary, and guesses that nearly always hold.
    let own = common::model_path();
    let prompt = user("Write four short sentences about the sea.");
    reply(&engine, &prompt, greedy(1), None).await; // The prompt cached, as for lookup above.
    let plain = reply(&engine, &prompt, greedy(80), None).await;
    let drafted = reply(&engine, &prompt, draft_model(&own, greedy(80)), None).await;
    assert_eq!(drafted.text, plain.text);
    let (accepted, tried) = (drafted.stats.accepted_tokens, drafted.stats.drafted_tokens);
    // Drafts are only the draft model's sure guesses, and its own model keeps nearly all.
    assert!(tried >= 5 && accepted * 10 >= tried * 9 && accepted <= tried, "{:?}", drafted.stats);
    let cut = reply(&engine, &prompt, draft_model(&own, greedy(23)), None).await;
    assert_eq!((cut.text.as_str(), cut.reason), (reply(&engine, &prompt, greedy(23), None).await.text.as_str(), FinishReason::Length));

    // The next turn reuses the cache the drafts left and writes what a fresh engine writes.
    let mut next = prompt.clone();
    next.push(ChatMessage::new(Role::Assistant, drafted.text.clone()));
    next.push(ChatMessage::new(Role::User, "Now one more, about the wind."));
    let followed = reply(&engine, &next, draft_model(&own, greedy(40)), None).await;
    assert!(followed.stats.cached_tokens > drafted.stats.prompt_tokens && followed.stats.accepted_tokens > 0, "{:?}", followed.stats);
    let clean = loaded_engine().await;
    assert_eq!(followed.text, reply(&clean, &next, greedy(40), None).await.text);

    // Files that cannot draft are refused in words before the reply writes anything.
    let dir = tempfile::tempdir().unwrap();
    let model = std::fs::read(&own).unwrap();
    let foreign = dir.path().join("foreign-vocab.gguf");
    std::fs::write(&foreign, with_token_renamed(&model, "\u{120}the", "\u{120}thq")).unwrap();
    let truncated = dir.path().join("truncated.gguf");
    std::fs::write(&truncated, &model[..model.len() / 3]).unwrap();
    let missing = dir.path().join("missing.gguf");
    for (path, words) in
        [(&foreign, "another vocabulary"), (&truncated, "truncated.gguf cannot be used"), (&missing, "missing.gguf cannot be used")]
    {
        let refusal = refusal(&engine, &prompt, draft_model(path, greedy(20))).await;
        assert!(refusal.contains(words) && refusal.contains("turn speculative decoding off"), "{}: {refusal}", path.display());
    }
    // The engine goes on, drafting with a good model again.
    let after = reply(&engine, &prompt, draft_model(&own, greedy(80)), None).await;
    assert_eq!(after.text, plain.text);
}

/// The model file with one token's text changed (to text of the same length): a vocabulary
/// that is not the model's.
fn with_token_renamed(model: &[u8], from: &str, to: &str) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    // In the tokens array each text follows its u64 length; merges hold pairs with a space.
    let needle: Vec<u8> = (from.len() as u64).to_le_bytes().iter().chain(from.as_bytes()).copied().collect();
    let at = model.windows(needle.len()).position(|w| w == needle).expect("the token is in the vocabulary") + 8;
    let mut changed = model.to_vec();
    changed[at..at + to.len()].copy_from_slice(to.as_bytes());
    changed
}

/// A reply that must be refused before it writes: the error's words.
async fn refusal(engine: &hearth_engine::Engine, messages: &[ChatMessage], sampling: SamplingParams) -> String {
    let request = ReplyRequest::new(messages.to_vec(), sampling, CancelFlag::new());
    let mut stream = engine.start_reply(request).expect("a model is loaded");
    match stream.events.recv().await {
        Some(GenEvent::Failed(error)) => error.to_string(),
        other => panic!("refused before any text, not {other:?}"),
    }
}

fn sampled(seed: u32, max_tokens: u32) -> SamplingParams {
    SamplingParams { temperature: 0.9, seed: Some(seed), max_tokens, ..SamplingParams::default() }
}

#[tokio::test]
async fn consensus_keeps_the_candidate_closest_to_the_others_and_each_is_its_seeds_reply() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let prompt = user("Name a colour of the rainbow and say one thing about it.");
    let consensus = SamplingParams { strategy: Strategy::Consensus, mbr_candidates: 4, ..sampled(11, 24) };
    let chosen = reply(&engine, &prompt, consensus.clone(), None).await;
    // Until the reply comes whole, the candidates' progress is told as it grows.
    assert!(!chosen.searching.is_empty() && chosen.searching.windows(2).all(|w| w[0] < w[1]), "{:?}", chosen.searching);
    assert!(chosen.searching.last().is_some_and(|&t| t <= 24), "{:?}", chosen.searching);
    let kept = chosen.stats.consensus.clone().expect("the candidates stay with the reply");
    assert_eq!(kept.candidates.len(), 4);
    assert_eq!(kept.utility, MbrUtility::ChrF);
    let best = &kept.candidates[kept.chosen as usize];
    assert_eq!(chosen.text, best.text);
    assert!(kept.candidates.iter().all(|c| c.score <= best.score && (0.0..=1.0).contains(&c.score)), "{kept:?}");
    // Each score is the candidate's mean chrF against the others.
    for (i, c) in kept.candidates.iter().enumerate() {
        let others: Vec<f64> =
            kept.candidates.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, o)| hearth_core::chrf(&c.text, &o.text)).collect();
        assert!((c.score - others.iter().sum::<f64>() / 3.0).abs() < 1e-9);
    }
    assert!(kept.candidates.iter().any(|c| c.text != best.text), "sampled candidates differ: {kept:?}");
    // Candidate i is what sampling alone writes with seed + i.
    for i in [0, 2] {
        let alone = reply(&engine, &prompt, sampled(11 + i, 24), None).await;
        assert_eq!(kept.candidates[i as usize].text, alone.text, "candidate {i}");
    }
    // Self-consistency: exact match picks the most frequent candidate.
    let voted = reply(&engine, &prompt, SamplingParams { mbr_utility: MbrUtility::ExactMatch, ..consensus }, None).await;
    let kept = voted.stats.consensus.expect("candidates");
    let count = |t: &str| kept.candidates.iter().filter(|c| c.text.trim() == t.trim()).count();
    assert!(kept.candidates.iter().all(|c| count(&c.text) <= count(&voted.text)), "{kept:?}");
}

#[tokio::test]
async fn consensus_that_cannot_fit_is_refused_in_words_before_it_starts() {
    let _one = common::one_at_a_time().await;
    let engine = engine_with_context(1024).await;
    let long = user(&format!("Summarise: {}", "the quick brown fox jumps over the lazy dog ".repeat(20)));
    let too_many = SamplingParams { strategy: Strategy::Consensus, mbr_candidates: 16, ..sampled(1, 64) };
    let error = reply_error(&engine, &long, too_many).await;
    assert!(error.contains("16 consensus candidates do not fit the context") && error.contains("choose fewer candidates"), "{error}");
    // Fewer fit, and the engine is as before.
    let fewer = SamplingParams { strategy: Strategy::Consensus, mbr_candidates: 2, ..sampled(1, 8) };
    assert_eq!(reply(&engine, &long, fewer, None).await.stats.consensus.map(|c| c.candidates.len()), Some(2));
    // A client that leaves while its candidates are written frees every sequence they held:
    // then a prompt needing nearly the whole context is answered.
    let candidates = SamplingParams { strategy: Strategy::Consensus, mbr_candidates: 8, ..sampled(2, 64) };
    let mut left = engine.start_reply(ReplyRequest::new(user("Write a poem about rain."), candidates, CancelFlag::new())).unwrap();
    searching(&mut left).await;
    drop(left);
    let nearly_all = user(&format!("Count the words: {}", "word ".repeat(850)));
    let whole = reply(&engine, &nearly_all, greedy(8), None).await;
    assert!(whole.stats.prompt_tokens > 850 && whole.stats.completion_tokens == 8, "{:?}", whole.stats);
}

/// Waits (a minute at most) until `stream`'s search says it is under way: every beam or
/// candidate holds its sequence and has written.
async fn searching(stream: &mut hearth_core::ReplyStream) {
    let first = async {
        loop {
            match stream.events.recv().await {
                Some(GenEvent::Searching { tokens }) => return tokens,
                Some(GenEvent::Failed(e)) => panic!("{e}"),
                Some(event) => assert!(!event.is_last(), "the search ended before it said it was under way: {event:?}"),
                None => panic!("the stream ended"),
            }
        }
    };
    let tokens = tokio::time::timeout(std::time::Duration::from_secs(60), first).await.expect("the search says it is under way");
    assert!(tokens >= 1);
}

fn beam(width: u32, n_best: u32, max_tokens: u32) -> SamplingParams {
    SamplingParams { strategy: Strategy::Beam, beam_width: width, n_best, ..greedy(max_tokens) }
}

#[tokio::test]
async fn beam_search_of_width_one_is_greedy_and_a_wide_beam_is_exhaustive_search() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let question = user("What is the capital of France? Answer in one sentence.");
    let greedy_reply = reply(&engine, &question, greedy(40), None).await;
    let narrow = reply(&engine, &question, beam(1, 1, 40), None).await;
    assert_eq!(narrow.text, greedy_reply.text);
    // Each step but the one that ends the search says how far it has got (an end of turn is
    // not written); the reply comes whole at the end.
    let written = narrow.stats.completion_tokens;
    let told = if narrow.reason == FinishReason::Length { written - 1 } else { written };
    assert_eq!(narrow.searching, (1..=told).collect::<Vec<_>>(), "{:?} {:?}", narrow.reason, narrow.stats);
    assert_eq!(narrow.deltas, 1);
    let hypotheses = narrow.stats.beams.expect("the n-best list stays with the reply");
    assert_eq!(hypotheses.len(), 1);
    assert_eq!(hypotheses[0].text, narrow.text);

    // Two digits from 1–3, forced by a grammar: nine replies. Each one's log-probability is
    // read off the model token by token (greedy under a grammar that allows only it); width 3
    // keeps every first digit, so its three best are the three best of all nine.
    let pick = user("Pick a number from 11 to 33.");
    let digits = Some(Constraint::Gbnf("root ::= [1-3] [1-3] [1-3]".into()));
    let mut exhaustive = Vec::new();
    for first in '1'..='3' {
        for second in '1'..='3' {
            let only = SamplingParams { constraint: Some(Constraint::Gbnf(format!("root ::= \"{first}{second}\""))), ..greedy(2) };
            let (text, tokens) = reply_with_logprobs(&engine, &pick, only, 0).await;
            assert_eq!((text.as_str(), tokens.len()), (format!("{first}{second}").as_str(), 2), "one token per digit");
            exhaustive.push((text, tokens.iter().map(|t| f64::from(t.token.logprob)).sum::<f64>()));
        }
    }
    exhaustive.sort_by(|a, b| b.1.total_cmp(&a.1));
    let wide = reply(&engine, &pick, SamplingParams { constraint: digits, ..beam(3, 3, 2) }, None).await;
    let found = wide.stats.beams.expect("n-best list");
    assert_eq!(wide.reason, FinishReason::Length);
    assert_eq!(wide.text, found[0].text);
    assert_eq!(found.len(), 3);
    for (got, (text, logprob)) in found.iter().zip(&exhaustive) {
        assert_eq!(&got.text, text, "beam {found:?} vs exhaustive {exhaustive:?}");
        assert!((got.logprob - logprob).abs() < 1e-3, "{got:?} vs {logprob}");
        assert_eq!(got.tokens, 2);
    }
    // A beam search leaves the engine as it was: plain replies are still the same.
    assert_eq!(reply(&engine, &question, greedy(40), None).await.text, greedy_reply.text);
}

#[tokio::test]
async fn a_beam_too_wide_for_the_context_is_refused_in_words() {
    let _one = common::one_at_a_time().await;
    let engine = engine_with_context(1024).await;
    let long = user(&format!("Summarise: {}", "the quick brown fox jumps over the lazy dog ".repeat(20)));
    let error = reply_error(&engine, &long, beam(8, 1, 64)).await;
    assert!(error.contains("a beam search 8 wide does not fit the context") && error.contains("narrower beam"), "{error}");
    let narrow = reply(&engine, &long, beam(2, 2, 8), None).await;
    assert_eq!(narrow.stats.beams.map(|b| b.len()), Some(2));
    // A client that leaves mid-search frees every lane: a prompt needing nearly the whole
    // context is answered next.
    let mut left = engine.start_reply(ReplyRequest::new(user("Write a poem about rain."), beam(4, 1, 100), CancelFlag::new())).unwrap();
    searching(&mut left).await;
    drop(left);
    let nearly_all = user(&format!("Count the words: {}", "word ".repeat(850)));
    let whole = reply(&engine, &nearly_all, greedy(8), None).await;
    assert!(whole.stats.prompt_tokens > 850 && whole.stats.completion_tokens == 8, "{:?}", whole.stats);
}

/// A reply asking for both the raw log-probabilities and the sampler's distributions.
async fn both_views(
    engine: &hearth_engine::Engine,
    prompt: &[ChatMessage],
    sampling: SamplingParams,
) -> (Vec<TokenLogprob>, Vec<TokenProbs>) {
    let mut request = ReplyRequest::new(prompt.to_vec(), sampling, CancelFlag::new());
    (request.logprobs, request.top_probs) = (Some(5), Some(5));
    let mut stream = engine.start_reply(request).expect("a model is loaded");
    let (mut raw, mut drawn) = (Vec::new(), Vec::new());
    while let Some(event) = stream.events.recv().await {
        match event {
            GenEvent::Logprobs(more) => raw.extend(more),
            GenEvent::TokenProbs(more) => drawn.extend(more),
            GenEvent::Finished { .. } => return (raw, drawn),
            GenEvent::Failed(e) => panic!("{e}"),
            GenEvent::Delta(_) | GenEvent::Searching { .. } => {}
        }
    }
    panic!("the stream ended without Finished");
}

#[tokio::test]
async fn the_inspectors_distribution_is_llama_cpps_candidates_after_the_sampler_chain() {
    let _one = common::one_at_a_time().await;
    let engine = loaded_engine().await;
    let prompt = user("Name three animals that live in the sea.");
    // Greedy: the chain changes no logit, so the distribution is the model's own softmax. (Not
    // with end of turn banned: that takes the end-of-turn tokens' share out of it.) The end-of-
    // turn token has its distribution too, but no text and no log-probability.
    let (raw, drawn) = both_views(&engine, &prompt, greedy(24)).await;
    assert!(raw.len() > 4 && drawn.len() - raw.len() <= 1, "{} vs {}", raw.len(), drawn.len());
    for (raw, drawn) in raw.iter().zip(&drawn) {
        assert_eq!(drawn.id, raw.token.id);
        let ids = |ids: Vec<i32>| ids;
        assert_eq!(ids(drawn.top.iter().map(|t| t.id).collect()), ids(raw.top.iter().map(|t| t.id).collect()));
        for (d, r) in drawn.top.iter().zip(&raw.top) {
            assert!((f64::from(d.p) - f64::from(r.logprob).exp()).abs() < 1e-4, "{d:?} vs {r:?}");
        }
        assert!(drawn.top.iter().map(|t| t.p).sum::<f32>() <= 1.0 + 1e-5 && drawn.entropy >= 0.0);
    }
    // Top-k 3 at temperature 1: the choice was among three tokens — the model's three likeliest,
    // renormalised — whatever else the model thought.
    let (raw, drawn) = both_views(&engine, &prompt, SamplingParams { top_k: 3, top_p: 1.0, min_p: 0.0, ..sampled(5, 24) }).await;
    for (raw, drawn) in raw.iter().zip(&drawn) {
        assert!(drawn.top.len() <= 3 && drawn.top.iter().all(|t| raw.top[..3].iter().any(|r| r.id == t.id)), "{drawn:?}");
        let total: f32 = drawn.top.iter().map(|t| t.p).sum();
        assert!((total - 1.0).abs() < 1e-4 && drawn.entropy <= 3f32.log2() + 1e-4, "{drawn:?}");
        assert!(drawn.top.iter().any(|t| t.id == drawn.id && t.p == drawn.p));
    }
}
