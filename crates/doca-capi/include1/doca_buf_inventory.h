/*
 * doca_buf_inventory.h (DOCA 1.x): pools of buffer descriptors.
 *
 * Create, start, then take buffers pointing into started memory maps. Stop keeps new
 * buffers from being taken; destroy once every buffer is back.
 */
#ifndef DOCA_BUF_INVENTORY_H_
#define DOCA_BUF_INVENTORY_H_

#include <stddef.h>
#include <stdint.h>
#include <doca_buf.h>
#include <doca_compat.h>
#include <doca_error.h>
#include <doca_mmap.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_mmap;
struct doca_buf_inventory;

/** Properties of an inventory (all read-only, uint32_t). */
enum doca_buf_inventory_property {
	DOCA_BUF_INVENTORY_PROPERTY_NUM_ELEMENTS = 0,	   /**< Descriptors in the inventory. */
	DOCA_BUF_INVENTORY_PROPERTY_NUM_FREE_ELEMENTS = 1, /**< Descriptors not taken. */
	DOCA_BUF_INVENTORY_PROPERTY_EXTENSIONS = 2,	   /**< enum doca_buf_extension bits. */
};

/** An inventory of num_elements descriptors; the name plays no part. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_create(const char *name, size_t num_elements, uint32_t extensions,
				       struct doca_buf_inventory **buf_inventory);

/** Destroys an inventory (DOCA_ERROR_IN_USE while buffers are taken). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory);

/** Properties are read-only: DOCA_ERROR_NOT_PERMITTED. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_property_set(struct doca_buf_inventory *inventory,
					     enum doca_buf_inventory_property property, const uint8_t *value,
					     uint32_t size);

/** Reads a property (size 4); value is written. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_property_get(struct doca_buf_inventory *inventory,
					     enum doca_buf_inventory_property property, const uint8_t *value,
					     uint32_t size);

/** Lets buffers be taken. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory);

/** Stops buffers from being taken. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory);

/* The call doca_buf_inventory_buf_by_addr makes (not part of the 1.x interface). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_by_args(struct doca_buf_inventory *inventory, struct doca_mmap *mmap,
					    void *addr, size_t len, void *data, size_t data_len,
					    struct doca_buf **buf);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

/** A buffer for [addr, addr + len), which must lie inside one chunk of the started mmap. */
static inline doca_error_t doca_buf_inventory_buf_by_addr(struct doca_buf_inventory *inventory,
							  struct doca_mmap *mmap, void *addr, size_t len,
							  struct doca_buf **buf)
{
	return doca_buf_inventory_buf_by_args(inventory, mmap, addr, len, addr, 0, buf);
}

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif

/** A new buffer, from this inventory, describing the same region as src_buf. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_dup(struct doca_buf_inventory *inventory, const struct doca_buf *src_buf,
					struct doca_buf **dst_buf);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_INVENTORY_H_ */
