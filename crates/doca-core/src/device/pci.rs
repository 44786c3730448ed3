//! PCI addresses: `XXXX:XX:XX.X` (domain:bus:device.function) and the short `XX:XX.X` BDF.

use crate::error::{Error, ErrorCode};
use std::fmt;
use std::str::FromStr;

/// `DOCA_DEVINFO_PCI_ADDR_SIZE`: "XXXX:XX:XX.X" plus NUL.
pub const PCI_ADDR_SIZE: usize = 13;
/// `DOCA_DEVINFO_PCI_BDF_SIZE`: "XX:XX.X" plus NUL.
pub const PCI_BDF_SIZE: usize = 8;

/// A PCI function address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PciAddr {
    /// Domain (16 bits).
    pub domain: u16,
    /// Bus.
    pub bus: u8,
    /// Device (0..32).
    pub device: u8,
    /// Function (0..8).
    pub function: u8,
}

impl PciAddr {
    /// Parses "XXXX:XX:XX.X" or "XX:XX.X" (domain 0). Hex digits of either case.
    pub fn parse(s: &str) -> Result<PciAddr, Error> {
        let bad = || {
            Error::with_context(
                ErrorCode::InvalidValue,
                format!("'{s}' is not a PCI address (expected XXXX:XX:XX.X or XX:XX.X, hex)"),
            )
        };
        let hex = |part: &str, width: usize| -> Result<u32, Error> {
            if part.len() != width || !part.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad());
            }
            u32::from_str_radix(part, 16).map_err(|_| bad())
        };
        let (dbd, func) = s.rsplit_once('.').ok_or_else(bad)?;
        let parts: Vec<&str> = dbd.split(':').collect();
        let (domain, bus, dev) = match parts.as_slice() {
            [d, b, v] => (hex(d, 4)?, hex(b, 2)?, hex(v, 2)?),
            [b, v] => (0, hex(b, 2)?, hex(v, 2)?),
            _ => return Err(bad()),
        };
        let function = hex(func, 1)?;
        if dev > 0x1f || function > 7 {
            return Err(bad());
        }
        Ok(PciAddr {
            domain: domain as u16,
            bus: bus as u8,
            device: dev as u8,
            function: function as u8,
        })
    }

    /// The short "XX:XX.X" form.
    pub fn bdf(&self) -> String {
        format!("{:02x}:{:02x}.{:x}", self.bus, self.device, self.function)
    }

    /// Whether `s` ("XXXX:XX:XX.X" or "XX:XX.X") names this address. A short form matches
    /// any domain's bus/device/function only when the domain is 0, as DOCA compares the
    /// short form against domain 0000.
    pub fn matches_str(&self, s: &str) -> Result<bool, Error> {
        Ok(PciAddr::parse(s)? == *self)
    }
}

impl fmt::Display for PciAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.{:x}",
            self.domain, self.bus, self.device, self.function
        )
    }
}

impl FromStr for PciAddr {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        PciAddr::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format() {
        let a = PciAddr::parse("0000:03:00.1").unwrap();
        assert_eq!(a.to_string(), "0000:03:00.1");
        assert_eq!(a.to_string().len() + 1, PCI_ADDR_SIZE);
        assert_eq!(a.bdf(), "03:00.1");
        assert_eq!(PciAddr::parse("03:00.1").unwrap(), a);
        assert_eq!(
            PciAddr::parse("0B:1f.7").unwrap().to_string(),
            "0000:0b:1f.7"
        );
        for bad in [
            "",
            "3:00.1",
            "0000:03:00",
            "0000:03:20.0",
            "0000:03:00.8",
            "zz:00.0",
            "0000:03:00.1x",
            "1:2:3:4.0",
        ] {
            assert!(PciAddr::parse(bad).is_err(), "{bad}");
        }
        assert!(a.matches_str("03:00.1").unwrap());
        assert!(!a.matches_str("0001:03:00.1").unwrap());
    }
}
