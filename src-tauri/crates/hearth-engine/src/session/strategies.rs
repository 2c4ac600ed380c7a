//! How the decoding strategies beside sampling start (see [`crate::decoding`]): consensus (MBR)
//! candidates as sampling replies of their own, gathered and judged as a group; a beam search
//! with a lane per beam, all taken at once.

use super::*;
use hearth_core::TextReading;

impl<'m> Session<'m> {
    /// Queues a consensus reply's first candidate; the others wait for it to read the prompt
    /// (see [`Session::release_members`]). Refused when the candidates cannot all have room.
    pub(super) fn submit_consensus(&mut self, queued: Queued) {
        let Queued { request, events, tokens, facts, asked_at, .. } = queued;
        let at_once = (request.sampling.mbr_candidates as usize).min(self.slots.len());
        // Each candidate's cells are counted in full (a shared opening too): room is never overestimated.
        let room = (self.n_ctx() / at_once).saturating_sub(tokens.len() + 1);
        if room < MIN_CANDIDATE_TOKENS {
            let error = BackendError::InvalidRequest(format!(
                "{} consensus candidates do not fit the context: each needs the prompt's {} tokens and room to write, and the \
                 context has {}; choose fewer candidates, shorten the chat or load the model with a larger context",
                request.sampling.mbr_candidates,
                tokens.len(),
                self.n_ctx()
            ));
            let _ = events.send(GenEvent::Failed(error));
            return;
        }
        let id = self.clock;
        self.clock += 1;
        let max_tokens = request.sampling.max_tokens.min(room as u32);
        let (group, members) = Group::new(id, &request, events, max_tokens, asked_at);
        self.groups.push(group);
        for (index, (request, events)) in members.into_iter().enumerate() {
            let member = Some(Member { group: id, index });
            let queued = Queued { request, events, tokens: tokens.clone(), facts: facts.clone(), asked_at, member };
            if index == 0 { self.queued.push_back(queued) } else { self.waiting_members.push(queued) }
        }
    }

    /// Queues, first in line, the candidates whose first has read the prompt (or ended): they
    /// share its cells instead of reading it again.
    pub(super) fn release_members(&mut self) {
        let waiting = std::mem::take(&mut self.waiting_members);
        let (ready, still): (Vec<Queued>, Vec<Queued>) = waiting.into_iter().partition(|queued| {
            let group = queued.member.map(|m| m.group);
            !self
                .running
                .iter()
                .any(|r| r.member().map(|m| m.group) == group && r.member().is_some_and(|m| m.index == 0) && !r.prompt().is_empty())
                && !self.queued.iter().any(|q| q.member.is_some_and(|m| Some(m.group) == group && m.index == 0))
        });
        self.waiting_members = still;
        for queued in ready.into_iter().rev() {
            self.queued.push_front(queued);
        }
    }

    /// Hands finished consensus replies to their clients; candidates of a group that ended
    /// early (one failed, the client left) and still waiting to start are dropped.
    pub(super) fn poll_groups(&mut self) {
        let mut ended = Vec::new();
        self.groups.retain_mut(|group| {
            let done = group.poll();
            if done {
                ended.push(group.id);
            }
            !done
        });
        self.waiting_members.retain(|queued| queued.member.is_none_or(|m| !ended.contains(&m.group)));
    }

    /// Starts a beam search in `slot` (its first lane, which reads the prompt) and `width - 1`
    /// other idle slots, emptied.
    pub(super) fn start_beam(&mut self, slot: usize, queued: Queued) {
        let Queued { request, events, tokens, facts, asked_at, .. } = queued;
        if request.tools.as_ref().is_some_and(|t| t.choice != hearth_core::ToolChoice::None && !t.tools.is_empty()) {
            let refused = BackendError::InvalidRequest("a beam search cannot call tools: choose sampling to offer them".into());
            let _ = events.send(GenEvent::Failed(refused));
            return;
        }
        let constraints = match sampler::constraints(self.model, &request.sampling) {
            Ok(constraints) => constraints,
            Err(error) => {
                let _ = events.send(GenEvent::Failed(error));
                return;
            }
        };
        // The replies' text as a sampled reply's is written (`Session::start`).
        let reasoning = if request.raw_prompt.is_none() { self.renderer.reasoning() } else { ReasoningFormat::None };
        let opened = !request.continue_last && request.raw_prompt.is_none() && opens_reasoning(self.model, &tokens, reasoning);
        let reading = TextReading::of(reasoning == ReasoningFormat::Channels, opened);
        let width = request.sampling.beam_width as usize;
        let mut others: Vec<usize> = (0..self.slots.len()).filter(|&i| i != slot && !self.slots[i].busy).collect();
        others.sort_by_key(|&i| (!self.slots[i].cached.is_empty(), self.slots[i].used_at));
        others.truncate(width - 1);
        for &lane in &others {
            self.park(lane);
        }
        let (prompt, stats, _) = self.take_prompt(slot, &request, tokens, facts, false);
        let lanes: Vec<usize> = std::iter::once(slot).chain(others).collect();
        for &lane in &lanes {
            self.slots[lane].busy = true;
        }
        let max_tokens = request.sampling.max_tokens.min(self.beam_room(&request, prompt.len() + stats.cached_tokens as usize) as u32);
        let mut beam = BeamReply::new(request, events, lanes, prompt, constraints, max_tokens, stats, asked_at);
        beam.read_as(reading);
        self.running.push(Box::new(beam));
    }

    /// Tokens each beam may write when every lane holds the whole prompt (a shared opening is
    /// counted in each: room is never overestimated).
    pub(super) fn beam_room(&self, request: &ReplyRequest, prompt_tokens: usize) -> usize {
        (self.n_ctx() / request.sampling.beam_width.max(1) as usize).saturating_sub(prompt_tokens + 1)
    }
}
