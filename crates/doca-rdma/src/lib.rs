//! DOCA RDMA in software, on UCX.
//!
//! - [`Rdma`]: the context (`struct doca_rdma`): connections made with exported
//!   descriptors ([`Rdma::export`], [`Rdma::connect`]), and jobs on them
//!   ([`Rdma::submit`]) that complete on the progress engine.
//! - [`nic`]: the software NIC under each context: a UCX worker and its thread.
//! - [`netdev`]: which network of the machine a device's RDMA uses (topology files).
//! - [`wire`]: what crosses the network besides UCX's own protocol.
//! - [`jobs`]: typed jobs for work queues (DOCA 2.2's face, and `AsyncWorkQ` on tokio).

pub mod gid;
pub mod jobs;
pub mod netdev;
pub mod nic;
mod rdma;
pub mod tasks;
mod ucx;
pub use ucx::{SHM_SEGMENT, shm_segment};
pub mod wire;

pub use ucx::transports_of;

pub use rdma::{
    Conf, Connection, ConnectionEvent, DEFAULT_MAX_CONNECTIONS, JOB_ATOMIC_CMP_SWP,
    JOB_ATOMIC_FETCH_ADD, JOB_READ, JOB_RECV, JOB_SEND, JOB_SEND_IMM, JOB_SYNC_EVENT_GET,
    JOB_SYNC_EVENT_NOTIFY_ADD, JOB_SYNC_EVENT_NOTIFY_SET, JOB_WRITE, JOB_WRITE_IMM,
    MAX_CONNECTIONS, MAX_MESSAGE_SIZE, MAX_QUEUE_SIZE, MAX_SEND_BUF_LIST_LEN, Rdma, TransportType,
    is_rdma_job, slot,
};
