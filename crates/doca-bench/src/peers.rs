//! The other process of the cross-process benchmarks: the DPU side run again as
//! `doca-bench xproc-peer`, the raw socket baseline, and what both sides share (the
//! devices, a private directory, how an idle peer waits).

use doca_core::device::{self, DEFAULT_MACHINE, Topology};
use doca_core::{Dev, RepFilter};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};

pub(crate) fn device(role: &str) -> Dev {
    let t = Topology::from_toml(DEFAULT_MACHINE, Some(role)).expect("topology");
    device::devinfo_list_from(&t)[0].open().expect("open")
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub(crate) fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap_or(0))
        .collect()
}

pub(crate) struct Peer {
    pub(crate) child: Child,
    from: BufReader<std::process::ChildStdout>,
    to: std::process::ChildStdin,
}

impl Peer {
    pub(crate) fn spawn(what: &str, env: &[(&str, &std::path::Path)]) -> Peer {
        let mut c = Command::new(std::env::current_exe().expect("exe"));
        c.args(["xproc-peer", what])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().expect("peer");
        let from = BufReader::new(child.stdout.take().expect("stdout"));
        let to = child.stdin.take().expect("stdin");
        Peer { child, from, to }
    }
    pub(crate) fn send(&mut self, l: &str) {
        writeln!(self.to, "{l}").expect("peer");
        self.to.flush().expect("peer");
    }
    pub(crate) fn recv(&mut self) -> String {
        let mut l = String::new();
        self.from.read_line(&mut l).expect("peer");
        assert!(!l.is_empty(), "the peer process ended");
        l.trim().to_string()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The DPU side's representor of the first host function.
pub(crate) fn rep_of(dpu: &Dev) -> doca_core::DevRep {
    dpu.rep_list(RepFilter::All).expect("reps")[0]
        .open()
        .expect("rep")
}

/// A private directory for the benchmark's channels (mode 0700).
pub(crate) fn runtime_dir() -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let rt = std::env::temp_dir().join(format!("doca-bench-{}", std::process::id()));
    let _ = std::fs::create_dir(&rt);
    std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).expect("dir");
    rt
}

/// How an idle peer waits: it spins while traffic flows and naps once nothing came
/// for a while, so that idle peers leave the processors (CI machines have two) to the
/// measurement in progress.
#[derive(Default)]
pub(crate) struct Backoff(u32);

impl Backoff {
    pub(crate) fn idle(&mut self) {
        self.0 = self.0.saturating_add(1);
        if self.0 > 20_000 {
            std::thread::sleep(std::time::Duration::from_micros(50));
        } else {
            std::hint::spin_loop();
        }
    }

    pub(crate) fn busy(&mut self) {
        self.0 = 0;
    }
}

/// The raw baseline: an echoing process on a socket pair (its end inherited as
/// descriptor 3).
pub(crate) struct RawPeer {
    fd: OwnedFd,
    child: Child,
}

impl RawPeer {
    pub(crate) fn spawn() -> RawPeer {
        let mut sv = [0i32; 2];
        // SAFETY: sv has room for two descriptors.
        let r =
            unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0, sv.as_mut_ptr()) };
        assert_eq!(r, 0, "socketpair");
        // SAFETY: two new descriptors nothing else owns.
        let (mine, theirs) = unsafe { (OwnedFd::from_raw_fd(sv[0]), OwnedFd::from_raw_fd(sv[1])) };
        let mut c = Command::new(std::env::current_exe().expect("exe"));
        c.args(["xproc-peer", "raw-socket"]);
        let t = theirs.as_raw_fd();
        // SAFETY: dup2 in the child between fork and exec is async-signal-safe.
        unsafe {
            use std::os::unix::process::CommandExt;
            c.pre_exec(move || {
                if libc::dup2(t, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = c.spawn().expect("raw peer");
        drop(theirs);
        RawPeer { fd: mine, child }
    }

    /// One round trip of `msg`, polling without blocking.
    pub(crate) fn round(&self, msg: &[u8], buf: &mut [u8]) {
        // SAFETY: msg and buf are valid for their lengths.
        unsafe {
            libc::send(
                self.fd.as_raw_fd(),
                msg.as_ptr().cast(),
                msg.len(),
                libc::MSG_NOSIGNAL,
            );
            loop {
                let n = libc::recv(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT,
                );
                if n >= 0 {
                    assert_eq!(n as usize, msg.len());
                    return;
                }
                std::hint::spin_loop();
            }
        }
    }

    pub(crate) fn quit(mut self) {
        // SAFETY: one byte.
        unsafe {
            libc::send(
                self.fd.as_raw_fd(),
                [0xffu8].as_ptr().cast(),
                1,
                libc::MSG_NOSIGNAL,
            )
        };
        let _ = self.child.wait();
    }
}
