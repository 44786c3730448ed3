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
DOCA_STABLE
doca_error_t doca_mmap_create(struct doca_mmap **mmap);

/** Destroys a memory map (DOCA_ERROR_IN_USE while buffers still refer to it). */
DOCA_STABLE
doca_error_t doca_mmap_destroy(struct doca_mmap *mmap);

/** Starts the map: its range, permissions and devices are fixed from now on. */
DOCA_STABLE
doca_error_t doca_mmap_start(struct doca_mmap *mmap);

/** Stops the map (DOCA_ERROR_IN_USE while buffers still refer to it). */
DOCA_STABLE
doca_error_t doca_mmap_stop(struct doca_mmap *mmap);

/** Lets a device access the map (before start). */
DOCA_STABLE
doca_error_t doca_mmap_add_dev(struct doca_mmap *mmap, struct doca_dev *dev);

/** Removes a device (before start). */
DOCA_STABLE
doca_error_t doca_mmap_rm_dev(struct doca_mmap *mmap, struct doca_dev *dev);

/** Called when the map no longer uses its memory range. */
typedef void(doca_mmap_memrange_free_cb_t)(void *addr, size_t len, void *cookie);

/** Exports the map for another process on the other side of PCI; the blob lives as long as the map. */
DOCA_STABLE
doca_error_t doca_mmap_export_pci(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				  size_t *export_desc_len);

/** Exports the map for RDMA peers. */
DOCA_STABLE
doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				   size_t *export_desc_len);

/** Creates a map from another process's export blob. */
DOCA_STABLE
doca_error_t doca_mmap_create_from_export(const union doca_data *user_data, const void *export_desc,
					  size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap);

/** Sets the memory range (before start); the memory stays the caller's. */
DOCA_STABLE
doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len);

/** Sets the range from a dma-buf file descriptor. */
DOCA_STABLE
doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, void *addr, size_t dmabuf_offset,
					   size_t len);

/** The memory range. */
DOCA_STABLE
doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len);

/** Sets the function called when the map releases its memory range. */
DOCA_STABLE
doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb, void *opaque);

/** The user data given at creation. */
DOCA_STABLE
doca_error_t doca_mmap_get_user_data(const struct doca_mmap *mmap, union doca_data *user_data);

/** Sets the user data (before start). */
DOCA_STABLE
doca_error_t doca_mmap_set_user_data(struct doca_mmap *mmap, union doca_data user_data);

/** The most devices the map accepts. */
DOCA_STABLE
doca_error_t doca_mmap_get_max_num_devices(const struct doca_mmap *mmap, uint32_t *max_num_devices);

/** Buffers that currently refer to the map. */
DOCA_STABLE
doca_error_t doca_mmap_get_num_bufs(const struct doca_mmap *mmap, uint32_t *num_bufs);

/** Marks the map for use from several threads (before start): doca_mmap_destroy then
 * succeeds while buffers still refer to it; they keep its memory until released. */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_enable_thread_safety(struct doca_mmap *mmap);

struct doca_dpa;
/** An mmap's handle on a DPA. */
typedef uint64_t doca_dpa_dev_mmap_t;

/** Makes the memory range DPA heap memory (DOCA_ERROR_NOT_SUPPORTED: no DPA here). */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_dpa_memrange(struct doca_mmap *mmap, struct doca_dpa *dpa, uint64_t dpa_addr, size_t len);

/** The mmap's handle for a DPA (DOCA_ERROR_NOT_SUPPORTED: no DPA here). */
DOCA_EXPERIMENTAL
doca_error_t doca_mmap_dev_get_dpa_handle(struct doca_mmap *mmap, const struct doca_dev *dev,
					  doca_dpa_dev_mmap_t *dpa_mmap_handle);

/** Whether the map was exported. */
DOCA_STABLE
doca_error_t doca_mmap_get_exported(const struct doca_mmap *mmap, uint8_t *exported);

/** Whether the map was created from an export. */
DOCA_STABLE
doca_error_t doca_mmap_get_from_export(const struct doca_mmap *mmap, uint8_t *from_export);

/** Sets the most devices the map accepts (before start). */
DOCA_STABLE
doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices);

/** Sets the access permissions: a mask of enum doca_access_flags (before start). */
DOCA_STABLE
doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask);

/** Whether this device can export a memory map to the other side of PCI. */
DOCA_STABLE
doca_error_t doca_mmap_cap_is_export_pci_supported(const struct doca_devinfo *devinfo, uint8_t *mmap_export);

/** Whether this device can create a memory map from the other side's export. */
DOCA_STABLE
doca_error_t doca_mmap_cap_is_create_from_export_pci_supported(const struct doca_devinfo *devinfo,
							       uint8_t *from_export);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_MMAP_H_ */
