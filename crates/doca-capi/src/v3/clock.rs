//! `doca_clock.h`: reading a device's and the host's clocks, alone or as a cross
//! timestamp (`doca_core::clock`).

use crate::common::handles::{Handle, kind};
use crate::common::{doca_error_t, ffi, free_handle, handle, new_handle, out_ptr, put};
use crate::v22::dev::{doca_dev, doca_devinfo};
use crate::v22::libs::devinfo_query;
use doca_core::clock::{Clock, ClockType, Timestamp, nic_clock_supported};

/// `struct doca_clock`.
#[derive(Debug)]
pub struct doca_clock {
    clock: Clock,
}

impl Handle for doca_clock {
    type Kind = kind::Boxed;
}

/// `union doca_clock_timespec_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub union doca_clock_timespec_t {
    /// Seconds and nanoseconds.
    pub ts: libc::timespec,
    /// A raw counter.
    pub counter: u64,
}

impl std::fmt::Debug for doca_clock_timespec_t {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("doca_clock_timespec_t")
    }
}

const _: () = assert!(std::mem::size_of::<doca_clock_timespec_t>() == 16);

fn to_c(t: Timestamp) -> doca_clock_timespec_t {
    match t {
        Timestamp::Counter(c) => doca_clock_timespec_t { counter: c },
        Timestamp::Time { secs, nanos } => doca_clock_timespec_t {
            ts: libc::timespec {
                tv_sec: secs as libc::time_t,
                tv_nsec: nanos as libc::c_long,
            },
        },
    }
}

fn cap(devinfo: *const doca_devinfo, t: ClockType) -> doca_error_t {
    devinfo_query(devinfo, |d| nic_clock_supported(d, t))
}

/// `doca_clock_cap_nic_free_running_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_clock_cap_nic_free_running_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    cap(devinfo, ClockType::NicFreeRunning)
}

/// `doca_clock_cap_nic_real_time_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_clock_cap_nic_real_time_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    cap(devinfo, ClockType::NicRealTime)
}

/// `doca_clock_cap_nic_dpa_timer_is_supported`: no DPA here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_clock_cap_nic_dpa_timer_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    cap(devinfo, ClockType::NicDpaTimer)
}

/// `doca_clock_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_clock_create(
    dev: *const doca_dev,
    clock: *mut *mut doca_clock,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live device.
        let d = unsafe { handle(dev, "dev") }?;
        new_handle(clock, "clock", || {
            Ok(doca_clock {
                clock: Clock::new(&d.dev)?,
            })
        })
    })
}

/// `doca_clock_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_clock_destroy(clock: *mut doca_clock) -> doca_error_t {
    // SAFETY: NULL or a live boxed handle, freed once.
    ffi(|| unsafe { free_handle(clock, "clock") })
}

/// `doca_clock_get_timestamp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_clock_get_timestamp(
    clock: *const doca_clock,
    clock_type: u64,
    clock_ts: *mut doca_clock_timespec_t,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let c = unsafe { handle(clock, "clock") }?;
        let o = out_ptr(clock_ts, "clock_ts")?;
        let t = c.clock.timestamp(ClockType::from_raw(clock_type)?)?;
        // SAFETY: output checked.
        unsafe { put(o, to_c(t)) };
        Ok(())
    })
}

/// `doca_clock_get_crosstimestamp`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_clock_get_crosstimestamp(
    clock: *const doca_clock,
    primary_clock_type: u64,
    nic_clock_type: u64,
    primary_clock_ts: *mut doca_clock_timespec_t,
    nic_clock_ts: *mut doca_clock_timespec_t,
    error_margin_nsecs: *mut u64,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let c = unsafe { handle(clock, "clock") }?;
        let (po, no, mo) = (
            out_ptr(primary_clock_ts, "primary_clock_ts")?,
            out_ptr(nic_clock_ts, "nic_clock_ts")?,
            out_ptr(error_margin_nsecs, "error_margin_nsecs")?,
        );
        let (p, n, m) = c.clock.cross_timestamp(
            ClockType::from_raw(primary_clock_type)?,
            ClockType::from_raw(nic_clock_type)?,
        )?;
        // SAFETY: outputs checked.
        unsafe {
            put(po, to_c(p));
            put(no, to_c(n));
            put(mo, m);
        }
        Ok(())
    })
}
