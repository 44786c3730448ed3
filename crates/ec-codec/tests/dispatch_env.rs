//! `DOCA_EC_ISA` picks the kernel once per process; unknown or unsupported names fall
//! back to the best kernel. Each case runs this test binary again as a child process.

use ec_codec::{CodingMatrix, Encoder, Isa, dispatch};
use std::process::Command;

const CHILD: &str = "EC_CODEC_DISPATCH_CHILD";

#[test]
fn child_reports_selected_kernel() {
    // In a child, print the selection; in the parent, this test is a no-op.
    if std::env::var_os(CHILD).is_some() {
        let enc = Encoder::new(&CodingMatrix::cauchy(4, 2).unwrap()).unwrap();
        println!(
            "SELECTED={} ENCODER={}",
            dispatch::selected().name(),
            enc.matrix().isa().name()
        );
    }
}

/// Runs this test binary again with `DOCA_EC_ISA=isa`. Where the binary runs under an
/// emulator (tests built for another architecture), `EC_CODEC_TEST_RUNNER` holds that
/// emulator's command line, which the child is started with too.
fn run_child(isa: &str) -> (String, String) {
    let exe = std::env::current_exe().unwrap();
    let runner = std::env::var("EC_CODEC_TEST_RUNNER").unwrap_or_default();
    let mut runner = runner.split_whitespace();
    let mut cmd = match runner.next() {
        Some(prog) => {
            let mut c = Command::new(prog);
            c.args(runner).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    let out = cmd
        .args([
            "--exact",
            "child_reports_selected_kernel",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env(dispatch::ISA_ENV, isa)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stdout.contains("SELECTED="),
        "the child test process did not run ({}): {stderr}",
        out.status
    );
    (stdout, stderr)
}

#[test]
fn env_override_selects_each_supported_kernel() {
    for isa in Isa::ALL {
        let (out, err) = run_child(isa.name());
        let want = if isa.is_supported() {
            isa
        } else {
            dispatch::best()
        };
        assert!(
            out.contains(&format!("SELECTED={} ENCODER={}", want.name(), want.name())),
            "{}: {out}",
            isa.name()
        );
        if !isa.is_supported() {
            assert!(err.contains("cannot run"), "{err}");
        }
    }
}

#[test]
fn unknown_names_fall_back_loudly() {
    let (out, err) = run_child("sse9");
    assert!(
        out.contains(&format!("SELECTED={}", dispatch::best().name())),
        "{out}"
    );
    assert!(err.contains("is not a kernel"), "{err}");
}
