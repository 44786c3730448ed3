//! The tools' two-process modes: a DPU-side process and a host process, started as a
//! user would in two terminals (DPU side first).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

fn scratch(name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("pairs-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("rt")).unwrap();
    std::fs::set_permissions(d.join("rt"), std::fs::Permissions::from_mode(0o700)).unwrap();
    d
}

fn tool(bin: &str, dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(args)
        .current_dir(dir)
        .env("DOCA_SW_RUNTIME_DIR", dir.join("rt"))
        .env_remove("DOCA_SW_TOPOLOGY")
        .env_remove("DOCA_SW_ROLE");
    c
}

fn background(bin: &str, dir: &Path, args: &[&str]) -> Child {
    tool(bin, dir, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn ok(o: Output, what: &str) -> String {
    let s = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{what} failed: {s}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    s
}

const DMA: &str = env!("CARGO_BIN_EXE_doca-dma-copy");
const SE: &str = env!("CARGO_BIN_EXE_doca-sync-event");

#[test]
fn a_file_goes_host_to_dpu_and_back_through_an_exported_mmap() {
    let d = scratch("dma");
    let data: Vec<u8> = (0..3_000_017u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(d.join("src.bin"), &data).unwrap();
    let dpu = background(DMA, &d, &["--role", "dpu", "--chunk", "64K", "got.bin"]);
    let h = ok(
        tool(DMA, &d, &["--role", "host", "src.bin"])
            .output()
            .unwrap(),
        "host send",
    );
    assert!(h.contains("verified"), "{h}");
    let o = ok(dpu.wait_with_output().unwrap(), "DPU receive");
    assert!(o.contains("received 3000017 bytes"), "{o}");
    assert_eq!(std::fs::read(d.join("got.bin")).unwrap(), data);
    // And back: the host fetches the DPU side's file.
    let dpu = background(DMA, &d, &["--role", "dpu", "got.bin"]);
    let h = ok(
        tool(DMA, &d, &["--role", "host", "--fetch", "back.bin"])
            .output()
            .unwrap(),
        "host fetch",
    );
    assert!(h.contains("fetched 3000017 bytes"), "{h}");
    ok(dpu.wait_with_output().unwrap(), "DPU send");
    assert_eq!(std::fs::read(d.join("back.bin")).unwrap(), data);
    // The DPU side never replaces an existing file without --force, and says so.
    let dpu = background(DMA, &d, &["--role", "dpu", "got.bin"]);
    let h = tool(DMA, &d, &["--role", "host", "src.bin"])
        .output()
        .unwrap();
    assert!(!h.status.success());
    let o = dpu.wait_with_output().unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&h.stderr).contains("DPU side failed"),
        "{h:?}"
    );
    // Fetching a file the DPU side does not have fails on both sides; nothing is written.
    let dpu = background(DMA, &d, &["--role", "dpu", "missing.bin"]);
    let h = tool(DMA, &d, &["--role", "host", "--fetch", "nothing.bin"])
        .output()
        .unwrap();
    assert!(!h.status.success());
    assert!(!d.join("nothing.bin").exists());
    assert!(!dpu.wait_with_output().unwrap().status.success());
    // One file with --role; two without.
    let o = tool(DMA, &d, &["--role", "host", "a", "b"])
        .output()
        .unwrap();
    assert!(!o.status.success());
}

#[test]
fn sync_event_host_and_dpu_as_two_processes() {
    let d = scratch("se");
    for flags in [
        &[][..],
        &["--atomic"],
        &["--async", "--rounds", "20"],
        &["--async", "--atomic", "--rounds", "20"],
    ] {
        let mut a = vec!["--role", "dpu"];
        a.extend_from_slice(flags);
        let dpu = background(SE, &d, &a);
        let mut a = vec!["--role", "host"];
        a.extend_from_slice(flags);
        let h = ok(tool(SE, &d, &a).output().unwrap(), "host");
        assert!(
            h.contains("through an exported sync event"),
            "{flags:?}: {h}"
        );
        let o = ok(dpu.wait_with_output().unwrap(), "DPU side");
        assert!(o.contains("answered"), "{flags:?}: {o}");
    }
}
