/*
 * doca_buf_inventory.h: a fixed set of buffer descriptors, handed out over any started
 * memory map.
 */
#ifndef DOCA_BUF_INVENTORY_H_
#define DOCA_BUF_INVENTORY_H_

#include <stddef.h>
#include <stdint.h>
#include <doca_compat.h>
#include <doca_buf.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_mmap;
struct doca_buf_inventory;

/** Creates an inventory of num_elements descriptors (extensions: DOCA_BUF_EXTENSION_NONE). */
DOCA_STABLE
doca_error_t doca_buf_inventory_create(size_t num_elements, struct doca_buf_inventory **buf_inventory);

/** Destroys an inventory (DOCA_ERROR_IN_USE while buffers are out). */
DOCA_STABLE
doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory);

/** Starts the inventory. */
DOCA_STABLE
doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory);

/** Stops the inventory (DOCA_ERROR_IN_USE while buffers are out). */
DOCA_STABLE
doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory);

/** Takes a buffer [addr, addr + len) of mmap whose data is [data, data + data_len). */
DOCA_STABLE
doca_error_t doca_buf_inventory_buf_get_by_args(struct doca_buf_inventory *inventory, struct doca_mmap *mmap,
					    void *addr, size_t len, void *data, size_t data_len,
					    struct doca_buf **buf);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

/** Takes an empty buffer [addr, addr + len) (data_len 0). */
static inline doca_error_t doca_buf_inventory_buf_get_by_addr(struct doca_buf_inventory *inventory,
							  struct doca_mmap *mmap, void *addr, size_t len,
							  struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, addr, len, addr, 0, buf);
}

/** Takes a buffer [data, data + data_len) that is all data. */
static inline doca_error_t doca_buf_inventory_buf_get_by_data(struct doca_buf_inventory *inventory,
							  struct doca_mmap *mmap, void *data, size_t data_len,
							  struct doca_buf **buf)
{
	return doca_buf_inventory_buf_get_by_args(inventory, mmap, data, data_len, data, data_len, buf);
}

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic pop
#endif

/**
 * Points buf (taken from an inventory; the caller holds it) at [addr, addr + len) of the
 * same mmap, with data [data, data + data_len) inside it, as taking a new buffer would.
 * Its references and its place in a list stay. DOCA_ERROR_INVALID_VALUE when the range
 * leaves the mmap's memory or the data leaves the range, DOCA_ERROR_IN_USE while a task
 * in flight holds it; buf is unchanged then.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_reuse_by_args(struct doca_buf *buf, void *addr, size_t len, void *data,
						  size_t data_len);

/** doca_buf_inventory_buf_reuse_by_args with an empty data section at addr. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_reuse_by_addr(struct doca_buf *buf, void *addr, size_t len);

/** doca_buf_inventory_buf_reuse_by_args with the whole range as data. */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_reuse_by_data(struct doca_buf *buf, void *data, size_t data_len);

/** Takes a new buffer describing the same memory and data as src_buf (a list is duplicated whole). */
DOCA_STABLE
doca_error_t doca_buf_inventory_buf_dup(struct doca_buf_inventory *inventory, const struct doca_buf *src_buf,
					struct doca_buf **dst_buf);

/** The number of descriptors. */
DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inventory, uint32_t *num_of_elements);

/** Adds num_elements descriptors to a started inventory (DOCA_ERROR_BAD_STATE otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_expand(struct doca_buf_inventory *inventory, uint32_t num_elements);

/** The number of free descriptors. */
DOCA_STABLE
doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inventory,
						      uint32_t *num_of_free_elements);

/** The user data given at creation. */
DOCA_STABLE
doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inventory, union doca_data *user_data);

/** Sets the user data (before start). */
DOCA_STABLE
doca_error_t doca_buf_inventory_set_user_data(struct doca_buf_inventory *inventory, union doca_data user_data);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_INVENTORY_H_ */
