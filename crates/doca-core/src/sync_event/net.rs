//! Sync events shared with peers on the network: the exporter's listing (token to
//! event), the descriptor, the peer's handle, and the operations RDMA's remote net sync
//! event tasks run at the exporter.

use super::{ASYNC, SYNC, Shared};
use crate::error::{Error, ErrorCode, Result};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Mutex, OnceLock, Weak};

const MAGIC: [u8; 8] = *b"DOCASENR";
const VERSION: u16 = 1;
/// Descriptor size.
pub const DESC_LEN: usize = 40;

fn table() -> &'static Mutex<HashMap<[u64; 2], Weak<Shared>>> {
    static T: OnceLock<Mutex<HashMap<[u64; 2], Weak<Shared>>>> = OnceLock::new();
    T.get_or_init(|| Mutex::new(HashMap::new()))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// An event listed for peers; dropping it revokes the listing.
pub(super) struct Listing {
    token: [u64; 2],
}

impl Listing {
    pub(super) fn publish(ev: Weak<Shared>) -> Result<(Listing, Vec<u8>)> {
        let token = crate::xproc::token()?;
        table()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token, ev);
        let mut d = Vec::with_capacity(DESC_LEN);
        d.extend_from_slice(&MAGIC);
        d.extend_from_slice(&VERSION.to_le_bytes());
        d.extend_from_slice(&[0; 6]);
        d.extend_from_slice(&token[0].to_le_bytes());
        d.extend_from_slice(&token[1].to_le_bytes());
        let sum = fnv1a(&d);
        d.extend_from_slice(&sum.to_le_bytes());
        Ok((Listing { token }, d))
    }
}

impl Drop for Listing {
    fn drop(&mut self) {
        table()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.token);
    }
}

/// `struct doca_sync_event_remote_net`: a peer's handle of an event exported to
/// the network, which RDMA's remote net sync event tasks name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteNetEvent {
    token: [u64; 2],
}

impl RemoteNetEvent {
    /// `doca_sync_event_remote_net_create_from_export`: checks the descriptor's
    /// form (whether the event lives shows when a task reaches the exporter).
    pub fn from_export(desc: &[u8]) -> Result<RemoteNetEvent> {
        if desc.len() < 16 || desc[..8] != MAGIC {
            return Err(Error::invalid(
                "not a remote net sync event descriptor (wrong magic or too short): pass what doca_sync_event_export_to_remote_net gave",
            ));
        }
        let version = u16::from_le_bytes([desc[8], desc[9]]);
        if version != VERSION {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "remote net sync event descriptor version {version} is not supported (this library reads version {VERSION})"
                ),
            ));
        }
        if desc.len() != DESC_LEN {
            return Err(Error::invalid(
                "the remote net sync event descriptor has the wrong length (truncated or padded?)",
            ));
        }
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&desc[i..i + 8]);
            u64::from_le_bytes(b)
        };
        if desc[10..16] != [0; 6] || u64_at(32) != fnv1a(&desc[..32]) {
            return Err(Error::invalid(
                "the remote net sync event descriptor is damaged (checksum)",
            ));
        }
        Ok(RemoteNetEvent {
            token: [u64_at(16), u64_at(24)],
        })
    }

    /// The token tasks name the event by.
    pub fn token(&self) -> [u64; 2] {
        self.token
    }
}

/// What a remote net sync event task does at the exporter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Read the value.
    Get,
    /// Set it.
    Set(u64),
    /// Add to it atomically.
    Add(u64),
}

/// Runs `op` on the event listed under `token` (it must be started); the value
/// before. Waiters of the event wake on a change.
pub fn apply(token: [u64; 2], op: Op) -> Result<u64> {
    let ev = table()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&token)
        .and_then(Weak::upgrade)
        .ok_or_else(|| {
            Error::with_context(
                ErrorCode::NotFound,
                "no live sync event is exported to the network under this key (never exported, forged, or destroyed)",
            )
        })?;
    let mode = ev.mode.load(Ordering::Acquire);
    if mode != SYNC && mode != ASYNC {
        return Err(Error::with_context(
            ErrorCode::BadState,
            "the exported sync event is not started",
        ));
    }
    let c = ev.counter();
    let old = match op {
        Op::Get => return Ok(c.load(Ordering::Acquire)),
        Op::Set(v) => c.swap(v, Ordering::AcqRel),
        Op::Add(v) => c.fetch_add(v, Ordering::AcqRel),
    };
    ev.changed();
    Ok(old)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SyncEvent;

    #[test]
    fn an_exported_event_is_reached_by_token_and_revoked_by_destroy() {
        let dev = crate::device::devinfo_list().unwrap()[0].open().unwrap();
        let ev = SyncEvent::new();
        assert_eq!(
            ev.export_to_remote_net().unwrap_err().code(),
            ErrorCode::NotPermitted
        );
        ev.publisher_add_location_remote_net().unwrap();
        ev.subscriber_add_location_cpu(&dev).unwrap();
        let d = ev.export_to_remote_net().unwrap();
        assert_eq!(&*ev.export_to_remote_net().unwrap(), &*d);
        let r = RemoteNetEvent::from_export(&d).unwrap();
        assert_eq!(
            apply(r.token(), Op::Get).unwrap_err().code(),
            ErrorCode::BadState
        );
        ev.start().unwrap();
        assert_eq!(apply(r.token(), Op::Set(5)).unwrap(), 0);
        assert_eq!(apply(r.token(), Op::Add(3)).unwrap(), 5);
        assert_eq!(ev.get().unwrap(), 8);
        for i in 0..d.len() * 8 {
            let mut m = d.to_vec();
            m[i / 8] ^= 1 << (i % 8);
            assert!(RemoteNetEvent::from_export(&m).is_err(), "bit {i}");
        }
        ev.stop().unwrap();
        ev.destroy().unwrap();
        assert_eq!(
            apply(r.token(), Op::Get).unwrap_err().code(),
            ErrorCode::NotFound
        );
    }
}
