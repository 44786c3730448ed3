/*
 * doca_buf.h (DOCA 1.x): buffers, descriptors of a region of a memory map. A buffer's
 * address and length are fixed when it is taken from an inventory.
 */
#ifndef DOCA_BUF_H_
#define DOCA_BUF_H_

#include <stddef.h>
#include <stdint.h>
#include <doca_compat.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;

/** Extensions an inventory's buffers may have (a bitmap). */
enum doca_buf_extension {
	DOCA_BUF_EXTENSION_NONE = 0, /**< Plain buffers. */
};

/** The address of the region the buffer describes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_head_get(struct doca_buf *buf, uint8_t **head);

/** The length of that region, in bytes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_len_get(struct doca_buf *buf, size_t *len);

/**
 * Drops one reference (refcount, if not NULL, gets the count before); at zero the buffer
 * goes back to its inventory. DOCA_ERROR_IN_USE when the references left belong to
 * jobs in flight.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_refcount_rm(struct doca_buf *buf, uint16_t *refcount);

/** The reference count. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_refcount_get(struct doca_buf *buf, uint16_t *refcount);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_H_ */
