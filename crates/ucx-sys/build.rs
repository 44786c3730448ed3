//! Links libucp and libucs (Debian's libucx-dev puts them on the default library path).

fn main() {
    // A non-default UCX installation: point UCX_LIB_DIR at its library directory.
    println!("cargo:rerun-if-env-changed=UCX_LIB_DIR");
    if let Ok(dir) = std::env::var("UCX_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    println!("cargo:rustc-link-lib=dylib=ucp");
    println!("cargo:rustc-link-lib=dylib=ucs");
}
