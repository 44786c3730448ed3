//! Export descriptors: what `doca_mmap_export_*` and `doca_sync_event_export_to_dpu`
//! hand the program to pass to the other side out of band. Fixed size, little endian,
//! versioned and checksummed; decoding checks every field before anything is opened.

use crate::error::{Error, ErrorCode, Result};

/// Descriptor size in bytes.
pub const BLOB_LEN: usize = 96;
const MAGIC: [u8; 8] = *b"DOCASWX\0";
const VERSION: u16 = 1;

/// What a descriptor exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// An mmap exported to the DPU (`doca_mmap_export_dpu`).
    MmapDpu = 1,
    /// An mmap exported for RDMA (`doca_mmap_export_rdma`).
    MmapRdma = 2,
    /// A sync event exported to the DPU.
    SyncEvent = 3,
}

impl Kind {
    fn from_raw(v: u8) -> Option<Kind> {
        match v {
            1 => Some(Kind::MmapDpu),
            2 => Some(Kind::MmapRdma),
            3 => Some(Kind::SyncEvent),
            _ => None,
        }
    }

    pub(crate) fn what(self) -> &'static str {
        match self {
            Kind::MmapDpu => "an mmap exported to the DPU",
            Kind::MmapRdma => "an mmap exported for RDMA",
            Kind::SyncEvent => "a sync event",
        }
    }
}

/// The fields of a descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Blob {
    pub(crate) kind: Kind,
    pub(crate) pid: u32,
    pub(crate) uid: u32,
    pub(crate) start: u64,
    /// The control page's descriptor number in the exporter.
    pub(crate) fd: i32,
    pub(crate) perms: u32,
    pub(crate) token: [u64; 2],
    pub(crate) base: u64,
    pub(crate) len: u64,
    /// The exporting device's PCI address (domain << 16 | bus << 8 | device << 3 | function).
    pub(crate) dev: u32,
    /// The exporter's descriptor of a sealed memfd that holds the range (-1: none; the
    /// range is then reached with process_vm_readv/writev), and the range's offset in it.
    pub(crate) shm_fd: i32,
    pub(crate) shm_off: u64,
    /// An RDMA export of memory the exporter itself imported (host memory a DPU
    /// process re-exports): only the exporter's RDMA engine reaches it, never a direct
    /// copy, whatever machine the importer is on.
    pub(crate) relay: bool,
}

/// Flag bits of a descriptor (byte 11).
const FLAG_RELAY: u8 = 1;

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Blob {
    /// The descriptor's bytes.
    pub(crate) fn encode(&self) -> [u8; BLOB_LEN] {
        let mut b = [0u8; BLOB_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..10].copy_from_slice(&VERSION.to_le_bytes());
        b[10] = self.kind as u8;
        b[11] = if self.relay { FLAG_RELAY } else { 0 };
        b[12..16].copy_from_slice(&(BLOB_LEN as u32).to_le_bytes());
        b[16..20].copy_from_slice(&self.pid.to_le_bytes());
        b[20..24].copy_from_slice(&self.uid.to_le_bytes());
        b[24..32].copy_from_slice(&self.start.to_le_bytes());
        b[32..36].copy_from_slice(&self.fd.to_le_bytes());
        b[36..40].copy_from_slice(&self.perms.to_le_bytes());
        b[40..48].copy_from_slice(&self.token[0].to_le_bytes());
        b[48..56].copy_from_slice(&self.token[1].to_le_bytes());
        b[56..64].copy_from_slice(&self.base.to_le_bytes());
        b[64..72].copy_from_slice(&self.len.to_le_bytes());
        b[72..76].copy_from_slice(&self.dev.to_le_bytes());
        b[76..80].copy_from_slice(&self.shm_fd.to_le_bytes());
        b[80..88].copy_from_slice(&self.shm_off.to_le_bytes());
        let sum = fnv1a(&b[..88]);
        b[88..96].copy_from_slice(&sum.to_le_bytes());
        b
    }

    /// Parses and checks a descriptor (its form only: whether a live export stands
    /// behind it is for the caller to find out).
    pub(crate) fn decode(bytes: &[u8]) -> Result<Blob> {
        if bytes.len() < 16 || bytes[0..8] != MAGIC {
            return Err(Error::invalid(
                "the export descriptor is not one (wrong magic or too short)",
            ));
        }
        let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        let version = u16_at(8);
        if version != VERSION {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "export descriptor version {version} is not supported (this library reads version {VERSION})"
                ),
            ));
        }
        if bytes.len() != BLOB_LEN {
            return Err(Error::invalid(format!(
                "the export descriptor is {} bytes; a whole one is {BLOB_LEN} (truncated or padded?)",
                bytes.len()
            )));
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap_or([0; 4]));
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or([0; 8]));
        if u32_at(12) as usize != BLOB_LEN || bytes[11] & !FLAG_RELAY != 0 {
            return Err(Error::invalid("the export descriptor's header is damaged"));
        }
        if u64_at(88) != fnv1a(&bytes[..88]) {
            return Err(Error::invalid(
                "the export descriptor's checksum does not match (damaged in transit?)",
            ));
        }
        let kind = Kind::from_raw(bytes[10])
            .ok_or_else(|| Error::invalid("the export descriptor exports something unknown"))?;
        let b = Blob {
            kind,
            pid: u32_at(16),
            uid: u32_at(20),
            start: u64_at(24),
            fd: u32_at(32) as i32,
            perms: u32_at(36),
            token: [u64_at(40), u64_at(48)],
            base: u64_at(56),
            len: u64_at(64),
            dev: u32_at(72),
            shm_fd: u32_at(76) as i32,
            shm_off: u64_at(80),
            relay: bytes[11] & FLAG_RELAY != 0,
        };
        if b.relay && kind != Kind::MmapRdma {
            return Err(Error::invalid(
                "the export descriptor relays something that is not RDMA memory",
            ));
        }
        if b.shm_fd < -1 || (b.shm_fd >= 0 && b.shm_off.checked_add(b.len).is_none()) {
            return Err(Error::invalid(
                "the export descriptor's shared memory is damaged",
            ));
        }
        if b.pid == 0 || b.pid > i32::MAX as u32 || b.fd < 0 {
            return Err(Error::invalid("the export descriptor names no process"));
        }
        let end = b.base.checked_add(b.len);
        if kind != Kind::SyncEvent && (b.len == 0 || end.is_none_or(|e| e > usize::MAX as u64)) {
            return Err(Error::invalid(
                "the export descriptor's memory range is empty or wraps around",
            ));
        }
        Ok(b)
    }
}

/// A descriptor in DOCA 1.x's form: a JSON object whose `addr` and `len` are the
/// exported range (1.x programs read them), with every other field of the descriptor
/// beside them (the token that makes it unforgeable, the exporter's identity).
#[derive(serde::Serialize, serde::Deserialize)]
struct JsonDesc {
    addr: u64,
    len: u64,
    kind: String,
    version: u16,
    pid: u32,
    uid: u32,
    start: u64,
    fd: i32,
    perms: u32,
    /// The token's two halves, 16 hex digits each (JSON numbers do not hold 64 bits
    /// everywhere).
    token: [String; 2],
    dev: u32,
    shm_fd: i32,
    shm_off: u64,
    relay: bool,
}

const KIND_NAMES: [(Kind, &str); 3] = [
    (Kind::MmapDpu, "mmap_dpu"),
    (Kind::MmapRdma, "mmap_rdma"),
    (Kind::SyncEvent, "sync_event"),
];

/// `desc` (a descriptor this library made) as DOCA 1.x's JSON text, without the NUL
/// that ends it in memory.
pub fn desc_to_json(desc: &[u8]) -> Result<String> {
    let b = Blob::decode(desc)?;
    let kind = KIND_NAMES
        .iter()
        .find(|(k, _)| *k == b.kind)
        .map_or("", |(_, n)| n);
    let j = JsonDesc {
        addr: b.base,
        len: b.len,
        kind: kind.to_owned(),
        version: VERSION,
        pid: b.pid,
        uid: b.uid,
        start: b.start,
        fd: b.fd,
        perms: b.perms,
        token: [
            format!("{:016x}", b.token[0]),
            format!("{:016x}", b.token[1]),
        ],
        dev: b.dev,
        shm_fd: b.shm_fd,
        shm_off: b.shm_off,
        relay: b.relay,
    };
    serde_json::to_string(&j)
        .map_err(|e| Error::invalid(format!("cannot write the descriptor: {e}")))
}

/// The descriptor a DOCA 1.x JSON export descriptor stands for. `text` may end with the
/// NUL the exporter counted in its length (programs pass `strlen(desc) + 1`) or not;
/// anything else (a NUL inside, text that is not one whole JSON object, a field
/// missing, out of range or malformed) is refused with `InvalidValue`, saying what.
pub fn desc_from_json(text: &[u8]) -> Result<Vec<u8>> {
    let text = text.strip_suffix(&[0]).unwrap_or(text);
    if text.contains(&0) {
        return Err(Error::invalid(
            "the export descriptor has a NUL inside: it is not the JSON text doca_mmap_export gave (pass strlen(desc) + 1 bytes)",
        ));
    }
    let j: JsonDesc = serde_json::from_slice(text).map_err(|e| {
        Error::invalid(format!(
            "the export descriptor is not the JSON object doca_mmap_export gives ({e})"
        ))
    })?;
    if j.version != VERSION {
        return Err(Error::with_context(
            ErrorCode::NotSupported,
            format!(
                "export descriptor version {} is not supported (this library reads version {VERSION})",
                j.version
            ),
        ));
    }
    let kind = KIND_NAMES
        .iter()
        .find(|(_, n)| *n == j.kind)
        .map(|(k, _)| *k)
        .ok_or_else(|| {
            Error::invalid(format!(
                "the export descriptor exports \"{}\", which is unknown",
                j.kind
            ))
        })?;
    let half = |s: &str| {
        if s.len() != 16 {
            return None;
        }
        u64::from_str_radix(s, 16).ok()
    };
    let (Some(t0), Some(t1)) = (half(&j.token[0]), half(&j.token[1])) else {
        return Err(Error::invalid(
            "the export descriptor's token is damaged (two strings of 16 hex digits)",
        ));
    };
    let b = Blob {
        kind,
        pid: j.pid,
        uid: j.uid,
        start: j.start,
        fd: j.fd,
        perms: j.perms,
        token: [t0, t1],
        base: j.addr,
        len: j.len,
        dev: j.dev,
        shm_fd: j.shm_fd,
        shm_off: j.shm_off,
        relay: j.relay,
    };
    // The same checks as a binary descriptor's.
    let bytes = b.encode();
    Blob::decode(&bytes)?;
    Ok(bytes.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Blob {
        Blob {
            kind: Kind::MmapDpu,
            pid: 1234,
            uid: 1000,
            start: 99,
            fd: 7,
            perms: 1 << 5,
            token: [1, 2],
            base: 0x7f00_0000_0000,
            len: 4096,
            dev: 0x3b00,
            shm_fd: -1,
            shm_off: 0,
            relay: false,
        }
    }

    #[test]
    fn json_round_trips_and_reads_as_json() {
        let bytes = sample().encode();
        let text = desc_to_json(&bytes).unwrap();
        assert!(
            text.starts_with("{\"addr\":139637976727552,\"len\":4096,"),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["addr"].as_u64(), Some(0x7f00_0000_0000));
        assert_eq!(v["len"].as_u64(), Some(4096));
        assert_eq!(desc_from_json(text.as_bytes()).unwrap(), bytes.to_vec());
        let mut with_nul = text.clone().into_bytes();
        with_nul.push(0);
        assert_eq!(desc_from_json(&with_nul).unwrap(), bytes.to_vec());
    }

    #[test]
    fn damaged_json_is_refused() {
        let text = desc_to_json(&sample().encode()).unwrap();
        for n in 0..text.len() {
            assert!(desc_from_json(&text.as_bytes()[..n]).is_err(), "length {n}");
        }
        let bad = [
            text.replace("\"len\":4096", "\"len\":0"),
            text.replace("\"len\":4096", "\"len\":-1"),
            text.replace("\"len\":4096", "\"len\":\"4096\""),
            text.replace("\"kind\":\"mmap_dpu\"", "\"kind\":\"gpu\""),
            text.replace("\"version\":1", "\"version\":7"),
            text.replace("0000000000000001", "01"),
            text.replace("0000000000000001", "000000000000000g"),
            text.replace("\"pid\":1234", "\"pid\":0"),
            text.replace(",\"relay\":false", ""),
            format!("{text}x"),
            format!("[{text}]"),
            text.replace(':', "\0:"),
        ];
        for b in bad {
            assert!(desc_from_json(b.as_bytes()).is_err(), "{b}");
        }
    }

    #[test]
    fn round_trips() {
        let b = sample();
        assert_eq!(Blob::decode(&b.encode()).unwrap(), b);
    }

    #[test]
    fn every_flipped_bit_and_every_truncation_is_refused() {
        let bytes = sample().encode();
        for i in 0..BLOB_LEN * 8 {
            let mut m = bytes;
            m[i / 8] ^= 1 << (i % 8);
            assert!(Blob::decode(&m).is_err(), "bit {i}");
        }
        for n in 0..BLOB_LEN {
            assert!(Blob::decode(&bytes[..n]).is_err(), "length {n}");
        }
        let mut long = bytes.to_vec();
        long.push(0);
        assert!(Blob::decode(&long).is_err());
    }
}
