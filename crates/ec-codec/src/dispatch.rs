//! Kernel selection: the CPU is examined once; `DOCA_EC_ISA` =
//! `scalar|portable|avx2|avx512|gfni256|gfni512` overrides the choice (falling back to
//! the best supported kernel, with a warning, when the CPU lacks the one asked for).

use std::sync::OnceLock;

/// Environment variable that picks the kernel.
pub const ISA_ENV: &str = "DOCA_EC_ISA";

/// A kernel family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Isa {
    /// Byte-at-a-time table arithmetic: the reference.
    Scalar,
    /// Word-at-a-time table arithmetic: the fallback on CPUs without a SIMD kernel.
    Portable,
    /// AVX2 nibble shuffles, 32 bytes per step.
    Avx2,
    /// AVX-512BW nibble shuffles, 64 bytes per step.
    Avx512,
    /// GFNI affine multiply on 256-bit registers.
    Gfni256,
    /// GFNI affine multiply on 512-bit registers.
    Gfni512,
}

impl Isa {
    /// Every kernel family, slowest first.
    pub const ALL: [Isa; 6] = [
        Isa::Scalar,
        Isa::Portable,
        Isa::Avx2,
        Isa::Avx512,
        Isa::Gfni256,
        Isa::Gfni512,
    ];

    /// Its `DOCA_EC_ISA` name.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Portable => "portable",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Gfni256 => "gfni256",
            Isa::Gfni512 => "gfni512",
        }
    }

    /// The family with this name.
    pub fn from_name(s: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| i.name() == s)
    }

    /// Whether this CPU can run it.
    pub fn is_supported(self) -> bool {
        match self {
            Isa::Scalar | Isa::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => std::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Gfni256 => {
                std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("gfni")
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Gfni512 => {
                std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
                    && std::is_x86_feature_detected!("gfni")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

/// The fastest kernel this CPU supports.
pub fn best() -> Isa {
    [
        Isa::Gfni512,
        Isa::Gfni256,
        Isa::Avx512,
        Isa::Avx2,
        Isa::Portable,
    ]
    .into_iter()
    .find(|i| i.is_supported())
    .unwrap_or(Isa::Scalar)
}

/// The kernel in force: `DOCA_EC_ISA` if set and supported, else [`best`]. Decided once.
pub fn selected() -> Isa {
    static SELECTED: OnceLock<Isa> = OnceLock::new();
    *SELECTED.get_or_init(|| match std::env::var(ISA_ENV) {
        Err(_) => best(),
        Ok(name) => match Isa::from_name(&name) {
            Some(isa) if isa.is_supported() => isa,
            Some(isa) => {
                eprintln!("{ISA_ENV}={name}: this CPU cannot run {}; using {}", isa.name(), best().name());
                best()
            }
            None => {
                eprintln!(
                    "{ISA_ENV}={name} is not a kernel (scalar, portable, avx2, avx512, gfni256, gfni512); using {}",
                    best().name()
                );
                best()
            }
        },
    })
}

/// Size of the last-level cache in bytes (32 MiB when it cannot be read).
pub fn llc_bytes() -> usize {
    static LLC: OnceLock<usize> = OnceLock::new();
    *LLC.get_or_init(|| {
        (0..8)
            .rev()
            .find_map(|i| {
                let p = format!("/sys/devices/system/cpu/cpu0/cache/index{i}/size");
                let s = std::fs::read_to_string(p).ok()?;
                let s = s.trim();
                let (num, mul) = match s.strip_suffix('K') {
                    Some(n) => (n, 1 << 10),
                    None => match s.strip_suffix('M') {
                        Some(n) => (n, 1 << 20),
                        None => (s, 1),
                    },
                };
                num.parse::<usize>().ok().map(|n| n * mul)
            })
            .unwrap_or(32 << 20)
    })
}

/// Whether a job touching `bytes` should write with non-temporal stores: only when its
/// working set exceeds the last-level cache.
pub fn use_streaming(bytes: usize) -> bool {
    bytes > llc_bytes()
}
