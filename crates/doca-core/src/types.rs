//! Common DOCA types: access flags, PCI function types, `doca_data`, action ranges.

use crate::error::{Error, ErrorCode};
use bitflags::bitflags;

bitflags! {
    /// `enum doca_access_flags`: who may access an mmap's memory, and how.
    ///
    /// `LOCAL_READ_ONLY` is the empty set (value 0), as in DOCA.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct AccessFlags: u32 {
        /// Local devices may write (`DOCA_ACCESS_LOCAL_READ_WRITE`).
        const LOCAL_READ_WRITE = 1 << 0;
        /// Remote RDMA peers may read (`DOCA_ACCESS_RDMA_READ`).
        const RDMA_READ = 1 << 1;
        /// Remote RDMA peers may write (`DOCA_ACCESS_RDMA_WRITE`).
        const RDMA_WRITE = 1 << 2;
        /// Remote RDMA peers may use atomics (`DOCA_ACCESS_RDMA_ATOMIC`).
        const RDMA_ATOMIC = 1 << 3;
        /// The DPU may read (`DOCA_ACCESS_DPU_READ_ONLY`).
        const DPU_READ_ONLY = 1 << 4;
        /// The DPU may read and write (`DOCA_ACCESS_DPU_READ_WRITE`).
        const DPU_READ_WRITE = 1 << 5;
        /// Accesses from the other side of PCI may be reordered
        /// (`DOCA_ACCESS_FLAG_PCI_RELAXED_ORDERING`, 2.5 and later): a hint, with no
        /// effect on what is allowed.
        const PCI_RELAXED_ORDERING = 1 << 6;
    }
}

impl AccessFlags {
    /// `DOCA_ACCESS_LOCAL_READ_ONLY` (0).
    pub const LOCAL_READ_ONLY: AccessFlags = AccessFlags::empty();

    /// Converts a C access mask, refusing unknown bits.
    pub fn from_raw(mask: u32) -> Result<AccessFlags, Error> {
        AccessFlags::from_bits(mask).ok_or_else(|| {
            Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "access mask {mask:#x} has bits outside doca_access_flags (valid bits: {:#x})",
                    AccessFlags::all().bits()
                ),
            )
        })
    }

    /// Whether a local device may write.
    pub fn local_write(self) -> bool {
        self.contains(AccessFlags::LOCAL_READ_WRITE)
    }
}

/// `enum doca_pci_func_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum PciFuncType {
    /// Physical function.
    Pf = 0,
    /// Virtual function.
    Vf = 1,
    /// Sub function.
    Sf = 2,
}

impl PciFuncType {
    /// Converts a C value, refusing numbers outside the enum.
    pub fn from_raw(raw: i32) -> Result<PciFuncType, Error> {
        match raw {
            0 => Ok(PciFuncType::Pf),
            1 => Ok(PciFuncType::Vf),
            2 => Ok(PciFuncType::Sf),
            _ => Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("{raw} is not a doca_pci_func_type (0 = PF, 1 = VF, 2 = SF)"),
            )),
        }
    }

    /// Lower-case short name: "pf", "vf" or "sf".
    pub fn as_str(self) -> &'static str {
        match self {
            PciFuncType::Pf => "pf",
            PciFuncType::Vf => "vf",
            PciFuncType::Sf => "sf",
        }
    }
}

/// `union doca_data`: 8 bytes holding either a pointer or a `u64`.
///
/// Stored as a `u64`; the pointer view is an address, and turning it back into a
/// reference is the caller's business.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Data(pub u64);

impl Data {
    /// From a `u64`.
    pub const fn from_u64(v: u64) -> Data {
        Data(v)
    }

    /// From a pointer (its address).
    pub fn from_ptr<T>(p: *const T) -> Data {
        Data(p as usize as u64)
    }

    /// The `u64` view.
    pub const fn u64(self) -> u64 {
        self.0
    }

    /// The pointer view.
    pub fn ptr<T>(self) -> *mut T {
        self.0 as usize as *mut T
    }
}

/// `DOCA_ACTION_SDK_RANGE`: each library's job types start at `n << 16`.
pub const ACTION_SDK_RANGE: u32 = 16;

/// First job type of each library (`DOCA_ACTION_<LIB>_FIRST`).
pub mod action {
    use super::ACTION_SDK_RANGE;
    /// DMA.
    pub const DMA_FIRST: u32 = 1 << ACTION_SDK_RANGE;
    /// SHA.
    pub const SHA_FIRST: u32 = 9 << ACTION_SDK_RANGE;
    /// Compress.
    pub const COMPRESS_FIRST: u32 = 10 << ACTION_SDK_RANGE;
    /// RDMA.
    pub const RDMA_FIRST: u32 = 13 << ACTION_SDK_RANGE;
    /// Graph.
    pub const GRAPH_FIRST: u32 = 14 << ACTION_SDK_RANGE;
    /// Sync event.
    pub const SYNC_EVENT_FIRST: u32 = 15 << ACTION_SDK_RANGE;
    /// Erasure coding.
    pub const EC_FIRST: u32 = 17 << ACTION_SDK_RANGE;
    /// Memory map advice (the task generation's cache invalidation).
    pub const MMAP_ADVISE_FIRST: u32 = 20 << ACTION_SDK_RANGE;
    /// First comch task (3.x comm channel).
    pub const COMCH_FIRST: u32 = 21 << ACTION_SDK_RANGE;
    /// AES-GCM (a library of the task generation only: DOCA 2.2 has no range for it).
    pub const AES_GCM_FIRST: u32 = 22 << ACTION_SDK_RANGE;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_flag_values() {
        assert_eq!(AccessFlags::LOCAL_READ_ONLY.bits(), 0);
        assert_eq!(AccessFlags::DPU_READ_WRITE.bits(), 32);
        assert_eq!(AccessFlags::PCI_RELAXED_ORDERING.bits(), 64);
        assert_eq!(AccessFlags::all().bits(), 127);
        assert!(AccessFlags::from_raw(128).is_err());
        assert_eq!(
            AccessFlags::from_raw(3).unwrap(),
            AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_READ
        );
    }

    #[test]
    fn func_type_and_data() {
        assert_eq!(PciFuncType::from_raw(2).unwrap(), PciFuncType::Sf);
        assert_eq!(
            PciFuncType::from_raw(3).unwrap_err().code(),
            ErrorCode::InvalidValue
        );
        let x = 5u32;
        let d = Data::from_ptr(&x);
        assert_eq!(d.ptr::<u32>() as *const u32, &x as *const u32);
        assert_eq!(action::EC_FIRST + 2, 1114114);
        assert_eq!(action::DMA_FIRST + 1, 65537);
    }
}
