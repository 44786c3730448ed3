//! The two libraries under comparison, loaded side by side: ours, installed by
//! `scripts/install-isal-compat.sh` as a user would install it, and ISA-L 2.32 built from
//! source (by the `erasure-isa-l-sys` dev-dependency) in this build.
#![allow(dead_code)]

use std::ffi::{CString, c_void};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Our library, headers and pkg-config file, installed once per test binary.
pub fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let p = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("isal-compat-{}", std::process::id()))
            .join("prefix");
        doca_testkit::install::install(
            &crate_dir().join("../../scripts/install-isal-compat.sh"),
            &p,
        );
        p
    })
}

/// The directory holding ISA-L 2.32's own `libisal.so.2`, built from source for this
/// test run.
pub fn reference_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().unwrap().parent().unwrap();
        doca_testkit::install::isal_reference_dir(profile_dir).unwrap_or_else(|| {
            panic!(
                "ISA-L's libisal.so.2 was not built under {}",
                profile_dir.display()
            )
        })
    })
}

/// A library opened with `RTLD_LOCAL`, so two with the same symbols live side by side.
pub struct Lib(*mut c_void, PathBuf);

// SAFETY: a dlopen handle may be used from any thread.
unsafe impl Send for Lib {}
// SAFETY: as above; dlsym is thread-safe.
unsafe impl Sync for Lib {}

impl Lib {
    fn open(path: &Path) -> Lib {
        let c = CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid path string; the library's initialisers are its own.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(!h.is_null(), "dlopen {} failed", path.display());
        Lib(h, path.to_owned())
    }

    /// The function `name`, as type `F` (a function pointer type with its prototype).
    pub fn get<F: Copy>(&self, name: &str) -> F {
        assert_eq!(size_of::<F>(), size_of::<*mut c_void>());
        let c = CString::new(name).unwrap();
        // SAFETY: a live handle and a valid name.
        let p = unsafe { libc::dlsym(self.0, c.as_ptr()) };
        assert!(!p.is_null(), "{} has no {name}", self.1.display());
        // SAFETY: F is a function pointer type of the symbol's prototype (the caller's
        // promise), the same size as the data pointer.
        unsafe { std::mem::transmute_copy(&p) }
    }
}

/// Our `libisal.so.2`, loaded from the install prefix.
pub fn ours() -> &'static Lib {
    static L: OnceLock<Lib> = OnceLock::new();
    L.get_or_init(|| Lib::open(&prefix().join("lib/libisal.so.2")))
}

/// ISA-L's `libisal.so.2`.
pub fn reference() -> &'static Lib {
    static L: OnceLock<Lib> = OnceLock::new();
    L.get_or_init(|| Lib::open(&reference_dir().join("libisal.so.2")))
}

#[allow(unused_imports)]
pub use doca_testkit::Rng;
