/*
 * doca_dev.h: devices and their representors.
 *
 * A program lists the devices (doca_devinfo_list_create), picks one by its properties,
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
enum doca_dev_rep_filter {
	DOCA_DEV_REP_FILTER_ALL = 0,
	DOCA_DEV_REP_FILTER_NET = 1 << 1,
	DOCA_DEV_REP_FILTER_EMULATED = 1 << 2,
};

/** Lists the devices; the list stays valid until doca_devinfo_list_destroy. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_list_create(struct doca_devinfo ***dev_list, uint32_t *nb_devs);

/** Frees a device list (opened devices stay open). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_list_destroy(struct doca_devinfo **dev_list);

/** Lists an opened device's representors that match filter. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_list_create(struct doca_dev *dev, int filter,
					  struct doca_devinfo_rep ***dev_list_rep, uint32_t *nb_devs_rep);

/** Frees a representor list. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_list_destroy(struct doca_devinfo_rep **dev_list_rep);

/** Opens a device. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev);

/** Closes a device (DOCA_ERROR_IN_USE while a context or memory map still uses it). */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_close(struct doca_dev *dev);

/** Opens a representor. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo, struct doca_dev_rep **dev_rep);

/** Closes a representor. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_rep_close(struct doca_dev_rep *dev);

/** The information of an opened device, valid while it is open. */
__DOCA_EXPERIMENTAL
struct doca_devinfo *doca_dev_as_devinfo(const struct doca_dev *dev);

/** The information of an opened representor, valid while it is open. */
__DOCA_EXPERIMENTAL
struct doca_devinfo_rep *doca_dev_rep_as_devinfo(struct doca_dev_rep *dev_rep);

/** Writes the PCI address ("XXXX:XX:XX.X") into a DOCA_DEVINFO_PCI_ADDR_SIZE buffer. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str);

/** Whether the device has this PCI address ("XXXX:XX:XX.X" or "XX:XX.X"). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_is_pci_addr_equal(const struct doca_devinfo *devinfo, const char *pci_addr_str,
						uint8_t *is_equal);

/** The IPv4 address; size must be at least DOCA_DEVINFO_IPV4_ADDR_SIZE. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_ipv4_addr(const struct doca_devinfo *devinfo, uint8_t *ipv4_addr, uint32_t size);

/** The IPv6 address; size must be at least DOCA_DEVINFO_IPV6_ADDR_SIZE. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_ipv6_addr(const struct doca_devinfo *devinfo, uint8_t *ipv6_addr, uint32_t size);

/** The MAC address; size must be at least DOCA_DEVINFO_MAC_ADDR_SIZE. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_mac_addr(const struct doca_devinfo *devinfo, uint8_t *mac_addr, uint32_t size);

/** The network interface name, NUL-terminated, in a buffer of size bytes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name, uint32_t size);

/** The IB device name, NUL-terminated, in a buffer of size bytes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name, uint32_t size);

/** The port's LID. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_lid(const struct doca_devinfo *devinfo, uint16_t *lid);

/** Whether the device can manage hot-plugged emulated devices. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_is_hotplug_manager_supported(const struct doca_devinfo *devinfo,
							   uint8_t *is_hotplug_manager);

/** Whether memory maps on this device can be exported to the DPU. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_is_mmap_export_dpu_supported(const struct doca_devinfo *devinfo, uint8_t *mmap_export);

/** Whether this device can create memory maps from an export. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_is_mmap_from_export_dpu_supported(const struct doca_devinfo *devinfo,
								uint8_t *from_export);

/** Whether every representor can be listed. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_is_list_all_supported(const struct doca_devinfo *devinfo, uint8_t *all_supported);

/** Whether network representors can be listed. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_is_list_net_supported(const struct doca_devinfo *devinfo, uint8_t *net_supported);

/** Whether emulated representors can be listed. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_is_list_emulated_supported(const struct doca_devinfo *devinfo,
							     uint8_t *emulated_supported);

/** The representor's VUID, NUL-terminated, in a buffer of size bytes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid, uint32_t size);

/** The representor's PCI address, in a DOCA_DEVINFO_REP_PCI_ADDR_SIZE buffer. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_pci_addr_str(const struct doca_devinfo_rep *devinfo_rep, char *pci_addr_str);

/** The representor's PCI function type. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_pci_func_type(const struct doca_devinfo_rep *devinfo_rep,
						enum doca_pci_func_type *pci_func_type);

/** Whether the representor has this PCI address. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_is_pci_addr_equal(const struct doca_devinfo_rep *devinfo_rep,
						    const char *pci_addr_str, uint8_t *is_equal);

#ifdef DOCA_API_1_5
/* DOCA 1.5 (pkg-config modules under lib/pkgconfig/doca-1.5). */

/** The device's PCI address (as lspci shows it). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_pci_addr(const struct doca_devinfo *devinfo, struct doca_pci_bdf *pci_addr);

/** The representor's PCI address. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_pci_addr(const struct doca_devinfo_rep *devinfo_rep, struct doca_pci_bdf *pci_addr);

/** 1 when the device can export a memory map (doca_mmap_export). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_is_mmap_export_supported(const struct doca_devinfo *devinfo, uint8_t *mmap_export);

/** 1 when the device can create a memory map from an export. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_is_mmap_from_export_supported(const struct doca_devinfo *devinfo,
							   uint8_t *from_export);
#endif /* DOCA_API_1_5 */

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DEV_H_ */
