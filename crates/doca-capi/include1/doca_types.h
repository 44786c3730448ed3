/*
 * doca_types.h (DOCA 1.x): types shared by the 1.x headers.
 */
#ifndef DOCA_TYPES_H_
#define DOCA_TYPES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A waitable handle: a file descriptor on Linux. */
typedef int doca_event_handle_t;

/** User data carried through the API: a pointer or a 64-bit number. */
union doca_data {
	void *ptr;    /**< As a pointer. */
	uint64_t u64; /**< As a number. */
};

/** A PCI function's bus, device and function numbers; raw holds all three. */
struct doca_pci_bdf {
	union {
		uint16_t raw; /**< bus << 8 | device << 3 | function. */
		struct {
			uint16_t function : 3; /**< Function, 0..7. */
			uint16_t device : 5;   /**< Device, 0..31. */
			uint16_t bus : 8;      /**< Bus, 0..255. */
		};
	};
};

/** Kind of PCI function. */
enum doca_pci_func_type {
	DOCA_PCI_FUNC_PF = 0, /**< Physical function. */
	DOCA_PCI_FUNC_VF,     /**< Virtual function. */
	DOCA_PCI_FUNC_SF,     /**< Sub-function. */
};

#ifdef __cplusplus
}
#endif

#endif /* DOCA_TYPES_H_ */
