//! `doca-caps`: lists the DOCA devices this process sees (and, on the DPU side, their
//! representors) with their properties and capabilities.

use clap::Parser;
use doca_core::device::{self, Role, Topology};
use doca_core::{DevInfo, RepFilter};
use doca_tools::{cleanup, outln};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;

/// List DOCA devices, representors and capabilities.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Topology file to read (default: $DOCA_SW_TOPOLOGY, else the default machine: one
    /// BlueField with host functions 3b:00.0 and b1:00.0 and DPU port 03:00.0).
    #[arg(short, long, value_name = "FILE")]
    topology: Option<PathBuf>,
    /// Side of the topology to show: host or dpu (default: the file's role, or $DOCA_SW_ROLE).
    #[arg(short, long, value_parser = ["host", "dpu"])]
    role: Option<String>,
}

fn mac(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The names a device's topology lists that no table of a library the tools link
/// declares, among those libraries' names (another library's names are not judged).
fn unknown_job_types(d: &DevInfo) -> Vec<String> {
    let tables = doca_tools::task_tables();
    let mut unknown = d.unknown_job_types(&tables);
    unknown.retain(|n| {
        n.split_once('.').is_some_and(|(lib, _)| {
            tables
                .iter()
                .flat_map(|t| t.iter())
                .any(|s| s.topology == lib)
        })
    });
    unknown
}

fn device_json(d: &DevInfo) -> Value {
    let reps = reps_of(d);
    json!({
        "pci_addr": d.pci_addr_str(),
        "func_type": d.props().func_type.as_str(),
        "iface_name": d.iface_name(),
        "ibdev_name": d.ibdev_name(),
        "mac": mac(d.mac_addr()),
        "ipv4": std::net::Ipv4Addr::from(d.ipv4_addr()).to_string(),
        "ipv6": std::net::Ipv6Addr::from(d.ipv6_addr()).to_string(),
        "lid": d.lid(),
        "engine_threads": d.engine_threads(),
        "capabilities": d.capabilities().iter().map(|c| c.name()).collect::<Vec<_>>(),
        "job_types": d.supported_job_types(&doca_tools::task_tables()).iter().map(|(n, t)| json!({"name": n, "type": t})).collect::<Vec<_>>(),
        "unknown_job_types": unknown_job_types(d),
        "hotplug_manager": d.is_hotplug_manager_supported(),
        "mmap_export_dpu": d.is_mmap_export_dpu_supported(),
        "mmap_from_export_dpu": d.is_mmap_from_export_dpu_supported(),
        "rep_list_all": d.is_rep_list_all_supported(),
        "rep_list_net": d.is_rep_list_net_supported(),
        "rep_list_emulated": d.is_rep_list_emulated_supported(),
        "representors": reps.iter().map(|r| json!({
            "pci_addr": r.pci_addr_str(),
            "func_type": r.pci_func_type().as_str(),
            "vuid": r.vuid(),
            "emulated": r.is_emulated(),
        })).collect::<Vec<_>>(),
    })
}

fn reps_of(d: &DevInfo) -> Vec<doca_core::DevInfoRep> {
    if d.role() != Role::Dpu || !d.is_rep_list_all_supported() {
        return Vec::new();
    }
    d.open()
        .and_then(|dev| dev.rep_list(RepFilter::All))
        .unwrap_or_default()
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

fn print_table(role: Role, machine: &str, list: &[DevInfo]) {
    outln!(
        "{} device(s), {} side of {machine}",
        list.len(),
        role.as_str()
    );
    outln!(
        "{:<13} {:<4} {:<10} {:<10} {:<17} {:<15} {:<7} capabilities",
        "PCI",
        "FUNC",
        "IFACE",
        "IBDEV",
        "MAC",
        "IPV4",
        "ENGINE"
    );
    for d in list {
        let caps = d
            .capabilities()
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(",");
        outln!(
            "{:<13} {:<4} {:<10} {:<10} {:<17} {:<15} {:<7} {}",
            d.pci_addr_str(),
            d.props().func_type.as_str(),
            d.iface_name(),
            d.ibdev_name(),
            mac(d.mac_addr()),
            std::net::Ipv4Addr::from(d.ipv4_addr()).to_string(),
            d.engine_threads(),
            caps
        );
        let jobs = d
            .supported_job_types(&doca_tools::task_tables())
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        outln!("    jobs: {}", if jobs.is_empty() { "none" } else { &jobs });
        let unknown = unknown_job_types(d);
        if !unknown.is_empty() {
            outln!(
                "    the topology lists job types no library has: {}",
                unknown.join(" ")
            );
        }
        outln!(
            "    mmap export dpu: {}  mmap from export: {}  hotplug manager: {}",
            yes(d.is_mmap_export_dpu_supported()),
            yes(d.is_mmap_from_export_dpu_supported()),
            yes(d.is_hotplug_manager_supported())
        );
        let reps = reps_of(d);
        if !reps.is_empty() {
            outln!("    representors:");
            for r in reps {
                outln!(
                    "      {:<13} {:<3} {:<9} {}",
                    r.pci_addr_str(),
                    r.pci_func_type().as_str(),
                    if r.is_emulated() { "emulated" } else { "net" },
                    r.vuid()
                );
            }
        }
    }
}

fn main() -> ExitCode {
    cleanup::install();
    let args = Args::parse();
    let machine = match args
        .topology
        .clone()
        .or(std::env::var_os(device::TOPOLOGY_ENV).map(PathBuf::from))
    {
        Some(path) => path.display().to_string(),
        None => "the default machine (other side: --role host|dpu)".to_owned(),
    };
    let topo = match &args.topology {
        Some(path) => Topology::from_file(path, args.role.as_deref()),
        None => Topology::current_with_role(
            args.role
                .as_deref()
                .or(std::env::var(device::ROLE_ENV).ok().as_deref()),
        ),
    };
    let topo = match topo {
        Ok(t) => t,
        Err(e) => {
            eprintln!("doca-caps: {e}");
            return ExitCode::from(2);
        }
    };
    let list = device::devinfo_list_from(&topo);
    if args.json {
        let out = json!({
            "role": topo.role.as_str(),
            "devices": list.iter().map(device_json).collect::<Vec<_>>(),
        });
        match serde_json::to_string_pretty(&out) {
            Ok(s) => outln!("{s}"),
            Err(e) => {
                eprintln!("doca-caps: cannot format JSON: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        print_table(topo.role, &machine, &list);
    }
    ExitCode::SUCCESS
}
