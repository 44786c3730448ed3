//! `doca-ec` end to end: round trips of files of any size with up to K blocks lost or
//! damaged, on both engines; the sample's mode; and bad input that loses nothing.

mod common;
use common::*;
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_doca-ec");

fn ec(args: &[&str], dir: &Path) -> Out {
    run(BIN, args, dir, None, None)
}

fn ok(o: &Out) {
    assert_eq!(o.code, 0, "stdout: {}\nstderr: {}", o.stdout, o.stderr);
}

#[test]
fn demo_round_trips_its_own_source() {
    let s = Scratch::new("ec-demo");
    let o = ec(&["demo"], &s.0);
    ok(&o);
    assert!(
        o.stdout.contains("LOST: data_block_1 (missing)"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("LOST: data_block_2 (damaged"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("byte-identical"), "{}", o.stdout);
}

#[test]
fn files_of_any_size_round_trip_with_blocks_lost() {
    let s = Scratch::new("ec-trip");
    let topo = engine_topology(&s, 2);
    let sizes = [0usize, 1, 63, 64, 1000, 100_000, (1 << 20) + 17];
    for (n, size) in sizes.into_iter().enumerate() {
        let data = bytes(size, n as u32 + 3);
        s.write("in.bin", &data);
        for (matrix, m, k) in [("cauchy", 4, 2), ("vandermonde", 3, 3), ("cauchy", 10, 4)] {
            let topology = if n % 2 == 0 {
                Some(topo.as_path())
            } else {
                None
            };
            let dir = format!("blocks-{n}-{matrix}-{m}");
            let (mm, kk) = (m.to_string(), k.to_string());
            let o = run(
                BIN,
                &[
                    "encode", "-i", "in.bin", "-o", &dir, "-x", matrix, "-t", &mm, "-r", &kk,
                    "--stripe", "4K",
                ],
                &s.0,
                None,
                topology,
            );
            ok(&o);
            // Lose k blocks: data and redundancy, missing and damaged.
            let d = s.path(&dir);
            std::fs::remove_file(d.join("data_block_0")).unwrap();
            let lose_last = format!("rdnc_block_{}", k - 1);
            std::fs::remove_file(d.join(&lose_last)).unwrap();
            if k > 2 {
                let p = d.join(format!("data_block_{}", m - 1));
                let mut b = std::fs::read(&p).unwrap();
                let i = b.len() / 2;
                b[i] ^= 1;
                std::fs::write(&p, b).unwrap();
            }
            let out = format!("out-{n}-{matrix}-{m}");
            let o = run(
                BIN,
                &["recover", "-i", &dir, "-o", &out, "--stripe", "4K"],
                &s.0,
                None,
                topology,
            );
            ok(&o);
            assert!(
                o.stdout.contains("rebuilt data_block_0 (missing)"),
                "{}",
                o.stdout
            );
            assert_eq!(
                std::fs::read(s.path(&out)).unwrap(),
                data,
                "size {size}, {matrix} {m}+{k}"
            );
            ok(&ec(&["verify", "-i", &dir], &s.0));
        }
    }
    assert!(
        !s.names()
            .iter()
            .any(|n| n.contains(doca_tools::cleanup::TEMP_MARK)),
        "temporaries left: {:?}",
        s.names()
    );
}

#[test]
fn too_many_losses_say_which_and_write_nothing() {
    let s = Scratch::new("ec-toomany");
    s.write("in.bin", &bytes(5000, 1));
    ok(&ec(
        &["encode", "-i", "in.bin", "-o", "b", "-t", "4", "-r", "2"],
        &s.0,
    ));
    for f in ["data_block_0", "data_block_2", "rdnc_block_1"] {
        std::fs::remove_file(s.path("b").join(f)).unwrap();
    }
    let o = ec(&["recover", "-i", "b", "-o", "out"], &s.0);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr
            .contains("DOCA_ERROR_NOT_FOUND: 3 blocks are missing or damaged"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr
            .contains("data_block_0 (missing), data_block_2 (missing), rdnc_block_1 (missing)"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("3 intact blocks remain but 4 are needed"),
        "{}",
        o.stderr
    );
    assert!(!s.path("out").exists());
    let o = ec(&["verify", "-i", "b"], &s.0);
    assert_eq!(o.code, 1);
    assert!(
        o.stdout.contains("more than the 2 that can be rebuilt"),
        "{}",
        o.stdout
    );
}

/// Flips one byte in the middle of a block file (its size unchanged: only its checksum
/// tells).
fn flip(p: &Path) {
    let mut b = std::fs::read(p).unwrap();
    let i = b.len() / 2;
    b[i] ^= 0x40;
    std::fs::write(p, b).unwrap();
}

/// Recover checks blocks in the pass that rebuilds: damage found there, in a block the
/// rebuild read or in one it only checked, counts as a loss and the rebuild runs again
/// without it; damage that makes the loss too large writes nothing, leaves nothing.
#[test]
fn damage_found_while_rebuilding_is_rebuilt_or_refused() {
    let s = Scratch::new("ec-late");
    let data = bytes(3 << 20, 9);
    s.write("in.bin", &data);
    let encode = |dir: &str| {
        ok(&ec(
            &[
                "encode", "-i", "in.bin", "-o", dir, "-t", "10", "-r", "4", "--stripe", "64K",
            ],
            &s.0,
        ))
    };
    // One block missing; a source of the rebuild damaged, and a redundancy block it
    // does not read damaged.
    encode("a");
    let a = s.path("a");
    std::fs::remove_file(a.join("data_block_3")).unwrap();
    flip(&a.join("data_block_7"));
    flip(&a.join("rdnc_block_3"));
    let o = ec(
        &["recover", "-i", "a", "-o", "out", "--stripe", "64K"],
        &s.0,
    );
    ok(&o);
    for want in [
        "data_block_3 (missing)",
        "data_block_7 (damaged",
        "rdnc_block_3 (damaged",
    ] {
        assert!(o.stdout.contains(want), "{want}: {}", o.stdout);
    }
    assert_eq!(std::fs::read(s.path("out")).unwrap(), data);
    ok(&ec(&["verify", "-i", "a"], &s.0));
    // Four missing and one damaged: more than 4 lost, found only by the rebuild.
    encode("b");
    let b = s.path("b");
    for f in [
        "data_block_0",
        "data_block_1",
        "rdnc_block_0",
        "rdnc_block_1",
    ] {
        std::fs::remove_file(b.join(f)).unwrap();
    }
    flip(&b.join("data_block_9"));
    let o = ec(
        &["recover", "-i", "b", "-o", "out2", "--stripe", "64K"],
        &s.0,
    );
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert!(
        o.stderr
            .contains("DOCA_ERROR_NOT_FOUND: 5 blocks are missing or damaged"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("data_block_9 (damaged"), "{}", o.stderr);
    assert!(!s.path("out2").exists());
    for f in ["data_block_0", "rdnc_block_1"] {
        assert!(!b.join(f).exists(), "{f} was written back");
    }
    for names in [s.names(), names_in(&b)] {
        assert!(
            !names
                .iter()
                .any(|n| n.contains(doca_tools::cleanup::TEMP_MARK)),
            "temporaries left: {names:?}"
        );
    }
}

#[test]
fn wrong_sized_blocks_are_rebuilt() {
    let s = Scratch::new("ec-size");
    let data = bytes(70_000, 2);
    s.write("in.bin", &data);
    ok(&ec(
        &["encode", "-i", "in.bin", "-o", "b", "-t", "3", "-r", "1"],
        &s.0,
    ));
    let p = s.path("b").join("data_block_1");
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.set_len(1000).unwrap();
    let o = ec(&["recover", "-i", "b", "-o", "out"], &s.0);
    ok(&o);
    assert!(
        o.stdout
            .contains("data_block_1 (wrong size: 1000 bytes instead of"),
        "{}",
        o.stdout
    );
    assert_eq!(std::fs::read(s.path("out")).unwrap(), data);
    ok(&ec(&["verify", "-i", "b"], &s.0));
}

#[test]
fn existing_outputs_are_refused_unless_forced() {
    let s = Scratch::new("ec-force");
    s.write("in.bin", &bytes(3000, 4));
    s.write("other.bin", &bytes(9000, 5));
    ok(&ec(&["encode", "-i", "in.bin", "-o", "b"], &s.0));
    let before = std::fs::read(s.path("b").join("data_block_0")).unwrap();
    let o = ec(&["encode", "-i", "other.bin", "-o", "b"], &s.0);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("DOCA_ERROR_ALREADY_EXIST") && o.stderr.contains("--force"),
        "{}",
        o.stderr
    );
    assert_eq!(
        std::fs::read(s.path("b").join("data_block_0")).unwrap(),
        before
    );
    // A wider layout replaced by a narrower one leaves no stale blocks.
    ok(&ec(
        &[
            "encode",
            "-i",
            "other.bin",
            "-o",
            "b",
            "-t",
            "5",
            "-r",
            "3",
            "--force",
        ],
        &s.0,
    ));
    ok(&ec(
        &[
            "encode",
            "-i",
            "other.bin",
            "-o",
            "b",
            "-t",
            "2",
            "-r",
            "1",
            "--force",
        ],
        &s.0,
    ));
    let names = names_in(&s.path("b"));
    assert_eq!(
        names,
        [
            "data_block_0",
            "data_block_1",
            "data_info",
            "ec_manifest",
            "rdnc_block_0"
        ]
    );
    s.write("out", b"keep me");
    let o = ec(&["recover", "-i", "b", "-o", "out"], &s.0);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("already exists"), "{}", o.stderr);
    assert_eq!(std::fs::read(s.path("out")).unwrap(), b"keep me");
    ok(&ec(&["recover", "-i", "b", "-o", "out", "--force"], &s.0));
    assert_eq!(std::fs::read(s.path("out")).unwrap(), bytes(9000, 5));
}

#[test]
fn bad_input_is_a_clear_error() {
    let s = Scratch::new("ec-bad");
    let o = ec(&["encode", "-i", "missing.bin", "-o", "b"], &s.0);
    assert!(
        o.code == 1
            && o.stderr
                .contains("DOCA_ERROR_NOT_FOUND: cannot open 'missing.bin'"),
        "{}",
        o.stderr
    );
    let o = ec(&["encode", "-i", ".", "-o", "b"], &s.0);
    assert!(
        o.code == 1
            && o.stderr
                .contains("'.' is a directory; only regular files are read"),
        "{}",
        o.stderr
    );
    s.write("in.bin", b"x");
    let o = ec(&["encode", "-i", "in.bin", "-o", "b", "-t", "129"], &s.0);
    assert!(
        o.code == 1
            && o.stderr
                .contains("data block count is 129; it must be 1..=128"),
        "{}",
        o.stderr
    );
    let o = ec(&["encode", "-i", "in.bin", "-o", "b", "-r", "33"], &s.0);
    assert!(
        o.code == 1 && o.stderr.contains("redundancy block count is 33"),
        "{}",
        o.stderr
    );
    let o = ec(&["recover", "-i", "nothing-here", "-o", "out"], &s.0);
    assert!(
        o.code == 1 && o.stderr.contains("holds no erasure coded blocks"),
        "{}",
        o.stderr
    );
    ok(&ec(&["encode", "-i", "in.bin", "-o", "b"], &s.0));
    std::fs::write(s.path("b").join("ec_manifest"), "garbage").unwrap();
    let o = ec(&["recover", "-i", "b", "-o", "out"], &s.0);
    assert!(
        o.code == 1 && o.stderr.contains("is not a valid manifest"),
        "{}",
        o.stderr
    );
    assert!(!s.path("out").exists());
}

#[test]
fn the_samples_mode_and_directories_without_a_manifest() {
    let s = Scratch::new("ec-sample");
    let data = bytes(50_000, 6);
    s.write("file.bin", &data);
    let o = ec(
        &[
            "-b", "-i", "file.bin", "-o", "blocks", "-t", "4", "-r", "2", "-d", "0,3",
        ],
        &s.0,
    );
    ok(&o);
    assert!(o.stdout.contains("deleted"), "{}", o.stdout);
    assert!(o.stdout.contains("is identical to"), "{}", o.stdout);
    assert_eq!(
        std::fs::read_to_string(s.path("blocks").join("data_info")).unwrap(),
        "50000 file.bin"
    );
    let o = ec(
        &["-b", "-i", "file.bin", "-o", "b2", "-t", "2", "-d", "2"],
        &s.0,
    );
    assert!(
        o.code == 1 && o.stderr.contains("delete index 2 is out of range"),
        "{}",
        o.stderr
    );

    // Blocks as DOCA's sample leaves them: no manifest. Counts come from the flags;
    // missing blocks are found, damage is caught by verify's parity check.
    std::fs::remove_file(s.path("blocks").join("ec_manifest")).unwrap();
    std::fs::remove_file(s.path("blocks").join("data_block_1")).unwrap();
    std::fs::create_dir(s.path("restored")).unwrap();
    let o = ec(
        &["-i", "blocks", "-o", "restored", "-t", "4", "-r", "2"],
        &s.0,
    );
    ok(&o);
    assert_eq!(
        std::fs::read(s.path("restored").join("file.bin")).unwrap(),
        data
    );
    ok(&ec(&["verify", "-i", "blocks", "-t", "4", "-r", "2"], &s.0));
    let p = s.path("blocks").join("rdnc_block_1");
    let mut b = std::fs::read(&p).unwrap();
    b[7] ^= 0x80;
    std::fs::write(&p, b).unwrap();
    let o = ec(&["verify", "-i", "blocks", "-t", "4", "-r", "2"], &s.0);
    assert_eq!(o.code, 1);
    assert!(
        o.stdout
            .contains("INCONSISTENT: rdnc_block_1 differs from the data's encoding at byte 7"),
        "{}",
        o.stdout
    );
    let o = ec(&["recover", "-i", "blocks", "-o", "x"], &s.0);
    assert!(
        o.code == 1 && o.stderr.contains("give the matrix and block counts"),
        "{}",
        o.stderr
    );
}

/// An input whose size lies (`/proc/self/status` says 0 bytes) or that shrinks while it
/// is encoded is refused, and no block is written: it used to be stored as 0 bytes, or
/// zero-filled under its old size, and reported as success.
#[test]
fn inputs_that_lie_about_or_change_their_size_are_refused() {
    let s = Scratch::new("ec-changing");
    let o = ec(&["encode", "-i", "/proc/self/status", "-o", "p"], &s.0);
    assert!(
        o.code == 1 && o.stderr.contains("says it holds 0 bytes but has content"),
        "{}",
        o.stderr
    );
    assert!(!s.path("p").join("ec_manifest").exists());

    // Truncated from another thread while the encode runs: at least one of a few tries
    // catches it in the act; every refused run leaves no block set behind.
    let data = vec![0x5Au8; 24 << 20];
    let mut caught = 0;
    for round in 0..8 {
        let input = s.path(&format!("big{round}.bin"));
        std::fs::write(&input, &data).unwrap();
        let out = format!("b{round}");
        let truncate = {
            let input = input.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(3 + round));
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&input)
                    .unwrap();
                f.set_len(1 << 20).unwrap();
            })
        };
        let o = ec(
            &[
                "encode",
                "-i",
                input.to_str().unwrap(),
                "-o",
                &out,
                "--stripe",
                "64K",
            ],
            &s.0,
        );
        truncate.join().unwrap();
        if o.code != 0 {
            assert!(
                o.stderr.contains("shrank while it was being encoded")
                    || o.stderr.contains("changed size while it was being encoded")
                    || o.stderr.contains("was modified while it was being encoded"),
                "{}",
                o.stderr
            );
            assert!(!s.path(&out).join("ec_manifest").exists());
            assert!(!s.path(&out).join("data_block_0").exists());
            caught += 1;
        }
    }
    assert!(caught > 0, "no encode saw its input shrink");
}

/// Verify of a whole set: with a manifest, damage in any block (data or redundancy) is
/// found by its checksum and named as a loss, nothing reported as inconsistent; without
/// one, redundancy that disagrees with the data is found by encoding the data again,
/// stripe by stripe, and reported at its first differing byte (past the first stripe).
#[test]
fn verify_checks_a_whole_set_in_one_pass() {
    let s = Scratch::new("ec-verify");
    let data = bytes((3 << 20) + 5, 4);
    s.write("in.bin", &data);
    let encode = || {
        let _ = std::fs::remove_dir_all(s.path("b"));
        ok(&ec(
            &[
                "encode", "-i", "in.bin", "-o", "b", "-t", "6", "-r", "3", "--stripe", "64K",
            ],
            &s.0,
        ))
    };
    encode();
    let o = ec(&["verify", "-i", "b", "--stripe", "64K"], &s.0);
    ok(&o);
    flip(&s.path("b").join("data_block_4"));
    flip(&s.path("b").join("rdnc_block_2"));
    let o = ec(&["verify", "-i", "b", "--stripe", "64K"], &s.0);
    assert_eq!(o.code, 1, "{}", o.stdout);
    for want in ["data_block_4 (damaged", "rdnc_block_2 (damaged"] {
        assert!(o.stdout.contains(want), "{want}: {}", o.stdout);
    }
    assert!(!o.stdout.contains("INCONSISTENT"), "{}", o.stdout);
    assert!(o.stdout.contains("LOST"), "{}", o.stdout);
    // Without the manifest, only the parity comparison can tell.
    encode();
    std::fs::remove_file(s.path("b").join("ec_manifest")).unwrap();
    let p = s.path("b").join("rdnc_block_1");
    let mut b = std::fs::read(&p).unwrap();
    let at = b.len() - 3;
    b[at] ^= 1;
    std::fs::write(&p, b).unwrap();
    let o = ec(
        &["verify", "-i", "b", "-t", "6", "-r", "3", "--stripe", "64K"],
        &s.0,
    );
    assert_eq!(o.code, 1, "{}", o.stdout);
    let want = format!("INCONSISTENT: rdnc_block_1 differs from the data's encoding at byte {at}");
    assert!(o.stdout.contains(&want), "{}", o.stdout);
}
