/*
 * doca_buf_pool.h: a pool of equal elements carved from one mmap. Created with the
 * number and size of its elements and its mmap; its element alignment and user data are
 * set while it is not started; doca_buf_pool_start lays the elements out (the mmap must
 * be started by then); doca_buf_pool_buf_alloc hands out an element as a buffer whose
 * data section is empty at its head, and doca_buf_dec_refcount gives it back.
 */
#ifndef DOCA_BUF_POOL_H_
#define DOCA_BUF_POOL_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_mmap;

/** A buffer pool. */
struct doca_buf_pool;

/** Creates a pool of num_elements elements of element_size bytes from mmap. */
DOCA_STABLE
doca_error_t doca_buf_pool_create(size_t num_elements, size_t element_size, const struct doca_mmap *mmap,
				  struct doca_buf_pool **buf_pool);

/** Destroys a pool (DOCA_ERROR_IN_USE while buffers are out); stops it first. */
DOCA_STABLE
doca_error_t doca_buf_pool_destroy(struct doca_buf_pool *buf_pool);

/** Lays the elements out and allows allocation (the mmap must be started). */
DOCA_STABLE
doca_error_t doca_buf_pool_start(struct doca_buf_pool *buf_pool);

/** Stops allocation; the pool's properties may be set again. */
DOCA_STABLE
doca_error_t doca_buf_pool_stop(struct doca_buf_pool *buf_pool);

/** Takes a free element as a buffer (DOCA_ERROR_NO_MEMORY when every one is out). */
DOCA_STABLE
doca_error_t doca_buf_pool_buf_alloc(struct doca_buf_pool *buf_pool, struct doca_buf **buf);

/** Sets each element's alignment (a power of two), while not started. */
DOCA_STABLE
doca_error_t doca_buf_pool_set_element_alignment(struct doca_buf_pool *buf_pool, size_t element_alignment);

/** The elements' alignment (1 unless set). */
DOCA_STABLE
doca_error_t doca_buf_pool_get_element_alignment(const struct doca_buf_pool *buf_pool, size_t *element_alignment);

/** Sets the pool's user data, while not started. */
DOCA_STABLE
doca_error_t doca_buf_pool_set_user_data(struct doca_buf_pool *buf_pool, union doca_data user_data);

/** The pool's user data (0 unless set). */
DOCA_STABLE
doca_error_t doca_buf_pool_get_user_data(const struct doca_buf_pool *buf_pool, union doca_data *user_data);

/** The number of elements. */
DOCA_STABLE
doca_error_t doca_buf_pool_get_num_elements(const struct doca_buf_pool *buf_pool, uint32_t *num_of_elements);

/** The number of free elements. */
DOCA_STABLE
doca_error_t doca_buf_pool_get_num_free_elements(const struct doca_buf_pool *buf_pool,
						 uint32_t *num_of_free_elements);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_POOL_H_ */
