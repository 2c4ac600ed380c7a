// The replies a reply was chosen from, as the panel under it lists them: a consensus reply's candidates
// and a beam search's best replies. One view for both (ReplyAlternatives.svelte renders it).
import type { BeamHypothesis, Consensus, ReplyStats } from '../ipc/bindings';
import { UTILITY_LABELS, beamsOf, consensusOf, formatLogprob, formatScore, plural } from './format';

/** A figure beside an entry: "score 0.62" (with a bar when it is a share), "12 tokens". */
export type Figure = {
  /** Names its test id: `<kind>-<key>`. */
  key: string;
  /** Said before the value ("score"); empty for none. */
  label: string;
  value: string;
  /** What it means, for its tooltip. */
  title: string;
  /** How full its bar is, 0–1; null for no bar. */
  bar: number | null;
};

export type AlternativeRow = { name: string; text: string; chosen: boolean; figures: Figure[] };

export type AlternativesView = {
  /** Names the test ids (`candidate`, `candidates`, `candidates-toggle` …) and the panel's element id. */
  kind: 'candidate' | 'beam';
  /** The panel's accessible name. */
  label: string;
  /** The button that opens it: "4 candidates". */
  toggle: string;
  /** The button's tooltip while the panel is closed. */
  toggleTitle: string;
  intro: string;
  rows: AlternativeRow[];
};

/** A consensus reply's candidates, in the order they were sampled, each with its score; the chosen one marked. */
export function consensusView(consensus: Consensus): AlternativesView {
  const by = UTILITY_LABELS[consensus.utility] ?? consensus.utility;
  return {
    kind: 'candidate',
    label: 'Consensus candidates',
    toggle: plural(consensus.candidates.length, 'candidate'),
    toggleTitle: 'Show the candidates consensus chose this reply from',
    intro: `Sampled side by side, each scored by its mean agreement (${by}) with the others, from 0 to 1; the highest became the reply.`,
    rows: consensus.candidates.map((candidate, i) => ({
      name: `Candidate ${i + 1}`,
      text: candidate.text,
      chosen: i === consensus.chosen,
      figures: [
        {
          key: 'score',
          label: 'score',
          value: formatScore(candidate.score),
          title: `Mean ${by} against the other candidates`,
          bar: Number.isFinite(candidate.score) ? candidate.score : 0,
        },
      ],
    })),
  };
}

/** A beam search's best replies, best first (the first is the reply), each with its score and log-probability. */
export function beamView(beams: BeamHypothesis[]): AlternativesView {
  return {
    kind: 'beam',
    label: 'Beam search replies',
    toggle: plural(beams.length, 'beam'),
    toggleTitle: 'Show the best replies beam search found',
    intro:
      "The best replies beam search finished, best first, ranked by score: the model's log-probability of the reply ÷ its length^length penalty (nearer 0 is likelier). The first became the reply.",
    rows: beams.map((beam, i) => ({
      name: `Beam ${i + 1}`,
      text: beam.text,
      chosen: i === 0,
      figures: [
        {
          key: 'score',
          label: 'score',
          value: formatLogprob(beam.score),
          title: 'What beam search ranked by: log-probability ÷ length^length penalty',
          bar: null,
        },
        {
          key: 'logprob',
          label: 'log-prob',
          value: formatLogprob(beam.logprob),
          title: "The model's log-probability of the whole reply: the sum over its tokens",
          bar: null,
        },
        { key: 'tokens', label: '', value: plural(beam.tokens, 'token'), title: 'Its length', bar: null },
      ],
    })),
  };
}

/** What the panel under a finished reply lists: a consensus reply's candidates, or a beam search's replies; null for neither. */
export function alternativesOf(stats: ReplyStats | null | undefined): AlternativesView | null {
  const consensus = consensusOf(stats);
  if (consensus) return consensusView(consensus);
  const beams = beamsOf(stats);
  return beams ? beamView(beams) : null;
}

/** A share (0–1) as the width of its bar: "62%", clamped; 0% when it is not a number. */
export function barWidth(share: number): string {
  return `${Number.isFinite(share) ? Math.min(1, Math.max(0, share)) * 100 : 0}%`;
}
