//! Raw bindings to UCX's UCP API (`ucp/api/ucp.h`), as bindgen writes them
//! (`scripts/gen-ucx-bindings.sh` regenerates `bindings.rs`), plus what UCX defines as
//! inline functions and macros: `ucp_init`, `UCS_PTR_IS_ERR`, `UCS_PTR_STATUS`.
//!
//! Every call is `unsafe` and follows UCX's own rules (see `ucp.h`); the safe layer is
//! the `doca-rdma` crate's transport.

#![allow(
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    missing_docs,
    missing_debug_implementations,
    clippy::all
)]

include!("bindings.rs");

/// `ucp_init`: `ucp_init_version` with the API version these bindings were made from.
///
/// # Safety
///
/// As `ucp_init_version`: `params` points to valid parameters, `config` is null or a
/// configuration read by `ucp_config_read`, `context` is valid for a write.
pub unsafe fn ucp_init(
    params: *const ucp_params_t,
    config: *const ucp_config_t,
    context: *mut ucp_context_h,
) -> ucs_status_t {
    // SAFETY: the caller's promises are those of ucp_init_version.
    unsafe { ucp_init_version(UCP_API_MAJOR, UCP_API_MINOR, params, config, context) }
}

/// `UCS_PTR_IS_ERR`: whether a status pointer holds an error code.
pub fn ucs_ptr_is_err(p: ucs_status_ptr_t) -> bool {
    (p as usize) >= (UCS_ERR_LAST as isize) as usize
}

/// `UCS_PTR_IS_PTR`: whether a status pointer is a request (neither done nor an error).
pub fn ucs_ptr_is_ptr(p: ucs_status_ptr_t) -> bool {
    (p as usize).wrapping_sub(1) < ((UCS_ERR_LAST as isize) as usize).wrapping_sub(1)
}

/// `UCS_PTR_STATUS`: the status a status pointer holds (`UCS_OK` for null).
pub fn ucs_ptr_status(p: ucs_status_ptr_t) -> ucs_status_t {
    p as isize as ucs_status_t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_pointers_decode_as_ucs_does() {
        let null = std::ptr::null_mut();
        assert!(!ucs_ptr_is_err(null) && !ucs_ptr_is_ptr(null));
        assert_eq!(ucs_ptr_status(null), UCS_OK);
        let err = UCS_ERR_NO_MEMORY as isize as ucs_status_ptr_t;
        assert!(ucs_ptr_is_err(err) && !ucs_ptr_is_ptr(err));
        assert_eq!(ucs_ptr_status(err), UCS_ERR_NO_MEMORY);
        let req = 0x7f00_0000_1000usize as ucs_status_ptr_t;
        assert!(ucs_ptr_is_ptr(req) && !ucs_ptr_is_err(req));
    }

    #[test]
    fn a_context_and_a_worker_come_up_and_go() {
        // SAFETY: zeroed params with only the fields named in field_mask set; the
        // handles are released in reverse order.
        unsafe {
            let mut params: ucp_params_t = std::mem::zeroed();
            params.field_mask = UCP_PARAM_FIELD_FEATURES as u64;
            params.features = UCP_FEATURE_AM as u64;
            let mut ctx = std::ptr::null_mut();
            assert_eq!(ucp_init(&params, std::ptr::null(), &mut ctx), UCS_OK);
            let mut wp: ucp_worker_params_t = std::mem::zeroed();
            wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE as u64;
            wp.thread_mode = UCS_THREAD_MODE_SINGLE;
            let mut w = std::ptr::null_mut();
            assert_eq!(ucp_worker_create(ctx, &wp, &mut w), UCS_OK);
            ucp_worker_destroy(w);
            ucp_cleanup(ctx);
        }
    }
}
