//! Decoding strategies beyond plain sampling, on the real model: speculative decoding leaves
//! the reply exactly as it is without it.

mod common;

use hearth_core::{ChatMessage, FinishReason, Role, SamplingParams, Speculative};

use common::{greedy, loaded_engine, reply, user};

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
