//! The app's log file: `hearth.log.<date>`, a new one each day, the last [`KEPT_DAYS`] kept, and
//! at most [`DAILY_CAP`] written a day, so a loop of errors cannot fill the disk. Past the cap one
//! line says so and the rest of the day goes to stderr only.

use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use tracing_appender::rolling::{InitError, RollingFileAppender, Rotation};
use tracing_subscriber::fmt::MakeWriter;

pub const KEPT_DAYS: usize = 7;
pub const DAILY_CAP: u64 = 32 << 20;

/// The rotated, capped log file in `dir`.
pub fn open(dir: &Path) -> Result<CappedLog<RollingFileAppender>, InitError> {
    let rolling =
        RollingFileAppender::builder().rotation(Rotation::DAILY).filename_prefix("hearth.log").max_log_files(KEPT_DAYS).build(dir)?;
    Ok(CappedLog::new(rolling, DAILY_CAP))
}

/// Writes to `inner` until `cap` bytes were written today (UTC, as the file's date).
pub struct CappedLog<M> {
    inner: M,
    cap: u64,
    today: Arc<Mutex<Today>>,
}

#[derive(Default)]
struct Today {
    day: u64,
    written: u64,
    capped: bool,
}

impl<M> CappedLog<M> {
    pub fn new(inner: M, cap: u64) -> Self {
        CappedLog { inner, cap, today: Arc::default() }
    }
}

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for CappedLog<M> {
    type Writer = CappedWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        CappedWriter { inner: self.inner.make_writer(), cap: self.cap, today: Arc::clone(&self.today) }
    }
}

pub struct CappedWriter<W> {
    inner: W,
    cap: u64,
    today: Arc<Mutex<Today>>,
}

impl<W: Write> Write for CappedWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let day = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() / 86_400);
        let mut today = self.today.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if today.day != day {
            *today = Today { day, ..Today::default() };
        }
        if today.written + buf.len() as u64 <= self.cap {
            self.inner.write_all(buf)?;
            today.written += buf.len() as u64;
        } else if !today.capped {
            today.capped = true;
            let note = format!("the log reached {} MiB today: the rest of the day is not kept in this file\n", self.cap >> 20);
            self.inner.write_all(note.as_bytes())?;
        }
        Ok(buf.len()) // What is dropped counts as written: a log line must never fail the app.
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_of_logging_stops_at_the_cap_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let rolling = RollingFileAppender::builder().rotation(Rotation::DAILY).filename_prefix("hearth.log").build(dir.path()).unwrap();
        let log = CappedLog::new(rolling, 10 << 20);
        let line = [b'x'; 1023].iter().chain(b"\n").copied().collect::<Vec<u8>>();
        for _ in 0..(12 << 10) {
            log.make_writer().write_all(&line).unwrap();
        }
        let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.path()).collect();
        assert_eq!(files.len(), 1, "{files:?}");
        assert!(files[0].file_name().unwrap().to_string_lossy().starts_with("hearth.log."), "{files:?}");
        let text = std::fs::read_to_string(&files[0]).unwrap();
        assert_eq!(text.len(), (10 << 20) + "the log reached 10 MiB today: the rest of the day is not kept in this file\n".len());
        assert!(text.ends_with("not kept in this file\n"));
    }
}
