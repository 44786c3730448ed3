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
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

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

/// The longest the parent waits for one answer, or for the child to end: a child that
/// hangs fails the test instead of stalling the test run.
pub const ANSWER_LIMIT: Duration = Duration::from_secs(120);

/// A running child process (killed and reaped when dropped).
#[derive(Debug)]
pub struct Peer {
    /// The process.
    pub child: Child,
    to: Option<ChildStdin>,
    /// The child's stdout, line by line (read by a thread, so waits can time out).
    from: Receiver<String>,
}

impl Peer {
    /// Runs this test binary's test `test` (exactly) as a child playing `role`.
    pub fn spawn(test: &str, role: &str) -> Peer {
        Peer::spawn_with(test, role, &[])
    }

    /// As [`spawn`](Peer::spawn), with extra environment variables.
    pub fn spawn_with(test: &str, role: &str, env: &[(&str, &str)]) -> Peer {
        Peer::spawn_in(&[], test, role, env)
    }

    /// As [`spawn_with`](Peer::spawn_with), run through the command words `prefix`
    /// (such as `ip netns exec NAME`, [`NetPair::prefix`](crate::netns::NetPair::prefix)).
    pub fn spawn_in(prefix: &[String], test: &str, role: &str, env: &[(&str, &str)]) -> Peer {
        let exe = std::env::current_exe().expect("the test binary");
        let mut c = match prefix.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(exe);
                c
            }
            None => Command::new(exe),
        };
        c.args(["--exact", test, "--nocapture", "--test-threads=1"])
            .env(ROLE_ENV, role)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().expect("spawning the test binary");
        let to = child.stdin.take();
        let out = BufReader::new(child.stdout.take().expect("piped stdout"));
        let (tx, from) = channel();
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Peer { child, to, from }
    }

    /// Sends one command line.
    pub fn send(&mut self, line: &str) {
        let to = self.to.as_mut().expect("stdin still open");
        writeln!(to, "{line}").expect("the child reads its commands");
        to.flush().expect("the child reads its commands");
    }

    /// The child's next answer; panics if it ends first or gives none within
    /// [`ANSWER_LIMIT`] (the child is killed then).
    pub fn recv(&mut self) -> String {
        match self.recv_within(ANSWER_LIMIT) {
            Some(l) => l,
            None => {
                self.kill();
                panic!("the child process gave no answer within {ANSWER_LIMIT:?}");
            }
        }
    }

    /// The child's next answer, if it gives one within `limit`; panics if it ends
    /// first.
    pub fn recv_within(&mut self, limit: Duration) -> Option<String> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(l) => {
                    if let Some(x) = l.strip_prefix('>') {
                        return Some(x.trim_end().to_string());
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the child process ended before answering")
                }
                Err(RecvTimeoutError::Timeout) => return None,
            }
        }
    }

    /// Closes the child's commands and checks that it ends successfully (within
    /// [`ANSWER_LIMIT`]).
    pub fn finish(mut self) {
        self.to = None;
        let deadline = Instant::now() + ANSWER_LIMIT;
        loop {
            if let Some(st) = self.child.try_wait().expect("waiting for the child") {
                assert!(st.success(), "the child process failed: {st:?}");
                return;
            }
            if Instant::now() > deadline {
                self.kill();
                panic!("the child process did not end within {ANSWER_LIMIT:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
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
