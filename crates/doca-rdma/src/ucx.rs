//! The UCX pieces the software NIC stands on: the process's UCP context, a worker per
//! RDMA context, status translation.

use doca_core::{Error, ErrorCode, Result};
use std::ffi::CString;
use std::sync::{Arc, Mutex, Weak};
use ucx_sys as u;

/// The process's UCP context (active messages and wake-up): made when the first
/// worker needs it, cleaned up when the last worker goes.
pub(crate) struct UcpContext(pub(crate) u::ucp_context_h);

// SAFETY: the context is made with `mt_workers_shared`, so workers of several threads
// may use it; it is cleaned up once, when its last holder drops it.
unsafe impl Send for UcpContext {}
// SAFETY: as above.
unsafe impl Sync for UcpContext {}

impl Drop for UcpContext {
    fn drop(&mut self) {
        // SAFETY: no worker of this context is left (each holds the context).
        unsafe { u::ucp_cleanup(self.0) };
    }
}

pub(crate) fn status_text(s: u::ucs_status_t) -> String {
    // SAFETY: ucs_status_string returns a static C string for any status.
    unsafe {
        let p = u::ucs_status_string(s);
        if p.is_null() {
            return format!("UCX status {s}");
        }
        std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// The DOCA error for a UCX failure `s` while doing `what`.
pub(crate) fn ucx_error(what: &str, s: u::ucs_status_t) -> Error {
    let code = match s {
        u::UCS_ERR_NO_MEMORY | u::UCS_ERR_NO_RESOURCE => ErrorCode::NoMemory,
        u::UCS_ERR_UNREACHABLE | u::UCS_ERR_CONNECTION_RESET | u::UCS_ERR_ENDPOINT_TIMEOUT => {
            ErrorCode::ConnectionReset
        }
        u::UCS_ERR_CANCELED => ErrorCode::ConnectionAborted,
        u::UCS_ERR_TIMED_OUT => ErrorCode::TimeOut,
        u::UCS_ERR_INVALID_PARAM | u::UCS_ERR_INVALID_ADDR => ErrorCode::InvalidValue,
        u::UCS_ERR_UNSUPPORTED => ErrorCode::NotSupported,
        _ => ErrorCode::IoFailed,
    };
    Error::with_context(code, format!("{what}: {}", status_text(s)))
}

/// Bytes of one segment of UCX's shared-memory queues that this library asks for when
/// peers of this machine may reach it through shared memory (`DOCA_RDMA_SHM=1`) and the
/// user chose none (`UCX_MM_SEG_SIZE`, `UCX_SYSV_SEG_SIZE`, `UCX_POSIX_SEG_SIZE`): 32 KiB
/// of data per message and room for the headers. UCX's default (8256 bytes) cuts a
/// 64 KiB transfer into nine messages; its queue elements count lengths in 16 bits, so
/// a segment stays under 64 KiB.
pub const SHM_SEGMENT: usize = 33024;

/// UCX's own default shared-memory segment size.
const UCX_SEGMENT: usize = 8256;

/// The shared-memory segment size the user set for UCX (the smallest of the variables
/// set; UCX's default for a value it would not read either).
fn user_segment() -> Option<usize> {
    ["UCX_MM_SEG_SIZE", "UCX_SYSV_SEG_SIZE", "UCX_POSIX_SEG_SIZE"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .map(|v| memunits(&v).unwrap_or(UCX_SEGMENT))
        .min()
}

/// A size as UCX's configuration writes it: a number with an optional unit (`b`, `k`,
/// `m`, `g`, upper or lower case, with or without a trailing `b`).
fn memunits(v: &str) -> Option<usize> {
    let v = v.trim();
    let digits = v.len() - v.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let n: usize = v[..digits].parse().ok()?;
    let unit = match v[digits..].to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1 << 10,
        "m" | "mb" => 1 << 20,
        "g" | "gb" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(unit)
}

/// Whether this process lets peers of its machine reach it through shared memory
/// (`DOCA_RDMA_SHM=1`).
pub(crate) fn shm_allowed() -> bool {
    std::env::var_os("DOCA_RDMA_SHM").is_some_and(|v| v == "1")
}

/// The shared-memory segment size of this process's UCX (0 when it lets no peer of its
/// machine reach it through shared memory). Peers of one machine talk through shared
/// memory only when theirs are equal (UCX writes into its peer's queue with its own).
pub fn shm_segment() -> u32 {
    static SEG: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *SEG.get_or_init(|| {
        if !shm_allowed() {
            return 0;
        }
        let n = user_segment().unwrap_or(SHM_SEGMENT);
        u32::try_from(n).unwrap_or(u32::MAX).max(1)
    })
}

/// Most bytes of data one shared-memory message carries whole here (UCX's header and
/// ours take the rest of a segment), in cache lines.
pub(crate) fn shm_piece() -> usize {
    let seg = match shm_segment() {
        0 => UCX_SEGMENT,
        n => n as usize,
    };
    (seg.saturating_sub(128) / 64 * 64).max(64)
}

/// The process's UCP context for one choice of network interface (`None`: any), made if
/// no worker holds one.
pub(crate) fn context(iface: Option<&str>) -> Result<Arc<UcpContext>> {
    type Contexts = Vec<(Option<String>, Weak<UcpContext>)>;
    static CTX: Mutex<Contexts> = Mutex::new(Vec::new());
    let mut g = CTX.lock().unwrap_or_else(|e| e.into_inner());
    g.retain(|(_, w)| w.strong_count() > 0);
    if let Some(c) = g
        .iter()
        .find(|(k, _)| k.as_deref() == iface)
        .and_then(|(_, w)| w.upgrade())
    {
        return Ok(c);
    }
    let dev_name = match iface {
        None => None,
        Some(n) => Some(CString::new(n).map_err(|_| {
            Error::with_context(
                ErrorCode::InvalidValue,
                format!("network interface name {n:?} holds a NUL byte"),
            )
        })?),
    };
    // SAFETY: the configuration is read, modified and released here; zeroed params
    // with only the fields named in field_mask set; the context pointer is written by
    // ucp_init on success.
    let ctx = unsafe {
        let mut cfg = std::ptr::null_mut();
        let s = u::ucp_config_read(std::ptr::null(), std::ptr::null(), &mut cfg);
        if s != u::UCS_OK {
            return Err(ucx_error("cannot read UCX's configuration", s));
        }
        if let Some(n) = &dev_name {
            let s = u::ucp_config_modify(cfg, c"NET_DEVICES".as_ptr(), n.as_ptr());
            if s != u::UCS_OK {
                u::ucp_config_release(cfg);
                return Err(ucx_error(
                    &format!(
                        "UCX does not take network interface '{}'",
                        n.to_string_lossy()
                    ),
                    s,
                ));
            }
        }
        if shm_allowed() && user_segment().is_none() {
            let v = CString::new(SHM_SEGMENT.to_string()).unwrap_or_default();
            let s = u::ucp_config_modify(cfg, c"MM_SEG_SIZE".as_ptr(), v.as_ptr());
            if s != u::UCS_OK {
                u::ucp_config_release(cfg);
                return Err(ucx_error(
                    "UCX does not take the shared-memory segment size",
                    s,
                ));
            }
        }
        let mut p: u::ucp_params_t = std::mem::zeroed();
        p.field_mask = (u::UCP_PARAM_FIELD_FEATURES | u::UCP_PARAM_FIELD_MT_WORKERS_SHARED) as u64;
        p.features = (u::UCP_FEATURE_AM | u::UCP_FEATURE_WAKEUP) as u64;
        p.mt_workers_shared = 1;
        let mut ctx = std::ptr::null_mut();
        let s = u::ucp_init(&p, cfg, &mut ctx);
        u::ucp_config_release(cfg);
        if s != u::UCS_OK {
            return Err(ucx_error("UCX (ucp_init) did not start", s));
        }
        ctx
    };
    let c = Arc::new(UcpContext(ctx));
    g.push((iface.map(str::to_owned), Arc::downgrade(&c)));
    Ok(c)
}

/// A UCP worker, used by one thread at a time (the NIC's).
pub(crate) struct Worker {
    pub(crate) w: u::ucp_worker_h,
    /// The context, kept while the worker lives (dropped after it, see `Drop`).
    _ctx: Arc<UcpContext>,
    /// Its address, as remote sides reach it.
    pub(crate) address: Vec<u8>,
}

// SAFETY: the worker is made here and then used only by the NIC thread it moves to
// (`ucp_worker_signal`, the one call of other threads, is safe from any thread).
unsafe impl Send for Worker {}

impl Worker {
    /// A worker on the UCP context for `iface` (`None`: any interface).
    pub(crate) fn new(iface: Option<&str>) -> Result<Worker> {
        let ctx = context(iface)?;
        // SAFETY: zeroed params with only the named fields set; on success the worker
        // and its address are ours until released.
        unsafe {
            let mut wp: u::ucp_worker_params_t = std::mem::zeroed();
            wp.field_mask = u::UCP_WORKER_PARAM_FIELD_THREAD_MODE as u64;
            wp.thread_mode = u::UCS_THREAD_MODE_SERIALIZED;
            let mut w = std::ptr::null_mut();
            let s = u::ucp_worker_create(ctx.0, &wp, &mut w);
            if s != u::UCS_OK {
                return Err(ucx_error("cannot create a UCX worker", s));
            }
            let mut a = std::ptr::null_mut();
            let mut n = 0usize;
            let s = u::ucp_worker_get_address(w, &mut a, &mut n);
            if s != u::UCS_OK {
                u::ucp_worker_destroy(w);
                return Err(ucx_error("cannot get the UCX worker's address", s));
            }
            let address = std::slice::from_raw_parts(a as *const u8, n).to_vec();
            u::ucp_worker_release_address(w, a);
            Ok(Worker {
                w,
                _ctx: ctx,
                address,
            })
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // SAFETY: the worker is ours and no endpoint or request of it is used after this.
        unsafe { u::ucp_worker_destroy(self.w) };
    }
}

/// A worker handle other threads may wake.
#[derive(Clone, Copy)]
pub(crate) struct Signal(pub(crate) u::ucp_worker_h);

// SAFETY: only `ucp_worker_signal` is called through it, which UCX allows from any
// thread; the worker outlives every Signal (the NIC joins its thread before the worker
// goes, and its users hold the NIC).
unsafe impl Send for Signal {}
// SAFETY: as above.
unsafe impl Sync for Signal {}

impl Signal {
    pub(crate) fn wake(&self) {
        // SAFETY: see the type's Send/Sync note.
        unsafe { u::ucp_worker_signal(self.0) };
    }
}

/// UCX's connection manager listens without `SO_REUSEADDR` unless
/// `UCX_TCP_CM_REUSEADDR` says otherwise (its configuration API does not reach it):
/// a server that restarts would then find its port held by connections in TCP's
/// TIME_WAIT for a minute, where an RDMA NIC's connection manager listens again at
/// once. Set, unless the user chose, when the program starts.
extern "C" fn reuse_cm_addresses() {
    if std::env::var_os("UCX_TCP_CM_REUSEADDR").is_none() {
        // SAFETY: this runs from the program's constructors, before `main` (or while
        // the library loads), when nothing else reads the environment concurrently.
        unsafe { std::env::set_var("UCX_TCP_CM_REUSEADDR", "y") };
    }
}

#[used]
#[unsafe(link_section = ".init_array")]
static REUSE_CM_ADDRESSES: extern "C" fn() = reuse_cm_addresses;

/// The transports UCX chose for an endpoint, as `transport/device` names joined with
/// `,` (from `ucp_ep_print_info`'s lanes, first seen first).
///
/// # Safety
/// `ep` is a live endpoint of a worker the calling thread may use.
pub unsafe fn transports_of(ep: u::ucp_ep_h) -> String {
    let mut buf: *mut libc::c_char = std::ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: open_memstream's outputs are valid locals; the stream is closed below.
    let f = unsafe { libc::open_memstream(&mut buf, &mut len) };
    if f.is_null() {
        return "?".into();
    }
    // SAFETY: the caller's contract; `f` is an open stream (a FILE of the C library).
    unsafe {
        u::ucp_ep_print_info(ep, f.cast());
        libc::fclose(f);
    }
    if buf.is_null() {
        return "?".into();
    }
    // SAFETY: fclose left `len` bytes at `buf`, allocated by the C library.
    let text =
        String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(buf as *const u8, len) })
            .into_owned();
    // SAFETY: the memstream's buffer, freed once.
    unsafe { libc::free(buf.cast()) };
    let mut out: Vec<String> = Vec::new();
    for line in text.lines().filter(|l| l.contains("lane[")) {
        // "... lane[0]:  3:posix/memory.0 md[1] ...": the word after the lane's index.
        let Some(w) = line
            .split_whitespace()
            .find(|w| w.contains(':') && w.contains('/') && !w.starts_with("lane"))
        else {
            continue;
        };
        let name = w.split_once(':').map_or(w, |(_, r)| r).to_owned();
        if !out.contains(&name) {
            out.push(name);
        }
    }
    if out.is_empty() {
        "?".into()
    } else {
        out.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::memunits;

    #[test]
    fn sizes_read_as_ucx_writes_them() {
        assert_eq!(memunits("8256"), Some(8256));
        assert_eq!(memunits("8k"), Some(8192));
        assert_eq!(memunits("32KB"), Some(32768));
        assert_eq!(memunits(" 1m "), Some(1 << 20));
        assert_eq!(memunits("2g"), Some(2 << 30));
        assert_eq!(memunits("12b"), Some(12));
        assert_eq!(memunits("k"), None);
        assert_eq!(memunits("8q"), None);
        assert_eq!(memunits("inf"), None);
    }
}
