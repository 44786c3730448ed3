/*
 * doca_sha.h: the SHA library, SHA-1/256/512 digests in one job or across partial jobs.
 */
#ifndef DOCA_SHA_H_
#define DOCA_SHA_H_

#include <stdint.h>
#include <doca_buf.h>
#include <doca_compat.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Digest sizes. */
#define DOCA_SHA1_BYTE_COUNT 20
#define DOCA_SHA256_BYTE_COUNT 32
#define DOCA_SHA512_BYTE_COUNT 64

/** SHA job types. */
enum doca_sha_job_type {
	DOCA_SHA_JOB_SHA1 = DOCA_ACTION_SHA_FIRST + 1,
	DOCA_SHA_JOB_SHA256,
	DOCA_SHA_JOB_SHA512,
	DOCA_SHA_JOB_SHA1_PARTIAL,
	DOCA_SHA_JOB_SHA256_PARTIAL,
	DOCA_SHA_JOB_SHA512_PARTIAL,
};

/** SHA job flags. */
enum doca_sha_job_flags {
	DOCA_SHA_JOB_FLAGS_NONE = 0,
	DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL, /**< The last segment of a partial session. */
};

/** Hashes req_buf's data and appends the digest to resp_buf. */
struct doca_sha_job {
	struct doca_job base;	  /**< type: one of enum doca_sha_job_type. */
	struct doca_buf *req_buf;  /**< The data (a list: all of it). */
	struct doca_buf *resp_buf; /**< Gets the digest at its tail. */
	uint64_t flags;		  /**< enum doca_sha_job_flags. */
};

struct doca_sha_partial_session;

/** A segment of a partial session; the FINAL one appends the digest of all segments. */
struct doca_sha_partial_job {
	struct doca_sha_job sha_job;		  /**< Non-final segments: a multiple of the block size. */
	struct doca_sha_partial_session *session; /**< The session. */
};

struct doca_sha;
struct doca_workq;

/** Creates a SHA context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_create(struct doca_sha **ctx);

/** Destroys a SHA context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_destroy(struct doca_sha *ctx);

/** DOCA_SUCCESS when the device runs this job type. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_job_get_supported(const struct doca_devinfo *devinfo, enum doca_sha_job_type job_type);

/** The most elements of a source list. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, uint32_t *max_list_num_elem);

/** The largest source. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_get_max_src_buffer_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size);

/** The tailroom a response buffer needs for this job type. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_get_min_dst_buffer_size(const struct doca_devinfo *devinfo, enum doca_sha_job_type job_type,
					      uint32_t *min_buffer_size);

/** DOCA_SUCCESS when the device hashes (in software here, with the CPU's SHA instructions where present). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_get_hardware_supported(const struct doca_devinfo *devinfo);

/** The context of a SHA instance. */
__DOCA_EXPERIMENTAL
struct doca_ctx *doca_sha_as_ctx(struct doca_sha *ctx);

/** Creates a partial session whose jobs go to workq. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_partial_session_create(struct doca_sha *ctx, struct doca_workq *workq,
					     struct doca_sha_partial_session **session);

/** Destroys a session (DOCA_ERROR_IN_USE while one of its jobs is in flight). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_partial_session_destroy(struct doca_sha *ctx, struct doca_workq *workq,
					      struct doca_sha_partial_session *session);

/** Makes to_session continue from from_session's state. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sha_partial_session_copy(struct doca_sha *ctx, struct doca_workq *workq,
					   const struct doca_sha_partial_session *from_session,
					   struct doca_sha_partial_session *to_session);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SHA_H_ */
