/*
 * doca_dma.h: copies between buffers (task generation): a DMA instance on a device, and
 * its memcpy task. The source's data is appended to the destination's free space.
 */
#ifndef DOCA_DMA_H_
#define DOCA_DMA_H_

#include <inttypes.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>
/* DOCA 2.5-2.8's doca_dma.h brought these in; programs of that time rely on it. */
#include <doca_buf.h>
#include <doca_ctx.h>
#include <doca_pe.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_ctx;
struct doca_dev;
struct doca_devinfo;
struct doca_task;
struct doca_dma;
struct doca_dma_task_memcpy;

/** The callback of a completed (or failed) memcpy task. */
typedef void (*doca_dma_task_memcpy_completion_cb_t)(struct doca_dma_task_memcpy *task,
						     union doca_data task_user_data,
						     union doca_data ctx_user_data);

/** Creates an idle DMA instance on a device that has the DMA capability. */
DOCA_STABLE
doca_error_t doca_dma_create(struct doca_dev *dev, struct doca_dma **dma);

/** Destroys an idle instance whose tasks are all freed. */
DOCA_STABLE
doca_error_t doca_dma_destroy(struct doca_dma *dma);

/** The instance's context. */
DOCA_STABLE
struct doca_ctx *doca_dma_as_ctx(struct doca_dma *dma);

/** The most tasks the instance's pool may hold. */
DOCA_STABLE
doca_error_t doca_dma_cap_get_max_num_tasks(struct doca_dma *dma, uint32_t *max_num_tasks);

/** DOCA_SUCCESS when the device runs memcpy tasks, else DOCA_ERROR_NOT_SUPPORTED. */
DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_is_supported(const struct doca_devinfo *devinfo);

/** The most buffers in a source or destination list. */
DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							   uint32_t *max_buf_list_len);

/** The largest copy. */
DOCA_STABLE
doca_error_t doca_dma_cap_task_memcpy_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *max_buf_size);

/** Sets the memcpy callbacks and pool size (while idle). */
DOCA_STABLE
doca_error_t doca_dma_task_memcpy_set_conf(struct doca_dma *dma,
					   doca_dma_task_memcpy_completion_cb_t task_completion_cb,
					   doca_dma_task_memcpy_completion_cb_t task_error_cb,
					   uint32_t num_memcpy_tasks);

/** Takes a memcpy task from the pool (DOCA_ERROR_NO_MEMORY when every task is taken). */
DOCA_STABLE
doca_error_t doca_dma_task_memcpy_alloc_init(struct doca_dma *dma, const struct doca_buf *src,
					     struct doca_buf *dst, union doca_data user_data,
					     struct doca_dma_task_memcpy **task);

/** The generic task of a memcpy task. */
DOCA_STABLE
struct doca_task *doca_dma_task_memcpy_as_task(struct doca_dma_task_memcpy *task);

/** Sets the source. */
DOCA_STABLE
void doca_dma_task_memcpy_set_src(struct doca_dma_task_memcpy *task, const struct doca_buf *src);

/** The source. */
DOCA_STABLE
const struct doca_buf *doca_dma_task_memcpy_get_src(const struct doca_dma_task_memcpy *task);

/** Sets the destination. */
DOCA_STABLE
void doca_dma_task_memcpy_set_dst(struct doca_dma_task_memcpy *task, struct doca_buf *dst);

/** The destination. */
DOCA_STABLE
struct doca_buf *doca_dma_task_memcpy_get_dst(const struct doca_dma_task_memcpy *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DMA_H_ */
