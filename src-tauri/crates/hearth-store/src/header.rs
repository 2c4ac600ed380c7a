//! A look at the database file's header before SQLite opens it for writing. SQLite treats a file
//! cut short as a smaller database and may write into it; a damaged file must instead be refused
//! and left exactly as it was, for the user to restore.

use std::io::Read;
use std::path::Path;

use crate::StoreError;

const MAGIC: &[u8; 16] = b"SQLite format 3\0";
const HEADER_LEN: usize = 100;

/// Refuses a file that is not a whole SQLite database. A missing or empty file is fine: it
/// becomes a new history.
pub(crate) fn check(path: &Path) -> Result<(), StoreError> {
    let shown = path.display().to_string();
    let damaged = |detail: String| StoreError::Damaged { path: Some(shown.clone()), detail };
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => return Err(StoreError::Unreadable { path: shown, source }),
    };
    let len = file.metadata().map_err(|source| StoreError::Unreadable { path: shown.clone(), source })?.len();
    if len == 0 {
        return Ok(());
    }
    let mut header = Vec::with_capacity(HEADER_LEN);
    (&mut file)
        .take(HEADER_LEN as u64)
        .read_to_end(&mut header)
        .map_err(|source| StoreError::Unreadable { path: shown.clone(), source })?;
    if !header.starts_with(MAGIC) {
        return Err(damaged("file is not a database".into()));
    }
    if header.len() < HEADER_LEN {
        return Err(damaged(format!("the file ends after {len} bytes, inside the database header")));
    }
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536,
        n if n >= 512 && n.is_power_of_two() => u64::from(n),
        n => return Err(damaged(format!("invalid page size {n}"))),
    };
    let be32 = |at: usize| u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]]);
    // The page count is trustworthy only when written by the same change as the header.
    let (pages, change_counter, valid_for) = (be32(28), be32(24), be32(92));
    let expected = u64::from(pages) * page_size;
    // A checkpoint cut short (by a full disk, say) leaves page 1 saying more pages than the file
    // has yet: the write-ahead log beside it still holds them, and SQLite reads them from there.
    if change_counter == valid_for && len < expected && !has_wal(path) {
        return Err(damaged(format!("the file is {len} bytes but its header says {expected}: it was cut short")));
    }
    Ok(())
}

/// Whether a write-ahead log with frames lies beside the database.
fn has_wal(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(wal).is_ok_and(|m| m.len() > 0)
}
