/*
 * doca_dma.h: the DMA library, memory copies between buffers.
 */
#ifndef DOCA_DMA_H_
#define DOCA_DMA_H_

#include <inttypes.h>
#include <stdint.h>
#include <doca_buf.h>
#include <doca_compat.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/** DMA job types. */
enum doca_dma_job_types {
	DOCA_DMA_JOB_MEMCPY = DOCA_ACTION_DMA_FIRST + 1,
};

/** Copies src_buff's data (a list: all of it) to the tailroom of dst_buff (a list: element by element). */
struct doca_dma_job_memcpy {
	struct doca_job base;		/**< type DOCA_DMA_JOB_MEMCPY. */
	struct doca_buf *dst_buff;	/**< Destination; its data_len grows. */
	struct doca_buf const *src_buff; /**< Source. */
};

/** The result of a memcpy job. */
struct doca_dma_memcpy_result {
	doca_error_t result;
};

struct doca_dma;

/** Creates a DMA context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dma_create(struct doca_dma **dma);

/** Destroys a DMA context (stopped, with no device attached). */
__DOCA_EXPERIMENTAL
doca_error_t doca_dma_destroy(struct doca_dma *dma);

/** DOCA_SUCCESS when the device runs this job type. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dma_job_get_supported(struct doca_devinfo *devinfo, enum doca_dma_job_types job_type);

/** The context of a DMA instance. */
__DOCA_EXPERIMENTAL
struct doca_ctx *doca_dma_as_ctx(struct doca_dma *dma);

/** The most elements of a buffer list. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dma_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, uint32_t *max_list_num_elem);

/** The largest buffer a job may use. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dma_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *buf_size);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DMA_H_ */
