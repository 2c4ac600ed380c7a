//! A consensus (minimum Bayes risk) reply: its candidates are replies of their own in the
//! scheduler — one KV sequence each, written side by side in one batch per step — whose events
//! come here instead of to the client. The first reads the prompt; the others then share its
//! cells (`seq_cp`) and each samples with its own seed. When all have ended, the candidate that
//! agrees most with the others is the reply, and all of them go with its stats.

use std::time::Instant;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use hearth_core::{CancelFlag, Consensus, FinishReason, GenEvent, MbrUtility, ReplyRequest, ReplyStats, SamplingParams, Strategy};

/// A candidate's place: its group and its index there (0 reads the prompt for all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Member {
    pub group: u64,
    pub index: usize,
}

pub(crate) struct Group {
    pub id: u64,
    client: UnboundedSender<GenEvent>,
    cancel: CancelFlag,
    utility: MbrUtility,
    asked_at: Instant,
    candidates: Vec<Candidate>,
    /// The most any candidate had written when the client was last told (`Searching`).
    told: u32,
}

struct Candidate {
    events: UnboundedReceiver<GenEvent>,
    text: String,
    /// Its text's pieces so far: a token each (one that ends a character split across tokens
    /// carries it whole), so about its tokens.
    pieces: u32,
    end: Option<(FinishReason, ReplyStats)>,
}

impl Group {
    /// The group for `request` and each candidate's own request and event channel, in order.
    /// Each candidate writes up to `max_tokens`; the first keeps the conversation's cache.
    pub fn new(
        id: u64,
        request: &ReplyRequest,
        client: UnboundedSender<GenEvent>,
        max_tokens: u32,
        asked_at: Instant,
    ) -> (Group, Vec<(ReplyRequest, UnboundedSender<GenEvent>)>) {
        let sampling = &request.sampling;
        let mut members = Vec::new();
        let mut candidates = Vec::new();
        for index in 0..sampling.mbr_candidates {
            let (tx, rx) = unbounded_channel();
            let own = SamplingParams {
                strategy: Strategy::Sampling,
                max_tokens,
                // Distinct and repeatable with a fixed seed; fresh ones otherwise.
                seed: sampling.seed.map(|s| s.wrapping_add(index)),
                ..sampling.clone()
            };
            let mut member = ReplyRequest::new(Vec::new(), own, request.cancel.clone());
            member.conversation = request.conversation.filter(|_| index == 0);
            members.push((member, tx));
            candidates.push(Candidate { events: rx, text: String::new(), pieces: 0, end: None });
        }
        let group = Group { id, client, cancel: request.cancel.clone(), utility: sampling.mbr_utility, asked_at, candidates, told: 0 };
        (group, members)
    }

    /// Takes in what the candidates sent; when all have ended, sends the client the chosen one.
    /// True once the group is done (a candidate failed, the client left, or the reply is sent);
    /// candidates still writing then find nobody listening and end at their next token.
    pub fn poll(&mut self) -> bool {
        for candidate in &mut self.candidates {
            while let Ok(event) = candidate.events.try_recv() {
                match event {
                    GenEvent::Delta(text) => {
                        candidate.text.push_str(&text);
                        candidate.pieces += 1;
                    }
                    GenEvent::Finished { reason, stats } => candidate.end = Some((reason, stats)),
                    GenEvent::Failed(error) => {
                        self.cancel.cancel();
                        let _ = self.client.send(GenEvent::Failed(error));
                        return true;
                    }
                    GenEvent::Logprobs(_) | GenEvent::TokenProbs(_) | GenEvent::Searching { .. } => {}
                }
            }
        }
        if self.client.is_closed() {
            return true;
        }
        if self.candidates.iter().any(|c| c.end.is_none()) {
            // Nothing shows until every candidate has ended: say how far they have got.
            let written = self.candidates.iter().map(|c| c.pieces).max().unwrap_or(0);
            if written > self.told {
                self.told = written;
                let _ = self.client.send(GenEvent::Searching { tokens: written });
            }
            return false;
        }
        self.finish();
        true
    }

    fn finish(&mut self) {
        let texts = self.candidates.iter().map(|c| c.text.clone()).collect();
        let consensus = Consensus::choose(texts, self.utility);
        let ends: Vec<&(FinishReason, ReplyStats)> = self.candidates.iter().filter_map(|c| c.end.as_ref()).collect();
        let (reason, chosen) = ends[consensus.chosen as usize].clone();
        let lead = &ends[0].1;
        // The reply appears when all candidates are written: that is its time to first token.
        let ttft_ms = self.asked_at.elapsed().as_secs_f64() * 1000.0;
        let written: u32 = ends.iter().map(|(_, s)| s.completion_tokens).sum();
        let writing_secs = (ttft_ms - lead.ttft_ms) / 1000.0;
        let stats = ReplyStats {
            prompt_tokens: lead.prompt_tokens,
            cached_tokens: lead.cached_tokens,
            prompt_source: lead.prompt_source,
            dropped_messages: lead.dropped_messages,
            ttft_ms,
            // Every candidate's tokens per second of writing: the engine's speed, not the reply's.
            decode_tps: if writing_secs > 0.0 { f64::from(written) / writing_secs } else { 0.0 },
            drafted_tokens: ends.iter().map(|(_, s)| s.drafted_tokens).sum(),
            accepted_tokens: ends.iter().map(|(_, s)| s.accepted_tokens).sum(),
            consensus: Some(Box::new(consensus.clone())),
            ..chosen
        };
        if !consensus.chosen_text().is_empty() {
            let _ = self.client.send(GenEvent::Delta(consensus.chosen_text().to_owned()));
        }
        let _ = self.client.send(GenEvent::Finished { reason, stats });
    }
}
