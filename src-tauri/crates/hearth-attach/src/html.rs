//! HTML's text: html5ever's tokenizer (no tree is built), the text of the body with a line break
//! where a block ends; scripts, styles and templates left out.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts};

/// The text a reader of `html` would see.
pub fn text(html: &str) -> String {
    let tokenizer = Tokenizer::new(TextSink::default(), TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.text.take()
}

#[derive(Default)]
struct TextSink {
    text: RefCell<String>,
    /// Inside a script, style or template: its text is not read.
    hidden: RefCell<Option<String>>,
}

/// Elements whose end is a line break.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "tr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "section",
    "article",
    "header",
    "footer",
    "table",
    "ul",
    "ol",
    "dt",
    "dd",
    "hr",
    "title",
    "main",
    "nav",
    "aside",
    "figcaption",
];
const HIDDEN: &[&str] = &["script", "style", "template", "noscript"];

impl TextSink {
    /// Ends what was read so far with `mark` (a line break between blocks, a tab between cells),
    /// unless a line just began.
    fn separate(&self, mark: char) {
        let mut out = self.text.borrow_mut();
        if !out.is_empty() && !out.ends_with('\n') {
            while out.ends_with(' ') {
                out.pop();
            }
            out.push(mark);
        }
    }
}

impl TokenSink for TextSink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        match token {
            Token::TagToken(Tag { kind, name, .. }) => {
                let name = name.as_ref().to_ascii_lowercase();
                let mut hidden = self.hidden.borrow_mut();
                match (&*hidden, kind) {
                    (Some(open), TagKind::EndTag) if *open == name => *hidden = None,
                    (Some(_), _) => {}
                    (None, TagKind::StartTag) if HIDDEN.contains(&name.as_str()) => {
                        *hidden = Some(name.clone());
                        return TokenSinkResult::RawData(if name == "script" { RawKind::ScriptData } else { RawKind::Rawtext });
                    }
                    (None, _) if name == "title" && kind == TagKind::StartTag => {
                        return TokenSinkResult::RawData(RawKind::Rcdata);
                    }
                    (None, _) if BLOCKS.contains(&name.as_str()) => self.separate('\n'),
                    (None, TagKind::StartTag) if name == "td" || name == "th" => self.separate('\t'),
                    _ => {}
                }
            }
            Token::CharacterTokens(text) if self.hidden.borrow().is_none() => {
                let mut out = self.text.borrow_mut();
                // Runs of whitespace read as one space, as a browser shows them.
                let mut last_space = out.ends_with(char::is_whitespace);
                for c in text.chars() {
                    if c.is_whitespace() {
                        if !last_space {
                            out.push(' ');
                        }
                        last_space = true;
                    } else {
                        out.push(c);
                        last_space = false;
                    }
                }
            }
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_what_a_browser_shows() {
        let html = "<!doctype html><html><head><title>Kettles</title><style>p{color:red}</style>\
            <script>if (a < b) { alert('</p>') }</script></head><body><h1>Boiling</h1>\
            <p>Water   boils at\n 100 &deg;C &amp; no&nbsp;more.</p><ul><li>one</li><li>two</li></ul>\
            <table><tr><td>a</td><td>b</td></tr></table></body></html>";
        let text = crate::text::tidy(&super::text(html));
        assert_eq!(text, "Kettles\nBoiling\nWater boils at 100 °C & no more.\none\ntwo\na\tb");
    }
}
