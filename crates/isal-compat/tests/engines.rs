//! Real engines, unchanged, on our `libisal.so.2`: pyeclib over Debian's liberasurecode
//! (byte for byte against ISA-L 2.32 in both directions, and pyeclib's own test suite),
//! and a program that loads the library as Hadoop's native coder does.
#![cfg(target_arch = "x86_64")]

mod common;

use common::{prefix, reference_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("isal-engines-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ours_dir() -> PathBuf {
    prefix().join("lib")
}

/// The python of an environment with pyeclib built against Debian's liberasurecode.
fn python() -> &'static Path {
    static PY: OnceLock<PathBuf> = OnceLock::new();
    PY.get_or_init(|| {
        let env = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pyeclib-env");
        let out = Command::new("bash")
            .arg(crate_dir().join("../../scripts/pyeclib-env.sh"))
            .arg(&env)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "scripts/pyeclib-env.sh failed (it needs python3, liberasurecode-dev and PyPI):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
    })
}

fn check(what: &str, out: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed:\n{text}");
    text
}

/// Runs `engine.py` with `lib_dir` first on the library path.
fn engine(lib_dir: &Path, args: &[&Path]) -> String {
    let out = Command::new(python())
        .arg(crate_dir().join("tests/py/engine.py"))
        .args(args)
        .env("LD_LIBRARY_PATH", lib_dir)
        .env("EXPECT_LIB", lib_dir.join("libisal.so.2"))
        .output()
        .unwrap();
    check(
        &format!("engine.py {args:?} on {}", lib_dir.display()),
        &out,
    )
}

fn read_dir_sorted(d: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn pyeclib_on_ours_matches_isal_byte_for_byte_both_ways() {
    let (a, b) = (scratch("ours"), scratch("isal"));
    let said = engine(&ours_dir(), &[Path::new("run"), &a]);
    engine(reference_dir(), &[Path::new("run"), &b]);
    assert!(said.contains("recovered the data"), "{said}");
    // The same fragments, header and all, from both libraries.
    let (fa, fb) = (
        read_dir_sorted(&a.join("fragments")),
        read_dir_sorted(&b.join("fragments")),
    );
    assert_eq!(fa.len(), fb.len());
    assert!(!fa.is_empty());
    for ((na, da), (nb, db)) in fa.iter().zip(&fb) {
        assert_eq!(na, nb);
        assert!(
            da == db,
            "fragment {na} differs between our library and ISA-L"
        );
    }
    // The same outcome for every decode and reconstruction, failures included.
    let ra = std::fs::read_to_string(a.join("results.json")).unwrap();
    assert!(
        ra == std::fs::read_to_string(b.join("results.json")).unwrap(),
        "outcomes differ"
    );
    assert!(ra.contains("isa_l_rs_cauchy") && ra.contains("isa_l_rs_vand"));
    // Fragments made by ours decode with ISA-L, and the reverse.
    let (c, d) = (scratch("ours-from-isal"), scratch("isal-from-ours"));
    engine(&ours_dir(), &[Path::new("decode"), &b, &c]);
    engine(reference_dir(), &[Path::new("decode"), &a, &d]);
    assert!(
        ra == std::fs::read_to_string(c.join("results.json")).unwrap(),
        "ours decoding ISA-L's fragments differs"
    );
    assert!(
        ra == std::fs::read_to_string(d.join("results.json")).unwrap(),
        "ISA-L decoding our fragments differs"
    );
}

#[test]
fn pyeclibs_own_test_suite_passes_on_ours() {
    let src = python()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("pyeclib-src");
    let out = Command::new(python())
        .args([
            "-m",
            "unittest",
            "-v",
            "test.test_pyeclib_api",
            "test.test_pyeclib_c",
        ])
        .current_dir(&src)
        .env("LD_LIBRARY_PATH", ours_dir())
        .output()
        .unwrap();
    let text = check(
        "pyeclib's test suite (test_pyeclib_api, test_pyeclib_c)",
        &out,
    );
    // The ISA-L backends were available, so their tests ran on our library.
    for t in [
        "test_isa_l_rs_vand_available",
        "test_isa_l_rs_cauchy_available",
    ] {
        let line = text.lines().find(|l| l.starts_with(t)).unwrap_or_default();
        assert!(line.ends_with("ok"), "{t} did not pass:\n{text}");
    }
}

#[test]
fn a_hadoop_style_loader_codes_with_ours() {
    let dir = scratch("hadoop");
    let exe = dir.join("hadoop_coder");
    let out = Command::new("cc")
        .args(doca_testkit::install::STRICT_CFLAGS)
        .arg("-O2")
        .arg(crate_dir().join("tests/c/hadoop_coder.c"))
        .arg("-o")
        .arg(&exe)
        .arg("-ldl")
        .output()
        .unwrap();
    check("cc hadoop_coder.c", &out);
    for lib in [ours_dir(), reference_dir().to_owned()] {
        let out = Command::new(&exe)
            .arg(lib.join("libisal.so.2"))
            .env("LD_LIBRARY_PATH", &lib)
            .output()
            .unwrap();
        let text = check(&format!("hadoop_coder on {}", lib.display()), &out);
        assert!(text.contains("\nok"), "{text}");
    }
    // Our library under valgrind: no invalid read or write, no uninitialised byte used.
    if Command::new("valgrind").arg("--version").output().is_ok() {
        let out = Command::new("valgrind")
            .args(["--error-exitcode=99", "--quiet"])
            .arg(&exe)
            .arg(ours_dir().join("libisal.so.2"))
            .env("LD_LIBRARY_PATH", ours_dir())
            .output()
            .unwrap();
        let text = check("hadoop_coder on our library under valgrind", &out);
        assert!(text.contains("\nok"), "{text}");
    }
}

#[test]
fn a_program_built_with_pkg_config_links_ours() {
    let dir = scratch("pkg-config");
    let src = dir.join("app.c");
    std::fs::write(
        &src,
        r#"#include <isa-l.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    unsigned char a[6 * 4], g[32 * 4 * 2], d[4][64], p[2][64], *dp[4], *pp[2];
    gf_gen_cauchy1_matrix(a, 6, 4);
    ec_init_tables(4, 2, &a[16], g);
    for (int i = 0; i < 4; i++) {
        memset(d[i], i + 1, 64);
        dp[i] = d[i];
    }
    pp[0] = p[0];
    pp[1] = p[1];
    ec_encode_data(64, 4, 2, g, dp, pp);
    /* Parity row 0 of a Cauchy code: sum of inv(4 ^ j) * (j + 1). */
    unsigned char want = 0;
    for (int j = 0; j < 4; j++)
        want ^= gf_mul(gf_inv((unsigned char)(4 ^ j)), (unsigned char)(j + 1));
    printf("%s %s\n", isal_get_version_str(), p[0][63] == want ? "ok" : "wrong");
    return p[0][63] != want;
}
"#,
    )
    .unwrap();
    let pc = prefix().join("lib/pkgconfig");
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "libisal"])
        .env("PKG_CONFIG_PATH", &pc)
        .output()
        .unwrap();
    let flags = check("pkg-config libisal", &flags);
    let exe = dir.join("app");
    let out = Command::new("cc")
        .args(doca_testkit::install::STRICT_CFLAGS)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .args(flags.split_whitespace())
        .output()
        .unwrap();
    check("cc app.c $(pkg-config --cflags --libs libisal)", &out);
    let out = Command::new(&exe)
        .env("LD_LIBRARY_PATH", ours_dir())
        .output()
        .unwrap();
    assert_eq!(check("app", &out).trim(), "2.32.0 ok");
    let ldd = Command::new("ldd")
        .arg(&exe)
        .env("LD_LIBRARY_PATH", ours_dir())
        .output()
        .unwrap();
    let ldd = String::from_utf8_lossy(&ldd.stdout);
    assert!(ldd.contains(&*ours_dir().to_string_lossy()), "{ldd}");
}
