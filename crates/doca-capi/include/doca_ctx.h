/*
 * doca_ctx.h: contexts, work queues, jobs and events.
 *
 * A library context (DMA, SHA, EC, sync event) gets a device, is started and attached
 * to one or more work queues. Jobs are submitted to a work queue and their completion
 * events are retrieved from it, by polling doca_workq_progress_retrieve or by waiting
 * on the work queue's event handle (an eventfd) in event-driven mode.
 */
#ifndef DOCA_CTX_H_
#define DOCA_CTX_H_

#include <stdint.h>
#include <doca_compat.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_ctx;
struct doca_workq;
struct doca_gpu;

/** Bits of a job type below a library's base. */
#define DOCA_ACTION_SDK_RANGE 16

/** The base of each library's job types. */
enum doca_action_type {
	DOCA_ACTION_NONE = 0,
	DOCA_ACTION_DMA_FIRST = 1 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_DEVEMU_FIRST = 2 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_DEVEMU_PCI_FIRST = 3 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_VIRTIO_FS_FIRST = 4 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_VBLK_FIRST = 5 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_REGEX_FIRST = 6 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_NVME_FIRST = 7 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_APPSHIELD_FIRST = 8 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_SHA_FIRST = 9 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_COMPRESS_FIRST = 10 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_IPSEC_FIRST = 11 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_RMAX_FIRST = 12 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_RDMA_FIRST = 13 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_GRAPH_FIRST = 14 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_SYNC_EVENT_FIRST = 15 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_DPI_FIRST = 16 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_EC_FIRST = 17 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_NVRD_TRANSPORT_FIRST = 18 << DOCA_ACTION_SDK_RANGE,
};

/** Job flags. */
enum doca_job_flags {
	DOCA_JOB_FLAGS_NONE = 0,
};

/** The part every job starts with. */
struct doca_job {
	int type;		    /**< The job type, e.g. DOCA_DMA_JOB_MEMCPY. */
	int flags;		    /**< enum doca_job_flags. */
	struct doca_ctx *ctx;	    /**< The context that runs the job. */
	union doca_data user_data;  /**< Given back in the job's event. */
};

/** A completion: the job's type and user data, and its result. */
struct doca_event {
	int type;		   /**< The job type. */
	union doca_data user_data; /**< The job's user data. */
	union doca_data result;	   /**< result.u64: the job's doca_error_t. */
};

/** Creates a work queue holding up to depth jobs in flight. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_create(uint32_t depth, struct doca_workq **workq);

/** Destroys a work queue (DOCA_ERROR_IN_USE while contexts are attached). */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_destroy(struct doca_workq *workq);

/**
 * Submits a job. The job struct may be reused once this returns; its buffers must stay
 * untouched until its event is retrieved. DOCA_ERROR_NO_MEMORY: the queue is full;
 * DOCA_ERROR_BAD_STATE: the context is stopped; DOCA_ERROR_NOT_FOUND: the context is
 * not attached to this work queue; DOCA_ERROR_INVALID_VALUE: a malformed job.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_submit(struct doca_workq *workq, struct doca_job const *job);

/** Arms the event handle: it becomes readable at the next completion. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_event_handle_arm(struct doca_workq *workq);

/** Clears the event handle after it woke the program. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_event_handle_clear(struct doca_workq *workq, doca_event_handle_t handle);

/** Retrieve flags. */
enum doca_workq_retrieve_flags {
	DOCA_WORKQ_RETRIEVE_FLAGS_NONE,
};

/**
 * Retrieves one completion. DOCA_SUCCESS: ev holds a successful job's event;
 * DOCA_ERROR_AGAIN: nothing completed (ev untouched); DOCA_ERROR_IO_FAILED: ev holds a
 * failed job's event, ev->result.u64 its error.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_progress_retrieve(struct doca_workq *workq, struct doca_event *ev, int flags);

/** The most contexts one work queue can serve. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_get_max_num_ctx(uint32_t *max_num_ctx);

/** The depth given at creation. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_get_depth(const struct doca_workq *workq, uint32_t *depth);

/** Whether event-driven mode is on. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_get_event_driven_enable(struct doca_workq *workq, uint8_t *enabled);

/** The event handle (event-driven mode only). */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_get_event_handle(struct doca_workq *workq, doca_event_handle_t *handle);

/** Turns event-driven mode on or off (while no context is attached). */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_set_event_driven_enable(struct doca_workq *workq, uint8_t enable);

/** Uses an external completion port (not supported on Linux). */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_set_event_handle(struct doca_workq *workq, doca_event_handle_t event_handle,
					 uintptr_t completion_key);

/** Gives the context its device (while stopped). */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_dev_add(struct doca_ctx *ctx, struct doca_dev *dev);

/** Takes the device back (while stopped). */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_dev_rm(struct doca_ctx *ctx, struct doca_dev *dev);

/** Starts the context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_start(struct doca_ctx *ctx);

/** Stops the context (DOCA_ERROR_IN_USE while work queues are attached). */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_stop(struct doca_ctx *ctx);

/** Attaches a work queue (while started). */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_workq_add(struct doca_ctx *ctx, struct doca_workq *workq);

/** Detaches a work queue (no job of the context may be in flight on it). */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_workq_rm(struct doca_ctx *ctx, struct doca_workq *workq);

/** Whether the context works with event-driven work queues. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_get_event_driven_supported(struct doca_ctx *ctx, uint8_t *event_supported);

/** Runs the datapath on a GPU (not supported here). */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_datapath_on_gpu(struct doca_ctx *ctx, struct doca_gpu *gpu_dev);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CTX_H_ */
