/*
 * doca_erasure_coding.h: the erasure coding library (Reed-Solomon over GF(2^8)).
 *
 * A coding matrix for data_block_count data blocks and rdnc_block_count redundancy
 * blocks makes create jobs (data in, redundancy out); recover matrices rebuild missing
 * blocks from any data_block_count survivors; update matrices refresh redundancy after
 * some data blocks changed. Blocks sit back to back in a source buffer or list; the
 * block size is the source data length divided by the number of input blocks, a
 * multiple of 64 bytes.
 */
#ifndef DOCA_ERASURE_CODING_H_
#define DOCA_ERASURE_CODING_H_

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <doca_buf.h>
#include <doca_compat.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_matrix;
struct doca_ec;

/** EC job types. */
enum doca_ec_job_types {
	DOCA_EC_JOB_GALOIS_MUL = DOCA_ACTION_EC_FIRST + 1,
	DOCA_EC_JOB_CREATE,
	DOCA_EC_JOB_UPDATE,
	DOCA_EC_JOB_RECOVER,
};

/** Multiplies the source blocks by a matrix, output blocks appended to dst_buff. */
struct doca_ec_job {
	struct doca_job base;
	struct doca_matrix *coding_matrix;
	struct doca_buf const *src_buff;
	struct doca_buf *dst_buff;
};

/** Data blocks in, redundancy blocks appended to dst_rdnc_buff. */
struct doca_ec_job_create {
	struct doca_job base;
	struct doca_matrix *create_matrix;
	struct doca_buf const *src_original_data_buff;
	struct doca_buf *dst_rdnc_buff;
};

/** old1, new1, ..., oldN, newN, then the redundancy blocks in; new redundancy out. */
struct doca_ec_job_update {
	struct doca_job base;
	struct doca_matrix *update_matrix;
	struct doca_buf const *src_data_rdnc_buff;
	struct doca_buf *dst_updated_rdnc_buff;
};

/** The first data_block_count surviving blocks in index order in; the missing blocks out, in the recover matrix's order. */
struct doca_ec_job_recover {
	struct doca_job base;
	struct doca_matrix *recover_matrix;
	struct doca_buf const *src_remaining_data_buff;
	struct doca_buf *dst_recovered_data_buff;
};

/** Creates an EC context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ec_create(struct doca_ec **ec);

/** Destroys an EC context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ec_destroy(struct doca_ec *ec);

/** The context of an EC instance. */
__DOCA_EXPERIMENTAL
struct doca_ctx *doca_ec_as_ctx(struct doca_ec *ctx);

/** DOCA_SUCCESS when the device runs this job type. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ec_job_get_supported(struct doca_devinfo *devinfo, enum doca_ec_job_types job_type);

/** The largest buffer a job of this type may use. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ec_get_max_buffer_size(const struct doca_devinfo *devinfo, enum doca_ec_job_types job_type,
					 uint32_t *max_buffer_size);

/** The most elements of a source list. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ec_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, uint32_t *max_list_num_elem);

/** Coding matrix kinds. */
enum doca_ec_matrix_types {
	DOCA_CODING_MATRIX_CAUCHY = 1,
	DOCA_CODING_MATRIX_VANDERMONDE = 2,
};

/** Creates a coding matrix. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create(struct doca_ec *ctx, enum doca_ec_matrix_types type, size_t data_block_count,
				   size_t rdnc_block_count, struct doca_matrix **matrix);

/** Creates a coding matrix from coefficients: data[j * rdnc_block_count + r] multiplies data block j into redundancy block r. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_from_raw(struct doca_ec *ctx, uint8_t *data, size_t data_block_count,
				     size_t rdnc_block_count, struct doca_matrix **matrix);

/** Creates an update matrix for the changed data blocks update_indices. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ec_update_matrix_create(const struct doca_matrix *coding_matrix, struct doca_ec *ctx,
					  uint32_t update_indices[], size_t n_updates, struct doca_matrix **matrix);

/** Creates a recover matrix for the missing blocks missing_indices (data 0.., redundancy data_block_count..). */
__DOCA_EXPERIMENTAL
doca_error_t doca_ec_recover_matrix_create(const struct doca_matrix *coding_matrix, struct doca_ec *ctx,
					   uint32_t missing_indices[], size_t n_missing, struct doca_matrix **matrix);

/** Destroys a matrix (jobs in flight keep what they need). */
__DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_destroy(struct doca_matrix *matrix);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ERASURE_CODING_H_ */
