/*
 * doca_dma.h (DOCA 1.x): the DMA library, memory copies between buffers.
 */
#ifndef DOCA_DMA_H_
#define DOCA_DMA_H_

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

/** DMA job types. */
enum doca_dma_job_types {
	DOCA_DMA_JOB_MEMCPY = DOCA_ACTION_DMA_FIRST + 1,
};

/** Capabilities doca_dma_devinfo_caps_get reports (a bitmap). */
enum doca_dma_devinfo_caps {
	DOCA_DMA_CAP_HW_OFFLOAD = 1 << 0, /**< The device runs DMA jobs. */
};

/** Copies num_bytes_to_copy bytes from the head of src_buff to the head of dst_buff. */
struct doca_dma_job_memcpy {
	struct doca_job base;		 /**< type DOCA_DMA_JOB_MEMCPY. */
	struct doca_buf *dst_buff;	 /**< Destination. */
	struct doca_buf const *src_buff; /**< Source. */
	size_t num_bytes_to_copy;	 /**< At most the length of either buffer. */
};

struct doca_dma;

/** Creates a DMA context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dma_create(struct doca_dma **dma);

/** Destroys a DMA context (stopped, with no device). */
__DOCA_EXPERIMENTAL
doca_error_t doca_dma_destroy(struct doca_dma *dma);

/** The context of a DMA instance. */
__DOCA_EXPERIMENTAL
struct doca_ctx *doca_dma_as_ctx(struct doca_dma *dma);

/** The DMA capabilities of a device (enum doca_dma_devinfo_caps bits). */
__DOCA_EXPERIMENTAL
doca_error_t doca_dma_devinfo_caps_get(struct doca_devinfo *devinfo, uint32_t *caps);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DMA_H_ */
