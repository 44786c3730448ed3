/*
 * doca_mmap.h (DOCA 1.x): memory maps.
 *
 * Life cycle: create (named, empty), set properties, start; then populate memory ranges
 * (chunks) and add the devices that reach them, in either order. Buffers are taken from
 * an inventory at addresses inside one chunk. Export the map (one chunk) for the DPU
 * side, which creates its twin from the export. Destroy once every buffer is back; each
 * chunk's free callback is called then.
 */
#ifndef DOCA_MMAP_H_
#define DOCA_MMAP_H_

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

/** Properties of a memory map. */
enum doca_mmap_property {
	DOCA_MMAP_NAME = 0,	       /**< char[], NUL-terminated; read-only. */
	DOCA_MMAP_MAX_NUM_CHUNKS = 1,  /**< uint32_t; default 1; set before start. */
	DOCA_MMAP_MAX_NUM_DEVICES = 2, /**< uint32_t; default 1; set before start. */
	DOCA_MMAP_NUM_BUFS = 3,	       /**< uint32_t; read-only. */
	DOCA_MMAP_EXPORTED = 4,	       /**< uint8_t; read-only. */
	DOCA_MMAP_FROM_EXPORT = 5,     /**< uint8_t; read-only. */
	DOCA_MMAP_ACCESS_FLAGS = 6,    /**< uint32_t: enum doca_mmap_access_flags; set before start. */
};

/** Who may access a memory map's memory (the default: local and DPU read-write). */
enum doca_mmap_access_flags {
	DOCA_MMAP_ACCESS_LOCAL_READ_ONLY = 0,
	DOCA_MMAP_ACCESS_LOCAL_READ_WRITE = (1 << 0),
	DOCA_MMAP_ACCESS_DPU_READ_ONLY = (1 << 4),
	DOCA_MMAP_ACCESS_DPU_READ_WRITE = (1 << 5),
};

/** Called once for each populated chunk when the map and its buffers are gone. */
typedef void(doca_mmap_memrange_free_cb_t)(void *addr, size_t len, void *opaque);

/** An empty, stopped memory map. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_create(const char *name, struct doca_mmap **mmap);

/** Destroys a map (DOCA_ERROR_IN_USE while buffers point into it). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_destroy(struct doca_mmap *mmap);

/**
 * Sets a property (before the first start; not on an exported map or one created from
 * an export: DOCA_ERROR_NOT_PERMITTED, as for read-only properties). value holds
 * size bytes: the property's size.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_property_set(struct doca_mmap *mmap, enum doca_mmap_property property,
				    const uint8_t *value, uint32_t size);

/** Reads a property; value is written (size: the property's size; the name: room for it). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_property_get(struct doca_mmap *mmap, enum doca_mmap_property property,
				    const uint8_t *value, uint32_t size);

/** Starts the map: chunks, devices and buffers become possible. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_start(struct doca_mmap *mmap);

/** Stops the map (DOCA_ERROR_IN_USE while buffers point into it). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_stop(struct doca_mmap *mmap);

/** Lets a device reach the map's chunks (DOCA_ERROR_NO_MEMORY past DOCA_MMAP_MAX_NUM_DEVICES). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_dev_add(struct doca_mmap *mmap, struct doca_dev *dev);

/** Removes a device added before. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_dev_rm(struct doca_mmap *mmap, struct doca_dev *dev);

/**
 * Adds the chunk [addr, addr + len) to a started map. pg_sz: a power of two, at least
 * 4096. DOCA_ERROR_NO_MEMORY past DOCA_MMAP_MAX_NUM_CHUNKS; DOCA_ERROR_NOT_PERMITTED
 * for a range that meets a chunk, or a map that is exported or created from an export.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_populate(struct doca_mmap *mmap, void *addr, size_t len, size_t pg_sz,
				doca_mmap_memrange_free_cb_t *free_cb, void *opaque);

/**
 * Describes a started map of one chunk for the DPU side (dev: a device added to it). The
 * map is exported from then on. *export_desc is the caller's to free().
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_export(struct doca_mmap *mmap, const struct doca_dev *dev, uint8_t **export_desc,
			      size_t *export_desc_len);

/** On the DPU side: a started map of the exporter's memory (dev: a local device). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_create_from_export(const char *name, const uint8_t *export_desc, size_t export_desc_len,
					  struct doca_dev *dev, struct doca_mmap **mmap);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_MMAP_H_ */
