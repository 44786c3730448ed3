//! `doca-bench isal`: our `libisal.so.2` (crates/isal-compat) against ISA-L 2.32 (built
//! from source by the `erasure-isa-l-sys` build of this binary), measured in one run.
//!
//! 1. `ec_encode_data` of both libraries called directly, each loaded with `RTLD_LOCAL`
//!    into this process: GB/s of data in, alternating the two.
//! 2. pyeclib over Debian's liberasurecode (`scripts/pyeclib-env.sh`), unchanged, with
//!    one library or the other first on the library path: encode and decode times per
//!    call, the runs alternating, medians over the runs.
//!
//! Ratios are ISA-L's time over ours: above 1, ours is faster.

use crate::median;
use clap::Args;
use std::ffi::{CString, OsStr, c_int, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct IsalArgs {
    /// Runs of the pyeclib measurement per library, alternating.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Seconds per case in each pyeclib run.
    #[arg(long, default_value_t = 0.5)]
    seconds: f64,
    /// One short run of each (a smoke test; the figures mean little).
    #[arg(long)]
    quick: bool,
    /// Only the direct `ec_encode_data` calls, not pyeclib.
    #[arg(long)]
    direct_only: bool,
}

fn root() -> PathBuf {
    let r = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    r.canonicalize().unwrap_or(r)
}

fn fail(msg: &str) -> ! {
    eprintln!("doca-bench isal: {msg}");
    std::process::exit(1)
}

/// Installs our library into the target directory (release build) and returns its lib dir.
fn ours_dir() -> PathBuf {
    let prefix = root().join("target/tmp/isal-bench/prefix");
    script(
        "install-isal-compat.sh",
        &[OsStr::new("--prefix"), prefix.as_os_str()],
        "",
    );
    prefix.join("lib")
}

/// Runs `scripts/NAME` with bash and returns its standard output; a failure ends the
/// benchmark with the script's standard error (and `hint`).
fn script(name: &str, args: &[&OsStr], hint: &str) -> String {
    let out = Command::new("bash")
        .arg(root().join("scripts").join(name))
        .args(args)
        .output()
        .unwrap_or_else(|e| fail(&format!("cannot run {name}: {e}")));
    if !out.status.success() {
        fail(&format!(
            "scripts/{name} failed{hint}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The lib dir of ISA-L 2.32 as built from source for this binary.
fn reference_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    doca_testkit::install::isal_reference_dir(exe.parent().unwrap())
        .unwrap_or_else(|| fail("ISA-L's libisal.so.2 was not built beside this binary"))
}

type InitTables = unsafe extern "C" fn(c_int, c_int, *mut u8, *mut u8);
type GenMatrix = unsafe extern "C" fn(*mut u8, c_int, c_int);
type Encode = unsafe extern "C" fn(c_int, c_int, c_int, *mut u8, *mut *mut u8, *mut *mut u8);

/// A library loaded with `RTLD_LOCAL`.
struct Lib(*mut c_void);

impl Lib {
    fn open(path: &Path) -> Lib {
        let c = CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid path; the library's initialisers are its own.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if h.is_null() {
            fail(&format!("dlopen {} failed", path.display()));
        }
        Lib(h)
    }

    /// The function `name` as `F`, a function pointer type of its prototype.
    fn get<F: Copy>(&self, name: &str) -> F {
        assert_eq!(size_of::<F>(), size_of::<*mut c_void>());
        let c = CString::new(name).unwrap();
        // SAFETY: a live handle and a valid name.
        let p = unsafe { libc::dlsym(self.0, c.as_ptr()) };
        if p.is_null() {
            fail(&format!("no symbol {name}"));
        }
        // SAFETY: F is the symbol's function pointer type (the caller's promise).
        unsafe { std::mem::transmute_copy(&p) }
    }
}

/// GB/s of data in for `ec_encode_data` of a k + m code with fragments of `frag` bytes,
/// its matrix made by ISA-L's generator `gen` (`gf_gen_cauchy1_matrix` or
/// `gf_gen_rs_matrix`), for each library, and for `ec-codec`'s own prepared matrix of the
/// same kind, alternating; medians of `rounds` rounds.
fn direct(
    libs: &[&Lib; 2],
    gen_name: &str,
    k: usize,
    m: usize,
    frag: usize,
    rounds: usize,
) -> [f64; 3] {
    let mut data: Vec<Vec<u8>> = (0..k)
        .map(|i| (0..frag).map(|b| (b * 31 + i * 7) as u8).collect())
        .collect();
    let mut parity = vec![vec![0u8; frag]; m];
    let mut a = vec![0u8; (k + m) * k];
    let mut g = vec![0u8; 32 * k * m];
    let own_data = data.clone();
    let mut own_parity = parity.clone();
    let mut dp: Vec<*mut u8> = data.iter_mut().map(|b| b.as_mut_ptr()).collect();
    let mut pp: Vec<*mut u8> = parity.iter_mut().map(|b| b.as_mut_ptr()).collect();
    let mut samples = [Vec::new(), Vec::new(), Vec::new()];
    let iters = ((256usize << 20) / (k * frag)).max(4);
    let cm = if gen_name == "gf_gen_rs_matrix" {
        ec_codec::CodingMatrix::vandermonde(k, m).unwrap()
    } else {
        ec_codec::CodingMatrix::cauchy(k, m).unwrap()
    };
    let enc = ec_codec::Encoder::new(&cm).unwrap();
    let d: Vec<&[u8]> = own_data.iter().map(|b| &b[..]).collect();
    let mut p: Vec<&mut [u8]> = own_parity.iter_mut().map(|b| &mut b[..]).collect();
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..iters {
            enc.encode(&d, &mut p).unwrap();
        }
        samples[2].push((iters * k * frag) as f64 / t.elapsed().as_secs_f64() / 1e9);
        for (which, lib) in libs.iter().enumerate() {
            let (generate, init, enc): (GenMatrix, InitTables, Encode) = (
                lib.get(gen_name),
                lib.get("ec_init_tables"),
                lib.get("ec_encode_data"),
            );
            // SAFETY: buffers of the sizes ISA-L documents: (k + m) x k matrix, 32 * k * m
            // tables, k data and m parity pointers to frag bytes.
            let secs = unsafe {
                generate(a.as_mut_ptr(), (k + m) as c_int, k as c_int);
                init(
                    k as c_int,
                    m as c_int,
                    a[k * k..].as_mut_ptr(),
                    g.as_mut_ptr(),
                );
                let mut call = || {
                    enc(
                        frag as c_int,
                        k as c_int,
                        m as c_int,
                        g.as_mut_ptr(),
                        dp.as_mut_ptr(),
                        pp.as_mut_ptr(),
                    )
                };
                call();
                let t = Instant::now();
                for _ in 0..iters {
                    call();
                }
                t.elapsed().as_secs_f64()
            };
            samples[which].push((iters * k * frag) as f64 / secs / 1e9);
        }
    }
    let [a, b, c] = samples;
    [median(a), median(b), median(c)]
}

type Case = (String, u64, u64, u64, String);

/// One pyeclib run on the library in `dir`: seconds per call for every case.
fn pyeclib_run(python: &Path, dir: &Path, seconds: f64) -> Vec<(Case, f64)> {
    let out = Command::new(python)
        .arg(root().join("crates/doca-bench/py/pyeclib_bench.py"))
        .arg(dir.join("libisal.so.2"))
        .arg(seconds.to_string())
        .env("LD_LIBRARY_PATH", dir)
        .output()
        .unwrap_or_else(|e| fail(&format!("cannot run python: {e}")));
    if !out.status.success() {
        fail(&format!(
            "pyeclib_bench.py on {} failed:\n{}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| fail(&format!("pyeclib_bench.py printed no result: {e}")));
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let case = (
                r[0].as_str().unwrap().to_owned(),
                r[1].as_u64().unwrap(),
                r[2].as_u64().unwrap(),
                r[3].as_u64().unwrap(),
                r[4].as_str().unwrap().to_owned(),
            );
            (case, r[5].as_f64().unwrap())
        })
        .collect()
}

fn size(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{} MiB", b >> 20)
    } else {
        format!("{} KiB", b >> 10)
    }
}

pub fn run(a: &IsalArgs) {
    let (runs, seconds, rounds) = if a.quick {
        (1, 0.05, 1)
    } else {
        (a.runs.max(1), a.seconds, 7)
    };
    let ours = ours_dir();
    let reference = reference_dir();
    let env = root().join("target/tmp/pyeclib-env");
    let out = script(
        "pyeclib-env.sh",
        &[env.as_os_str()],
        " (it needs python3, liberasurecode-dev and PyPI)",
    );
    let python = PathBuf::from(out.trim());

    println!("# Our libisal.so.2 against ISA-L 2.32 (built from source), in one run");
    println!();
    println!("ours: {}", ours.join("libisal.so.2").display());
    println!("ISA-L: {}", reference.join("libisal.so.2").display());
    println!("kernel: {}", ec_codec::dispatch::selected().name());
    println!();
    println!("## ec_encode_data called directly (GB/s of data in, medians of {rounds})");
    println!();
    println!("| matrix | k+m | fragment | ISA-L 2.32 | ours | ratio | ec-codec's own matrix |");
    println!("|---|---|---|---|---|---|---|");
    let mut kernel_rates: Vec<(String, usize, usize, f64)> = Vec::new();
    let (lo, li) = (
        Lib::open(&ours.join("libisal.so.2")),
        Lib::open(&reference.join("libisal.so.2")),
    );
    for (kind, gen_name) in [
        ("Cauchy", "gf_gen_cauchy1_matrix"),
        ("Vandermonde", "gf_gen_rs_matrix"),
    ] {
        for (k, m) in [(10, 4), (8, 4)] {
            for frag in [64usize << 10, 1 << 20] {
                let [o, i, own] = direct(&[&lo, &li], gen_name, k, m, frag, rounds);
                if frag == 64 << 10 {
                    for (who, rate) in [("ISA-L", i), ("ours", o), ("ec-codec", own)] {
                        kernel_rates.push((format!("{kind} {k}+{m} 64 KiB, {who}"), k, m, rate));
                    }
                }
                println!(
                    "| {kind} | {k}+{m} | {} | {i:.2} | {o:.2} | {:.2}x | {own:.2} |",
                    size(frag as u64),
                    o / i
                );
            }
        }
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(f) = product_floor() {
        println!();
        println!(
            "This CPU (about {:.2} GHz) takes {:.2} cycles per 16 bytes for the bare \
             instructions of one nibble-table product with 128-bit registers, {:.2} with \
             256-bit ones.",
            f.ghz, f.narrow, f.wide
        );
        for (bits, c) in [(256, f.gfni256), (512, f.gfni512)] {
            if let Some(c) = c {
                println!(
                    "One GF2P8AFFINEQB product takes {c:.2} cycles per 64 bytes with {bits}-bit \
                     registers."
                );
            }
        }
        // The kernels' own cost per product, from the last table's rates: a k + m encode
        // does k * m products per k bytes of data in.
        for (label, k, m, rate) in &kernel_rates {
            let (k, m, rate) = (*k, *m, *rate);
            let cycles = f.ghz * 64.0 / (rate * m as f64);
            let floor = f.gfni512.or(f.gfni256).unwrap_or(f.wide * 4.0);
            println!(
                "{label} ({k}+{m}): {cycles:.2} cycles per product per 64 bytes, {:.2}x this \
                 CPU's floor.",
                cycles / floor
            );
        }
    }
    if a.direct_only {
        return;
    }
    println!();
    println!(
        "## pyeclib 1.8.0 over Debian's liberasurecode (ms per call, medians of {runs} alternating runs)"
    );
    println!();
    let mut times: Vec<(Case, Vec<f64>, Vec<f64>)> = Vec::new();
    for r in 0..runs {
        // Alternate which library goes first, so drift in the machine's load is shared.
        let order = if r % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for is_ours in order {
            let dir = if is_ours { &ours } else { &reference };
            for (case, t) in pyeclib_run(&python, dir, seconds) {
                let at = match times.iter().position(|(c, _, _)| *c == case) {
                    Some(at) => at,
                    None => {
                        times.push((case, Vec::new(), Vec::new()));
                        times.len() - 1
                    }
                };
                if is_ours {
                    times[at].1.push(t);
                } else {
                    times[at].2.push(t);
                }
            }
        }
    }
    println!("| code | k+m | fragment | op | ISA-L 2.32 | ours | ratio |");
    println!("|---|---|---|---|---|---|---|");
    let mut worst = f64::INFINITY;
    for ((ec_type, k, m, frag, op), o, i) in times {
        let (o, i) = (median(o), median(i));
        worst = worst.min(i / o);
        println!(
            "| {ec_type} | {k}+{m} | {} | {op} | {:.3} | {:.3} | {:.2}x |",
            size(frag),
            i * 1e3,
            o * 1e3,
            i / o
        );
    }
    println!();
    println!("ratio: ISA-L's time over ours (above 1: ours is faster); lowest {worst:.2}x");
}

/// Cycles per 16 bytes of one nibble-table product on this CPU, with nothing else in
/// the loop: two table loads, then two `vpshufb` and two `vpxor` on each of two
/// registers (the kernels' step), with 128-bit and with 256-bit registers; the clock
/// measured by a chain of dependent multiplies; and, where the CPU has GFNI, cycles per 64
/// bytes of one `GF2P8AFFINEQB` product (the matrix broadcast, the instruction and a
/// `vpxor` on each of two registers) with 256-bit and 512-bit registers. The registers
/// the products read hold whatever they hold: only the time counts. `None` without AVX2.
#[cfg(target_arch = "x86_64")]
pub(crate) fn product_floor() -> Option<Floor> {
    use std::arch::asm;
    if !std::arch::is_x86_feature_detected!("avx2") {
        return None;
    }
    const ITERS: u64 = 5_000_000;
    let tables = [0u8; 64];
    let t = tables.as_ptr();
    let time = |f: &dyn Fn()| {
        let s = Instant::now();
        f();
        s.elapsed().as_secs_f64()
    };
    // Eight dependent multiplies per iteration: 24 cycles (three each on every x86-64
    // core of the last decade; a chain of adds is no clock on cores that fold them).
    let chain = || {
        time(&|| {
            let mut x = 3u64;
            for _ in 0..ITERS {
                // SAFETY: register arithmetic only.
                unsafe {
                    asm!(
                        "imul {0}, {0}", "imul {0}, {0}", "imul {0}, {0}", "imul {0}, {0}",
                        "imul {0}, {0}", "imul {0}, {0}", "imul {0}, {0}", "imul {0}, {0}",
                        inout(reg) x, options(nomem, nostack),
                    )
                };
            }
            std::hint::black_box(x);
        })
    };
    // One step: the two tables loaded, then each of two registers multiplied and added.
    #[rustfmt::skip]
    macro_rules! step {
        ($load:literal, $w:literal) => {
            concat!(
                $load, " ", $w, "2, [{t}]\n", $load, " ", $w, "4, [{t} + 16]\n",
                "vpshufb ", $w, "6, ", $w, "2, ", $w, "0\n", "vpshufb ", $w, "8, ", $w, "4, ", $w, "1\n",
                "vpxor ", $w, "9, ", $w, "6, ", $w, "8\n", "vpxor ", $w, "10, ", $w, "10, ", $w, "9\n",
                "vpshufb ", $w, "6, ", $w, "2, ", $w, "12\n", "vpshufb ", $w, "8, ", $w, "4, ", $w, "13\n",
                "vpxor ", $w, "9, ", $w, "6, ", $w, "8\n", "vpxor ", $w, "11, ", $w, "11, ", $w, "9\n",
            )
        };
    }
    // Seconds for ITERS iterations of four steps; `vzeroupper` once at the end.
    macro_rules! steps {
        ($load:literal, $w:literal) => {
            time(&|| {
                for _ in 0..ITERS {
                    // SAFETY: AVX2 is present (checked above); reads 32 bytes of `tables`.
                    unsafe {
                        asm!(
                            step!($load, $w), step!($load, $w), step!($load, $w), step!($load, $w),
                            t = in(reg) t,
                            clobber_abi("C"),
                            options(nostack, readonly),
                        )
                    };
                }
                // SAFETY: AVX is present; clears the upper halves the loop left dirty.
                unsafe { asm!("vzeroupper", clobber_abi("C"), options(nomem, nostack)) };
            })
        };
    }
    // One GFNI step: the bit matrix broadcast, then each of two registers multiplied
    // (one `vgf2p8affineqb`) and added.
    #[rustfmt::skip]
    macro_rules! gfni_step {
        ($w:literal, $xor:literal) => {
            concat!(
                "vpbroadcastq ", $w, "2, [{t}]\n",
                "vgf2p8affineqb ", $w, "6, ", $w, "0, ", $w, "2, 0\n", $xor, " ", $w, "10, ", $w, "10, ", $w, "6\n",
                "vgf2p8affineqb ", $w, "8, ", $w, "12, ", $w, "2, 0\n", $xor, " ", $w, "11, ", $w, "11, ", $w, "8\n",
            )
        };
    }
    macro_rules! gfni_steps {
        ($w:literal, $xor:literal) => {
            time(&|| {
                for _ in 0..ITERS {
                    // SAFETY: the caller checked the features of this width; reads 8
                    // bytes of `tables`.
                    unsafe {
                        asm!(
                            gfni_step!($w, $xor), gfni_step!($w, $xor),
                            gfni_step!($w, $xor), gfni_step!($w, $xor),
                            t = in(reg) t,
                            clobber_abi("C"),
                            options(nostack, readonly),
                        )
                    };
                }
                // SAFETY: AVX is present; clears the upper halves the loop left dirty.
                unsafe { asm!("vzeroupper", clobber_abi("C"), options(nomem, nostack)) };
            })
        };
    }
    let gfni256 = std::arch::is_x86_feature_detected!("gfni");
    let gfni512 = gfni256
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw");
    // Five rounds, each timing the clock and every loop together; medians, so that a
    // round the machine's other load disturbed does not count.
    let mut rounds = [(); 5].map(|_| Vec::new());
    for _ in 0..5 {
        let hz = (24 * ITERS) as f64 / chain();
        let narrow = steps!("vmovdqu", "xmm");
        let wide = steps!("vbroadcasti128", "ymm");
        // Four steps per iteration: 4 x 32 bytes (128-bit) or 4 x 64 bytes (256-bit).
        let per16 = |secs: f64, bytes: f64| secs * hz / ITERS as f64 / (4.0 * bytes / 16.0);
        rounds[0].push(hz / 1e9);
        rounds[1].push(per16(narrow, 32.0));
        rounds[2].push(per16(wide, 64.0));
        if gfni256 {
            rounds[3].push(per16(gfni_steps!("ymm", "vpxor"), 64.0) * 4.0);
        }
        if gfni512 {
            rounds[4].push(per16(gfni_steps!("zmm", "vpxorq"), 128.0) * 4.0);
        }
    }
    let [ghz, narrow, wide, g256, g512] = rounds;
    let opt = |v: Vec<f64>| (!v.is_empty()).then(|| median(v));
    Some(Floor {
        ghz: median(ghz),
        narrow: median(narrow),
        wide: median(wide),
        gfni256: opt(g256),
        gfni512: opt(g512),
    })
}

/// This CPU's floors for one product (see [`product_floor`]).
#[cfg(target_arch = "x86_64")]
pub(crate) struct Floor {
    /// The clock, GHz.
    pub(crate) ghz: f64,
    /// Cycles per 16 bytes, nibble tables, 128-bit registers.
    pub(crate) narrow: f64,
    /// Cycles per 16 bytes, nibble tables, 256-bit registers.
    pub(crate) wide: f64,
    /// Cycles per 64 bytes, `GF2P8AFFINEQB` on 256-bit registers.
    pub(crate) gfni256: Option<f64>,
    /// Cycles per 64 bytes, `GF2P8AFFINEQB` on 512-bit registers.
    pub(crate) gfni512: Option<f64>,
}
