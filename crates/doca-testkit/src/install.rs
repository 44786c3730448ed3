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
    let out = Command::new("bash")
        .arg(script)
        .arg("--prefix")
        .arg(prefix)
        .args(["--profile", cargo_profile()])
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
