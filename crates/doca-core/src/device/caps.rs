//! Device capabilities and the job types they enable.

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
