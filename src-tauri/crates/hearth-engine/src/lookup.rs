//! Prompt lookup: guesses what comes next by finding the text's last few tokens earlier in the
//! conversation and proposing what followed them there. A reply that edits, quotes or copies
//! code from the conversation repeats long runs of it; free writing rarely repeats more than a
//! word or two, and then the guesses are few and short.

/// Longest and shortest run of last tokens looked up; a longer match predicts better.
const NGRAM_MAX: usize = 4;
const NGRAM_MIN: usize = 2;

/// Up to `max` tokens that followed the latest earlier occurrence of the longest run of
/// `history`'s last tokens (from `NGRAM_MAX` down to `NGRAM_MIN`); empty when none recurs.
pub fn draft<T: Copy + PartialEq>(history: &[T], max: usize) -> Vec<T> {
    if max == 0 {
        return Vec::new();
    }
    for n in (NGRAM_MIN..=NGRAM_MAX).rev() {
        let Some(tail_at) = history.len().checked_sub(n) else { continue };
        let tail = &history[tail_at..];
        // Latest first: the nearest context predicts best. `start < tail_at` leaves at least one
        // token after the match.
        if let Some(start) = (0..tail_at).rev().find(|&start| &history[start..start + n] == tail) {
            let from = start + n;
            return history[from..(from + max).min(history.len())].to_vec();
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::draft;

    #[test]
    fn drafts_what_followed_the_longest_latest_match() {
        let cases: &[(&str, usize, &str)] = &[
            // "cd" recurs: what followed it the last time.
            ("abcdefgxcd", 3, "efg"),
            ("abcdefgxcd", 10, "efgxcd"),
            // The longest run wins over a nearer shorter one: "bcd" (at 1) beats "cd" (at 6).
            ("abcdezzcdqbcd", 2, "ez"),
            // The latest of two equal matches.
            ("xyAAxyBBxy", 2, "BB"),
            // A single repeated token is not enough.
            ("abcxa", 4, ""),
            ("", 4, ""),
            ("ab", 4, ""),
            ("abab", 0, ""),
            // The match may run into the tail itself (a repeating pattern).
            ("ababab", 4, "ab"),
        ];
        for &(history, max, expected) in cases {
            let chars: Vec<char> = history.chars().collect();
            let got: String = draft(&chars, max).into_iter().collect();
            assert_eq!(got, expected, "{history:?} max {max}");
        }
    }
}
