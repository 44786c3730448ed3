//! `doca-sha` end to end: sums equal the RustCrypto crates' in sha*sum's format, on both
//! engines; `--check` agrees and disagrees as sha256sum does.

mod common;
use common::*;
use sha2::Digest;

const BIN: &str = env!("CARGO_BIN_EXE_doca-sha");

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn sums_match_the_crates_on_both_engines() {
    let s = Scratch::new("sha-sums");
    // Sizes around the segment size (4 KiB below) and its multiples.
    let sizes = [0usize, 1, 127, 128, 4095, 4096, 4097, 3 * 4096, 50_000];
    let names: Vec<String> = sizes.iter().map(|n| format!("f{n}")).collect();
    for (n, name) in sizes.iter().zip(&names) {
        s.write(name, &bytes(*n, *n as u32 + 1));
    }
    let topo = engine_topology(&s, 2);
    for topology in [None, Some(topo.as_path())] {
        for algo in ["sha1", "sha256", "sha512"] {
            let mut args = vec!["-a", algo, "--chunk", "4K"];
            args.extend(names.iter().map(String::as_str));
            let o = run(BIN, &args, &s.0, None, topology);
            assert_eq!(o.code, 0, "{}", o.stderr);
            let want: String = sizes
                .iter()
                .zip(&names)
                .map(|(n, name)| {
                    let data = bytes(*n, *n as u32 + 1);
                    let d = match algo {
                        "sha1" => hex(&sha1::Sha1::digest(&data)),
                        "sha256" => hex(&sha2::Sha256::digest(&data)),
                        _ => hex(&sha2::Sha512::digest(&data)),
                    };
                    format!("{d}  {name}\n")
                })
                .collect();
            assert_eq!(o.stdout, want, "{algo}, topology {topology:?}");
        }
    }
}

#[test]
fn standard_input_and_escaped_names() {
    let s = Scratch::new("sha-stdin");
    let o = run(BIN, &[], &s.0, Some(b"hi\n"), None);
    assert_eq!(o.code, 0);
    assert_eq!(
        o.stdout,
        format!("{}  -\n", hex(&sha2::Sha256::digest(b"hi\n")))
    );
    s.write("a\\b", b"x");
    let o = run(BIN, &["a\\b"], &s.0, None, None);
    assert_eq!(
        o.stdout,
        format!("\\{}  a\\\\b\n", hex(&sha2::Sha256::digest(b"x")))
    );
    // The escaped line checks.
    s.write("sums", o.stdout.as_bytes());
    let o = run(BIN, &["-c", "sums"], &s.0, None, None);
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (0, "a\\b: OK\n"),
        "{}",
        o.stderr
    );
}

#[test]
fn check_reports_ok_failed_and_unreadable() {
    let s = Scratch::new("sha-check");
    s.write("a", b"alpha");
    s.write("b", b"beta");
    let o = run(BIN, &["a", "b"], &s.0, None, None);
    s.write("sums", o.stdout.as_bytes());
    let o = run(BIN, &["--check", "sums"], &s.0, None, None);
    assert_eq!((o.code, o.stdout.as_str()), (0, "a: OK\nb: OK\n"));
    let o = run(BIN, &["--check", "--quiet", "sums"], &s.0, None, None);
    assert_eq!((o.code, o.stdout.as_str()), (0, ""));

    s.write("b", b"BETA");
    std::fs::remove_file(s.path("a")).unwrap();
    let o = run(BIN, &["-c", "sums"], &s.0, None, None);
    assert_eq!(o.code, 1);
    assert_eq!(o.stdout, "a: FAILED open or read\nb: FAILED\n");
    assert!(o.stderr.contains("DOCA_ERROR_NOT_FOUND"), "{}", o.stderr);
    assert!(
        o.stderr.contains("1 computed checksum(s) did NOT match"),
        "{}",
        o.stderr
    );
    let o = run(BIN, &["-c", "--status", "sums"], &s.0, None, None);
    assert_eq!((o.code, o.stdout.as_str(), o.stderr.as_str()), (1, "", ""));

    s.write("junk", b"not a sum line\n");
    let o = run(BIN, &["-c", "junk"], &s.0, None, None);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("no properly formatted checksum lines"),
        "{}",
        o.stderr
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    let s = Scratch::new("sha-bad");
    s.write("ok", b"fine");
    let o = run(BIN, &["missing", "ok"], &s.0, None, None);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr
            .contains("missing: DOCA_ERROR_NOT_FOUND: cannot open 'missing'"),
        "{}",
        o.stderr
    );
    assert!(
        o.stdout.ends_with("  ok\n"),
        "the other file is still hashed: {}",
        o.stdout
    );
    let o = run(BIN, &["."], &s.0, None, None);
    assert!(
        o.code == 1 && o.stderr.contains("is a directory"),
        "{}",
        o.stderr
    );
    let o = run(BIN, &["--chunk", "100", "ok"], &s.0, None, None);
    assert!(
        o.code == 1 && o.stderr.contains("multiple of 128"),
        "{}",
        o.stderr
    );
    let o = run(BIN, &["-p", "99:00.0", "ok"], &s.0, None, None);
    assert!(
        o.code == 1 && o.stderr.contains("DOCA_ERROR_NOT_FOUND: no device 99:00.0"),
        "{}",
        o.stderr
    );
}
