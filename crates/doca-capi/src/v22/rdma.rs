//! `doca_rdma.h` of DOCA 2.2: the RDMA context with one connection (exported and
//! connected with descriptors passed out of band), its properties and capabilities. Its
//! jobs (receive, send, send with immediate, read, write, write with immediate, the
//! atomics) run on work queues; their structs become records through doca-rdma's task
//! table, and a completion fills the program's `struct doca_rdma_result`.

use crate::common::{Result, doca_error_t, err, ffi, handle, invalid, out_ptr, put};
use crate::v22::dev::doca_devinfo;
use crate::v22::exec::doca_ctx;
use crate::v22::exec::doca_job;
use crate::v22::libs::{LibHandle, as_ctx, create, destroy, devinfo_query, devinfo_value};
use crate::v22::mem::doca_buf;
use ::doca_rdma::{Connection, Rdma};
use doca_core::DevInfo;
use doca_core::ErrorCode;
use doca_core::exec::CtxPhase;
use doca_core::lock;
use std::ffi::{c_int, c_void};
use std::mem::{offset_of, size_of};
use std::sync::{Arc, Mutex};

/// What the C handle keeps beside the context: the connection exported since the last
/// start with its descriptor, and every descriptor handed out (valid until the context
/// is destroyed).
#[derive(Debug)]
pub struct Rdma22 {
    rdma: Rdma,
    exported: Mutex<Exported>,
}

#[derive(Debug, Default)]
struct Exported {
    /// The connection of this start and the index of its descriptor in `descs`.
    conn: Option<(Arc<Connection>, usize)>,
    descs: Vec<Box<[u8]>>,
}

/// `struct doca_rdma` (DOCA 2.2).
pub type doca_rdma = LibHandle<Rdma22>;
/// `enum doca_rdma_job_types`.
pub type doca_rdma_job_types = c_int;
/// `enum doca_rdma_transport_type`.
pub type doca_rdma_transport_type = u32;
/// `enum doca_mtu_size`.
pub type doca_mtu_size = u32;
/// `enum doca_rdma_state`.
pub type doca_rdma_state = u32;

/// `struct doca_rdma_gid` (the same in both generations).
/// `struct doca_rdma_gid`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_rdma_gid {
    /// The GID's bytes.
    pub raw: [u8; 16],
}

/// `DOCA_RDMA_STATE_*`.
pub mod state {
    /// Not started.
    pub const RESET: u32 = 0;
    /// Started, not connected.
    pub const INIT: u32 = 1;
    /// Connected.
    pub const CONNECTED: u32 = 2;
    /// The connection failed or ended.
    pub const ERROR: u32 = 3;
}

/// The handle, checked.
///
/// # Safety
/// `p` is NULL or a live handle.
unsafe fn rdma_of<'a>(p: *const doca_rdma) -> Result<&'a Rdma22> {
    // SAFETY: the caller's contract.
    Ok(&unsafe { handle(p, "rdma") }?.lib)
}

impl Rdma22 {
    /// The connection of this start, exported now if it was not yet, with its
    /// descriptor.
    fn exported(&self) -> Result<(Arc<Connection>, *const u8, usize)> {
        let mut e = lock(&self.exported);
        let live = self.rdma.connections();
        if let Some((c, i)) = &e.conn
            && live.iter().any(|x| Arc::ptr_eq(x, c))
        {
            let d = &e.descs[*i];
            return Ok((Arc::clone(c), d.as_ptr(), d.len()));
        }
        let (desc, conn) = self.rdma.export()?;
        let desc = desc.into_boxed_slice();
        let (p, n) = (desc.as_ptr(), desc.len());
        e.descs.push(desc);
        let i = e.descs.len() - 1;
        e.conn = Some((Arc::clone(&conn), i));
        Ok((conn, p, n))
    }
}

// ---- the context ----

/// `doca_rdma_create`: an RDMA context with no device yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_create(rdma: *mut *mut doca_rdma) -> doca_error_t {
    let r = Rdma::new_unbound();
    let c = r.ctx().clone();
    create(
        rdma,
        Rdma22 {
            rdma: r,
            exported: Mutex::new(Exported::default()),
        },
        &c,
        crate::v22::rdma::jobs::fill,
    )
}

/// `doca_rdma_destroy`: only once the context is stopped and its device removed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_destroy(rdma: *mut doca_rdma) -> doca_error_t {
    destroy(rdma)
}

/// `doca_rdma_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_as_ctx(rdma: *mut doca_rdma) -> *mut doca_ctx {
    as_ctx(rdma)
}

/// `doca_rdma_export`: the context's connection details, for the peer's
/// `doca_rdma_connect` (after `doca_ctx_start`; the same until the context stops).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_export(
    rdma: *const doca_rdma,
    local_rdma_conn_details: *mut *const c_void,
    local_rdma_conn_details_size: *mut usize,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { rdma_of(rdma) }?;
        let d = out_ptr(local_rdma_conn_details, "local_rdma_conn_details")?;
        let n = out_ptr(local_rdma_conn_details_size, "local_rdma_conn_details_size")?;
        let (_, p, len) = h.exported()?;
        // SAFETY: outputs checked; the descriptor stays in the handle.
        unsafe {
            put(d, p as *const c_void);
            put(n, len);
        }
        Ok(())
    })
}

/// `doca_rdma_connect`: connects the context to the peer whose details are given
/// (after `doca_ctx_start`; once per start).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_connect(
    rdma: *mut doca_rdma,
    remote_rdma_conn_details: *const c_void,
    remote_rdma_conn_details_size: usize,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { rdma_of(rdma) }?;
        if remote_rdma_conn_details.is_null() || remote_rdma_conn_details_size == 0 {
            return Err(invalid("the remote connection details are NULL or empty"));
        }
        // SAFETY: the program's buffer of that size (the C contract).
        let desc = unsafe {
            std::slice::from_raw_parts(
                remote_rdma_conn_details as *const u8,
                remote_rdma_conn_details_size,
            )
        };
        let (conn, _, _) = h.exported()?;
        h.rdma.connect(desc, &conn)
    })
}

/// `doca_rdma_get_state`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_get_state(
    rdma: *const doca_rdma,
    state: *mut doca_rdma_state,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { rdma_of(rdma) }?;
        let o = out_ptr(state, "state")?;
        let s = if h.rdma.ctx().phase() == CtxPhase::Idle {
            state::RESET
        } else {
            let e = lock(&h.exported);
            let live = h.rdma.connections();
            match &e.conn {
                Some((c, _)) if live.iter().any(|x| Arc::ptr_eq(x, c)) => {
                    if c.is_connected() {
                        state::CONNECTED
                    } else if c.has_ended() {
                        state::ERROR
                    } else {
                        state::INIT
                    }
                }
                _ => state::INIT,
            }
        };
        // SAFETY: output checked.
        unsafe { put(o, s) };
        Ok(())
    })
}

// ---- capabilities ----

/// A DOCA 2.2 RDMA job type.
fn job_type(t: doca_rdma_job_types) -> Result<u32> {
    u32::try_from(t)
        .ok()
        .filter(|t| (::doca_rdma::JOB_RECV..=::doca_rdma::JOB_ATOMIC_FETCH_ADD).contains(t))
        .ok_or_else(|| invalid(format!("{t} is not a DOCA RDMA job type")))
}

/// A transport type this generation runs: RC (DOCA 2.2 has no DC yet).
fn transport(t: doca_rdma_transport_type) -> Result<()> {
    match t {
        0 => Ok(()),
        1 => Err(err(
            ErrorCode::NotSupported,
            "the DC transport is not supported by DOCA 2.2's RDMA; use RC",
        )),
        t => Err(invalid(format!("transport type {t} is unknown"))),
    }
}

/// `doca_rdma_job_get_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_job_get_supported(
    devinfo: *const doca_devinfo,
    job_type_v: doca_rdma_job_types,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        job_type(job_type_v)?;
        rdma_dev(d)
    })
}

cap_value!(pub unsafe extern "C" fn doca_rdma_get_max_recv_queue_size(devinfo: *const doca_devinfo, max_recv_queue_size: *mut u32) -> doca_error_t => ::doca_rdma::MAX_QUEUE_SIZE);
cap_value!(pub unsafe extern "C" fn doca_rdma_get_max_send_queue_size(devinfo: *const doca_devinfo, max_send_queue_size: *mut u32) -> doca_error_t => ::doca_rdma::MAX_QUEUE_SIZE);
cap_value!(pub unsafe extern "C" fn doca_rdma_get_max_message_size(devinfo: *const doca_devinfo, max_message_size: *mut u32) -> doca_error_t => ::doca_rdma::MAX_MESSAGE_SIZE);

/// `doca_rdma_get_max_buf_chain_len`: one buffer per job.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_get_max_buf_chain_len(
    devinfo: *const doca_devinfo,
    job_type_v: doca_rdma_job_types,
    transport_type: doca_rdma_transport_type,
    max_buf_chain_len: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_buf_chain_len, |d| {
        rdma_dev(d)?;
        job_type(job_type_v)?;
        transport(transport_type)?;
        Ok(::doca_rdma::MAX_SEND_BUF_LIST_LEN)
    })
}

/// `doca_rdma_get_gid_table_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_get_gid_table_size(
    devinfo: *mut doca_devinfo,
    gid_table_size: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, gid_table_size, gid_count)
}

/// `doca_rdma_get_gid`: `num_entries` GIDs from `start_index`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_get_gid(
    devinfo: *mut doca_devinfo,
    start_index: u32,
    num_entries: u32,
    gid_array: *mut doca_rdma_gid,
) -> doca_error_t {
    // SAFETY: the program's array of num_entries GIDs (the C contract).
    devinfo_query(devinfo, |d| unsafe {
        gids_into(d, start_index, num_entries, gid_array)
    })
}

/// `doca_rdma_get_transport_type_supported`: RC.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_get_transport_type_supported(
    devinfo: *const doca_devinfo,
    transport_type: doca_rdma_transport_type,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        rdma_dev(d)?;
        transport(transport_type)
    })
}

// ---- properties ----

macro_rules! setter {
    (pub unsafe extern "C" fn $name:ident(rdma: *mut doca_rdma, $arg:ident: $t:ty) -> doca_error_t => |$r:ident| $body:expr) => {
        #[doc = concat!("`", stringify!($name), "`: before the context starts.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(rdma: *mut doca_rdma, $arg: $t) -> doca_error_t {
            ffi(|| {
                // SAFETY: NULL or a live handle.
                let $r = &unsafe { rdma_of(rdma) }?.rdma;
                $body
            })
        }
    };
}

macro_rules! getter {
    (pub unsafe extern "C" fn $name:ident(rdma: *const doca_rdma, out: *mut $t:ty) -> doca_error_t => |$c:ident| $val:expr) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(rdma: *const doca_rdma, out: *mut $t) -> doca_error_t {
            ffi(|| {
                // SAFETY: NULL or a live handle.
                let $c = unsafe { rdma_of(rdma) }?.rdma.conf();
                let o = out_ptr(out, "output")?;
                // SAFETY: output checked.
                unsafe { put(o, $val) };
                Ok(())
            })
        }
    };
}

setter!(pub unsafe extern "C" fn doca_rdma_set_send_queue_size(rdma: *mut doca_rdma, n: u32) -> doca_error_t => |r| r.set_queue_size(true, n));
setter!(pub unsafe extern "C" fn doca_rdma_set_recv_queue_size(rdma: *mut doca_rdma, n: u32) -> doca_error_t => |r| r.set_queue_size(false, n));
setter!(pub unsafe extern "C" fn doca_rdma_set_transport_type(rdma: *mut doca_rdma, t: doca_rdma_transport_type) -> doca_error_t => |r| {
    transport(t)?;
    r.set_transport_type(t)
});
setter!(pub unsafe extern "C" fn doca_rdma_set_mtu(rdma: *mut doca_rdma, mtu: doca_mtu_size) -> doca_error_t => |r| {
    // enum doca_mtu_size: 256 B (0) to 4 KiB (4); raw Ethernet (5) is not an RDMA MTU.
    if mtu > 4 {
        return Err(err(ErrorCode::NotSupported, format!("MTU value {mtu} is not one of enum doca_mtu_size")));
    }
    r.update_conf(|c| {
        c.mtu = mtu;
        Ok(())
    })
});
setter!(pub unsafe extern "C" fn doca_rdma_set_permissions(rdma: *mut doca_rdma, p: u32) -> doca_error_t => |r| r.set_permissions(p));
setter!(pub unsafe extern "C" fn doca_rdma_set_grh_enabled(rdma: *mut doca_rdma, g: bool) -> doca_error_t => |r| r.update_conf(|c| {
    c.grh = g;
    Ok(())
}));
setter!(pub unsafe extern "C" fn doca_rdma_set_gid_index(rdma: *mut doca_rdma, i: u32) -> doca_error_t => |r| {
    // UCX picks the interface here, so the index selects nothing. DOCA 2.2 checks it
    // only when the connection is made; some of its samples pass an index they never
    // set, so one beyond the table is kept (with a warning) rather than refused.
    match r.set_gid_index(i) {
        Err(e) if e.code() == ErrorCode::InvalidValue => {
            crate::common::log::internal(
                crate::common::log::LEVEL_WARNING,
                &format!("doca_rdma_set_gid_index: {}; the index is kept, and selects nothing here", e.context_str().unwrap_or("")),
            );
            r.update_conf(|c| {
                c.gid_index = i;
                Ok(())
            })
        }
        other => other,
    }
});
setter!(pub unsafe extern "C" fn doca_rdma_set_recv_buf_chain_len(rdma: *mut doca_rdma, n: u32) -> doca_error_t => |r| {
    if n == 0 || n > ::doca_rdma::MAX_SEND_BUF_LIST_LEN {
        return Err(invalid(format!(
            "receive buffer chain length {n}: this device takes 1 (doca_rdma_get_max_buf_chain_len)"
        )));
    }
    r.update_conf(|c| {
        c.recv_buf_list_len = n;
        Ok(())
    })
});
setter!(pub unsafe extern "C" fn doca_rdma_set_sl(rdma: *mut doca_rdma, sl: u32) -> doca_error_t => |r| {
    if sl > 15 {
        return Err(invalid(format!("service level {sl} is above 15")));
    }
    r.update_conf(|c| {
        c.sl = sl;
        Ok(())
    })
});

getter!(pub unsafe extern "C" fn doca_rdma_get_send_queue_size(rdma: *const doca_rdma, out: *mut u32) -> doca_error_t => |c| c.send_queue_size);
getter!(pub unsafe extern "C" fn doca_rdma_get_recv_queue_size(rdma: *const doca_rdma, out: *mut u32) -> doca_error_t => |c| c.recv_queue_size);
getter!(pub unsafe extern "C" fn doca_rdma_get_transport_type(rdma: *const doca_rdma, out: *mut doca_rdma_transport_type) -> doca_error_t => |c| c.transport as u32);
getter!(pub unsafe extern "C" fn doca_rdma_get_mtu(rdma: *const doca_rdma, out: *mut doca_mtu_size) -> doca_error_t => |c| c.mtu);
getter!(pub unsafe extern "C" fn doca_rdma_get_grh_enabled(rdma: *const doca_rdma, out: *mut bool) -> doca_error_t => |c| c.grh);
getter!(pub unsafe extern "C" fn doca_rdma_get_gid_index(rdma: *const doca_rdma, out: *mut u32) -> doca_error_t => |c| c.gid_index);
getter!(pub unsafe extern "C" fn doca_rdma_get_recv_buf_chain_len(rdma: *const doca_rdma, out: *mut u32) -> doca_error_t => |c| c.recv_buf_list_len);
getter!(pub unsafe extern "C" fn doca_rdma_get_sl(rdma: *const doca_rdma, out: *mut u32) -> doca_error_t => |c| c.sl);

/// `doca_rdma_get_permissions`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_get_permissions(
    rdma: *mut doca_rdma,
    permissions: *mut u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let c = unsafe { rdma_of(rdma) }?.rdma.conf();
        let o = out_ptr(permissions, "permissions")?;
        // SAFETY: output checked.
        unsafe { put(o, c.permissions.bits()) };
        Ok(())
    })
}

/// `struct doca_rdma_job_recv`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_rdma_job_recv {
    /// Base.
    pub base: doca_job,
    /// Where the message goes (appended to its data; may be NULL for an empty message
    /// or a write with immediate).
    pub dst_buff: *mut doca_buf,
}
/// `struct doca_rdma_job_send`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_rdma_job_send {
    /// Base.
    pub base: doca_job,
    /// The message (its data).
    pub src_buff: *const doca_buf,
    /// Immediate data (send with immediate).
    pub immediate_data: u32,
    /// The peer (DC and UD only; not used by RC).
    pub rdma_peer_addr: *const c_void,
}
/// `struct doca_rdma_job_read_write`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_rdma_job_read_write {
    /// Base.
    pub base: doca_job,
    /// Destination (remote for a write, local for a read).
    pub dst_buff: *mut doca_buf,
    /// Source (local for a write, remote for a read).
    pub src_buff: *const doca_buf,
    /// Immediate data (write with immediate).
    pub immediate_data: u32,
    /// The peer (DC only; not used by RC).
    pub rdma_peer_addr: *const c_void,
}
/// `struct doca_rdma_job_atomic`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_rdma_job_atomic {
    /// Base.
    pub base: doca_job,
    /// The remote 8 bytes.
    pub cmp_or_add_dest_buff: *mut doca_buf,
    /// Receives the remote value before the operation.
    pub result_buff: *mut doca_buf,
    /// The value swapped in, or added.
    pub swap_or_add_data: u64,
    /// The value compared with (compare and swap).
    pub cmp_data: u64,
    /// The peer (DC only; not used by RC).
    pub rdma_peer_addr: *const c_void,
}
/// `struct doca_rdma_result`: what a completed RDMA job reports, written where the
/// event's `result.ptr` points.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_rdma_result {
    /// The job's status.
    pub result: doca_error_t,
    /// A receive's `enum doca_rdma_opcode_t`.
    pub opcode: u32,
    /// Bytes received (receive) or read (read); 0 otherwise.
    pub length: u32,
    /// The peer (DC and UD only): NULL.
    pub rdma_peer_addr: *mut c_void,
    /// A receive's immediate data.
    pub immediate_data: u32,
}

// The layouts of DOCA 2.2 (x86-64), mirrored by _Static_asserts in the C tests.
const _: () = {
    assert!(size_of::<doca_rdma_job_recv>() == 32);
    assert!(offset_of!(doca_rdma_job_recv, dst_buff) == 24);
    assert!(size_of::<doca_rdma_job_send>() == 48);
    assert!(offset_of!(doca_rdma_job_send, src_buff) == 24);
    assert!(offset_of!(doca_rdma_job_send, immediate_data) == 32);
    assert!(offset_of!(doca_rdma_job_send, rdma_peer_addr) == 40);
    assert!(size_of::<doca_rdma_job_read_write>() == 56);
    assert!(offset_of!(doca_rdma_job_read_write, dst_buff) == 24);
    assert!(offset_of!(doca_rdma_job_read_write, src_buff) == 32);
    assert!(offset_of!(doca_rdma_job_read_write, immediate_data) == 40);
    assert!(offset_of!(doca_rdma_job_read_write, rdma_peer_addr) == 48);
    assert!(size_of::<doca_rdma_job_atomic>() == 64);
    assert!(offset_of!(doca_rdma_job_atomic, result_buff) == 32);
    assert!(offset_of!(doca_rdma_job_atomic, swap_or_add_data) == 40);
    assert!(offset_of!(doca_rdma_job_atomic, cmp_data) == 48);
    assert!(size_of::<doca_rdma_result>() == 32);
    assert!(offset_of!(doca_rdma_result, length) == 8);
    assert!(offset_of!(doca_rdma_result, rdma_peer_addr) == 16);
    assert!(offset_of!(doca_rdma_result, immediate_data) == 24);
};

/// The translation of RDMA's (its task table also declares the 3.x tasks, which have no job struct) 2.2 job structs into records, from its task table.
pub(crate) mod jobs {
    use super::*;
    ::doca_rdma::rdma_task_table!(crate::common::tasks::c22_jobs);
}

// ---- capabilities (both generations) ----

/// `NOT_SUPPORTED` unless the device has the RDMA capability (both generations).
pub(crate) fn rdma_dev(d: &DevInfo) -> Result<()> {
    if d.has_capability(doca_core::device::Capability::Rdma) {
        Ok(())
    } else {
        Err(err(
            ErrorCode::NotSupported,
            format!("device {} does not support RDMA", d.pci_addr()),
        ))
    }
}

/// A device capability answered with a value (both generations).
macro_rules! cap_value {
    (pub unsafe extern "C" fn $name:ident(devinfo: *const doca_devinfo, $out:ident: *mut $t:ty) -> doca_error_t => $v:expr) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            devinfo: *const doca_devinfo,
            $out: *mut $t,
        ) -> doca_error_t {
            $crate::v22::libs::devinfo_value(devinfo, $out, |d| {
                $crate::v22::rdma::rdma_dev(d)?;
                Ok($v)
            })
        }
    };
}
pub(crate) use cap_value;

/// The number of GIDs of an RDMA device (both generations).
pub(crate) fn gid_count(d: &DevInfo) -> Result<u32> {
    rdma_dev(d)?;
    Ok(::doca_rdma::gid::table_of(d).len() as u32)
}

/// Writes `num_entries` GIDs of an RDMA device from `start_index` into the program's
/// array (both generations).
///
/// # Safety
/// `gid_array` is NULL or holds `num_entries` GIDs.
pub(crate) unsafe fn gids_into(
    d: &DevInfo,
    start_index: u32,
    num_entries: u32,
    gid_array: *mut doca_rdma_gid,
) -> Result<()> {
    rdma_dev(d)?;
    if gid_array.is_null() {
        return Err(invalid("gid_array is NULL"));
    }
    let t = ::doca_rdma::gid::table_of(d);
    let end = start_index
        .checked_add(num_entries)
        .filter(|&e| e as usize <= t.len())
        .ok_or_else(|| {
            invalid(format!(
                "GIDs {start_index}..+{num_entries}: the table has {} entries",
                t.len()
            ))
        })?;
    for (k, i) in (start_index..end).enumerate() {
        // SAFETY: the program's array of num_entries GIDs (the caller's contract).
        unsafe { gid_array.add(k).write(doca_rdma_gid { raw: t[i as usize] }) };
    }
    Ok(())
}

// A task keeps its handle in a parameter slot (the program keeps it alive).
crate::common::tasks::handle_inputs!(*mut ::doca_rdma::Connection);
