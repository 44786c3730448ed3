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
}

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
        let ns = [format!("doca-{tag}-{id}-a"), format!("doca-{tag}-{id}-b")];
        // Interface names: at most 15 bytes.
        let dev = [format!("dv{id}a"), format!("dv{id}b")];
        let n = (id % 250) + 1;
        let addr = [format!("169.254.{n}.1"), format!("169.254.{n}.2")];
        let p = NetPair {
            ns,
            dev,
            addr,
            links: Vec::new(),
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
        let dev = [format!("dv{id}{k}a"), format!("dv{id}{k}b")];
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

impl Drop for NetPair {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of the veth pair, and so the pair.
        for ns in &self.ns {
            ip(&["netns", "del", ns]);
        }
    }
}
