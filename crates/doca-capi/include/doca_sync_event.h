/*
 * doca_sync_event.h: a 64-bit event counter that publishers update and subscribers
 * wait on, synchronously or through work queue jobs (asynchronous mode, via
 * doca_sync_event_as_ctx). DPA and GPU locations are not available here.
 */
#ifndef DOCA_SYNC_EVENT_H_
#define DOCA_SYNC_EVENT_H_

#include <stddef.h>
#include <stdint.h>
#include <doca_compat.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_sync_event;
struct doca_dpa_sync_event;
struct doca_gpu_sync_event;
struct doca_dpa;
struct doca_gpu;

/** Creates a sync event. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_create(struct doca_sync_event **event);

/** Creates a sync event from another process's export (doca_sync_event_export_to_dpu). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
						struct doca_sync_event **event);

/** DOCA_SUCCESS when the device can create sync events from exports. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get_create_from_export_supported(const struct doca_devinfo *devinfo);

/** Destroys a sync event (stopped first when started). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_destroy(struct doca_sync_event *event);

/** Declares a CPU publisher. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_publisher_add_location_cpu(struct doca_sync_event *event, struct doca_dev *dev);

/** Declares a DPA publisher (not supported here). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_publisher_add_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa);

/** Declares a GPU publisher (not supported here). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_publisher_add_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu);

/** Declares a DPU publisher. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_publisher_add_location_dpu(struct doca_sync_event *event);

/** Declares a CPU subscriber. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_subscriber_add_location_cpu(struct doca_sync_event *event, struct doca_dev *dev);

/** Declares a DPA subscriber (not supported here). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_subscriber_add_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa);

/** Declares a GPU subscriber (not supported here). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_subscriber_add_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu);

/** Declares a DPU subscriber. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_subscriber_add_location_dpu(struct doca_sync_event *event);

/** Keeps the counter at addr (8-byte aligned, valid until destroy) instead of in the event. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_set_addr(struct doca_sync_event *event, uint64_t *addr);

/** Starts the event (synchronous mode). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_start(struct doca_sync_event *event);

/** Stops the event. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_stop(struct doca_sync_event *event);

/** The event as a context, for asynchronous mode (its jobs go through work queues). */
__DOCA_EXPERIMENTAL
struct doca_ctx *doca_sync_event_as_ctx(struct doca_sync_event *event);

/** Sync event job types. */
enum doca_sync_event_job_types {
	DOCA_SYNC_EVENT_JOB_WAIT_GT = DOCA_ACTION_SYNC_EVENT_FIRST + 1,
	DOCA_SYNC_EVENT_JOB_GET,
	DOCA_SYNC_EVENT_JOB_UPDATE_SET,
	DOCA_SYNC_EVENT_JOB_UPDATE_ADD,
};

/** The result of a sync event job. */
struct doca_sync_event_result {
	doca_error_t result;
};

/** DOCA_SUCCESS when the device runs this job type. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_job_get_supported(struct doca_devinfo *devinfo, enum doca_sync_event_job_types type);

/** Completes once (counter & mask) > value. */
struct doca_sync_event_job_wait {
	struct doca_job base;
	uint64_t value;
	uint64_t mask;
};

/** Reads the counter into *value when the job completes. */
struct doca_sync_event_job_get {
	struct doca_job base;
	uint64_t *value;
};

/** Sets the counter. */
struct doca_sync_event_job_update_set {
	struct doca_job base;
	uint64_t value;
};

/** Adds to the counter; *fetched gets the value before the addition. */
struct doca_sync_event_job_update_add {
	struct doca_job base;
	uint64_t value;
	uint64_t *fetched;
};

/** Exports the event for a process on the DPU side; the blob lives as long as the event. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_dpu(struct doca_sync_event *event, struct doca_dev *dev, const uint8_t **data,
					   size_t *sz);

/** DOCA_SUCCESS when the device can export sync events to the DPU. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get_export_to_dpu_supported(const struct doca_devinfo *devinfo);

/** A sync event handle on the DPA. */
typedef uint64_t doca_dpa_dev_sync_event_t;

/** Exports to a DPA (not supported here). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_dpa(struct doca_sync_event *event, struct doca_dpa *dpa,
					   doca_dpa_dev_sync_event_t *dpa_dev_se_handle);

/** DOCA_SUCCESS when the device can export to a DPA. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get_export_to_dpa_supported(const struct doca_devinfo *devinfo);

/** A sync event handle on the GPU. */
typedef uint64_t doca_gpu_dev_sync_event_t;

/** Exports to a GPU (not supported here). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_gpu(struct doca_sync_event *event, struct doca_gpu *gpu,
					   doca_gpu_dev_sync_event_t **gpu_dev_se);

/** DOCA_SUCCESS when the device can export to a GPU. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get_export_to_gpu_supported(const struct doca_devinfo *devinfo);

/** A handle for remote peers. */
typedef struct doca_sync_event_remote {
	uint64_t data[2];
} doca_sync_event_remote_t;

/** Exports a handle for remote peers (not supported here). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_remote(struct doca_sync_event *event, doca_sync_event_remote_t *handle);

/** Reads the counter. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get(struct doca_sync_event *event, uint64_t *value);

/** Adds to the counter atomically; fetched (may be NULL) gets the value before. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_update_add(struct doca_sync_event *event, uint64_t value, uint64_t *fetched);

/** Sets the counter. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_update_set(struct doca_sync_event *event, uint64_t value);

/** Spins until (counter & mask) > value. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_gt(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/** Waits until (counter & mask) > value, yielding the CPU between checks. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_gt_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SYNC_EVENT_H_ */
