/*
 * doca_dev.h (DOCA 1.x): local devices and, on the DPU, the remote devices (host
 * functions) a local device reaches.
 *
 * doca_devinfo_list_create and doca_devinfo_remote_list_create take either form DOCA
 * declared: the 1.3 form (no count: the list ends with NULL) or the 1.4 form (with the
 * count, and a filter for remote devices).
 */
#ifndef DOCA_DEV_H_
#define DOCA_DEV_H_

#include <stdint.h>
#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_devinfo;
struct doca_dev;
struct doca_devinfo_remote;
struct doca_dev_remote;

/** Properties of a local device (all read-only). */
enum doca_devinfo_property {
	DOCA_DEVINFO_PROPERTY_VUID = 0,	      /**< char[128], NUL-terminated. */
	DOCA_DEVINFO_PROPERTY_PCI_ADDR = 1,   /**< struct doca_pci_bdf. */
	DOCA_DEVINFO_PROPERTY_IPV4_ADDR = 2,  /**< uint8_t[4]. */
	DOCA_DEVINFO_PROPERTY_IPV6_ADDR = 3,  /**< uint8_t[16]. */
	DOCA_DEVINFO_PROPERTY_IFACE_NAME = 4, /**< char[256], NUL-terminated. */
	DOCA_DEVINFO_PROPERTY_IBDEV_NAME = 5, /**< char[64], NUL-terminated. */
};

/** Properties of a remote device (all read-only). */
enum doca_devinfo_remote_property {
	DOCA_DEVINFO_REMOTE_PROPERTY_VUID = 0,		/**< char[128], NUL-terminated. */
	DOCA_DEVINFO_REMOTE_PROPERTY_PCI_ADDR = 1,	/**< struct doca_pci_bdf. */
	DOCA_DEVINFO_REMOTE_PROPERTY_PCI_FUNC_TYPE = 2, /**< uint32_t: enum doca_pci_func_type. */
};

/** Which remote devices a list holds. */
enum doca_dev_remote_filter {
	DOCA_DEV_REMOTE_FILTER_ALL = 0, /**< Every host function. */
	DOCA_DEV_REMOTE_FILTER_NET = 1, /**< Network functions. */
};

/** The 1.3 form: the devices of this machine, in a list that ends with NULL. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_list_create_v13(struct doca_devinfo ***dev_list);

/** The 1.4 form: the devices of this machine and their count (the list ends with NULL). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_list_create(struct doca_devinfo ***dev_list, uint32_t *nb_devs);

/** Frees a list (devices opened from it stay open). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_list_destroy(struct doca_devinfo **dev_list);

/**
 * Reads a property into value: size is the property's size (strings: at least the
 * length of the text and its NUL). DOCA_ERROR_INVALID_VALUE for another size or an
 * unknown property.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_property_get(const struct doca_devinfo *devinfo, enum doca_devinfo_property property,
				       uint8_t *value, uint32_t size);

/** Opens a device (a device already open is the same device). */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev);

/** Closes a device. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_close(struct doca_dev *dev);

/** The information of an open device. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_as_devinfo(struct doca_dev *dev, struct doca_devinfo **devinfo);

/** The 1.3 form: the network functions of the host that a DPU device reaches. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_remote_list_create_v13(struct doca_dev *dev,
						 struct doca_devinfo_remote ***devinfo_remote_list);

/** The 1.4 form: the host functions a DPU device reaches, filtered, and their count. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_remote_list_create(struct doca_dev *dev, enum doca_dev_remote_filter filter,
					     struct doca_devinfo_remote ***devinfo_remote_list, uint32_t *nb_devs);

/** Frees a list of remote devices (those opened stay open). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_remote_list_destroy(struct doca_devinfo_remote **devinfo_remote_list);

/** Reads a remote device's property, as doca_devinfo_property_get. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_remote_property_get(const struct doca_devinfo_remote *devinfo_remote,
					      enum doca_devinfo_remote_property property, uint8_t *value,
					      uint32_t size);

/** Opens a remote device. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_remote_open(struct doca_devinfo_remote *devinfo_remote, struct doca_dev_remote **dev_remote);

/** Closes a remote device. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_remote_close(struct doca_dev_remote *dev_remote);

/** The information of an open remote device. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_remote_as_devinfo(struct doca_dev_remote *dev_remote,
					struct doca_devinfo_remote **devinfo_remote);

/* Picks the form by the number of arguments. */
#define DOCA_DEV_PICK2_(a, b, f, ...) f
#define DOCA_DEV_PICK4_(a, b, c, d, f, ...) f
#define doca_devinfo_list_create(...) \
	DOCA_DEV_PICK2_(__VA_ARGS__, doca_devinfo_list_create, doca_devinfo_list_create_v13, 0)(__VA_ARGS__)
#define doca_devinfo_remote_list_create(...)                                                            \
	DOCA_DEV_PICK4_(__VA_ARGS__, doca_devinfo_remote_list_create, 0, doca_devinfo_remote_list_create_v13, \
			0, 0)(__VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DEV_H_ */
