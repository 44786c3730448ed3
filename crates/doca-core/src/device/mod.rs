//! Devices: [`DevInfo`] snapshots, opened [`Dev`]s, representors ([`DevInfoRep`],
//! [`DevRep`]), all backed by the software [`Topology`].

mod caps;
mod pci;
mod topology;

pub use caps::Capability;
pub use pci::{PCI_ADDR_SIZE, PCI_BDF_SIZE, PciAddr};
pub use topology::{
    DEFAULT_MACHINE, DeviceProps, MAX_ENGINE_THREADS, MAX_TOPOLOGY_FILE, ROLE_ENV, RepProps, Role,
    TOPOLOGY_ENV, Topology, build_role, set_build_role,
};

use crate::error::{Error, ErrorCode, Result};
use crate::lock;
use crate::types::PciFuncType;
use std::fmt;
use std::sync::{Arc, Mutex, Weak};

/// `DOCA_DEVINFO_VUID_SIZE`.
pub const VUID_SIZE: usize = 128;
/// `DOCA_DEVINFO_IPV4_ADDR_SIZE`.
pub const IPV4_ADDR_SIZE: usize = 4;
/// `DOCA_DEVINFO_IPV6_ADDR_SIZE`.
pub const IPV6_ADDR_SIZE: usize = 16;
/// `DOCA_DEVINFO_MAC_ADDR_SIZE`.
pub const MAC_ADDR_SIZE: usize = 6;
/// `DOCA_DEVINFO_IFACE_NAME_SIZE`.
pub const IFACE_NAME_SIZE: usize = 256;
/// `DOCA_DEVINFO_IBDEV_NAME_SIZE`.
pub const IBDEV_NAME_SIZE: usize = 64;
/// `DOCA_DEVINFO_REP_VUID_SIZE`.
pub const REP_VUID_SIZE: usize = 128;

fn copy_bytes(out: &mut [u8], src: &[u8], needed: usize, what: &'static str) -> Result<()> {
    if out.len() < needed {
        return Err(Error::with_context(ErrorCode::InvalidValue, what));
    }
    out[..src.len()].copy_from_slice(src);
    Ok(())
}

fn copy_cstr(out: &mut [u8], s: &str, needed: usize, what: &'static str) -> Result<()> {
    if out.len() < needed || out.len() <= s.len() {
        return Err(Error::with_context(ErrorCode::InvalidValue, what));
    }
    out[..s.len()].copy_from_slice(s.as_bytes());
    out[s.len()] = 0;
    Ok(())
}

/// Lists the local devices of the topology in force (a snapshot: later changes to the
/// topology file are not reflected in it).
pub fn devinfo_list() -> Result<Vec<DevInfo>> {
    Ok(Topology::current()?
        .devices
        .into_iter()
        .map(|props| DevInfo { props })
        .collect())
}

/// Lists the local devices of a given topology.
pub fn devinfo_list_from(topology: &Topology) -> Vec<DevInfo> {
    topology
        .devices
        .iter()
        .map(|p| DevInfo {
            props: Arc::clone(p),
        })
        .collect()
}

/// A snapshot of one local device's properties (`struct doca_devinfo`).
#[derive(Clone, PartialEq, Eq)]
pub struct DevInfo {
    props: Arc<DeviceProps>,
}

impl fmt::Debug for DevInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DevInfo")
            .field("pci_addr", &self.props.pci_addr.to_string())
            .field("iface_name", &self.props.iface_name)
            .field("ibdev_name", &self.props.ibdev_name)
            .field("role", &self.props.role)
            .finish()
    }
}

impl DevInfo {
    /// All properties.
    pub fn props(&self) -> &DeviceProps {
        &self.props
    }

    /// PCI address.
    pub fn pci_addr(&self) -> PciAddr {
        self.props.pci_addr
    }

    /// PCI address as "XXXX:XX:XX.X".
    pub fn pci_addr_str(&self) -> String {
        self.props.pci_addr.to_string()
    }

    /// Writes the PCI address string, NUL-terminated, into `out`
    /// (at least [`PCI_ADDR_SIZE`] bytes).
    pub fn pci_addr_into(&self, out: &mut [u8]) -> Result<()> {
        copy_cstr(
            out,
            &self.pci_addr_str(),
            PCI_ADDR_SIZE,
            "PCI address buffer must hold DOCA_DEVINFO_PCI_ADDR_SIZE (13) bytes",
        )
    }

    /// Whether `addr` ("XXXX:XX:XX.X" or "XX:XX.X") is this device's address.
    pub fn is_pci_addr_equal(&self, addr: &str) -> Result<bool> {
        self.props.pci_addr.matches_str(addr)
    }

    /// IPv4 address.
    pub fn ipv4_addr(&self) -> [u8; 4] {
        self.props.ipv4
    }

    /// Copies the IPv4 address into `out` (at least [`IPV4_ADDR_SIZE`] bytes).
    pub fn ipv4_addr_into(&self, out: &mut [u8]) -> Result<()> {
        copy_bytes(
            out,
            &self.props.ipv4,
            IPV4_ADDR_SIZE,
            "IPv4 buffer must hold DOCA_DEVINFO_IPV4_ADDR_SIZE (4) bytes",
        )
    }

    /// IPv6 address.
    pub fn ipv6_addr(&self) -> [u8; 16] {
        self.props.ipv6
    }

    /// Copies the IPv6 address into `out` (at least [`IPV6_ADDR_SIZE`] bytes).
    pub fn ipv6_addr_into(&self, out: &mut [u8]) -> Result<()> {
        copy_bytes(
            out,
            &self.props.ipv6,
            IPV6_ADDR_SIZE,
            "IPv6 buffer must hold DOCA_DEVINFO_IPV6_ADDR_SIZE (16) bytes",
        )
    }

    /// MAC address.
    pub fn mac_addr(&self) -> [u8; 6] {
        self.props.mac
    }

    /// Copies the MAC address into `out` (at least [`MAC_ADDR_SIZE`] bytes).
    pub fn mac_addr_into(&self, out: &mut [u8]) -> Result<()> {
        copy_bytes(
            out,
            &self.props.mac,
            MAC_ADDR_SIZE,
            "MAC buffer must hold DOCA_DEVINFO_MAC_ADDR_SIZE (6) bytes",
        )
    }

    /// Network interface name.
    pub fn iface_name(&self) -> &str {
        &self.props.iface_name
    }

    /// `doca_devinfo_get_active_rate`: the port's rate in bits per second: that of the
    /// network interface the device names, where the machine reports one
    /// (`/sys/class/net/IFACE/speed`), else a BlueField-3 port's 200 Gb/s.
    pub fn active_rate(&self) -> u64 {
        let iface = self
            .props
            .rdma_iface
            .as_deref()
            .unwrap_or(&self.props.iface_name);
        std::fs::read_to_string(format!("/sys/class/net/{iface}/speed"))
            .ok()
            .and_then(|t| t.trim().parse::<i64>().ok())
            .filter(|&mbps| mbps > 0)
            .map_or(200_000_000_000, |mbps| mbps as u64 * 1_000_000)
    }

    /// `doca_devinfo_get_vhca_id`: the function's virtual HCA id, unique on the machine
    /// (made from its PCI bus, device and function).
    pub fn vhca_id(&self) -> u16 {
        vhca_of(self.props.pci_addr)
    }

    /// Writes the interface name, NUL-terminated (at least [`IFACE_NAME_SIZE`] bytes).
    pub fn iface_name_into(&self, out: &mut [u8]) -> Result<()> {
        copy_cstr(
            out,
            &self.props.iface_name,
            IFACE_NAME_SIZE,
            "interface name buffer must hold DOCA_DEVINFO_IFACE_NAME_SIZE (256) bytes",
        )
    }

    /// InfiniBand device name.
    pub fn ibdev_name(&self) -> &str {
        &self.props.ibdev_name
    }

    /// Writes the IB device name, NUL-terminated (at least [`IBDEV_NAME_SIZE`] bytes).
    pub fn ibdev_name_into(&self, out: &mut [u8]) -> Result<()> {
        copy_cstr(
            out,
            &self.props.ibdev_name,
            IBDEV_NAME_SIZE,
            "IB device name buffer must hold DOCA_DEVINFO_IBDEV_NAME_SIZE (64) bytes",
        )
    }

    /// InfiniBand LID.
    pub fn lid(&self) -> u16 {
        self.props.lid
    }

    /// Which side this device is on.
    pub fn role(&self) -> Role {
        self.props.role
    }

    /// Engine threads configured for this device (0: jobs run in the calling thread).
    pub fn engine_threads(&self) -> u32 {
        self.props.engine_threads
    }

    /// Whether the device has a capability.
    pub fn has_capability(&self, cap: Capability) -> bool {
        self.props.caps.contains(&cap)
    }

    /// Capabilities, in declaration order.
    pub fn capabilities(&self) -> &[Capability] {
        &self.props.caps
    }

    /// Whether the device runs jobs of `job_type`, one of `spec`'s (its library's task
    /// table): the device has the library's capability and, when its topology lists
    /// job types, lists this one by its table name (`dma.memcpy`). `NotSupported` with
    /// the reason otherwise.
    pub fn task_supported(&self, spec: &crate::exec::TaskSpec, job_type: u32) -> Result<()> {
        let name = spec.topology_name(job_type).unwrap_or(spec.name);
        if !self.has_capability(spec.capability) {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "device {} does not support job type {}.{name}: it has no '{}' capability",
                    self.props.pci_addr,
                    spec.topology,
                    spec.capability.name()
                ),
            ));
        }
        match &self.props.job_types {
            Some(l)
                if !l
                    .iter()
                    .any(|n| n.split_once('.') == Some((spec.topology, name))) =>
            {
                Err(Error::with_context(
                    ErrorCode::NotSupported,
                    format!(
                        "device {} does not support job type {}.{name}: its topology lists only {}",
                        self.props.pci_addr,
                        spec.topology,
                        l.join(", ")
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Whether the device runs jobs of `job_type` of a library with capability `cap`
    /// whose task table does not declare it (a job type a topology cannot name).
    pub fn job_supported_by(&self, job_type: u32, cap: Capability) -> Result<()> {
        if self.has_capability(cap) {
            Ok(())
        } else {
            Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "device {} does not support job type {job_type:#x}",
                    self.props.pci_addr
                ),
            ))
        }
    }

    /// The job types of `tables` (the libraries' task tables) this device runs, by
    /// their table names (`dma.memcpy`) with their codes.
    pub fn supported_job_types(&self, tables: &[&[&crate::exec::TaskSpec]]) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        for spec in tables.iter().flat_map(|t| t.iter()) {
            for (i, &t) in spec.job_types.iter().enumerate() {
                if self.task_supported(spec, t).is_ok() {
                    let name = spec.job_type_names.get(i).copied().unwrap_or(spec.name);
                    out.push((format!("{}.{name}", spec.topology), t));
                }
            }
        }
        out
    }

    /// The names the device's topology lists as its job types (`None`: every job type
    /// of its capabilities) that no task table in `tables` declares: a mistake in the
    /// topology file, which restricts the device to nothing it names.
    pub fn unknown_job_types(&self, tables: &[&[&crate::exec::TaskSpec]]) -> Vec<String> {
        let Some(l) = &self.props.job_types else {
            return Vec::new();
        };
        l.iter()
            .filter(|n| {
                !tables.iter().flat_map(|t| t.iter()).any(|s| {
                    s.job_type_names
                        .iter()
                        .any(|j| n.split_once('.') == Some((s.topology, *j)))
                })
            })
            .cloned()
            .collect()
    }

    /// `doca_devinfo_get_is_hotplug_manager_supported`.
    pub fn is_hotplug_manager_supported(&self) -> bool {
        self.has_capability(Capability::HotplugManager)
    }

    /// `doca_devinfo_get_is_mmap_export_dpu_supported`.
    /// A host device with the capability (the DPU side imports, the host exports).
    pub fn is_mmap_export_dpu_supported(&self) -> bool {
        self.role() == Role::Host && self.has_capability(Capability::MmapExportDpu)
    }

    /// `doca_devinfo_get_is_mmap_from_export_dpu_supported`.
    /// A DPU device with the capability.
    pub fn is_mmap_from_export_dpu_supported(&self) -> bool {
        self.role() == Role::Dpu && self.has_capability(Capability::MmapFromExportDpu)
    }

    /// `doca_devinfo_rep_get_is_list_all_supported`: only DPU devices list representors.
    pub fn is_rep_list_all_supported(&self) -> bool {
        self.props.role == Role::Dpu && self.has_capability(Capability::RepListAll)
    }

    /// `doca_devinfo_rep_get_is_list_net_supported`.
    pub fn is_rep_list_net_supported(&self) -> bool {
        self.props.role == Role::Dpu && self.has_capability(Capability::RepListNet)
    }

    /// `doca_devinfo_rep_get_is_list_emulated_supported`.
    pub fn is_rep_list_emulated_supported(&self) -> bool {
        self.props.role == Role::Dpu && self.has_capability(Capability::RepListEmulated)
    }

    /// Opens the device. Opening a device that is already open returns the same device.
    pub fn open(&self) -> Result<Dev> {
        Dev::open(self)
    }
}

struct DevShared {
    info: DevInfo,
}

static OPEN_DEVS: Mutex<Vec<Weak<DevShared>>> = Mutex::new(Vec::new());

/// An open device (`struct doca_dev`). Clones share one open device; it closes when the
/// last clone is dropped. Thread-safe.
#[derive(Clone)]
pub struct Dev {
    inner: Arc<DevShared>,
}

impl fmt::Debug for Dev {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Dev").field(&self.inner.info).finish()
    }
}

impl PartialEq for Dev {
    fn eq(&self, other: &Dev) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
impl Eq for Dev {}

fn same_device(a: &DeviceProps, b: &DeviceProps) -> bool {
    a.role == b.role && a.pci_addr == b.pci_addr && a.ibdev_name == b.ibdev_name
}

impl Dev {
    /// `doca_dev_open`: opens `info`; if that device is open already, the same device.
    pub fn open(info: &DevInfo) -> Result<Dev> {
        let mut open = lock(&OPEN_DEVS);
        open.retain(|w| w.strong_count() > 0);
        for w in open.iter() {
            if let Some(inner) = w.upgrade()
                && same_device(&inner.info.props, &info.props)
            {
                return Ok(Dev { inner });
            }
        }
        let inner = Arc::new(DevShared { info: info.clone() });
        open.push(Arc::downgrade(&inner));
        Ok(Dev { inner })
    }

    /// Opens the first device of the topology in force that has `cap`.
    pub fn open_with(cap: Capability) -> Result<Dev> {
        let list = devinfo_list()?;
        match list.iter().find(|d| d.has_capability(cap)) {
            Some(d) => d.open(),
            None => Err(Error::with_context(
                ErrorCode::NotFound,
                format!("no device in the topology has capability '{}'", cap.name()),
            )),
        }
    }

    /// Opens the device with this PCI address ("XXXX:XX:XX.X" or "XX:XX.X").
    pub fn open_by_pci(addr: &str) -> Result<Dev> {
        let want = PciAddr::parse(addr)?;
        let list = devinfo_list()?;
        match list.iter().find(|d| d.pci_addr() == want) {
            Some(d) => d.open(),
            None => Err(Error::with_context(
                ErrorCode::NotFound,
                format!("no device with PCI address {want} in the topology"),
            )),
        }
    }

    /// `doca_dev_as_devinfo`.
    pub fn as_devinfo(&self) -> &DevInfo {
        &self.inner.info
    }

    /// How many handles share this open device.
    pub fn open_count(&self) -> usize {
        Arc::strong_count(&self.inner)
    }

    /// An address identifying this open device (stable while it is open).
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.inner) as usize
    }

    /// Opens this DPU device's representor of the host function at `pci`
    /// ("XXXX:XX:XX.X", or "XX:XX.X" in domain 0): `NotFound` when it has none,
    /// `NotSupported` on a host device.
    pub fn open_rep(&self, pci: &str) -> Result<DevRep> {
        let want = PciAddr::parse(pci)?;
        self.rep_list(RepFilter::All)?
            .into_iter()
            .find(|r| r.pci_addr() == want)
            .ok_or_else(|| {
                Error::with_context(
                    ErrorCode::NotFound,
                    format!(
                        "device {} has no representor of {pci}",
                        self.as_devinfo().pci_addr()
                    ),
                )
            })?
            .open()
    }

    /// `doca_devinfo_rep_list_create`: this DPU device's representors that pass `filter`.
    /// Host-role devices answer `NotSupported`.
    pub fn rep_list(&self, filter: RepFilter) -> Result<Vec<DevInfoRep>> {
        let info = self.as_devinfo();
        if info.role() != Role::Dpu {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "representors exist only on the DPU side (this device is a host device)",
            ));
        }
        let supported = match filter {
            RepFilter::All => info.is_rep_list_all_supported(),
            RepFilter::Net => info.is_rep_list_net_supported(),
            RepFilter::Emulated => info.is_rep_list_emulated_supported(),
        };
        if !supported {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "device {} cannot list representors with filter {filter:?}",
                    info.pci_addr()
                ),
            ));
        }
        Ok(info
            .props
            .reps
            .iter()
            .filter(|r| match filter {
                RepFilter::All => true,
                RepFilter::Net => !r.emulated,
                RepFilter::Emulated => r.emulated,
            })
            .map(|r| DevInfoRep {
                props: Arc::new(r.clone()),
                parent: self.clone(),
            })
            .collect())
    }
}

/// `enum doca_dev_rep_filter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum RepFilter {
    /// Every representor.
    All = 0,
    /// Network function representors.
    Net = 1 << 1,
    /// Emulated function representors.
    Emulated = 1 << 2,
}

impl RepFilter {
    /// Converts a C filter value.
    pub fn from_raw(raw: i32) -> Result<RepFilter> {
        match raw {
            0 => Ok(RepFilter::All),
            2 => Ok(RepFilter::Net),
            4 => Ok(RepFilter::Emulated),
            _ => Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("{raw} is not a doca_dev_rep_filter (0 = ALL, 2 = NET, 4 = EMULATED)"),
            )),
        }
    }
}

/// A virtual HCA id from a PCI address: bus, then device and function, as unique on
/// one machine as the addresses are within a domain.
fn vhca_of(a: PciAddr) -> u16 {
    (u16::from(a.bus) << 8) | (u16::from(a.device) << 3) | u16::from(a.function)
}

/// A snapshot of a representor's properties (`struct doca_devinfo_rep`).
#[derive(Clone)]
pub struct DevInfoRep {
    props: Arc<RepProps>,
    parent: Dev,
}

impl fmt::Debug for DevInfoRep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DevInfoRep")
            .field("pci_addr", &self.props.pci_addr.to_string())
            .field("vuid", &self.props.vuid)
            .finish()
    }
}

impl DevInfoRep {
    /// All properties.
    pub fn props(&self) -> &RepProps {
        &self.props
    }

    /// The DPU device this representor belongs to.
    pub fn parent(&self) -> &Dev {
        &self.parent
    }

    /// Vendor unique identifier.
    pub fn vuid(&self) -> &str {
        &self.props.vuid
    }

    /// Writes the VUID, NUL-terminated (at least [`REP_VUID_SIZE`] bytes).
    pub fn vuid_into(&self, out: &mut [u8]) -> Result<()> {
        copy_cstr(
            out,
            &self.props.vuid,
            REP_VUID_SIZE,
            "VUID buffer must hold DOCA_DEVINFO_REP_VUID_SIZE (128) bytes",
        )
    }

    /// PCI address.
    pub fn pci_addr(&self) -> PciAddr {
        self.props.pci_addr
    }

    /// PCI address as "XXXX:XX:XX.X".
    pub fn pci_addr_str(&self) -> String {
        self.props.pci_addr.to_string()
    }

    /// Writes the PCI address string, NUL-terminated (at least [`PCI_ADDR_SIZE`] bytes).
    pub fn pci_addr_into(&self, out: &mut [u8]) -> Result<()> {
        copy_cstr(
            out,
            &self.pci_addr_str(),
            PCI_ADDR_SIZE,
            "PCI address buffer must hold DOCA_DEVINFO_REP_PCI_ADDR_SIZE (13) bytes",
        )
    }

    /// PCI function type.
    pub fn pci_func_type(&self) -> PciFuncType {
        self.props.func_type
    }

    /// The representor's network interface name.
    pub fn iface_name(&self) -> &str {
        &self.props.iface_name
    }

    /// Writes the interface name, NUL-terminated (at least [`IFACE_NAME_SIZE`] bytes).
    pub fn iface_name_into(&self, out: &mut [u8]) -> Result<()> {
        copy_cstr(
            out,
            &self.props.iface_name,
            IFACE_NAME_SIZE,
            "interface name buffer must hold DOCA_DEVINFO_IFACE_NAME_SIZE (256) bytes",
        )
    }

    /// Whether the represented function is hot-plugged.
    pub fn is_hotplug(&self) -> bool {
        self.props.hotplug
    }

    /// The represented function's virtual HCA id (see [`DevInfo::vhca_id`]).
    pub fn vhca_id(&self) -> u16 {
        vhca_of(self.props.pci_addr)
    }

    /// Whether `addr` ("XXXX:XX:XX.X" or "XX:XX.X") is this representor's address.
    pub fn is_pci_addr_equal(&self, addr: &str) -> Result<bool> {
        self.props.pci_addr.matches_str(addr)
    }

    /// Whether the representor is of an emulated function.
    pub fn is_emulated(&self) -> bool {
        self.props.emulated
    }

    /// Opens the representor; if it is open already, the same representor.
    pub fn open(&self) -> Result<DevRep> {
        DevRep::open(self)
    }
}

struct DevRepShared {
    info: DevInfoRep,
}

static OPEN_REPS: Mutex<Vec<Weak<DevRepShared>>> = Mutex::new(Vec::new());

/// An open representor (`struct doca_dev_rep`). Clones share it; it closes when the last
/// clone is dropped.
#[derive(Clone)]
pub struct DevRep {
    inner: Arc<DevRepShared>,
}

impl fmt::Debug for DevRep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DevRep").field(&self.inner.info).finish()
    }
}

impl PartialEq for DevRep {
    fn eq(&self, other: &DevRep) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
impl Eq for DevRep {}

impl DevRep {
    /// `doca_dev_rep_open`.
    pub fn open(info: &DevInfoRep) -> Result<DevRep> {
        let mut open = lock(&OPEN_REPS);
        open.retain(|w| w.strong_count() > 0);
        for w in open.iter() {
            if let Some(inner) = w.upgrade()
                && inner.info.parent == info.parent
                && inner.info.props.pci_addr == info.props.pci_addr
            {
                return Ok(DevRep { inner });
            }
        }
        let inner = Arc::new(DevRepShared { info: info.clone() });
        open.push(Arc::downgrade(&inner));
        Ok(DevRep { inner })
    }

    /// `doca_dev_rep_as_devinfo`.
    pub fn as_devinfo(&self) -> &DevInfoRep {
        &self.inner.info
    }

    /// How many handles share this open representor.
    pub fn open_count(&self) -> usize {
        Arc::strong_count(&self.inner)
    }
}
