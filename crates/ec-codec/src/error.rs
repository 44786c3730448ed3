//! Codec errors: each says which rule was broken and what would be right.

use std::fmt;

/// What went wrong in the codec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodecError {
    /// A count or size outside the supported limits.
    Limit {
        /// What was out of range ("data block count", "block size", ...).
        what: &'static str,
        /// The value given.
        value: usize,
        /// The rule, in words ("1..=128", "a multiple of 64", ...).
        allowed: &'static str,
    },
    /// The erasure pattern cannot be recovered: the surviving rows are not independent.
    Singular {
        /// The missing block indices (data 0..M-1, redundancy M..M+K-1).
        missing: Vec<usize>,
    },
    /// Some other malformed input, described.
    Invalid(String),
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodecError::Limit {
                what,
                value,
                allowed,
            } => {
                write!(f, "{what} is {value}; it must be {allowed}")
            }
            CodecError::Singular { missing } => write!(
                f,
                "blocks {missing:?} cannot be recovered with this matrix: the surviving blocks' rows are linearly dependent (singular matrix)"
            ),
            CodecError::Invalid(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for CodecError {}

/// `Result` with a [`CodecError`].
pub type Result<T, E = CodecError> = std::result::Result<T, E>;
