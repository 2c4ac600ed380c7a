import { describe, expect, it } from 'vitest';
import type { BeamHypothesis, Consensus, ReplyStats } from '../../src/ipc/bindings';
import { alternativesOf, barWidth, beamView, consensusView } from '../../src/lib/alternatives';
import { table } from './helpers';
import { stats } from './reply-fixtures';

const CONSENSUS: Consensus = {
  utility: 'exactMatch',
  chosen: 1,
  candidates: [
    { text: 'Paris.', score: 0.5 },
    { text: 'Paris', score: 0.75 },
    { text: '<img src=x onerror=alert(1)>', score: Number.NaN },
  ],
};

const BEAMS: BeamHypothesis[] = [
  { text: 'The tram, then the tower.', logprob: -5.1234, score: -0.4267, tokens: 12 },
  { text: 'The tram.', logprob: -3.9, score: -0.65, tokens: 6 },
];


describe('consensusView: a consensus reply\'s candidates as the panel lists them', () => {
  const view = consensusView(CONSENSUS);
  it('names the panel, its button and how the candidates were compared', () => {
    expect(view).toMatchObject({
      kind: 'candidate',
      label: 'Consensus candidates',
      toggle: '3 candidates',
      toggleTitle: 'Show the candidates consensus chose this reply from',
      intro: 'Sampled side by side, each scored by its mean agreement (exact match) with the others, from 0 to 1; the highest became the reply.',
    });
  });
  it('lists them in order, the chosen one marked, each with its score and a bar for it', () => {
    expect(view.rows.map((r) => [r.name, r.text, r.chosen])).toEqual([
      ['Candidate 1', 'Paris.', false],
      ['Candidate 2', 'Paris', true],
      ['Candidate 3', '<img src=x onerror=alert(1)>', false],
    ]);
    expect(view.rows.map((r) => r.figures)).toEqual([
      [{ key: 'score', label: 'score', value: '0.50', title: 'Mean exact match against the other candidates', bar: 0.5 }],
      [{ key: 'score', label: 'score', value: '0.75', title: 'Mean exact match against the other candidates', bar: 0.75 }],
      [{ key: 'score', label: 'score', value: '–', title: 'Mean exact match against the other candidates', bar: 0 }],
    ]);
  });
});

describe('beamView: a beam search\'s best replies as the panel lists them', () => {
  const view = beamView(BEAMS);
  it('names the panel and its button', () => {
    expect(view).toMatchObject({ kind: 'beam', label: 'Beam search replies', toggle: '2 beams', toggleTitle: 'Show the best replies beam search found' });
    expect(view.intro).toMatch(/best first, ranked by score: the model's log-probability of the reply ÷ its length\^length penalty/);
  });
  it('lists them best first, the first (the reply) marked, each with its score, log-probability and length; no bars', () => {
    expect(view.rows.map((r) => [r.name, r.text, r.chosen])).toEqual([
      ['Beam 1', 'The tram, then the tower.', true],
      ['Beam 2', 'The tram.', false],
    ]);
    expect(view.rows.map((r) => r.figures.map((f) => [f.key, f.label, f.value, f.bar]))).toEqual([
      [['score', 'score', '−0.43', null], ['logprob', 'log-prob', '−5.12', null], ['tokens', '', '12 tokens', null]],
      [['score', 'score', '−0.65', null], ['logprob', 'log-prob', '−3.90', null], ['tokens', '', '6 tokens', null]],
    ]);
  });
});

table('alternativesOf: what the panel under a reply lists', (s: ReplyStats | null) => alternativesOf(s)?.toggle ?? null, [
  [stats({ consensus: CONSENSUS }), '3 candidates'],
  [stats({ beams: BEAMS }), '2 beams'],
  // Only the reply kept: nothing to list.
  [stats({ beams: BEAMS.slice(0, 1) }), null],
  [stats({ consensus: { ...CONSENSUS, candidates: [] } }), null],
  [stats({}), null],
  [null, null],
]);

table('barWidth: a share as the width of its bar', barWidth, [
  [0.62, '62%'],
  [0, '0%'],
  [1, '100%'],
  [1.4, '100%'],
  [-0.2, '0%'],
  [Number.NaN, '0%'],
]);
