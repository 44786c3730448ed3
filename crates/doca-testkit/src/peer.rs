//! A second process for host/DPU tests: the test binary runs itself again with one test
//! selected and a role in the environment, and the two talk line by line (commands on the
//! child's stdin, answers on its stdout prefixed with '>').
//!
//! ```no_run
//! use doca_testkit::peer::{self, Peer};
//! #[test]
//! fn child_process() {
//!     let Some(role) = peer::role() else { return };
//!     for line in peer::commands() { peer::say(&format!("{role} got {line}")); }
//! }
//! # fn main() {
//! let mut p = Peer::spawn("child_process", "importer");
//! p.send("hello");
//! assert_eq!(p.recv(), "importer got hello");
//! p.finish();
//! # }
//! ```

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const ROLE_ENV: &str = "DOCA_TESTKIT_PEER_ROLE";

/// The role this process plays, when it is a child started by [`Peer::spawn`].
pub fn role() -> Option<String> {
    std::env::var(ROLE_ENV).ok()
}

/// The commands the parent sends, one per line, until it closes the pipe.
pub fn commands() -> impl Iterator<Item = String> {
    std::io::stdin().lines().map_while(Result::ok)
}

/// Answers the parent (a line of its own, whatever the harness printed before).
pub fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "\n>{line}");
    let _ = out.flush();
}

/// Bytes as hex ("-" for none, so that a command's words stay words).
pub fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".into();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The bytes of [`hex`] ("-" is none; a malformed pair is 0).
pub fn unhex(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap_or(0))
        .collect()
}

/// A running child process (killed and reaped when dropped).
#[derive(Debug)]
pub struct Peer {
    /// The process.
    pub child: Child,
    to: Option<ChildStdin>,
    from: BufReader<ChildStdout>,
}

impl Peer {
    /// Runs this test binary's test `test` (exactly) as a child playing `role`.
    pub fn spawn(test: &str, role: &str) -> Peer {
        Peer::spawn_with(test, role, &[])
    }

    /// As [`spawn`](Peer::spawn), with extra environment variables.
    pub fn spawn_with(test: &str, role: &str, env: &[(&str, &str)]) -> Peer {
        let mut c = Command::new(std::env::current_exe().expect("the test binary"));
        c.args(["--exact", test, "--nocapture", "--test-threads=1"])
            .env(ROLE_ENV, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().expect("spawning the test binary");
        let to = child.stdin.take();
        let from = BufReader::new(child.stdout.take().expect("piped stdout"));
        Peer { child, to, from }
    }

    /// Sends one command line.
    pub fn send(&mut self, line: &str) {
        let to = self.to.as_mut().expect("stdin still open");
        writeln!(to, "{line}").expect("the child reads its commands");
        to.flush().expect("the child reads its commands");
    }

    /// The child's next answer; panics if it ends first.
    pub fn recv(&mut self) -> String {
        loop {
            let mut l = String::new();
            let n = self
                .from
                .read_line(&mut l)
                .expect("reading the child's answers");
            assert!(n > 0, "the child process ended before answering");
            if let Some(x) = l.strip_prefix('>') {
                return x.trim_end().to_string();
            }
        }
    }

    /// Closes the child's commands and checks that it ends successfully.
    pub fn finish(mut self) {
        self.to = None;
        let st = self.child.wait().expect("waiting for the child");
        assert!(st.success(), "the child process failed: {st:?}");
    }

    /// Kills the child (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.kill();
    }
}
