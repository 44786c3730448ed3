/*
 * doca_types.h: types shared by the DOCA headers.
 */
#ifndef DOCA_TYPES_H_
#define DOCA_TYPES_H_

#include <stdint.h>
#include <doca_config.h>

#ifdef __linux__
#include <linux/types.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __linux__
/** A waitable handle: a file descriptor (an eventfd) on Linux. */
typedef int doca_event_handle_t;
#else
typedef void *doca_event_handle_t;
#endif

/** The value of a handle that refers to nothing. */
#define doca_event_invalid_handle -1

/** A notification handle is an event handle. */
typedef doca_event_handle_t doca_notification_handle_t;

/** Bytes in a GID. */
#define DOCA_GID_BYTE_LENGTH 16

/** User data carried through the API: a pointer or a 64-bit number. */
union doca_data {
	void *ptr;    /**< As a pointer. */
	uint64_t u64; /**< As a number. */
};

/** Who may access a memory map's memory, and how. */
enum doca_access_flags {
	DOCA_ACCESS_LOCAL_READ_ONLY = 0,
	DOCA_ACCESS_LOCAL_READ_WRITE = (1 << 0),
	DOCA_ACCESS_RDMA_READ = (1 << 1),
	DOCA_ACCESS_RDMA_WRITE = (1 << 2),
	DOCA_ACCESS_RDMA_ATOMIC = (1 << 3),
	DOCA_ACCESS_DPU_READ_ONLY = (1 << 4),
	DOCA_ACCESS_DPU_READ_WRITE = (1 << 5),
};

/** Kind of PCI function. */
enum doca_pci_func_type {
	DOCA_PCI_FUNC_PF = 0, /**< Physical function. */
	DOCA_PCI_FUNC_VF,     /**< Virtual function. */
	DOCA_PCI_FUNC_SF,     /**< Sub-function. */
};

#ifdef __linux__
typedef __be16 doca_be16_t;
typedef __be32 doca_be32_t;
typedef __be64 doca_be64_t;
#else
typedef uint16_t doca_be16_t;
typedef uint32_t doca_be32_t;
typedef uint64_t doca_be64_t;
#endif

/** Where GPU-visible memory lives. */
enum doca_gpu_mem_type {
	DOCA_GPU_MEM_GPU = 0,
	DOCA_GPU_MEM_GPU_CPU = 1,
	DOCA_GPU_MEM_CPU = 2,
	DOCA_GPU_MEM_CPU_GPU = 3,
};

/** Send-on-time modes of Ethernet queues. */
enum doca_eth_wait_on_time {
	DOCA_ETH_WAIT_ON_TIME_NONE = 0,
	DOCA_ETH_WAIT_ON_TIME_NATIVE = 1,
	DOCA_ETH_WAIT_ON_TIME_DPDK = 2,
};

/** MTU sizes. */
enum doca_mtu_size {
	DOCA_MTU_SIZE_256_BYTES = 0x0,
	DOCA_MTU_SIZE_512_BYTES = 0x1,
	DOCA_MTU_SIZE_1K_BYTES = 0x2,
	DOCA_MTU_SIZE_2K_BYTES = 0x3,
	DOCA_MTU_SIZE_4K_BYTES = 0x4,
	DOCA_MTU_SIZE_RAW_ETHERNET = 0x5,
};

#ifdef DOCA_API_1_5
/*
 * DOCA 1.5 (pkg-config modules under lib/pkgconfig/doca-1.5): a PCI function's bus,
 * device and function numbers; raw holds all three.
 */
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
#endif /* DOCA_API_1_5 */

#ifdef __cplusplus
}
#endif

#endif /* DOCA_TYPES_H_ */
