/*
 * doca_ctx.h (DOCA 1.x): contexts, work queues, jobs and events.
 *
 * A library context gets its device and is started; work queues are then added to it
 * (one per thread). Jobs are submitted to a work queue and their completion events
 * retrieved from it. Before stop, the work queues are removed; after stop, the device.
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

/** Bits of a job type below a library's base. */
#define DOCA_ACTION_SDK_RANGE 16

/** The base of each library's job types. */
enum doca_action_type {
	DOCA_ACTION_NONE = 0,
	DOCA_ACTION_DMA_FIRST = 1 << DOCA_ACTION_SDK_RANGE,
};

/** Job flags. */
enum doca_job_flags {
	DOCA_JOB_FLAGS_NONE = 0,
};

/** The part every job starts with. */
struct doca_job {
	int type;		   /**< The job type, e.g. DOCA_DMA_JOB_MEMCPY. */
	int flags;		   /**< enum doca_job_flags. */
	struct doca_ctx *ctx;	   /**< The context that runs the job. */
	union doca_data user_data; /**< Given back in the job's event. */
};

/** A completion: the job's type and user data, and its result. */
struct doca_event {
	int type;		   /**< The job type. */
	union doca_data user_data; /**< The job's user data. */
	union doca_data result;	   /**< result.u64: the job's doca_error_t. */
};

/** Properties of a work queue. */
enum doca_workq_property {
	DOCA_WORKQ_PROPERTY_DEPTH = 0, /**< uint32_t; set while added to no context. */
};

/** Retrieve flags. */
enum doca_workq_retrieve_flags {
	DOCA_WORKQ_RETRIEVE_FLAGS_NONE = 0,
};

/** Gives the context a device (while stopped). */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_dev_add(struct doca_ctx *ctx, struct doca_dev *dev);

/** Takes the device back (while stopped). */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_dev_rm(struct doca_ctx *ctx, struct doca_dev *dev);

/** Starts the context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_start(struct doca_ctx *ctx);

/** Stops the context (its work queues are removed first). */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_stop(struct doca_ctx *ctx);

/** Adds a work queue to a started context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_workq_add(struct doca_ctx *ctx, struct doca_workq *workq);

/** Removes a work queue (no job of the context in flight on it). */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_workq_rm(struct doca_ctx *ctx, struct doca_workq *workq);

/** A work queue with up to depth jobs in flight. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_create(uint32_t depth, struct doca_workq **workq);

/** Destroys a work queue (removed from every context first). */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_destroy(struct doca_workq *workq);

/** Sets a property (size: the property's size). */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_property_set(struct doca_workq *workq, enum doca_workq_property property,
				     const uint8_t *value, uint32_t size);

/** Reads a property (size: the property's size). */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_property_get(const struct doca_workq *workq, enum doca_workq_property property,
				     uint8_t *value, uint32_t size);

/**
 * Submits a job; the job struct may be reused once this returns, its buffers are left
 * alone until its event is retrieved. DOCA_ERROR_NO_MEMORY: the queue is full.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_submit(struct doca_workq *workq, struct doca_job const *job);

/**
 * Retrieves one event. DOCA_SUCCESS: ev holds a successful job's event;
 * DOCA_ERROR_AGAIN: nothing yet; DOCA_ERROR_IO_FAILED: ev holds a failed job's event,
 * ev->result.u64 its error.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_progress_retrieve(struct doca_workq *workq, struct doca_event *ev, int flags);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CTX_H_ */
