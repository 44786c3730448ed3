//! The software topology: which devices this process sees.
//!
//! With no configuration the machine is one BlueField at the PCI addresses DOCA's
//! samples use by default (`default-machine.toml` beside this file), seen from the host
//! side, or from the DPU side by programs built for it. The environment variable
//! `DOCA_SW_TOPOLOGY` names a TOML file describing another machine: host devices, DPU
//! devices with their representors, and which side this process runs on (`role`,
//! overridable with `DOCA_SW_ROLE=host|dpu`). See `topology/bluefield-guide.toml`.

use super::caps::Capability;
use super::pci::PciAddr;
use crate::error::{Error, ErrorCode};
use crate::types::PciFuncType;
use serde::Deserialize;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Environment variable naming the topology file.
pub const TOPOLOGY_ENV: &str = "DOCA_SW_TOPOLOGY";
/// Environment variable overriding the topology file's `role` and the program's build.
pub const ROLE_ENV: &str = "DOCA_SW_ROLE";

/// The default machine (no topology file), in the topology file format.
pub const DEFAULT_MACHINE: &str = include_str!("default-machine.toml");

/// The side the program was built for: 0 unset, 1 host, 2 DPU.
static BUILD_ROLE: AtomicU8 = AtomicU8::new(0);

/// Records the side the program was built for (C programs built with the DPU flavour
/// of the headers and pkg-config, which define `DOCA_ARCH_DPU`, set [`Role::Dpu`] before
/// `main`). It picks the side of the topology when `DOCA_SW_ROLE` is not set, over a
/// topology file's `role`.
pub fn set_build_role(role: Role) {
    let v = match role {
        Role::Host => 1,
        Role::Dpu => 2,
    };
    BUILD_ROLE.store(v, Ordering::Relaxed);
}

/// The side recorded by [`set_build_role`], if any.
pub fn build_role() -> Option<Role> {
    match BUILD_ROLE.load(Ordering::Relaxed) {
        1 => Some(Role::Host),
        2 => Some(Role::Dpu),
        _ => None,
    }
}

/// Which side of a BlueField this process is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The host: local devices only.
    Host,
    /// The DPU (Arm side): local devices, each possibly with representors.
    Dpu,
}

impl Role {
    /// "host" or "dpu".
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Host => "host",
            Role::Dpu => "dpu",
        }
    }

    fn parse(s: &str) -> Result<Role, Error> {
        match s {
            "host" => Ok(Role::Host),
            "dpu" => Ok(Role::Dpu),
            _ => Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("{ROLE_ENV}='{s}' is not a role (expected host or dpu)"),
            )),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTopology {
    #[serde(default = "default_role")]
    role: Role,
    #[serde(default)]
    host: Side,
    #[serde(default)]
    dpu: Side,
}

fn default_role() -> Role {
    Role::Host
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Side {
    #[serde(default)]
    device: Vec<FileDevice>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDevice {
    pci_addr: String,
    #[serde(default = "default_func")]
    func_type: String,
    #[serde(default)]
    iface_name: String,
    #[serde(default)]
    ibdev_name: String,
    #[serde(default)]
    mac: Option<String>,
    #[serde(default)]
    ipv4: Option<String>,
    #[serde(default)]
    ipv6: Option<String>,
    #[serde(default)]
    lid: u16,
    #[serde(default)]
    rdma_iface: Option<String>,
    #[serde(default)]
    rdma_addr: Option<String>,
    #[serde(default)]
    capabilities: Option<Vec<String>>,
    #[serde(default)]
    job_types: Option<Vec<String>>,
    #[serde(default)]
    engine_threads: u32,
    #[serde(default)]
    representor: Vec<FileRep>,
}

fn default_func() -> String {
    "pf".into()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRep {
    pci_addr: String,
    #[serde(default = "default_func")]
    func_type: String,
    vuid: String,
    #[serde(default)]
    emulated: bool,
    /// The representor's network interface (default: as BlueField names them).
    #[serde(default)]
    iface_name: Option<String>,
    /// A hot-plugged function.
    #[serde(default)]
    hotplug: bool,
}

/// Everything known about one local device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceProps {
    /// PCI address.
    pub pci_addr: PciAddr,
    /// PCI function type.
    pub func_type: PciFuncType,
    /// Network interface name (e.g. "p0").
    pub iface_name: String,
    /// InfiniBand device name (e.g. "mlx5_0").
    pub ibdev_name: String,
    /// MAC address.
    pub mac: [u8; 6],
    /// IPv4 address (zeros when none).
    pub ipv4: [u8; 4],
    /// IPv6 address (zeros when none).
    pub ipv6: [u8; 16],
    /// InfiniBand LID.
    pub lid: u16,
    /// The network interface of this machine the device's RDMA goes through
    /// (`rdma_iface`): UCX uses only it, the GID table lists its addresses. `None`:
    /// whichever UCX picks (or the one holding [`rdma_addr`](Self::rdma_addr)).
    pub rdma_iface: Option<String>,
    /// The address of this machine the device's RDMA uses (`rdma_addr`): the
    /// connection manager listens on it, and UCX uses the interface holding it.
    pub rdma_addr: Option<std::net::IpAddr>,
    /// What the device supports.
    pub caps: Vec<Capability>,
    /// When set, only these job types (of the libraries in `caps`) are supported, by
    /// their task tables' names (`dma.memcpy`).
    pub job_types: Option<Vec<String>>,
    /// Engine threads that execute jobs asynchronously (0: jobs run in the caller).
    pub engine_threads: u32,
    /// Representors (DPU role only).
    pub reps: Vec<RepProps>,
    /// The role of the topology this device belongs to.
    pub role: Role,
}

/// Everything known about one representor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepProps {
    /// PCI address of the represented function.
    pub pci_addr: PciAddr,
    /// Its function type.
    pub func_type: PciFuncType,
    /// Vendor unique identifier.
    pub vuid: String,
    /// Emulated (e.g. virtio) rather than a network function.
    pub emulated: bool,
    /// The representor's network interface name (`pf0hpf`, `pf0vf0`, ... by default).
    pub iface_name: String,
    /// A hot-plugged function (rather than a statically plugged one).
    pub hotplug: bool,
}

/// A parsed, validated topology: the devices this process sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// The side this process is on.
    pub role: Role,
    /// Local devices.
    pub devices: Vec<Arc<DeviceProps>>,
}

fn parse_func(s: &str, what: &str) -> Result<PciFuncType, Error> {
    match s.to_ascii_lowercase().as_str() {
        "pf" => Ok(PciFuncType::Pf),
        "vf" => Ok(PciFuncType::Vf),
        "sf" => Ok(PciFuncType::Sf),
        _ => Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!("{what}: func_type '{s}' is not pf, vf or sf"),
        )),
    }
}

fn parse_mac(s: &str, what: &str) -> Result<[u8; 6], Error> {
    let bad = || {
        Error::with_context(
            ErrorCode::InvalidValue,
            format!("{what}: mac '{s}' is not six hex bytes separated by ':'"),
        )
    };
    let mut out = [0u8; 6];
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() != 6 {
        return Err(bad());
    }
    for (o, p) in out.iter_mut().zip(parts) {
        if p.len() != 2 {
            return Err(bad());
        }
        *o = u8::from_str_radix(p, 16).map_err(|_| bad())?;
    }
    Ok(out)
}

fn bounded_name(s: &str, limit: usize, field: &str, what: &str) -> Result<String, Error> {
    if s.len() >= limit || s.contains('\0') {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!("{what}: {field} '{s}' must be shorter than {limit} bytes, without NUL"),
        ));
    }
    Ok(s.to_owned())
}

/// The largest topology file read, in bytes.
pub const MAX_TOPOLOGY_FILE: u64 = 1 << 20;

/// Network interface names are shorter than this (the kernel's `IFNAMSIZ`).
pub const RDMA_IFACE_NAME_LIMIT: usize = 16;

/// The most engine threads a device may have.
pub const MAX_ENGINE_THREADS: u32 = 256;

fn read_topology_file(path: &std::path::Path) -> Result<String, Error> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let cannot = |e: std::io::Error| {
        let code = match e.kind() {
            std::io::ErrorKind::NotFound => ErrorCode::NotFound,
            std::io::ErrorKind::PermissionDenied => ErrorCode::NotPermitted,
            std::io::ErrorKind::InvalidData => ErrorCode::InvalidValue,
            _ => ErrorCode::IoFailed,
        };
        let why = if e.kind() == std::io::ErrorKind::InvalidData {
            "it is not UTF-8 text".to_string()
        } else {
            e.to_string()
        };
        Error::with_context(
            code,
            format!("cannot read topology file {}: {why}", path.display()),
        )
    };
    // Non-blocking: opening a FIFO must not wait for a writer.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "topology file {} is not a regular file (a FIFO, device or directory is not read)",
                path.display()
            ),
        ));
    }
    if meta.len() > MAX_TOPOLOGY_FILE {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "topology file {} holds {} bytes; the limit is {MAX_TOPOLOGY_FILE}",
                path.display(),
                meta.len()
            ),
        ));
    }
    let mut text = String::new();
    file.take(MAX_TOPOLOGY_FILE + 1)
        .read_to_string(&mut text)
        .map_err(cannot)?;
    if text.len() as u64 > MAX_TOPOLOGY_FILE {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "topology file {} grew past the limit of {MAX_TOPOLOGY_FILE} bytes while read",
                path.display()
            ),
        ));
    }
    Ok(text)
}

impl Topology {
    /// The default machine's host side: what a process sees with no topology file
    /// (see [`default_machine`](Topology::default_machine)).
    pub fn default_topology() -> Topology {
        Topology::default_machine(Role::Host)
    }

    /// One side of the default machine: one BlueField whose functions sit where DOCA's
    /// samples look for them. Host side: `0000:3b:00.0` and `0000:b1:00.0`; DPU side:
    /// `0000:03:00.0`, with the representors of both host functions. Every device has
    /// every capability and runs jobs in the caller.
    pub fn default_machine(role: Role) -> Topology {
        Topology::from_toml(DEFAULT_MACHINE, Some(role.as_str()))
            .expect("the embedded default machine is a valid topology")
    }

    /// One host-role device that supports everything, at `pci_addr` ("XX:XX.X" or
    /// "XXXX:XX:XX.X"), running jobs on `engine_threads` threads (0: in the caller) —
    /// the builder form of a one-device topology file.
    pub fn single_device(pci_addr: &str, engine_threads: u32) -> Result<Topology, Error> {
        let pci_addr = PciAddr::parse(pci_addr)?;
        if engine_threads > MAX_ENGINE_THREADS {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "{engine_threads} engine threads is more than the limit of {MAX_ENGINE_THREADS}"
                ),
            ));
        }
        Ok(Topology {
            role: Role::Host,
            devices: vec![Arc::new(DeviceProps {
                pci_addr,
                func_type: PciFuncType::Pf,
                iface_name: "swdoca0".into(),
                ibdev_name: "swdoca_0".into(),
                mac: [0x02, 0x00, 0x5e, 0x00, pci_addr.bus, pci_addr.device],
                ipv4: [127, 0, 0, 1],
                ipv6: Ipv6Addr::LOCALHOST.octets(),
                lid: 0,
                rdma_iface: None,
                rdma_addr: None,
                caps: Capability::ALL.to_vec(),
                job_types: None,
                engine_threads,
                reps: Vec::new(),
                role: Role::Host,
            })],
        })
    }

    /// Parses a topology file's text. `role_override` (from `DOCA_SW_ROLE`) wins over the
    /// file's `role`.
    pub fn from_toml(text: &str, role_override: Option<&str>) -> Result<Topology, Error> {
        let file: FileTopology = toml::from_str(text).map_err(|e| {
            Error::with_context(ErrorCode::InvalidValue, format!("topology file: {e}"))
        })?;
        let role = match role_override {
            Some(r) => Role::parse(r)?,
            None => file.role,
        };
        let side = match role {
            Role::Host => &file.host,
            Role::Dpu => &file.dpu,
        };
        let mut devices = Vec::with_capacity(side.device.len());
        for (i, d) in side.device.iter().enumerate() {
            let what = format!("[[{}.device]] #{} ({})", role.as_str(), i + 1, d.pci_addr);
            let pci_addr = PciAddr::parse(&d.pci_addr)
                .map_err(|e| e.context(format!("{what}: bad pci_addr '{}'", d.pci_addr)))?;
            if devices
                .iter()
                .any(|x: &Arc<DeviceProps>| x.pci_addr == pci_addr)
            {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    format!("{what}: PCI address {pci_addr} is listed twice"),
                ));
            }
            let caps = match &d.capabilities {
                None => Capability::ALL.to_vec(),
                Some(list) => {
                    let mut caps = Vec::new();
                    for name in list {
                        let c = Capability::from_name(name).ok_or_else(|| {
                            Error::with_context(
                                ErrorCode::InvalidValue,
                                format!(
                                    "{what}: unknown capability '{name}' (known: {})",
                                    Capability::ALL
                                        .iter()
                                        .map(|c| c.name())
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                ),
                            )
                        })?;
                        if !caps.contains(&c) {
                            caps.push(c);
                        }
                    }
                    caps
                }
            };
            let job_types = match &d.job_types {
                None => None,
                Some(list) => {
                    let mut out = Vec::with_capacity(list.len());
                    for name in list {
                        // `library.task`, as the libraries' task tables name them; a
                        // name no table declares restricts to nothing it names, and the
                        // library's support answers say what the device lists.
                        let Some((lib, task)) = name.split_once('.').filter(|(l, t)| {
                            let ok = |x: &str| {
                                !x.is_empty()
                                    && x.bytes().all(|b| {
                                        b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'
                                    })
                            };
                            ok(l) && ok(t)
                        }) else {
                            return Err(Error::with_context(
                                ErrorCode::InvalidValue,
                                format!(
                                    "{what}: job type '{name}' is not of the form library.task (dma.memcpy, sha.sha256, ...)"
                                ),
                            ));
                        };
                        if let Some(cap) = Capability::from_name(lib)
                            && !caps.contains(&cap)
                        {
                            return Err(Error::with_context(
                                ErrorCode::InvalidValue,
                                format!(
                                    "{what}: job type '{name}' needs the '{}' capability, which the device's capabilities leave out",
                                    cap.name()
                                ),
                            ));
                        }
                        out.push(format!("{lib}.{task}"));
                    }
                    Some(out)
                }
            };
            if d.engine_threads > MAX_ENGINE_THREADS {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    format!(
                        "{what}: engine_threads = {} is more than the limit of {MAX_ENGINE_THREADS}",
                        d.engine_threads
                    ),
                ));
            }
            if role == Role::Host && !d.representor.is_empty() {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    format!("{what}: representors belong to DPU devices, not host devices"),
                ));
            }
            let mut reps = Vec::with_capacity(d.representor.len());
            for (j, r) in d.representor.iter().enumerate() {
                let rwhat = format!("{what} representor #{}", j + 1);
                let func_type = parse_func(&r.func_type, &rwhat)?;
                // As a BlueField names its representors: the host PF's, then VFs' and
                // SFs' by their number among the representors of their kind.
                let nth = reps
                    .iter()
                    .filter(|p: &&RepProps| p.func_type == func_type)
                    .count();
                let default_iface = match func_type {
                    PciFuncType::Pf => "pf0hpf".to_owned(),
                    PciFuncType::Vf => format!("pf0vf{nth}"),
                    PciFuncType::Sf => format!("en3f0pf0sf{nth}"),
                };
                reps.push(RepProps {
                    pci_addr: PciAddr::parse(&r.pci_addr).map_err(|e| {
                        e.context(format!("{rwhat}: bad pci_addr '{}'", r.pci_addr))
                    })?,
                    func_type,
                    vuid: bounded_name(&r.vuid, super::VUID_SIZE, "vuid", &rwhat)?,
                    emulated: r.emulated,
                    iface_name: bounded_name(
                        r.iface_name.as_deref().unwrap_or(&default_iface),
                        super::IFACE_NAME_SIZE,
                        "iface_name",
                        &rwhat,
                    )?,
                    hotplug: r.hotplug,
                });
            }
            let ipv4 = match &d.ipv4 {
                None => [0; 4],
                Some(s) => s
                    .parse::<Ipv4Addr>()
                    .map_err(|_| {
                        Error::with_context(
                            ErrorCode::InvalidValue,
                            format!("{what}: ipv4 '{s}' is not an IPv4 address"),
                        )
                    })?
                    .octets(),
            };
            let ipv6 = match &d.ipv6 {
                None => [0; 16],
                Some(s) => s
                    .parse::<Ipv6Addr>()
                    .map_err(|_| {
                        Error::with_context(
                            ErrorCode::InvalidValue,
                            format!("{what}: ipv6 '{s}' is not an IPv6 address"),
                        )
                    })?
                    .octets(),
            };
            let rdma_iface = match &d.rdma_iface {
                None => None,
                Some(n) => {
                    if n.is_empty()
                        || n.len() >= RDMA_IFACE_NAME_LIMIT
                        || n.contains(['/', '\0'])
                        || n.chars().any(char::is_whitespace)
                    {
                        return Err(Error::with_context(
                            ErrorCode::InvalidValue,
                            format!(
                                "{what}: rdma_iface '{n}' is not a network interface name (1 to {} bytes, no '/', NUL or spaces)",
                                RDMA_IFACE_NAME_LIMIT - 1
                            ),
                        ));
                    }
                    Some(n.clone())
                }
            };
            let rdma_addr = match &d.rdma_addr {
                None => None,
                Some(s) => Some(s.parse::<std::net::IpAddr>().map_err(|_| {
                    Error::with_context(
                        ErrorCode::InvalidValue,
                        format!("{what}: rdma_addr '{s}' is not an IPv4 or IPv6 address"),
                    )
                })?),
            };
            devices.push(Arc::new(DeviceProps {
                pci_addr,
                func_type: parse_func(&d.func_type, &what)?,
                iface_name: bounded_name(
                    &d.iface_name,
                    super::IFACE_NAME_SIZE,
                    "iface_name",
                    &what,
                )?,
                ibdev_name: bounded_name(
                    &d.ibdev_name,
                    super::IBDEV_NAME_SIZE,
                    "ibdev_name",
                    &what,
                )?,
                mac: match &d.mac {
                    None => [0; 6],
                    Some(s) => parse_mac(s, &what)?,
                },
                ipv4,
                ipv6,
                lid: d.lid,
                rdma_iface,
                rdma_addr,
                caps,
                job_types,
                engine_threads: d.engine_threads,
                reps,
                role,
            }));
        }
        Ok(Topology { role, devices })
    }

    /// Reads a topology file; `role_override` wins over the file's `role`. Only a regular
    /// file of at most [`MAX_TOPOLOGY_FILE`] bytes is read (a FIFO or a device such as
    /// `/dev/zero` is refused before a byte is read).
    pub fn from_file(
        path: &std::path::Path,
        role_override: Option<&str>,
    ) -> Result<Topology, Error> {
        let text = read_topology_file(path)?;
        Topology::from_toml(&text, role_override).map_err(|e| {
            let msg = format!("{}: {}", path.display(), e.context_str().unwrap_or(""));
            e.context(msg)
        })
    }

    /// Opens the device at `pci` ("XXXX:XX:XX.X", or "XX:XX.X" in domain 0) on this
    /// topology's side: `NotFound` when that side has no such device.
    pub fn open_device(&self, pci: &str) -> Result<super::Dev, Error> {
        let want = PciAddr::parse(pci)?;
        super::devinfo_list_from(self)
            .into_iter()
            .find(|d| d.pci_addr() == want)
            .ok_or_else(|| {
                Error::with_context(
                    ErrorCode::NotFound,
                    format!("no device at {pci} on this side of the topology"),
                )
            })?
            .open()
    }

    /// Reads the topology in force now: the file named by `DOCA_SW_TOPOLOGY`, or the
    /// default machine. The side comes from `DOCA_SW_ROLE` when set, else from the
    /// program's build ([`set_build_role`]: programs built for the DPU run as the DPU
    /// side), else from the file (the default machine: host).
    pub fn current() -> Result<Topology, Error> {
        let env = std::env::var(ROLE_ENV).ok();
        let role = env.as_deref().or(build_role().map(Role::as_str));
        Topology::current_with_role(role)
    }

    /// Like [`current`](Topology::current), with the role given (`None`: the file's).
    pub fn current_with_role(role: Option<&str>) -> Result<Topology, Error> {
        match std::env::var_os(TOPOLOGY_ENV) {
            Some(path) => Topology::from_file(std::path::Path::new(&path), role),
            None => {
                let role = role.map(Role::parse).transpose()?.unwrap_or(Role::Host);
                Ok(Topology::default_machine(role))
            }
        }
    }
}
