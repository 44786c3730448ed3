//! `doca-graph` end to end, on both engines.

mod common;
use common::*;
use sha2::Digest;

const BIN: &str = env!("CARGO_BIN_EXE_doca-graph");

#[test]
fn hashes_and_copies_in_parallel() {
    let s = Scratch::new("graph");
    let topo = engine_topology(&s, 2);
    let data = bytes(3 << 20, 9);
    s.write("in.bin", &data);
    let want: String = sha2::Sha256::digest(&data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    for topology in [None, Some(topo.as_path())] {
        let o = run(BIN, &[], &s.0, None, topology);
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert!(o.stdout.contains("matches the source"), "{}", o.stdout);
        let o = run(BIN, &["-i", "in.bin"], &s.0, None, topology);
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert!(o.stdout.contains(&want), "{}", o.stdout);
        assert!(
            o.stdout
                .contains(&format!("DMA copy of {} bytes: matches", data.len())),
            "{}",
            o.stdout
        );
    }
    let o = run(BIN, &["-i", "missing"], &s.0, None, None);
    assert!(
        o.code == 1 && o.stderr.contains("DOCA_ERROR_NOT_FOUND"),
        "{}",
        o.stderr
    );
}
