//! The DOCA 2.2 face, and the objects every face shares: devices, memory maps and
//! buffers, contexts and work queues with each library's job structs, graphs, the
//! library contexts, sync events, the comm channel and RDMA. The 1.x and 3.x faces stand
//! on these; nothing here imports them.

pub mod comm_channel;
pub mod compress;
pub mod dev;
pub mod dma;
pub mod ec;
pub mod exec;
pub mod graph;
pub mod libs;
pub mod mem;
pub mod rdma;
pub mod rdma_bridge;
pub mod sha;
pub mod sync_event;
pub mod workq;
