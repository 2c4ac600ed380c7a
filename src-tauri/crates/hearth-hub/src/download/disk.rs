//! A download's file on disk: room checked before it grows, a partial file's bytes hashed again
//! on resume, write errors in words, and the progress meter.

use super::*;

/// Hashes the `have` bytes already in `file` (a resumed download) and leaves it positioned after them.
pub(super) async fn hash_existing(file: &mut tokio::fs::File, hasher: &mut Sha256, have: u64, path: &Path) -> Result<u64, HubError> {
    use tokio::io::AsyncSeekExt;
    file.seek(std::io::SeekFrom::Start(0)).await.map_err(|e| HubError::io(path, &e))?;
    let mut buf = vec![0; 1 << 20];
    let mut read = 0;
    while read < have {
        let want = buf.len().min((have - read) as usize);
        let n = file.read(&mut buf[..want]).await.map_err(|e| HubError::io(path, &e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        read += n as u64;
    }
    file.set_len(read).await.map_err(|e| HubError::io(path, &e))?;
    file.seek(std::io::SeekFrom::Start(read)).await.map_err(|e| HubError::io(path, &e))?;
    Ok(read)
}

pub(super) fn write_error(error: &std::io::Error, partial: &Path, dir: &Path, file: &PlannedFile) -> HubError {
    if error.kind() == std::io::ErrorKind::StorageFull || error.raw_os_error() == Some(28) {
        let available = free_space(dir).unwrap_or(0) >> 20;
        let written = std::fs::metadata(partial).map(|m| m.len()).unwrap_or(0);
        return HubError::DiskFull {
            file: file.path.clone(),
            dir: dir.display().to_string(),
            needed: file.size.saturating_sub(written).div_ceil(1 << 20),
            available,
        };
    }
    HubError::io(partial, error)
}

/// Refuses to start when the folder's disk has less room than the rest of the file.
pub(super) fn check_room(dir: &Path, file: &str, needed: u64) -> Result<(), HubError> {
    match free_space(dir) {
        Some(available) if available < needed => Err(HubError::DiskFull {
            file: file.to_owned(),
            dir: dir.display().to_string(),
            needed: needed.div_ceil(1 << 20),
            available: available >> 20,
        }),
        _ => Ok(()),
    }
}

/// Bytes free for this user on the file system holding `dir` (or its nearest existing
/// ancestor): the disk whose mount point is the longest prefix of its real path.
pub(super) fn free_space(dir: &Path) -> Option<u64> {
    let real = dir.ancestors().find_map(|d| d.canonicalize().ok())?;
    let disks = sysinfo::Disks::new_with_refreshed_list();
    disks
        .iter()
        .filter(|d| real.starts_with(d.mount_point()))
        .max_by_key(|d| d.mount_point().as_os_str().len())
        .map(|d| d.available_space())
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Speed (smoothed) and time left, at most every quarter second.
pub(super) struct Meter {
    last: Instant,
    last_bytes: u64,
    rate: f64,
}

impl Meter {
    pub(super) fn new(bytes: u64) -> Self {
        Meter { last: Instant::now(), last_bytes: bytes, rate: 0.0 }
    }

    pub(super) fn tick(&mut self, bytes: u64, total: u64) -> Option<(f64, Option<u64>)> {
        let elapsed = self.last.elapsed().as_secs_f64();
        if elapsed < 0.25 {
            return None;
        }
        let now = (bytes - self.last_bytes) as f64 / elapsed;
        self.rate = if self.rate == 0.0 { now } else { 0.7 * self.rate + 0.3 * now };
        self.last = Instant::now();
        self.last_bytes = bytes;
        let eta = (self.rate > 0.0).then(|| ((total - bytes) as f64 / self.rate).ceil() as u64);
        Some((self.rate, eta))
    }
}
