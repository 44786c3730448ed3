//! Gives the shared library ISA-L's soname, so programs linked against either load
//! whichever `libisal.so.2` comes first on the library path.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libisal.so.2");
}
