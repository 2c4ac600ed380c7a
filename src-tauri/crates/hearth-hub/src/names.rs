//! Names from the hub are untrusted: a repository id or a file path becomes a path on disk only
//! after these checks. Also: what quantization a file name says, and which files are parts of one.

use crate::HubError;

/// Checks `owner/name` and returns its two parts.
pub fn repo_id(repo: &str) -> Result<(&str, &str), HubError> {
    let bad = || HubError::BadName { name: repo.to_owned(), why: "a repository is named owner/name" };
    let (owner, name) = repo.split_once('/').ok_or_else(bad)?;
    for part in [owner, name] {
        let ok = !part.is_empty()
            && !part.starts_with(['.', '-'])
            && !part.contains("..")
            && part.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !ok {
            return Err(bad());
        }
    }
    Ok((owner, name))
}

/// Checks a file's path inside a repository: relative, `/`-separated, no `.` or `..` parts.
pub fn repo_path(path: &str) -> Result<&str, HubError> {
    let bad = |why| Err(HubError::BadName { name: path.to_owned(), why });
    if path.is_empty() || path.starts_with('/') || path.contains(['\\', '\0', ':']) {
        return bad("a file in a repository has a relative path");
    }
    if path.split('/').any(|part| part.is_empty() || part == "." || part == "..") {
        return bad("a file's path may not climb out of its repository");
    }
    Ok(path)
}

/// `(index, count)` of a split file's part (`name-00002-of-00005.gguf` → (2, 5)).
pub fn split_part(file: &str) -> Option<(u32, u32)> {
    let stem = file.strip_suffix(".gguf")?;
    let (rest, count) = stem.rsplit_once("-of-")?;
    let (_, index) = rest.rsplit_once('-')?;
    let digits = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_digit());
    (digits(index) && digits(count)).then(|| (index.parse().ok(), count.parse().ok())).and_then(|(i, c)| Some((i?, c?)))
}

/// Quantization labels as llama.cpp's quantize writes them into file names, longest first.
const QUANTS: &[&str] = &[
    "IQ2_XXS",
    "IQ3_XXS",
    "Q4_0_4_4",
    "Q4_0_4_8",
    "Q4_0_8_8",
    "MXFP4_MOE",
    "IQ1_S",
    "IQ1_M",
    "IQ2_XS",
    "IQ2_S",
    "IQ2_M",
    "IQ3_XS",
    "IQ3_S",
    "IQ3_M",
    "IQ4_XS",
    "IQ4_NL",
    "Q2_K_S",
    "Q2_K_L",
    "Q3_K_S",
    "Q3_K_M",
    "Q3_K_L",
    "Q3_K_XL",
    "Q4_K_S",
    "Q4_K_M",
    "Q4_K_L",
    "Q4_K_XL",
    "Q5_K_S",
    "Q5_K_M",
    "Q5_K_L",
    "Q5_K_XL",
    "Q6_K_L",
    "Q6_K_XL",
    "Q8_K_XL",
    "TQ1_0",
    "TQ2_0",
    "MXFP4",
    "Q2_K",
    "Q3_K",
    "Q4_K",
    "Q5_K",
    "Q6_K",
    "Q4_0",
    "Q4_1",
    "Q5_0",
    "Q5_1",
    "Q8_0",
    "BF16",
    "F16",
    "F32",
];

/// The quantization a GGUF file's name says ("model.Q4_K_M.gguf" → "Q4_K_M"); its stem otherwise.
pub fn quant_label(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    let upper = name.to_ascii_uppercase();
    let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_ascii_alphanumeric());
    let mut quants = QUANTS.to_vec();
    quants.sort_by_key(|q| std::cmp::Reverse(q.len()));
    for quant in quants {
        for (at, _) in upper.match_indices(quant) {
            let before = upper[..at].chars().next_back();
            let after = upper[at + quant.len()..].chars().next();
            if boundary(before) && boundary(after) && after != Some('_') {
                return quant.to_owned();
            }
        }
    }
    name.strip_suffix(".gguf").unwrap_or(name).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_ids_and_paths_are_checked() {
        for ok in ["HuggingFaceTB/SmolLM2-135M-Instruct", "a/b", "bartowski/Qwen2.5-7B-Instruct-GGUF"] {
            assert!(repo_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", "noslash", "a/b/c", "../b", "a/..", "a/.hidden", "a/b c", "/b", "a/", "a\\b/c"] {
            assert!(repo_id(bad).is_err(), "{bad}");
        }
        for ok in ["m.gguf", "Q4_K_M/m-00001-of-00002.gguf", "a.b/c.gguf"] {
            assert_eq!(repo_path(ok).unwrap(), ok);
        }
        for bad in ["", "../m.gguf", "a/../../m.gguf", "/etc/passwd", "a//b.gguf", "./m.gguf", "a\\..\\m.gguf", "C:/m.gguf", "m.gguf/"] {
            assert!(repo_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn file_names_say_their_quantization_and_part() {
        let cases = [
            ("SmolLM2-135M-Instruct.Q4_1.gguf", "Q4_1", None),
            ("qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf", "Q4_K_M", Some((1, 2))),
            ("Q8_0/Llama-3.3-70B-Instruct-Q8_0-00002-of-00003.gguf", "Q8_0", Some((2, 3))),
            ("model-IQ2_XXS.gguf", "IQ2_XXS", None),
            ("model-f16.gguf", "F16", None),
            ("model-BF16.gguf", "BF16", None),
            ("Phi-3-mini-4k-instruct-fp16.gguf", "Phi-3-mini-4k-instruct-fp16", None),
            ("model-Q4_K_XL.gguf", "Q4_K_XL", None),
            ("model-00001-of-2.gguf", "model-00001-of-2", None),
        ];
        for (file, quant, part) in cases {
            assert_eq!((quant_label(file).as_str(), split_part(file)), (quant, part), "{file}");
        }
    }
}
