//! Why the engine process died, in words: from its exit status and its last lines on stderr
//! (llama.cpp's own message where it left one — never a guess when it said something).

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

pub use hearth_core::LastLines;

/// One sentence: what killed the engine, and llama.cpp's (or Rust's) own words if it left any.
pub fn describe(status: Option<ExitStatus>, last: &LastLines) -> String {
    let said = last.lines().rev().find_map(telling_line);
    let signal = status.and_then(|s| s.signal());
    match (signal, said) {
        (Some(libc::SIGKILL), _) => "the engine was killed (SIGKILL) — most often because the system ran out of memory".into(),
        (_, Some(said)) => format!("the model crashed: {said}"),
        (Some(signal), None) => format!("the engine crashed ({})", signal_name(signal)),
        (None, None) => match status.and_then(|s| s.code()) {
            Some(code) => format!("the engine exited unexpectedly (status {code})"),
            None => "the engine stopped answering".into(),
        },
    }
}

/// The part of a stderr line that says what went wrong, if it is such a line.
fn telling_line(line: &str) -> Option<String> {
    let line = line.trim();
    // ggml's abort: "/path/to/ggml/src/ggml.c:1234: GGML_ASSERT(x) failed" (or a message).
    for marker in ["GGML_ASSERT", "GGML_ABORT"] {
        if let Some(at) = line.find(marker) {
            let place = line[..at].trim_end_matches([' ', ':']);
            let what = &line[at..];
            return Some(match place.rsplit_once(':') {
                Some((file, row)) => format!("{what} in {}:{row}", base_name(file)),
                None => what.to_owned(),
            });
        }
    }
    if line.contains("has overflowed its stack") {
        return Some("the engine overflowed its stack".into());
    }
    if let Some(what) = line.strip_prefix("what():") {
        return Some(format!("llama.cpp threw an exception: {}", what.trim()));
    }
    if let Some(rest) = line.split_once("panicked at ").map(|(_, rest)| rest) {
        return Some(format!("the engine panicked at {rest}"));
    }
    // ggml's abort with a plain message: "file.c:123: message".
    let (place, message) = line.split_once(": ")?;
    let (file, row) = place.rsplit_once(':')?;
    let source = [".c", ".cpp", ".h"].iter().any(|ext| file.ends_with(ext));
    (source && row.chars().all(|c| c.is_ascii_digit()) && !row.is_empty()).then(|| format!("{message} in {}:{row}", base_name(file)))
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGABRT => "SIGABRT, aborted".into(),
        libc::SIGSEGV => "SIGSEGV, a memory fault".into(),
        libc::SIGBUS => "SIGBUS, a memory fault".into(),
        libc::SIGILL => "SIGILL, an instruction this CPU lacks".into(),
        libc::SIGFPE => "SIGFPE, an arithmetic fault".into(),
        other => format!("signal {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(signal: Option<i32>, code: Option<i32>, lines: &[&str], expected: &str) {
        let status = match (signal, code) {
            (Some(signal), _) => Some(ExitStatus::from_raw(signal)),
            (None, Some(code)) => Some(ExitStatus::from_raw(code << 8)),
            (None, None) => None,
        };
        let mut last = LastLines::default();
        for line in lines {
            last.push((*line).to_owned());
        }
        assert_eq!(describe(status, &last), expected, "{lines:?}");
    }

    #[test]
    fn crashes_are_described_from_the_status_and_the_last_lines() {
        check(
            Some(libc::SIGABRT),
            None,
            &["INFO model loaded", "/build/llama.cpp/src/llama-sampling.cpp:432: GGML_ASSERT(cur_p->size > 0) failed", "[backtrace]"],
            "the model crashed: GGML_ASSERT(cur_p->size > 0) failed in llama-sampling.cpp:432",
        );
        check(
            Some(libc::SIGABRT),
            None,
            &["/b/ggml/src/ggml-backend.cpp:77: ggml_backend_buffer_alloc failed"],
            "the model crashed: ggml_backend_buffer_alloc failed in ggml-backend.cpp:77",
        );
        check(
            Some(libc::SIGABRT),
            None,
            &["thread 'hearth-engine' has overflowed its stack", "fatal runtime error: stack overflow"],
            "the model crashed: the engine overflowed its stack",
        );
        check(
            Some(libc::SIGABRT),
            None,
            &["terminate called after throwing an instance of 'std::runtime_error'", "  what():  unexpected token"],
            "the model crashed: llama.cpp threw an exception: unexpected token",
        );
        check(
            Some(libc::SIGABRT),
            None,
            &["thread 'x' panicked at src/session.rs:10:5:", "index out of bounds"],
            "the model crashed: the engine panicked at src/session.rs:10:5:",
        );
        check(
            Some(libc::SIGKILL),
            None,
            &["INFO decoding"],
            "the engine was killed (SIGKILL) — most often because the system ran out of memory",
        );
        check(Some(libc::SIGSEGV), None, &["INFO decoding"], "the engine crashed (SIGSEGV, a memory fault)");
        check(None, Some(3), &[], "the engine exited unexpectedly (status 3)");
        check(None, None, &[], "the engine stopped answering");
    }
}
