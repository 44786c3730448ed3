/*
 * doca_buf_array.h: an array of equal buffers over a memory map, for GPU datapaths.
 * There is no GPU here: the array can be configured and started, and the GPU calls
 * answer DOCA_ERROR_NOT_SUPPORTED.
 */
#ifndef DOCA_BUF_ARRAY_H_
#define DOCA_BUF_ARRAY_H_

#include <stddef.h>
#include <stdint.h>
#include <doca_compat.h>
#include <doca_buf.h>
#include <doca_error.h>
#include <doca_mmap.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_gpu;
struct doca_dpa;
struct doca_mmap;
struct doca_buf_arr;
struct doca_gpu_buf_arr;

/** Creates a buffer array over a started mmap. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_create(struct doca_mmap *mmap, struct doca_buf_arr **buf_arr);

/** Targets a GPU (not supported here). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_target_gpu(struct doca_buf_arr *buf_arr, struct doca_gpu *gpu_handler);

/** num_elem buffers of size bytes, from start_offset in the mmap. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_params(struct doca_buf_arr *buf_arr, size_t size, uint32_t num_elem,
				     uint32_t start_offset);

/** Starts the array. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_start(struct doca_buf_arr *buf_arr);

/** Stops the array. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_stop(struct doca_buf_arr *buf_arr);

/** Destroys the array. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_destroy(struct doca_buf_arr *buf_arr);

/** The GPU handle (not supported here). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_get_gpu_handle(const struct doca_buf_arr *buf_arr, struct doca_gpu_buf_arr **gpu_buf_arr);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_ARRAY_H_ */
