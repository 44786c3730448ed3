//! The DOCA 1.5 C interface as a 1.5 program sees it: 2.2's headers with
//! `include/doca-1.5/` first (which adds the 1.5 declarations) and the 1.5 library
//! `lib/doca-1.5/`, through the module names 1.5 projects ask for in
//! `lib/pkgconfig/doca-1.5` (and `doca-1.5-dpu`). `tests/c15/dma15.c` is written as
//! 1.5's samples are and built with strict flags, in C and in C++.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

fn dir(flavour: &str) -> PathBuf {
    prefix().join("lib/pkgconfig").join(flavour)
}

fn src() -> PathBuf {
    crate_dir().join("tests/c15/dma15.c")
}

/// A local copy on the DPU side: the map started before it gets its device and two
/// ranges, a third range refused, data set on the source, a memcpy job, a second memcpy
/// into the same destination written over the first (1.5 ignores an output buffer's
/// data length), the ranges handed back through their free callback once the map is
/// gone.
#[test]
fn local_dma_copy_as_1_5_samples_do_it() {
    let c = compile_in(
        &dir("doca-1.5-dpu"),
        &src(),
        "dma15-dpu",
        "doca-common doca-dma",
    );
    let cpp = compile_cpp_in(
        &dir("doca-1.5-dpu"),
        &src(),
        "dma15-dpu-cpp",
        "doca-common doca-dma",
    );
    for bin in [&c, &cpp] {
        for engine in [false, true] {
            let out = run(bin, &["local"], engine);
            assert!(
                out.contains("dma15: DOCA 1.5.1007 (headers 1.5.1007)"),
                "{out}"
            );
            assert!(out.contains("a third chunk: DOCA_ERROR_NO_MEMORY"), "{out}");
            assert!(out.contains("max chunks 2"), "{out}");
            assert!(
                out.contains("copied 30 bytes: This is a sample piece of text"),
                "{out}"
            );
            assert!(
                out.contains(
                    "copied again into the same destination: 14 bytes, data length 15: RRRRRRRRRRRRRR\n"
                ),
                "{out}"
            );
            assert!(
                out.contains("export on this side: DOCA_ERROR_NOT_SUPPORTED"),
                "{out}"
            );
            assert!(out.contains("ranges freed 2"), "{out}");
        }
    }
    let out = run(&c, &["local", "-t", "another text"], false);
    assert!(out.contains("copied 12 bytes: another text"), "{out}");
    let o = default_machine(&c)
        .args(["local", "-p", "7f:00.0"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("No DMA device at 7f:00.0"));
}

/// Host and DPU as two processes: the host exports its map (once: a second export is
/// refused) and writes the descriptor and its buffer's address to files; the DPU side
/// finds its representor by `struct doca_pci_bdf`, maps the export, reads the host's
/// text by DMA and writes its reply back. Once the host has ended, its export is gone.
#[test]
fn host_to_dpu_dma_through_an_export_1_5() {
    let host = compile_in(
        &dir("doca-1.5"),
        &src(),
        "dma15-host",
        "doca-common doca-dma",
    );
    let dpu = compile_in(
        &dir("doca-1.5-dpu"),
        &src(),
        "dma15-dpu2",
        "doca-common doca-dma",
    );
    let d = scratch().join("dma-pair15");
    std::fs::create_dir_all(&d).unwrap();
    let ds = d.display().to_string();
    let info = d.join("buffer15.txt");
    for (engine, reply) in [(false, "reply from the DPU"), (true, "second reply")] {
        let _ = std::fs::remove_file(&info);
        let _ = std::fs::remove_file(d.join("desc15.bin"));
        let mut h = start_host(&host, &["host", "-d", &ds], engine, &info, "dma15 host");
        let out = run_beside(
            &dpu,
            &["dpu", "-d", &ds, "-w", reply],
            engine,
            &[],
            Some(&mut h),
        );
        assert!(out.contains("dma15: representor b1:00.0"), "{out}");
        assert!(
            out.contains("dma15: Memory content: This is a sample piece of text"),
            "{out}"
        );
        assert!(out.contains("wrote back into host memory"), "{out}");
        h.child.stdin.take().unwrap().write_all(b"\n").unwrap();
        let hout = check(&h.finish(), "dma15 host");
        assert!(
            hout.contains("second export: DOCA_ERROR_NOT_PERMITTED"),
            "{hout}"
        );
        assert!(
            hout.contains(&format!("dma15: Memory content: {reply}")),
            "{hout}"
        );
        assert_export_refused(&dpu, &["dpu", "-d", &ds]);
    }
}

/// The 1.5 module names give the 1.5 headers and library, never 2.2's or 3.x's alone;
/// the modules of the 1.5 libraries this SDK does not implement add nothing, so a
/// program that includes their header stops there.
#[test]
fn the_1_5_module_names() {
    for flavour in ["doca-1.5", "doca-1.5-dpu"] {
        let flags = pkg_config_in(
            &dir(flavour),
            &[
                "--cflags",
                "--libs",
                "doca-common",
                "doca-dma",
                "doca-comm-channel",
            ],
        );
        let inc = format!("-I{}", prefix().join("include/doca-1.5").display());
        assert_eq!(flags.first(), Some(&inc), "{flags:?}");
        let lib = format!("-L{}", prefix().join("lib/doca-1.5").display());
        assert!(flags.contains(&lib), "{flags:?}");
        let absent = pkg_config_in(&dir(flavour), &["--cflags", "--libs", "doca-flow"]);
        assert!(absent.is_empty(), "{absent:?}");
    }
    let s = scratch().join("flow15.c");
    std::fs::write(&s, "#include <doca_flow.h>\nint main(void) { return 0; }\n").unwrap();
    let out = Command::new("cc")
        .arg(&s)
        .args(["-o", "/dev/null"])
        .args(pkg_config_in(
            &dir("doca-1.5"),
            &["--cflags", "--libs", "doca-common", "doca-flow"],
        ))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("doca_flow.h"));
}

/// Every function the 2.2 headers declare, and those they declare for 1.5, is exported
/// by the 1.5 library, and no `doca15__` link name leaks out.
#[test]
fn the_1_5_library_exports_what_its_headers_declare() {
    let declared: BTreeSet<String> = header_functions("include")
        .into_iter()
        .chain(header_functions_15("include"))
        .filter(|n| {
            !matches!(
                n.as_str(),
                "doca_log" | "doca_log_developer" | "doca_log_rate_limit"
            )
        })
        .collect();
    assert!(header_functions_15("include").len() >= 8);
    let out = check(
        &Command::new("nm")
            .args(["-D", "--defined-only"])
            .arg(prefix().join("lib/doca-1.5/libdoca_common.so.1"))
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
    assert!(!exported.iter().any(|n| n.starts_with("doca15__")));
}

/// The 1.5 declarations are implemented (by the 1.5 face or by the 1.x names it shares),
/// and a shadow header of the 1.5 face's Rust signatures agrees with them.
#[test]
fn header_prototypes_match_rust_signatures_1_5() {
    let h = header_functions_15("include");
    let rust: BTreeSet<String> = rust_functions(|p| !p.components().any(|c| c.as_os_str() == "v3"))
        .into_iter()
        .map(|f| f.name)
        .collect();
    let missing: Vec<_> = h.iter().filter(|n| !rust.contains(*n)).collect();
    assert!(
        missing.is_empty(),
        "declared for 1.5, not implemented: {missing:?}"
    );
    let fns = rust_functions(|p| p.ends_with("v15.rs"));
    assert!(fns.len() >= 6, "only {} functions", fns.len());
    check_shadow_prototypes_with("include", "include", &fns, "shadow15", &["-DDOCA_API_1_5"]);
}
