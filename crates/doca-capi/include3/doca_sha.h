/*
 * doca_sha.h: SHA digests (task generation): a SHA instance on a device, its hash task
 * (one buffer, one digest) and its partial hash task (one task submitted once per
 * segment; the segment marked final completes the digest).
 */
#ifndef DOCA_SHA_H_
#define DOCA_SHA_H_

#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>
/* DOCA 2.5-2.8's doca_sha.h brought these in; programs of that time rely on it. */
#include <doca_buf.h>
#include <doca_ctx.h>
#include <doca_dev.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_ctx;
struct doca_dev;
struct doca_devinfo;
struct doca_task;
struct doca_sha;
struct doca_sha_task_hash;
struct doca_sha_task_partial_hash;

/** The algorithms. */
enum doca_sha_algorithm {
	DOCA_SHA_ALGORITHM_SHA1,
	DOCA_SHA_ALGORITHM_SHA256,
	DOCA_SHA_ALGORITHM_SHA512,
};

/** The callback of a completed (or failed) hash task. */
typedef void (*doca_sha_task_hash_completion_cb_t)(struct doca_sha_task_hash *task, union doca_data task_user_data,
						   union doca_data ctx_user_data);

/** The callback of a completed (or failed) partial hash segment. */
typedef void (*doca_sha_task_partial_hash_completion_cb_t)(struct doca_sha_task_partial_hash *task,
							   union doca_data task_user_data,
							   union doca_data ctx_user_data);

/** Creates an idle SHA instance on a device that has the SHA capability. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_create(struct doca_dev *dev, struct doca_sha **sha);

/** Destroys an idle instance whose tasks are all freed. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_destroy(struct doca_sha *sha);

/** The instance's context. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_sha_as_ctx(struct doca_sha *sha);

/** DOCA_SUCCESS when the device runs hash tasks of this algorithm. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_cap_task_hash_get_supported(struct doca_devinfo const *devinfo,
						  enum doca_sha_algorithm algorithm);

/** DOCA_SUCCESS when the device runs partial hash tasks of this algorithm. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_cap_task_partial_hash_get_supported(struct doca_devinfo const *devinfo,
							  enum doca_sha_algorithm algorithm);

/** The most buffers in a source list. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_cap_get_max_list_buf_num_elem(struct doca_devinfo const *devinfo, uint32_t *max_list_num_elem);

/** The most bytes one task hashes. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_cap_get_max_src_buf_size(struct doca_devinfo const *devinfo, uint64_t *max_buf_size);

/** The free space a destination needs (the digest length). */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_cap_get_min_dst_buf_size(struct doca_devinfo const *devinfo,
					       enum doca_sha_algorithm algorithm, uint32_t *min_buf_size);

/** Every non-final partial segment is a multiple of this many bytes. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_cap_get_partial_hash_block_size(struct doca_devinfo const *devinfo,
						      enum doca_sha_algorithm algorithm,
						      uint32_t *partial_block_size);

/** Sets the hash callbacks and a pool of 2^log_num_tasks tasks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_hash_set_conf(struct doca_sha *sha, doca_sha_task_hash_completion_cb_t task_completion_cb,
					 doca_sha_task_hash_completion_cb_t task_error_cb, uint8_t log_num_tasks);

/** Takes a hash task from the pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_hash_alloc_init(struct doca_sha *sha, enum doca_sha_algorithm algorithm,
					   struct doca_buf const *src_buf, struct doca_buf *dst_buf,
					   union doca_data user_data, struct doca_sha_task_hash **task);

/** Sets the source. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_hash_set_src(struct doca_sha_task_hash *task, struct doca_buf const *src_buf);

/** The source. */
DOCA_EXPERIMENTAL
struct doca_buf const *doca_sha_task_hash_get_src(struct doca_sha_task_hash const *task);

/** Sets the destination. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_hash_set_dst(struct doca_sha_task_hash *task, struct doca_buf *dst_buf);

/** The destination. */
DOCA_EXPERIMENTAL
struct doca_buf const *doca_sha_task_hash_get_dst(struct doca_sha_task_hash const *task);

/** Sets the algorithm. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_hash_set_algorithm(struct doca_sha_task_hash *task, enum doca_sha_algorithm algorithm);

/** The algorithm. */
DOCA_EXPERIMENTAL
enum doca_sha_algorithm doca_sha_task_hash_get_algorithm(struct doca_sha_task_hash const *task);

/** The generic task of a hash task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_sha_task_hash_as_task(struct doca_sha_task_hash *task);

/** Sets the partial hash callbacks and a pool of 2^log_num_tasks tasks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_partial_hash_set_conf(struct doca_sha *sha,
						 doca_sha_task_partial_hash_completion_cb_t task_completion_cb,
						 doca_sha_task_partial_hash_completion_cb_t task_error_cb,
						 uint8_t log_num_tasks);

/** Takes a partial hash task from the pool, with nothing hashed yet. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_partial_hash_alloc_init(struct doca_sha *sha, enum doca_sha_algorithm algorithm,
						   struct doca_buf const *src_buf, struct doca_buf *dst_buf,
						   union doca_data user_data,
						   struct doca_sha_task_partial_hash **task);

/** Forgets the segments hashed so far. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_partial_hash_reset(struct doca_sha_task_partial_hash *task);

/** Sets the next segment. */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_partial_hash_set_src(struct doca_sha_task_partial_hash *task,
						struct doca_buf const *src_buf);

/** The current segment. */
DOCA_EXPERIMENTAL
struct doca_buf const *doca_sha_task_partial_hash_get_src(struct doca_sha_task_partial_hash const *task);

/** Sets the destination (before the first segment, or after a reset). */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_partial_hash_set_dst(struct doca_sha_task_partial_hash *task, struct doca_buf *dst_buf);

/** The destination. */
DOCA_EXPERIMENTAL
struct doca_buf const *doca_sha_task_partial_hash_get_dst(struct doca_sha_task_partial_hash const *task);

/** Sets the algorithm (before the first segment, or after a reset). */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_partial_hash_set_algorithm(struct doca_sha_task_partial_hash *task,
						      enum doca_sha_algorithm algorithm);

/** The algorithm. */
DOCA_EXPERIMENTAL
enum doca_sha_algorithm doca_sha_task_partial_hash_get_algorithm(struct doca_sha_task_partial_hash const *task);

/** Marks the next segment as the last one (never the first segment). */
DOCA_EXPERIMENTAL
doca_error_t doca_sha_task_partial_hash_set_is_final_buf(struct doca_sha_task_partial_hash *task);

/** 1 when the task is marked final. */
DOCA_EXPERIMENTAL
uint8_t doca_sha_task_partial_hash_get_is_final(struct doca_sha_task_partial_hash const *task);

/** 1 when the destination holds the digest of every segment. */
DOCA_EXPERIMENTAL
uint8_t doca_sha_task_partial_hash_get_has_result(struct doca_sha_task_partial_hash const *task);

/** The generic task of a partial hash task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_sha_task_partial_hash_as_task(struct doca_sha_task_partial_hash *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SHA_H_ */
