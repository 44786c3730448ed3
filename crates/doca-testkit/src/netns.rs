//! "Two machines" on one: two network namespaces joined by a veth pair with link-local
//! IPv4 addresses, made by a test and removed when it drops them. The two sides share
//! no loopback and no network with each other or with the machine; a test runs one
//! process in each ([`NetPair::prefix`] with [`Peer::spawn_in`](crate::peer::Peer::spawn_in)).
//!
//! Needs root and iproute2's `ip`. [`NetPair::new`] answers `None` where they are
//! missing, unless `DOCA_REQUIRE_NETNS=1` is set (CI), where that fails the test.

use std::process::{Command, Stdio};

/// Two namespaces and the veth pair between them.
#[derive(Debug)]
pub struct NetPair {
    /// Namespace names (side 0, side 1).
    pub ns: [String; 2],
    /// The veth interface in each.
    pub dev: [String; 2],
    /// The IPv4 address of each side.
    pub addr: [String; 2],
    /// Links added with [`add_link`](NetPair::add_link): their interfaces and addresses.
    pub links: Vec<([String; 2], [String; 2])>,
    /// Which pair of this process it is (tests of one process make theirs at once).
    serial: u32,
}

/// Pairs made by this process so far: each one's interfaces get a name of their own.
static SERIAL: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn link_up(ns: &str, dev: &str) -> bool {
    Command::new("ip")
        .args(["-n", ns, "link", "show", "dev", dev])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("state UP"))
}

impl NetPair {
    /// Two new namespaces named after `tag` and this process, joined and up.
    pub fn new(tag: &str) -> Option<NetPair> {
        let required = std::env::var("DOCA_REQUIRE_NETNS").is_ok_and(|v| v == "1");
        let id = std::process::id() % 100_000;
        let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 100;
        let ns = [
            format!("doca-{tag}-{id}-{serial}-a"),
            format!("doca-{tag}-{id}-{serial}-b"),
        ];
        // Interface names: at most 15 bytes.
        let dev = [format!("d{id}x{serial}a"), format!("d{id}x{serial}b")];
        let n = (id % 250) + 1;
        let addr = [format!("169.254.{n}.1"), format!("169.254.{n}.2")];
        let p = NetPair {
            ns,
            dev,
            addr,
            links: Vec::new(),
            serial,
        };
        let ok = ip(&["netns", "add", &p.ns[0]])
            && ip(&["netns", "add", &p.ns[1]])
            && ip(&[
                "link", "add", &p.dev[0], "netns", &p.ns[0], "type", "veth", "peer", "name",
                &p.dev[1], "netns", &p.ns[1],
            ])
            && (0..2).all(|i| {
                let cidr = format!("{}/26", p.addr[i]);
                ip(&["-n", &p.ns[i], "addr", "add", &cidr, "dev", &p.dev[i]])
                    && ip(&["-n", &p.ns[i], "link", "set", &p.dev[i], "up"])
                    && ip(&["-n", &p.ns[i], "link", "set", "lo", "up"])
            });
        // A veth's carrier comes up a moment after both ends are up: programs that
        // list interfaces (UCX does) must find it running.
        let up = |i: usize| link_up(&p.ns[i], &p.dev[i]);
        let t = std::time::Instant::now();
        while ok && !(up(0) && up(1)) && t.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        if !ok {
            drop(p);
            assert!(
                !required,
                "DOCA_REQUIRE_NETNS=1 but network namespaces cannot be made here (root and iproute2's ip are needed)"
            );
            eprintln!("skipped: network namespaces need root and iproute2's ip");
            return None;
        }
        Some(p)
    }

    /// Joins the two sides with one more veth pair (a second network between the same
    /// two machines), with its own link-local subnet; answers its interfaces and
    /// addresses (also kept in [`links`](NetPair::links)). At most three more links.
    pub fn add_link(&mut self) -> Option<([String; 2], [String; 2])> {
        let k = self.links.len() + 1;
        if k > 3 {
            return None;
        }
        let id = std::process::id() % 100_000;
        let n = (id % 250) + 1;
        let s = self.serial;
        let dev = [format!("d{id}x{s}l{k}a"), format!("d{id}x{s}l{k}b")];
        let addr = [
            format!("169.254.{n}.{}", 64 * k + 1),
            format!("169.254.{n}.{}", 64 * k + 2),
        ];
        let ok = ip(&[
            "link",
            "add",
            &dev[0],
            "netns",
            &self.ns[0],
            "type",
            "veth",
            "peer",
            "name",
            &dev[1],
            "netns",
            &self.ns[1],
        ]) && (0..2).all(|i| {
            let cidr = format!("{}/26", addr[i]);
            ip(&["-n", &self.ns[i], "addr", "add", &cidr, "dev", &dev[i]])
                && ip(&["-n", &self.ns[i], "link", "set", &dev[i], "up"])
        });
        if !ok {
            return None;
        }
        let t = std::time::Instant::now();
        while !(0..2).all(|i| link_up(&self.ns[i], &dev[i]))
            && t.elapsed() < std::time::Duration::from_secs(5)
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        self.links.push((dev.clone(), addr.clone()));
        Some((dev, addr))
    }

    /// The command words that run a program in side `i`'s namespace.
    pub fn prefix(&self, i: usize) -> Vec<String> {
        vec![
            "ip".into(),
            "netns".into(),
            "exec".into(),
            self.ns[i].clone(),
        ]
    }
}

/// A fault injected between the two sides ([`NetPair::fault`]), with nftables rules in
/// each namespace (this kernel has no netem).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Each side drops this percentage of the packets it receives, at random.
    Loss(u32),
    /// Each side drops every packet it receives: a full partition.
    Partition,
    /// No rule: the network as it is.
    Healed,
}

impl NetPair {
    /// Injects `fault` on both sides (replacing the one before); `false` where nftables
    /// cannot be used here (no `nft`), which fails the test under
    /// `DOCA_REQUIRE_NETNS=1`.
    pub fn fault(&self, fault: Fault) -> bool {
        self.fault_on(0, fault) && self.fault_on(1, fault)
    }

    /// Injects `fault` on side `i` only (what it receives), as [`fault`](Self::fault).
    pub fn fault_on(&self, i: usize, fault: Fault) -> bool {
        let rule = match fault {
            Fault::Loss(pct) => format!("numgen random mod 100 < {pct} counter drop"),
            Fault::Partition => "counter drop".to_string(),
            Fault::Healed => String::new(),
        };
        let script = format!(
            "table inet doca_fault\ndelete table inet doca_fault\n\
             table inet doca_fault {{\n chain input {{\n  type filter hook input priority 0; policy accept;\n  {rule}\n }}\n}}\n"
        );
        let ok = nft(&self.ns[i], &script);
        let required = std::env::var("DOCA_REQUIRE_NETNS").is_ok_and(|v| v == "1");
        assert!(
            ok || !required,
            "DOCA_REQUIRE_NETNS=1 but nftables rules cannot be set in the namespaces (is nft installed?)"
        );
        ok
    }

    /// Packets the fault's rules dropped on both sides since it was injected.
    pub fn dropped(&self) -> u64 {
        self.ns
            .iter()
            .filter_map(|ns| {
                let o = Command::new("ip")
                    .args([
                        "netns",
                        "exec",
                        ns,
                        "nft",
                        "list",
                        "table",
                        "inet",
                        "doca_fault",
                    ])
                    .output()
                    .ok()?;
                let text = String::from_utf8_lossy(&o.stdout).into_owned();
                let at = text.find("counter packets ")? + "counter packets ".len();
                text[at..].split_whitespace().next()?.parse::<u64>().ok()
            })
            .sum()
    }

    /// Takes side `i`'s end of the link down (`up`: false) or up again, waiting for the
    /// carrier when it comes up.
    pub fn link(&self, i: usize, up: bool) -> bool {
        let state = if up { "up" } else { "down" };
        if !ip(&["-n", &self.ns[i], "link", "set", &self.dev[i], state]) {
            return false;
        }
        let t = std::time::Instant::now();
        while up
            && !(0..2).all(|k| link_up(&self.ns[k], &self.dev[k]))
            && t.elapsed() < std::time::Duration::from_secs(5)
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        true
    }
}

/// Runs an nftables script in namespace `ns`.
fn nft(ns: &str, script: &str) -> bool {
    use std::io::Write;
    let Ok(mut c) = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    let wrote = c
        .stdin
        .take()
        .is_some_and(|mut i| i.write_all(script.as_bytes()).is_ok());
    c.wait().is_ok_and(|s| s.success()) && wrote
}

impl Drop for NetPair {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of the veth pair, and so the pair.
        for ns in &self.ns {
            ip(&["netns", "del", ns]);
        }
    }
}
