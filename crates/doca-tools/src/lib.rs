//! Pieces the command-line tools share: picking a device, turning I/O failures into
//! DOCA errors a user can act on, and output files that appear only when complete.

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

pub mod ecfile;
pub mod pair;

/// Prints `error: ...` for a tool and gives the exit code (1).
pub fn report(tool: &str, e: &Error) -> ExitCode {
    eprintln!("{tool}: error: {e}");
    ExitCode::FAILURE
}

/// An output file written under a temporary name beside its final path and renamed
/// into place by [`commit`](AtomicFile::commit); dropped uncommitted, the temporary is
/// removed, so a failed run never leaves a partial file under the final name.
#[derive(Debug)]
pub struct AtomicFile {
    tmp: PathBuf,
    path: PathBuf,
    file: Option<File>,
}

impl AtomicFile {
    /// Starts `path`. `AlreadyExist` when it exists, unless `overwrite`.
    pub fn create(path: &Path, overwrite: bool) -> Result<AtomicFile> {
        if !overwrite && path.exists() {
            return Err(Error::with_context(
                ErrorCode::AlreadyExist,
                format!(
                    "'{}' already exists (use --force to replace it)",
                    path.display()
                ),
            ));
        }
        let name = path.file_name().ok_or_else(|| {
            Error::with_context(
                ErrorCode::InvalidValue,
                format!("'{}' is not a file path", path.display()),
            )
        })?;
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".tmp-{}", std::process::id()));
        let tmp = path.with_file_name(tmp_name);
        let file = OpenOptions::new()
            .write(true)
            .read(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| io_error(format!("cannot create '{}'", tmp.display()), &e))?;
        Ok(AtomicFile {
            tmp,
            path: path.to_path_buf(),
            file: Some(file),
        })
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
        self.tmp.clear();
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            drop(self.file.take());
            let _ = std::fs::remove_file(&self.tmp);
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
    }

    #[test]
    fn atomic_file_appears_only_on_commit() {
        let dir = std::env::temp_dir().join(format!("doca-tools-af-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("out.bin");
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
}
