/*
 * doca_dev.h: devices and their representors.
 *
 * A program lists the devices (doca_devinfo_create_list), picks one by its properties,
 * opens it (doca_dev_open) and then destroys the list; the opened device keeps its own
 * information (doca_dev_as_devinfo). In this implementation devices are software,
 * described by a topology (by default one local device that supports every library).
 */
#ifndef DOCA_DEV_H_
#define DOCA_DEV_H_

#include <stddef.h>
#include <stdint.h>
#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_devinfo;
struct doca_devinfo_rep;
struct doca_dev;
struct doca_dev_rep;

/** Sizes of the buffers the property getters fill. */
#define DOCA_DEVINFO_VUID_SIZE 128
#define DOCA_DEVINFO_IPV4_ADDR_SIZE 4
#define DOCA_DEVINFO_IPV6_ADDR_SIZE 16
#define DOCA_DEVINFO_MAC_ADDR_SIZE 6
#define DOCA_DEVINFO_IFACE_NAME_SIZE 256
#define DOCA_DEVINFO_IBDEV_NAME_SIZE 64
/** "XXXX:XX:XX.X" and its terminating NUL. */
#define DOCA_DEVINFO_PCI_ADDR_SIZE 13
/** "XX:XX.X" and its terminating NUL. */
#define DOCA_DEVINFO_PCI_BDF_SIZE 8
#define DOCA_DEVINFO_REP_VUID_SIZE 128
#define DOCA_DEVINFO_REP_PCI_ADDR_SIZE 13
#define DOCA_DEVINFO_REP_PCI_BDF_SIZE 8

/** Which representors to list. */
enum doca_devinfo_rep_filter {
	DOCA_DEVINFO_REP_FILTER_ALL = 0,
	DOCA_DEVINFO_REP_FILTER_NET = 1 << 1,
	DOCA_DEVINFO_REP_FILTER_EMULATED = 1 << 2,
};

/** Lists the devices; the list stays valid until doca_devinfo_destroy_list. */
DOCA_STABLE
doca_error_t doca_devinfo_create_list(struct doca_devinfo ***dev_list, uint32_t *nb_devs);

/** Frees a device list (opened devices stay open). */
DOCA_STABLE
doca_error_t doca_devinfo_destroy_list(struct doca_devinfo **dev_list);

/** Lists an opened device's representors that match filter. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_create_list(struct doca_dev *dev, int filter,
					  struct doca_devinfo_rep ***dev_list_rep, uint32_t *nb_devs_rep);

/** Frees a representor list. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_destroy_list(struct doca_devinfo_rep **dev_list_rep);

/** Opens a device. */
DOCA_STABLE
doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev);

/** Closes a device (DOCA_ERROR_IN_USE while a context or memory map still uses it). */
DOCA_STABLE
doca_error_t doca_dev_close(struct doca_dev *dev);

/** Opens a representor. */
DOCA_STABLE
doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo, struct doca_dev_rep **dev_rep);

/** Closes a representor. */
DOCA_STABLE
doca_error_t doca_dev_rep_close(struct doca_dev_rep *dev);

/** The information of an opened device, valid while it is open. */
DOCA_STABLE
struct doca_devinfo *doca_dev_as_devinfo(const struct doca_dev *dev);

/** The information of an opened representor, valid while it is open. */
DOCA_STABLE
struct doca_devinfo_rep *doca_dev_rep_as_devinfo(struct doca_dev_rep *dev_rep);

/** Writes the PCI address ("XXXX:XX:XX.X") into a DOCA_DEVINFO_PCI_ADDR_SIZE buffer. */
DOCA_STABLE
doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str);

/** Whether the device has this PCI address ("XXXX:XX:XX.X" or "XX:XX.X"). */
DOCA_STABLE
doca_error_t doca_devinfo_is_equal_pci_addr(const struct doca_devinfo *devinfo, const char *pci_addr_str,
						uint8_t *is_equal);

/** The IPv4 address; size must be at least DOCA_DEVINFO_IPV4_ADDR_SIZE. */
DOCA_STABLE
doca_error_t doca_devinfo_get_ipv4_addr(const struct doca_devinfo *devinfo, uint8_t *ipv4_addr, uint32_t size);

/** The IPv6 address; size must be at least DOCA_DEVINFO_IPV6_ADDR_SIZE. */
DOCA_STABLE
doca_error_t doca_devinfo_get_ipv6_addr(const struct doca_devinfo *devinfo, uint8_t *ipv6_addr, uint32_t size);

/** The MAC address; size must be at least DOCA_DEVINFO_MAC_ADDR_SIZE. */
DOCA_STABLE
doca_error_t doca_devinfo_get_mac_addr(const struct doca_devinfo *devinfo, uint8_t *mac_addr, uint32_t size);

/** The network interface name, NUL-terminated, in a buffer of size bytes. */
DOCA_STABLE
doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name, uint32_t size);

/** The IB device name, NUL-terminated, in a buffer of size bytes. */
DOCA_STABLE
doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name, uint32_t size);

/** The port's active rate, in bits per second. */
DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_active_rate(const struct doca_devinfo *devinfo, uint64_t *active_rate);

/** The function's virtual HCA id. */
DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_vhca_id(const struct doca_devinfo *devinfo, uint16_t *vhca_id);

/** 1 when the device keeps resources for a faster reclaim (0 here: software). */
DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_cap_is_accelerate_resource_reclaim_supported(const struct doca_devinfo *devinfo,
									uint8_t *is_accelerate_resource_reclaim);

/** Keeps resources for a faster reclaim (DOCA_ERROR_NOT_SUPPORTED here, as the capability says). */
DOCA_EXPERIMENTAL
doca_error_t doca_dev_accelerate_resource_reclaim(struct doca_dev *dev);

/** 1 when the device moderates completion notifications (0 here). */
DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_cap_is_notification_moderation_supported(const struct doca_devinfo *devinfo,
								    uint8_t *is_notification_moderation_supported);

/** The kind of PCI function the device is. */
DOCA_STABLE
doca_error_t doca_devinfo_get_pci_func_type(const struct doca_devinfo *devinfo, enum doca_pci_func_type *pci_func_type);

/** The index of a sub-function device (DOCA_ERROR_NOT_SUPPORTED for other functions). */
DOCA_STABLE
doca_error_t doca_devinfo_get_sf_index(const struct doca_devinfo *devinfo, uint32_t *sf_index);

/** The port's LID. */
DOCA_STABLE
doca_error_t doca_devinfo_get_lid(const struct doca_devinfo *devinfo, uint16_t *lid);

/** Whether the device can manage hot-plugged emulated devices. */
DOCA_STABLE
doca_error_t doca_devinfo_cap_is_hotplug_manager_supported(const struct doca_devinfo *devinfo,
							   uint8_t *is_hotplug_manager);

/** Whether every representor can be listed. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_cap_is_filter_all_supported(const struct doca_devinfo *devinfo, uint8_t *all_supported);

/** Whether network representors can be listed. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_cap_is_filter_net_supported(const struct doca_devinfo *devinfo, uint8_t *net_supported);

/** Whether emulated representors can be listed. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_cap_is_filter_emulated_supported(const struct doca_devinfo *devinfo,
							     uint8_t *emulated_supported);

/** The representor's VUID, NUL-terminated, in a buffer of size bytes. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid, uint32_t size);

/** The representor's PCI address, in a DOCA_DEVINFO_REP_PCI_ADDR_SIZE buffer. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_get_pci_addr_str(const struct doca_devinfo_rep *devinfo_rep, char *pci_addr_str);

/** The representor's PCI function type. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_get_pci_func_type(const struct doca_devinfo_rep *devinfo_rep,
						enum doca_pci_func_type *pci_func_type);

/** The representor's network interface name, NUL-terminated, in a buffer of size bytes
 * (at least DOCA_DEVINFO_IFACE_NAME_SIZE). */
DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_iface_name(const struct doca_devinfo_rep *devinfo_rep, char *iface_name,
					     uint32_t size);

/** 1 when the represented function is hot-plugged, 0 when statically plugged. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_get_is_hotplug(const struct doca_devinfo_rep *devinfo_rep, uint8_t *is_hotplug);

/** The represented function's virtual HCA id. */
DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_vhca_id(const struct doca_devinfo_rep *devinfo_rep, uint16_t *vhca_id);

/** Whether the representor has this PCI address. */
DOCA_STABLE
doca_error_t doca_devinfo_rep_is_equal_pci_addr(const struct doca_devinfo_rep *devinfo_rep,
						    const char *pci_addr_str, uint8_t *is_equal);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DEV_H_ */
