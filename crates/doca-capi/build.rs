//! Compiles the C half of the library: the variadic logging entry points (C-variadic
//! functions cannot be defined in stable Rust), which format the message and hand it to
//! the Rust logger.

fn main() {
    println!("cargo:rerun-if-changed=csrc/log_variadic.c");
    println!("cargo:rerun-if-changed=csrc/log_variadic3.c");
    println!("cargo:rerun-if-changed=include");
    println!("cargo:rerun-if-changed=include3");
    cc::Build::new()
        .file("csrc/log_variadic3.c")
        .include("include3")
        .define("DOCA_ALLOW_EXPERIMENTAL_API", None)
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Werror")
        .compile("doca_capi_shim3");
    cc::Build::new()
        .file("csrc/log_variadic.c")
        .include("include")
        .define("DOCA_ALLOW_EXPERIMENTAL_API", None)
        .warnings(true)
        .extra_warnings(true)
        .flag_if_supported("-Werror")
        .compile("doca_capi_shim");
}
