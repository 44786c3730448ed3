//! Device model: default topology, topology files, getters, open/close, representors.

use doca_core::device::{self, Capability, RepFilter, Role, Topology};
use doca_core::{ErrorCode, PciFuncType};

const GUIDE: &str = include_str!("../../../topology/bluefield-guide.toml");

#[test]
fn default_machine_host_side_has_the_samples_host_devices() {
    let t = Topology::default_topology();
    assert_eq!(t, Topology::default_machine(Role::Host));
    assert_eq!(t.role, Role::Host);
    let list = device::devinfo_list_from(&t);
    let addrs: Vec<_> = list.iter().map(|d| d.pci_addr_str()).collect();
    assert_eq!(addrs, ["0000:3b:00.0", "0000:b1:00.0"]);
    for d in &list {
        for cap in Capability::ALL {
            assert!(d.has_capability(*cap), "{cap:?}");
        }
        for spec in doca_core::sync_event::tasks::ALL
            .iter()
            .chain(doca_core::memory::advise::tasks::ALL)
        {
            assert!(
                d.task_supported(spec, spec.job_type).is_ok(),
                "{}",
                spec.name
            );
        }
        assert_eq!(d.role(), Role::Host);
        assert_eq!(d.engine_threads(), 0);
    }
    // Short and full forms both name a device.
    assert!(list[0].is_pci_addr_equal("3b:00.0").unwrap());
    assert!(list[0].is_pci_addr_equal("0000:3b:00.0").unwrap());
    assert!(list[1].is_pci_addr_equal("b1:00.0").unwrap());
    assert!(!list[1].is_pci_addr_equal("03:00.0").unwrap());
    // Host role: representor listing is not supported even with the capability.
    let d = &list[0];
    assert!(!d.is_rep_list_all_supported());
    let dev = d.open().unwrap();
    assert_eq!(
        dev.rep_list(RepFilter::All).unwrap_err().code(),
        ErrorCode::NotSupported
    );
}

#[test]
fn default_machine_dpu_side_represents_both_host_functions() {
    let t = Topology::default_machine(Role::Dpu);
    assert_eq!(t.role, Role::Dpu);
    let list = device::devinfo_list_from(&t);
    assert_eq!(list.len(), 1);
    let d = &list[0];
    assert_eq!(d.pci_addr_str(), "0000:03:00.0");
    assert!(d.is_pci_addr_equal("03:00.0").unwrap());
    assert_eq!(d.role(), Role::Dpu);
    for cap in Capability::ALL {
        assert!(d.has_capability(*cap), "{cap:?}");
    }
    assert!(d.is_rep_list_all_supported() && d.is_mmap_from_export_dpu_supported());
    let dev = d.open().unwrap();
    let reps = dev.rep_list(RepFilter::All).unwrap();
    let addrs: Vec<_> = reps.iter().map(|r| r.pci_addr_str()).collect();
    assert_eq!(addrs, ["0000:3b:00.0", "0000:b1:00.0"]);
    assert!(reps[0].is_pci_addr_equal("3b:00.0").unwrap());
    assert!(reps.iter().all(|r| !r.vuid().is_empty()));
}

#[test]
fn guide_topology_host_side() {
    let t = Topology::from_toml(GUIDE, None).unwrap();
    assert_eq!(t.role, Role::Host);
    let list = device::devinfo_list_from(&t);
    let names: Vec<_> = list.iter().map(|d| d.iface_name().to_owned()).collect();
    assert_eq!(names, ["pf0", "pf0vf0", "pf0vf1", "pf1", "pf1vf0"]);
    let pf0vf1 = &list[2];
    assert_eq!(pf0vf1.pci_addr_str(), "0000:0b:00.3");
    assert!(pf0vf1.is_pci_addr_equal("0b:00.3").unwrap());
    assert!(pf0vf1.is_pci_addr_equal("0000:0b:00.3").unwrap());
    assert!(!pf0vf1.is_pci_addr_equal("0b:00.2").unwrap());
    assert_eq!(
        pf0vf1.is_pci_addr_equal("0b-00.3").unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    assert_eq!(pf0vf1.props().func_type, PciFuncType::Vf);
    assert!(pf0vf1.is_mmap_export_dpu_supported());
    assert!(!pf0vf1.is_mmap_from_export_dpu_supported());
    assert!(!pf0vf1.is_hotplug_manager_supported());

    let pf0 = &list[0];
    assert_eq!(pf0.ipv4_addr(), [192, 168, 100, 1]);
    assert_eq!(pf0.mac_addr(), [0xb8, 0xce, 0xf6, 0x00, 0x0b, 0x00]);
    assert_eq!(pf0.ipv6_addr()[0], 0xfd);
    assert_eq!(pf0.ibdev_name(), "mlx5_0");

    // Size checks on the C-style getters.
    let mut small = [0u8; 3];
    assert_eq!(
        pf0.ipv4_addr_into(&mut small).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    let mut four = [0u8; 4];
    pf0.ipv4_addr_into(&mut four).unwrap();
    assert_eq!(four, [192, 168, 100, 1]);
    let mut mac = [0u8; 5];
    assert_eq!(
        pf0.mac_addr_into(&mut mac).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    let mut v6 = [0u8; 15];
    assert_eq!(
        pf0.ipv6_addr_into(&mut v6).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    let mut name = [0u8; 64];
    assert_eq!(
        pf0.iface_name_into(&mut name).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    let mut name = [0xffu8; 256];
    pf0.iface_name_into(&mut name).unwrap();
    assert_eq!(&name[..4], b"pf0\0");
    let mut ib = [0u8; 64];
    pf0.ibdev_name_into(&mut ib).unwrap();
    assert_eq!(&ib[..7], b"mlx5_0\0");
    let mut pci = [0u8; 12];
    assert_eq!(
        pf0.pci_addr_into(&mut pci).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    let mut pci = [0u8; 13];
    pf0.pci_addr_into(&mut pci).unwrap();
    assert_eq!(&pci, b"0000:0b:00.0\0");
    assert_eq!(pf0.lid(), 0);
}

#[test]
fn guide_topology_dpu_side_representors() {
    let t = Topology::from_toml(GUIDE, Some("dpu")).unwrap();
    assert_eq!(t.role, Role::Dpu);
    let list = device::devinfo_list_from(&t);
    let names: Vec<_> = list.iter().map(|d| d.iface_name().to_owned()).collect();
    assert_eq!(names, ["p0", "p1", "p0s0", "p1s0"]);
    let p0 = list[0].open().unwrap();
    assert!(p0.as_devinfo().is_rep_list_all_supported());
    let all = p0.rep_list(RepFilter::All).unwrap();
    assert_eq!(all.len(), 5);
    let net = p0.rep_list(RepFilter::Net).unwrap();
    assert_eq!(net.len(), 4);
    let emu = p0.rep_list(RepFilter::Emulated).unwrap();
    assert_eq!(emu.len(), 1);
    assert!(emu[0].is_emulated());

    // The guide's matching table: host pf0vf0 0b:00.2 <-> hpf0vf0 on p0.
    let hpf0vf0 = all
        .iter()
        .find(|r| r.is_pci_addr_equal("0b:00.2").unwrap())
        .unwrap();
    assert_eq!(hpf0vf0.pci_func_type(), PciFuncType::Vf);
    assert_eq!(hpf0vf0.vuid(), "MT2251XZ0001pf0vf0");
    assert_eq!(hpf0vf0.pci_addr_str(), "0000:0b:00.2");
    let mut vuid = [0u8; 127];
    assert_eq!(
        hpf0vf0.vuid_into(&mut vuid).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    let mut vuid = [0u8; 128];
    hpf0vf0.vuid_into(&mut vuid).unwrap();
    assert!(vuid.starts_with(b"MT2251XZ0001pf0vf0\0"));

    let p1 = list[1].open().unwrap();
    let p1reps: Vec<_> = p1
        .rep_list(RepFilter::All)
        .unwrap()
        .iter()
        .map(|r| r.pci_addr_str())
        .collect();
    assert_eq!(p1reps, ["0000:0b:00.1", "0000:0b:00.4", "0000:03:00.1"]);

    // Local SF devices have no representor capability.
    let sf = list[2].open().unwrap();
    assert_eq!(
        sf.rep_list(RepFilter::All).unwrap_err().code(),
        ErrorCode::NotSupported
    );

    // Representor open/close is shared and refcounted.
    let r1 = hpf0vf0.open().unwrap();
    let r2 = all[1].open().unwrap();
    assert_eq!(r1, r2);
    assert_eq!(r1.open_count(), 2);
    drop(r2);
    assert_eq!(r1.open_count(), 1);
    assert_eq!(r1.as_devinfo().vuid(), "MT2251XZ0001pf0vf0");
}

#[test]
fn dev_open_is_shared_and_refcounted() {
    let t = Topology::from_toml(GUIDE, None).unwrap();
    // Two snapshots of the same topology: opening the same device twice is one device.
    let a = device::devinfo_list_from(&t);
    let b = device::devinfo_list_from(&t);
    let d1 = a[1].open().unwrap();
    let d2 = b[1].open().unwrap();
    assert_eq!(d1, d2);
    assert_eq!(d1.id(), d2.id());
    assert_eq!(d1.open_count(), 2);
    assert_ne!(d1, a[0].open().unwrap());
    drop(d2);
    assert_eq!(d1.open_count(), 1);
    assert_eq!(d1.as_devinfo().iface_name(), "pf0vf0");
}

#[test]
fn job_types_follow_capabilities_and_lists() {
    use doca_core::sync_event::{self, tasks};
    let text = r#"
        [[host.device]]
        pci_addr = "0000:5e:00.0"
        capabilities = ["sync_event", "dma"]
        job_types = ["sync_event.wait_gt", "sync_event.update_set", "dma.teleport"]
    "#;
    let t = Topology::from_toml(text, None).unwrap();
    let d = &device::devinfo_list_from(&t)[0];
    let all: &[&[&doca_core::exec::TaskSpec]] = &[tasks::ALL];
    let ok = |t: u32| doca_core::exec::job_supported_in(tasks::ALL, d, t);
    assert!(ok(sync_event::JOB_WAIT_GT).is_ok());
    assert!(ok(sync_event::JOB_UPDATE_SET).is_ok());
    // Listed by its table name or not at all: the reason names what the topology lists.
    let e = ok(sync_event::JOB_UPDATE_ADD).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotSupported);
    assert!(e.to_string().contains("sync_event.update_add"), "{e}");
    assert!(e.to_string().contains("dma.teleport"), "{e}");
    assert_eq!(ok(12345).unwrap_err().code(), ErrorCode::NotSupported);
    let names: Vec<String> = d
        .supported_job_types(all)
        .into_iter()
        .map(|n| n.0)
        .collect();
    assert_eq!(names, ["sync_event.update_set", "sync_event.wait_gt"]);
    // A name no table declares is a mistake the tables can point out.
    assert_eq!(d.unknown_job_types(all), ["dma.teleport"]);
    // A device without the library's capability runs none of its types.
    let text = r#"
        [[host.device]]
        pci_addr = "0000:5e:00.0"
        capabilities = ["dma"]
    "#;
    let t = Topology::from_toml(text, None).unwrap();
    let d = &device::devinfo_list_from(&t)[0];
    let e = doca_core::exec::job_supported_in(tasks::ALL, d, sync_event::JOB_GET).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotSupported);
    assert!(e.to_string().contains("'sync_event' capability"), "{e}");
}

#[test]
fn bad_topology_files_say_what_is_wrong() {
    let cases = [
        ("role = \"moon\"", "role"),
        ("[[host.device]]\npci_addr = \"zz\"", "pci_addr"),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\ncapabilities = [\"teleport\"]",
            "teleport",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\nmac = \"01:02\"",
            "mac",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\nipv4 = \"1.2.3\"",
            "ipv4",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\nfunc_type = \"xf\"",
            "func_type",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\n[[host.device]]\npci_addr = \"01:00.0\"",
            "twice",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\n[[host.device.representor]]\npci_addr = \"01:00.1\"\nvuid = \"x\"",
            "representors",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\ncolour = \"red\"",
            "colour",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\njob_types = [\"teleport\"]",
            "library.task",
        ),
        // A job of a library the device's capabilities leave out is a mistake, not a
        // device with no jobs.
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\ncapabilities = [\"sha\"]\njob_types = [\"dma.memcpy\"]",
            "needs the 'dma' capability",
        ),
        // Numbers have stated limits: no absurd thread counts reach the engine.
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\nengine_threads = 100000000",
            "limit of 256",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\nengine_threads = 4294967295",
            "limit of 256",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\nengine_threads = 4294967296",
            "engine_threads",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\nlid = 70000",
            "lid",
        ),
        // The network a device's RDMA uses: an interface name or an address.
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\nrdma_iface = \"a/b\"",
            "rdma_iface 'a/b' is not a network interface name",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\nrdma_iface = \"averyveryverylongname\"",
            "rdma_iface",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\nrdma_iface = \"\"",
            "rdma_iface",
        ),
        (
            "[[host.device]]\npci_addr = \"0000:01:00.0\"\nrdma_addr = \"10.0.0\"",
            "rdma_addr '10.0.0' is not an IPv4 or IPv6 address",
        ),
    ];
    for (text, needle) in cases {
        let e = Topology::from_toml(text, None).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidValue, "{text}");
        assert!(e.to_string().contains(needle), "{text}: {e}");
    }
    assert_eq!(
        Topology::from_toml("", Some("side")).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
}

/// Only regular files of bounded size are read as topologies: a device, a FIFO or a
/// directory is refused at once (they were read forever).
#[test]
fn topology_paths_that_are_not_regular_files_are_refused() {
    use std::path::Path;
    for path in ["/dev/zero", "/dev/null", "/"] {
        let e = Topology::from_file(Path::new(path), None).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidValue, "{path}");
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
    let dir = std::env::temp_dir().join(format!("doca-topo-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
    )
    .unwrap();
    let e = Topology::from_file(&fifo, None).unwrap_err();
    assert!(e.to_string().contains("not a regular file"), "{e}");
    // Text that is not UTF-8 is bad input, not a missing file.
    let latin = dir.join("latin1.toml");
    std::fs::write(&latin, b"# caf\xe9\n").unwrap();
    let e = Topology::from_file(&latin, None).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidValue, "{e}");
    assert!(e.to_string().contains("not UTF-8"), "{e}");
    let big = dir.join("big.toml");
    std::fs::write(&big, vec![b'#'; (device::MAX_TOPOLOGY_FILE + 1) as usize]).unwrap();
    let e = Topology::from_file(&big, None).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidValue);
    assert!(e.to_string().contains("the limit is"), "{e}");
    assert_eq!(
        Topology::from_file(&dir.join("missing.toml"), None)
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        Topology::single_device("3b:00.0", 100_000_000)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidValue
    );
}

#[test]
fn rep_filter_values() {
    assert_eq!(RepFilter::from_raw(0).unwrap(), RepFilter::All);
    assert_eq!(RepFilter::from_raw(2).unwrap(), RepFilter::Net);
    assert_eq!(RepFilter::from_raw(4).unwrap(), RepFilter::Emulated);
    assert_eq!(
        RepFilter::from_raw(1).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
}

#[test]
fn single_device_builder() {
    use doca_core::Topology;
    let t = Topology::single_device("3b:00.1", 2).unwrap();
    let list = doca_core::device::devinfo_list_from(&t);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].pci_addr_str(), "0000:3b:00.1");
    assert_eq!(list[0].engine_threads(), 2);
    assert!(list[0].has_capability(doca_core::Capability::Ec));
    let e = Topology::single_device("nonsense", 0).unwrap_err();
    assert_eq!(e.code(), doca_core::ErrorCode::InvalidValue);
}

/// Export capabilities are reported only where the operation works (the host exports,
/// the DPU side imports), and a topology file turns each off.
#[test]
fn export_capabilities_are_honest_and_can_be_turned_off() {
    use doca_core::device::DEFAULT_MACHINE;
    use doca_core::{AccessFlags, Mmap, SyncEvent};
    let host =
        device::devinfo_list_from(&Topology::from_toml(DEFAULT_MACHINE, Some("host")).unwrap())
            .remove(0);
    let dpu =
        device::devinfo_list_from(&Topology::from_toml(DEFAULT_MACHINE, Some("dpu")).unwrap())
            .remove(0);
    assert!(host.is_mmap_export_dpu_supported() && !host.is_mmap_from_export_dpu_supported());
    assert!(dpu.is_mmap_from_export_dpu_supported() && !dpu.is_mmap_export_dpu_supported());
    assert!(SyncEvent::export_to_dpu_supported(&host));
    assert!(!SyncEvent::create_from_export_supported(&host));
    assert!(SyncEvent::create_from_export_supported(&dpu));
    assert!(!SyncEvent::export_to_dpu_supported(&dpu));
    let off = Topology::from_toml(
        "[[host.device]]\npci_addr = \"0000:3c:00.0\"\ncapabilities = [\"dma\", \"sync_event\"]\n",
        None,
    )
    .unwrap();
    let info = device::devinfo_list_from(&off).remove(0);
    assert!(!info.is_mmap_export_dpu_supported());
    assert!(!SyncEvent::export_to_dpu_supported(&info));
    let dev = info.open().unwrap();
    let mut m = Mmap::new();
    m.set_memory(vec![0u8; 64]).unwrap();
    m.set_permissions(AccessFlags::DPU_READ_WRITE).unwrap();
    m.dev_add(&dev).unwrap();
    m.start().unwrap();
    assert_eq!(
        m.export_dpu(&dev).unwrap_err().code(),
        ErrorCode::NotSupported
    );
    assert_eq!(
        SyncEvent::new().export_to_dpu(&dev).unwrap_err().code(),
        ErrorCode::NotSupported
    );
}

#[test]
fn devices_and_representors_opened_by_address() {
    let dpu_side = Topology::from_toml(doca_core::device::DEFAULT_MACHINE, Some("dpu")).unwrap();
    let dpu = dpu_side.open_device("03:00.0").unwrap();
    assert_eq!(dpu.as_devinfo().pci_addr_str(), "0000:03:00.0");
    let rep = dpu.open_rep("0000:3b:00.0").unwrap();
    assert_eq!(rep.as_devinfo().pci_addr_str(), "0000:3b:00.0");
    assert_eq!(
        dpu.open_rep("0000:77:00.0").unwrap_err().code(),
        ErrorCode::NotFound
    );
    assert_eq!(
        dpu.open_rep("nonsense").unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    assert_eq!(
        dpu_side.open_device("0000:77:00.0").unwrap_err().code(),
        ErrorCode::NotFound
    );
    let host = Topology::from_toml(doca_core::device::DEFAULT_MACHINE, Some("host"))
        .unwrap()
        .open_device("0000:3b:00.0")
        .unwrap();
    assert_eq!(
        host.open_rep("0000:3b:00.0").unwrap_err().code(),
        ErrorCode::NotSupported
    );
}

/// A representor's network interface and hot-plug state: named in the topology, or as
/// a BlueField names them (`pf0hpf` for the host PF, `pf0vfN`, `en3f0pf0sfN`); VHCA ids
/// differ between functions.
#[test]
fn representor_interfaces_and_hotplug() {
    let t = Topology::from_toml(
        "role = \"dpu\"\n\
         [[dpu.device]]\npci_addr = \"0000:03:00.0\"\n\
         [[dpu.device.representor]]\npci_addr = \"3b:00.0\"\nvuid = \"a\"\n\
         [[dpu.device.representor]]\npci_addr = \"3b:00.2\"\nfunc_type = \"vf\"\nvuid = \"b\"\nhotplug = true\n\
         [[dpu.device.representor]]\npci_addr = \"3b:00.3\"\nfunc_type = \"vf\"\nvuid = \"c\"\niface_name = \"rep7\"\n",
        Some("dpu"),
    )
    .unwrap();
    let list = device::devinfo_list_from(&t);
    let dev = list[0].open().unwrap();
    let reps = dev.rep_list(RepFilter::All).unwrap();
    let names: Vec<_> = reps.iter().map(|r| r.iface_name().to_owned()).collect();
    assert_eq!(names, ["pf0hpf", "pf0vf0", "rep7"]);
    let hot: Vec<_> = reps.iter().map(|r| r.is_hotplug()).collect();
    assert_eq!(hot, [false, true, false]);
    let mut ids: Vec<_> = reps.iter().map(|r| r.vhca_id()).collect();
    ids.push(list[0].vhca_id());
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 4, "one VHCA id per function");
    assert!(list[0].active_rate() >= 1_000_000);
    let long = format!(
        "[[host.device]]\npci_addr = \"0000:01:00.0\"\n[[host.device.representor]]\npci_addr = \"01:00.1\"\nvuid = \"x\"\niface_name = \"{}\"",
        "n".repeat(300)
    );
    assert_eq!(
        Topology::from_toml(&long, Some("host")).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
}
