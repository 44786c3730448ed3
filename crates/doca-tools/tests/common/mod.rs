//! Helpers for running the tools in tests.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A scratch directory removed at drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("doca-tools-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
    /// Names in the directory, sorted.
    pub fn names(&self) -> Vec<String> {
        names_in(&self.0)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Names in `dir`, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Deterministic bytes.
pub fn bytes(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).max(1);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// What a run gave back.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `bin` with `args` in `dir`, optional stdin and topology file.
pub fn run(
    bin: &str,
    args: &[&str],
    dir: &Path,
    stdin: Option<&[u8]>,
    topology: Option<&Path>,
) -> Out {
    let mut c = Command::new(bin);
    c.args(args)
        .current_dir(dir)
        .env_remove("DOCA_SW_TOPOLOGY")
        .env_remove("DOCA_SW_ROLE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(t) = topology {
        c.env("DOCA_SW_TOPOLOGY", t);
    }
    let mut child = c.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(s) = stdin {
        input.write_all(s).unwrap();
    }
    drop(input);
    let o = child.wait_with_output().unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// A topology with one host device running jobs on `threads` engine threads.
pub fn engine_topology(s: &Scratch, threads: u32) -> PathBuf {
    s.write(
        "topology.toml",
        format!("[[host.device]]\npci_addr = \"0000:3b:00.0\"\nengine_threads = {threads}\n")
            .as_bytes(),
    )
}

/// Runs `bin` as [`run`] does (no stdin), but fails the test when it has not ended
/// within `secs` (the process is killed): for cases that once hung.
pub fn run_within(bin: &str, args: &[&str], dir: &Path, secs: u64) -> Out {
    use std::io::Read;
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env_remove("DOCA_SW_TOPOLOGY")
        .env_remove("DOCA_SW_ROLE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if t.elapsed() > std::time::Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{bin} {args:?} did not end within {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let _ = child.stdout.take().unwrap().read_to_end(&mut stdout);
    let _ = child.stderr.take().unwrap().read_to_end(&mut stderr);
    Out {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}
