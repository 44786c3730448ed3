//! The C interface as a DOCA program sees it: the libraries are installed with
//! `scripts/install-capi.sh` into a scratch prefix, the C tests in `tests/c/` and the
//! samples in `samples/` are compiled with strict flags ([`STRICT`]) and
//! `pkg-config --cflags --libs doca` (or `doca-dpu` for DPU-side programs), and run
//! with no topology file and no environment variables (under valgrind's memcheck when
//! it is installed), and again with engine threads. The headers' own checks are in
//! `c_api_headers.rs`.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn run_both(name: &str) {
    let bin = build(name);
    let a = run(&bin, &[], false);
    assert!(a.contains(&format!("{name}: ")), "{a}");
    let b = run(&bin, &[], true);
    assert!(b.contains(&format!("{name}: ")), "{b}");
}

#[test]
fn device_listing() {
    let out = run(&build("dev_list"), &[], false);
    assert!(out.contains("DOCA 2.2.0080 (runtime 2.2.0080)"), "{out}");
    assert!(
        out.contains("dma=DOCA_SUCCESS sha=DOCA_SUCCESS ec=DOCA_SUCCESS"),
        "{out}"
    );
}

#[test]
fn memory_life_cycle() {
    run(&build("mem_lifecycle"), &[], false);
}

#[test]
fn erasure_coding_guide_flow() {
    run_both("ec_flow");
}

/// DOCA 2.2's compress jobs with their output_chksum, against zlib (`tests/c/compress22.c`).
#[test]
fn compress_jobs_of_doca_2_2() {
    let bin = compile(
        &crate_dir().join("tests/c/compress22.c"),
        "compress22",
        "doca zlib",
    );
    for engine in [false, true] {
        let out = run(&bin, &[], engine);
        assert!(out.contains("compress22: ok"), "{out}");
    }
}

#[test]
fn dma_copy_and_sha_digests() {
    run_both("dma_sha");
}

#[test]
fn event_driven_mode_with_epoll() {
    run_both("event_driven");
}

#[test]
fn misuse_table() {
    run_both("misuse");
}

/// Buffers released by the program while their jobs are in flight stay alive until
/// the jobs complete.
#[test]
fn buffers_released_while_jobs_are_in_flight() {
    run_both("inflight_release");
}

/// A sync event stopped and destroyed while another thread waits on it.
#[test]
fn sync_event_destroyed_under_a_waiter() {
    run(&build("sync_event_waiters"), &[], false);
}

#[test]
fn sync_events_and_graphs() {
    run_both("sync_graph");
}

#[test]
fn layouts_and_values() {
    run(&build("layout"), &[], false);
}

#[test]
fn logging_and_argp() {
    let bin = build("log_argp");
    let json = scratch().join("argp.json");
    std::fs::write(
        &json,
        // Written the way configuration files for DOCA programs are: json-c's dialect,
        // with comments, trailing commas, single quotes and literals in capitals.
        r#"/* log_argp's configuration */
        {
            "doca_general_flags": {"log-level": 60,},   // debug
            "doca_program_flags": {
                "count": 7, "verbose": TRUE, 'file': ["a", "b",],
                "extra": {"k": [1, 2]}   /* a JSON object parameter */
            },
        }
        "#,
    )
    .unwrap();
    // Command line and JSON file together: the file fills what the command line lacks.
    let out = run(
        &bin,
        &["-p", "03:00.0", "--file", "x", "-j", json.to_str().unwrap()],
        false,
    );
    assert!(
        out.contains(
            "pci=03:00.0 count=7 verbose=1 files=1 extra={\"k\":[1,2]} level=60 validated=1"
        ),
        "{out}"
    );
    // The standard backend's line format.
    let line = out
        .lines()
        .find(|l| l.contains("info message 1"))
        .expect(&out);
    let b = line.as_bytes();
    assert!(
        b[0] == b'[' && b[3] == b':' && b[6] == b':' && b[9] == b':' && b[16] == b']',
        "{line}"
    );
    assert!(
        line[17..].starts_with("[DOCA][INF][LOG_ARGP_TEST:"),
        "{line}"
    );
    assert!(line.ends_with("]: info message 1"), "{line}");
    assert!(
        out.contains("[DOCA][DBG][LOG_ARGP_TEST:"),
        "debug level 60 from the JSON file:\n{out}"
    );
    assert!(!out.contains("developer message"), "{out}");
    assert!(out.contains("log_argp: ok"), "{out}");

    // Only the file: from the JSON, the repeatable flag's list.
    let out = run(
        &bin,
        &["-p", "1", "-l", "30", "--count=0x10", "--verbose=false"],
        false,
    );
    assert!(out.contains("count=16 verbose=0 files=0"), "{out}");
    assert!(out.contains("level=30"), "{out}");
    assert!(
        !out.contains("info message 1"),
        "level 30 hides info messages:\n{out}"
    );

    // -h and -v exit 0 with their text; a missing mandatory flag or an unknown flag fails.
    let o = Command::new(&bin).arg("-h").output().unwrap();
    let text = check(&o, "log_argp -h");
    assert!(
        text.contains("Usage: log_argp [DOCA Flags] [Program Flags]"),
        "{text}"
    );
    assert!(
        text.contains("-p, --pci-addr <PCI>") && text.contains("(mandatory)"),
        "{text}"
    );
    assert!(
        text.contains("-j, --json <path>") && text.contains("-l, --log-level"),
        "{text}"
    );
    let o = Command::new(&bin).arg("--version").output().unwrap();
    assert!(check(&o, "log_argp --version").contains("2.2.0080"));
    for bad in [
        &["--count", "3"][..],
        &["-p", "1", "--nope"][..],
        &["-p", "1", "-c", "x"][..],
    ] {
        let o = Command::new(&bin).args(bad).output().unwrap();
        assert!(!o.status.success(), "{bad:?} was accepted");
    }
}

/// meson's `dependency('doca')` finds the installation: the sample builds with its own
/// meson.build, as a DOCA sample does; `lib/pkgconfig/dpu` gives it the DPU flavour
/// under the name `doca`, and the sample then runs as the DPU side.
#[test]
fn meson_builds_the_sample() {
    if !have("meson") || !have("ninja") {
        eprintln!("SKIPPED: meson or ninja is not installed");
        return;
    }
    let dir = scratch().join("meson-sample");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sample = crate_dir().join("samples/erasure_coding_recover");
    for f in ["meson.build", "erasure_coding_recover.c"] {
        std::fs::copy(sample.join(f), dir.join(f)).unwrap();
    }
    let pc = prefix().join("lib/pkgconfig/dpu");
    let out = Command::new("meson")
        .args(["setup", "build"])
        .current_dir(&dir)
        .env("PKG_CONFIG_PATH", &pc)
        .output()
        .unwrap();
    check(&out, "meson setup");
    check(
        &Command::new("ninja")
            .args(["-C", "build"])
            .current_dir(&dir)
            .output()
            .unwrap(),
        "ninja",
    );
    let out = Command::new(dir.join("build/erasure_coding_recover"))
        .arg("-h")
        .output()
        .unwrap();
    assert!(check(&out, "the meson-built sample").contains("--delete_index"));
    let input = scratch().join("meson-sample/input");
    std::fs::write(&input, vec![0x5au8; 10_000]).unwrap();
    let out = Command::new(dir.join("build/erasure_coding_recover"))
        .args(["-i", input.to_str().unwrap(), "-o"])
        .arg(dir.join("blocks"))
        .args(["-b", "-d", "1"])
        .env_remove("DOCA_SW_TOPOLOGY")
        .env_remove("DOCA_SW_ROLE")
        .output()
        .unwrap();
    assert!(check(&out, "the meson-built sample, DPU side").contains("1 block(s) rebuilt"));
}

/// The erasure coding sample: encode a file, lose blocks, recover it byte for byte.
#[test]
fn erasure_coding_sample_recovers_a_file() {
    // DOCA's sample runs on the DPU and opens 03:00.0 by default: built for the DPU, it
    // finds that device with no topology file and no -p.
    let bin = build_sample("erasure_coding_recover", "doca-dpu");
    let input = scratch().join("sample-input");
    let data: Vec<u8> = (0..123_457u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&input, &data).unwrap();
    for (matrix, deleted) in [("cauchy", "0,7"), ("vandermonde", "2,5")] {
        let out_dir = scratch().join(format!("sample-{matrix}"));
        let _ = std::fs::remove_dir_all(&out_dir);
        let args = [
            "-i",
            input.to_str().unwrap(),
            "-o",
            out_dir.to_str().unwrap(),
            "-b",
            "-x",
            matrix,
            "-t",
            "6",
            "-r",
            "2",
            "-d",
            deleted,
        ];
        let log = run(&bin, &args, false);
        assert!(log.contains("2 block(s) rebuilt"), "{log}");
        assert_eq!(
            std::fs::read(out_dir.join("recovered")).unwrap(),
            data,
            "{matrix}"
        );
        // Decode again after losing two other blocks (data and redundancy).
        std::fs::remove_file(out_dir.join("data_1")).unwrap();
        std::fs::remove_file(out_dir.join("rdnc_1")).unwrap();
        std::fs::remove_file(out_dir.join("recovered")).unwrap();
        run(&bin, &["-i", out_dir.to_str().unwrap()], true);
        assert_eq!(
            std::fs::read(out_dir.join("recovered")).unwrap(),
            data,
            "{matrix}, engine threads"
        );
        // Three lost blocks are more than two redundancy blocks can rebuild.
        for f in ["data_0", "data_2", "data_3"] {
            std::fs::remove_file(out_dir.join(f)).unwrap();
        }
        let o = Command::new(&bin)
            .args(["-i", out_dir.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(!o.status.success(), "recovered from too few blocks");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("blocks are left"),
            "{o:?}"
        );
    }
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// DOCA's local DMA copy, built for the DPU: runs with its defaults (03:00.0, the
/// sample's text) and no set_permissions; built for the host it refuses, as DOCA's does.
#[test]
fn sample_dma_local_copy_on_the_dpu_side() {
    let dpu = build_sample("dma_local_copy", "doca-dpu");
    let out = run(&dpu, &[], false);
    assert!(
        out.contains(
            "Success, memory copied and verified as correct (31 bytes): This is a sample piece of text"
        ),
        "{out}"
    );
    let out = run(&dpu, &["-t", "another text", "-p", "0000:03:00.0"], true);
    assert!(out.contains("(13 bytes): another text"), "{out}");
    // A device the DPU side does not have: a clear error, a failing exit status.
    let o = Command::new(&dpu)
        .args(["-p", "3b:00.0"])
        .env_remove("DOCA_SW_TOPOLOGY")
        .env_remove("DOCA_SW_ROLE")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("No DMA device at 3b:00.0"),
        "{o:?}"
    );
    let host = build_sample("dma_local_copy", "doca");
    let o = Command::new(&host)
        .env_remove("DOCA_SW_ROLE")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("Sample can run only on the DPU"),
        "{o:?}"
    );
}

/// DOCA's DMA copy pair as two processes: the host exports its text's memory and writes
/// the descriptor and the buffer's address to files; the DPU side imports it, copies the
/// text with a DMA job (host -> DPU), and writes a reply back (DPU -> host), which the
/// host prints once told the DPU is done. With the default paths and devices, then with
/// engine threads and paths of the test's own.
#[test]
fn sample_dma_copy_host_and_dpu_as_two_processes() {
    use std::io::Write;
    let host = build_sample("dma_copy_host", "doca");
    let dpu = build_sample("dma_copy_dpu", "doca-dpu");
    let dir = scratch().join("dma-copy");
    std::fs::create_dir_all(&dir).unwrap();
    for (engine, own_paths) in [(false, false), (true, true)] {
        let (desc, info) = if own_paths {
            (dir.join("desc.bin"), dir.join("info.txt"))
        } else {
            (
                PathBuf::from("/tmp/export_desc.txt"),
                PathBuf::from("/tmp/buffer_info.txt"),
            )
        };
        let _ = std::fs::remove_file(&desc);
        let _ = std::fs::remove_file(&info);
        let paths: Vec<String> = if own_paths {
            vec![
                "-f".into(),
                desc.display().to_string(),
                "-b".into(),
                info.display().to_string(),
            ]
        } else {
            vec![]
        };
        let pargs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let mut h = start_host(&host, &pargs, engine, &info, "dma_copy_host");
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut dargs = paths.clone();
        dargs.extend(["-w".to_string(), "reply from the DPU".to_string()]);
        let dargs: Vec<&str> = dargs.iter().map(String::as_str).collect();
        let out = run_beside(&dpu, &dargs, engine, &[], Some(&mut h));
        assert!(
            out.contains("Remote DMA copy was done Successfully"),
            "{out}"
        );
        assert!(
            out.contains("Memory content: This is a sample piece of text"),
            "{out}"
        );
        assert!(out.contains("Wrote back into host memory"), "{out}");
        h.child.stdin.take().unwrap().write_all(b"\n").unwrap();
        let hout = check(&h.finish(), "dma_copy_host");
        assert!(
            hout.contains("Memory content: reply from the DPU"),
            "{hout}"
        );
        // The export ended with the host: its descriptor is refused now.
        assert_export_refused(&dpu, &pargs);
    }
}

/// DOCA's comm channel pair as two processes, with their defaults: the DPU-side server
/// (03:00.0 serving the host function 3b:00.0) and the host-side client (3b:00.0).
#[test]
fn sample_comm_channel_server_and_client_as_two_processes() {
    let server = build_sample("comm_channel_server", "doca-dpu");
    let client = build_sample("comm_channel_client", "doca");
    let rt = runtime_dir("cc");
    for (engine, text) in [(false, None), (true, Some("another question"))] {
        let mut s = start_side(&server, &[], engine, &rt);
        let args: Vec<&str> = text.map_or(vec![], |t| vec!["-t", t]);
        let out = run_beside(
            &client,
            &args,
            engine,
            &[("DOCA_SW_RUNTIME_DIR", &rt)],
            Some(&mut s),
        );
        assert!(
            out.contains("Received message: Message from the server"),
            "{out}"
        );
        let so = s.finish();
        let sout = check(&so, "comm_channel_server");
        let want = format!(
            "Received message: {}",
            text.unwrap_or("Message from the client")
        );
        assert!(sout.contains(&want), "{sout}");
    }
    // A client whose device the server does not represent never reaches it: b1:00.0's
    // messages wait (AGAIN) while a server for 3b:00.0 listens; the test ends it.
    let mut s = start_side(&server, &[], false, &rt);
    let mut c = start_side(&client, &["-p", "b1:00.0"], false, &rt);
    std::thread::sleep(std::time::Duration::from_millis(300));
    if c.ended().is_some() {
        c.fail("ended: it should wait, as it cannot reach another function's service");
    }
    if s.ended().is_some() {
        s.fail("ended: it should still wait, as it got nothing");
    }
    // Dropping both kills them.
}

/// The comm channel pair the way DOCA's sample runs it, many times on both engines: the
/// server sends its reply and destroys its endpoint at once; the client must get the
/// reply every time (it comes before the end of the connection).
#[test]
fn comm_channel_reply_before_the_close_every_time() {
    let server = build_sample("comm_channel_server", "doca-dpu");
    let client = build_sample("comm_channel_client", "doca");
    let rt = runtime_dir("cc-many");
    for engine in [false, true] {
        for round in 0..20 {
            let mut s = start_side(&server, &[], engine, &rt);
            std::thread::sleep(std::time::Duration::from_millis(20));
            let c = start_side(&client, &[], engine, &rt);
            let out = check(&c.finish_beside(Some(&mut s)), "comm_channel_client");
            assert!(
                out.contains("Received message: Message from the server"),
                "round {round} (engine threads: {engine}): {out}"
            );
            check(&s.finish(), "comm_channel_server");
        }
    }
}

/// A comm channel service with two clients (three processes): the service's peer list,
/// pending connections, user data, statistics and disconnect, from C.
#[test]
fn comm_channel_service_with_several_clients() {
    let src = crate_dir().join("tests/c/cc_service.c");
    let service = compile(&src, "cc_service-dpu", "doca-dpu");
    let client = compile(&src, "cc_service-host", "doca");
    let rt = runtime_dir("svc");
    for engine in [false, true] {
        let mut s = start_side(&service, &["2"], engine, &rt);
        let a = start_side(&client, &["A"], engine, &rt);
        let out = run_beside(
            &client,
            &["B"],
            engine,
            &[("DOCA_SW_RUNTIME_DIR", &rt)],
            Some(&mut s),
        );
        assert!(out.contains("client B: answered"), "{out}");
        let aout = check(&a.finish(), "client A");
        assert!(aout.contains("client A: answered"), "{aout}");
        let sout = check(&s.finish(), "service");
        assert!(
            sout.contains("service: 2 clients served, peer list and statistics agree"),
            "{sout}"
        );
    }
}

/// DOCA's sync event pair as two processes, the blob passed over the comm channel: each
/// side waits for the other's signal, synchronously and asynchronously, with set and
/// atomic add.
#[test]
fn sample_sync_event_host_and_dpu_as_two_processes() {
    let host = build_sample("sync_event_host", "doca");
    let dpu = build_sample("sync_event_dpu", "doca-dpu");
    let rt = runtime_dir("se");
    let modes: [(&[&str], bool); 4] = [
        (&[], false),
        (&["--atomic"], false),
        (&["--async", "--qdepth", "4"], true),
        (&["--async", "--atomic"], false),
    ];
    for (flags, engine) in modes {
        let mut d = start_side(&dpu, flags, engine, &rt);
        let out = run_beside(
            &host,
            flags,
            engine,
            &[("DOCA_SW_RUNTIME_DIR", &rt)],
            Some(&mut d),
        );
        assert!(
            out.contains("Done: the DPU signaled back"),
            "{flags:?}: {out}"
        );
        if !flags.contains(&"--async") {
            assert!(out.contains("Sync event value is 2"), "{flags:?}: {out}");
        }
        let dout = check(&d.finish(), "sync_event_dpu");
        assert!(
            dout.contains("Done: signaled the host"),
            "{flags:?}: {dout}"
        );
    }
}

/// SHA-256 one-shot and partial, as DOCA's SHA samples: the digest is the real one.
#[test]
fn sample_sha_create_one_shot_and_partial() {
    let bin = build_sample("sha_create", "doca");
    let out = run(&bin, &[], false);
    assert!(
        out.contains(&format!(
            "SHA256 output is: {}",
            sha256_hex(b"1234567890abcdef")
        )),
        "{out}"
    );
    let text: String = (0..300u32)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    for engine in [false, true] {
        let out = run(&bin, &["-d", &text], engine);
        assert!(
            out.contains(&format!(
                "SHA256 output is: {}",
                sha256_hex(text.as_bytes())
            )),
            "{out}"
        );
        assert!(out.contains("300 bytes in 5 segment(s) agrees"), "{out}");
    }
}

/// A graph of DMA, SHA and a user node, several instances at once.
#[test]
fn sample_graph_dma_sha() {
    let bin = build_sample("graph_dma_sha", "doca");
    for engine in [false, true] {
        let out = run(&bin, &["-n", "6"], engine);
        for i in 0..6 {
            let text = format!("graph instance {i} copies and hashes this text");
            assert!(
                out.contains(&format!(
                    "instance {i}: sha256 {} of '{text}'",
                    sha256_hex(text.as_bytes())
                )),
                "{out}"
            );
        }
        assert!(out.contains("6 graph instances completed"), "{out}");
    }
    let o = Command::new(&bin).args(["-n", "99"]).output().unwrap();
    assert!(!o.status.success(), "99 instances were accepted");
}

/// A host build and a DPU build see their own sides of the default machine, at once;
/// DOCA_SW_ROLE overrides the build.
#[test]
fn host_and_dpu_builds_run_at_once() {
    let src = crate_dir().join("tests/c/role_probe.c");
    let host = compile(&src, "role_probe-host", "doca");
    let dpu = compile(&src, "role_probe-dpu", "doca-dpu");
    let spawn = |bin: &Path, what: &str| {
        let mut c = Command::new(bin);
        c.arg("300")
            .env_remove("DOCA_SW_TOPOLOGY")
            .env_remove("DOCA_SW_ROLE");
        Running::spawn(c, what)
    };
    let (h, d) = (spawn(&host, "host probe"), spawn(&dpu, "DPU probe"));
    let h = check(&h.finish(), "host probe");
    let d = check(&d.finish(), "DPU probe");
    assert!(
        h.contains("arch=host\ndev=0000:3b:00.0\ndev=0000:b1:00.0\nreps=DOCA_ERROR_NOT_SUPPORTED"),
        "{h}"
    );
    assert!(
        d.contains("arch=dpu\ndev=0000:03:00.0\nrep=0000:3b:00.0\nrep=0000:b1:00.0\n"),
        "{d}"
    );
    let o = Command::new(&dpu)
        .env_remove("DOCA_SW_TOPOLOGY")
        .env("DOCA_SW_ROLE", "host")
        .output()
        .unwrap();
    assert!(
        check(&o, "DPU probe as host").contains("arch=dpu\ndev=0000:3b:00.0\n"),
        "DOCA_SW_ROLE overrides the build"
    );
    // Under valgrind too.
    assert!(run(&dpu, &[], false).contains("role_probe: ok"));
}

/// A topology file or role that cannot be used fails the device list with
/// INVALID_VALUE, and the reason (file, line, what is wrong) is logged at error level,
/// where a program that never raises its log level sees it.
#[test]
fn unusable_topology_is_logged_with_its_reason() {
    let host = compile(
        &crate_dir().join("tests/c/role_probe.c"),
        "role_probe-host",
        "doca",
    );
    let file = scratch().join("topology-without-vuid.toml");
    std::fs::write(
        &file,
        "role = \"host\"\n[[host.device]]\npci_addr = \"0000:af:00.0\"\n\
         [[dpu.device]]\npci_addr = \"0000:03:00.0\"\n  [[dpu.device.representor]]\n  \
         pci_addr = \"0000:af:00.0\"\n",
    )
    .unwrap();
    let o = Command::new(&host)
        .env("DOCA_SW_TOPOLOGY", &file)
        .env_remove("DOCA_SW_ROLE")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("[ERR]")
            && err.contains(&file.display().to_string())
            && err.contains("line 6")
            && err.contains("missing field `vuid`"),
        "{err}"
    );
    let o = Command::new(&host)
        .env_remove("DOCA_SW_TOPOLOGY")
        .env("DOCA_SW_ROLE", "nic")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("[ERR]") && err.contains("nic"), "{err}");
}

/// With -l 60, a failed job's reason is logged when the program retrieves it.
#[test]
fn failed_jobs_log_their_reason_at_debug_level() {
    let bin = build("failure_reasons");
    for engine in [false, true] {
        let out = run(&bin, &["-l", "60"], engine);
        assert!(out.contains("failure_reasons: ok"), "{out}");
        assert!(
            out.contains("job 0x10001 (user data 0x7) failed: DOCA_ERROR_NOT_PERMITTED")
                && out.contains("does not grant write access"),
            "{out}"
        );
        assert!(out.contains("multiple of 64 bytes"), "{out}");
    }
    let out = run(&bin, &[], false);
    assert!(
        !out.contains("NOT_PERMITTED"),
        "reasons are debug messages:\n{out}"
    );
}

/// DOCA 2.2 RDMA between two processes, as DOCA 2.2's samples use it: every job type on
/// a work queue (results in `struct doca_rdma_result`), atomics, a receive over a
/// buffer's data, a damaged descriptor, a job before the connection, a permission the
/// export does not grant, and memory after its revocation; inline and with engine
/// threads; and across two network namespaces where they can be made.
#[test]
fn rdma_pair_22() {
    let src = crate_dir().join("tests/c/rdma_pair22.c");
    let bin = compile(&src, "rdma_pair22", "doca");
    run_rdma_pair(&bin, "rdma22");
}

/// Both layers of RDMA access control in 2.2 (`tests/c/rdma_perms22.c`): eight
/// responder contexts, one per combination of the RDMA read, write and atomic
/// permissions, against memory exported with each combination; every read, write,
/// fetch-and-add and compare-and-swap job lands only where both allow it, and the rest
/// end with `NOT_PERMITTED` in the job's result, touching nothing (the responder checks
/// every byte). Inline, with engine threads, with shared memory, and across two network
/// namespaces.
#[test]
fn rdma_permissions_both_layers_22() {
    let src = crate_dir().join("tests/c/rdma_perms22.c");
    let bin = compile(&src, "rdma_perms22", "doca");
    run_pair_everywhere(
        &bin,
        "perms22",
        ["responder", "requester"],
        [
            "every combination checked",
            "224 jobs, 160 refused with DOCA_ERROR_NOT_PERMITTED",
        ],
    );
}

/// The 1.x headers reach each other as DOCA 1.x's did: a C++ program that includes only
/// `doca_buf.h`, `doca_buf_inventory.h` or `doca_dma.h` calls the memory map's
/// functions (1.x programs do), and `doca_dma.h` alone reaches buffers, contexts and
/// devices; built with `g++ -Wall -Wextra -Werror` (where an undeclared
/// function is an error) through the 1.x module names `doca-common` and `doca-dma`, host
/// and DPU flavours.
#[test]
fn one_x_headers_reach_each_other() {
    let p = prefix();
    let mmap_calls = r#"
    doca_mmap *m = nullptr;
    doca_dev *d = nullptr;
    uint8_t *desc = nullptr;
    size_t n = 0;
    if (doca_mmap_create(nullptr, &m) != DOCA_SUCCESS)
        return 1;
    (void)doca_mmap_populate(m, nullptr, 0, 4096, nullptr, nullptr);
    (void)doca_mmap_start(m);
    (void)doca_mmap_dev_add(m, d);
    (void)doca_mmap_export(m, d, &desc, &n);
    (void)doca_mmap_stop(m);
    (void)doca_mmap_destroy(m);
"#;
    let dma_calls = r#"
    doca_buf *b = nullptr;
    doca_dma *dma = nullptr;
    uint16_t refs = 0;
    (void)doca_buf_refcount_rm(b, &refs);
    if (doca_dma_create(&dma) == DOCA_SUCCESS) {
        (void)doca_ctx_start(doca_dma_as_ctx(dma));
        (void)doca_dma_destroy(dma);
    }
    doca_devinfo **list = nullptr;
    uint32_t k = 0;
    if (doca_devinfo_list_create(&list, &k) == DOCA_SUCCESS)
        (void)doca_devinfo_list_destroy(list);
"#;
    for pc in ["doca-1", "doca-1-dpu"] {
        for (header, calls) in [
            ("doca_buf.h", mmap_calls.to_string()),
            ("doca_buf_inventory.h", mmap_calls.to_string()),
            ("doca_dma.h", format!("{mmap_calls} {dma_calls}")),
        ] {
            let src = format!("#include <{header}>\nint main()\n{{{calls}    return 0;\n}}\n");
            let tag = format!(
                "reach_{}_{}",
                pc.replace('-', "_"),
                header.replace('.', "_")
            );
            let file = scratch().join(format!("{tag}.cpp"));
            std::fs::write(&file, src).unwrap();
            compile_cpp_std_in(
                &p.join("lib/pkgconfig").join(pc),
                &file,
                &tag,
                "doca-common doca-dma",
                "c++17",
            );
        }
    }
}

/// Every installed header of every generation (1.x, 2.2, 3.x), host and DPU flavours,
/// included together in one C++17 program built with `g++ -Wall -Wextra -Werror` and
/// linked through the generation's pkg-config modules: DOCA programs written in C++
/// (NVIDIA's storage application among them) build against each face.
#[test]
fn every_header_builds_as_cpp17() {
    let p = prefix();
    let three = "doca-common doca-argp doca-dma doca-erasure-coding doca-comch doca-comm-channel doca-sha doca-compress doca-rdma doca-aes-gcm";
    let faces: [(&str, &str, &str, &str); 6] = [
        ("1.x host", "include/doca-1", "lib/pkgconfig", "doca-1"),
        ("1.x dpu", "include/doca-1", "lib/pkgconfig", "doca-1-dpu"),
        ("2.2 host", "include", "lib/pkgconfig", "doca"),
        ("2.2 dpu", "include", "lib/pkgconfig/dpu", "doca"),
        ("3.x host", "include/doca-3", "lib/pkgconfig", three),
        ("3.x dpu", "include/doca-3", "lib/pkgconfig/dpu", three),
    ];
    for (face, inc, pc, modules) in faces {
        let mut names: Vec<String> = std::fs::read_dir(p.join(inc))
            .unwrap()
            .filter_map(|e| {
                let n = e.unwrap().file_name().into_string().unwrap();
                n.ends_with(".h").then_some(n)
            })
            .collect();
        names.sort();
        assert!(names.len() > 10, "{face}: only {names:?} installed");
        let mut src = String::new();
        for n in &names {
            src.push_str(&format!("#include <{n}>\n"));
        }
        // One call into the library, so that the program links against it (1.x and 2.2
        // name it doca_get_error_name).
        let name_fn = if !face.starts_with("3.x") {
            "doca_get_error_name"
        } else {
            "doca_error_get_name"
        };
        src.push_str(&format!(
            "#include <cstdio>\nint main() {{ std::printf(\"%s\\n\", {name_fn}(DOCA_SUCCESS)); return 0; }}\n"
        ));
        let tag = face.replace(['.', ' '], "_");
        let file = scratch().join(format!("all_headers_{tag}.cpp"));
        let bin = scratch().join("bin").join(format!("all_headers_{tag}"));
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        std::fs::write(&file, src).unwrap();
        let out = std::process::Command::new("g++")
            .args(["-std=c++17", "-Wall", "-Wextra", "-Werror"])
            .arg(&file)
            .arg("-o")
            .arg(&bin)
            .args(pkg_config_in(
                &p.join(pc),
                &["--cflags", "--libs"]
                    .into_iter()
                    .chain(modules.split_whitespace())
                    .collect::<Vec<_>>(),
            ))
            .output()
            .unwrap();
        check(&out, &format!("building every {face} header as C++17"));
        let ran = std::process::Command::new(&bin).output().unwrap();
        assert_eq!(check(&ran, face).trim(), "DOCA_SUCCESS", "{face}");
    }
}
