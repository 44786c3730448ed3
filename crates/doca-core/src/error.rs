//! DOCA status codes.
//!
//! Every `doca_error_t` value is an [`ErrorCode`] with the same number. An [`Error`] is a
//! code plus, optionally, a sentence that says what was wrong in words a user can act on.

use std::borrow::Cow;
use std::fmt;

macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $value:literal, $name:literal, $desc:literal; )*) => {
        /// A `doca_error_t` failure code (every value but `DOCA_SUCCESS`), numerically equal
        /// to DOCA 2.2.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(i32)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant = $value, )*
        }

        impl ErrorCode {
            /// Every failure code, in numeric order.
            pub const ALL: &'static [ErrorCode] = &[ $( ErrorCode::$variant, )* ];

            /// The DOCA name, e.g. `DOCA_ERROR_BAD_STATE`.
            pub const fn name(self) -> &'static str {
                match self { $( ErrorCode::$variant => $name, )* }
            }

            /// A short human description, e.g. "Bad state".
            pub const fn description(self) -> &'static str {
                match self { $( ErrorCode::$variant => $desc, )* }
            }

            /// The code for a `doca_error_t` number; `None` for `DOCA_SUCCESS` (0) and for
            /// numbers DOCA 2.2 does not define.
            pub const fn from_raw(raw: i32) -> Option<ErrorCode> {
                match raw { $( $value => Some(ErrorCode::$variant), )* _ => None }
            }
        }
    };
}

error_codes! {
    /// Unknown error.
    Unknown = 1, "DOCA_ERROR_UNKNOWN", "Unknown error";
    /// Operation not permitted.
    NotPermitted = 2, "DOCA_ERROR_NOT_PERMITTED", "Operation not permitted";
    /// Resource already in use.
    InUse = 3, "DOCA_ERROR_IN_USE", "Resource already in use";
    /// Operation not supported.
    NotSupported = 4, "DOCA_ERROR_NOT_SUPPORTED", "Operation not supported";
    /// Resource temporarily unavailable, try again.
    Again = 5, "DOCA_ERROR_AGAIN", "Resource temporarily unavailable, try again";
    /// Invalid input.
    InvalidValue = 6, "DOCA_ERROR_INVALID_VALUE", "Invalid input";
    /// Memory allocation failure or no room left.
    NoMemory = 7, "DOCA_ERROR_NO_MEMORY", "Memory allocation failure";
    /// Resource initialization failure.
    Initialization = 8, "DOCA_ERROR_INITIALIZATION", "Resource initialization failure";
    /// Timer expired waiting for resource.
    TimeOut = 9, "DOCA_ERROR_TIME_OUT", "Timer expired waiting for resource";
    /// Shut down in process or completed.
    Shutdown = 10, "DOCA_ERROR_SHUTDOWN", "Shut down in process or completed";
    /// Connection reset by peer.
    ConnectionReset = 11, "DOCA_ERROR_CONNECTION_RESET", "Connection reset by peer";
    /// Connection aborted.
    ConnectionAborted = 12, "DOCA_ERROR_CONNECTION_ABORTED", "Connection aborted";
    /// Connection in progress.
    ConnectionInProgress = 13, "DOCA_ERROR_CONNECTION_INPROGRESS", "Connection in progress";
    /// Not connected.
    NotConnected = 14, "DOCA_ERROR_NOT_CONNECTED", "Not connected";
    /// Unable to acquire required lock.
    NoLock = 15, "DOCA_ERROR_NO_LOCK", "Unable to acquire required lock";
    /// Resource not found.
    NotFound = 16, "DOCA_ERROR_NOT_FOUND", "Resource not found";
    /// Input/output operation failed.
    IoFailed = 17, "DOCA_ERROR_IO_FAILED", "Input/output operation failed";
    /// Bad state.
    BadState = 18, "DOCA_ERROR_BAD_STATE", "Bad state";
    /// Unsupported version.
    UnsupportedVersion = 19, "DOCA_ERROR_UNSUPPORTED_VERSION", "Unsupported version";
    /// Operating system call failure.
    OperatingSystem = 20, "DOCA_ERROR_OPERATING_SYSTEM", "Operating system call failure";
    /// Driver call failure.
    Driver = 21, "DOCA_ERROR_DRIVER", "DOCA driver call failure";
    /// An unexpected scenario was detected.
    Unexpected = 22, "DOCA_ERROR_UNEXPECTED", "An unexpected scenario was detected";
    /// Resource already exists.
    AlreadyExist = 23, "DOCA_ERROR_ALREADY_EXIST", "Resource already exists";
    /// No more space in resource.
    Full = 24, "DOCA_ERROR_FULL", "No more space in resource";
    /// No entry is available in resource.
    Empty = 25, "DOCA_ERROR_EMPTY", "No entry is available in resource";
    /// Operation is in progress.
    InProgress = 26, "DOCA_ERROR_IN_PROGRESS", "Operation is in progress";
    /// The request is too big to be held (DOCA 2.5 and later).
    TooBig = 27, "DOCA_ERROR_TOO_BIG", "Requested operation too big to be contained";
}

/// Name of `DOCA_SUCCESS`.
pub const SUCCESS_NAME: &str = "DOCA_SUCCESS";
/// Name given to numbers that are not `doca_error_t` values.
pub const UNRECOGNIZED_NAME: &str = "DOCA_ERROR_UNRECOGNIZED";
/// Description given to numbers that are not `doca_error_t` values.
pub const UNRECOGNIZED_DESCRIPTION: &str = "Unrecognized error code";

/// The DOCA name of any `doca_error_t` number, including success and unknown numbers.
pub fn raw_name(raw: i32) -> &'static str {
    match raw {
        0 => SUCCESS_NAME,
        _ => ErrorCode::from_raw(raw).map_or(UNRECOGNIZED_NAME, ErrorCode::name),
    }
}

/// The description of any `doca_error_t` number, including success and unknown numbers.
pub fn raw_description(raw: i32) -> &'static str {
    match raw {
        0 => "Success",
        _ => ErrorCode::from_raw(raw).map_or(UNRECOGNIZED_DESCRIPTION, ErrorCode::description),
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.description())
    }
}

impl TryFrom<i32> for ErrorCode {
    type Error = i32;

    /// Converts a `doca_error_t` number; the number itself comes back when it is success or
    /// not a DOCA 2.2 code.
    fn try_from(raw: i32) -> Result<Self, i32> {
        ErrorCode::from_raw(raw).ok_or(raw)
    }
}

impl From<ErrorCode> for i32 {
    fn from(code: ErrorCode) -> i32 {
        code as i32
    }
}

/// A DOCA failure: the code a C program would see, plus optional context for people.
///
/// Two words, so that a `Result<(), Error>` comes back in two registers: the context's
/// address, and a word holding the code (high half), whether the text is owned (a boxed
/// `str` this error frees) rather than `'static` (bit 31), and the text's length. The
/// code is never 0, so the word never is, and `Ok(())` costs no third word.
pub struct Error {
    text: *const u8,
    meta: std::num::NonZeroU64,
}

// SAFETY: the text is either `'static` or a boxed `str` only this error refers to.
unsafe impl Send for Error {}
// SAFETY: as above; the text is never written after it is set.
unsafe impl Sync for Error {}

/// [`Error::meta`]: the text is owned.
const OWNED: u64 = 1 << 31;
/// [`Error::meta`]: the text's length.
const LEN: u64 = OWNED - 1;

/// `Result` with a DOCA [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with only a code.
    pub const fn new(code: ErrorCode) -> Error {
        Error {
            text: std::ptr::null(),
            meta: Error::meta_of(code, 0),
        }
    }

    const fn meta_of(code: ErrorCode, text: u64) -> std::num::NonZeroU64 {
        // Codes are positive `i32`s.
        match std::num::NonZeroU64::new(((code as i32 as u32 as u64) << 32) | text) {
            Some(m) => m,
            None => panic!("error codes are never 0"),
        }
    }

    #[inline]
    fn text_meta(&self) -> u64 {
        self.meta.get() & (OWNED | LEN)
    }

    /// An error with a code and a sentence saying what was wrong. A `&'static str` costs
    /// no allocation, so the data path uses those.
    pub fn with_context(code: ErrorCode, context: impl Into<Cow<'static, str>>) -> Error {
        Error::new(code).context(context)
    }

    /// `DOCA_ERROR_INVALID_VALUE`, with what was wrong and what to pass instead.
    pub fn invalid(context: impl Into<Cow<'static, str>>) -> Error {
        Error::with_context(ErrorCode::InvalidValue, context)
    }

    /// `DOCA_ERROR_BAD_STATE`, with what the object's state must be first.
    pub fn bad_state(context: impl Into<Cow<'static, str>>) -> Error {
        Error::with_context(ErrorCode::BadState, context)
    }

    /// Adds (or replaces) the context sentence.
    pub fn context(mut self, context: impl Into<Cow<'static, str>>) -> Error {
        self.free_text();
        let code = self.code();
        let max = LEN as usize;
        match context.into() {
            Cow::Borrowed(s) => {
                let s = &s[..floor_char_boundary(s, max)];
                self.text = s.as_ptr();
                self.meta = Error::meta_of(code, s.len() as u64);
            }
            Cow::Owned(mut s) => {
                s.truncate(floor_char_boundary(&s, max));
                let b = s.into_boxed_str();
                let len = b.len() as u64;
                self.text = Box::into_raw(b) as *const u8;
                self.meta = Error::meta_of(code, len | OWNED);
            }
        }
        self
    }

    fn free_text(&mut self) {
        if self.text_meta() & OWNED != 0 {
            let len = (self.text_meta() & LEN) as usize;
            // SAFETY: an owned text is the boxed `str` of `len` bytes made in `context`,
            // freed once (the fields are cleared below).
            drop(unsafe {
                Box::from_raw(
                    std::ptr::slice_from_raw_parts_mut(self.text as *mut u8, len) as *mut str,
                )
            });
        }
        self.text = std::ptr::null();
        self.meta = Error::meta_of(self.code(), 0);
    }

    /// The DOCA code.
    pub const fn code(&self) -> ErrorCode {
        match ErrorCode::from_raw((self.meta.get() >> 32) as u32 as i32) {
            Some(c) => c,
            None => ErrorCode::Unknown,
        }
    }

    /// The `doca_error_t` number.
    pub const fn raw(&self) -> i32 {
        (self.meta.get() >> 32) as u32 as i32
    }

    /// The DOCA name of the code.
    pub const fn name(&self) -> &'static str {
        self.code().name()
    }

    /// The context sentence, if any.
    pub fn context_str(&self) -> Option<&str> {
        if self.text.is_null() {
            return None;
        }
        let len = (self.text_meta() & LEN) as usize;
        // SAFETY: `text` and `len` are those of a `str` (static, or owned by this error
        // and alive until it is dropped).
        Some(unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(self.text, len)) })
    }

    /// An error for any `doca_error_t` number: `None` for success, and
    /// [`ErrorCode::Unknown`] (with the number in the context) for numbers DOCA does not
    /// define.
    pub fn from_raw(raw: i32) -> Option<Error> {
        match raw {
            0 => None,
            _ => Some(match ErrorCode::from_raw(raw) {
                Some(code) => Error::new(code),
                None => Error::with_context(
                    ErrorCode::Unknown,
                    format!("unrecognized doca_error_t value {raw}"),
                ),
            }),
        }
    }
}

/// The largest char boundary of `s` at or below `max`.
fn floor_char_boundary(s: &str, max: usize) -> usize {
    if s.len() <= max {
        return s.len();
    }
    (0..=max)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0)
}

impl Drop for Error {
    fn drop(&mut self) {
        self.free_text();
    }
}

impl Clone for Error {
    fn clone(&self) -> Error {
        match self.context_str() {
            None => Error::new(self.code()),
            Some(_) if self.text_meta() & OWNED == 0 => Error {
                text: self.text,
                meta: self.meta,
            },
            Some(t) => Error::new(self.code()).context(t.to_owned()),
        }
    }
}

impl PartialEq for Error {
    fn eq(&self, o: &Error) -> bool {
        self.code() == o.code() && self.context_str() == o.context_str()
    }
}

impl Eq for Error {}

impl From<ErrorCode> for Error {
    fn from(code: ErrorCode) -> Error {
        Error::new(code)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.context_str() {
            Some(c) => write!(f, "{}: {}", self.code().name(), c),
            None => write!(f, "{}", self.code().name()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.context_str() {
            Some(c) => write!(
                f,
                "{}: {} ({})",
                self.code().name(),
                c,
                self.code().description()
            ),
            None => write!(f, "{}: {}", self.code().name(), self.code().description()),
        }
    }
}

impl std::error::Error for Error {}

/// Builds an `Err(Error)` with a code and a context sentence.
#[macro_export]
macro_rules! bail {
    ($code:ident, $msg:literal) => {
        return Err($crate::Error::with_context($crate::ErrorCode::$code, $msg))
    };
    ($code:ident, $($fmt:tt)+) => {
        return Err($crate::Error::with_context($crate::ErrorCode::$code, format!($($fmt)+)))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_sixteen_bytes_with_their_context() {
        assert_eq!(std::mem::size_of::<Error>(), 16);
        assert_eq!(std::mem::size_of::<Result<(), Error>>(), 16);
        let a = Error::with_context(ErrorCode::InUse, format!("{} jobs", 3));
        let b = a.clone();
        drop(a);
        assert_eq!(b.context_str(), Some("3 jobs"));
        assert_eq!(b, Error::with_context(ErrorCode::InUse, "3 jobs"));
        assert_ne!(b, Error::new(ErrorCode::InUse));
        let c = b.context("static now").context(String::from("owned again"));
        assert_eq!(c.context_str(), Some("owned again"));
        assert_eq!(Error::new(ErrorCode::Again).context_str(), None);
        assert_eq!(
            Error::with_context(ErrorCode::Again, "").context_str(),
            Some("")
        );
        assert_eq!(floor_char_boundary("aé", 2), 1);
    }

    #[test]
    fn values_match_doca() {
        assert_eq!(ErrorCode::Unknown as i32, 1);
        assert_eq!(ErrorCode::BadState as i32, 18);
        assert_eq!(ErrorCode::InProgress as i32, 26);
        for (i, code) in ErrorCode::ALL.iter().enumerate() {
            assert_eq!(*code as i32, i as i32 + 1);
            assert_eq!(ErrorCode::from_raw(i as i32 + 1), Some(*code));
            assert!(code.name().starts_with("DOCA_ERROR_"));
        }
        assert_eq!(ErrorCode::TooBig as i32, 27);
        assert_eq!(ErrorCode::ALL.len(), 27);
    }

    #[test]
    fn unknown_numbers_are_handled() {
        assert_eq!(ErrorCode::from_raw(0), None);
        assert_eq!(ErrorCode::from_raw(28), None);
        assert_eq!(ErrorCode::from_raw(-5), None);
        assert_eq!(raw_name(999), UNRECOGNIZED_NAME);
        assert_eq!(raw_description(i32::MIN), UNRECOGNIZED_DESCRIPTION);
        assert_eq!(raw_name(0), "DOCA_SUCCESS");
        assert!(Error::from_raw(0).is_none());
        let e = Error::from_raw(1234).unwrap();
        assert_eq!(e.code(), ErrorCode::Unknown);
        assert!(e.to_string().contains("1234"));
        assert_eq!(ErrorCode::try_from(18), Ok(ErrorCode::BadState));
        assert_eq!(ErrorCode::try_from(77), Err(77));
    }

    #[test]
    fn display_has_name_context_and_description() {
        let e = Error::with_context(ErrorCode::BadState, "mmap is not started");
        assert_eq!(
            e.to_string(),
            "DOCA_ERROR_BAD_STATE: mmap is not started (Bad state)"
        );
        assert_eq!(
            Error::new(ErrorCode::InUse).to_string(),
            "DOCA_ERROR_IN_USE: Resource already in use"
        );
    }
}
