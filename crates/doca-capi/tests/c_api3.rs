//! The 3.x C interface (progress engine and tasks) as a DOCA program sees it: installed
//! beside 2.2's by `scripts/install-capi.sh`, the C tests in `tests/c3/` and the samples
//! in `samples3/` are compiled with strict flags and `pkg-config --cflags --libs
//! doca-common doca-dma` (the DPU flavour from `lib/pkgconfig/dpu`), and run with no
//! topology file and again with engine threads. Drift checks compare `include3/` with
//! the Rust functions.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pkg-config modules a 3.x program of these tests builds with.
const MODULES: &str = "doca-common doca-dma doca-sha doca-erasure-coding doca-argp";

fn is_v3(p: &Path) -> bool {
    p.components().any(|c| c.as_os_str() == "v3")
}

fn build3(name: &str) -> PathBuf {
    compile(
        &crate_dir().join("tests/c3").join(format!("{name}.c")),
        &format!("{name}-3"),
        MODULES,
    )
}

fn run_both3(name: &str) {
    let bin = build3(name);
    for engine in [false, true] {
        let out = run(&bin, &[], engine);
        assert!(out.contains(&format!("{name}: ")), "{out}");
    }
}

#[test]
fn progress_engine_flow() {
    run_both3("pe_flow");
}

#[test]
fn sha_and_erasure_coding_tasks() {
    run_both3("sha_ec3");
}

/// Compress tasks checked against zlib and liblz4 both ways, their checksums, buffer
/// lists and bad input (`tests/c3/compress3.c`), on both engines.
#[test]
fn compress_tasks_against_zlib_and_liblz4() {
    let bin = compile(
        &crate_dir().join("tests/c3/compress3.c"),
        "compress3-3",
        "doca-common doca-compress zlib liblz4",
    );
    for engine in [false, true] {
        let out = run(&bin, &[], engine);
        assert!(out.contains("compress3: ok (11 tasks)"), "{out}");
    }
}

/// AES-GCM tasks checked against OpenSSL's EVP both ways, tampering, keys, lists
/// (`tests/c3/aes_gcm3.c`), on both engines.
#[test]
fn aes_gcm_tasks_against_openssl() {
    let bin = compile(
        &crate_dir().join("tests/c3/aes_gcm3.c"),
        "aes_gcm3-3",
        "doca-common doca-aes-gcm libcrypto",
    );
    for engine in [false, true] {
        let out = run(&bin, &[], engine);
        assert!(out.contains("aes_gcm3: ok (16 tasks)"), "{out}");
    }
}

#[test]
fn sync_event_tasks() {
    run_both3("sync_event3");
}

#[test]
fn graphs_on_a_progress_engine() {
    run_both3("graph3");
}

#[test]
fn clock_and_cache_invalidation() {
    run_both3("clock_advise3");
}

#[test]
fn ctx_and_buf_functions_of_newer_programs() {
    run_both3("ctx_buf_more3");
    // The same program as C++20.
    let bin = compile_cpp_in(
        &prefix().join("lib/pkgconfig"),
        &crate_dir().join("tests/c3/ctx_buf_more3.c"),
        "ctx_buf_more3-cpp",
        MODULES,
    );
    for engine in [false, true] {
        let out = run(&bin, &[], engine);
        assert!(out.contains("ctx_buf_more3: ok"), "{out}");
    }
}

/// Buffers as programs in the wild use them (tasks sharing a destination, results at
/// delivery, empty buffers, data sections outside the buffer or the mmap).
#[test]
fn buffers_as_programs_use_them() {
    run_both3("wild_bufs3");
    // The same program as C++20.
    let bin = compile_cpp_in(
        &prefix().join("lib/pkgconfig"),
        &crate_dir().join("tests/c3/wild_bufs3.c"),
        "wild_bufs3-cpp",
        MODULES,
    );
    for engine in [false, true] {
        let out = run(&bin, &[], engine);
        assert!(out.contains("wild_bufs3: ok"), "{out}");
    }
}

/// argp as DOCA 2.5-3.x programs use it, built as C and as C++: a two-letter short
/// name (`-nd`), `--sdk-log-level` (a standard flag of this generation: it sets the
/// SDK's log level and `doca_argp_get_sdk_log_level` reports it), `-j` files with
/// comments, and the usage text listing the flag.
#[test]
fn argp_of_newer_programs() {
    let src = crate_dir().join("tests/c3/argp3.c");
    let pc = prefix().join("lib/pkgconfig");
    let bins = [
        compile(&src, "argp3", "doca-common doca-argp"),
        compile_cpp_in(&pc, &src, "argp3-cpp", "doca-common doca-argp"),
    ];
    let cfg = scratch().join("argp3.jsonc");
    std::fs::write(
        &cfg,
        "{\n  // as DOCA's argp reads it\n  \"doca_general_flags\": { \"sdk-log-level\": 40, \"log-level\": 60 },\n  /* program flags */\n  \"doca_program_flags\": { \"num-descs\": 7, \"s\": \"from-json\", },\n}\n",
    )
    .unwrap();
    for bin in &bins {
        let out = run(
            bin,
            &["--sdk-log-level", "60", "-nd", "128", "-s", "hello"],
            false,
        );
        assert!(
            out.contains("argp3: nd=128 s=hello") && out.contains("sdk=60 global_sdk=60"),
            "{out}"
        );
        let out = run(bin, &["-j", cfg.to_str().unwrap()], false);
        assert!(
            out.contains("argp3: nd=7 s=from-json log=60 sdk=40 global_sdk=40"),
            "{out}"
        );
        let out = run(bin, &["-h"], false);
        assert!(out.contains("--sdk-log-level"), "{out}");
        assert!(out.contains("-nd, --num-descs"), "{out}");
    }
}

#[test]
fn misuse_table_3x() {
    run_both3("misuse3");
}

/// The 3.x names: what this generation defines, and the 2.2 functions it keeps.
fn names() -> (BTreeSet<String>, BTreeSet<String>) {
    let v3: BTreeSet<String> = rust_functions(is_v3)
        .into_iter()
        .chain(generated_functions())
        .map(|f| f.name)
        .collect();
    let kept: BTreeSet<String> =
        rust_functions(|p| !is_v3(p) && !p.components().any(|c| c.as_os_str() == "v1"))
            .into_iter()
            .map(|f| f.name)
            .collect();
    (v3, kept)
}

/// Every function `include3/` declares is defined (by this generation, by the job
/// generation's function of the same name and meaning, or in C for the variadic
/// logging calls), and every function this generation defines is declared.
#[test]
fn headers_and_rust_declare_the_same_functions_3x() {
    let h = header_functions("include3");
    let (v3, kept) = names();
    let c_defined: BTreeSet<String> = ["doca_log", "doca_log_rate_limit"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let defined: BTreeSet<String> = v3.union(&kept).cloned().chain(c_defined).collect();
    let missing: Vec<_> = h.difference(&defined).collect();
    let undeclared: Vec<_> = v3
        .iter()
        .filter(|n| !h.contains(*n) && n.as_str() != "doca_capi_log_text3")
        .collect();
    assert!(
        missing.is_empty(),
        "declared in include3, not implemented: {missing:?}"
    );
    assert!(
        undeclared.is_empty(),
        "implemented for 3.x, not declared in include3: {undeclared:?}"
    );
    assert!(h.len() > 100, "only {} functions found", h.len());
}

/// A shadow header of this generation's Rust signatures, compiled with `include3/`:
/// any prototype that disagrees is a "conflicting types" error.
#[test]
fn header_prototypes_match_rust_signatures_3x() {
    let fns: Vec<RustFn> = rust_functions(is_v3)
        .into_iter()
        .chain(generated_functions())
        .filter(|f| f.name != "doca_capi_log_text3")
        .collect();
    assert!(fns.len() > 60, "only {} functions", fns.len());
    check_shadow_prototypes("include3", "include/doca-3", &fns, "shadow3");
}

/// Every declared function links from the installed 3.x library, and the names both
/// generations use resolve to this generation's functions there.
#[test]
fn every_declared_function_is_exported_3x() {
    let mut text = String::from("#include <stddef.h>\n");
    text.push_str(&include_all("include3"));
    let names = header_functions("include3");
    text.push_str("static void *const fns[] = {\n");
    for n in &names {
        text.push_str(&format!("\t(void *)&{n},\n"));
    }
    text.push_str(
        "};\nint main(void)\n{\n\tstruct doca_mmap *m = NULL;\n\tfor (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)\n\t\tif (fns[i] == NULL)\n\t\t\treturn 1;\n\t/* The 3.x doca_mmap_create takes one argument. */\n\tif (doca_mmap_create(&m) != DOCA_SUCCESS || doca_mmap_destroy(m) != DOCA_SUCCESS)\n\t\treturn 2;\n\treturn 0;\n}\n",
    );
    let src = scratch().join("exports3.c");
    let bin = scratch().join("bin/exports3");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::write(&src, text).unwrap();
    let modules = "doca-common doca-argp doca-dma doca-erasure-coding doca-sha doca-comch";
    let out = Command::new("cc")
        .args(STRICT)
        .args(["-Wno-pedantic", "-o"])
        .arg(&bin)
        .arg(&src)
        .args(pkg_flags(modules))
        .output()
        .unwrap();
    check(&out, "linking every declared 3.x function");
    check(&Command::new(&bin).output().unwrap(), "exports3");
    // The 3.x library exports no doca3__ or doca22__ names.
    if have("nm") {
        let lib = prefix().join("lib/doca-3/libdoca_common.so.3");
        let out = check(
            &Command::new("nm")
                .args(["-D", "--defined-only"])
                .arg(&lib)
                .output()
                .unwrap(),
            "nm",
        );
        assert!(
            !out.contains(" doca3__") && !out.contains(" doca22__"),
            "internal names exported"
        );
    }
}

/// The headers as a C++ program includes them.
#[test]
fn headers_compile_as_cpp_3x() {
    if !have("c++") {
        eprintln!("SKIPPED: no C++ compiler");
        return;
    }
    let src = scratch().join("all3.cpp");
    std::fs::create_dir_all(src.parent().unwrap()).unwrap();
    let mut text = String::new();
    text.push_str(&include_all("include3"));
    text.push_str(
        "DOCA_LOG_REGISTER(CPP);\nint main() { DOCA_LOG_INFO(\"x %d\", 1); return 0; }\n",
    );
    std::fs::write(&src, text).unwrap();
    let out = Command::new("c++")
        .args(["-Wall", "-Wextra", "-Werror", "-c", "-o"])
        .arg(scratch().join("all3.o"))
        .arg(&src)
        .arg(format!("-I{}", prefix().join("include/doca-3").display()))
        .output()
        .unwrap();
    check(&out, "C++ compile of the 3.x headers");
}

/// The DPU-side sample, built with `lib/pkgconfig/dpu` through pkg-config and through
/// its own meson.build (`dependency('doca-common')`), runs as the DPU side with default
/// arguments; the host build refuses to run, as DOCA's sample does.
#[test]
fn dma_local_copy_sample_3x() {
    let sample = crate_dir().join("samples3/dma_local_copy");
    let pc = prefix().join("lib/pkgconfig/dpu");
    let bin = scratch().join("bin/dma_local_copy3");
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs"])
        .args(MODULES.split_whitespace())
        .env("PKG_CONFIG_PATH", &pc)
        .output()
        .unwrap();
    let flags = check(&flags, "pkg-config (dpu)");
    let out = Command::new("cc")
        .args(STRICT)
        .arg(sample.join("dma_local_copy.c"))
        .arg("-o")
        .arg(&bin)
        .args(flags.split_whitespace())
        .output()
        .unwrap();
    check(&out, "compiling the 3.x dma_local_copy sample");
    let out = run(&bin, &[], false);
    assert!(out.contains("memory copied and verified"), "{out}");
    let out = run(&bin, &[], true);
    assert!(out.contains("memory copied and verified"), "{out}");

    let host = compile(
        &sample.join("dma_local_copy.c"),
        "dma_local_copy3-host",
        MODULES,
    );
    let o = Command::new(&host)
        .env_remove("DOCA_SW_TOPOLOGY")
        .env_remove("DOCA_SW_ROLE")
        .output()
        .unwrap();
    assert!(!o.status.success(), "the host build must refuse to run");

    if !have("meson") || !have("ninja") {
        eprintln!("SKIPPED: meson or ninja is not installed");
        return;
    }
    let dir = scratch().join("meson-sample3");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["meson.build", "dma_local_copy.c"] {
        std::fs::copy(sample.join(f), dir.join(f)).unwrap();
    }
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
    let out = run(&dir.join("build/dma_local_copy"), &[], false);
    assert!(out.contains("memory copied and verified"), "{out}");
}

/// A 3.x program linked against the static library.
#[test]
fn static_library_links_3x() {
    let lib = prefix().join("lib/doca-3");
    let bin = scratch().join("bin/pe_flow-static");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    let out = Command::new("cc")
        .args(STRICT)
        .arg(crate_dir().join("tests/c3/pe_flow.c"))
        .arg(format!("-I{}", prefix().join("include/doca-3").display()))
        .arg("-o")
        .arg(&bin)
        .arg(lib.join("libdoca_common.a"))
        .args(["-lucp", "-lucs", "-lpthread", "-ldl", "-lm"])
        .output()
        .unwrap();
    check(&out, "static link");
    let out = run(&bin, &[], false);
    assert!(out.contains("pe_flow: ok"), "{out}");
}

/// A comch server (DPU build) and client (host build) as two processes, in both start
/// orders and with engine threads: every echo whole and in order, and the server's
/// last message (sent just before it stops) reaches the client before the end of the
/// connection.
#[test]
fn comch_pair_3x() {
    const COMCH: &str = "doca-common doca-comch";
    let src = crate_dir().join("tests/c3/comch_pair3.c");
    let client = compile(&src, "comch_pair3-host", COMCH);
    let server = compile_in(
        &prefix().join("lib/pkgconfig/dpu"),
        &src,
        "comch_pair3-dpu",
        COMCH,
    );
    let rt = runtime_dir("comch3");
    let env = [("DOCA_SW_RUNTIME_DIR", rt.as_path())];
    for (round, engine) in [(0, false), (1, false), (2, true)] {
        let name = format!("pair-{round}");
        if round == 1 {
            // The client first: it keeps starting until the server is there.
            let mut c = start_side(&client, &[&name, "300"], engine, &rt);
            std::thread::sleep(std::time::Duration::from_millis(100));
            let out = run_beside(&server, &[&name, "300"], engine, &env, Some(&mut c));
            assert!(out.contains("300 messages echoed"), "{out}");
            let cout = check(&c.finish(), "comch client");
            assert!(cout.contains("300 echoes in order"), "{cout}");
        } else {
            let mut s = start_side(&server, &[&name, "300"], engine, &rt);
            let out = run_beside(&client, &[&name, "300"], engine, &env, Some(&mut s));
            assert!(
                out.contains("300 echoes in order, bye-ack before the end"),
                "{out}"
            );
            let sout = check(&s.finish(), "comch server");
            assert!(sout.contains("300 messages echoed"), "{sout}");
        }
    }
}

/// The comch pair under DOCA 2.6's names (`doca_cc.h`, pkg-config `doca-cc`), as a
/// DOCA 2.6 program writes it: the same echoes, in order, on both engines.
#[test]
fn comch_pair_under_its_26_names() {
    const CC: &str = "doca-common doca-cc";
    let src = crate_dir().join("tests/c3/cc_pair26.c");
    let client = compile(&src, "cc_pair26-host", CC);
    let server = compile_in(
        &prefix().join("lib/pkgconfig/dpu"),
        &src,
        "cc_pair26-dpu",
        CC,
    );
    let rt = runtime_dir("cc26");
    let env = [("DOCA_SW_RUNTIME_DIR", rt.as_path())];
    for (round, engine) in [(0, false), (1, true)] {
        let name = format!("cc26-{round}");
        let mut s = start_side(&server, &[&name, "200"], engine, &rt);
        let out = run_beside(&client, &[&name, "200"], engine, &env, Some(&mut s));
        assert!(out.contains("200 echoes in order"), "{out}");
        let sout = check(&s.finish(), "cc server");
        assert!(sout.contains("200 messages echoed"), "{sout}");
    }
}

/// comch's fast path as two processes: the host's consumer (on an engine of its own)
/// receives every buffer the DPU side's producer sends, whole, in order, with its
/// immediate data; with engine threads too.
#[test]
fn comch_fast_path_3x() {
    const COMCH: &str = "doca-common doca-comch";
    let src = crate_dir().join("tests/c3/comch_fast3.c");
    let client = compile(&src, "comch_fast3-host", COMCH);
    let server = compile_in(
        &prefix().join("lib/pkgconfig/dpu"),
        &src,
        "comch_fast3-dpu",
        COMCH,
    );
    let rt = runtime_dir("comch-fast3");
    let env = [("DOCA_SW_RUNTIME_DIR", rt.as_path())];
    for (round, engine) in [(0, false), (1, true)] {
        let name = format!("fast-{round}");
        let mut s = start_side(&server, &[&name, "2000"], engine, &rt);
        let out = run_beside(&client, &[&name, "2000"], engine, &env, Some(&mut s));
        assert!(out.contains("2000 buffers consumed in order"), "{out}");
        let sout = check(&s.finish(), "comch fast path server");
        assert!(sout.contains("2000 buffers produced"), "{sout}");
    }
}

/// Memory and events across the PCIe link in 3.x, as two processes: the host exports an
/// mmap and a sync event over comch, the DPU side DMAs into the host's memory and
/// signals the event, the host waits for it and checks its bytes; with engine threads
/// too.
#[test]
fn memory_and_events_across_the_link_3x() {
    const MODS: &str = "doca-common doca-comch doca-dma";
    let src = crate_dir().join("tests/c3/xside3.c");
    let host = compile(&src, "xside3-host", MODS);
    let dpu = compile_in(
        &prefix().join("lib/pkgconfig/dpu"),
        &src,
        "xside3-dpu",
        MODS,
    );
    let rt = runtime_dir("xside3");
    let env = [("DOCA_SW_RUNTIME_DIR", rt.as_path())];
    for (round, engine) in [(0, false), (1, true)] {
        let name = format!("xside-{round}");
        let mut d = start_side(&dpu, &[&name], engine, &rt);
        let out = run_beside(&host, &[&name], engine, &env, Some(&mut d));
        assert!(out.contains("the DPU side's bytes arrived"), "{out}");
        let dout = check(&d.finish(), "xside3 dpu");
        assert!(dout.contains("signalled its event"), "{dout}");
    }
}

/// A DOCA 2.5/2.6-style program as two processes: the 2.x comm channel carries an mmap's
/// and a sync event's descriptors while a DMA task and a sync event wait task run on
/// progress engines; inline and with engine threads.
#[test]
fn legacy_comm_channel_beside_the_progress_engine_3x() {
    const MODS: &str = "doca-common doca-comm-channel doca-dma";
    let src = crate_dir().join("tests/c3/cc_legacy3.c");
    let host = compile(&src, "cc_legacy3-host", MODS);
    let dpu = compile_in(
        &prefix().join("lib/pkgconfig/dpu"),
        &src,
        "cc_legacy3-dpu",
        MODS,
    );
    // The host side also as C++20, as programs of that time are written too.
    let host_cpp = compile_cpp_in(
        &prefix().join("lib/pkgconfig"),
        &src,
        "cc_legacy3-host-cpp",
        MODS,
    );
    let rt = runtime_dir("cc_legacy3");
    let env = [("DOCA_SW_RUNTIME_DIR", rt.as_path())];
    for (round, engine) in [(0, false), (1, true), (2, false)] {
        let name = format!("cc-legacy-{round}");
        let host = if round == 2 { &host_cpp } else { &host };
        let mut d = start_side(&dpu, &[&name], engine, &rt);
        let out = run_beside(host, &[&name], engine, &env, Some(&mut d));
        assert!(out.contains("its event was seen, and it answered"), "{out}");
        let dout = check(&d.finish(), "cc_legacy3 dpu");
        assert!(dout.contains("signalled its event"), "{dout}");
    }
}

/// RDMA between two processes, as DOCA's samples use it: every task type, atomics and
/// remote net sync events, a damaged descriptor, a permission the export does not
/// grant, and memory after its revocation; inline and with engine threads; and across
/// two network namespaces (UCX over TCP, as between two machines) where they can be
/// made.
#[test]
fn rdma_pair_3x() {
    const RDMA: &str = "doca-common doca-rdma";
    let src = crate_dir().join("tests/c3/rdma_pair3.c");
    let bin = compile(&src, "rdma_pair3", RDMA);
    run_rdma_pair(&bin, "rdma3");
}

/// Both layers of RDMA access control in 3.x (`tests/c3/rdma_perms3.c`): eight
/// responder contexts, one per combination of the RDMA read, write and atomic flags,
/// against memory exported with each combination; every read, write, fetch-and-add and
/// compare-and-swap lands only where both allow it, remote-net sync event sets, adds and
/// gets only where the context allows a write, an atomic, a read; the rest end with
/// `NOT_PERMITTED` and touch nothing (the responder checks every byte). Inline, with
/// engine threads, with shared memory (where the requester copies itself), and across
/// two network namespaces.
#[test]
fn rdma_permissions_both_layers_3x() {
    const RDMA: &str = "doca-common doca-rdma";
    let src = crate_dir().join("tests/c3/rdma_perms3.c");
    let bin = compile(&src, "rdma_perms3", RDMA);
    run_pair_everywhere(
        &bin,
        "perms3",
        ["responder", "requester"],
        [
            "every combination checked",
            "248 operations, 172 refused with DOCA_ERROR_NOT_PERMITTED",
        ],
    );
}

/// The stand-in of DOCA's storage reference application (`tests/cpp/storage_standin.cpp`,
/// C++17, host and DPU flavours): what it runs and where.
struct Storage {
    host: PathBuf,
    dpu: PathBuf,
    dir: PathBuf,
    rt: PathBuf,
}

impl Storage {
    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_owned()
    }

    /// Storage targets serving `files` (in the namespace `ns`, when given); their
    /// addresses.
    fn targets(&self, files: &[&str], ns: Option<(&str, &str)>) -> (Vec<Running>, Vec<String>) {
        let mut run = Vec::new();
        let mut addrs = Vec::new();
        for f in files {
            let file = self.path(f);
            let (t, port) = spawn_listening(&format!("storage target {f}"), |port| {
                let port = port.to_string();
                let mut c = match ns {
                    Some((ns, _)) => {
                        let mut c = Command::new("ip");
                        c.args(["netns", "exec", ns, "env", "UCX_TLS=tcp"])
                            .arg(&self.host);
                        c
                    }
                    None => Command::new(&self.host),
                };
                c.args(["target", &port, &file])
                    .env_remove("DOCA_SW_TOPOLOGY")
                    .env_remove("DOCA_SW_ROLE")
                    .env("DOCA_SW_RUNTIME_DIR", &self.rt);
                c
            });
            run.push(t);
            addrs.push(format!("{}:{port}", ns.map_or("127.0.0.1", |n| n.1)));
        }
        (run, addrs)
    }

    /// The DPU service (`args` after "service"), with engine threads or not, in the
    /// namespace `ns` (its interface) when given.
    fn service(&self, args: &[&str], engine: bool, ns: Option<(&str, &str)>) -> Running {
        let mut c = match ns {
            Some((ns, dev)) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "env", "UCX_TLS=tcp"])
                    .arg(format!("UCX_NET_DEVICES={dev}"))
                    .arg(&self.dpu);
                c
            }
            None => Command::new(&self.dpu),
        };
        c.arg("service")
            .args(args)
            .env_remove("DOCA_SW_TOPOLOGY")
            .env_remove("DOCA_SW_ROLE")
            .env("DOCA_SW_RUNTIME_DIR", &self.rt);
        if engine {
            c.env("DOCA_SW_TOPOLOGY", engine_topology());
        }
        Running::spawn(c, &format!("storage service {args:?}"))
    }

    /// The host initiator in the background, writing its progress to `progress`.
    fn initiator(&self, args: &[&str], progress: &Path) -> Running {
        let _ = std::fs::remove_file(progress);
        let mut c = Command::new(&self.host);
        c.arg("initiator")
            .args(args)
            .env_remove("DOCA_SW_TOPOLOGY")
            .env_remove("DOCA_SW_ROLE")
            .env("DOCA_SW_RUNTIME_DIR", &self.rt)
            .env("STANDIN_PROGRESS", progress);
        Running::spawn(c, &format!("storage initiator {args:?}"))
    }

    /// Waits until the initiator has `n` blocks done (fails if it ends first).
    fn wait_progress(&self, ini: &mut Running, progress: &Path, n: u64) {
        let t = std::time::Instant::now();
        loop {
            let done = std::fs::read_to_string(progress)
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0);
            if done >= n {
                return;
            }
            if let Some(st) = ini.ended() {
                ini.fail(&format!("ended ({st:?}) before {n} blocks were done"));
            }
            if t.elapsed() > std::time::Duration::from_secs(120) {
                ini.fail(&format!("did not get {n} blocks done within 120 s"));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Everything a finished program printed.
fn all_output(r: Running) -> (Option<i32>, String) {
    let o = r.finish();
    (
        o.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// Targets end by themselves once their service has gone.
fn targets_end(ts: Vec<Running>) {
    for t in ts {
        let (code, out) = all_output(t);
        assert_eq!(code, Some(0), "{out}");
        assert!(out.contains("the service left"), "{out}");
    }
}

/// DOCA's storage reference application has a stand-in of our own in C++17 (host
/// initiator over comch, DPU service, storage targets over RDMA through the connection
/// manager), so that both of its topologies and their faults run wherever the tests do:
/// gga offload (each block's halves on two targets and their parity on a third, both
/// matrix types, EC recovery of every, every second and no block, with engine threads
/// too) and zero copy (a target writes into and reads from the host's memory through
/// the DPU's export of it); a data target killed mid-read (every block still comes back
/// right, rebuilt from the other two), the service killed (the initiator ends at once
/// with a clear error), the zero-copy target killed (the initiator reports the failed
/// blocks and ends); and across network namespaces where they can be made.
#[test]
fn storage_application_stand_ins_3x() {
    const MODS: &str = "doca-common doca-comch doca-dma doca-rdma doca-erasure-coding";
    let src = crate_dir().join("tests/cpp/storage_standin.cpp");
    let host = compile_cpp_std_in(
        &prefix().join("lib/pkgconfig"),
        &src,
        "storage_standin-host",
        MODS,
        "c++17",
    );
    let dpu = compile_cpp_std_in(
        &prefix().join("lib/pkgconfig/dpu"),
        &src,
        "storage_standin-dpu",
        MODS,
        "c++17",
    );
    let dir = scratch().join("storage-standin");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let st = Storage {
        host,
        dpu,
        rt: runtime_dir("storage-standin"),
        dir,
    };
    const BLOCK: usize = 4096;
    const BLOCKS: usize = 64;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let data: Vec<u8> = (0..BLOCK * BLOCKS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(st.dir.join("file"), &data).unwrap();
    std::fs::write(st.dir.join("zeros"), vec![0u8; BLOCK * 32]).unwrap();
    let file = st.path("file");
    let progress = st.dir.join("progress");
    let env = [("DOCA_SW_RUNTIME_DIR", st.rt.as_path())];

    for matrix in ["vandermonde", "cauchy"] {
        let sub = st.dir.join(matrix);
        std::fs::create_dir_all(&sub).unwrap();
        let out = run(
            &st.host,
            &["split", &file, sub.to_str().unwrap(), "4096", matrix],
            false,
        );
        assert!(out.contains("64 blocks of 4096 bytes"), "{out}");
    }
    let parts = |m: &str| {
        [
            format!("{m}/data1"),
            format!("{m}/data2"),
            format!("{m}/parity"),
        ]
    };

    // gga offload: (matrix, recover every n-th read, engine threads, blocks rebuilt of
    // the 128 reads).
    for (round, (matrix, every, engine, rebuilt)) in [
        ("vandermonde", 1, false, 128),
        ("vandermonde", 2, false, 64),
        ("vandermonde", 0, false, 0),
        ("cauchy", 1, false, 128),
        ("cauchy", 3, true, 42),
    ]
    .into_iter()
    .enumerate()
    {
        let p = parts(matrix);
        let (ts, addrs) = st.targets(&[&p[0], &p[1], &p[2]], None);
        let name = format!("gga-{round}");
        let every = every.to_string();
        let mut args = vec!["gga", &name, "4096", matrix, &every];
        args.extend(addrs.iter().map(String::as_str));
        let mut svc = st.service(&args, engine, None);
        let out = run_beside(
            &st.host,
            &["initiator", &name, "read", &file, "4096", "2"],
            engine,
            &env,
            Some(&mut svc),
        );
        assert!(out.contains("128 requests answered"), "{out}");
        assert!(out.contains(", 0 failed; every block"), "{out}");
        let (code, sout) = all_output(svc);
        assert_eq!(code, Some(0), "{sout}");
        assert!(
            sout.contains(&format!("128 requests, {rebuilt} blocks rebuilt by EC")),
            "{sout}"
        );
        targets_end(ts);
    }

    // Zero copy: blocks written through the target into storage and read back, then a
    // file's blocks read.
    for (store, args) in [
        ("zeros", vec!["write-read", "32", "4096", "2"]),
        ("file", vec!["read", file.as_str(), "4096", "2"]),
    ] {
        let (ts, addrs) = st.targets(&[store], None);
        let name = format!("zc-{store}");
        let mut svc = st.service(&["zc", &name, "4096", &addrs[0]], false, None);
        let mut a = vec!["initiator", name.as_str()];
        a.extend(args.iter().copied());
        let out = run_beside(&st.host, &a, false, &env, Some(&mut svc));
        assert!(out.contains(", 0 failed; every block"), "{out}");
        let (code, sout) = all_output(svc);
        assert_eq!(code, Some(0), "{sout}");
        targets_end(ts);
    }

    // The initiator's check can fail: a target holding other bytes than the file.
    {
        let (ts, addrs) = st.targets(&["zeros"], None);
        let svc = st.service(&["zc", "wrong", "4096", &addrs[0]], false, None);
        let ini = st.initiator(&["wrong", "read", &file, "4096", "1"], &progress);
        let (code, out) = all_output(ini);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains("block 0, byte 0: read 0, expected"), "{out}");
        let (code, sout) = all_output(svc);
        assert_eq!(code, Some(0), "{sout}");
        targets_end(ts);
    }

    // Fault: the data-2 target killed in the middle of a long read; every block still
    // comes back right.
    {
        let p = parts("vandermonde");
        let (mut ts, addrs) = st.targets(&[&p[0], &p[1], &p[2]], None);
        let mut args = vec!["gga", "fault-t", "4096", "vandermonde", "0"];
        args.extend(addrs.iter().map(String::as_str));
        let mut svc = st.service(&args, false, None);
        let mut ini = st.initiator(&["fault-t", "read", &file, "4096", "40"], &progress);
        st.wait_progress(&mut ini, &progress, 200);
        let pid = svc.child.id().to_string();
        let before = doca_testkit::held_in(&pid);
        let _ = ts[1].child.kill();
        assert!(
            svc.wait_printed("(data-2) lost", std::time::Duration::from_secs(1)),
            "the service did not report the lost target within a second"
        );
        // A thousand blocks later, served with one target fewer, the service holds no
        // more than it did with three.
        st.wait_progress(&mut ini, &progress, 1200);
        let after = doca_testkit::held_in(&pid);
        assert!(
            after.0 <= before.0 && after.1 <= before.1 && after.2 <= before.2,
            "descriptors, threads, shared mappings: {before:?} before the loss, {after:?} after"
        );
        eprintln!("storage service: {before:?} before the target's loss, {after:?} after");
        let (code, out) = all_output(ini);
        assert_eq!(code, Some(0), "{out}");
        assert!(out.contains("2560 requests answered"), "{out}");
        assert!(out.contains(", 0 failed; every block"), "{out}");
        let (code, sout) = all_output(svc);
        assert_eq!(code, Some(0), "{sout}");
        assert!(sout.contains("(data-2) lost"), "{sout}");
        assert!(!sout.contains(" 0 blocks rebuilt"), "{sout}");
        let dead = ts.remove(1);
        drop(dead);
        targets_end(ts);
    }

    // Fault: the service killed mid-read; the initiator ends at once, saying so.
    {
        let p = parts("vandermonde");
        let (ts, addrs) = st.targets(&[&p[0], &p[1], &p[2]], None);
        let mut args = vec!["gga", "fault-s", "4096", "vandermonde", "2"];
        args.extend(addrs.iter().map(String::as_str));
        let mut svc = st.service(&args, false, None);
        let mut ini = st.initiator(&["fault-s", "read", &file, "4096", "1000"], &progress);
        st.wait_progress(&mut ini, &progress, 200);
        let _ = svc.child.kill();
        let killed = std::time::Instant::now();
        let ended = ini.wait_printed(
            "the channel to the service ended",
            std::time::Duration::from_secs(1),
        );
        let (code, out) = all_output(ini);
        assert!(
            ended,
            "the initiator did not report the service's end within a second ({:?}): {out}",
            killed.elapsed()
        );
        assert_eq!(code, Some(3), "{out}");
        assert!(
            out.contains("the channel to the service ended")
                || out.contains("the service did not answer"),
            "{out}"
        );
        drop(svc);
        targets_end(ts);
    }

    // Fault: the zero-copy target killed; the service answers each request with the
    // failure, and the initiator reports them and ends.
    {
        let (mut ts, addrs) = st.targets(&["file"], None);
        let mut svc = st.service(&["zc", "fault-z", "4096", &addrs[0]], false, None);
        let mut ini = st.initiator(&["fault-z", "read", &file, "4096", "1000"], &progress);
        st.wait_progress(&mut ini, &progress, 200);
        let _ = ts[0].child.kill();
        assert!(
            svc.wait_printed("the storage target at", std::time::Duration::from_secs(1)),
            "the service did not report the lost target within a second"
        );
        let (code, out) = all_output(ini);
        assert_eq!(code, Some(2), "{out}");
        assert!(out.contains("the storage target is lost"), "{out}");
        let (code, sout) = all_output(svc);
        assert_eq!(code, Some(0), "{sout}");
    }

    // Across machines: the targets in one namespace, the service in another (UCX over
    // TCP between them), the host beside it.
    let Some(pair) = doca_testkit::netns::NetPair::new("stsi") else {
        return;
    };
    let p = parts("cauchy");
    let (ts, addrs) = st.targets(
        &[&p[0], &p[1], &p[2]],
        Some((pair.ns[1].as_str(), pair.addr[1].as_str())),
    );
    let mut args = vec!["gga", "netns", "4096", "cauchy", "2"];
    args.extend(addrs.iter().map(String::as_str));
    let mut svc = st.service(
        &args,
        false,
        Some((pair.ns[0].as_str(), pair.dev[0].as_str())),
    );
    let out = run_beside(
        &st.host,
        &["initiator", "netns", "read", &file, "4096", "2"],
        false,
        &env,
        Some(&mut svc),
    );
    assert!(out.contains(", 0 failed; every block"), "{out}");
    let (code, sout) = all_output(svc);
    assert_eq!(code, Some(0), "{sout}");
    assert!(sout.contains("64 blocks rebuilt by EC"), "{sout}");
    targets_end(ts);
}
