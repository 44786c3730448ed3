/*
 * doca_buf_array.h: an array of equal buffers over one mmap, for a GPU's or a DPA's
 * data path: created with its number of elements, given its mmap, element size and
 * first offset, then started (the elements must fit in the started mmap). There is no
 * GPU or DPA here: targeting one, or asking for the array's handle there, answers
 * DOCA_ERROR_NOT_SUPPORTED.
 */
#ifndef DOCA_BUF_ARRAY_H_
#define DOCA_BUF_ARRAY_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_mmap;
struct doca_gpu;
struct doca_dpa;
/** A buffer array. */
struct doca_buf_arr;
/** A buffer array's GPU handle. */
struct doca_gpu_buf_arr;
/** A buffer array's DPA handle. */
typedef uint64_t doca_dpa_dev_buf_arr_t;

/** Creates an array of num_elem buffers (> 0). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_create(size_t num_elem, struct doca_buf_arr **buf_arr);

/** Destroys an array (stopping it first). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_destroy(struct doca_buf_arr *buf_arr);

/** Sets the mmap, each element's size and the first element's offset (before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_params(struct doca_buf_arr *buf_arr, struct doca_mmap *mmap, size_t elem_size,
				     uint64_t start_offset);

/** Targets a GPU (DOCA_ERROR_NOT_SUPPORTED: none here). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_target_gpu(struct doca_buf_arr *buf_arr, struct doca_gpu *gpu_handler);

/** Targets a DPA (DOCA_ERROR_NOT_SUPPORTED: none here). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_target_dpa(struct doca_buf_arr *buf_arr, struct doca_dpa *dpa_handler);

/** Starts the array: its elements must fit in its started mmap. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_start(struct doca_buf_arr *buf_arr);

/** Stops the array. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_stop(struct doca_buf_arr *buf_arr);

/** The array's GPU handle (DOCA_ERROR_NOT_SUPPORTED: no GPU here). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_get_gpu_handle(const struct doca_buf_arr *buf_arr, struct doca_gpu_buf_arr **gpu_buf_arr);

/** The array's DPA handle (DOCA_ERROR_NOT_SUPPORTED: no DPA here). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_get_dpa_handle(const struct doca_buf_arr *buf_arr, doca_dpa_dev_buf_arr_t *dpa_buf_arr);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_ARRAY_H_ */
