//! The description of a block set: our `ec_manifest`, or the `data_info` file of DOCA's
//! sample (plus the matrix and counts the user gives).
//!
//! A version 2 manifest is plain text, one field a line, in this order:
//!
//! ```text
//! doca-ec-manifest 2
//! matrix cauchy
//! data 4
//! rdnc 2
//! block 25024
//! size 100000
//! path 2f746d702f696e7075742e62696e       (the original path's bytes, in hex)
//! content xxh3-128 <32 hex digits>         (the original file's content, see below)
//! xxh3 data_block_0 <16 hex digits>        (one line a block: data, then redundancy)
//! ...
//! check xxh3 <16 hex digits>               (XXH3-64 of every byte above this line)
//! ```
//!
//! The content digest is the XXH3-128 of the XXH3-128 digests of the file's M parts
//! (part i: bytes `i * block` up to the next part or the end, without padding), so that
//! the encoder, which reads the parts side by side, and the recoverer, which writes them
//! side by side, compute it in one pass. Version 1 manifests (no path bytes, no content
//! digest, no checksum of their own) are still read.
//!
//! Every number is checked: counts within DOCA's limits, the block size a multiple of 64
//! whose M blocks hold the file, and no product that overflows.

use super::xxh3::Xxh3;
use crate::io_error;
use doca_core::{Error, ErrorCode, Result};
use doca_ec::MatrixType;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

/// The sample's size-and-name file.
pub const DATA_INFO: &str = "data_info";
/// Matrix, counts, block size, the original's digest and block checksums.
pub const MANIFEST: &str = "ec_manifest";
const MAGIC_V1: &str = "doca-ec-manifest 1";
const MAGIC: &str = "doca-ec-manifest 2";
/// The most a manifest or `data_info` file may hold (255 blocks need about 12 KiB).
const MAX_DESCRIPTION: u64 = 1 << 20;

/// How a set of blocks was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Coding matrix type.
    pub kind: MatrixType,
    /// Data block count (M).
    pub data: usize,
    /// Redundancy block count (K).
    pub rdnc: usize,
    /// Bytes per block file.
    pub block: u64,
    /// Size of the original file.
    pub size: u64,
    /// The original file's path, as given when encoding (any bytes).
    pub name: OsString,
    /// XXH3-64 of every block (data blocks, then redundancy), when a manifest exists.
    pub sums: Option<Vec<u64>>,
    /// The original file's content digest (see the module's words), from a version 2
    /// manifest.
    pub content: Option<u128>,
}

/// The matrix type's name on the command line.
pub fn kind_name(k: MatrixType) -> &'static str {
    match k {
        MatrixType::Cauchy => "cauchy",
        MatrixType::Vandermonde => "vandermonde",
    }
}

/// Parses "cauchy" or "vandermonde".
pub fn parse_kind(s: &str) -> Result<MatrixType> {
    match s {
        "cauchy" => Ok(MatrixType::Cauchy),
        "vandermonde" => Ok(MatrixType::Vandermonde),
        _ => Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!("matrix type '{s}' is not cauchy or vandermonde"),
        )),
    }
}

fn check_counts(data: usize, rdnc: usize) -> Result<()> {
    if !(1..=doca_ec::MAX_DATA_BLOCKS).contains(&data) {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "data block count is {data}; it must be 1..={}",
                doca_ec::MAX_DATA_BLOCKS
            ),
        ));
    }
    if !(1..=doca_ec::MAX_RDNC_BLOCKS).contains(&rdnc) {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "redundancy block count is {rdnc}; it must be 1..={}",
                doca_ec::MAX_RDNC_BLOCKS
            ),
        ));
    }
    Ok(())
}

/// Whether `data` blocks of `block` bytes (a positive multiple of 64) hold `size` bytes,
/// with no overflow anywhere in the arithmetic that follows (block offsets, totals).
fn block_fits(block: u64, data: usize, rdnc: usize, size: u64) -> bool {
    block > 0
        && block.is_multiple_of(64)
        && block
            .checked_mul((data + rdnc) as u64)
            .is_some_and(|all| all >= size)
        && block * data as u64 >= size
}

/// The content digest from the digests of the file's parts.
pub fn content_digest(parts: &[u128]) -> u128 {
    let bytes: Vec<u8> = parts.iter().flat_map(|p| p.to_le_bytes()).collect();
    xxh3_128(&bytes)
}

/// Computes the content digest of a file written or read part by part, in any
/// interleaving, each part in order.
#[derive(Clone)]
pub struct ContentHasher {
    parts: Vec<Xxh3>,
}

impl std::fmt::Debug for ContentHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContentHasher")
            .field("parts", &self.parts.len())
            .finish()
    }
}

impl ContentHasher {
    /// For a file of `data` parts.
    pub fn new(data: usize) -> ContentHasher {
        ContentHasher {
            parts: (0..data).map(|_| Xxh3::new()).collect(),
        }
    }

    /// From hashers that have each consumed one part whole.
    pub fn from_parts(parts: Vec<Xxh3>) -> ContentHasher {
        ContentHasher { parts }
    }

    /// The next bytes of part `i` (file bytes only, no padding).
    pub fn update(&mut self, i: usize, bytes: &[u8]) {
        self.parts[i].update(bytes);
    }

    /// The content digest.
    pub fn digest(&self) -> u128 {
        let parts: Vec<u128> = self.parts.iter().map(Xxh3::digest128).collect();
        content_digest(&parts)
    }
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .fold(String::with_capacity(2 * b.len()), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

/// Reads a small description file (a manifest or `data_info`) whole: a regular file of
/// at most [`MAX_DESCRIPTION`] bytes.
fn read_description(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let f = crate::open_regular(path).map_err(|e| {
        if e.code() == ErrorCode::NotFound {
            std::io::Error::from(std::io::ErrorKind::NotFound)
        } else {
            std::io::Error::other(e.to_string())
        }
    })?;
    let mut v = Vec::new();
    f.take(MAX_DESCRIPTION + 1).read_to_end(&mut v)?;
    if v.len() as u64 > MAX_DESCRIPTION {
        return Err(std::io::Error::other(format!(
            "it holds more than {MAX_DESCRIPTION} bytes"
        )));
    }
    Ok(v)
}

impl Layout {
    /// The layout for a file of `size` bytes: block size = size / data, rounded up to
    /// 64 bytes (at least 64).
    pub fn for_file(
        size: u64,
        name: &OsStr,
        kind: MatrixType,
        data: usize,
        rdnc: usize,
    ) -> Result<Layout> {
        check_counts(data, rdnc)?;
        let block = size
            .div_ceil(data as u64)
            .checked_next_multiple_of(64)
            .map(|b| b.max(64))
            .filter(|&b| block_fits(b, data, rdnc, size))
            .ok_or_else(|| {
                Error::with_context(
                    ErrorCode::InvalidValue,
                    format!("a file of {size} bytes is too large to encode"),
                )
            })?;
        Ok(Layout {
            kind,
            data,
            rdnc,
            block,
            size,
            name: name.to_os_string(),
            sums: None,
            content: None,
        })
    }

    /// All blocks: data, then redundancy.
    pub fn count(&self) -> usize {
        self.data + self.rdnc
    }

    /// The file name of block `i` (data 0..M, redundancy M..M+K).
    pub fn block_file(&self, i: usize) -> String {
        if i < self.data {
            format!("data_block_{i}")
        } else {
            format!("rdnc_block_{}", i - self.data)
        }
    }

    /// How many bytes of part `i`'s stripe at `off` (of `len` bytes) belong to the file
    /// (the rest is padding).
    pub fn file_bytes(&self, i: usize, off: u64, len: usize) -> usize {
        let at = i as u64 * self.block + off;
        self.size.saturating_sub(at).min(len as u64) as usize
    }

    /// `data_info`'s text, as DOCA's sample writes it: `<size> <path>`.
    pub fn data_info(&self) -> Vec<u8> {
        let mut v = format!("{} ", self.size).into_bytes();
        v.extend_from_slice(self.name.as_bytes());
        v
    }

    /// The version 2 manifest (see the module's words).
    pub fn manifest_text(&self) -> String {
        let mut t = format!(
            "{MAGIC}\nmatrix {}\ndata {}\nrdnc {}\nblock {}\nsize {}\npath {}\n",
            kind_name(self.kind),
            self.data,
            self.rdnc,
            self.block,
            self.size,
            hex(self.name.as_bytes()),
        );
        if let Some(c) = self.content {
            let _ = writeln!(t, "content xxh3-128 {c:032x}");
        }
        if let Some(sums) = &self.sums {
            for (i, s) in sums.iter().enumerate() {
                let _ = writeln!(t, "xxh3 {} {s:016x}", self.block_file(i));
            }
        }
        let check = xxh3_64(t.as_bytes());
        let _ = writeln!(t, "check xxh3 {check:016x}");
        t
    }

    /// Parses a manifest (version 2, or version 1).
    pub fn parse_manifest(bytes: &[u8], path: &Path) -> Result<Layout> {
        let bad = |why: &str| {
            Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "'{}' is not a valid manifest: {why}; the blocks may still be whole: move the manifest aside and recover with {DATA_INFO} and the matrix and counts (-x, -t, -r)",
                    path.display()
                ),
            )
        };
        let v2 = bytes.starts_with(format!("{MAGIC}\n").as_bytes());
        if v2 {
            // Its own checksum first: an edited or damaged manifest is refused whole.
            let body_end = bytes
                .strip_suffix(b"\n")
                .and_then(|b| b.iter().rposition(|&c| c == b'\n'))
                .map(|i| i + 1)
                .ok_or_else(|| bad("it has no checksum line"))?;
            let (body, last) = bytes.split_at(body_end);
            let last = std::str::from_utf8(last).map_err(|_| bad("its last line is not text"))?;
            let want = last
                .strip_prefix("check xxh3 ")
                .and_then(|h| h.strip_suffix('\n'))
                .and_then(|h| u64::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad("its last line is not 'check xxh3 <checksum>'"))?;
            if xxh3_64(body) != want {
                return Err(bad(
                    "it was edited or damaged (its own checksum does not match)",
                ));
            }
        } else if !bytes.starts_with(format!("{MAGIC_V1}\n").as_bytes()) {
            return Err(bad("it does not start with the manifest header"));
        }
        let text = if v2 {
            std::str::from_utf8(bytes).map_err(|_| bad("it is not text"))?
        } else {
            // Version 1 kept the name as it was; any other byte is not a manifest's.
            &String::from_utf8_lossy(bytes)
        };
        let mut lines = text.lines().skip(1);
        let mut get = |key: &str| -> Result<String> {
            let line = lines
                .next()
                .ok_or_else(|| bad(&format!("no '{key}' line")))?;
            line.strip_prefix(key)
                .and_then(|r| r.strip_prefix(' '))
                .map(str::to_string)
                .ok_or_else(|| bad(&format!("expected '{key} ...', found '{line}'")))
        };
        let num = |s: String, key: &str| -> Result<u64> {
            s.parse::<u64>()
                .map_err(|_| bad(&format!("'{key}' is not a number: '{s}'")))
        };
        let kind = parse_kind(&get("matrix")?).map_err(|e| bad(&e.to_string()))?;
        let data = usize::try_from(num(get("data")?, "data")?).unwrap_or(usize::MAX);
        let rdnc = usize::try_from(num(get("rdnc")?, "rdnc")?).unwrap_or(usize::MAX);
        let block = num(get("block")?, "block")?;
        let size = num(get("size")?, "size")?;
        check_counts(data, rdnc).map_err(|e| bad(&e.to_string()))?;
        if !block_fits(block, data, rdnc, size) {
            return Err(bad("the block size does not fit the file size"));
        }
        let (name, content) = if v2 {
            let name = unhex(&get("path")?).ok_or_else(|| bad("'path' is not hexadecimal"))?;
            let c = get("content")?;
            let c = c
                .strip_prefix("xxh3-128 ")
                .and_then(|h| (h.len() == 32).then_some(h))
                .and_then(|h| u128::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad("malformed 'content' line"))?;
            (OsString::from_vec(name), Some(c))
        } else {
            (OsString::from(get("name")?), None)
        };
        let mut layout = Layout {
            kind,
            data,
            rdnc,
            block,
            size,
            name,
            sums: None,
            content,
        };
        let mut sums = Vec::with_capacity(layout.count());
        for i in 0..layout.count() {
            let v = get("xxh3")?;
            let (file, hex) = v
                .split_once(' ')
                .ok_or_else(|| bad("malformed checksum line"))?;
            if file != layout.block_file(i) {
                return Err(bad(&format!(
                    "checksum line for '{file}' where '{}' was expected",
                    layout.block_file(i)
                )));
            }
            sums.push(
                u64::from_str_radix(hex, 16).map_err(|_| bad("a checksum is not hexadecimal"))?,
            );
        }
        if v2 && get("check").is_err() {
            return Err(bad("lines follow the block checksums"));
        }
        layout.sums = Some(sums);
        Ok(layout)
    }

    /// Reads a block directory's layout: its manifest, or (blocks made by DOCA's sample)
    /// `data_info` plus the counts and matrix given in `guess`, with the block size taken
    /// from the block files present.
    pub fn read(dir: &Path, guess: Option<(MatrixType, usize, usize)>) -> Result<Layout> {
        let mpath = dir.join(MANIFEST);
        match read_description(&mpath) {
            Ok(t) => return Layout::parse_manifest(&t, &mpath),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io_error(format!("cannot read '{}'", mpath.display()), &e));
            }
            Err(_) => {}
        }
        let ipath = dir.join(DATA_INFO);
        let info = read_description(&ipath).map_err(|e| {
            io_error(
                format!(
                    "'{}' holds no erasure coded blocks (cannot read {DATA_INFO})",
                    dir.display()
                ),
                &e,
            )
        })?;
        let info = info.strip_suffix(b"\n").unwrap_or(&info);
        let sp = info.iter().position(|&b| b == b' ').ok_or_else(|| {
            Error::with_context(
                ErrorCode::InvalidValue,
                format!("'{}' does not hold '<size> <path>'", ipath.display()),
            )
        })?;
        let (size, name) = (&info[..sp], &info[sp + 1..]);
        let size: u64 = std::str::from_utf8(size)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                Error::with_context(
                    ErrorCode::InvalidValue,
                    format!(
                        "'{}': '{}' is not a size",
                        ipath.display(),
                        String::from_utf8_lossy(size)
                    ),
                )
            })?;
        let Some((kind, data, rdnc)) = guess else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "'{}' has no {MANIFEST}: give the matrix and block counts it was made with (-x, -t, -r)",
                    dir.display()
                ),
            ));
        };
        let mut layout = Layout::for_file(size, OsStr::from_bytes(name), kind, data, rdnc)?;
        // Blocks from elsewhere may use another rounding: the size most block files
        // present share is the block size (one damaged file does not make the others
        // look wrong). Ties go to the size computed from data_info.
        let mut lens: Vec<(u64, usize)> = Vec::new();
        let mut seen = None;
        for i in 0..layout.count() {
            if let Ok(m) = std::fs::metadata(dir.join(layout.block_file(i)))
                && m.is_file()
            {
                seen.get_or_insert(m.len());
                if !block_fits(m.len(), data, rdnc, size) {
                    continue;
                }
                match lens.iter_mut().find(|(l, _)| *l == m.len()) {
                    Some((_, n)) => *n += 1,
                    None => lens.push((m.len(), 1)),
                }
            }
        }
        if let (None, Some(len)) = (lens.first(), seen) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "{DATA_INFO} gives {size} bytes, which {data} data blocks of {len} bytes (the blocks present) cannot hold: {DATA_INFO} is wrong, or the counts (-t, -r) are"
                ),
            ));
        }
        let computed = layout.block;
        if let Some(&(len, _)) = lens.iter().max_by_key(|(l, n)| (*n, *l == computed)) {
            layout.block = len;
        }
        Ok(layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        let mut l = Layout::for_file(
            100_000,
            OsStr::from_bytes(b"/tmp/odd\nname \xff"),
            MatrixType::Cauchy,
            4,
            2,
        )
        .unwrap();
        l.sums = Some((0..6).map(|i| i * 0x1111).collect());
        l.content = Some(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        l
    }

    #[test]
    fn manifests_round_trip_any_path() {
        let l = layout();
        let t = l.manifest_text();
        assert_eq!(
            Layout::parse_manifest(t.as_bytes(), Path::new("m")).unwrap(),
            l
        );
    }

    #[test]
    fn an_edited_manifest_is_refused() {
        let t = layout().manifest_text();
        for (from, to) in [
            ("size 100000", "size 100001"),
            ("size 100000", "size 10000"),
            ("data 4", "data 5"),
            ("matrix cauchy", "matrix vandermonde"),
        ] {
            let edited = t.replace(from, to);
            let e = Layout::parse_manifest(edited.as_bytes(), Path::new("m")).unwrap_err();
            assert!(e.to_string().contains("edited or damaged"), "{e}");
        }
        // Truncated, or with lines added after the checksum.
        for bad in [&t[..t.len() - 5], &format!("{t}extra\n")] {
            assert!(Layout::parse_manifest(bad.as_bytes(), Path::new("m")).is_err());
        }
    }

    #[test]
    fn hostile_numbers_are_refused_without_overflow() {
        // Valid checksums over absurd numbers: the numbers themselves are refused.
        for (block, size, data) in [
            (u64::MAX / 64 * 64, u64::MAX, 4),
            (1 << 62, 1 << 63, 4),
            (64, 100_000, 4),
            (0, 0, 4),
            (100, 100, 4),
            (64, 64, 0),
            (64, 64, 1u64 << 40),
        ] {
            let mut t = format!(
                "{MAGIC}\nmatrix cauchy\ndata {data}\nrdnc 2\nblock {block}\nsize {size}\npath 2f\ncontent xxh3-128 {:032x}\n",
                0
            );
            let check = xxh3_64(t.as_bytes());
            let _ = writeln!(t, "check xxh3 {check:016x}");
            assert!(
                Layout::parse_manifest(t.as_bytes(), Path::new("m")).is_err(),
                "{t}"
            );
        }
        assert!(Layout::for_file(u64::MAX, OsStr::new("x"), MatrixType::Cauchy, 1, 1).is_err());
    }

    proptest::proptest! {
        /// Any bytes: an error or a layout whose numbers hold together, never a panic.
        #[test]
        fn any_bytes_parse_without_panic(b in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            if let Ok(l) = Layout::parse_manifest(&b, Path::new("m")) {
                proptest::prop_assert!(block_fits(l.block, l.data, l.rdnc, l.size));
            }
        }

        /// A valid manifest with one line's value replaced, and its checksum made good
        /// again (a careful forger): refused or consistent, never a panic or overflow.
        #[test]
        fn forged_manifests_hold_together(line in 1usize..14, value in "[0-9a-f ]{0,24}|18446744073709551615|[0-9]{1,30}") {
            let t = layout().manifest_text();
            let mut lines: Vec<String> = t.lines().map(str::to_string).collect();
            lines.pop(); // the check line
            if line < lines.len() {
                let key = lines[line].split(' ').next().unwrap_or("").to_string();
                lines[line] = format!("{key} {value}");
            }
            let mut body = lines.join("\n");
            body.push('\n');
            let check = xxh3_64(body.as_bytes());
            let _ = writeln!(body, "check xxh3 {check:016x}");
            if let Ok(l) = Layout::parse_manifest(body.as_bytes(), Path::new("m")) {
                proptest::prop_assert!(block_fits(l.block, l.data, l.rdnc, l.size));
                proptest::prop_assert_eq!(l.sums.as_ref().map(Vec::len), Some(l.count()));
            }
        }
    }

    #[test]
    fn version_1_manifests_are_still_read() {
        let t = "doca-ec-manifest 1\nmatrix cauchy\ndata 2\nrdnc 1\nblock 64\nsize 100\nname /x y\nxxh3 data_block_0 0\nxxh3 data_block_1 1\nxxh3 rdnc_block_0 2\n";
        let l = Layout::parse_manifest(t.as_bytes(), Path::new("m")).unwrap();
        assert_eq!(l.name, OsString::from("/x y"));
        assert_eq!(l.content, None);
        assert_eq!(l.sums, Some(vec![0, 1, 2]));
    }

    #[test]
    fn the_content_digest_does_not_depend_on_the_interleaving() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        let l = Layout::for_file(1000, OsStr::new("x"), MatrixType::Cauchy, 3, 1).unwrap();
        let mut a = ContentHasher::new(3);
        for off in (0..l.block).step_by(64) {
            for i in 0..3 {
                let n = l.file_bytes(i, off, 64);
                let at = ((i as u64 * l.block + off) as usize).min(1000);
                a.update(i, &data[at..at + n]);
            }
        }
        let mut b = ContentHasher::new(3);
        for i in 0..3 {
            let at = (i as u64 * l.block) as usize;
            b.update(i, &data[at.min(1000)..(at + l.block as usize).min(1000)]);
        }
        assert_eq!(a.digest(), b.digest());
    }
}
