//! The topology in force comes from `DOCA_SW_TOPOLOGY` / `DOCA_SW_ROLE`, read anew by
//! each list (one test in this binary: it changes the environment).

use doca_core::device::{ROLE_ENV, Role, TOPOLOGY_ENV, build_role, set_build_role};
use doca_core::{Dev, ErrorCode, devinfo_list};
use std::io::Write;

#[test]
fn lists_are_snapshots_of_the_file_in_force() {
    let dir = std::env::temp_dir().join(format!("doca-topo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.toml");
    let write = |text: &str| {
        std::fs::File::create(&path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap()
    };

    // Default: the default machine's host side, or its DPU side for a program built for
    // the DPU; DOCA_SW_ROLE overrides the build.
    // SAFETY: this test binary has a single test, so no other thread reads the environment.
    unsafe {
        std::env::remove_var(TOPOLOGY_ENV);
        std::env::remove_var(ROLE_ENV);
    }
    let addrs = || -> Vec<String> {
        devinfo_list()
            .unwrap()
            .iter()
            .map(|d| d.pci_addr_str())
            .collect()
    };
    assert_eq!(build_role(), None);
    assert_eq!(addrs(), ["0000:3b:00.0", "0000:b1:00.0"]);
    assert_eq!(
        Dev::open_by_pci("b1:00.0").unwrap().as_devinfo().role(),
        Role::Host
    );
    set_build_role(Role::Dpu);
    assert_eq!(addrs(), ["0000:03:00.0"]);
    assert_eq!(
        Dev::open_by_pci("03:00.0").unwrap().as_devinfo().role(),
        Role::Dpu
    );
    assert_eq!(
        Dev::open_by_pci("0000:03:00.0")
            .unwrap()
            .as_devinfo()
            .role(),
        Role::Dpu
    );
    assert_eq!(
        Dev::open_by_pci("3b:00.0").unwrap_err().code(),
        ErrorCode::NotFound
    );
    // SAFETY: as above.
    unsafe { std::env::set_var(ROLE_ENV, "host") };
    assert_eq!(addrs(), ["0000:3b:00.0", "0000:b1:00.0"]);
    // SAFETY: as above.
    unsafe { std::env::set_var(ROLE_ENV, "arm") };
    assert_eq!(devinfo_list().unwrap_err().code(), ErrorCode::InvalidValue);
    // SAFETY: as above.
    unsafe { std::env::remove_var(ROLE_ENV) };
    set_build_role(Role::Host);
    assert_eq!(addrs(), ["0000:3b:00.0", "0000:b1:00.0"]);

    write(
        "[[host.device]]\npci_addr = \"0000:01:00.0\"\n[[host.device]]\npci_addr = \"0000:02:00.0\"\n",
    );
    // SAFETY: as above.
    unsafe { std::env::set_var(TOPOLOGY_ENV, &path) };
    let first = devinfo_list().unwrap();
    assert_eq!(first.len(), 2);

    // A later change is not reflected in the earlier snapshot.
    write("[[host.device]]\npci_addr = \"0000:03:00.0\"\n");
    let second = devinfo_list().unwrap();
    assert_eq!(second.len(), 1);
    assert_eq!(first[1].pci_addr_str(), "0000:02:00.0");
    assert_eq!(second[0].pci_addr_str(), "0000:03:00.0");

    // Role override picks the DPU side.
    write(
        "[[host.device]]\npci_addr = \"0000:01:00.0\"\n[[dpu.device]]\npci_addr = \"0000:03:00.0\"\n[[dpu.device]]\npci_addr = \"0000:03:00.1\"\n",
    );
    // SAFETY: as above.
    unsafe { std::env::set_var(ROLE_ENV, "dpu") };
    assert_eq!(devinfo_list().unwrap().len(), 2);

    // Errors name the file.
    write("[[host.device]]\npci_addr = 7\n");
    // SAFETY: as above.
    unsafe { std::env::set_var(ROLE_ENV, "host") };
    let e = devinfo_list().unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidValue);
    assert!(e.to_string().contains("t.toml"), "{e}");

    // SAFETY: as above.
    unsafe { std::env::set_var(TOPOLOGY_ENV, dir.join("missing.toml")) };
    assert_eq!(devinfo_list().unwrap_err().code(), ErrorCode::NotFound);

    // SAFETY: as above.
    unsafe {
        std::env::remove_var(TOPOLOGY_ENV);
        std::env::remove_var(ROLE_ENV);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
