//! `doca-sync-event` end to end: every mode on both engines.

mod common;
use common::*;

const BIN: &str = env!("CARGO_BIN_EXE_doca-sync-event");

#[test]
fn every_mode_ends_at_the_right_value() {
    let s = Scratch::new("sync-event");
    let topo = engine_topology(&s, 2);
    for topology in [None, Some(topo.as_path())] {
        for args in [
            &[][..],
            &["--atomic"],
            &["--async"],
            &["--async", "--atomic", "--qdepth", "2"],
        ] {
            let mut a: Vec<&str> = args.to_vec();
            a.extend(["--rounds", "50"]);
            let o = run(BIN, &a, &s.0, None, topology);
            assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
            assert!(
                o.stdout.contains("exchanged 100 signals") && o.stdout.contains("final value 100"),
                "{}",
                o.stdout
            );
        }
    }
    let o = run(BIN, &["--async", "--rounds", "200"], &s.0, None, None);
    assert!(
        o.code == 1 && o.stderr.contains("at most 127 rounds"),
        "{}",
        o.stderr
    );
}
