//! The hub's JSON answers Hearth reads — a search, a repository's commit, its file tree — each
//! read with a size cap and a deadline. hf-hub (which still fetches files and their headers)
//! reads such an answer whole into memory with no limit, so a hub, or an endpoint set by
//! mistake, that sends an endless answer would fill the memory; a tree that pages on for ever
//! would never end.

use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderMap, LINK};
use reqwest::{StatusCode, Url};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::HubError;
use crate::error::root_cause;

/// The largest JSON answer read (a search of 1,000 repositories is ~1 MB, a page of a tree
/// ~100 KB).
const ANSWER_CAP: usize = 16 << 20;
/// The longest one answer may take from the request to its last byte, unless the hub's
/// configuration says otherwise.
pub(crate) const ANSWER_DEADLINE: Duration = Duration::from_secs(60);
/// A repository's tree beyond this many entries, or pages, is refused (the largest GGUF
/// repositories list a few hundred files in one page).
const MAX_TREE_ENTRIES: usize = 100_000;
const MAX_TREE_PAGES: usize = 200;

/// A search hit, as the hub lists it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ModelHit {
    pub id: String,
    #[serde(default)]
    pub downloads: Option<u64>,
    #[serde(default)]
    pub likes: Option<u64>,
    #[serde(default)]
    pub last_modified: Option<String>,
    /// `false`, or how access is granted (`"auto"`, `"manual"`).
    #[serde(default)]
    pub gated: Option<serde_json::Value>,
}

/// One entry of a repository's tree.
#[derive(Debug, Deserialize)]
pub(crate) struct TreeEntry {
    #[serde(rename = "type")]
    pub kind: String,
    pub path: String,
    #[serde(default)]
    pub size: u64,
    #[serde(default)]
    pub lfs: Option<Lfs>,
}

/// A file kept in LFS: its `oid` is the content's sha256.
#[derive(Debug, Deserialize)]
pub(crate) struct Lfs {
    #[serde(default)]
    pub oid: Option<String>,
    #[serde(default)]
    pub sha256: Option<String>,
}

#[derive(Deserialize)]
struct RepoInfo {
    sha: Option<String>,
}

/// The hub's JSON endpoints, with the client and token hf-hub uses.
#[derive(Clone)]
pub(crate) struct Api {
    pub http: reqwest::Client,
    pub endpoint: String,
    pub token: Option<String>,
    /// The longest one answer may take ([`ANSWER_DEADLINE`] by default).
    pub deadline: Duration,
}

impl Api {
    /// GGUF repositories matching `query`, most downloaded first.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Vec<ModelHit>, HubError> {
        let mut url = self.url(&["api", "models"])?;
        url.query_pairs_mut()
            .append_pair("search", query)
            .append_pair("filter", "gguf")
            .append_pair("sort", "downloads")
            .append_pair("direction", "-1")
            .append_pair("limit", &limit.to_string());
        let (mut hits, _): (Vec<ModelHit>, _) = self.get(url, "search").await?;
        hits.truncate(limit);
        Ok(hits)
    }

    /// The commit `main` of `owner/name` points at.
    pub async fn head_commit(&self, owner: &str, name: &str) -> Result<Option<String>, HubError> {
        let url = self.url(&["api", "models", owner, name])?;
        let (info, _): (RepoInfo, _) = self.get(url, &format!("{owner}/{name}")).await?;
        Ok(info.sha)
    }

    /// Every entry of `owner/name`'s tree at `revision`, page after page.
    pub async fn tree(&self, owner: &str, name: &str, revision: &str) -> Result<Vec<TreeEntry>, HubError> {
        let repo = format!("{owner}/{name}");
        let mut url = self.url(&["api", "models", owner, name, "tree", revision])?;
        url.query_pairs_mut().append_pair("recursive", "true");
        let mut entries = Vec::new();
        for _ in 0..MAX_TREE_PAGES {
            let (page, next): (Vec<TreeEntry>, _) = self.get(url, &repo).await?;
            entries.extend(page);
            if entries.len() > MAX_TREE_ENTRIES {
                break;
            }
            match next {
                Some(next) => url = next,
                None => return Ok(entries),
            }
        }
        Err(HubError::TooLarge { what: format!("the file list of {repo}"), endpoint: self.endpoint.clone() })
    }

    fn url(&self, segments: &[&str]) -> Result<Url, HubError> {
        let bad = || HubError::Network { endpoint: self.endpoint.clone(), detail: "the hub's address is not a URL".into() };
        let mut url = Url::parse(&self.endpoint).map_err(|_| bad())?;
        url.path_segments_mut().map_err(|()| bad())?.pop_if_empty().extend(segments);
        Ok(url)
    }

    /// One answer, read whole within the cap and the deadline, and the next page's URL if the
    /// answer names one (on the same host: a page elsewhere would carry the token there).
    async fn get<T: DeserializeOwned>(&self, url: Url, repo: &str) -> Result<(T, Option<Url>), HubError> {
        let network = |error: &dyn std::error::Error| HubError::Network { endpoint: self.endpoint.clone(), detail: root_cause(error) };
        let read = async {
            let mut request = self.http.get(url.clone());
            if let Some(token) = &self.token {
                request = request.header(AUTHORIZATION, format!("Bearer {token}"));
            }
            let mut response = request.send().await.map_err(|e| network(&e))?;
            let (status, next) = (response.status(), next_page(response.headers(), &url));
            let code = response.headers().get("x-error-code").and_then(|v| v.to_str().ok()).map(str::to_owned);
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| network(&e))? {
                if body.len() + chunk.len() > ANSWER_CAP {
                    return Err(HubError::TooLarge { what: format!("the answer about {repo}"), endpoint: self.endpoint.clone() });
                }
                body.extend_from_slice(&chunk);
            }
            Ok((status, code, body, next))
        };
        let (status, code, body, next) = tokio::time::timeout(self.deadline, read).await.map_err(|_| HubError::Network {
            endpoint: self.endpoint.clone(),
            detail: format!("no whole answer within {} s", self.deadline.as_secs()),
        })??;
        if !status.is_success() {
            return Err(refusal(status, code.as_deref(), &body, repo));
        }
        let value = serde_json::from_slice(&body).map_err(|e| HubError::Server {
            status: status.as_u16(),
            detail: format!("the answer about {repo} is not what the hub sends ({e})"),
        })?;
        Ok((value, next))
    }
}

/// The `rel="next"` page a `Link` header names, if it is on `current`'s host.
fn next_page(headers: &HeaderMap, current: &Url) -> Option<Url> {
    let link = headers.get(LINK)?.to_str().ok()?;
    let next = link.split(',').find(|part| part.contains("rel=\"next\""))?;
    let url = Url::parse(next.split_once('<')?.1.split_once('>')?.0).ok()?;
    (url.origin() == current.origin()).then_some(url)
}

/// A refused request in words, as hf-hub would report it (`code`: the hub's `x-error-code`).
fn refusal(status: StatusCode, code: Option<&str>, body: &[u8], repo: &str) -> HubError {
    match status.as_u16() {
        401 | 403 => HubError::Auth { repo: repo.to_owned() },
        404 if code == Some("RevisionNotFound") => HubError::NotFound { what: format!("that revision of {repo}") },
        404 => HubError::NotFound { what: format!("repository {repo}") },
        429 => HubError::RateLimited,
        status => {
            let message = serde_json::from_slice::<serde_json::Value>(body)
                .ok()
                .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned));
            let detail = message.unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(200).collect());
            HubError::Server { status, detail: if detail.is_empty() { "no details".into() } else { detail } }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn a_next_page_is_followed_only_on_the_same_host() {
        let current = Url::parse("https://huggingface.co/api/models/a/b/tree/main?recursive=true").unwrap();
        let cases = [
            (r#"<https://huggingface.co/api/models/a/b/tree/main?cursor=x>; rel="next""#, Some("cursor=x")),
            (r#"<https://elsewhere.example/api?cursor=x>; rel="next""#, None),
            (r#"<https://huggingface.co/api/x>; rel="prev""#, None),
            ("garbage", None),
        ];
        for (link, expected) in cases {
            let mut headers = HeaderMap::new();
            headers.insert(LINK, HeaderValue::from_str(link).unwrap());
            assert_eq!(next_page(&headers, &current).and_then(|u| u.query().map(str::to_owned)).as_deref(), expected, "{link}");
        }
    }
}
