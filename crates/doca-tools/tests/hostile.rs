//! The tools used as a careless or hostile user would: closed pipes, huge sizes, FIFOs
//! and device nodes where files belong, names that are not UTF-8, signals mid-run and
//! temporaries of killed runs. Nothing hangs, panics, replaces what is not a regular
//! file, or leaves partial files behind.

mod common;
use common::*;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const EC: &str = env!("CARGO_BIN_EXE_doca-ec");
const DMA: &str = env!("CARGO_BIN_EXE_doca-dma-copy");
const SHA: &str = env!("CARGO_BIN_EXE_doca-sha");
const CAPS: &str = env!("CARGO_BIN_EXE_doca-caps");
const SE: &str = env!("CARGO_BIN_EXE_doca-sync-event");

/// Runs `bin` with its standard output a pipe whose reader is already gone.
fn with_closed_stdout(bin: &str, args: &[&str], dir: &Path) -> (i32, String) {
    use std::io::Read;
    // The reader is closed before the tool starts: its first write finds no reader.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut c = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", dir)
        .env_remove("DOCA_SW_TOPOLOGY")
        .env_remove("DOCA_SW_ROLE")
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    let st = loop {
        if let Some(st) = c.try_wait().unwrap() {
            break st;
        }
        if t.elapsed() > Duration::from_secs(120) {
            let _ = c.kill();
            panic!("{bin} {args:?} did not end after its reader went away");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut err = String::new();
    let _ = c.stderr.take().unwrap().read_to_string(&mut err);
    (st.code().unwrap_or(-1), err)
}

#[test]
fn closed_pipes_end_the_tools_quietly_and_clean_up() {
    let s = Scratch::new("pipes");
    let input = s.write("in.bin", &bytes(100_000, 1));
    let cases: [(&str, Vec<&str>); 4] = [
        (EC, vec!["demo"]),
        (CAPS, vec![]),
        (SE, vec!["--rounds", "10"]),
        (SHA, vec![input.to_str().unwrap()]),
    ];
    for (bin, args) in cases {
        let (code, err) = with_closed_stdout(bin, &args, &s.0);
        assert_eq!(code, 141, "{bin} {args:?}: {err}");
        assert!(!err.contains("panicked"), "{bin} {args:?}: {err}");
    }
    // The demo's directory (under TMPDIR, the scratch here) went with it.
    let left: Vec<String> = s
        .names()
        .into_iter()
        .filter(|n| n.starts_with("doca-ec-demo"))
        .collect();
    assert!(left.is_empty(), "the demo left {left:?}");
}

#[test]
fn output_that_cannot_be_written_is_a_failure() {
    // sha256sum > /dev/full fails; so does doca-sha.
    let s = Scratch::new("full");
    let input = s.write("in.bin", b"abc");
    let full = std::fs::File::options().write(true).open("/dev/full");
    let Ok(full) = full else {
        return; // No /dev/full in this sandbox.
    };
    let o = Command::new(SHA)
        .arg(&input)
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot write to standard output"),
        "{o:?}"
    );
}

#[test]
fn huge_sizes_are_refused_with_a_clear_error() {
    let s = Scratch::new("sizes");
    let input = s.write("in.bin", &bytes(1000, 2));
    let i = input.to_str().unwrap();
    for (bin, args) in [
        (SHA, vec!["--chunk", "8G", i]),
        (SHA, vec!["--chunk", "2305843009213693952", i]),
        (SHA, vec!["--chunk", "0", i]),
        (DMA, vec!["--chunk", "8G", i, "out.bin"]),
        (
            EC,
            vec!["encode", "-i", i, "-o", "blocks", "--stripe", "8G"],
        ),
    ] {
        let o = run_within(bin, &args, &s.0, 60);
        assert_eq!(o.code, 2, "{bin} {args:?}: {}", o.stderr);
        assert!(
            o.stderr.contains("MiB this option takes") || o.stderr.contains("0 bytes"),
            "{bin} {args:?}: {}",
            o.stderr
        );
        assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    }
    assert!(!s.path("out.bin").exists() && !s.path("blocks").exists());
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn fifos_are_refused_not_waited_on() {
    let s = Scratch::new("fifo");
    let fifo = s.path("fifo");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    for (bin, args) in [
        (EC, vec!["encode", "-i", f, "-o", "blocks"]),
        (DMA, vec![f, "copy.bin"]),
    ] {
        let o = run_within(bin, &args, &s.0, 60);
        assert_eq!(o.code, 1, "{bin} {args:?}: {}", o.stderr);
        assert!(o.stderr.contains("FIFO"), "{}", o.stderr);
    }
    // A FIFO planted as a block is refused too, not opened.
    let data = s.write("data.bin", &bytes(10_000, 3));
    let o = run_within(
        EC,
        &["encode", "-i", data.to_str().unwrap(), "-o", "set"],
        &s.0,
        60,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    std::fs::remove_file(s.path("set/data_block_0")).unwrap();
    mkfifo(&s.path("set/data_block_0"));
    let o = run_within(EC, &["recover", "-i", "set", "-o", "back.bin"], &s.0, 60);
    assert_ne!(o.code, 0, "{}", o.stdout);
    assert!(!s.path("back.bin").exists());
}

#[test]
fn only_regular_files_are_ever_replaced() {
    let s = Scratch::new("nodes");
    let src = s.write("src.bin", &bytes(5000, 4));
    // Links to device nodes stand for the nodes: the tool sees a device either way, and
    // a regression would replace only the link.
    std::os::unix::fs::symlink("/dev/null", s.path("null")).unwrap();
    std::fs::create_dir(s.path("dir")).unwrap();
    for dst in ["null", "dir"] {
        for force in [false, true] {
            let mut args = vec![src.to_str().unwrap(), dst];
            if force {
                args.push("--force");
            }
            let o = run_within(DMA, &args, &s.0, 60);
            assert_eq!(o.code, 1, "{args:?}: {}", o.stderr);
            let want = if dst == "null" {
                "is a device"
            } else {
                "is a directory"
            };
            assert!(o.stderr.contains(want), "{args:?}: {}", o.stderr);
            assert!(!o.stderr.contains("use --force"), "{}", o.stderr);
        }
    }
    assert!(
        std::fs::symlink_metadata(s.path("null"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(s.path("dir").is_dir());
    // A regular file is replaced with --force, as before.
    s.write("old.bin", b"old");
    let o = run_within(
        DMA,
        &[src.to_str().unwrap(), "old.bin", "--force"],
        &s.0,
        60,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(std::fs::read(s.path("old.bin")).unwrap(), bytes(5000, 4));
}

#[test]
fn sha_checks_every_name_unix_allows() {
    use std::os::unix::ffi::OsStringExt;
    let s = Scratch::new("names");
    let odd = std::ffi::OsString::from_vec(b"caf\xe9 \\ x".to_vec());
    std::fs::write(s.0.join(&odd), b"latin-1 name").unwrap();
    s.write("plain.txt", b"plain");
    let sums = Command::new(SHA)
        .arg(&odd)
        .arg("plain.txt")
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(sums.status.success(), "{sums:?}");
    // The odd name is escaped (a backslash) and its bytes kept as they are.
    assert!(sums.stdout.starts_with(b"\\"), "{sums:?}");
    assert!(sums.stdout.windows(odd.len()).all(|w| w != odd.as_bytes()));
    std::fs::write(s.path("SUMS"), &sums.stdout).unwrap();
    // A list that also holds a line that is not UTF-8 and names a file that is gone.
    let mut list = sums.stdout.clone();
    list.extend_from_slice(
        b"0000000000000000000000000000000000000000000000000000000000000000  gone\xff\n",
    );
    std::fs::write(s.path("SUMS2"), &list).unwrap();
    let o = run_within(SHA, &["--check", "SUMS"], &s.0, 60);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert_eq!(o.stdout.matches(": OK").count(), 2, "{}", o.stdout);
    let o = run_within(SHA, &["--check", "SUMS2"], &s.0, 60);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert_eq!(o.stdout.matches(": OK").count(), 2, "{}", o.stdout);
    assert!(o.stdout.contains("FAILED open or read"), "{}", o.stdout);
}

#[test]
fn sync_event_needs_a_round() {
    let s = Scratch::new("rounds");
    for n in ["0", "18446744073709551615"] {
        let o = run_within(SE, &["--rounds", n], &s.0, 60);
        assert_eq!(o.code, 1, "{n}: {}", o.stdout);
        assert!(o.stderr.contains("--rounds"), "{}", o.stderr);
    }
}

/// Names of temporaries in `dir`.
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains(doca_tools::cleanup::TEMP_MARK))
                .collect()
        })
        .unwrap_or_default()
}

/// A small random number (xorshift on the clock), for moments to signal at.
fn jitter(max: u64) -> u64 {
    let mut x = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64
        | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x % max.max(1)
}

#[test]
fn signals_stop_the_work_and_remove_its_temporaries() {
    let s = Scratch::new("sigint");
    // Large enough that most runs are still working when the signal comes.
    let data = bytes(96 << 20, 5);
    let input = s.write("big.bin", &data);
    let i = input.to_str().unwrap();
    let mut stopped = 0;
    for round in 0..12 {
        let sig = if round % 2 == 0 {
            libc::SIGINT
        } else {
            libc::SIGTERM
        };
        let (bin, args): (&str, Vec<&str>) = if round % 3 == 0 {
            (DMA, vec!["--chunk", "64K", i, "copy.bin", "--force"])
        } else {
            (
                EC,
                vec!["encode", "-i", i, "-o", "set", "--force", "--stripe", "64K"],
            )
        };
        let mut c = Command::new(bin)
            .args(&args)
            .current_dir(&s.0)
            .env_remove("DOCA_SW_TOPOLOGY")
            .env_remove("DOCA_SW_ROLE")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(10 + jitter(150)));
        // SAFETY: signalling our own child.
        unsafe { libc::kill(c.id() as i32, sig) };
        let st = c.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut c.stderr.take().unwrap(), &mut err).unwrap();
        match st.code() {
            Some(0) => {}
            Some(code) => {
                assert_eq!(code, 128 + sig, "{args:?}: {err}");
                assert!(err.contains("interrupted by SIG"), "{err}");
                stopped += 1;
            }
            None => panic!("{args:?} died of its signal instead of cleaning up: {err}"),
        }
        assert!(!err.contains("panicked"), "{err}");
        for d in [s.0.clone(), s.path("set")] {
            let t = temporaries(&d);
            assert!(t.is_empty(), "round {round}: left {t:?} in {}", d.display());
        }
    }
    assert!(
        stopped > 0,
        "no run was interrupted: the input is too small"
    );
}

/// Temporaries of runs that were killed (SIGKILL: nothing can clean up) are removed by
/// the next run that writes into the same directory; a live process's are not.
#[test]
fn temporaries_of_killed_runs_are_removed_later() {
    let s = Scratch::new("stale");
    let input = s.write("big.bin", &bytes(24 << 20, 6));
    let i = input.to_str().unwrap();
    // A dead process id: a child that has ended.
    let mut t = Command::new("true").spawn().unwrap();
    let dead = t.id();
    t.wait().unwrap();
    let stale = s.path(&format!(
        ".copy.bin{}{dead}",
        doca_tools::cleanup::TEMP_MARK
    ));
    std::fs::write(&stale, b"partial").unwrap();
    let live = s.path(&format!(
        ".other.bin{}{}",
        doca_tools::cleanup::TEMP_MARK,
        std::process::id()
    ));
    std::fs::write(&live, b"in progress").unwrap();
    // A real one: kill -9 a copy mid-run.
    let mut c = Command::new(DMA)
        .args(["--chunk", "64K", i, "copy2.bin"])
        .current_dir(&s.0)
        .env_remove("DOCA_SW_TOPOLOGY")
        .env_remove("DOCA_SW_ROLE")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(30));
    let _ = c.kill();
    let _ = c.wait();
    let o = run_within(DMA, &[i, "copy.bin"], &s.0, 120);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        !stale.exists(),
        "the dead process's temporary is still there"
    );
    assert!(live.exists(), "a live process's temporary was removed");
    let left = temporaries(&s.0);
    assert_eq!(left.len(), 1, "{left:?}");
}

#[test]
fn the_samples_duplicate_indices_are_refused_before_anything_is_done() {
    let s = Scratch::new("dup");
    let input = s.write("in.bin", &bytes(20_000, 7));
    std::fs::create_dir(s.path("out")).unwrap();
    let o = run_within(
        EC,
        &[
            "-i",
            input.to_str().unwrap(),
            "-o",
            "out",
            "-b",
            "-d",
            "0,0",
        ],
        &s.0,
        60,
    );
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stderr.contains("given twice"), "{}", o.stderr);
    assert_eq!(std::fs::read_dir(s.path("out")).unwrap().count(), 0);
}

/// Encodes `data` as `name` into `set` (4 data + 2 redundancy blocks unless `shape`
/// says otherwise); what the encode printed.
fn encode_set(s: &Scratch, name: &str, data: &[u8], shape: &[&str]) -> Out {
    s.write(name, data);
    let mut args = vec!["encode", "-i", name, "-o", "set"];
    args.extend_from_slice(if shape.is_empty() {
        &["-t", "4", "-r", "2"]
    } else {
        shape
    });
    let o = run_within(EC, &args, &s.0, 120);
    assert_eq!(o.code, 0, "{}", o.stderr);
    o
}

fn flip(p: &Path, at: usize) {
    let mut b = std::fs::read(p).unwrap();
    b[at] ^= 0x40;
    std::fs::write(p, b).unwrap();
}

/// Item 1: the manifest checks itself, and recover proves its output.
#[test]
fn an_edited_manifest_is_refused_and_outputs_are_proved() {
    let s = Scratch::new("manifest");
    let data = bytes(100_000, 8);
    encode_set(&s, "in.bin", &data, &[]);
    let o = run_within(EC, &["recover", "-i", "set", "-o", "out.bin"], &s.0, 120);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("verified against the original's digest"),
        "{}",
        o.stdout
    );
    assert_eq!(std::fs::read(s.path("out.bin")).unwrap(), data);
    let m = s.path("set/ec_manifest");
    let text = std::fs::read_to_string(&m).unwrap();
    for edited in ["size 100001", "size 10000"] {
        std::fs::write(&m, text.replace("size 100000", edited)).unwrap();
        for args in [
            vec!["verify", "-i", "set"],
            vec!["recover", "-i", "set", "-o", "again.bin"],
        ] {
            let o = run_within(EC, &args, &s.0, 120);
            assert_eq!(o.code, 1, "{edited} {args:?}: {}", o.stdout);
            assert!(o.stderr.contains("edited or damaged"), "{}", o.stderr);
            assert!(!s.path("again.bin").exists());
        }
    }
    // With the manifest moved aside, data_info and the counts still recover the file
    // (and the blocks left over check it).
    std::fs::rename(&m, s.path("manifest.bad")).unwrap();
    std::fs::remove_file(s.path("set/data_block_2")).unwrap();
    let o = run_within(
        EC,
        &[
            "recover",
            "-i",
            "set",
            "-o",
            "again.bin",
            "-t",
            "4",
            "-r",
            "2",
        ],
        &s.0,
        120,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("the blocks agree"), "{}", o.stdout);
    assert_eq!(std::fs::read(s.path("again.bin")).unwrap(), data);
}

/// Item 6: any Unix path round-trips through the manifest.
#[test]
fn odd_paths_round_trip() {
    use std::os::unix::ffi::OsStringExt;
    let s = Scratch::new("paths");
    let name = std::ffi::OsString::from_vec(b"line\nbreak \xff.bin".to_vec());
    let data = bytes(30_000, 9);
    std::fs::write(s.0.join(&name), &data).unwrap();
    let o = Command::new(EC)
        .arg("encode")
        .arg("-i")
        .arg(&name)
        .args(["-o", "set"])
        .current_dir(&s.0)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let o = run_within(EC, &["verify", "-i", "set"], &s.0, 60);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    std::fs::create_dir(s.path("back")).unwrap();
    std::fs::remove_file(s.path("set/data_block_0")).unwrap();
    let o = run_within(EC, &["recover", "-i", "set", "-o", "back"], &s.0, 60);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // The original name, bytes and all.
    assert_eq!(std::fs::read(s.path("back").join(&name)).unwrap(), data);
}

/// Item 4: directories in the DOCA sample's layout (no manifest) are checked by their
/// own redundancy; output that nothing proves is said to be so, with exit code 3.
#[test]
fn sample_directories_never_pass_off_unproved_output() {
    let s = Scratch::new("nomanifest");
    let data = bytes(50_000, 10);
    encode_set(&s, "in.bin", &data, &[]);
    std::fs::remove_file(s.path("set/ec_manifest")).unwrap();
    let counts = ["-t", "4", "-r", "2"];
    let recover = |extra: &[&str]| {
        let _ = std::fs::remove_file(s.path("out.bin"));
        let mut a = vec!["recover", "-i", "set", "-o", "out.bin"];
        a.extend_from_slice(extra);
        run_within(EC, &a, &s.0, 120)
    };
    // A flipped byte in a data block, nothing missing: refused, nothing written.
    flip(&s.path("set/data_block_1"), 77);
    let o = recover(&counts);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stderr.contains("the blocks disagree"), "{}", o.stderr);
    assert!(!s.path("out.bin").exists());
    flip(&s.path("set/data_block_1"), 77);
    // The wrong matrix with a block missing: refused (a block is left over to check).
    std::fs::rename(s.path("set/data_block_3"), s.path("held")).unwrap();
    let o = recover(&["-t", "4", "-r", "2", "-x", "vandermonde"]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stderr.contains("the blocks disagree"), "{}", o.stderr);
    assert!(!s.path("out.bin").exists());
    // The right one: checked and whole.
    let o = recover(&counts);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("the blocks agree"), "{}", o.stdout);
    assert_eq!(std::fs::read(s.path("out.bin")).unwrap(), data);
    // Two missing of two: nothing is left to check; written, but said plainly.
    std::fs::remove_file(s.path("set/data_block_3")).unwrap();
    std::fs::remove_file(s.path("set/rdnc_block_0")).unwrap();
    let o = recover(&counts);
    assert_eq!(o.code, 3, "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("NOT PROVED"), "{}", o.stderr);
    assert_eq!(std::fs::read(s.path("out.bin")).unwrap(), data);
    // A data_info that says the file is shorter than it is: refused.
    std::fs::write(s.path("set/data_info"), b"40000 in.bin").unwrap();
    let o = recover(&counts);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stderr.contains("bytes past"), "{}", o.stderr);
    // One that says it is longer than the blocks can hold: refused.
    std::fs::write(s.path("set/data_info"), b"51000 in.bin").unwrap();
    let o = recover(&counts);
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("cannot hold"), "{}", o.stderr);
    assert!(!s.path("out.bin").exists());
    std::fs::write(s.path("set/data_info"), b"50000 in.bin").unwrap();
    // A data block grown by 64 bytes is the one blamed, not the others.
    let p = s.path("set/data_block_0");
    let mut b = std::fs::read(&p).unwrap();
    b.extend_from_slice(&[0u8; 64]);
    std::fs::write(&p, b).unwrap();
    let o = recover(&counts);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("rebuilt data_block_0 (wrong size"),
        "{}",
        o.stdout
    );
    assert!(!o.stdout.contains("data_block_1"), "{}", o.stdout);
    assert_eq!(std::fs::read(s.path("out.bin")).unwrap(), data);
}

/// Item 2: a Vandermonde shape that cannot undo every loss says so at encode; verify
/// says exactly whether the present loss can be undone, and recover finds independent
/// survivors where the first M are not.
#[test]
fn vandermonde_losses_are_told_exactly() {
    use doca_ec::MatrixType::Vandermonde;
    use doca_tools::ecfile::mds::independent_survivors;
    let s = Scratch::new("vandermonde");
    let data = bytes(40_000, 11);
    let o = encode_set(
        &s,
        "in.bin",
        &data,
        &["-x", "vandermonde", "-t", "4", "-r", "4"],
    );
    assert!(
        o.stderr
            .contains("1 of the 70 ways to lose 4 of these 8 blocks"),
        "{}",
        o.stderr
    );
    let names = |lost: &[usize]| -> Vec<String> {
        lost.iter()
            .map(|&i| {
                if i < 4 {
                    format!("data_block_{i}")
                } else {
                    format!("rdnc_block_{}", i - 4)
                }
            })
            .collect()
    };
    let hide = |lost: &[usize]| {
        for n in names(lost) {
            std::fs::rename(s.path(&format!("set/{n}")), s.path(&n)).unwrap();
        }
    };
    let restore = |lost: &[usize]| {
        for n in names(lost) {
            let _ = std::fs::rename(s.path(&n), s.path(&format!("set/{n}")));
        }
    };
    let losses = |k: usize| -> Vec<Vec<usize>> {
        (0u32..256)
            .filter(|m| m.count_ones() as usize == k)
            .map(|m| (0..8).filter(|i| m & (1 << i) != 0).collect())
            .collect()
    };
    let present = |lost: &[usize]| -> Vec<usize> { (0..8).filter(|i| !lost.contains(i)).collect() };
    // The loss of 4 that cannot be undone.
    let bad: Vec<usize> = losses(4)
        .into_iter()
        .find(|l| independent_survivors(Vandermonde, 4, 4, &present(l)).is_none())
        .expect("4+4 Vandermonde has one");
    hide(&bad);
    let o = run_within(EC, &["verify", "-i", "set"], &s.0, 60);
    assert_eq!(o.code, 1);
    assert!(o.stdout.contains("cannot be undone"), "{}", o.stdout);
    let o = run_within(EC, &["recover", "-i", "set", "-o", "out.bin"], &s.0, 60);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("cannot be undone"), "{}", o.stderr);
    assert!(!s.path("out.bin").exists());
    restore(&bad);
    // Every other loss of 4 blocks is recovered.
    for l in losses(4) {
        if l == bad {
            continue;
        }
        hide(&l);
        let _ = std::fs::remove_file(s.path("out.bin"));
        let o = run_within(EC, &["verify", "-i", "set"], &s.0, 60);
        assert!(
            o.stdout.contains("run `doca-ec recover`"),
            "{l:?}: {}",
            o.stdout
        );
        let o = run_within(EC, &["recover", "-i", "set", "-o", "out.bin"], &s.0, 60);
        assert_eq!(o.code, 0, "{l:?}: {}", o.stderr);
        assert_eq!(std::fs::read(s.path("out.bin")).unwrap(), data, "{l:?}");
        restore(&l);
    }
}

/// With fewer than K blocks lost, the first M survivors of a Vandermonde matrix may be
/// dependent while others are not: recover finds independent ones.
#[test]
fn recover_finds_independent_survivors() {
    use doca_ec::MatrixType::Vandermonde;
    use doca_tools::ecfile::mds::independent_survivors;
    let (m, k) = (8usize, 6usize);
    let n = m + k;
    let coding = ec_codec::CodingMatrix::vandermonde(m, k).unwrap();
    let mut steered = Vec::new();
    for mask in 0u32..(1 << n) {
        let lost: Vec<usize> = (0..n).filter(|i| mask & (1 << i) != 0).collect();
        if lost.is_empty() || lost.len() >= k {
            continue;
        }
        let present: Vec<usize> = (0..n).filter(|i| !lost.contains(i)).collect();
        if coding.recover(&lost).is_err()
            && independent_survivors(Vandermonde, m, k, &present).is_some()
        {
            steered.push(lost);
        }
    }
    assert!(!steered.is_empty(), "8+6 has such losses");
    let s = Scratch::new("steered");
    let data = bytes(100_000, 12);
    encode_set(
        &s,
        "in.bin",
        &data,
        &["-x", "vandermonde", "-t", "8", "-r", "6"],
    );
    for lost in steered.iter().take(3) {
        for &i in lost {
            let name = if i < m {
                format!("set/data_block_{i}")
            } else {
                format!("set/rdnc_block_{}", i - m)
            };
            std::fs::remove_file(s.path(&name)).unwrap();
        }
        let _ = std::fs::remove_file(s.path("out.bin"));
        let o = run_within(EC, &["recover", "-i", "set", "-o", "out.bin"], &s.0, 60);
        assert_eq!(o.code, 0, "{lost:?}: {}", o.stderr);
        assert_eq!(std::fs::read(s.path("out.bin")).unwrap(), data, "{lost:?}");
        let o = run_within(EC, &["verify", "-i", "set"], &s.0, 60);
        assert_eq!(o.code, 0, "{lost:?}: {}", o.stdout);
    }
}

/// Items 12 and 13: recover can leave the block directory untouched, and never writes
/// its output over the set's own files.
#[test]
fn recover_keeps_to_its_output() {
    let s = Scratch::new("keep");
    let data = bytes(60_000, 13);
    encode_set(&s, "in.bin", &data, &[]);
    std::fs::remove_file(s.path("set/data_block_1")).unwrap();
    for name in [
        "ec_manifest",
        "data_block_0",
        "data_block_1",
        "rdnc_block_1",
        "data_info",
    ] {
        let out = format!("set/{name}");
        let before = std::fs::read(s.path(&out)).ok();
        let o = run_within(
            EC,
            &["recover", "-i", "set", "-o", &out, "--force"],
            &s.0,
            60,
        );
        assert_eq!(o.code, 1, "{name}: {}", o.stdout);
        assert!(
            o.stderr.contains("one of the block set's own files"),
            "{}",
            o.stderr
        );
        assert_eq!(std::fs::read(s.path(&out)).ok(), before, "{name} changed");
    }
    // --no-write-back: the file comes back, the directory stays as it was.
    let o = run_within(
        EC,
        &["recover", "-i", "set", "-o", "out.bin", "--no-write-back"],
        &s.0,
        60,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("not written back"), "{}", o.stdout);
    assert_eq!(std::fs::read(s.path("out.bin")).unwrap(), data);
    assert!(!s.path("set/data_block_1").exists());
    // A directory that cannot be written (as a user without root): the same, by itself.
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(s.path("set"), std::fs::Permissions::from_mode(0o555)).unwrap();
        let o = run_within(EC, &["recover", "-i", "set", "-o", "out2.bin"], &s.0, 60);
        std::fs::set_permissions(s.path("set"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert!(o.stdout.contains("cannot be written"), "{}", o.stdout);
        assert_eq!(std::fs::read(s.path("out2.bin")).unwrap(), data);
    }
}

/// Item 3: `encode --force` replaces a set all at once, and refuses a directory it
/// could not swap without taking other files along.
#[test]
fn replacing_a_set_is_all_or_nothing() {
    let s = Scratch::new("replace");
    let (a, b) = (bytes(300_000, 14), bytes(200_000, 15));
    encode_set(&s, "a.bin", &a, &[]);
    s.write("b.bin", &b);
    let o = run_within(
        EC,
        &[
            "encode", "-i", "b.bin", "-o", "set", "--force", "-t", "3", "-r", "1",
        ],
        &s.0,
        60,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    // Only the new set's files remain (the old, wider one went with the swap).
    let names = names_in(&s.path("set"));
    assert_eq!(
        names,
        [
            "data_block_0",
            "data_block_1",
            "data_block_2",
            "data_info",
            "ec_manifest",
            "rdnc_block_0"
        ]
    );
    assert!(temporaries(&s.0).is_empty(), "{:?}", temporaries(&s.0));
    // Another file in the directory: refused, nothing changed.
    s.write("set/notes.txt", b"mine");
    let o = run_within(
        EC,
        &["encode", "-i", "a.bin", "-o", "set", "--force"],
        &s.0,
        60,
    );
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stderr.contains("holds other files"), "{}", o.stderr);
    assert_eq!(std::fs::read(s.path("set/notes.txt")).unwrap(), b"mine");
    let o = run_within(EC, &["recover", "-i", "set", "-o", "back.bin"], &s.0, 60);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(std::fs::read(s.path("back.bin")).unwrap(), b);
}

/// Item 3's proof: `encode --force` and `recover` killed (SIGKILL) at 50 random moments
/// each; after every kill the set recovers the old content or the new, whole.
#[test]
fn killed_at_random_moments_a_set_always_recovers() {
    let s = Scratch::new("crash");
    // Small enough that a kill lands anywhere from the start to after the end.
    let contents = [bytes(1 << 20, 16), bytes(900_000, 17)];
    s.write("c0.bin", &contents[0]);
    s.write("c1.bin", &contents[1]);
    let o = run_within(EC, &["encode", "-i", "c0.bin", "-o", "set"], &s.0, 120);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut current = 0usize;
    let spawn = |args: &[&str]| {
        Command::new(EC)
            .args(args)
            .current_dir(&s.0)
            .env_remove("DOCA_SW_TOPOLOGY")
            .env_remove("DOCA_SW_ROLE")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let check = |round: usize, current: &mut usize| {
        let _ = std::fs::remove_file(s.path("check.bin"));
        let o = run_within(
            EC,
            &["recover", "-i", "set", "-o", "check.bin", "--no-write-back"],
            &s.0,
            120,
        );
        assert_eq!(o.code, 0, "round {round}: {}", o.stderr);
        let got = std::fs::read(s.path("check.bin")).unwrap();
        let which = contents
            .iter()
            .position(|c| *c == got)
            .unwrap_or_else(|| panic!("round {round}: neither the old nor the new content"));
        *current = which;
    };
    for round in 0..50 {
        // Replace the set with the other content; kill at a random moment.
        let other = format!("c{}.bin", 1 - current);
        let mut c = spawn(&["encode", "-i", &other, "-o", "set", "--force"]);
        std::thread::sleep(Duration::from_millis(jitter(200)));
        let _ = c.kill();
        let _ = c.wait();
        check(round, &mut current);
        // Lose two blocks, recover with write-back, kill at a random moment.
        for b in ["set/data_block_0", "set/rdnc_block_1"] {
            let _ = std::fs::remove_file(s.path(b));
        }
        let mut c = spawn(&["recover", "-i", "set", "-o", "r.bin", "--force"]);
        std::thread::sleep(Duration::from_millis(jitter(200)));
        let _ = c.kill();
        let _ = c.wait();
        check(round, &mut current);
    }
}

/// A small file system mounted for a test (tmpfs of `size` bytes), unmounted when
/// dropped; `None` where mounting is not allowed (not root, or no mount namespace rights).
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    fn mount(at: &Path, size: usize) -> Option<SmallDisk> {
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        std::fs::create_dir_all(at).unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()?;
        st.success().then(|| SmallDisk(at.to_path_buf()))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// A disk without room for the outputs: encode and recover say so before writing, and
/// leave nothing there (no temporaries, no partial blocks or file).
#[test]
fn a_full_disk_is_reported_before_anything_is_written() {
    let s = Scratch::new("full-disk");
    let data = bytes(3 << 20, 21);
    encode_set(&s, "in.bin", &data, &[]);
    let Some(disk) = SmallDisk::mount(&s.path("small"), 1 << 20) else {
        eprintln!("not root or mount not allowed: the full-disk case is not run here");
        return;
    };
    let o = run_within(EC, &["encode", "-i", "in.bin", "-o", "small/set"], &s.0, 60);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stderr.contains("cannot set aside"), "{}", o.stderr);
    assert!(o.stderr.contains("DOCA_ERROR_IO_FAILED"), "{}", o.stderr);
    assert!(
        names_in(&s.path("small/set")).is_empty(),
        "{:?}",
        names_in(&s.path("small/set"))
    );
    // Recover: the file does not fit; nothing under its name, no temporary.
    std::fs::remove_file(s.path("set/data_block_1")).unwrap();
    let o = run_within(
        EC,
        &[
            "recover",
            "-i",
            "set",
            "-o",
            "small/out.bin",
            "--no-write-back",
        ],
        &s.0,
        60,
    );
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(o.stderr.contains("cannot set aside"), "{}", o.stderr);
    assert!(
        names_in(&s.path("small")).iter().all(|n| n == "set"),
        "{:?}",
        names_in(&s.path("small"))
    );
    drop(disk);
    // Elsewhere the same set recovers.
    let o = run_within(EC, &["recover", "-i", "set", "-o", "out.bin"], &s.0, 60);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(std::fs::read(s.path("out.bin")).unwrap(), data);
}
