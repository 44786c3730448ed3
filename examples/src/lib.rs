//! Shared set-up of the example programs in `src/bin/`: each one shows one library
//! (DMA, SHA, erasure coding, sync events, graphs, the comm channel) on the async face
//! (`doca_core::aio`), and `ec_service` is a small tokio TCP service that erasure codes
//! what it receives. `cargo run -p doca-examples --bin dma` runs one.
//!
//! ```
//! let dev = doca_core::devinfo_list()?[0].open()?;
//! let (mmap, inv) = doca_examples::local_memory(&dev, 8192, 2)?;
//! let buf = inv.buf_at(&mmap, 4096, 4096)?;
//! assert_eq!(buf.tailroom(), 4096);
//! # Ok::<(), doca_core::Error>(())
//! ```

#![warn(missing_docs)]

use doca_core::{AccessFlags, BufInventory, Dev, Mmap, Result};

/// A started mmap of `size` zeroed bytes that `dev` may reach, and a started
/// inventory of `bufs` buffers.
pub fn local_memory(dev: &Dev, size: usize, bufs: usize) -> Result<(Mmap, BufInventory)> {
    let mut mmap = Mmap::new();
    mmap.set_memory(vec![0u8; size])?;
    mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE)?;
    mmap.dev_add(dev)?;
    mmap.start()?;
    let mut inv = BufInventory::new(bufs)?;
    inv.start()?;
    Ok((mmap, inv))
}
