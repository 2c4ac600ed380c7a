//! How a reply's text is written from the text of the tokens the model wrote: the same, or
//! behind an opening its prompt wrote, or read from gpt-oss's channels. Whatever reads a
//! reply's tokens again (a beam search's best, a branch from the inspector) writes it so.

use super::THINK_OPENED;
use super::harmony::{ANALYSIS_OPENING, HarmonyStream};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextReading {
    /// As the tokens wrote it.
    Raw,
    /// Behind a reasoning block its prompt opened, written by no token (DeepSeek-R1's template
    /// opens it).
    OpenedThinking,
    /// Read from gpt-oss's channels.
    Channels,
    /// The same, behind an analysis channel its prompt opened.
    OpenedChannels,
}

impl TextReading {
    pub const ALL: [TextReading; 4] = [TextReading::Raw, TextReading::OpenedThinking, TextReading::Channels, TextReading::OpenedChannels];

    /// The reading of a model that writes channels or not, whose prompt opened its reasoning or not.
    pub fn of(channels: bool, opened: bool) -> TextReading {
        match (channels, opened) {
            (false, false) => TextReading::Raw,
            (false, true) => TextReading::OpenedThinking,
            (true, false) => TextReading::Channels,
            (true, true) => TextReading::OpenedChannels,
        }
    }

    pub fn reader(self) -> TextReader {
        let channels = matches!(self, TextReading::Channels | TextReading::OpenedChannels).then(HarmonyStream::new);
        TextReader { reading: self, channels }
    }

    /// The reply's text for the whole text of its tokens.
    pub fn read(self, raw: &str) -> String {
        let mut reader = self.reader();
        let mut text = reader.opening();
        text.push_str(&reader.push(raw));
        text.push_str(&reader.finish());
        text
    }
}

/// A reply's text, written piece by piece as its tokens come.
#[derive(Debug, Clone)]
pub struct TextReader {
    reading: TextReading,
    channels: Option<HarmonyStream>,
}

impl TextReader {
    /// The text written before any token.
    pub fn opening(&mut self) -> String {
        match (self.reading, &mut self.channels) {
            (TextReading::OpenedThinking, _) => THINK_OPENED.to_owned(),
            (TextReading::OpenedChannels, Some(channels)) => channels.push(ANALYSIS_OPENING),
            _ => String::new(),
        }
    }

    pub fn push(&mut self, piece: &str) -> String {
        match &mut self.channels {
            Some(channels) => channels.push(piece),
            None => piece.to_owned(),
        }
    }

    /// What was held back, once the tokens have ended.
    pub fn finish(&mut self) -> String {
        self.channels.as_mut().map(HarmonyStream::finish).unwrap_or_default()
    }

    /// Whether all that was pushed is in the text given back (nothing held: a marker or a
    /// header of the channels in hand).
    pub fn is_settled(&self) -> bool {
        self.channels.as_ref().is_none_or(HarmonyStream::is_settled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reading_writes_the_reply_as_the_engine_stores_it() {
        let channels = "<|channel|>analysis<|message|>Sum.<|end|><|start|>assistant<|channel|>final<|message|>Four.";
        let cases = [
            (TextReading::Raw, "Four.", "Four."),
            (TextReading::OpenedThinking, "Hmm.</think>Four.", "<think>\nHmm.</think>Four."),
            (TextReading::Channels, channels, "<think>Sum.</think>Four."),
            (TextReading::OpenedChannels, "Sum.<|end|><|start|>assistant<|channel|>final<|message|>Four.", "<think>Sum.</think>Four."),
        ];
        for (reading, raw, stored) in cases {
            assert_eq!(reading.read(raw), stored, "{reading:?}");
        }
        assert_eq!(TextReading::of(true, true), TextReading::OpenedChannels);
        assert_eq!(TextReading::of(false, true), TextReading::OpenedThinking);
    }
}
