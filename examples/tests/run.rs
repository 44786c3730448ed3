//! Every example program runs to its end and says what it checked, on the default
//! machine (inline engine) and on one whose devices have engine threads.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// A topology whose host device runs jobs on 2 engine threads.
fn engine_topology() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let p = dir.join(format!("examples-engine-{}.toml", std::process::id()));
    std::fs::write(
        &p,
        "[[host.device]]\npci_addr = \"0000:3b:00.0\"\nengine_threads = 2\n",
    )
    .unwrap();
    p
}

fn run(exe: &str, args: &[&str], topology: Option<&PathBuf>, says: &str) {
    let mut cmd = Command::new(exe);
    cmd.args(args);
    if let Some(t) = topology {
        cmd.env("DOCA_SW_TOPOLOGY", t);
    }
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("{exe} did not end within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{exe} {args:?} failed: {}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(says), "{exe}: {stdout}");
}

#[test]
fn every_example_runs_on_both_engines() {
    let engines = engine_topology();
    for topo in [None, Some(&engines)] {
        run(
            env!("CARGO_BIN_EXE_dma"),
            &[],
            topo,
            "256 jobs, 16777216 bytes copied and checked",
        );
        run(
            env!("CARGO_BIN_EXE_compress"),
            &[],
            topo,
            "compress: 8 blocks of 16384 bytes deflated",
        );
        run(
            env!("CARGO_BIN_EXE_aes_gcm"),
            &[],
            topo,
            "aes_gcm: 4 blocks of 4096 bytes sealed and opened back",
        );
        run(
            env!("CARGO_BIN_EXE_sha"),
            &[],
            topo,
            "one job, and 4 partial segments",
        );
        run(
            env!("CARGO_BIN_EXE_ec"),
            &[],
            topo,
            "blocks 1 and 2 lost and recovered",
        );
        run(
            env!("CARGO_BIN_EXE_sync_event"),
            &[],
            topo,
            "the value is 10",
        );
        run(
            env!("CARGO_BIN_EXE_graph"),
            &[],
            topo,
            "3 instances of copy -> copy -> check ran in order",
        );
        run(
            env!("CARGO_BIN_EXE_comm_channel"),
            &[],
            topo,
            "100 messages answered",
        );
        run(
            env!("CARGO_BIN_EXE_ec_service"),
            &["--requests", "300"],
            topo,
            "every answer equals ec-codec's",
        );
        run(
            env!("CARGO_BIN_EXE_rdma"),
            &[],
            topo,
            "two processes, write, read and send over RDMA",
        );
    }
    let _ = std::fs::remove_file(engines);
}

/// With shared memory allowed on both sides, the requester's 1 MiB write goes through
/// UCX's shared-memory queue in pieces (and the read's answer comes in pieces), and its
/// 64-byte read is copied by the requester directly; without, the NIC carries them all
/// over TCP.
#[test]
fn the_rdma_example_uses_shared_memory_when_allowed() {
    for (shm, copies, pieces) in [(false, 0, 0), (true, 1, 1)] {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rdma"));
        c.env_remove("DOCA_SW_TOPOLOGY");
        if shm {
            c.env("DOCA_RDMA_SHM", "1");
        } else {
            c.env_remove("DOCA_RDMA_SHM");
        }
        let out = c.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(
            text.contains(&format!(
                "reads and writes copied directly: {copies}; writes sent in pieces through shared memory: {pieces})"
            )),
            "shared memory {shm}: {text}"
        );
    }
}

#[test]
fn the_service_refuses_a_bad_count() {
    let out = Command::new(env!("CARGO_BIN_EXE_ec_service"))
        .args(["--requests", "many"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--requests takes a count"));
}
