/*
 * doca_rdma_bridge.h: the bridge between DOCA devices and buffers and rdma-core's verbs
 * objects. Where no RDMA device exists (the software DOCA's machine), every call answers
 * DOCA_ERROR_NOT_SUPPORTED and logs why.
 */
#ifndef DOCA_RDMA_BRIDGE_H_
#define DOCA_RDMA_BRIDGE_H_

#include <stdint.h>
#include <infiniband/verbs.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_buf;

/** The verbs protection domain of a device. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_get_dev_pd(const struct doca_dev *dev, struct ibv_pd **pd);

/** Opens the device that a verbs protection domain belongs to. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_open_dev_from_pd(struct ibv_pd *pd, struct doca_dev **dev);

/** The memory key of a buffer for a device. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_bridge_get_buf_mkey(const struct doca_buf *buf, struct doca_dev *dev, uint32_t *mkey);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_RDMA_BRIDGE_H_ */
