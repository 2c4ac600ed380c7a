//! Stop strings: the reply ends before the first one, and no part of one is ever streamed, even
//! when it arrives split across tokens.

pub struct StopFilter {
    stops: Vec<String>,
    /// Text received but not yet released: it may be the start of a stop string.
    held: String,
}

/// What to show after a push, and whether a stop string was reached.
#[derive(Debug, PartialEq, Eq)]
pub struct Released {
    pub text: String,
    pub stopped: bool,
}

impl StopFilter {
    pub fn new(stops: &[String]) -> Self {
        StopFilter { stops: stops.to_vec(), held: String::new() }
    }

    pub fn push(&mut self, text: &str) -> Released {
        self.held.push_str(text);
        if let Some(at) = self.stops.iter().filter_map(|s| self.held.find(s.as_str())).min() {
            let text = self.held[..at].to_owned();
            self.held.clear();
            return Released { text, stopped: true };
        }
        let keep = self.longest_partial_stop();
        let release_to = self.held.len() - keep;
        let text = self.held[..release_to].to_owned();
        self.held.drain(..release_to);
        Released { text, stopped: false }
    }

    /// The text held back when the reply ends for another reason: it was not a stop string.
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }

    /// Length of the longest suffix of `held` that is a proper prefix of some stop string.
    fn longest_partial_stop(&self) -> usize {
        self.stops
            .iter()
            .flat_map(|stop| (1..stop.len()).rev().filter(|&n| stop.is_char_boundary(n) && self.held.ends_with(&stop[..n])).take(1))
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `pieces` and returns what was shown, joined with '|' per push, and whether it stopped.
    fn check(stops: &[&str], pieces: &[&str], shown: &str, stopped: bool) {
        let stops: Vec<String> = stops.iter().map(|s| s.to_string()).collect();
        let mut f = StopFilter::new(&stops);
        let mut out = Vec::new();
        let mut hit = false;
        for p in pieces {
            let r = f.push(p);
            out.push(r.text);
            if r.stopped {
                hit = true;
                break;
            }
        }
        if !hit {
            out.push(f.finish());
        }
        assert_eq!((out.join("|"), hit), (shown.to_owned(), stopped), "{stops:?} {pieces:?}");
    }

    #[test]
    fn stop_strings_are_never_shown() {
        check(&[], &["a", "b"], "a|b|", false);
        check(&["END"], &["hello ", "END", "more"], "hello |", true);
        check(&["END"], &["hel", "lo E", "N", "D!"], "hel|lo ||", true);
        check(&["END"], &["E", "N", "x"], "||ENx|", false);
        check(&["END"], &["abc E"], "abc |E", false);
        check(&["\n\n", "User:"], &["Hi.", "\n", "\nUser: x"], "Hi.||", true);
        check(&["ab", "b"], &["xab"], "x", true);
        check(&["é!"], &["café", "!"], "caf|", true);
    }
}
