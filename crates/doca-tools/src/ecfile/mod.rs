//! Files erasure coded in the block-directory layout of DOCA's erasure coding sample:
//! `data_block_<i>` and `rdnc_block_<i>` files of one block size (the file size divided
//! by the data block count, rounded up to 64 bytes; the last data blocks zero-padded),
//! and `data_info` holding `<original size> <original path>`. An `ec_manifest` beside
//! them ([`manifest`](Layout)) records the matrix, the original's digest and a checksum
//! (XXH3-64) of every block, so that damaged blocks are found as well as missing ones.
//!
//! Everything streams in stripes (a slice of every block at the same offset), through
//! one DOCA EC job per stripe (`coder`): memory stays bounded whatever the file size, and
//! every output is written under a temporary name and renamed only when complete; a
//! block set is replaced all at once (`staging`). Each command has its own file:
//! encode, scan, verify and recover.

use crate::{AtomicFile, io_error};
use doca_core::{Dev, Error, ErrorCode, Result};
use doca_ec::{Create, MatrixType, Recover};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;
use xxh3::Xxh3;

mod coder;
mod encode;
mod manifest;
pub mod mds;
mod recover;
mod scan;
mod staging;
mod verify;
#[cfg(target_arch = "x86_64")]
pub mod xxh3;
/// XXH3 as `xxhash_rust` computes it (its vector code, NEON on 64-bit Arm, is chosen
/// when it is compiled).
#[cfg(not(target_arch = "x86_64"))]
pub mod xxh3 {
    pub use xxhash_rust::xxh3::Xxh3;
}
use coder::{StripeCoder, input_unchanged, read_input, read_padded, stripe_len, write_at};
pub use manifest::{ContentHasher, DATA_INFO, Layout, MANIFEST, kind_name, parse_kind};
use staging::{Staging, existing_outputs, is_set_member};

/// Options shared by the operations.
#[derive(Debug, Clone)]
pub struct Options {
    /// Bytes of each block per stripe (0: chosen from the block count).
    pub stripe: usize,
    /// Replace existing outputs.
    pub force: bool,
    /// Show a progress bar (only drawn on a terminal).
    pub progress: bool,
    /// Flush outputs to disk before they take their names.
    pub sync: bool,
    /// Recover: write rebuilt blocks back into the block directory (when it can be
    /// written).
    pub write_back: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            stripe: 0,
            force: false,
            progress: true,
            sync: true,
            write_back: true,
        }
    }
}

fn progress(total: u64, what: &str, on: bool) -> ProgressBar {
    if !on {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{msg:>10} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {eta}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb
}

use encode::{BlockHashers, thread_result, writer_result};
pub use encode::{EncodeReport, encode};
pub use recover::{Proof, RecoverReport, recover};
pub use scan::{BlockState, scan};
use scan::{losses, scan_with};
pub use verify::{VerifyReport, verify};
