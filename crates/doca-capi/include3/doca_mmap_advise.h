/*
 * doca_mmap_advise.h: a context whose task invalidates the CPU's cache over a buffer,
 * so that the CPU reads what a device wrote there.
 */
#ifndef DOCA_MMAP_ADVISE_H_
#define DOCA_MMAP_ADVISE_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;
struct doca_dev;
struct doca_devinfo;
struct doca_mmap_advise;
struct doca_buf;
struct doca_task;
struct doca_mmap_advise_task_invalidate_cache;

/** The callback of a completed (or failed) cache invalidation. */
typedef void (*doca_mmap_advise_task_invalidate_cache_completion_cb_t)(
	struct doca_mmap_advise_task_invalidate_cache *task, union doca_data task_user_data,
	union doca_data ctx_user_data);

/** Creates an idle mmap advise context on a device. */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_create(struct doca_dev *dev, struct doca_mmap_advise **mmap_advise);

/** Destroys an idle instance whose tasks are all freed. */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_destroy(struct doca_mmap_advise *mmap_advise);

/** The instance's context. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_mmap_advise_as_ctx(struct doca_mmap_advise *mmap_advise);

/** DOCA_SUCCESS when the device runs cache invalidation tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_cap_task_cache_invalidate_is_supported(const struct doca_devinfo *devinfo);

/** The largest buffer one task covers. */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_task_cache_invalidate_get_max_buf_size(const struct doca_devinfo *devinfo,
								     uint64_t *buf_size);

/** Sets the callbacks and pool size (while idle; DOCA_ERROR_NOT_PERMITTED otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_task_invalidate_cache_set_conf(
	struct doca_mmap_advise *mmap_advise, doca_mmap_advise_task_invalidate_cache_completion_cb_t completion_cb,
	doca_mmap_advise_task_invalidate_cache_completion_cb_t error_cb, uint32_t num_tasks);

/** Takes a cache invalidation task over buf from the pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_advise_task_invalidate_cache_alloc_init(struct doca_mmap_advise *mmap_advise,
							       struct doca_buf *buf, union doca_data user_data,
							       struct doca_mmap_advise_task_invalidate_cache **task);

/** The generic task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_mmap_advise_task_invalidate_cache_as_doca_task(
	struct doca_mmap_advise_task_invalidate_cache *task);

/** Sets the buffer. */
DOCA_EXPERIMENTAL
void doca_mmap_advise_task_invalidate_cache_set_buf(struct doca_mmap_advise_task_invalidate_cache *task,
						    struct doca_buf *buf);

/** The buffer. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_mmap_advise_task_invalidate_cache_get_buf(
	const struct doca_mmap_advise_task_invalidate_cache *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_MMAP_ADVISE_H_ */
