//! Pieces the command-line tools share: picking a device, turning I/O failures into
//! DOCA errors a user can act on, and output files that appear only when complete.
//!
//! ```
//! use doca_core::device::Capability;
//! use doca_tools::{AtomicFile, local_memory, open_device, parse_size};
//! use std::io::Write;
//!
//! // The first device that can run DMA jobs, and memory it reaches.
//! let dev = open_device(None, Capability::Dma)?;
//! let (mmap, inv) = local_memory(&dev, vec![0u8; parse_size("64K").unwrap()], 4)?;
//! let mut buf = inv.buf_at(&mmap, 0, 4096)?;
//! buf.append(b"payload")?;
//!
//! // An output file that appears under its name only once it is whole.
//! let path = std::env::temp_dir().join(format!("doca-tools-doc-{}", std::process::id()));
//! let mut out = AtomicFile::create(&path, true)?;
//! out.file().write_all(&buf.data_to_vec()).unwrap();
//! assert!(!path.exists());
//! out.commit()?;
//! assert_eq!(std::fs::read(&path).unwrap(), b"payload");
//! # std::fs::remove_file(&path).unwrap();
//! # Ok::<(), doca_core::Error>(())
//! ```

use doca_core::device::{Capability, PciAddr};
use doca_core::{Dev, Error, ErrorCode, Result, devinfo_list};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A DOCA error for a failed I/O step: `what` says which step and which file.
pub fn io_error(what: impl std::fmt::Display, e: &io::Error) -> Error {
    let code = match e.kind() {
        io::ErrorKind::NotFound => ErrorCode::NotFound,
        io::ErrorKind::PermissionDenied => ErrorCode::NotPermitted,
        io::ErrorKind::AlreadyExists => ErrorCode::AlreadyExist,
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => ErrorCode::InvalidValue,
        io::ErrorKind::OutOfMemory => ErrorCode::NoMemory,
        _ => ErrorCode::IoFailed,
    };
    Error::with_context(code, format!("{what}: {e}"))
}

/// Opens the device at `pci` ("XX:XX.X" or "XXXX:XX:XX.X"), or the first device with
/// `cap`; `NotFound` names what is there instead.
pub fn open_device(pci: Option<&str>, cap: Capability) -> Result<Dev> {
    let list = devinfo_list()?;
    let want = pci.map(PciAddr::parse).transpose()?;
    let found = list.iter().find(|d| match want {
        Some(a) => d.pci_addr() == a,
        None => d.has_capability(cap),
    });
    match found {
        Some(d) if d.has_capability(cap) => d.open(),
        Some(d) => Err(Error::with_context(
            ErrorCode::NotSupported,
            format!(
                "device {} does not have the {} capability",
                d.pci_addr_str(),
                cap.name()
            ),
        )),
        None => {
            let seen: Vec<String> = list.iter().map(|d| d.pci_addr_str()).collect();
            Err(Error::with_context(
                ErrorCode::NotFound,
                format!(
                    "no device {} (devices: {})",
                    pci.map_or_else(
                        || format!("with the {} capability", cap.name()),
                        |p| p.to_string()
                    ),
                    if seen.is_empty() {
                        "none".to_string()
                    } else {
                        seen.join(", ")
                    }
                ),
            ))
        }
    }
}

/// What kind of thing a non-regular file is, for messages.
fn kind_of(m: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

fn not_regular(path: &Path, m: &std::fs::Metadata) -> Error {
    Error::with_context(
        ErrorCode::InvalidValue,
        format!(
            "'{}' is {}; only regular files are read here",
            path.display(),
            kind_of(m)
        ),
    )
}

/// Opens `path` for reading when it is a regular file. The kind is checked before the
/// open, so a FIFO or a device is never opened (nothing blocks), and again on the open
/// file (the path cannot be swapped in between).
pub fn open_regular(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let shown = path.display();
    let m = std::fs::metadata(path).map_err(|e| io_error(format!("cannot open '{shown}'"), &e))?;
    if !m.is_file() {
        return Err(not_regular(path, &m));
    }
    // O_NONBLOCK: a FIFO swapped in after the check opens at once, and is refused below;
    // it changes nothing for a regular file.
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| io_error(format!("cannot open '{shown}'"), &e))?;
    let m = f
        .metadata()
        .map_err(|e| io_error(format!("cannot stat '{shown}'"), &e))?;
    if !m.is_file() {
        return Err(not_regular(path, &m));
    }
    Ok(f)
}

pub mod cleanup;
pub mod ecfile;
pub mod pair;

/// Prints `error: ...` for a tool and gives the exit code (1; 128 + the signal when a
/// signal interrupted it).
pub fn report(tool: &str, e: &Error) -> ExitCode {
    eprintln!("{tool}: error: {e}");
    cleanup::exit_code(e)
}

/// An output file written under a temporary name beside its final path
/// (`.NAME.doca-tmp-PID`) and renamed into place by [`commit`](AtomicFile::commit);
/// dropped uncommitted, or when the tool ends early, the temporary is removed, so a failed
/// run never leaves a partial file under the final name. Creating one also removes the
/// temporaries that killed runs left in the same directory.
#[derive(Debug)]
pub struct AtomicFile {
    tmp: PathBuf,
    path: PathBuf,
    file: Option<File>,
}

impl AtomicFile {
    /// Starts `path`. `AlreadyExist` when it exists, unless `overwrite`.
    /// Only a regular file is ever replaced: a directory, device, FIFO or socket at
    /// `path` is refused, `--force` or not.
    pub fn create(path: &Path, overwrite: bool) -> Result<AtomicFile> {
        if let Ok(m) = std::fs::metadata(path) {
            if !m.is_file() {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    format!(
                        "'{}' is {}; the output must be a file path (only a regular file is ever replaced)",
                        path.display(),
                        kind_of(&m)
                    ),
                ));
            }
            if !overwrite {
                return Err(Error::with_context(
                    ErrorCode::AlreadyExist,
                    format!(
                        "'{}' already exists (use --force to replace it)",
                        path.display()
                    ),
                ));
            }
        } else if std::fs::symlink_metadata(path).is_ok() && !overwrite {
            // A dangling symbolic link: replacing it is the user's call.
            return Err(Error::with_context(
                ErrorCode::AlreadyExist,
                format!(
                    "'{}' already exists, a link to nothing (use --force to replace it)",
                    path.display()
                ),
            ));
        }
        let tmp = cleanup::temp_name(path).ok_or_else(|| {
            Error::with_context(
                ErrorCode::InvalidValue,
                format!("'{}' is not a file path", path.display()),
            )
        })?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        cleanup::remove_stale(dir);
        cleanup::register(&tmp, false);
        let file = OpenOptions::new()
            .write(true)
            .read(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| {
                cleanup::forget(&tmp);
                io_error(format!("cannot create '{}'", tmp.display()), &e)
            })?;
        Ok(AtomicFile {
            tmp,
            path: path.to_path_buf(),
            file: Some(file),
        })
    }

    /// Sets aside `len` bytes of disk for the file (its size becomes `len`): a disk
    /// without the room is reported now, before anything is written, and the writes
    /// that follow skip the file system's allocation on the way (on ext4 they take a
    /// third less time). A file system that cannot reserve space leaves the file as it
    /// is: the writes then allocate as they go.
    pub fn reserve(&self, len: u64) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        use rustix::io::Errno;
        match rustix::fs::fallocate(self.file_ref(), rustix::fs::FallocateFlags::empty(), 0, len) {
            Err(e) if [Errno::NOSPC, Errno::DQUOT, Errno::FBIG, Errno::IO].contains(&e) => {
                Err(io_error(
                    format!(
                        "cannot set aside {len} bytes for '{}' (nothing was written)",
                        self.path.display()
                    ),
                    &e.into(),
                ))
            }
            // Done, or not supported here (network and FUSE file systems): the writes
            // then allocate as they go.
            _ => Ok(()),
        }
    }

    /// The open temporary file.
    pub fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("open until commit")
    }

    /// The open temporary file, shared (positional writes need no `&mut`).
    pub fn file_ref(&self) -> &File {
        self.file.as_ref().expect("open until commit")
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes to disk and renames into place.
    pub fn commit(self) -> Result<()> {
        self.commit_with(true)
    }

    /// Renames into place; with `sync`, after flushing the data to disk (so that the
    /// name never points at data a crash could lose).
    pub fn commit_with(mut self, sync: bool) -> Result<()> {
        let mut f = self.file.take().expect("open until commit");
        f.flush()
            .and_then(|_| if sync { f.sync_all() } else { Ok(()) })
            .map_err(|e| io_error(format!("cannot write '{}'", self.tmp.display()), &e))?;
        drop(f);
        std::fs::rename(&self.tmp, &self.path).map_err(|e| {
            io_error(
                format!(
                    "cannot rename '{}' to '{}'",
                    self.tmp.display(),
                    self.path.display()
                ),
                &e,
            )
        })?;
        cleanup::forget(&self.tmp);
        self.tmp.clear();
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            drop(self.file.take());
            let _ = std::fs::remove_file(&self.tmp);
            cleanup::forget(&self.tmp);
        }
    }
}

/// Parses a size such as `65536`, `64K`, `1M` or `2G` (powers of 1024).
pub fn parse_size(s: &str) -> std::result::Result<usize, String> {
    let t = s.trim();
    let (num, mul) = match t.char_indices().last() {
        Some((i, c)) if c.eq_ignore_ascii_case(&'k') => (&t[..i], 1usize << 10),
        Some((i, c)) if c.eq_ignore_ascii_case(&'m') => (&t[..i], 1 << 20),
        Some((i, c)) if c.eq_ignore_ascii_case(&'g') => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("'{s}' is not a size (e.g. 4096, 64K, 1M)"))
}

/// The largest size a per-job size option takes (`--chunk`, `--stripe`): 256 MiB.
pub const MAX_CHUNK: usize = 256 << 20;

/// Parses a per-job size ([`parse_size`]) of 1 byte to [`MAX_CHUNK`].
pub fn parse_chunk(s: &str) -> std::result::Result<usize, String> {
    match parse_size(s)? {
        0 => Err("a size of 0 bytes is not a chunk".into()),
        n if n > MAX_CHUNK => Err(format!(
            "'{s}' is larger than the {} MiB this option takes",
            MAX_CHUNK >> 20
        )),
        n => Ok(n),
    }
}

/// A started memory map over `memory` that `dev` may read and write, and a started
/// inventory of `bufs` buffers: the setup every tool and benchmark begins with.
pub fn local_memory<M: doca_core::MemoryRegion>(
    dev: &Dev,
    memory: M,
    bufs: usize,
) -> Result<(doca_core::Mmap, doca_core::BufInventory)> {
    let mut mmap = doca_core::Mmap::new();
    mmap.set_memory(memory)?;
    mmap.set_permissions(doca_core::AccessFlags::LOCAL_READ_WRITE)?;
    mmap.dev_add(dev)?;
    mmap.start()?;
    let mut inv = doca_core::BufInventory::new(bufs)?;
    inv.start()?;
    Ok((mmap, inv))
}

/// A zeroed buffer of `len` bytes, or `NO_MEMORY` naming `what` when the memory is
/// not there (never an abort).
pub fn zeroed(len: usize, what: &str) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        Error::with_context(
            ErrorCode::NoMemory,
            format!("cannot allocate {len} bytes for {what}"),
        )
    })?;
    v.resize(len, 0);
    Ok(v)
}

/// The task tables of the libraries the tools link, in one place: what `doca-caps` lists a
/// device's job types from (by their table names, `dma.memcpy`), and checks a topology's
/// names against. RDMA's is not among them: the tools do not link UCX, so that they build
/// on a machine without it; `rdma.*` names are neither listed nor judged here.
pub fn task_tables() -> [&'static [&'static doca_core::exec::TaskSpec]; 9] {
    [
        doca_dma::tasks::ALL,
        doca_sha::tasks::ALL,
        doca_ec::tasks::ALL,
        doca_core::sync_event::tasks::ALL,
        doca_core::memory::advise::tasks::ALL,
        doca_compress::tasks::ALL,
        doca_aes_gcm::tasks::ALL,
        doca_comm_channel::comch::tasks::ALL,
        doca_comm_channel::fastpath::tasks::ALL,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert!(parse_size("x").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
        assert_eq!(parse_chunk("256M"), Ok(MAX_CHUNK));
        for bad in ["0", "257M", "8G", "2305843009213693952"] {
            assert!(parse_chunk(bad).is_err(), "{bad}");
        }
        assert_eq!(
            zeroed(usize::MAX, "x").unwrap_err().code(),
            ErrorCode::NoMemory
        );
    }

    /// A fresh directory for one test, and the path of its output file.
    fn test_dir(tag: &str) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("doca-tools-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("out.bin");
        (dir, p)
    }

    #[test]
    fn atomic_file_appears_only_on_commit() {
        let (dir, p) = test_dir("af");
        {
            let mut f = AtomicFile::create(&p, false).unwrap();
            f.file().write_all(b"partial").unwrap();
        }
        assert!(!p.exists());
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "temporary left behind"
        );
        let mut f = AtomicFile::create(&p, false).unwrap();
        f.file().write_all(b"whole").unwrap();
        f.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"whole");
        let e = AtomicFile::create(&p, false).unwrap_err();
        assert_eq!(e.code(), ErrorCode::AlreadyExist);
        AtomicFile::create(&p, true).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reserve_sizes_the_file_or_says_there_is_no_room() {
        let (dir, p) = test_dir("rs");
        let mut f = AtomicFile::create(&p, false).unwrap();
        f.reserve(1 << 20).unwrap();
        if f.file_ref().metadata().unwrap().len() == 0 {
            // This file system cannot reserve: the writes allocate, nothing to check.
            eprintln!(
                "no fallocate on {}: reservations are not checked",
                dir.display()
            );
            drop(f);
            std::fs::remove_dir_all(&dir).unwrap();
            return;
        }
        f.file().write_all(b"head").unwrap();
        f.commit().unwrap();
        let got = std::fs::read(&p).unwrap();
        assert_eq!(got.len(), 1 << 20);
        assert_eq!(&got[..4], b"head");
        assert!(got[4..].iter().all(|&b| b == 0));
        // No disk holds an exbibyte: the reservation fails with words, and the output
        // is left as it was (the temporary goes).
        let f = AtomicFile::create(&p, true).unwrap();
        let e = f.reserve(1 << 60).unwrap_err();
        assert_eq!(e.code(), ErrorCode::IoFailed, "{e}");
        assert!(e.to_string().contains("cannot set aside"), "{e}");
        drop(f);
        assert_eq!(std::fs::read(&p).unwrap().len(), 1 << 20);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "temporary left behind"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
