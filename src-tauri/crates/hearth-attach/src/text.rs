//! Text files: UTF-8 (with or without a byte-order mark), UTF-16 with one, or a legacy 8-bit
//! encoding (Windows-1252) when the bytes are not UTF-8 but still read as text.

use encoding_rs::{UTF_16BE, UTF_16LE, WINDOWS_1252};

use crate::AttachError;

/// The text of a file that should be text; a binary one is refused.
pub fn decode(name: &str, data: &[u8]) -> Result<String, AttachError> {
    if let Some(rest) = data.strip_prefix(b"\xEF\xBB\xBF") {
        return utf8(name, rest);
    }
    for (bom, encoding) in [(&b"\xFF\xFE"[..], UTF_16LE), (b"\xFE\xFF", UTF_16BE)] {
        if data.starts_with(bom) {
            let (text, _, malformed) = encoding.decode(data);
            return if malformed { Err(AttachError::Binary { name: name.into() }) } else { Ok(text.into_owned()) };
        }
    }
    utf8(name, data)
}

fn utf8(name: &str, data: &[u8]) -> Result<String, AttachError> {
    let binary = || AttachError::Binary { name: name.into() };
    // No text file holds a NUL; most binary formats do, early.
    if data.contains(&0) {
        return Err(binary());
    }
    match std::str::from_utf8(data) {
        Ok(text) => Ok(text.to_owned()),
        Err(_) => {
            let (text, _, _) = WINDOWS_1252.decode(data);
            // Control characters other than whitespace are rare in text and common in binary.
            let controls = text.chars().filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\x0c')).count();
            if controls * 100 > text.chars().count() { Err(binary()) } else { Ok(text.into_owned()) }
        }
    }
}

/// Line ends made `\n`, trailing spaces and runs of more than two blank lines dropped: what a
/// model reads costs tokens.
pub fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.replace("\r\n", "\n").replace('\r', "\n").lines() {
        let line = line.trim_end();
        blank = if line.is_empty() { blank + 1 } else { 0 };
        if blank <= 2 {
            out += line;
            out.push('\n');
        }
    }
    out.trim_matches('\n').to_owned()
}
