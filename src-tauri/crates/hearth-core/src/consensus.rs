//! Minimum Bayes risk (consensus) decoding's choice: of several candidate replies, the one that
//! agrees most with all the others under a utility — the medoid. Sampled candidates that many
//! others resemble are the likely ones; an outlier loses.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How alike two candidates are, from 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum MbrUtility {
    /// Character n-gram F-score (chrF, n = 1…6, recall weighted twice): robust to wording.
    #[default]
    ChrF,
    /// 1 when equal after trimming, else 0: the most frequent answer wins (self-consistency).
    ExactMatch,
}

/// The candidates a consensus reply was chosen from, kept with the reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Consensus {
    pub utility: MbrUtility,
    /// Index of the chosen candidate.
    pub chosen: u32,
    pub candidates: Vec<Candidate>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    pub text: String,
    /// Mean utility against every other candidate (its expected utility).
    pub score: f64,
}

impl Consensus {
    /// Scores each candidate against the others and chooses the highest (the first on a tie).
    pub fn choose(texts: Vec<String>, utility: MbrUtility) -> Consensus {
        let n = texts.len();
        let scores: Vec<f64> = (0..n)
            .map(|i| {
                let total: f64 = (0..n).filter(|&j| j != i).map(|j| utility.between(&texts[i], &texts[j])).sum();
                if n > 1 { total / (n - 1) as f64 } else { 1.0 }
            })
            .collect();
        let chosen = (0..n).fold(0, |best, i| if scores[i] > scores[best] { i } else { best });
        let candidates = texts.into_iter().zip(scores).map(|(text, score)| Candidate { text, score }).collect();
        Consensus { utility, chosen: chosen as u32, candidates }
    }

    pub fn chosen_text(&self) -> &str {
        self.candidates.get(self.chosen as usize).map_or("", |c| c.text.as_str())
    }
}

impl MbrUtility {
    /// How much `hypothesis` agrees with `reference`, from 0 to 1.
    pub fn between(self, hypothesis: &str, reference: &str) -> f64 {
        match self {
            MbrUtility::ExactMatch => f64::from(u8::from(hypothesis.trim() == reference.trim())),
            MbrUtility::ChrF => chrf(hypothesis, reference),
        }
    }
}

/// chrF (Popović 2015) as sacreBLEU computes it: character n-grams of 1 to 6 with spaces
/// removed, precision and recall averaged over the orders, F-score with recall weighted β = 2.
pub fn chrf(hypothesis: &str, reference: &str) -> f64 {
    const ORDERS: usize = 6;
    const BETA2: f64 = 4.0;
    let hyp: Vec<char> = hypothesis.chars().filter(|c| !c.is_whitespace()).collect();
    let refr: Vec<char> = reference.chars().filter(|c| !c.is_whitespace()).collect();
    if hyp.is_empty() || refr.is_empty() {
        return f64::from(u8::from(hyp == refr));
    }
    let (mut precision, mut recall, mut orders) = (0.0, 0.0, 0);
    for n in 1..=ORDERS {
        let (h, r) = (ngrams(&hyp, n), ngrams(&refr, n));
        let (h_total, r_total): (usize, usize) = (h.values().sum(), r.values().sum());
        if h_total == 0 || r_total == 0 {
            continue;
        }
        let matched: usize = h.iter().map(|(gram, &count)| count.min(r.get(gram).copied().unwrap_or(0))).sum();
        precision += matched as f64 / h_total as f64;
        recall += matched as f64 / r_total as f64;
        orders += 1;
    }
    if orders == 0 {
        return 0.0;
    }
    let (p, r) = (precision / f64::from(orders), recall / f64::from(orders));
    if p + r == 0.0 { 0.0 } else { (1.0 + BETA2) * p * r / (BETA2 * p + r) }
}

fn ngrams(chars: &[char], n: usize) -> std::collections::HashMap<&[char], usize> {
    let mut counts = std::collections::HashMap::new();
    for gram in chars.windows(n) {
        *counts.entry(gram).or_insert(0) += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chrf_is_one_for_equal_texts_and_falls_with_difference() {
        assert_eq!(chrf("the cat sat", "the cat sat"), 1.0);
        // Spaces do not count.
        assert_eq!(chrf("the cat sat", "thecat  sat"), 1.0);
        assert_eq!(chrf("abc", "xyz"), 0.0);
        let near = chrf("the cat sat on the mat", "the cat sat on a mat");
        let far = chrf("the cat sat on the mat", "dogs bark at night");
        assert!(near > 0.7 && near < 1.0 && far < 0.2, "near {near}, far {far}");
        assert_eq!(chrf("", ""), 1.0);
        assert_eq!(chrf("", "a"), 0.0);
    }

    #[test]
    fn the_medoid_of_the_candidates_is_chosen() {
        let texts = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cases: &[(&[&str], MbrUtility, u32)] = &[
            // Three answers and an outlier: the one closest to the other two wins (the second
            // also ends in "Paris.", as the third answer is written).
            (
                &["Paris is the capital of France.", "The capital of France is Paris.", "Paris.", "Bananas are yellow fruit."],
                MbrUtility::ChrF,
                1,
            ),
            // Self-consistency: the most frequent answer, whatever its position.
            (&["12", "15", "12 ", "13", "12"], MbrUtility::ExactMatch, 0),
            (&["7", "9", "9"], MbrUtility::ExactMatch, 1),
            // A tie keeps the first; a single candidate is its own choice.
            (&["a", "b"], MbrUtility::ExactMatch, 0),
            (&["only"], MbrUtility::ChrF, 0),
        ];
        for &(candidates, utility, expected) in cases {
            let consensus = Consensus::choose(texts(candidates), utility);
            assert_eq!(consensus.chosen, expected, "{candidates:?}: {:?}", consensus.candidates);
            // The chosen one's expected utility is the highest, and it is the mean of its row.
            let best = consensus.candidates[expected as usize].score;
            assert!(consensus.candidates.iter().all(|c| c.score <= best));
        }
        let scored = Consensus::choose(texts(&["x", "x", "y"]), MbrUtility::ExactMatch);
        assert_eq!(scored.candidates.iter().map(|c| c.score).collect::<Vec<_>>(), [0.5, 0.5, 0.0]);
        assert_eq!(scored.chosen_text(), "x");
    }
}
