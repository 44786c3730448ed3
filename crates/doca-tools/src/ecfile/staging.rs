//! Replacing a block set all at once: the new set is built in a directory beside the
//! old one and the two are swapped in one step.

use crate::io_error;
use doca_core::{Error, ErrorCode, Result};
use std::fs::File;
use std::path::{Path, PathBuf};

use super::{DATA_INFO, MANIFEST};

/// Names a block directory holds that an encode would write.
/// A directory beside a block set's directory where its replacement is built
/// (`.NAME.doca-tmp-PID`, removed if the run ends early, or by the next run if it was
/// killed).
pub(super) struct Staging {
    pub(super) path: PathBuf,
}

impl Staging {
    /// Checks that `dir` holds nothing but a block set, and makes the directory beside
    /// it (with `dir`'s permissions).
    pub(super) fn beside(dir: &Path) -> Result<Staging> {
        use std::os::unix::fs::PermissionsExt;
        let others: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| io_error(format!("cannot list '{}'", dir.display()), &e))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !is_set_member(n) && !n.contains(crate::cleanup::TEMP_MARK))
            .collect();
        if !others.is_empty() {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "'{}' holds other files besides its block set ({}): a block set is replaced all at once by swapping its directory, which would take them along; encode into a directory of its own, or remove the old set first",
                    dir.display(),
                    others.join(", ")
                ),
            ));
        }
        let canon = dir
            .canonicalize()
            .map_err(|e| io_error(format!("cannot resolve '{}'", dir.display()), &e))?;
        let parent = canon.parent().map(Path::to_path_buf).ok_or_else(|| {
            Error::with_context(
                ErrorCode::InvalidValue,
                "the root directory cannot hold a block set that is replaced",
            )
        })?;
        crate::cleanup::remove_stale(&parent);
        let path = crate::cleanup::temp_name(&canon).ok_or_else(|| {
            Error::with_context(ErrorCode::InvalidValue, "the directory has no name")
        })?;
        crate::cleanup::register(&path, true);
        std::fs::create_dir(&path).map_err(|e| {
            crate::cleanup::forget(&path);
            io_error(
                format!(
                    "cannot make '{}' to build the new block set in",
                    path.display()
                ),
                &e,
            )
        })?;
        if let Ok(m) = std::fs::metadata(&canon) {
            let _ = std::fs::set_permissions(
                &path,
                std::fs::Permissions::from_mode(m.permissions().mode()),
            );
        }
        Ok(Staging { path })
    }

    /// Swaps the complete new set into `dir` in one step; the old set, now here, is
    /// removed.
    pub(super) fn swap_into(self, dir: &Path, sync: bool) -> Result<()> {
        use std::os::unix::ffi::OsStrExt;
        let canon = dir
            .canonicalize()
            .map_err(|e| io_error(format!("cannot resolve '{}'", dir.display()), &e))?;
        if sync {
            fsync_dir(&self.path)?;
        }
        let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).ok();
        let (Some(a), Some(b)) = (c(&self.path), c(&canon)) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "a path holds a NUL byte",
            ));
        };
        // SAFETY: two valid C strings; AT_FDCWD with absolute paths.
        let r = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            return Err(io_error(
                format!(
                    "cannot swap the new block set into '{}' in one step (the old set is left as it was; remove it first, or encode into a new directory)",
                    dir.display()
                ),
                &e,
            ));
        }
        if sync && let Some(parent) = canon.parent() {
            fsync_dir(parent)?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // Before the swap: the unfinished new set; after it: the old set.
        let _ = std::fs::remove_dir_all(&self.path);
        crate::cleanup::forget(&self.path);
    }
}

pub(super) fn fsync_dir(d: &Path) -> Result<()> {
    File::open(d)
        .and_then(|f| f.sync_all())
        .map_err(|e| io_error(format!("cannot flush '{}'", d.display()), &e))
}

/// Whether a directory entry's name is one of a block set's files.
pub(super) fn is_set_member(n: &str) -> bool {
    let numbered = |p: &str| {
        n.strip_prefix(p)
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    };
    n == DATA_INFO || n == MANIFEST || numbered("data_block_") || numbered("rdnc_block_")
}

pub(super) fn existing_outputs(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_set_member(n))
        .collect();
    v.sort();
    v
}
