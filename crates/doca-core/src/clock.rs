//! `doca_clock`: reading a device's clocks and the host's, alone or as a cross
//! timestamp (two clocks read as close together as possible, with the margin of error).
//!
//! A software device's NIC clocks are the host's: the free-running clock counts from an
//! arbitrary start (the host's raw monotonic clock), the real-time clock is the host's
//! real-time clock (what a PTP-synchronised NIC clock follows). There is no DPA timer.
//!
//! ```
//! use doca_core::clock::{Clock, ClockType};
//! let dev = doca_core::devinfo_list()?[0].open()?;
//! let clock = Clock::new(&dev)?;
//! let (host, nic, margin) = clock.cross_timestamp(ClockType::HostRealTime, ClockType::NicRealTime)?;
//! assert!(nic.as_nanos().abs_diff(host.as_nanos()) <= margin + 1_000_000);
//! # Ok::<(), doca_core::Error>(())
//! ```

use crate::device::{Capability, Dev, DevInfo};
use crate::error::{Error, ErrorCode, Result};

/// A clock (`DOCA_CLOCK_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockType {
    /// `DOCA_CLOCK_NIC_FREE_RUNNING` (0x1): seconds and nanoseconds.
    NicFreeRunning,
    /// `DOCA_CLOCK_NIC_REAL_TIME` (0x2): seconds and nanoseconds.
    NicRealTime,
    /// `DOCA_CLOCK_NIC_DPA_TIMER` (0x100): seconds and nanoseconds.
    NicDpaTimer,
    /// `DOCA_CLOCK_HOST_COUNTER_CYCLES` (0x10000): the CPU's counter, in cycles.
    HostCounterCycles,
    /// `DOCA_CLOCK_HOST_REAL_TIME` (0x20000).
    HostRealTime,
    /// `DOCA_CLOCK_HOST_MONOTONIC` (0x40000).
    HostMonotonic,
    /// `DOCA_CLOCK_HOST_MONOTONIC_RAW` (0x80000).
    HostMonotonicRaw,
}

impl ClockType {
    /// From a `DOCA_CLOCK_*` value: `InvalidValue` for anything else (several bits
    /// included).
    pub fn from_raw(v: u64) -> Result<ClockType> {
        Ok(match v {
            0x1 => ClockType::NicFreeRunning,
            0x2 => ClockType::NicRealTime,
            0x100 => ClockType::NicDpaTimer,
            0x1_0000 => ClockType::HostCounterCycles,
            0x2_0000 => ClockType::HostRealTime,
            0x4_0000 => ClockType::HostMonotonic,
            0x8_0000 => ClockType::HostMonotonicRaw,
            _ => {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    format!("{v:#x} is not one DOCA_CLOCK_* type"),
                ));
            }
        })
    }

    /// Whether this is one of the NIC's clocks.
    pub fn is_nic(self) -> bool {
        matches!(
            self,
            ClockType::NicFreeRunning | ClockType::NicRealTime | ClockType::NicDpaTimer
        )
    }
}

/// A reading: a time (`struct timespec`) or, for the cycle counter, a count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timestamp {
    /// Seconds and nanoseconds.
    Time {
        /// Seconds.
        secs: u64,
        /// Nanoseconds (below 10^9).
        nanos: u32,
    },
    /// A raw counter.
    Counter(u64),
}

impl Timestamp {
    /// The reading in nanoseconds (a counter's raw count).
    pub fn as_nanos(self) -> u64 {
        match self {
            Timestamp::Time { secs, nanos } => secs * 1_000_000_000 + u64::from(nanos),
            Timestamp::Counter(c) => c,
        }
    }
}

/// Whether a device has a NIC clock of this type.
pub fn nic_clock_supported(devinfo: &DevInfo, t: ClockType) -> Result<()> {
    let ok = match t {
        ClockType::NicFreeRunning | ClockType::NicRealTime => {
            devinfo.has_capability(Capability::Dma)
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::with_context(
            ErrorCode::NotSupported,
            format!("device {} has no {t:?} clock", devinfo.pci_addr_str()),
        ))
    }
}

/// Reads a host clock through the C library (which finds the kernel's fast path the
/// way the platform provides it).
fn clock_gettime(id: libc::clockid_t) -> Timestamp {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; the ids used here always exist on
    // Linux, and on failure the zeroed value stays.
    unsafe { libc::clock_gettime(id, &mut ts) };
    Timestamp::Time {
        secs: ts.tv_sec as u64,
        nanos: ts.tv_nsec as u32,
    }
}

#[cfg(target_arch = "x86_64")]
fn cycles() -> u64 {
    // SAFETY: RDTSC has no preconditions on x86_64.
    unsafe { std::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
fn cycles() -> u64 {
    clock_gettime(libc::CLOCK_MONOTONIC_RAW).as_nanos()
}

/// A device's clock (`struct doca_clock`).
#[derive(Debug)]
pub struct Clock {
    info: DevInfo,
}

impl Clock {
    /// `doca_clock_create`.
    pub fn new(dev: &Dev) -> Result<Clock> {
        Ok(Clock {
            info: dev.as_devinfo().clone(),
        })
    }

    /// `doca_clock_get_timestamp`: `NotSupported` for a clock the device lacks.
    pub fn timestamp(&self, t: ClockType) -> Result<Timestamp> {
        if t.is_nic() {
            nic_clock_supported(&self.info, t)?;
        }
        Ok(match t {
            ClockType::NicFreeRunning | ClockType::HostMonotonicRaw => {
                clock_gettime(libc::CLOCK_MONOTONIC_RAW)
            }
            ClockType::NicRealTime | ClockType::HostRealTime => clock_gettime(libc::CLOCK_REALTIME),
            ClockType::HostMonotonic => clock_gettime(libc::CLOCK_MONOTONIC),
            ClockType::HostCounterCycles => Timestamp::Counter(cycles()),
            ClockType::NicDpaTimer => unreachable!("refused above"),
        })
    }

    /// `doca_clock_get_crosstimestamp`: `primary` and the NIC clock `nic` read back to
    /// back, with the margin of error (the time between the two readings of `primary`
    /// that enclose the NIC reading; in cycles for the cycle counter).
    pub fn cross_timestamp(
        &self,
        primary: ClockType,
        nic: ClockType,
    ) -> Result<(Timestamp, Timestamp, u64)> {
        if !nic.is_nic() {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("{nic:?} is not a NIC clock"),
            ));
        }
        // Refusals come before any reading.
        for t in [primary, nic] {
            if t.is_nic() {
                nic_clock_supported(&self.info, t)?;
            }
        }
        let before = self.timestamp(primary)?;
        let n = self.timestamp(nic)?;
        let after = self.timestamp(primary)?;
        let margin = after.as_nanos().saturating_sub(before.as_nanos()) / 2;
        let mid = match before {
            Timestamp::Counter(c) => Timestamp::Counter(c + margin),
            Timestamp::Time { .. } => {
                let ns = before.as_nanos() + margin;
                Timestamp::Time {
                    secs: ns / 1_000_000_000,
                    nanos: (ns % 1_000_000_000) as u32,
                }
            }
        };
        Ok((mid, n, margin))
    }
}
