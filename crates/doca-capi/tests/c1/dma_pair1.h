/* What the 1.x host and DPU programs share: the files they meet through, and helpers. */
#ifndef DMA_PAIR1_H_
#define DMA_PAIR1_H_

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>

/* The files the two sides meet through, in a directory both name (-d; default /tmp). */
#define DESC_FILE "doca1_export_desc.bin"
#define INFO_FILE "doca1_buffer_info.txt"
#define MAX_TEXT 256
#define MAX_PATH 4096

/* dir/name into out (at least MAX_PATH bytes). */
static inline doca_error_t pair_path(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, MAX_PATH, "%s/%s", dir, name);

	return n > 0 && n < MAX_PATH ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
}

/* "BB:DD.F" into a doca_pci_bdf. */
static inline doca_error_t parse_pci_addr(const char *text, struct doca_pci_bdf *out)
{
	unsigned int bus, device, function;
	char end;

	if (sscanf(text, "%x:%x.%x%c", &bus, &device, &function, &end) != 3 || bus > 0xff || device > 0x1f ||
	    function > 7)
		return DOCA_ERROR_INVALID_VALUE;
	out->raw = 0;
	out->bus = bus;
	out->device = device;
	out->function = function;
	return DOCA_SUCCESS;
}

/* Opens the local device at pci (the 1.4 form of the list). */
static inline doca_error_t open_device_at(const char *pci, struct doca_dev **dev)
{
	struct doca_devinfo **list;
	struct doca_pci_bdf want, addr;
	uint32_t n = 0, i;
	doca_error_t result;

	result = parse_pci_addr(pci, &want);
	if (result != DOCA_SUCCESS)
		return result;
	result = doca_devinfo_list_create(&list, &n);
	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		if (doca_devinfo_property_get(list[i], DOCA_DEVINFO_PROPERTY_PCI_ADDR, (uint8_t *)&addr,
					      sizeof(addr)) == DOCA_SUCCESS &&
		    addr.raw == want.raw) {
			result = doca_dev_open(list[i], dev);
			break;
		}
	}
	doca_devinfo_list_destroy(list);
	return result;
}

#endif
