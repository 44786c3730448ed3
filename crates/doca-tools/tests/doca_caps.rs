//! `doca-caps` end to end.

use std::process::Command;

fn caps(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_doca-caps"))
        .args(args)
        .env_remove("DOCA_SW_TOPOLOGY")
        .env_remove("DOCA_SW_ROLE")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const GUIDE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../topology/bluefield-guide.toml"
);

#[test]
fn default_machine_tables() {
    let (rc, out, _) = caps(&[]);
    assert_eq!(rc, 0);
    assert!(
        out.starts_with("2 device(s), host side of the default machine"),
        "{out}"
    );
    assert!(out.contains("\n0000:3b:00.0  pf") && out.contains("\n0000:b1:00.0  pf"));
    assert!(out.contains("ec.recover"));
    let (rc, out, _) = caps(&["--role", "dpu", "--json"]);
    assert_eq!(rc, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["role"], "dpu");
    assert_eq!(v["devices"][0]["pci_addr"], "0000:03:00.0");
    let reps = v["devices"][0]["representors"].as_array().unwrap();
    assert_eq!(reps[0]["pci_addr"], "0000:3b:00.0");
    assert_eq!(reps[1]["pci_addr"], "0000:b1:00.0");
}

#[test]
fn dpu_json_lists_representors() {
    let (rc, out, err) = caps(&["--json", "--topology", GUIDE, "--role", "dpu"]);
    assert_eq!(rc, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["role"], "dpu");
    let devs = v["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 4);
    assert_eq!(devs[0]["iface_name"], "p0");
    let reps = devs[0]["representors"].as_array().unwrap();
    assert_eq!(reps.len(), 5);
    assert_eq!(reps[1]["pci_addr"], "0000:0b:00.2");
    assert_eq!(reps[1]["func_type"], "vf");
    assert_eq!(devs[2]["representors"].as_array().unwrap().len(), 0);
}

#[test]
fn host_side_of_the_guide() {
    let (rc, out, _) = caps(&["--json", "-t", GUIDE]);
    assert_eq!(rc, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: Vec<_> = v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["iface_name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["pf0", "pf0vf0", "pf0vf1", "pf1", "pf1vf0"]);
    assert_eq!(v["devices"][0]["mmap_export_dpu"], true);
    assert_eq!(v["devices"][0]["representors"].as_array().unwrap().len(), 0);
}

#[test]
fn bad_inputs_are_clear_errors() {
    let (rc, _, err) = caps(&["-t", "/nonexistent/topology.toml"]);
    assert_eq!(rc, 2);
    assert!(
        err.contains("DOCA_ERROR_NOT_FOUND") && err.contains("/nonexistent/topology.toml"),
        "{err}"
    );
    let (rc, _, err) = caps(&["--role", "arm"]);
    assert_eq!(rc, 2);
    assert!(err.contains("possible values: host, dpu"), "{err}");
}
