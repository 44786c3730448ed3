//! The 1.x C interface (DOCA 1.3-1.4 Core and DMA) as a DOCA program sees it: installed
//! beside the other generations by `scripts/install-capi.sh`, the programs in
//! `tests/c1/` are compiled with strict flags and `pkg-config --cflags --libs doca-1`
//! (the DPU side with `doca-1-dpu`), and run with no topology file (under valgrind when
//! it is installed) and again with engine threads. A symbol check compares the
//! headers of `include1/` with what the installed library exports.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

fn build1(name: &str, module: &str) -> PathBuf {
    compile(
        &crate_dir().join("tests/c1").join(format!("{name}.c")),
        &format!("{name}-1"),
        module,
    )
}

#[test]
fn local_dma_copy_with_populated_chunks() {
    let bin = build1("dma_local_copy1", "doca-1");
    for engine in [false, true] {
        let out = run(&bin, &[], engine);
        assert!(out.contains("dma_local_copy1: DOCA 1.4.0079\n"), "{out}");
        assert!(
            out.contains("dma_local_copy1: copied 31 bytes: This is a sample piece of text"),
            "{out}"
        );
    }
    let out = run(&bin, &["-p", "3b:00.0", "-t", "another text"], false);
    assert!(out.contains("copied 13 bytes: another text"), "{out}");
    // A device that is not there: a clear failure.
    let o = default_machine(&bin)
        .args(["-p", "7f:00.0"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("No DMA device at 7f:00.0"), "{err}");
}

#[test]
fn memory_workflows_of_the_guide() {
    let bin = build1("workflows1", "doca-1");
    for engine in [false, true] {
        let out = run(&bin, &[], engine);
        assert!(
            out.contains("workflows1: region-based access: 24 copies"),
            "{out}"
        );
        assert!(out.contains("random access, single map: 8 copies"), "{out}");
        assert!(
            out.contains("random access, map per buffer: 8 copies"),
            "{out}"
        );
        assert!(
            out.contains("workflows1: stopped with a buffer taken, started again, exported once"),
            "{out}"
        );
        assert!(out.contains("workflows1: done"), "{out}");
    }
}

#[test]
fn misuse_table_of_the_1x_calls() {
    let bin = build1("misuse1", "doca-1");
    for engine in [false, true] {
        let out = run(&bin, &[], engine);
        assert!(out.contains("misuse1: 45 rows"), "{out}");
    }
}

/// Host and DPU as two processes: the host exports a one-chunk memory map; the DPU side
/// lists its remote devices, reads the exported range's "addr" and "len" from the JSON
/// descriptor with json-c, creates the map from the export (strlen() + 1 bytes), reads
/// the host's text by DMA and writes its reply back.
#[test]
fn host_to_dpu_dma_through_an_export_as_two_processes() {
    // Built as 1.x projects build: the module names doca-common and doca-dma, from
    // the 1.x directories of pkg-config modules.
    let src = |n: &str| crate_dir().join("tests/c1").join(format!("{n}.c"));
    let host = compile_in(
        &prefix().join("lib/pkgconfig/doca-1"),
        &src("dma_host1"),
        "dma_host1-1",
        "doca-common doca-dma doca-argp",
    );
    let dpu = compile_in(
        &prefix().join("lib/pkgconfig/doca-1-dpu"),
        &src("dma_dpu1"),
        "dma_dpu1-1",
        "doca-common doca-dma doca-argp json-c",
    );
    let dir = scratch().join("dma-pair1");
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.display().to_string();
    let info = dir.join("doca1_buffer_info.txt");
    for (engine, reply) in [(false, "reply from the DPU"), (true, "second reply")] {
        let _ = std::fs::remove_file(&info);
        let _ = std::fs::remove_file(dir.join("doca1_export_desc.bin"));
        let mut h = start_host(&host, &["-d", &d], engine, &info, "dma_host1");
        let out = run_beside(&dpu, &["-w", reply, "-d", &d], engine, &[], Some(&mut h));
        assert!(out.contains("remote device 3b:00.0 vuid"), "{out}");
        assert!(
            out.contains("dma_dpu1: Memory content: This is a sample piece of text"),
            "{out}"
        );
        assert!(out.contains("wrote back into host memory"), "{out}");
        h.child.stdin.take().unwrap().write_all(b"\n").unwrap();
        let hout = check(&h.finish(), "dma_host1");
        assert!(
            hout.contains(&format!("dma_host1: Memory content: {reply}")),
            "{hout}"
        );
        // The export ended with the host: the DPU side is refused now.
        assert_export_refused(&dpu, &["-d", &d]);
    }
}

/// Every function the 1.x headers declare is exported by the installed 1.x library
/// (the inline `doca_buf_inventory_buf_by_addr` aside), and no `doca1__` link name
/// leaks out.
#[test]
fn the_1x_library_exports_what_its_headers_declare() {
    let inc = prefix().join("include/doca-1");
    let declared = header_functions("include1");
    assert!(declared.len() > 40, "{declared:?}");
    assert!(inc.join("doca_mmap.h").exists());
    let lib = prefix().join("lib/doca-1/libdoca_common.so.1");
    let out = check(
        &Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(&lib)
            .output()
            .unwrap(),
        "nm",
    );
    let exported: BTreeSet<&str> = out
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    let missing: Vec<_> = declared
        .iter()
        .filter(|n| !exported.contains(n.as_str()))
        .collect();
    assert!(missing.is_empty(), "declared but not exported: {missing:?}");
    assert!(!exported.iter().any(|n| n.starts_with("doca1__")));
}

fn is_v1(p: &std::path::Path) -> bool {
    p.components().any(|c| c.as_os_str() == "v1")
}

/// Every function `include1/` declares is defined (by the 1.x face, or by 2.2's
/// function of the same name and meaning), and every function the 1.x face defines is
/// declared.
#[test]
fn headers_and_rust_declare_the_same_functions_1x() {
    let h = header_functions("include1");
    let v1: BTreeSet<String> = rust_functions(is_v1).into_iter().map(|f| f.name).collect();
    let kept: BTreeSet<String> =
        rust_functions(|p| !is_v1(p) && !p.components().any(|c| c.as_os_str() == "v3"))
            .into_iter()
            .map(|f| f.name)
            .collect();
    let missing: Vec<_> = h
        .iter()
        .filter(|n| !v1.contains(*n) && !kept.contains(*n))
        .collect();
    let undeclared: Vec<_> = v1.iter().filter(|n| !h.contains(*n)).collect();
    assert!(
        missing.is_empty(),
        "declared in include1, not implemented: {missing:?}"
    );
    assert!(
        undeclared.is_empty(),
        "implemented for 1.x, not declared in include1: {undeclared:?}"
    );
    assert!(h.len() > 40, "only {} functions found", h.len());
}

/// A shadow header of the 1.x face's Rust signatures, compiled with `include1/`: any
/// prototype that disagrees is a "conflicting types" error.
#[test]
fn header_prototypes_match_rust_signatures_1x() {
    let fns = rust_functions(is_v1);
    assert!(fns.len() > 20, "only {} functions", fns.len());
    check_shadow_prototypes("include1", "include/doca-1", &fns, "shadow1");
}

/// The comm channel of DOCA 1.3 as its samples use it, two processes built through the
/// module name `doca-comm-channel`: endpoints made from attributes with no device,
/// blocking calls, a service nobody runs refused, message flags, peer user data and
/// counters, and a non-blocking endpoint waited on through its event channel.
#[test]
fn comm_channel_of_doca_1_3_as_two_processes() {
    let src = crate_dir().join("tests/c1/cc_pair1.c");
    let server = compile_in(
        &prefix().join("lib/pkgconfig/doca-1-dpu"),
        &src,
        "cc_pair1-dpu",
        "doca-common doca-comm-channel",
    );
    let client = compile_in(
        &prefix().join("lib/pkgconfig/doca-1"),
        &src,
        "cc_pair1-host",
        "doca-common doca-comm-channel",
    );
    for (round, engine) in [(0, false), (1, true)] {
        let rt = runtime_dir(&format!("cc-pair1-{round}"));
        let env = [("DOCA_SW_RUNTIME_DIR", rt.as_path())];
        let name = format!("cc1-{round}");
        let mut s = start_side(&server, &["server", &name, "2"], engine, &rt);
        // The client connects once the service listens (1.3's connect fails otherwise):
        // its socket is the only one in this runtime directory.
        let t = std::time::Instant::now();
        while !std::fs::read_dir(rt.join("cc"))
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
        {
            if let Some(st) = s.ended() {
                s.fail(&format!("ended ({st:?}) before listening"));
            }
            assert!(t.elapsed() < std::time::Duration::from_secs(30));
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let out = run_beside(&client, &["client", &name], engine, &env, Some(&mut s));
        assert!(out.contains("6 answers in order"), "{out}");
        let sout = check(&s.finish(), "cc_pair1 server");
        assert!(
            sout.contains("7 messages from 2 clients answered"),
            "{sout}"
        );
    }
}

/// A 1.x project of its own (`tests/c1/tcp_copy`: a C host program and a C++17 DPU
/// program meeting over TCP, the export descriptor passed as JSON text of strlen() + 1
/// bytes and read with json-c) builds unchanged with each of its three build files, as
/// 1.x projects build: CMake's `pkg_check_modules`, meson's `dependency()` and a Makefile
/// calling pkg-config, all asking for `doca-common` and `doca-dma`, with
/// `PKG_CONFIG_PATH` at the 1.x host or DPU directory and warnings as errors. Each build
/// pair then runs: the DPU side copies the host's text by DMA and writes its reply back.
#[test]
fn a_1x_project_builds_with_cmake_meson_and_make_and_runs_over_tcp() {
    for tool in ["cmake", "meson", "ninja", "make", "c++"] {
        assert!(
            have(tool),
            "{tool} is needed to build the 1.x project (apt-get install cmake meson ninja-build make g++)"
        );
    }
    let src = crate_dir().join("tests/c1/tcp_copy");
    let root = scratch().join("tcp_copy");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let build = |tool: &str, side: &str| -> PathBuf {
        let pc = prefix().join("lib/pkgconfig").join(side);
        let dir = root.join(format!("{tool}-{side}"));
        let run = |c: &mut Command, what: &str| {
            let out = c.env("PKG_CONFIG_PATH", &pc).output().unwrap();
            check(&out, &format!("{tool} ({side}): {what}"));
        };
        match tool {
            "cmake" => {
                run(
                    Command::new("cmake")
                        .arg("-S")
                        .arg(&src)
                        .arg("-B")
                        .arg(&dir),
                    "configure",
                );
                run(Command::new("cmake").arg("--build").arg(&dir), "build");
            }
            "meson" => {
                run(
                    Command::new("meson").arg("setup").arg(&dir).arg(&src),
                    "setup",
                );
                run(Command::new("ninja").arg("-C").arg(&dir), "build");
            }
            _ => {
                std::fs::create_dir_all(&dir).unwrap();
                for f in std::fs::read_dir(&src).unwrap() {
                    let f = f.unwrap().path();
                    std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
                }
                run(Command::new("make").arg("-C").arg(&dir), "build");
            }
        }
        dir
    };
    for (round, tool) in ["cmake", "meson", "make"].into_iter().enumerate() {
        let host = build(tool, "doca-1");
        let dpu = build(tool, "doca-1-dpu");
        let (mut r, port) = spawn_listening("dma_receiver", |port| {
            let mut c = default_machine(&dpu.join("dma_receiver"));
            c.args([
                &port.to_string(),
                "03:00.0",
                &format!("reply {round} from the DPU"),
            ]);
            c
        });
        let port = port.to_string();
        let text = format!("text {round} from the host");
        let out = run_beside(
            &host.join("dma_sender"),
            &[&port, "3b:00.0", &text],
            false,
            &[],
            Some(&mut r),
        );
        assert!(
            out.contains(&format!(
                "sender: buffer now holds: reply {round} from the DPU"
            )),
            "{tool}: {out}"
        );
        let rout = check(&r.finish(), "dma_receiver");
        assert!(
            rout.contains(&format!("receiver: received: {text}")),
            "{tool}: {rout}"
        );
        assert!(
            rout.contains("receiver: the host exported 4096 bytes at 0x"),
            "{rout}"
        );
    }
}
