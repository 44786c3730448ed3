//! Device capabilities and the job types they enable.

use crate::types::action;

macro_rules! capabilities {
    ($( $(#[$doc:meta])* $variant:ident => $name:literal, )*) => {
        /// Something a software device can do, named as in topology files.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Capability {
            $( $(#[$doc])* $variant, )*
        }

        impl Capability {
            /// Every capability (the default topology's device has them all).
            pub const ALL: &'static [Capability] = &[ $( Capability::$variant, )* ];

            /// The name used in topology files and tool output.
            pub const fn name(self) -> &'static str {
                match self { $( Capability::$variant => $name, )* }
            }

            /// The capability with this topology-file name.
            pub fn from_name(name: &str) -> Option<Capability> {
                match name { $( $name => Some(Capability::$variant), )* _ => None }
            }
        }
    };
}

capabilities! {
    /// DMA library jobs.
    Dma => "dma",
    /// SHA library jobs.
    Sha => "sha",
    /// Erasure coding library jobs.
    Ec => "ec",
    /// Sync event asynchronous jobs.
    SyncEvent => "sync_event",
    /// `doca_mmap_export_dpu` from this device.
    MmapExportDpu => "mmap_export_dpu",
    /// `doca_mmap_create_from_export` with this device.
    MmapFromExportDpu => "mmap_from_export_dpu",
    /// Sync event export to the DPU.
    SyncEventExportDpu => "sync_event_export_dpu",
    /// Comm channel endpoints (host clients, DPU services).
    CommChannel => "comm_channel",
    /// RDMA contexts (`doca_rdma`): connections, sends, receives, reads, writes and
    /// atomics to other processes and machines.
    Rdma => "rdma",
    /// Compress contexts (`doca_compress`): deflate compress and decompress, LZ4
    /// decompress.
    Compress => "compress",
    /// AES-GCM contexts (`doca_aes_gcm`): encrypt and decrypt with 128- and 256-bit keys.
    AesGcm => "aes_gcm",
    /// Hot-plug manager.
    HotplugManager => "hotplug_manager",
    /// Representor listing with `DOCA_DEV_REP_FILTER_ALL`.
    RepListAll => "rep_list_all",
    /// Representor listing with `DOCA_DEV_REP_FILTER_NET`.
    RepListNet => "rep_list_net",
    /// Representor listing with `DOCA_DEV_REP_FILTER_EMULATED`.
    RepListEmulated => "rep_list_emulated",
}

/// Job types known to the software device, with their topology-file names.
pub const JOB_TYPES: &[(&str, u32, Capability)] = &[
    ("dma.memcpy", action::DMA_FIRST + 1, Capability::Dma),
    ("sha.sha1", action::SHA_FIRST + 1, Capability::Sha),
    ("sha.sha256", action::SHA_FIRST + 2, Capability::Sha),
    ("sha.sha512", action::SHA_FIRST + 3, Capability::Sha),
    ("sha.sha1_partial", action::SHA_FIRST + 4, Capability::Sha),
    ("sha.sha256_partial", action::SHA_FIRST + 5, Capability::Sha),
    ("sha.sha512_partial", action::SHA_FIRST + 6, Capability::Sha),
    (
        "sync_event.wait_gt",
        action::SYNC_EVENT_FIRST + 1,
        Capability::SyncEvent,
    ),
    (
        "sync_event.get",
        action::SYNC_EVENT_FIRST + 2,
        Capability::SyncEvent,
    ),
    (
        "sync_event.update_set",
        action::SYNC_EVENT_FIRST + 3,
        Capability::SyncEvent,
    ),
    (
        "sync_event.update_add",
        action::SYNC_EVENT_FIRST + 4,
        Capability::SyncEvent,
    ),
    (
        "sync_event.wait_eq",
        action::SYNC_EVENT_FIRST + 5,
        Capability::SyncEvent,
    ),
    (
        "sync_event.wait_neq",
        action::SYNC_EVENT_FIRST + 6,
        Capability::SyncEvent,
    ),
    (
        "compress.compress_deflate",
        action::COMPRESS_FIRST + 1,
        Capability::Compress,
    ),
    (
        "compress.decompress_deflate",
        action::COMPRESS_FIRST + 2,
        Capability::Compress,
    ),
    (
        "compress.decompress_lz4_stream",
        action::COMPRESS_FIRST + 3,
        Capability::Compress,
    ),
    (
        "compress.decompress_lz4_block",
        action::COMPRESS_FIRST + 4,
        Capability::Compress,
    ),
    (
        "aes_gcm.encrypt",
        action::AES_GCM_FIRST + 1,
        Capability::AesGcm,
    ),
    (
        "aes_gcm.decrypt",
        action::AES_GCM_FIRST + 2,
        Capability::AesGcm,
    ),
    ("ec.galois_mul", action::EC_FIRST + 1, Capability::Ec),
    ("ec.create", action::EC_FIRST + 2, Capability::Ec),
    ("ec.update", action::EC_FIRST + 3, Capability::Ec),
    ("ec.recover", action::EC_FIRST + 4, Capability::Ec),
    (
        "mmap_advise.invalidate_cache",
        action::MMAP_ADVISE_FIRST + 1,
        Capability::Dma,
    ),
];

/// The name and library capability of a job type.
pub fn job_type_info(job_type: u32) -> Option<(&'static str, Capability)> {
    JOB_TYPES
        .iter()
        .find(|(_, t, _)| *t == job_type)
        .map(|(n, _, c)| (*n, *c))
}

/// The job type with this topology-file name.
pub fn job_type_by_name(name: &str) -> Option<u32> {
    JOB_TYPES
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, t, _)| *t)
}
