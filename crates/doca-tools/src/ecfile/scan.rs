//! Looking at a block set: each block present, missing, of the wrong size or damaged.

use super::*;

/// The state of one block file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockState {
    /// Present, of the right size, and (with a manifest) its checksum matches.
    Ok,
    /// No such file.
    Missing,
    /// The file has the wrong size.
    WrongSize(u64),
    /// The checksum does not match the manifest's.
    Damaged,
    /// The file cannot be read.
    Unreadable(String),
}

impl BlockState {
    fn describe(&self, block: u64) -> String {
        match self {
            BlockState::Ok => "ok".into(),
            BlockState::Missing => "missing".into(),
            BlockState::WrongSize(n) => format!("wrong size: {n} bytes instead of {block}"),
            BlockState::Damaged => "damaged: checksum mismatch".into(),
            BlockState::Unreadable(e) => format!("unreadable: {e}"),
        }
    }
}

/// Checks every block file: presence, size, and (with a manifest) checksum.
pub fn scan(dir: &Path, layout: &Layout, opts: &Options) -> Result<Vec<BlockState>> {
    scan_with(dir, layout, opts, true)
}

/// [`scan`], checking checksums only with `hash` (else a present block of the right
/// size is `Ok` until its checksum says otherwise). The checksums are computed on up to
/// four threads (as many as the machine runs at once), each reading whole blocks.
pub(super) fn scan_with(
    dir: &Path,
    layout: &Layout,
    opts: &Options,
    hash: bool,
) -> Result<Vec<BlockState>> {
    let mut states = Vec::with_capacity(layout.count());
    for i in 0..layout.count() {
        let path = dir.join(layout.block_file(i));
        states.push(match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BlockState::Missing,
            Err(e) => BlockState::Unreadable(e.to_string()),
            Ok(m) if m.len() != layout.block => BlockState::WrongSize(m.len()),
            Ok(_) => BlockState::Ok,
        });
    }
    let Some(sums) = layout.sums.as_ref().filter(|_| hash) else {
        return Ok(states);
    };
    let todo: Vec<usize> = (0..layout.count())
        .filter(|&i| states[i] == BlockState::Ok)
        .collect();
    let pb = progress(layout.block * todo.len() as u64, "check", opts.progress);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
        .min(todo.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    // Each worker takes the next block to check and returns what it found.
    let worker = || -> Result<Vec<(usize, BlockState)>> {
        // A slice that stays in the cache between the read and the hash.
        let mut buf = vec![0u8; 256 << 10];
        let mut found = Vec::new();
        while let Some(&i) = todo.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
            crate::cleanup::interrupted()?;
            let path = dir.join(layout.block_file(i));
            let state = match hash_file(&path, &mut buf, &pb) {
                Ok(h) if h == sums[i] => BlockState::Ok,
                Ok(_) => BlockState::Damaged,
                Err(e) => BlockState::Unreadable(e.to_string()),
            };
            found.push((i, state));
        }
        Ok(found)
    };
    let results: Vec<_> = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|_| s.spawn(worker)).collect();
        let mut all = vec![worker()];
        all.extend(
            helpers
                .into_iter()
                .map(|h| thread_result(h.join(), "a checksum thread")),
        );
        all
    });
    pb.finish_and_clear();
    for r in results {
        for (i, st) in r? {
            states[i] = st;
        }
    }
    Ok(states)
}

pub(super) fn hash_file(path: &Path, buf: &mut [u8], pb: &ProgressBar) -> std::io::Result<u64> {
    use std::io::Read;
    let mut f = crate::open_regular(path).map_err(std::io::Error::other)?;
    let mut h = Xxh3::new();
    loop {
        let n = f.read(buf)?;
        if n == 0 {
            return Ok(h.digest());
        }
        h.update(&buf[..n]);
        pb.inc(n as u64);
    }
}

/// A block that is not whole, with why.
pub(super) fn losses(layout: &Layout, states: &[BlockState]) -> Vec<(usize, String)> {
    states
        .iter()
        .enumerate()
        .filter(|(_, s)| **s != BlockState::Ok)
        .map(|(i, s)| {
            (
                i,
                format!("{} ({})", layout.block_file(i), s.describe(layout.block)),
            )
        })
        .collect()
}
