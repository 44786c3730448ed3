//! What crosses the network besides UCX's own protocol: the connection descriptor a
//! program passes out of band (`doca_rdma_export` / `doca_rdma_connect`), and the fixed
//! header of every active message between two RDMA contexts. Both come from another
//! machine and are untrusted: decoding checks every field, and every message names the
//! receiving connection's secret key.

use doca_core::{AccessFlags, Error, ErrorCode, Result};

const MAGIC: [u8; 8] = *b"DOCARDMA";
const VERSION: u16 = 4;
/// Bytes of a descriptor around the worker address.
pub const DESC_OVERHEAD: usize = 88;
/// Where the worker address starts in a descriptor.
const WORKER_AT: usize = 80;
/// Longest UCX worker address a descriptor carries.
pub const MAX_WORKER_ADDR: usize = 64 * 1024;

/// A connection descriptor: which connection of which context, its secret, and how
/// UCX reaches that context's worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnDesc {
    /// The connection's number in the exporting context.
    pub conn: u32,
    /// The secret every message to that connection carries.
    pub key: u64,
    /// The exporting context's random identity (a connection is refused twice).
    pub ctx_id: u64,
    /// Where the exporting process runs.
    pub place: Place,
    /// The exporting context's device (its PCI address code): memory exported on
    /// another device is not reachable through this connection.
    pub dev: u32,
    /// The remote accesses the exporting context's connections grant
    /// (`DOCA_ACCESS_FLAG_RDMA_*` bits): a peer that copies the exporter's memory itself
    /// ([`Place::shm`]) does so only where they allow it; the exporter's NIC checks
    /// every other access.
    pub grants: u32,
    /// The UCX worker address of the exporting context.
    pub worker: Vec<u8>,
}

/// Where a process runs: the machine's boot identity, its PID namespace and its PID.
/// Two processes with the same boot identity and namespace share a machine, so the
/// second can watch the first (and both may use shared memory). All zero: unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Place {
    /// `/proc/sys/kernel/random/boot_id`, as 16 bytes.
    pub boot: [u8; 16],
    /// The inode of `/proc/self/ns/pid`.
    pub pid_ns: u64,
    /// The process.
    pub pid: u32,
    /// Whether the process lets a peer of its machine reach it through shared memory
    /// (both must; `DOCA_RDMA_SHM=1`). UCX has no failure detection on shared memory:
    /// the peer's process is watched instead, and an operation whose transfer was cut
    /// by the peer's end may never finish.
    pub shm: bool,
    /// With `shm`: the size of a segment of its UCX's shared-memory queues
    /// ([`crate::shm_segment`]); the two sides must agree on it.
    pub seg: u32,
}

impl Place {
    /// This process's place (all zero where the system does not say).
    pub fn here() -> Place {
        static HERE: std::sync::OnceLock<Place> = std::sync::OnceLock::new();
        *HERE.get_or_init(|| {
            let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
                .ok()
                .and_then(|t| {
                    let hex: String = t.trim().chars().filter(|c| *c != '-').collect();
                    let mut b = [0u8; 16];
                    for (i, x) in b.iter_mut().enumerate() {
                        *x = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
                    }
                    Some(b)
                })
                .unwrap_or([0; 16]);
            let pid_ns = std::fs::metadata("/proc/self/ns/pid")
                .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
                .unwrap_or(0);
            Place {
                boot,
                pid_ns,
                pid: std::process::id(),
                shm: crate::ucx::shm_allowed(),
                seg: crate::ucx::shm_segment(),
            }
        })
    }

    /// Whether `other` is a process of this machine that this one can watch, both
    /// letting the other reach them through shared memory (the same answer on both
    /// sides).
    pub fn shares_machine(&self, other: &Place) -> bool {
        self.shm
            && other.shm
            && self.seg == other.seg
            && self.boot != [0; 16]
            && self.pid_ns != 0
            && other.pid != 0
            && self.boot == other.boot
            && self.pid_ns == other.pid_ns
    }
}

/// `DOCA_ACCESS_FLAG_RDMA_READ | _RDMA_WRITE | _RDMA_ATOMIC`.
/// Every remote access a NIC's connections can grant: RDMA read, write and atomic.
pub const GRANT_ALL: AccessFlags = AccessFlags::RDMA_READ
    .union(AccessFlags::RDMA_WRITE)
    .union(AccessFlags::RDMA_ATOMIC);

const GRANT_BITS: u32 = GRANT_ALL.bits();

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl ConnDesc {
    /// The descriptor's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let n = DESC_OVERHEAD + self.worker.len();
        let mut b = Vec::with_capacity(n);
        b.extend_from_slice(&MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&[1, 0]);
        b.extend_from_slice(&(n as u32).to_le_bytes());
        b.extend_from_slice(&self.conn.to_le_bytes());
        b.extend_from_slice(&(self.worker.len() as u32).to_le_bytes());
        b.extend_from_slice(&self.key.to_le_bytes());
        b.extend_from_slice(&self.ctx_id.to_le_bytes());
        b.extend_from_slice(&self.place.boot);
        b.extend_from_slice(&self.place.pid_ns.to_le_bytes());
        b.extend_from_slice(&self.place.pid.to_le_bytes());
        // Shared memory: the segment size (never 0); else 0.
        let seg = if self.place.shm {
            self.place.seg.max(1)
        } else {
            0
        };
        b.extend_from_slice(&seg.to_le_bytes());
        b.extend_from_slice(&self.dev.to_le_bytes());
        b.extend_from_slice(&self.grants.to_le_bytes());
        debug_assert_eq!(b.len(), WORKER_AT);
        b.extend_from_slice(&self.worker);
        let sum = fnv1a(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    /// Parses and checks a descriptor's form (whether a live context stands behind
    /// it shows when the connection is used).
    pub fn decode(b: &[u8]) -> Result<ConnDesc> {
        if b.len() < 12 || b[0..8] != MAGIC {
            return Err(Error::invalid(
                "the RDMA connection descriptor is not one (wrong magic or too short): pass the bytes doca_rdma_export gave the other side",
            ));
        }
        let version = u16::from_le_bytes([b[8], b[9]]);
        if version != VERSION {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "RDMA connection descriptor version {version} is not supported (this library reads version {VERSION})"
                ),
            ));
        }
        if b.len() < DESC_OVERHEAD {
            return Err(Error::invalid(format!(
                "the RDMA connection descriptor is {} bytes, shorter than any whole one (truncated?)",
                b.len()
            )));
        }
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(x)
        };
        let total = u32_at(12) as usize;
        let wlen = u32_at(20) as usize;
        if b[10] != 1 || b[11] != 0 {
            return Err(Error::invalid(
                "the RDMA connection descriptor's header is damaged",
            ));
        }
        if wlen == 0 || wlen > MAX_WORKER_ADDR || total != DESC_OVERHEAD + wlen {
            return Err(Error::invalid(
                "the RDMA connection descriptor's lengths are damaged",
            ));
        }
        if b.len() != total {
            return Err(Error::invalid(format!(
                "the RDMA connection descriptor is {} bytes; a whole one is {total} (truncated or padded?)",
                b.len()
            )));
        }
        if u64_at(total - 8) != fnv1a(&b[..total - 8]) {
            return Err(Error::invalid(
                "the RDMA connection descriptor's checksum does not match (damaged in transit?)",
            ));
        }
        let grants = u32_at(76);
        if grants & !GRANT_BITS != 0 {
            return Err(Error::invalid(
                "the RDMA connection descriptor's header is damaged",
            ));
        }
        let mut boot = [0u8; 16];
        boot.copy_from_slice(&b[40..56]);
        Ok(ConnDesc {
            conn: u32_at(16),
            key: u64_at(24),
            ctx_id: u64_at(32),
            place: Place {
                boot,
                pid_ns: u64_at(56),
                pid: u32_at(64),
                shm: u32_at(68) != 0,
                seg: u32_at(68),
            },
            dev: u32_at(72),
            grants,
            worker: b[WORKER_AT..WORKER_AT + wlen].to_vec(),
        })
    }
}

/// Active message kinds (UCX AM ids).
pub mod op {
    /// A message for a posted receive (send, send with immediate).
    pub const SEND: u16 = 1;
    /// Bytes for the target's memory (write, write with immediate).
    pub const WRITE: u16 = 2;
    /// A request for bytes of the target's memory.
    pub const READ: u16 = 3;
    /// An atomic operation on 8 bytes of the target's memory.
    pub const ATOMIC: u16 = 4;
    /// The target's answer to a send, write or atomic.
    pub const ACK: u16 = 5;
    /// The target's answer to a read, with the bytes.
    pub const READ_RESP: u16 = 6;
    /// The peer ends the connection.
    pub const DISCONNECT: u16 = 7;
    /// An operation on a sync event the target exported to the network.
    pub const EVENT: u16 = 8;
    /// The connection manager's greeting on a new endpoint: the sender's connection
    /// number, key and context (`a`, `b`, `c`).
    pub const CM_HELLO: u16 = 9;
    /// A probe of a peer silent while operations wait for it: it answers [`PONG`].
    pub const PING: u16 = 10;
    /// The answer to a [`PING`].
    pub const PONG: u16 = 11;
    /// Highest AM id in use.
    pub const LAST: u16 = 11;
}

/// Header flag: the send or write carries immediate data.
pub const F_IMM: u8 = 1;
/// Header flag: the atomic is a compare-and-swap (else fetch-and-add).
pub const F_CAS: u8 = 2;
/// Header flag of an event operation: set the event (with `F_EV_ADD`: add to it;
/// neither: read it).
pub const F_EV_SET: u8 = 4;
/// Header flag of an event operation: add to the event.
pub const F_EV_ADD: u8 = 8;
/// Header flag of a send: it also answers (successfully) the receiver's earlier send
/// whose request number is in `t0` (the answer rides with the reply).
pub const F_ACK: u8 = 16;
/// Header flag of a write or a read answer: one piece of a larger transfer, moved in
/// pieces that each fit one shared-memory segment. A write piece's `a` is the whole
/// write's remote address, `b` holds the write's length in its high 32 bits and the
/// piece's length in its low 32 bits, `c` the immediate data in its high 32 bits and
/// the piece's offset in the write in its low 32 bits; a read answer piece's `b` holds
/// its offset in the read and `c` its length. A read request with it asks for the
/// answer in pieces.
pub const F_FRAG: u8 = 32;

/// Size of [`Header`] on the wire.
pub const HDR_LEN: usize = 64;

/// The header of every message: which connection of the receiver it is for (and that
/// connection's key), the sender's request number, and operands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Header {
    /// [`F_IMM`], [`F_CAS`].
    pub flags: u8,
    /// The receiving context's connection number.
    pub conn: u32,
    /// That connection's key.
    pub key: u64,
    /// The requester's request number (answers carry it back).
    pub req: u64,
    /// Operand: remote address; an answer's status.
    pub a: u64,
    /// Operand: length, compare or add value; an answer's value.
    pub b: u64,
    /// Operand: immediate data, swap value.
    pub c: u64,
    /// The remote memory's export token (first half; second in `t1`).
    pub t0: u64,
    /// The token's second half.
    pub t1: u64,
}

impl Header {
    /// Wire bytes.
    pub fn encode(&self) -> [u8; HDR_LEN] {
        let mut o = [0u8; HDR_LEN];
        o[0] = self.flags;
        o[4..8].copy_from_slice(&self.conn.to_le_bytes());
        o[8..16].copy_from_slice(&self.key.to_le_bytes());
        o[16..24].copy_from_slice(&self.req.to_le_bytes());
        o[24..32].copy_from_slice(&self.a.to_le_bytes());
        o[32..40].copy_from_slice(&self.b.to_le_bytes());
        o[40..48].copy_from_slice(&self.c.to_le_bytes());
        o[48..56].copy_from_slice(&self.t0.to_le_bytes());
        o[56..64].copy_from_slice(&self.t1.to_le_bytes());
        o
    }

    /// Parses a header; `None` unless exactly [`HDR_LEN`] bytes with zero padding.
    pub fn decode(b: &[u8]) -> Option<Header> {
        if b.len() != HDR_LEN || b[1..4] != [0, 0, 0] {
            return None;
        }
        let u64_at = |i: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(x)
        };
        Some(Header {
            flags: b[0],
            conn: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            key: u64_at(8),
            req: u64_at(16),
            a: u64_at(24),
            b: u64_at(32),
            c: u64_at(40),
            t0: u64_at(48),
            t1: u64_at(56),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc() -> ConnDesc {
        ConnDesc {
            conn: 3,
            key: 0xfeed_beef,
            ctx_id: 42,
            place: Place::here(),
            dev: 0x3b00,
            grants: GRANT_BITS & !2,
            worker: (0..100u8).collect(),
        }
    }

    #[test]
    fn descriptors_round_trip_and_damage_is_refused() {
        let d = desc();
        let b = d.encode();
        assert_eq!(ConnDesc::decode(&b).unwrap(), d);
        for i in 0..b.len() * 8 {
            let mut m = b.clone();
            m[i / 8] ^= 1 << (i % 8);
            assert!(ConnDesc::decode(&m).is_err(), "bit {i}");
        }
        for n in 0..b.len() {
            assert!(ConnDesc::decode(&b[..n]).is_err(), "length {n}");
        }
        let mut long = b.clone();
        long.push(0);
        assert!(ConnDesc::decode(&long).is_err());
    }

    #[test]
    fn headers_round_trip_and_other_lengths_are_refused() {
        let h = Header {
            flags: F_IMM,
            conn: 9,
            key: 1,
            req: 2,
            a: 3,
            b: 4,
            c: 5,
            t0: 6,
            t1: 7,
        };
        assert_eq!(Header::decode(&h.encode()), Some(h));
        assert_eq!(Header::decode(&h.encode()[..HDR_LEN - 1]), None);
        let mut bad = h.encode();
        bad[2] = 1;
        assert_eq!(Header::decode(&bad), None);
    }
}
