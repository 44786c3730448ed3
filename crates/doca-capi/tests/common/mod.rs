//! What the C interface tests of both API generations share: installing the libraries
//! once per run, compiling C programs against them as DOCA programs are built, running
//! them (under valgrind when installed), and reading the headers and the Rust
//! `extern "C"` functions for the drift checks.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn scratch() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("doca-capi")
}

pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Installs the libraries, headers and pkg-config files once per test run.
pub fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        assert!(
            have("cc") && have("pkg-config"),
            "the C tests need a C compiler and pkg-config (apt-get install gcc pkg-config)"
        );
        let p = scratch().join("prefix");
        doca_testkit::install::install_shared(
            &crate_dir().join("../../scripts/install-capi.sh"),
            &p,
        );
        p
    })
}

pub fn pkg_config(args: &[&str]) -> Vec<String> {
    pkg_config_in(&prefix().join("lib/pkgconfig"), args)
}

/// [`pkg_config`] with the modules of `dir` (`lib/pkgconfig/dpu` for the DPU flavour).
pub fn pkg_config_in(dir: &Path, args: &[&str]) -> Vec<String> {
    let out = Command::new("pkg-config")
        .args(args)
        .env("PKG_CONFIG_PATH", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pkg-config {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

pub fn check(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

pub use doca_testkit::install::STRICT_CFLAGS as STRICT;

/// Compiles `src` into `bin/<name>` the way a DOCA program is built, with the
/// pkg-config module `module` (`doca` for the host side, `doca-dpu` for the DPU side).
pub fn compile(src: &Path, name: &str, module: &str) -> PathBuf {
    compile_in(&prefix().join("lib/pkgconfig"), src, name, module)
}

/// [`compile`] with the pkg-config modules of `dir` (`lib/pkgconfig/dpu`: the DPU
/// flavour).
pub fn compile_in(dir: &Path, src: &Path, name: &str, module: &str) -> PathBuf {
    let (bin, tmp) = bin_path(name);
    let mut c = Command::new("cc");
    c.args(STRICT)
        .arg("-g")
        .arg(src)
        .arg("-o")
        .arg(&tmp)
        .args(pkg_config_in(
            dir,
            &["--cflags", "--libs"]
                .into_iter()
                .chain(module.split_whitespace())
                .collect::<Vec<_>>(),
        ));
    check(
        &c.output().unwrap(),
        &format!("compiling {}", src.display()),
    );
    std::fs::rename(&tmp, &bin).unwrap();
    bin
}

/// Where program `name` goes, and the temporary name it is built under: renamed into
/// place whole, so that a test running the program another test builds again never
/// starts a half-written file.
fn bin_path(name: &str) -> (PathBuf, PathBuf) {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let bin = scratch().join("bin").join(name);
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = bin.with_file_name(format!(".{name}.{}.{k}", std::process::id()));
    (bin, tmp)
}

/// [`compile_in`] as C++20 (`c++ -std=c++20 -x c++`, warnings as errors), as programs
/// written in C++ build against the headers.
pub fn compile_cpp_in(dir: &Path, src: &Path, name: &str, module: &str) -> PathBuf {
    compile_cpp_std_in(dir, src, name, module, "c++20")
}

/// [`compile_cpp_in`] in the C++ standard `std` (`c++17`: DOCA's own applications).
pub fn compile_cpp_std_in(dir: &Path, src: &Path, name: &str, module: &str, std: &str) -> PathBuf {
    let (bin, tmp) = bin_path(name);
    let mut c = Command::new("c++");
    c.args([
        &format!("-std={std}"),
        "-Wall",
        "-Wextra",
        "-Werror",
        "-g",
        "-x",
        "c++",
    ])
    .arg(src)
    .args(["-x", "none", "-o"])
    .arg(&tmp)
    .args(pkg_config_in(
        dir,
        &["--cflags", "--libs"]
            .into_iter()
            .chain(module.split_whitespace())
            .collect::<Vec<_>>(),
    ));
    check(
        &c.output().unwrap(),
        &format!("compiling {} as C++", src.display()),
    );
    std::fs::rename(&tmp, &bin).unwrap();
    bin
}

/// Compiles `tests/c/<name>.c` as a host-side program.
pub fn build(name: &str) -> PathBuf {
    compile(
        &crate_dir().join("tests/c").join(format!("{name}.c")),
        name,
        "doca",
    )
}

/// Compiles the sample `samples/<name>/<name>.c` with the pkg-config module `module`.
pub fn build_sample(name: &str, module: &str) -> PathBuf {
    compile(
        &crate_dir()
            .join("samples")
            .join(name)
            .join(format!("{name}.c")),
        &format!("{name}-{module}"),
        module,
    )
}

/// A topology whose devices run jobs on 2 engine threads: the default machine's
/// addresses, on both sides. Written once per test run, whole (a temporary file renamed
/// into place), so that a program started by one test never reads it half-written while
/// another test asks for it.
pub fn engine_topology() -> PathBuf {
    static TOPOLOGY: OnceLock<PathBuf> = OnceLock::new();
    TOPOLOGY
        .get_or_init(|| {
            let p = scratch().join("engine.toml");
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            let tmp = scratch().join(format!("engine.toml.{}", std::process::id()));
            std::fs::write(
                &tmp,
                "[[host.device]]\npci_addr = \"0000:3b:00.0\"\nengine_threads = 2\n\
                 [[host.device]]\npci_addr = \"0000:b1:00.0\"\nengine_threads = 2\n\
                 [[dpu.device]]\npci_addr = \"0000:03:00.0\"\nengine_threads = 2\n\
                 [[dpu.device.representor]]\npci_addr = \"0000:3b:00.0\"\nvuid = \"MT0000SW0001pf0hpf\"\n\
                 [[dpu.device.representor]]\npci_addr = \"0000:b1:00.0\"\nvuid = \"MT0000SW0001pf1hpf\"\n",
            )
            .unwrap();
            std::fs::rename(&tmp, &p).unwrap();
            p
        })
        .clone()
}

/// The longest one C program may run here (under valgrind, on a slow machine) before
/// the test kills it and fails: a hang is a failure, never a stalled test run.
pub const PROGRAM_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

/// A child process whose output is collected while it runs (a chatty program never
/// blocks on a full pipe); killed and reaped if the test lets go of it early.
pub struct Running {
    pub child: std::process::Child,
    what: String,
    /// The threads collecting stdout and stderr (joined once the program has ended).
    collectors: Vec<std::thread::JoinHandle<()>>,
    /// Its standard output and error so far, as the collecting threads read them.
    out: Collected,
    err: Collected,
}

type Collected = std::sync::Arc<std::sync::Mutex<Vec<u8>>>;

impl Running {
    /// Starts `c` (stdin as the caller set it), collecting stdout and stderr.
    pub fn spawn(mut c: Command, what: &str) -> Running {
        use std::io::Read;
        use std::process::Stdio;
        let mut child = c
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        let (out, err) = (Collected::default(), Collected::default());
        let collect = |mut r: Box<dyn Read + Send>, into: &Collected| {
            let into = into.clone();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n @ 1..) = r.read(&mut chunk) {
                    into.lock().unwrap().extend_from_slice(&chunk[..n]);
                }
            })
        };
        let mut collectors = Vec::new();
        if let Some(o) = child.stdout.take() {
            collectors.push(collect(Box::new(o), &out));
        }
        if let Some(e) = child.stderr.take() {
            collectors.push(collect(Box::new(e), &err));
        }
        Running {
            child,
            what: what.to_string(),
            collectors,
            out,
            err,
        }
    }

    /// Waits until its standard output or error holds `needle` (true), or it ends or
    /// `limit` passes first (false).
    pub fn wait_printed(&mut self, needle: &str, limit: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        let seen = |r: &Running| {
            String::from_utf8_lossy(&r.out.lock().unwrap()).contains(needle)
                || String::from_utf8_lossy(&r.err.lock().unwrap()).contains(needle)
        };
        loop {
            if seen(self) {
                return true;
            }
            if self.ended().is_some() {
                // All it printed, read to the end.
                self.join_collectors();
                return seen(self);
            }
            if start.elapsed() > limit {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    fn join_collectors(&mut self) {
        for h in self.collectors.drain(..) {
            let _ = h.join();
        }
    }

    /// Its exit status, if it has ended.
    pub fn ended(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().unwrap()
    }

    /// What it printed so far (all of it, once it has ended).
    pub fn printed(&mut self) -> (Vec<u8>, Vec<u8>) {
        self.join_collectors();
        let take = |c: &Collected| std::mem::take(&mut *c.lock().unwrap());
        (take(&self.out), take(&self.err))
    }

    /// Kills it and fails the test with `why` and what it printed.
    pub fn fail(&mut self, why: &str) -> ! {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let (o, e) = self.printed();
        panic!(
            "{} {why}:\n{}{}",
            self.what,
            String::from_utf8_lossy(&o),
            String::from_utf8_lossy(&e)
        );
    }

    /// Waits for it to end (at most [`PROGRAM_LIMIT`]); when `beside` is given, that
    /// program (the other side of a pair) failing first fails the test at once.
    pub fn finish_beside(mut self, mut beside: Option<&mut Running>) -> Output {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = self.ended() {
                let (stdout, stderr) = self.printed();
                return Output {
                    status,
                    stdout,
                    stderr,
                };
            }
            if let Some(other) = beside.as_deref_mut()
                && let Some(st) = other.ended()
                && !st.success()
            {
                let _ = self.child.kill();
                other.fail(&format!("failed ({st:?}) while {} ran", self.what));
            }
            if start.elapsed() > PROGRAM_LIMIT {
                self.fail(&format!("did not finish within {PROGRAM_LIMIT:?}"));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    pub fn finish(self) -> Output {
        self.finish_beside(None)
    }
}

/// A TCP port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts a program that listens on the port it is given (`make` builds its command)
/// and waits until it prints "listening on port". A port found free may be taken
/// (by another program's connection or listener) before the program binds it: the
/// program then ends at once, and another port is tried. Returns it and its port.
pub fn spawn_listening(what: &str, mut make: impl FnMut(u16) -> Command) -> (Running, u16) {
    for tries in 1.. {
        let port = free_port();
        let mut r = Running::spawn(make(port), what);
        if r.wait_printed("listening on port", PROGRAM_LIMIT) {
            return (r, port);
        }
        if r.ended().is_none() || tries == 5 {
            r.fail(&format!(
                "did not say it listens (port {port}, try {tries})"
            ));
        }
    }
    unreachable!()
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A command for `bin` on the default machine (no topology file, no role set).
pub fn default_machine(bin: &Path) -> Command {
    let mut c = Command::new(bin);
    c.env_remove("DOCA_SW_TOPOLOGY").env_remove("DOCA_SW_ROLE");
    c
}

/// Starts the host side of a pair on the default machine (or with engine threads), its
/// stdin piped, and waits until it has written `ready` (not empty): the test fails if
/// the host ends first or takes over 60 s.
pub fn start_host(bin: &Path, args: &[&str], engine: bool, ready: &Path, what: &str) -> Running {
    let mut c = default_machine(bin);
    c.args(args).stdin(std::process::Stdio::piped());
    if engine {
        c.env("DOCA_SW_TOPOLOGY", engine_topology());
    }
    let mut h = Running::spawn(c, what);
    let t = std::time::Instant::now();
    while !std::fs::metadata(ready).is_ok_and(|m| m.len() > 0) {
        if let Some(st) = h.ended() {
            h.fail(&format!(
                "ended ({st:?}) before writing its buffer information"
            ));
        }
        if t.elapsed() > std::time::Duration::from_secs(60) {
            h.fail("wrote no buffer information within 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    h
}

/// Runs the DPU side of a pair once its host has ended: the export is gone, so
/// creating the memory map from it fails.
pub fn assert_export_refused(dpu: &Path, args: &[&str]) {
    let o = default_machine(dpu).args(args).output().unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Failed to create mmap from export"), "{err}");
}

/// Runs a C test program (under valgrind when available, on the inline engine) and
/// returns its stdout.
pub fn run(bin: &Path, args: &[&str], engine: bool) -> String {
    run_env(bin, args, engine, &[])
}

/// [`run`] with extra environment variables.
pub fn run_env(bin: &Path, args: &[&str], engine: bool, env: &[(&str, &Path)]) -> String {
    run_beside(bin, args, engine, env, None)
}

/// [`run_env`] while `beside` (the other side of a pair) runs: its failing first fails
/// the test at once, as does either side running past [`PROGRAM_LIMIT`].
pub fn run_beside(
    bin: &Path,
    args: &[&str],
    engine: bool,
    env: &[(&str, &Path)],
    beside: Option<&mut Running>,
) -> String {
    // Memcheck on the inline runs: it runs one thread at a time, so a run with engine
    // threads under it shows no interleaving the inline run does not, and takes twice as
    // long. Every program of these tests has an inline run; its engine-thread runs are
    // native (where the threads do interleave).
    let valgrind =
        !engine && have("valgrind") && std::env::var_os("DOCA_CAPI_NO_VALGRIND").is_none();
    let mut c = if valgrind {
        let mut c = Command::new("valgrind");
        c.args([
            "-q",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--show-leak-kinds=definite",
        ])
        .arg(bin);
        c
    } else {
        eprintln!(
            "valgrind is not installed: running {} without memcheck",
            bin.display()
        );
        Command::new(bin)
    };
    c.args(args)
        .env_remove("DOCA_SW_TOPOLOGY")
        .env_remove("DOCA_SW_ROLE");
    for (k, v) in env {
        c.env(k, v);
    }
    if engine {
        c.env("DOCA_SW_TOPOLOGY", engine_topology());
    }
    let what = format!("{} {args:?} (engine threads: {engine})", bin.display());
    check(&Running::spawn(c, &what).finish_beside(beside), &what)
}

/// The headers of one generation (`include` for 2.2, `include3` for 3.x).
pub fn headers(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(crate_dir().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "h"))
        .collect();
    v.sort();
    v
}

/// `#include` lines for every header of `dir`.
pub fn include_all(dir: &str) -> String {
    headers(dir)
        .iter()
        .map(|h| format!("#include <{}>\n", h.file_name().unwrap().to_str().unwrap()))
        .collect()
}

/// The C prototype of a Rust `extern "C"` function.
pub fn c_prototype(f: &RustFn) -> String {
    let params: Vec<String> = f.params.iter().map(|t| c_type(t)).collect();
    let params = if params.is_empty() {
        "void".to_owned()
    } else {
        params.join(", ")
    };
    format!("{} {}({});\n", c_type(&f.ret), f.name, params)
}

/// A shadow header of `fns` (C prototypes from their Rust signatures), compiled with
/// every header of the crate's `headers_dir` as installed in `installed` under the
/// prefix: any prototype that disagrees is a "conflicting types" error.
pub fn check_shadow_prototypes(headers_dir: &str, installed: &str, fns: &[RustFn], name: &str) {
    check_shadow_prototypes_with(headers_dir, installed, fns, name, &[]);
}

/// [`check_shadow_prototypes`] with more compiler arguments (`-DDOCA_API_1_5`).
pub fn check_shadow_prototypes_with(
    headers_dir: &str,
    installed: &str,
    fns: &[RustFn],
    name: &str,
    extra: &[&str],
) {
    let mut text = String::from("#include <stdbool.h>\n#include <stdint.h>\n#include <stdio.h>\n");
    text.push_str(&include_all(headers_dir));
    for f in fns {
        text.push_str(&c_prototype(f));
    }
    let src = scratch().join(format!("{name}.c"));
    std::fs::create_dir_all(src.parent().unwrap()).unwrap();
    std::fs::write(&src, &text).unwrap();
    let out = Command::new("cc")
        .args(STRICT)
        .args(["-DDOCA_ALLOW_EXPERIMENTAL_API", "-c", "-o", "/dev/null"])
        .args(extra)
        .arg(&src)
        .arg(format!("-I{}", prefix().join(installed).display()))
        .output()
        .unwrap();
    check(
        &out,
        &format!("the shadow header of the Rust signatures ({name})"),
    );
}

/// `pkg-config --cflags --libs` of the space-separated `modules`.
pub fn pkg_flags(modules: &str) -> Vec<String> {
    pkg_config(
        &["--cflags", "--libs"]
            .into_iter()
            .chain(modules.split_whitespace())
            .collect::<Vec<_>>(),
    )
}

/// The functions the headers of `dir` declare: the declarations after a marker line
/// (`__DOCA_EXPERIMENTAL`, `DOCA_EXPERIMENTAL` or `DOCA_STABLE`).
pub fn header_functions(dir: &str) -> BTreeSet<String> {
    header_functions_where(dir, false)
}

/// The functions the headers of `dir` declare for DOCA 1.5 only (inside
/// `#ifdef DOCA_API_1_5` blocks; [`header_functions`] leaves them out).
pub fn header_functions_15(dir: &str) -> BTreeSet<String> {
    header_functions_where(dir, true)
}

fn header_functions_where(dir: &str, in_15: bool) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    for h in headers(dir) {
        let text = std::fs::read_to_string(&h).unwrap();
        let mut lines = text.lines();
        let mut inside = false;
        while let Some(l) = lines.next() {
            if l == "#ifdef DOCA_API_1_5" {
                inside = true;
            } else if l == "#endif /* DOCA_API_1_5 */" {
                inside = false;
            }
            if inside != in_15 {
                continue;
            }
            if !matches!(
                l,
                "__DOCA_EXPERIMENTAL" | "DOCA_EXPERIMENTAL" | "DOCA_STABLE"
            ) {
                continue;
            }
            let Some(decl) = lines.next() else { break };
            let Some(open) = decl.find('(') else { continue };
            let name = decl[..open]
                .split(|c: char| c.is_whitespace() || c == '*')
                .next_back()
                .unwrap();
            set.insert(name.to_owned());
        }
    }
    set
}

/// A Rust `extern "C"` function: name, parameter types, return type.
pub struct RustFn {
    pub name: String,
    pub params: Vec<String>,
    pub ret: String,
}

/// The 3.x C functions the libraries' task tables made (no source text spells them out).
pub fn generated_functions() -> Vec<RustFn> {
    // `stringify!` spells a pointer type `* const T`.
    let tidy = |t: &str| t.replace("* const ", "*const ").replace("* mut ", "*mut ");
    doca_capi::v3::generated_functions()
        .map(|f| RustFn {
            name: f.name.to_owned(),
            params: f.params.iter().map(|p| tidy(p)).collect(),
            ret: tidy(f.ret),
        })
        .collect()
}

/// Every `.rs` file under `dir`, subdirectories included.
pub fn rust_sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(rust_sources(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

/// The Rust `extern "C"` functions of the source files `keep` accepts.
pub fn rust_functions(keep: impl Fn(&Path) -> bool) -> Vec<RustFn> {
    let mut v = Vec::new();
    // The test-only library of `task_type_example.rs` is not part of the built library.
    for path in rust_sources(&crate_dir().join("src"))
        .into_iter()
        .filter(|p| !p.ends_with("task_type_example.rs"))
        .filter(|p| keep(p))
    {
        let text = std::fs::read_to_string(path).unwrap();
        let mut rest = text.as_str();
        while let Some(i) = rest.find("extern \"C\" fn ") {
            rest = &rest[i + "extern \"C\" fn ".len()..];
            let open = rest.find('(').unwrap();
            let name = rest[..open].trim().to_owned();
            if name.starts_with('$') || name.is_empty() {
                continue; // a macro's template
            }
            // The parameter list ends at the matching parenthesis.
            let mut depth = 0;
            let mut close = open;
            for (k, ch) in rest[open..].char_indices() {
                match ch {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            close = open + k;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let params: Vec<String> = split_params(&rest[open + 1..close]);
            let after = rest[close + 1..].trim_start();
            let ret = if let Some(r) = after.strip_prefix("->") {
                let end = r.find(['{', '=']).unwrap();
                r[..end].trim().to_owned()
            } else {
                "()".to_owned()
            };
            v.push(RustFn { name, params, ret });
        }
    }
    v
}

pub fn split_params(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(ch);
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once(':').map(|(_, t)| t.trim().to_owned()).unwrap())
        .collect()
}

/// The C spelling of a Rust FFI type.
pub fn c_type(t: &str) -> String {
    let t = t.trim();
    if let Some(inner) = t.strip_prefix("*mut ") {
        return format!("{} *", c_type(inner));
    }
    if let Some(inner) = t.strip_prefix("*const ") {
        return format!("const {} *", c_type(inner));
    }
    if let Some(inner) = t.strip_prefix("Option<").and_then(|x| x.strip_suffix('>')) {
        return if inner == "doca_mmap_memrange_free_cb_t" {
            "doca_mmap_memrange_free_cb_t *".into()
        } else {
            c_type(inner)
        };
    }
    let t = t.rsplit("::").next().unwrap_or(t);
    const ENUMS: &[&str] = &[
        "doca_pci_func_type",
        "doca_dma_job_types",
        "doca_sha_job_type",
        "doca_ec_job_types",
        "doca_ec_matrix_types",
        "doca_sync_event_job_types",
        "doca_graph_instance_node_state",
        "doca_argp_type",
        "doca_ctx_states",
        "doca_pe_event_mode",
        "doca_sha_algorithm",
        "doca_ec_matrix_type",
        "doca_comch_counter",
        "doca_cc_counter",
        "doca_devinfo_property",
        "doca_devinfo_remote_property",
        "doca_dev_remote_filter",
        "doca_mmap_property",
        "doca_buf_inventory_property",
        "doca_workq_property",
        "doca_rdma_transport_type",
        "doca_mtu_size",
        "doca_rdma_opcode",
        "doca_rdma_addr_type",
        "doca_rdma_job_types",
        "doca_rdma_state",
        "doca_task_batch_max_tasks_number",
        "doca_event_batch_events_number",
        "doca_compress_job_types",
        "doca_aes_gcm_key_type",
    ];
    const TYPEDEFS: &[&str] = &[
        "doca_error_t",
        "callback_func",
        "dpdk_callback",
        "validation_callback",
        "log_flush_callback",
        "doca_graph_user_node_cb_t",
        "doca_graph_completion_cb_t",
        "doca_mmap_advise_task_invalidate_cache_completion_cb_t",
        "doca_dpa_dev_sync_event_t",
        "doca_dpa_dev_mmap_t",
        "doca_dpa_dev_buf_arr_t",
        "doca_gpu_dev_sync_event_t",
        "doca_sync_event_remote_t",
        "FILE",
        "doca_notification_handle_t",
        "doca_event_channel_t",
        "doca_ctx_state_changed_callback_t",
        "doca_dma_task_memcpy_completion_cb_t",
        "doca_sha_task_hash_completion_cb_t",
        "doca_sha_task_partial_hash_completion_cb_t",
        "doca_ec_task_galois_mul_completion_cb_t",
        "doca_sync_event_task_get_completion_cb_t",
        "doca_sync_event_task_notify_set_completion_cb_t",
        "doca_sync_event_task_notify_add_completion_cb_t",
        "doca_sync_event_task_wait_gt_completion_cb_t",
        "doca_sync_event_task_wait_eq_completion_cb_t",
        "doca_sync_event_task_wait_neq_completion_cb_t",
        "doca_ec_task_create_completion_cb_t",
        "doca_ec_task_update_completion_cb_t",
        "doca_ec_task_recover_completion_cb_t",
        "doca_comch_task_send_completion_cb_t",
        "doca_comch_event_msg_recv_cb_t",
        "doca_comch_event_connection_status_changed_cb_t",
        "doca_comch_event_consumer_cb_t",
        "doca_comch_consumer_task_post_recv_completion_cb_t",
        "doca_comch_producer_task_send_completion_cb_t",
        "doca_cc_task_send_completion_cb_t",
        "doca_cc_event_msg_recv_cb_t",
        "doca_cc_event_connection_status_changed_cb_t",
        "doca_cc_event_consumer_cb_t",
        "doca_cc_consumer_task_post_recv_completion_cb_t",
        "doca_cc_producer_task_send_completion_cb_t",
        "doca_be32_t",
        "doca_rdma_connection_request_cb_t",
        "doca_rdma_connection_established_cb_t",
        "doca_rdma_connection_failure_cb_t",
        "doca_rdma_connection_disconnection_cb_t",
        "doca_rdma_task_receive_completion_cb_t",
        "doca_rdma_task_send_completion_cb_t",
        "doca_rdma_task_send_imm_completion_cb_t",
        "doca_rdma_task_read_completion_cb_t",
        "doca_rdma_task_write_completion_cb_t",
        "doca_rdma_task_write_imm_completion_cb_t",
        "doca_rdma_task_atomic_cmp_swp_completion_cb_t",
        "doca_rdma_task_atomic_fetch_add_completion_cb_t",
        "doca_rdma_task_remote_net_sync_event_get_completion_cb_t",
        "doca_rdma_task_remote_net_sync_event_notify_set_completion_cb_t",
        "doca_rdma_task_remote_net_sync_event_notify_add_completion_cb_t",
        "doca_compress_task_compress_deflate_completion_cb_t",
        "doca_compress_task_decompress_deflate_completion_cb_t",
        "doca_compress_task_decompress_lz4_stream_completion_cb_t",
        "doca_compress_task_decompress_lz4_block_completion_cb_t",
        "doca_aes_gcm_task_encrypt_completion_cb_t",
        "doca_aes_gcm_task_decrypt_completion_cb_t",
    ];
    // The task generation's Rust names of C structs that share a name with the job
    // generation's.
    if t == "doca_clock_timespec_t" {
        return "union doca_clock_timespec_t".into();
    }
    let t = match t {
        "doca_ctx3" => "doca_ctx",
        "doca_dma3" => "doca_dma",
        "doca_sha3" => "doca_sha",
        "doca_ec3" => "doca_ec",
        "doca_sync_event3" => "doca_sync_event",
        "doca_graph3" => "doca_graph",
        "doca_graph_node3" => "doca_graph_node",
        "doca_graph_instance3" => "doca_graph_instance",
        "doca_rdma3" => "doca_rdma",
        "doca_buf_arr3" => "doca_buf_arr",
        "doca_compress3" => "doca_compress",
        t => t,
    };
    match t {
        "()" => "void".into(),
        "c_int" | "i32" => "int".into(),
        "u8" => "uint8_t".into(),
        "u16" => "uint16_t".into(),
        "u32" => "uint32_t".into(),
        "u64" => "uint64_t".into(),
        "usize" => "size_t".into(),
        "bool" => "bool".into(),
        "c_char" => "char".into(),
        "c_void" => "void".into(),
        "doca_data" => "union doca_data".into(),
        _ if ENUMS.contains(&t) => format!("enum {t}"),
        _ if TYPEDEFS.contains(&t) => t.into(),
        _ if t.starts_with("doca_") || t.starts_with("ibv_") => format!("struct {t}"),
        _ => panic!("no C spelling for the Rust type `{t}`: extend c_type"),
    }
}

/// Starts the first side of a pair in the background (no valgrind: the other side runs
/// under it), in its own comm channel directory.
pub fn start_side(bin: &Path, args: &[&str], engine: bool, rt: &Path) -> Running {
    start_side_env(bin, args, engine, rt, &[])
}

/// [`start_side`] with extra environment variables.
pub fn start_side_env(
    bin: &Path,
    args: &[&str],
    engine: bool,
    rt: &Path,
    env: &[(&str, &Path)],
) -> Running {
    let mut c = Command::new(bin);
    c.args(args)
        .env_remove("DOCA_SW_TOPOLOGY")
        .env_remove("DOCA_SW_ROLE")
        .env("DOCA_SW_RUNTIME_DIR", rt);
    for (k, v) in env {
        c.env(k, v);
    }
    if engine {
        c.env("DOCA_SW_TOPOLOGY", engine_topology());
    }
    Running::spawn(
        c,
        &format!("{} {args:?} (engine threads: {engine})", bin.display()),
    )
}

/// A private comm channel directory for one test (mode 0700, as the library wants).
pub fn runtime_dir(name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch().join(format!("rt-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
    d
}

/// Runs an RDMA pair program (`bin server DIR` and `bin client DIR`, the descriptors
/// passing through files in DIR): inline and with engine threads on this machine, then
/// with shared memory allowed (`DOCA_RDMA_SHM=1`), then across two network namespaces
/// (UCX over TCP, as between two machines) where they can be made. The client says
/// "every ... type ran", the server "everything arrived".
pub fn run_rdma_pair(bin: &Path, tag: &str) {
    run_pair_everywhere(
        bin,
        tag,
        ["server", "client"],
        ["everything arrived", "type ran"],
    );
}

/// Runs a pair program (`bin ROLES[0] DIR` serving, `bin ROLES[1] DIR` against it) in
/// every setting [`run_rdma_pair`] names; each side's output must hold its `EXPECT`.
pub fn run_pair_everywhere(bin: &Path, tag: &str, roles: [&str; 2], expect: [&str; 2]) {
    let rt = runtime_dir(tag);
    let shm: &[(&str, &Path)] = &[("DOCA_RDMA_SHM", Path::new("1"))];
    let [serving, asking] = roles;
    for (round, engine, env) in [(0, false, &[][..]), (1, true, &[][..]), (2, false, shm)] {
        let dir = scratch().join(format!("{tag}-pair-{round}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.to_str().unwrap();
        let mut s = start_side_env(bin, &[serving, d], engine, &rt, env);
        let out = run_beside(bin, &[asking, d], engine, env, Some(&mut s));
        assert!(out.contains(expect[1]), "{out}");
        let sout = check(&s.finish(), &format!("{tag} {serving}"));
        assert!(sout.contains(expect[0]), "{sout}");
    }
    let Some(pair) = doca_testkit::netns::NetPair::new(&format!("c{tag}")) else {
        return;
    };
    let dir = scratch().join(format!("{tag}-pair-netns"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let side = |i: usize, role: &str| {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &pair.ns[i], "env", "UCX_TLS=tcp"])
            .arg(format!("UCX_NET_DEVICES={}", pair.dev[i]))
            .arg(bin)
            .args([role, d])
            .env_remove("DOCA_SW_TOPOLOGY")
            .env_remove("DOCA_SW_ROLE");
        Running::spawn(c, &format!("{tag} {role} in {}", pair.ns[i]))
    };
    let mut s = side(0, serving);
    let c = side(1, asking);
    let cout = check(
        &c.finish_beside(Some(&mut s)),
        &format!("{tag} {asking} (namespace)"),
    );
    assert!(cout.contains(expect[1]), "{cout}");
    let sout = check(&s.finish(), &format!("{tag} {serving} (namespace)"));
    assert!(sout.contains(expect[0]), "{sout}");
}
