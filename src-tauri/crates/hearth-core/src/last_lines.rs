//! The last lines a child process wrote to stderr: what a crash or a failed start is told with.

use std::collections::VecDeque;

/// Lines kept: enough for a backtrace's head or a server's start-up complaint.
pub const KEPT_LINES: usize = 64;

/// The last [`KEPT_LINES`] lines, oldest first.
#[derive(Debug, Default, Clone)]
pub struct LastLines(VecDeque<String>);

impl LastLines {
    pub fn push(&mut self, line: String) {
        if self.0.len() == KEPT_LINES {
            self.0.pop_front();
        }
        self.0.push_back(line);
    }

    pub fn lines(&self) -> impl DoubleEndedIterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_newest_lines() {
        let mut last = LastLines::default();
        for n in 0..KEPT_LINES + 3 {
            last.push(n.to_string());
        }
        assert_eq!(last.lines().count(), KEPT_LINES);
        assert_eq!(last.lines().next(), Some("3"));
        assert_eq!(last.lines().next_back(), Some((KEPT_LINES + 2).to_string().as_str()));
    }
}
