/*
 * doca_bufpool.h: a pool of equal-sized buffers carved from one memory map.
 */
#ifndef DOCA_BUFPOOL_H_
#define DOCA_BUFPOOL_H_

#include <stddef.h>
#include <stdint.h>
#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_mmap;
struct doca_buf;
struct doca_bufpool;

/** Creates a pool of num_elements buffers of element_size bytes, aligned to element_alignment, in a started mmap. */
__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_create(const union doca_data *user_data, size_t num_elements, uint32_t extensions,
				 size_t element_size, size_t element_alignment, const struct doca_mmap *mmap,
				 struct doca_bufpool **bufpool);

/** Destroys a pool (DOCA_ERROR_IN_USE while buffers are out). */
__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_destroy(struct doca_bufpool *bufpool);

/** Starts the pool. */
__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_start(struct doca_bufpool *bufpool);

/** Stops the pool. */
__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_stop(struct doca_bufpool *bufpool);

/** Takes a buffer (DOCA_ERROR_EMPTY when none is free). */
__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_buf_alloc(struct doca_bufpool *bufpool, struct doca_buf **buf);

/** The number of buffers. */
__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_get_num_elements(const struct doca_bufpool *bufpool, uint32_t *num_of_elements);

/** The number of free buffers. */
__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_get_num_free_elements(const struct doca_bufpool *bufpool, uint32_t *num_of_free_elements);

/** The user data given at creation. */
__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_get_user_data(const struct doca_bufpool *bufpool, union doca_data *user_data);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUFPOOL_H_ */
