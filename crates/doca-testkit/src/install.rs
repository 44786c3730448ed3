//! Installing the C-facing libraries as users do, and building C programs against them
//! as strictly as current compilers do.

use std::path::Path;
use std::process::Command;

/// The flags every C test program is compiled with: a strict build, as with GCC 14,
/// where an implicit declaration (a header that lacks an include) is an error.
pub const STRICT_CFLAGS: &[&str] = &[
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Werror=implicit-function-declaration",
    "-Werror=implicit-int",
    "-Werror=int-conversion",
    "-Werror=incompatible-pointer-types",
    "-std=gnu11",
];

/// The cargo profile the running test binary was built with (`release` or `dev`): the
/// libraries under test are built alike.
pub fn cargo_profile() -> &'static str {
    let exe = std::env::current_exe().unwrap();
    if exe.components().any(|c| c.as_os_str() == "release") {
        "release"
    } else {
        "dev"
    }
}

/// Runs an install script of `scripts/` (`bash SCRIPT --prefix PREFIX --profile P`)
/// into a fresh `prefix`, panicking with its output when it fails.
pub fn install(script: &Path, prefix: &Path) {
    let _ = std::fs::remove_dir_all(prefix);
    run_install(script, prefix, &[]);
}

/// Runs an install script that takes `--reuse` (`bash SCRIPT --prefix PREFIX --profile P
/// --reuse`) into `prefix`, shared by every test binary that asks for the same prefix:
/// the script keeps an install of the same build, and a lock beside the prefix has one
/// process install at a time while the others wait (each C test binary of a crate would
/// otherwise install the same libraries again).
pub fn install_shared(script: &Path, prefix: &Path) {
    std::fs::create_dir_all(prefix.parent().expect("the prefix has a parent")).unwrap();
    let mut lock_name = prefix
        .file_name()
        .expect("the prefix has a name")
        .to_owned();
    lock_name.push(".lock");
    let lock = std::fs::File::create(prefix.with_file_name(lock_name)).unwrap();
    lock.lock().unwrap();
    run_install(script, prefix, &["--reuse"]);
    // The lock goes with the file.
    drop(lock);
}

/// `bash SCRIPT --prefix PREFIX --profile P EXTRA...`, panicking with its output when it
/// fails.
fn run_install(script: &Path, prefix: &Path, extra: &[&str]) {
    let out = Command::new("bash")
        .arg(script)
        .arg("--prefix")
        .arg(prefix)
        .args(["--profile", cargo_profile()])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} failed:\n{}{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The directory of ISA-L's own `libisal.so.2` as the `erasure-isa-l-sys` build script
/// built it from source under a cargo profile directory (`target/debug`,
/// `target/release`): the newest such build, or `None`.
pub fn isal_reference_dir(profile_dir: &Path) -> Option<std::path::PathBuf> {
    let mut found: Vec<(std::time::SystemTime, std::path::PathBuf)> =
        std::fs::read_dir(profile_dir.join("build"))
            .ok()?
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("erasure-isa-l-sys-")
            })
            .map(|e| e.path().join("out/lib"))
            .filter_map(|d| Some((d.join("libisal.so.2").metadata().ok()?.modified().ok()?, d)))
            .collect();
    found.sort();
    found.pop().map(|(_, d)| d)
}
