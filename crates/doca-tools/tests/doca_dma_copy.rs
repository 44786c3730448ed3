//! `doca-dma-copy` end to end, on both engines.

mod common;
use common::*;

const BIN: &str = env!("CARGO_BIN_EXE_doca-dma-copy");

#[test]
fn copies_are_identical_on_both_engines() {
    let s = Scratch::new("dma-copy");
    let topo = engine_topology(&s, 2);
    for (i, size) in [0usize, 1, 4096, 100_000, 1 << 20].into_iter().enumerate() {
        let data = bytes(size, i as u32 + 7);
        s.write("src", &data);
        for topology in [None, Some(topo.as_path())] {
            for chunk in ["4K", "64K"] {
                let o = run(
                    BIN,
                    &["--force", "--chunk", chunk, "--depth", "3", "src", "dst"],
                    &s.0,
                    None,
                    topology,
                );
                assert_eq!(o.code, 0, "{}", o.stderr);
                assert!(o.stdout.contains("verified"), "{}", o.stdout);
                assert_eq!(std::fs::read(s.path("dst")).unwrap(), data);
            }
        }
    }
    assert_eq!(
        s.names(),
        ["dst", "src", "topology.toml"],
        "no temporary is left"
    );
}

#[test]
fn refusals_lose_nothing() {
    let s = Scratch::new("dma-refuse");
    s.write("src", b"new bytes");
    s.write("dst", b"precious");
    let o = run(BIN, &["src", "dst"], &s.0, None, None);
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("DOCA_ERROR_ALREADY_EXIST") && o.stderr.contains("--force"),
        "{}",
        o.stderr
    );
    assert_eq!(std::fs::read(s.path("dst")).unwrap(), b"precious");

    let o = run(BIN, &["missing", "out"], &s.0, None, None);
    assert!(
        o.code == 1
            && o.stderr
                .contains("DOCA_ERROR_NOT_FOUND: cannot open 'missing'"),
        "{}",
        o.stderr
    );
    let o = run(BIN, &["--force", "src", "src"], &s.0, None, None);
    assert!(
        o.code == 1 && o.stderr.contains("same file"),
        "{}",
        o.stderr
    );
    assert_eq!(std::fs::read(s.path("src")).unwrap(), b"new bytes");
    let o = run(BIN, &[".", "out"], &s.0, None, None);
    assert!(
        o.code == 1
            && o.stderr
                .contains("'.' is a directory; only regular files are read"),
        "{}",
        o.stderr
    );
    let o = run(BIN, &["--depth", "0", "src", "out"], &s.0, None, None);
    assert!(o.code == 1 && o.stderr.contains("--depth"), "{}", o.stderr);
    assert_eq!(s.names(), ["dst", "src"], "no output or temporary appeared");
}
