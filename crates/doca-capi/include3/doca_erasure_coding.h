/*
 * doca_erasure_coding.h: erasure coding (task generation): an EC instance on a device,
 * its coding matrices, and four tasks: galois_mul, create (redundancy blocks from data
 * blocks), update (redundancy blocks after some data blocks changed) and recover (lost
 * data blocks from the surviving ones). A task's buffers hold its blocks back to back.
 */
#ifndef DOCA_ERASURE_CODING_H_
#define DOCA_ERASURE_CODING_H_

#include <inttypes.h>

#include <doca_buf.h>
#include <doca_compat.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_pe.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ec;
struct doca_ec_matrix;

/** Coding matrix kinds. */
enum doca_ec_matrix_type {
	DOCA_EC_MATRIX_TYPE_CAUCHY = 1,
	DOCA_EC_MATRIX_TYPE_VANDERMONDE = 2,
};

/** Creates an idle EC instance on a device that has the EC capability. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_create(struct doca_dev *dev, struct doca_ec **ec);

/** Destroys an idle instance whose tasks are all freed. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_destroy(struct doca_ec *ec);

/** The instance's context. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_ec_as_ctx(struct doca_ec *ec);

/** The largest block. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_cap_get_max_block_size(const struct doca_devinfo *devinfo, uint64_t *max_block_size);

/** The most buffers in a list. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo, uint32_t *max_buf_list_len);

/** A coding matrix of data_block_count data and rdnc_block_count redundancy blocks. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create(struct doca_ec *ec, enum doca_ec_matrix_type type, size_t data_block_count,
				   size_t rdnc_block_count, struct doca_ec_matrix **matrix);

/** A coding matrix from data_block_count x rdnc_block_count raw coefficients. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create_from_raw(struct doca_ec *ec, uint8_t *data, size_t data_block_count,
					    size_t rdnc_block_count, struct doca_ec_matrix **matrix);

/** The matrix of an update of the data blocks at update_indices (ascending). */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create_update(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix,
					  uint32_t update_indices[], size_t n_updates,
					  struct doca_ec_matrix **matrix);

/** The matrix that recovers the data blocks at missing_indices (ascending). */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_create_recover(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix,
					   uint32_t missing_indices[], size_t n_missing,
					   struct doca_ec_matrix **matrix);

/** Destroys a matrix (tasks in flight keep what they use). */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_matrix_destroy(struct doca_ec_matrix *matrix);

/* ---- galois_mul ---- */

struct doca_ec_task_galois_mul;

/** The callback of a completed (or failed) galois_mul task. */
typedef void (*doca_ec_task_galois_mul_completion_cb_t)(struct doca_ec_task_galois_mul *task, union doca_data task_user_data,
				union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs galois_mul tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_cap_task_galois_mul_is_supported(const struct doca_devinfo *devinfo);

/** Sets the galois_mul callbacks and pool size (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_task_galois_mul_set_conf(struct doca_ec *ec, doca_ec_task_galois_mul_completion_cb_t successful_task_completion_cb,
				doca_ec_task_galois_mul_completion_cb_t error_task_completion_cb, uint32_t num_tasks);

/** Takes a galois_mul task from the pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_task_galois_mul_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix,
				const struct doca_buf *src_buf, struct doca_buf *dst_buf,
				union doca_data user_data, struct doca_ec_task_galois_mul **task);

/** The generic task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_ec_task_galois_mul_as_task(struct doca_ec_task_galois_mul *task);

/** Sets the matrix. */
DOCA_EXPERIMENTAL
void doca_ec_task_galois_mul_set_coding_matrix(struct doca_ec_task_galois_mul *task, const struct doca_ec_matrix *coding_matrix);

/** The matrix. */
DOCA_EXPERIMENTAL
const struct doca_ec_matrix *doca_ec_task_galois_mul_get_coding_matrix(const struct doca_ec_task_galois_mul *task);

/** Sets the source blocks. */
DOCA_EXPERIMENTAL
void doca_ec_task_galois_mul_set_src_buf(struct doca_ec_task_galois_mul *task, const struct doca_buf *src_buf);

/** The source blocks. */
DOCA_EXPERIMENTAL
const struct doca_buf *doca_ec_task_galois_mul_get_src_buf(const struct doca_ec_task_galois_mul *task);

/** Sets the destination of the output blocks. */
DOCA_EXPERIMENTAL
void doca_ec_task_galois_mul_set_dst_buf(struct doca_ec_task_galois_mul *task, struct doca_buf *dst_buf);

/** The destination. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_ec_task_galois_mul_get_dst_buf(const struct doca_ec_task_galois_mul *task);

/* ---- create ---- */

struct doca_ec_task_create;

/** The callback of a completed (or failed) create task. */
typedef void (*doca_ec_task_create_completion_cb_t)(struct doca_ec_task_create *task, union doca_data task_user_data,
				union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs create tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_cap_task_create_is_supported(const struct doca_devinfo *devinfo);

/** Sets the create callbacks and pool size (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_task_create_set_conf(struct doca_ec *ec, doca_ec_task_create_completion_cb_t successful_task_completion_cb,
				doca_ec_task_create_completion_cb_t error_task_completion_cb, uint32_t num_tasks);

/** Takes a create task from the pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_task_create_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *coding_matrix,
				const struct doca_buf *original_data_blocks, struct doca_buf *rdnc_blocks,
				union doca_data user_data, struct doca_ec_task_create **task);

/** The generic task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_ec_task_create_as_task(struct doca_ec_task_create *task);

/** Sets the matrix. */
DOCA_EXPERIMENTAL
void doca_ec_task_create_set_coding_matrix(struct doca_ec_task_create *task, const struct doca_ec_matrix *coding_matrix);

/** The matrix. */
DOCA_EXPERIMENTAL
const struct doca_ec_matrix *doca_ec_task_create_get_coding_matrix(const struct doca_ec_task_create *task);

/** Sets the source blocks. */
DOCA_EXPERIMENTAL
void doca_ec_task_create_set_original_data_blocks(struct doca_ec_task_create *task, const struct doca_buf *original_data_blocks);

/** The source blocks. */
DOCA_EXPERIMENTAL
const struct doca_buf *doca_ec_task_create_get_original_data_blocks(const struct doca_ec_task_create *task);

/** Sets the destination of the output blocks. */
DOCA_EXPERIMENTAL
void doca_ec_task_create_set_rdnc_blocks(struct doca_ec_task_create *task, struct doca_buf *rdnc_blocks);

/** The destination. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_ec_task_create_get_rdnc_blocks(const struct doca_ec_task_create *task);

/* ---- update ---- */

struct doca_ec_task_update;

/** The callback of a completed (or failed) update task. */
typedef void (*doca_ec_task_update_completion_cb_t)(struct doca_ec_task_update *task, union doca_data task_user_data,
				union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs update tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_cap_task_update_is_supported(const struct doca_devinfo *devinfo);

/** Sets the update callbacks and pool size (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_task_update_set_conf(struct doca_ec *ec, doca_ec_task_update_completion_cb_t successful_task_completion_cb,
				doca_ec_task_update_completion_cb_t error_task_completion_cb, uint32_t num_tasks);

/** Takes a update task from the pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_task_update_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *update_matrix,
				const struct doca_buf *original_updated_and_rdnc_blocks, struct doca_buf *updated_rdnc_blocks,
				union doca_data user_data, struct doca_ec_task_update **task);

/** The generic task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_ec_task_update_as_task(struct doca_ec_task_update *task);

/** Sets the matrix. */
DOCA_EXPERIMENTAL
void doca_ec_task_update_set_update_matrix(struct doca_ec_task_update *task, const struct doca_ec_matrix *update_matrix);

/** The matrix. */
DOCA_EXPERIMENTAL
const struct doca_ec_matrix *doca_ec_task_update_get_update_matrix(const struct doca_ec_task_update *task);

/** Sets the source blocks. */
DOCA_EXPERIMENTAL
void doca_ec_task_update_set_original_updated_and_rdnc_blocks(struct doca_ec_task_update *task, const struct doca_buf *original_updated_and_rdnc_blocks);

/** The source blocks. */
DOCA_EXPERIMENTAL
const struct doca_buf *doca_ec_task_update_get_original_updated_and_rdnc_blocks(const struct doca_ec_task_update *task);

/** Sets the destination of the output blocks. */
DOCA_EXPERIMENTAL
void doca_ec_task_update_set_updated_rdnc_blocks(struct doca_ec_task_update *task, struct doca_buf *updated_rdnc_blocks);

/** The destination. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_ec_task_update_get_updated_rdnc_blocks(const struct doca_ec_task_update *task);

/* ---- recover ---- */

struct doca_ec_task_recover;

/** The callback of a completed (or failed) recover task. */
typedef void (*doca_ec_task_recover_completion_cb_t)(struct doca_ec_task_recover *task, union doca_data task_user_data,
				union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs recover tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_cap_task_recover_is_supported(const struct doca_devinfo *devinfo);

/** Sets the recover callbacks and pool size (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_task_recover_set_conf(struct doca_ec *ec, doca_ec_task_recover_completion_cb_t successful_task_completion_cb,
				doca_ec_task_recover_completion_cb_t error_task_completion_cb, uint32_t num_tasks);

/** Takes a recover task from the pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_ec_task_recover_allocate_init(struct doca_ec *ec, const struct doca_ec_matrix *recover_matrix,
				const struct doca_buf *available_blocks, struct doca_buf *recovered_data_blocks,
				union doca_data user_data, struct doca_ec_task_recover **task);

/** The generic task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_ec_task_recover_as_task(struct doca_ec_task_recover *task);

/** Sets the matrix. */
DOCA_EXPERIMENTAL
void doca_ec_task_recover_set_recover_matrix(struct doca_ec_task_recover *task, const struct doca_ec_matrix *recover_matrix);

/** The matrix. */
DOCA_EXPERIMENTAL
const struct doca_ec_matrix *doca_ec_task_recover_get_recover_matrix(const struct doca_ec_task_recover *task);

/** Sets the source blocks. */
DOCA_EXPERIMENTAL
void doca_ec_task_recover_set_available_blocks(struct doca_ec_task_recover *task, const struct doca_buf *available_blocks);

/** The source blocks. */
DOCA_EXPERIMENTAL
const struct doca_buf *doca_ec_task_recover_get_available_blocks(const struct doca_ec_task_recover *task);

/** Sets the destination of the output blocks. */
DOCA_EXPERIMENTAL
void doca_ec_task_recover_set_recovered_data_blocks(struct doca_ec_task_recover *task, struct doca_buf *recovered_data_blocks);

/** The destination. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_ec_task_recover_get_recovered_data_blocks(const struct doca_ec_task_recover *task);

/** DOCA 2.6's name of doca_ec_task_recover_get_recovered_data_blocks. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_ec_task_recover_get_recovered_data(const struct doca_ec_task_recover *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ERASURE_CODING_H_ */
