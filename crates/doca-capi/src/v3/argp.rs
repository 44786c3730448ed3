//! The 3.x face of `doca_argp`: its parser also takes `--sdk-log-level`.

use crate::common::{doca_error_t, ffi, out_ptr, put};
use std::ffi::{c_char, c_int, c_void};

/// `doca_argp_init` (3.x): as 2.2's, with `--sdk-log-level` among the standard flags.
#[unsafe(export_name = "doca3__argp_init")]
pub unsafe extern "C" fn doca_argp_init(
    program_name: *const c_char,
    program_config: *mut c_void,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::common::argp::init(program_name, program_config, true) }
}

/// `doca_argp_get_sdk_log_level`: the SDK log level `--sdk-log-level` set, or the SDK's
/// global level when the program was given none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_get_sdk_log_level(log_level: *mut c_int) -> doca_error_t {
    ffi(|| {
        let out = out_ptr(log_level, "log_level")?;
        let lvl = crate::common::argp::sdk_log_level()?;
        // SAFETY: output checked.
        unsafe { put(out, lvl) };
        Ok(())
    })
}
