//! A server's question by link (MCP elicitation, URL mode): a page it asks the user to open in
//! their browser — to sign in to a third party, to pay — whose answers never pass through Hearth.
//! The address is checked before the user sees it: only web pages (https; plain http only to this
//! computer), no user name before the host (`https://bank.example@evil.example` leads to
//! `evil.example`), a bounded length. What passes is shown whole with its host apart, and what
//! deserves a second look (a name in another alphabet, a numeric address) says so. Nothing is
//! fetched or opened until the user says Open.

use serde::Serialize;
use ts_rs::TS;
use url::{Host, Url};

/// Longer addresses are refused: a page to open is not a place for data.
pub const MAX_LINK: usize = 2048;

/// A page a server asks the user to open, as the window shows it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct QuestionLink {
    /// The whole address as it will be opened (parsed and written again: its host in ASCII,
    /// lowercase), shown as text, never as a link.
    pub url: String,
    /// Where it leads, shown apart from the rest of the address.
    pub host: String,
    /// Why the address deserves a second look, in words; none when nothing stands out.
    pub warning: Option<String>,
}

/// Why a link was declined without asking the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkRefused {
    #[error("it is longer than {MAX_LINK} characters")]
    TooLong,
    #[error("it is not a web address ({0})")]
    NotAnAddress(String),
    #[error("it is not a secure web page ({0}:), and only https pages are opened (plain http only on this computer)")]
    Scheme(String),
    #[error("it names a user before its host, which hides where it leads")]
    UserBeforeHost,
}

/// The link a server gave, checked: what the window shows, or why it is declined unseen.
pub fn link_of(address: &str) -> Result<QuestionLink, LinkRefused> {
    if address.len() > MAX_LINK {
        return Err(LinkRefused::TooLong);
    }
    let url = Url::parse(address).map_err(|e| LinkRefused::NotAnAddress(e.to_string()))?;
    let scheme = url.scheme();
    if scheme != "https" && scheme != "http" {
        return Err(LinkRefused::Scheme(scheme.into()));
    }
    let host = url.host().ok_or_else(|| LinkRefused::NotAnAddress("it has no host".into()))?;
    let local = match &host {
        Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
        Host::Ipv4(ip) => ip.is_loopback(),
        Host::Ipv6(ip) => ip.is_loopback(),
    };
    if scheme == "http" && !local {
        return Err(LinkRefused::Scheme(scheme.into()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(LinkRefused::UserBeforeHost);
    }
    let warning = match &host {
        _ if local => Some("it leads to a program on this computer, not to a site".to_owned()),
        Host::Ipv4(_) | Host::Ipv6(_) => Some("it leads to a numeric address, not to a named site".to_owned()),
        Host::Domain(name) if name.split('.').any(|label| label.starts_with("xn--")) => {
            Some("its name is written in another alphabet (xn--…): it may imitate a site you know".to_owned())
        }
        Host::Domain(_) => None,
    };
    let host = host.to_string();
    Ok(QuestionLink { url: url.into(), host, warning })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Addresses a server may send: shown with their host and any warning, or declined unseen.
    #[test]
    fn links_are_checked_before_the_user_sees_them() {
        /// The host shown, and whether a warning goes with it; or why it is declined.
        type Shown = Result<(&'static str, bool), LinkRefused>;
        let warn = |url: &str| link_of(url).map(|link| (link.host, link.warning.is_some()));
        let cases: &[(&str, Shown)] = &[
            ("https://bistro.example/link?session=7", Ok(("bistro.example", false))),
            ("HTTPS://Bistro.EXAMPLE/Path", Ok(("bistro.example", false))),
            ("https://bïstro.example/", Ok(("xn--bstro-cta.example", true))),
            ("https://203.0.113.9/pay", Ok(("203.0.113.9", true))),
            ("http://localhost:8080/callback", Ok(("localhost", true))),
            ("http://[::1]:9000/", Ok(("[::1]", true))),
            ("http://bistro.example/", Err(LinkRefused::Scheme("http".into()))),
            ("javascript:alert(1)", Err(LinkRefused::Scheme("javascript".into()))),
            ("file:///etc/passwd", Err(LinkRefused::Scheme("file".into()))),
            ("https://bank.example@evil.example/", Err(LinkRefused::UserBeforeHost)),
            ("https://user:secret@bistro.example/", Err(LinkRefused::UserBeforeHost)),
            ("not a link", Err(LinkRefused::NotAnAddress("relative URL without a base".into()))),
        ];
        for (url, expected) in cases {
            let expected = expected.clone().map(|(host, warned)| (host.to_owned(), warned));
            assert_eq!(warn(url), expected, "{url}");
        }
        let long = format!("https://bistro.example/?{}", "a".repeat(MAX_LINK));
        assert_eq!(link_of(&long), Err(LinkRefused::TooLong));
        // What is opened is the address as parsed: its host in ASCII, shown whole.
        assert_eq!(link_of("https://bïstro.example/a b").unwrap().url, "https://xn--bstro-cta.example/a%20b");
    }
}
