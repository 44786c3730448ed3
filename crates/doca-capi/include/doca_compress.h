/*
 * doca_compress.h: the compress library, raw deflate compress and decompress jobs on a
 * work queue, with the checksums of the uncompressed data.
 */
#ifndef DOCA_COMPRESS_H_
#define DOCA_COMPRESS_H_

#include <inttypes.h>
#include <doca_buf.h>
#include <doca_compat.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Compress job types. */
enum doca_compress_job_types {
	DOCA_COMPRESS_DEFLATE_JOB = DOCA_ACTION_COMPRESS_FIRST + 1, /**< Raw deflate of the source. */
	DOCA_DECOMPRESS_DEFLATE_JOB,				     /**< Raw deflate data back to its bytes. */
};

/** A compress or decompress job: the result is appended to dst_buff's data. */
struct doca_compress_deflate_job {
	struct doca_job base;		 /**< type: one of enum doca_compress_job_types. */
	struct doca_buf *dst_buff;	 /**< Gets the result at its tail. */
	struct doca_buf const *src_buff; /**< The data. */
	uint64_t *output_chksum;	 /**< NULL, or where the checksums of the uncompressed data go once
					  *   the job succeeded: CRC-32 in the low 32 bits, Adler-32 in the high. */
};

struct doca_compress;

/** Creates a compress context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_compress_create(struct doca_compress **compress);

/** Destroys a stopped compress context with no work queue attached. */
__DOCA_EXPERIMENTAL
doca_error_t doca_compress_destroy(struct doca_compress *compress);

/** DOCA_SUCCESS when the device runs jobs of this type. */
__DOCA_EXPERIMENTAL
doca_error_t doca_compress_job_get_supported(struct doca_devinfo *devinfo, enum doca_compress_job_types job_type);

/** The largest source or destination of a job of this type, in bytes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_compress_get_max_buf_size(const struct doca_devinfo *devinfo, enum doca_compress_job_types job_type,
					    uint64_t *max_buf_size);

/** The longest buffer list a job's source or destination may be (1: single buffers only). */
__DOCA_EXPERIMENTAL
doca_error_t doca_compress_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, uint32_t *max_list_num_elem);

/** The context of a compress instance. */
__DOCA_EXPERIMENTAL
struct doca_ctx *doca_compress_as_ctx(struct doca_compress *compress);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DOCA_COMPRESS_H_ */
