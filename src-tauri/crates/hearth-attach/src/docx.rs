//! A DOCX's text: `word/document.xml` out of the zip, read within a bound on what it inflates to
//! (a zip bomb is refused, not unpacked), its runs' text with paragraphs, tabs and breaks.

use std::io::{Cursor, Read};

use quick_xml::Reader;
use quick_xml::events::Event;

use crate::{AttachError, Limits};

pub fn text(name: &str, data: &[u8], limits: &Limits) -> Result<String, AttachError> {
    let damaged = |reason: String| AttachError::Damaged { name: name.into(), reason };
    let mut zip = zip::ZipArchive::new(Cursor::new(data)).map_err(|e| damaged(e.to_string()))?;
    let entry = match zip.by_name("word/document.xml") {
        Ok(entry) => entry,
        Err(zip::result::ZipError::FileNotFound) => return Err(damaged("it is a zip without a Word document inside".into())),
        Err(zip::result::ZipError::UnsupportedArchive(why)) if why.contains("ncrypt") || why.contains("assword") => {
            return Err(AttachError::Encrypted { name: name.into() });
        }
        Err(e) => return Err(damaged(e.to_string())),
    };
    if entry.encrypted() {
        return Err(AttachError::Encrypted { name: name.into() });
    }
    let bomb = || AttachError::Bomb { name: name.into(), limit: limits.max_unpacked_bytes };
    // What the zip declares is checked first; what it inflates to is bounded however it lies.
    if entry.size() > limits.max_unpacked_bytes {
        return Err(bomb());
    }
    let mut xml = Vec::new();
    entry.take(limits.max_unpacked_bytes + 1).read_to_end(&mut xml).map_err(|e| damaged(e.to_string()))?;
    if xml.len() as u64 > limits.max_unpacked_bytes {
        return Err(bomb());
    }
    let xml = String::from_utf8(xml).map_err(|_| damaged("its text is not UTF-8".into()))?;
    paragraphs(&xml).map_err(damaged)
}

/// The text of WordprocessingML: each `w:t` run's text, a line per paragraph, `w:tab` a tab,
/// `w:br`/`w:cr` a line break.
fn paragraphs(xml: &str) -> Result<String, String> {
    let mut reader = Reader::from_str(xml);
    let mut text = String::new();
    let mut in_run_text = false;
    loop {
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Start(tag) => in_run_text = tag.name().as_ref() == "w:t",
            Event::Empty(tag) => match tag.name().as_ref() {
                "w:tab" => text.push('\t'),
                "w:br" | "w:cr" => text.push('\n'),
                _ => {}
            },
            Event::End(tag) => match tag.name().as_ref() {
                "w:t" => in_run_text = false,
                "w:p" => text.push('\n'),
                "w:tc" => text.push('\t'),
                _ => {}
            },
            Event::Text(run) if in_run_text => text += &run.xml10_content(),
            Event::GeneralRef(reference) if in_run_text => {
                let named = match reference.as_ref() {
                    "amp" => Some('&'),
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "quot" => Some('"'),
                    "apos" => Some('\''),
                    _ => None,
                };
                text.extend(named.or(reference.resolve_char_ref().ok().flatten()));
            }
            Event::Eof => return Ok(text),
            _ => {}
        }
    }
}
