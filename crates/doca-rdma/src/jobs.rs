//! Typed RDMA jobs for work queues (`WorkQ`, and `AsyncWorkQ` on tokio): each owns its
//! buffers while in flight and runs on the context's connection (its one connection, or
//! the one [`on`](Write::on) names). Results come back in the completion's record:
//! [`Received::of`] reads a receive's.
//!
//! ```no_run
//! # async fn f(rdma: &doca_rdma::Rdma, wq: &doca_core::aio::AsyncWorkQ,
//! #            src: doca_core::Buf, remote: doca_core::Buf) -> doca_core::Result<()> {
//! use doca_rdma::jobs::Write;
//! let mut done = wq
//!     .submit_job(rdma.ctx(), Write::new(src, remote, 1))
//!     .map_err(|(e, _)| e)?
//!     .await;
//! done.status()?; // the bytes are in the peer's memory
//! # Ok(()) }
//! ```

use crate::rdma::{
    Connection, JOB_ATOMIC_CMP_SWP, JOB_ATOMIC_FETCH_ADD, JOB_READ, JOB_RECV, JOB_SEND,
    JOB_SEND_IMM, JOB_WRITE, JOB_WRITE_IMM, slot,
};
use doca_core::exec::Job;
use doca_core::{Buf, Data, JobRecord};
use std::sync::Arc;

/// The connection a record runs on (0: the context's one connection).
fn conn_param(c: &Option<Arc<Connection>>) -> u64 {
    c.as_ref().map_or(0, |c| Arc::as_ptr(c) as usize as u64)
}

macro_rules! on_connection {
    ($t:ty) => {
        impl $t {
            /// Runs on `conn` (one of the context's connections) instead of the
            /// context's first.
            pub fn on(mut self, conn: &Arc<Connection>) -> Self {
                self.conn = Some(Arc::clone(conn));
                self
            }
        }
    };
}

/// An RDMA write: `src`'s data (local) lands after the data of `dst` (memory of the
/// peer's, from an mmap created from its export), which grows by it.
#[derive(Debug)]
pub struct Write {
    src: Buf,
    dst: Buf,
    imm: Option<u32>,
    user_data: u64,
    conn: Option<Arc<Connection>>,
}

impl Write {
    /// A write of `src` into `dst`.
    pub fn new(src: Buf, dst: Buf, user_data: u64) -> Write {
        Write {
            src,
            dst,
            imm: None,
            user_data,
            conn: None,
        }
    }

    /// With immediate data: the peer's posted receive completes with it.
    pub fn with_immediate(mut self, imm: u32) -> Write {
        self.imm = Some(imm);
        self
    }
}
on_connection!(Write);

impl Job for Write {
    fn into_record(self) -> JobRecord {
        let t = if self.imm.is_some() {
            JOB_WRITE_IMM
        } else {
            JOB_WRITE
        };
        let mut r = JobRecord::new(t, Data(self.user_data));
        r.set_buf(slot::SRC, self.src);
        r.set_buf(slot::DST, self.dst);
        r.params[slot::CONN] = conn_param(&self.conn);
        r.params[slot::ARG] = u64::from(self.imm.unwrap_or(0));
        r
    }
}

/// An RDMA read: `src`'s data (the peer's memory) lands after `dst`'s data (local).
#[derive(Debug)]
pub struct Read {
    src: Buf,
    dst: Buf,
    user_data: u64,
    conn: Option<Arc<Connection>>,
}

impl Read {
    /// A read of `src` into `dst`.
    pub fn new(src: Buf, dst: Buf, user_data: u64) -> Read {
        Read {
            src,
            dst,
            user_data,
            conn: None,
        }
    }
}
on_connection!(Read);

impl Job for Read {
    fn into_record(self) -> JobRecord {
        let mut r = JobRecord::new(JOB_READ, Data(self.user_data));
        r.set_buf(slot::SRC, self.src);
        r.set_buf(slot::DST, self.dst);
        r.params[slot::CONN] = conn_param(&self.conn);
        r
    }
}

/// A send of `src`'s data into the peer's next posted receive (it waits for one).
#[derive(Debug)]
pub struct Send {
    src: Buf,
    imm: Option<u32>,
    user_data: u64,
    conn: Option<Arc<Connection>>,
}

impl Send {
    /// A send of `src`.
    pub fn new(src: Buf, user_data: u64) -> Send {
        Send {
            src,
            imm: None,
            user_data,
            conn: None,
        }
    }

    /// With immediate data.
    pub fn with_immediate(mut self, imm: u32) -> Send {
        self.imm = Some(imm);
        self
    }
}
on_connection!(Send);

impl Job for Send {
    fn into_record(self) -> JobRecord {
        let t = if self.imm.is_some() {
            JOB_SEND_IMM
        } else {
            JOB_SEND
        };
        let mut r = JobRecord::new(t, Data(self.user_data));
        r.set_buf(slot::SRC, self.src);
        r.params[slot::CONN] = conn_param(&self.conn);
        r.params[slot::ARG] = u64::from(self.imm.unwrap_or(0));
        r
    }
}

/// A receive: the peer's next send, or a write's immediate data. A work queue's
/// receive writes the message at `dst`'s data address, over its data (as DOCA 2.2's
/// receive job does); `dst` may be absent for messages with no bytes.
#[derive(Debug)]
pub struct Recv {
    dst: Option<Buf>,
    user_data: u64,
}

impl Recv {
    /// A receive into `dst`.
    pub fn new(dst: Option<Buf>, user_data: u64) -> Recv {
        Recv { dst, user_data }
    }
}

impl Job for Recv {
    fn into_record(self) -> JobRecord {
        let mut r = JobRecord::new(JOB_RECV, Data(self.user_data));
        if let Some(b) = self.dst {
            r.set_buf(slot::DST, b);
        }
        r
    }
}

/// What a completed receive got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Received {
    /// Bytes received (a write with immediate: the bytes it wrote).
    pub len: u32,
    /// What arrived: a send, a send with immediate, a write with immediate.
    pub opcode: crate::nic::RecvOpcode,
    /// The immediate data, if any.
    pub immediate: Option<u32>,
}

impl Received {
    /// The result of a completed receive's record (`None` for another job).
    pub fn of(rec: &JobRecord) -> Option<Received> {
        if rec.job_type != JOB_RECV {
            return None;
        }
        let v = rec.params[slot::RES_LEN_OP];
        let opcode = match v >> 32 {
            0 => crate::nic::RecvOpcode::Send,
            1 => crate::nic::RecvOpcode::SendImm,
            _ => crate::nic::RecvOpcode::WriteImm,
        };
        let immediate = (opcode != crate::nic::RecvOpcode::Send)
            .then_some((rec.params[slot::RES_IMM] & 0xffff_ffff) as u32);
        Some(Received {
            len: (v & 0xffff_ffff) as u32,
            opcode,
            immediate,
        })
    }
}

/// An atomic on the peer's 8 bytes (`target`, aligned); their value before it lands in
/// `result` (local, room for 8 bytes).
#[derive(Debug)]
pub struct Atomic {
    target: Buf,
    result: Buf,
    op: AtomicOp,
    user_data: u64,
    conn: Option<Arc<Connection>>,
}

/// What an [`Atomic`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicOp {
    /// Adds the value.
    FetchAdd(u64),
    /// Swaps in `swap` where the value equals `compare`.
    CompareSwap {
        /// The expected value.
        compare: u64,
        /// The new value.
        swap: u64,
    },
}

impl Atomic {
    /// `op` on `target`, the value before into `result`.
    pub fn new(target: Buf, result: Buf, op: AtomicOp, user_data: u64) -> Atomic {
        Atomic {
            target,
            result,
            op,
            user_data,
            conn: None,
        }
    }
}
on_connection!(Atomic);

impl Job for Atomic {
    fn into_record(self) -> JobRecord {
        let (t, arg, swap) = match self.op {
            AtomicOp::FetchAdd(v) => (JOB_ATOMIC_FETCH_ADD, v, 0),
            AtomicOp::CompareSwap { compare, swap } => (JOB_ATOMIC_CMP_SWP, compare, swap),
        };
        let mut r = JobRecord::new(t, Data(self.user_data));
        r.set_buf(slot::SRC, self.target);
        r.set_buf(slot::DST, self.result);
        r.params[slot::CONN] = conn_param(&self.conn);
        r.params[slot::ARG] = arg;
        r.params[slot::SWAP] = swap;
        r
    }
}
