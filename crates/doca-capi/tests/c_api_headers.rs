//! The DOCA 2.2 headers as programs see them: they compile as C and C++, link statically,
//! warn where DOCA marks a symbol experimental, declare exactly the functions Rust
//! defines with the same prototypes, export every one, and include what DOCA 2.2's
//! headers include.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The 2.2 generation's sources: everything but the task generation's (`src/v3/`).
fn is_v22(p: &Path) -> bool {
    !p.components()
        .any(|c| c.as_os_str() == "v3" || c.as_os_str() == "v1")
        && !p.ends_with("v15.rs")
}

/// A program linked against the static library.
#[test]
fn static_library_links() {
    let p = prefix();
    let bin = scratch().join("bin/dma_sha_static");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    let mut c = Command::new("cc");
    c.args(STRICT)
        .arg(crate_dir().join("tests/c/dma_sha.c"))
        .arg("-o")
        .arg(&bin)
        .args(pkg_config(&["--cflags", "doca"]))
        .arg(p.join("lib/libdoca_common.a"))
        .args(
            pkg_config(&["--static", "--libs-only-l", "doca-libs"])
                .iter()
                .filter(|l| !l.starts_with("-ldoca")),
        );
    check(&c.output().unwrap(), "static link");
    let ldd = Command::new("ldd").arg(&bin).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&ldd.stdout).contains("libdoca"),
        "linked dynamically"
    );
    let out = Command::new(&bin)
        .env_remove("DOCA_SW_TOPOLOGY")
        .output()
        .unwrap();
    assert!(check(&out, "static dma_sha").contains("dma_sha: ok"));
}

/// The headers as a C++ program includes them.
#[test]
fn headers_compile_as_cpp() {
    if !have("c++") {
        eprintln!("SKIPPED: no C++ compiler");
        return;
    }
    let p = prefix();
    let src = scratch().join("all.cpp");
    let mut text = String::new();
    text.push_str(&include_all("include"));
    text.push_str(
        "DOCA_LOG_REGISTER(CPP);\nint main() { DOCA_LOG_INFO(\"x %d\", 1); return 0; }\n",
    );
    std::fs::write(&src, text).unwrap();
    let out = Command::new("c++")
        .args([
            "-Wall",
            "-Wextra",
            "-Werror",
            "-DDOCA_ALLOW_EXPERIMENTAL_API",
            "-c",
            "-o",
        ])
        .arg(scratch().join("all.o"))
        .arg(&src)
        .arg(format!("-I{}", p.join("include").display()))
        .output()
        .unwrap();
    check(&out, "C++ compile of the headers");
}

/// Without DOCA_ALLOW_EXPERIMENTAL_API, each call warns that the API is experimental.
#[test]
fn experimental_marker_warns() {
    let p = prefix();
    let src = scratch().join("experimental.c");
    std::fs::create_dir_all(src.parent().unwrap()).unwrap();
    std::fs::write(&src, "#include <doca_error.h>\nconst char *f(void) { return doca_get_error_name(DOCA_SUCCESS); }\n").unwrap();
    let out = Command::new("cc")
        .args(STRICT.iter().filter(|f| **f != "-Werror"))
        .args(["-c", "-o", "/dev/null"])
        .arg(&src)
        .arg(format!("-I{}", p.join("include").display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("Symbol is defined as experimental"),
        "{err}"
    );
}

/// Every function the headers declare is defined in Rust (or, for the variadic logging
/// functions, in the C part), and every Rust `extern "C"` function is declared.
#[test]
fn headers_and_rust_declare_the_same_functions() {
    let h = header_functions("include");
    let c_defined: BTreeSet<String> = ["doca_log", "doca_log_developer", "doca_log_rate_limit"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let internal: BTreeSet<String> = ["doca_capi_log_text", "doca_capi_build_role_set"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let r: BTreeSet<String> = rust_functions(is_v22)
        .into_iter()
        .map(|f| f.name)
        .filter(|n| !internal.contains(n))
        .chain(c_defined)
        .collect();
    let missing: Vec<_> = h.difference(&r).collect();
    let undeclared: Vec<_> = r.difference(&h).collect();
    assert!(
        missing.is_empty(),
        "declared in the headers, not implemented: {missing:?}"
    );
    assert!(
        undeclared.is_empty(),
        "implemented, not declared in a header: {undeclared:?}"
    );
    assert!(h.len() > 200, "only {} functions found", h.len());
}

/// A shadow header of the Rust signatures, compiled with ours: any prototype that
/// disagrees is a "conflicting types" error.
#[test]
fn header_prototypes_match_rust_signatures() {
    let fns: Vec<RustFn> = rust_functions(is_v22)
        .into_iter()
        .filter(|f| f.name != "doca_capi_log_text" && f.name != "doca_capi_build_role_set")
        .collect();
    check_shadow_prototypes("include", "include", &fns, "shadow");
}

/// Every declared function links from the installed library (by its DOCA library name).
#[test]
fn every_declared_function_is_exported() {
    let mut text = String::from("#include <stddef.h>\n");
    text.push_str(&include_all("include"));
    let names = header_functions("include");
    text.push_str("static void *const fns[] = {\n");
    for n in &names {
        text.push_str(&format!("\t(void *)&{n},\n"));
    }
    text.push_str("};\nint main(void)\n{\n\tfor (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)\n\t\tif (fns[i] == NULL)\n\t\t\treturn 1;\n\treturn 0;\n}\n");
    let src = scratch().join("exports.c");
    let bin = scratch().join("bin/exports");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::write(&src, text).unwrap();
    let out = Command::new("cc")
        .args(STRICT)
        .args(["-Wno-pedantic", "-o"])
        .arg(&bin)
        .arg(&src)
        .args(pkg_config(&["--cflags", "--libs", "doca"]))
        .output()
        .unwrap();
    check(&out, "linking every declared function");
    check(&Command::new(&bin).output().unwrap(), "exports");
}

/// What DOCA 2.2's headers include (`doca-2.2-abi.md`, "What each header includes"):
/// programs rely on it.
const DOCA_INCLUDES: &[(&str, &[&str])] = &[
    ("doca_error.h", &["doca_compat.h", "doca_common_defines.h"]),
    ("doca_types.h", &["stdint.h"]),
    ("doca_version.h", &["stddef.h", "doca_compat.h"]),
    (
        "doca_dev.h",
        &["stdint.h", "doca_types.h", "doca_compat.h", "doca_error.h"],
    ),
    (
        "doca_mmap.h",
        &["stdbool.h", "stddef.h", "stdint.h", "doca_dev.h"],
    ),
    (
        "doca_buf.h",
        &[
            "stdbool.h",
            "stdint.h",
            "stddef.h",
            "doca_compat.h",
            "doca_error.h",
        ],
    ),
    (
        "doca_buf_inventory.h",
        &[
            "stddef.h",
            "stdint.h",
            "doca_compat.h",
            "doca_error.h",
            "doca_buf.h",
            "doca_mmap.h",
        ],
    ),
    (
        "doca_bufpool.h",
        &["stddef.h", "stdint.h", "doca_error.h", "doca_types.h"],
    ),
    (
        "doca_buf_array.h",
        &[
            "stddef.h",
            "stdint.h",
            "doca_compat.h",
            "doca_error.h",
            "doca_buf.h",
            "doca_mmap.h",
        ],
    ),
    (
        "doca_ctx.h",
        &["stdint.h", "doca_dev.h", "doca_error.h", "doca_types.h"],
    ),
    (
        "doca_sync_event.h",
        &["doca_compat.h", "doca_error.h", "doca_ctx.h"],
    ),
    (
        "doca_graph.h",
        &[
            "stdbool.h",
            "stdint.h",
            "stddef.h",
            "doca_compat.h",
            "doca_error.h",
            "doca_ctx.h",
        ],
    ),
    (
        "doca_dma.h",
        &["inttypes.h", "doca_buf.h", "doca_compat.h", "doca_ctx.h"],
    ),
    (
        "doca_sha.h",
        &["doca_compat.h", "doca_buf.h", "doca_ctx.h", "doca_error.h"],
    ),
    (
        "doca_compress.h",
        &[
            "inttypes.h",
            "doca_buf.h",
            "doca_compat.h",
            "doca_ctx.h",
            "doca_dev.h",
        ],
    ),
    (
        "doca_erasure_coding.h",
        &[
            "inttypes.h",
            "doca_buf.h",
            "doca_compat.h",
            "doca_ctx.h",
            "doca_dev.h",
        ],
    ),
    (
        "doca_log.h",
        &[
            "stddef.h",
            "stdio.h",
            "stdint.h",
            "doca_compat.h",
            "doca_error.h",
        ],
    ),
    ("doca_argp.h", &["doca_compat.h", "doca_error.h"]),
    (
        "doca_comm_channel.h",
        &[
            "stddef.h",
            "stdint.h",
            "doca_types.h",
            "doca_error.h",
            "doca_compat.h",
            "doca_dev.h",
        ],
    ),
    ("doca_rdma_bridge.h", &["doca_error.h", "doca_types.h"]),
    (
        "doca_compat.h",
        &["doca_config.h", "string.h", "stdint.h", "doca_version.h"],
    ),
    ("doca_config.h", &["doca_build_config.h"]),
];

/// Code that compiles only when `header` was included: a standard header's macro or
/// function, a DOCA header's include guard and first declared function.
fn include_probe(header: &str) -> String {
    let std_probe = match header {
        "stdint.h" => Some("#ifndef UINT64_MAX\n#error stdint.h\n#endif\n"),
        "inttypes.h" => Some("#ifndef PRIu64\n#error inttypes.h\n#endif\n"),
        "stddef.h" => Some("#ifndef offsetof\n#error stddef.h\n#endif\n"),
        "stdbool.h" => Some("#ifndef __bool_true_false_are_defined\n#error stdbool.h\n#endif\n"),
        "stdio.h" => Some(
            "#ifndef EOF\n#error stdio.h\n#endif\nstatic void *probe_stdio(void) { return (void *)&fprintf; }\n",
        ),
        "string.h" => Some(
            "static void *probe_string(void) { return (void *)&memcpy; }\nstatic void *probe_strlen(void) { return (void *)&strlen; }\n",
        ),
        _ => None,
    };
    if let Some(p) = std_probe {
        return p.to_owned();
    }
    let text = std::fs::read_to_string(crate_dir().join("include").join(header)).unwrap();
    let guard = text
        .lines()
        .find_map(|l| l.strip_prefix("#ifndef "))
        .unwrap_or_else(|| panic!("{header} has no include guard"))
        .trim();
    let mut probe = format!("#ifndef {guard}\n#error {header} was not included\n#endif\n");
    if let Some(i) = text.find("\n__DOCA_EXPERIMENTAL\n") {
        let rest = &text[i + "\n__DOCA_EXPERIMENTAL\n".len()..];
        let decl = &rest[..rest.find('(').unwrap()];
        let name = decl
            .split(|c: char| c.is_whitespace() || c == '*')
            .next_back()
            .unwrap();
        let ident = header.trim_end_matches(".h");
        probe.push_str(&format!(
            "static void *probe_{ident}(void) {{ return (void *)&{name}; }}\n"
        ));
    }
    probe
}

/// A program that includes one header sees everything DOCA's header brings in, header
/// by header (and whatever that brings in, transitively).
#[test]
fn each_header_includes_what_docas_does() {
    let p = prefix();
    let includes = |h: &str| -> &'static [&'static str] {
        DOCA_INCLUDES
            .iter()
            .find(|(name, _)| *name == h)
            .map_or(&[], |(_, inc)| *inc)
    };
    let mut checked = 0;
    for (header, _) in DOCA_INCLUDES {
        if !crate_dir().join("include").join(header).exists() {
            eprintln!("{header} is not provided yet: not checked");
            continue;
        }
        // The transitive closure of DOCA's includes.
        let mut seen: Vec<&str> = Vec::new();
        let mut todo: Vec<&str> = includes(header).to_vec();
        while let Some(h) = todo.pop() {
            if !seen.contains(&h) {
                seen.push(h);
                todo.extend_from_slice(includes(h));
            }
        }
        let mut text = format!("#include <{header}>\n");
        for h in &seen {
            text.push_str(&include_probe(h));
        }
        text.push_str("int main(void) { return 0; }\n");
        let stem = header.trim_end_matches(".h");
        let src = scratch().join(format!("includes/{stem}.c"));
        std::fs::create_dir_all(src.parent().unwrap()).unwrap();
        std::fs::write(&src, &text).unwrap();
        let out = Command::new("cc")
            .args(STRICT)
            .args([
                "-Wno-unused-function",
                "-DDOCA_ALLOW_EXPERIMENTAL_API",
                "-c",
                "-o",
            ])
            .arg(scratch().join(format!("includes/{stem}.o")))
            .arg(&src)
            .arg(format!("-I{}", p.join("include").display()))
            .output()
            .unwrap();
        check(&out, &format!("a program that includes only {header}"));
        checked += 1;
    }
    assert!(checked >= 19, "only {checked} headers checked");
}
