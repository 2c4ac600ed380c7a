//! Lines a new prompt up with the KV cache by the text they share, not only token by token.
//!
//! A sampled reply may spell its text with tokens that tokenizing the text again would not
//! ("Par" + "is" where the tokenizer writes "Paris"). Matching the next turn's prompt to the cache
//! token by token would then stop at that word and prefill the rest of the conversation again.

/// How many tokens two sequences share from the start.
pub fn shared_prefix<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Returns `tokens` (the prompt) re-spelled so that the cached tokens that write the same text
/// lead it, followed by the tokenized rest. Falls back to `tokens` unchanged when the text parts
/// ways at the first differing token, or when the rest cannot be tokenized on its own into
/// exactly its text (SentencePiece tokenizers add a space before the text they are given).
///
/// The prompt's last `own_tail` bytes are never followed: they keep their own tokens. (The user's
/// message: a draft read ahead while it was typed cached the word being typed, "wa", and
/// following it spelled the sent "walk" as "wa" + "lk".)
pub fn follow_cache<T: Copy + PartialEq>(
    cached: &[T],
    tokens: Vec<T>,
    own_tail: usize,
    piece: impl Fn(T) -> Vec<u8>,
    tokenize: impl Fn(&[u8]) -> Vec<T>,
) -> Vec<T> {
    let same = cached.iter().zip(&tokens).take_while(|(a, b)| a == b).count();
    if same == cached.len() || same == tokens.len() {
        return tokens;
    }
    let pieces: Vec<Vec<u8>> = tokens[same..].iter().map(|&t| piece(t)).collect();
    if pieces.iter().any(Vec::is_empty) {
        return tokens; // A token that writes no text (an added BOS) would be lost in the text.
    }
    let rest = pieces.concat();
    let followable = rest.len().saturating_sub(own_tail);
    let (mut matched, mut kept) = (0, same);
    for &token in &cached[same..] {
        let p = piece(token);
        if p.is_empty() || matched + p.len() > followable || !rest[matched..].starts_with(&p) {
            break;
        }
        matched += p.len();
        kept += 1;
    }
    if kept == same {
        return tokens;
    }
    let tail = tokenize(&rest[matched..]);
    if tail.iter().flat_map(|&t| piece(t)).ne(rest[matched..].iter().copied()) {
        return tokens;
    }
    let mut spelled = cached[..kept].to_vec();
    spelled.extend(tail);
    spelled
}

/// The bytes at the end of `prompt` that an unfinished `message` (the last in it, still being
/// typed) may yet change: from its last word on (the space before it included, which a
/// tokenizer joins to the word; spaces typed after it too), the turn's closing and the reply's
/// opening after it. The message is found trimmed (many templates trim it); not found, all is.
pub fn unsettled_bytes(prompt: &str, message: &str) -> usize {
    let message = message.trim();
    let settled = message.rfind(char::is_whitespace).unwrap_or(0);
    prompt.rfind(message).map_or(prompt.len(), |at| prompt.len() - (at + settled))
}

/// How many of the last `tokens` write the prompt's last `tail` bytes (a token across the
/// boundary among them).
pub fn tokens_writing_tail<T: Copy>(tokens: &[T], tail: usize, piece: impl Fn(T) -> Vec<u8>) -> usize {
    let mut written = 0;
    for (n, &token) in tokens.iter().rev().enumerate() {
        if written >= tail {
            return n;
        }
        written += piece(token).len();
    }
    tokens.len()
}

#[cfg(test)]
mod tests {
    use super::{follow_cache, tokens_writing_tail, unsettled_bytes};

    /// A toy vocabulary: token i writes VOCAB[i]; tokenizing takes the longest match first.
    const VOCAB: &[&str] = &["<s>", "Par", "is", "Paris", " is", " nice", " ", "n", "ice", "?", ""];

    fn piece(t: usize) -> Vec<u8> {
        VOCAB[t].as_bytes().to_vec()
    }

    fn tokenize(text: &[u8]) -> Vec<usize> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let (id, len) = VOCAB
                .iter()
                .enumerate()
                .filter(|(_, w)| !w.is_empty() && text[at..].starts_with(w.as_bytes()))
                .map(|(i, w)| (i, w.len()))
                .max_by_key(|&(_, len)| len)
                .expect("the toy vocabulary covers the text");
            out.push(id);
            at += len;
        }
        out
    }

    /// A tokenizer that, like SentencePiece, writes a space before the text it is given.
    fn tokenize_with_space(text: &[u8]) -> Vec<usize> {
        tokenize(&[b" ", text].concat())
    }

    #[test]
    fn follows_the_cache_where_it_writes_the_same_text() {
        // (cache, canonical prompt, expected)
        let cases: &[(&[usize], &[usize], &[usize])] = &[
            // "Par"+"is" sampled where the tokenizer writes "Paris": the cache leads.
            (&[0, 1, 2, 4, 5], &[0, 3, 4, 5, 9], &[0, 1, 2, 4, 5, 9]),
            // The cache goes on with text the prompt lacks: as far as it agrees.
            (&[0, 1, 2, 4, 9], &[0, 3, 4, 5, 9], &[0, 1, 2, 4, 5, 9]),
            // Token for token the same: unchanged.
            (&[0, 3, 4], &[0, 3, 4, 5], &[0, 3, 4, 5]),
            // Text that parts ways at once: unchanged.
            (&[0, 4, 5], &[0, 3, 9], &[0, 3, 9]),
            // An empty cache, or a prompt inside the cache: unchanged.
            (&[], &[0, 3], &[0, 3]),
            (&[0, 3, 4, 5], &[0, 3], &[0, 3]),
            // The whole prompt in other tokens: all of it from the cache.
            (&[0, 1, 2, 4], &[0, 3, 4], &[0, 1, 2, 4]),
            // A cached token that writes nothing is not taken as matching.
            (&[0, 10, 3], &[0, 3, 4], &[0, 3, 4]),
        ];
        for (cache, prompt, expected) in cases {
            let got = follow_cache(cache, prompt.to_vec(), 0, piece, tokenize);
            assert_eq!(got, *expected, "cache {cache:?}, prompt {prompt:?}");
        }
    }

    #[test]
    fn keeps_the_prompts_own_tail_in_its_own_tokens() {
        // "<s>Paris is nice?" after a cache of "<s>Par" + "is is n": (own tail in bytes, expected).
        let (cache, prompt) = (&[0, 1, 2, 4, 7][..], vec![0, 3, 4, 5, 9]);
        let cases: &[(usize, &[usize])] = &[
            // Nothing protected: followed as far as the text agrees ("Par" "is" " is", then " nice?").
            (0, &[0, 1, 2, 4, 5, 9]),
            // " nice?" its own: the same, since the cache agrees only before it.
            (6, &[0, 1, 2, 4, 5, 9]),
            // " is nice?" its own: "Par" + "is" followed, the rest tokenized alone.
            (9, &[0, 1, 2, 4, 5, 9]),
            // "is is nice?" its own: "Par" followed, "is" + " is" + … tokenized alone.
            (11, &[0, 1, 2, 4, 5, 9]),
            // The whole message its own (a typed "Par" in the cache, "Paris" sent): unchanged.
            (14, &[0, 3, 4, 5, 9]),
            (usize::MAX, &[0, 3, 4, 5, 9]),
        ];
        for &(own_tail, expected) in cases {
            assert_eq!(follow_cache(cache, prompt.clone(), own_tail, piece, tokenize), expected, "own tail {own_tail}");
        }
    }

    #[test]
    fn keeps_the_prompt_when_the_rest_cannot_be_tokenized_alone() {
        let prompt = vec![0, 3, 4, 5];
        assert_eq!(follow_cache(&[0, 1, 2], prompt.clone(), 0, piece, tokenize_with_space), prompt);
    }

    #[test]
    fn an_unfinished_message_leaves_its_last_word_and_what_follows_unsettled() {
        let prompt = |message: &str| format!("<user>{message}<end><assistant>");
        let trimmed = |message: &str| prompt(message.trim());
        // (message, the unsettled end of its prompt), as written and by a template that trims it.
        for (message, unsettled) in [
            ("Tell me about the sea", " sea<end><assistant>"),
            // A space after it may still join the next word's token: the word stays unsettled.
            ("Tell me about the ", " the <end><assistant>"),
            ("Tell", "Tell<end><assistant>"),
            ("Tell me\nabout", "\nabout<end><assistant>"),
            ("  Tell", "Tell<end><assistant>"),
        ] {
            assert_eq!(unsettled_bytes(&prompt(message), message), unsettled.len(), "{message:?}");
            let unsettled_trimmed = unsettled.len() - (message.len() - message.trim_end().len());
            assert_eq!(unsettled_bytes(&trimmed(message), message), unsettled_trimmed, "{message:?} trimmed");
        }
        assert_eq!(unsettled_bytes("<user>", "text the template lost"), "<user>".len());
    }

    #[test]
    fn the_tokens_writing_a_tail_include_one_across_its_start() {
        // "<s>" "Paris" " is" " nice" "?" write "<s>Paris is nice?".
        let prompt = [0, 3, 4, 5, 9];
        for (tail, tokens) in [(0, 0), (1, 1), (5, 2), (6, 2), (7, 3), (12, 4), (17, 5), (100, 5)] {
            assert_eq!(tokens_writing_tail(&prompt, tail, piece), tokens, "{tail} bytes");
        }
    }
}
