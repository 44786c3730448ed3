//! Which of its implementations ISA-L 2.32's dispatcher picks on this CPU.
//!
//! ISA-L reads the CPU once per dispatched function (`mbin_dispatch_init8` in its
//! `multibinary.asm`) and picks one of up to seven implementations. The pick decides more
//! than speed: the table layout `ec_init_tables` writes (affine bit matrices from the
//! GFNI tiers up, nibble tables below), how each function reads tables, and from which
//! length the SIMD code runs. This library follows the same pick, from the same CPUID
//! bits, so that a program sees ISA-L's bytes and return values on every CPU; the
//! arithmetic itself runs on whatever kernel `ec-codec` chose.

use std::sync::OnceLock;

/// An implementation tier of ISA-L's dispatcher, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tier {
    /// No SSE4.2: the `_base` functions.
    Base,
    /// SSE4.2.
    Sse,
    /// AVX (with the OS saving YMM state).
    Avx,
    /// AVX2.
    Avx2,
    /// AVX-512 F, VL, BW, CD and DQ, with the OS saving ZMM state.
    Avx512,
    /// AVX2 with GFNI, VAES and VPCLMULQDQ, where the OS does not save ZMM state.
    Avx2Gfni,
    /// AVX-512 with VBMI2, GFNI, VAES, VPCLMULQDQ, VNNI, BITALG and VPOPCNTDQ.
    Avx512Gfni,
}

impl Tier {
    /// Whether `ec_init_tables` and `gf_vect_mul_init` write bit matrices.
    pub(crate) fn gfni(self) -> bool {
        matches!(self, Tier::Avx2Gfni | Tier::Avx512Gfni)
    }
}

/// The picks of this CPU.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tiers {
    /// Every dispatched erasure-code and GF function but `ec_encode_data_update`.
    pub(crate) general: Tier,
    /// `ec_encode_data_update`: the AVX code on Hygon's first three families.
    pub(crate) update: Tier,
}

/// This CPU's picks, read once.
pub(crate) fn tiers() -> Tiers {
    static TIERS: OnceLock<Tiers> = OnceLock::new();
    *TIERS.get_or_init(detect)
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Tiers {
    use std::arch::x86_64::__cpuid_count;
    const SSE4_2: u32 = 1 << 20;
    const OSXSAVE: u32 = 1 << 27;
    const AVX: u32 = 1 << 28;
    const AVX2: u32 = 1 << 5;
    const XMM_YMM: u64 = 0x6;
    const ZMM_OPMASK: u64 = 0xe0;
    // AVX-512 F, DQ, CD, BW, VL.
    const AVX512_G1: u32 = 1 << 16 | 1 << 17 | 1 << 28 | 1 << 30 | 1 << 31;
    // VBMI2, GFNI, VAES, VPCLMULQDQ, VNNI, BITALG, VPOPCNTDQ.
    const AVX512_G2: u32 = 1 << 6 | 1 << 8 | 1 << 9 | 1 << 10 | 1 << 11 | 1 << 12 | 1 << 14;
    // GFNI, VAES, VPCLMULQDQ.
    const AVX2_G2: u32 = 1 << 8 | 1 << 9 | 1 << 10;

    let l1 = __cpuid_count(1, 0);
    let only = |t| Tiers {
        general: t,
        update: t,
    };
    if l1.ecx & SSE4_2 == 0 {
        return only(Tier::Base);
    }
    if l1.ecx & OSXSAVE == 0 {
        return only(Tier::Sse);
    }
    let xcr0 = xgetbv0();
    if xcr0 & XMM_YMM != XMM_YMM || l1.ecx & AVX == 0 {
        return only(Tier::Sse);
    }
    let l7 = __cpuid_count(7, 0);
    let general = if l7.ebx & AVX2 == 0 {
        Tier::Avx
    } else if xcr0 & ZMM_OPMASK == ZMM_OPMASK {
        // As ISA-L tests them: each group on its own, the second winning.
        if l7.ecx & AVX512_G2 == AVX512_G2 {
            Tier::Avx512Gfni
        } else if l7.ebx & AVX512_G1 == AVX512_G1 {
            Tier::Avx512
        } else {
            Tier::Avx2
        }
    } else if l7.ecx & AVX2_G2 == AVX2_G2 {
        Tier::Avx2Gfni
    } else {
        Tier::Avx2
    };
    let update = if hygon_1_to_3() { Tier::Avx } else { general };
    Tiers { general, update }
}

/// Whether this is a Hygon CPU of family 1, 2 or 3 (ISA-L keeps its AVX update code
/// there).
#[cfg(target_arch = "x86_64")]
fn hygon_1_to_3() -> bool {
    use std::arch::x86_64::__cpuid_count;
    let l0 = __cpuid_count(0, 0);
    // "HygonGenuine" in EBX, EDX, ECX.
    if (l0.ebx, l0.edx, l0.ecx) != (0x6f67_7948, 0x6e65_476e, 0x656e_6975) {
        return false;
    }
    let sig = __cpuid_count(1, 0).eax & 0xffff_fff0;
    matches!(sig, 0x0090_0f00 | 0x0090_0f10 | 0x0090_0f20)
}

/// XCR0, the state components the OS saves (CPUID says OSXSAVE is set).
#[cfg(target_arch = "x86_64")]
fn xgetbv0() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: XGETBV with ECX = 0 reads XCR0; it is available because CPUID reported
    // OSXSAVE, which the caller checked. It touches no memory.
    unsafe {
        std::arch::asm!("xgetbv", in("ecx") 0, out("eax") lo, out("edx") hi,
            options(nomem, nostack, preserves_flags));
    }
    (hi as u64) << 32 | lo as u64
}

/// Other architectures: nibble tables, with the length rules of ISA-L's AVX2 code.
#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Tiers {
    Tiers {
        general: Tier::Avx2,
        update: Tier::Avx2,
    }
}
