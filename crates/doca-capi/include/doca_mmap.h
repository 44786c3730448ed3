/*
 * doca_mmap.h: memory maps, the memory that buffers and jobs may use.
 *
 * Life cycle: create, set the memory range and permissions, add the devices that will
 * access it, start; buffers are then taken from it through an inventory. Stop and
 * destroy once every buffer is back.
 */
#ifndef DOCA_MMAP_H_
#define DOCA_MMAP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <doca_compat.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_mmap;

/** Creates a stopped memory map; user_data may be NULL. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_create(const union doca_data *user_data, struct doca_mmap **mmap);

/** Destroys a memory map (DOCA_ERROR_IN_USE while buffers still refer to it). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_destroy(struct doca_mmap *mmap);

/** Starts the map: its range, permissions and devices are fixed from now on. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_start(struct doca_mmap *mmap);

/** Stops the map (DOCA_ERROR_IN_USE while buffers still refer to it). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_stop(struct doca_mmap *mmap);

/** Lets a device access the map (before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_dev_add(struct doca_mmap *mmap, struct doca_dev *dev);

/** Removes a device (before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_dev_rm(struct doca_mmap *mmap, struct doca_dev *dev);

/** Called when the map no longer uses its memory range. */
typedef void(doca_mmap_memrange_free_cb_t)(void *addr, size_t len, void *cookie);

/** Exports the map for another process on the DPU side; the blob lives as long as the map. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_export_dpu(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				  size_t *export_desc_len);

/** Exports the map for RDMA peers. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				   size_t *export_desc_len);

/** Creates a map from another process's export blob. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_create_from_export(const union doca_data *user_data, const void *export_desc,
					  size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap);

/** Sets the memory range (before start); the memory stays the caller's. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len);

/** Sets the range from a dma-buf file descriptor. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, size_t offset, size_t len);

/** The memory range. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len);

/** Sets the function called when the map releases its memory range. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb, void *opaque);

/** The user data given at creation. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_user_data(struct doca_mmap *mmap, union doca_data *user_data);

/** The most devices the map accepts. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_max_num_devices(struct doca_mmap *mmap, uint32_t *max_num_devices);

/** Buffers that currently refer to the map. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_num_bufs(struct doca_mmap *mmap, uint32_t *num_bufs);

/** Whether the map was exported. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_exported(struct doca_mmap *mmap, uint8_t *exported);

/** Whether the map was created from an export. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_from_export(struct doca_mmap *mmap, uint8_t *from_export);

/** Sets the most devices the map accepts (before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices);

/** Sets the access permissions: a mask of enum doca_access_flags (before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask);

#ifdef DOCA_API_1_5
/*
 * DOCA 1.5 (pkg-config modules under lib/pkgconfig/doca-1.5): doca_mmap_create gives a
 * map that is started first, then given devices (doca_mmap_dev_add) and memory ranges
 * (doca_mmap_populate), and exported once (doca_mmap_export).
 */

/** Sets how many memory ranges the map may hold (before the first start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_max_num_chunks(struct doca_mmap *mmap, uint32_t max_num_chunks);

/** How many memory ranges the map may hold. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_max_num_chunks(struct doca_mmap *mmap, uint32_t *max_num_chunks);

/**
 * Adds the range [addr, addr + len) to a started map; pg_sz is a power of two of at
 * least 4096. free_cb(addr, len, opaque), if given, is called once the map and its
 * buffers are gone.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_populate(struct doca_mmap *mmap, void *addr, size_t len, size_t pg_sz,
				doca_mmap_memrange_free_cb_t *free_cb, void *opaque);

/**
 * A descriptor of the map for doca_mmap_create_from_export on the other side, in memory
 * the caller frees with free(). A map is exported once.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_export(struct doca_mmap *mmap, const struct doca_dev *dev, void **export_desc,
			      size_t *export_desc_len);
#endif /* DOCA_API_1_5 */

#ifdef __cplusplus
}
#endif

#endif /* DOCA_MMAP_H_ */
