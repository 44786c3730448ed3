/*
 * doca_sync_event.h: sync events (task generation): a 64-bit value that publishers
 * update and subscribers wait on. Started on its own (doca_sync_event_start) it is used
 * with the synchronous calls; as a context of a progress engine it runs tasks: get,
 * notify_set, notify_add, wait_gt, wait_eq and wait_neq.
 */
#ifndef DOCA_SYNC_EVENT_H_
#define DOCA_SYNC_EVENT_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_ctx.h>
#include <doca_error.h>
#include <doca_pe.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_sync_event;
struct doca_dev;
struct doca_devinfo;

/** Creates a sync event. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_create(struct doca_sync_event **event);

/** Creates a sync event from another process's export. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
						struct doca_sync_event **event);

/** Destroys a stopped sync event (its context idle, its tasks freed). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_destroy(struct doca_sync_event *event);

/** The event as a context of a progress engine (it takes no device). */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_sync_event_as_ctx(struct doca_sync_event *event);

/** The CPU of a device publishes. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_cpu(struct doca_sync_event *event, struct doca_dev *dev);

/** The DPU publishes. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_dpu(struct doca_sync_event *event);

/** The process on the other side of the PCIe link (host or DPU) publishes. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_remote_pci(struct doca_sync_event *event);

/** The process on the other side of the PCIe link (host or DPU) subscribes. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_remote_pci(struct doca_sync_event *event);

/** A descriptor of the event for the other side of the PCIe link (either side may
 * export; the DPU side's importing device must represent an exporting host device). It
 * stays valid until the event is destroyed. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_remote_pci(struct doca_sync_event *event, struct doca_dev *dev,
						  const uint8_t **data, size_t *sz);

/** DOCA_SUCCESS when the device exports sync events over PCIe. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_remote_pci_supported(const struct doca_devinfo *devinfo);

/* DOCA 2.5-2.8's names of the two above, which programs of that time call. */
/** doca_sync_event_export_to_remote_pci under its earlier name. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_dpu(struct doca_sync_event *event, struct doca_dev *dev, const uint8_t **data,
					   size_t *sz);
/** doca_sync_event_cap_is_export_to_remote_pci_supported under its earlier name. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_dpu_supported(const struct doca_devinfo *devinfo);

/** DOCA_SUCCESS when the device creates sync events from the other side's exports. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_create_from_export_supported(const struct doca_devinfo *devinfo);

/** Waits, polling, until (value & mask) == value given. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_eq(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/** As doca_sync_event_wait_eq, yielding the processor between polls. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_eq_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/** Polls until (event & mask) != value. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_neq(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/** As doca_sync_event_wait_neq, yielding the processor between polls. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_neq_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/** A remote network peer publishes (DOCA_ERROR_NOT_SUPPORTED here). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_publisher_location_remote_net(struct doca_sync_event *event);

/** The CPU of a device subscribes. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_cpu(struct doca_sync_event *event, struct doca_dev *dev);

/** The DPU subscribes. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_dpu(struct doca_sync_event *event);

/** A remote network peer subscribes (DOCA_ERROR_NOT_SUPPORTED here). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_add_subscriber_location_remote_net(struct doca_sync_event *event);

struct doca_sync_event_remote_net;

/**
 * A descriptor a peer on the network turns into its handle of this event
 * (doca_sync_event_remote_net_create_from_export); the event needs a remote net
 * location. It stays valid until the event is destroyed.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_remote_net(struct doca_sync_event *event, const uint8_t **data, size_t *sz);

/** DOCA_SUCCESS when the device can share sync events with peers on the network. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_is_export_to_remote_net_supported(const struct doca_devinfo *devinfo);

/** The handle of a peer's exported event, which RDMA's remote net sync event tasks name. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_create_from_export(struct doca_dev *dev,
							   const uint8_t *data,
							   size_t sz,
							   struct doca_sync_event_remote_net **event);

/** DOCA_SUCCESS when the device can make handles of peers' exported events. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_remote_net_is_create_from_export_supported(const struct doca_devinfo *devinfo);

/** Destroys a handle of a peer's event. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_remote_net_destroy(struct doca_sync_event_remote_net *event);

/** Uses the program's 8-byte aligned counter (before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_set_addr(struct doca_sync_event *event, uint64_t *addr);

/** Starts the event for the synchronous calls. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_start(struct doca_sync_event *event);

/** Stops the synchronous mode. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_stop(struct doca_sync_event *event);

/** Reads the value. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get(struct doca_sync_event *event, uint64_t *value);

/** Adds to the value atomically; fetched (may be NULL) gets the value before. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_update_add(struct doca_sync_event *event, uint64_t value, uint64_t *fetched);

/** Sets the value. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_update_set(struct doca_sync_event *event, uint64_t value);

/** Waits, spinning, until (event & mask) > value. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_gt(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/** Waits, yielding the CPU, until (event & mask) > value. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_gt_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/* ---- get ---- */

struct doca_sync_event_task_get;

/** The callback of a completed (or failed) get task. */
typedef void (*doca_sync_event_task_get_completion_cb_t)(struct doca_sync_event_task_get *task, union doca_data task_user_data,
				union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs get tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_get_is_supported(const struct doca_devinfo *devinfo);

/** Sets the get callbacks and pool size (while idle; DOCA_ERROR_NOT_PERMITTED otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_get_set_conf(struct doca_sync_event *event, doca_sync_event_task_get_completion_cb_t task_completion_cb,
				doca_sync_event_task_get_completion_cb_t task_error_cb, uint32_t num_tasks);

/** Takes a get task from the pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_get_alloc_init(struct doca_sync_event *event, uint64_t *ret_val_ptr, union doca_data user_data,
				struct doca_sync_event_task_get **task);

/** The generic task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_get_as_doca_task(struct doca_sync_event_task_get *task);

/** Sets ret_val_ptr. */
DOCA_EXPERIMENTAL
void doca_sync_event_task_get_set_ret_val_ptr(struct doca_sync_event_task_get *task, uint64_t *ret_val_ptr);

/** The task's ret_val_ptr. */
DOCA_EXPERIMENTAL
uint64_t *doca_sync_event_task_get_get_ret_val_ptr(const struct doca_sync_event_task_get *task);

/* ---- notify_set ---- */

struct doca_sync_event_task_notify_set;

/** The callback of a completed (or failed) notify_set task. */
typedef void (*doca_sync_event_task_notify_set_completion_cb_t)(struct doca_sync_event_task_notify_set *task, union doca_data task_user_data,
				union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs notify_set tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_notify_set_is_supported(const struct doca_devinfo *devinfo);

/** Sets the notify_set callbacks and pool size (while idle; DOCA_ERROR_NOT_PERMITTED otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_set_set_conf(struct doca_sync_event *event, doca_sync_event_task_notify_set_completion_cb_t task_completion_cb,
				doca_sync_event_task_notify_set_completion_cb_t task_error_cb, uint32_t num_tasks);

/** Takes a notify_set task from the pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_set_alloc_init(struct doca_sync_event *event, uint64_t set_val, union doca_data user_data,
				struct doca_sync_event_task_notify_set **task);

/** The generic task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_notify_set_as_doca_task(struct doca_sync_event_task_notify_set *task);

/** Sets set_val. */
DOCA_EXPERIMENTAL
void doca_sync_event_task_notify_set_set_set_val(struct doca_sync_event_task_notify_set *task, uint64_t set_val);

/** The task's set_val. */
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_notify_set_get_set_val(const struct doca_sync_event_task_notify_set *task);

/* ---- notify_add ---- */

struct doca_sync_event_task_notify_add;

/** The callback of a completed (or failed) notify_add task. */
typedef void (*doca_sync_event_task_notify_add_completion_cb_t)(struct doca_sync_event_task_notify_add *task, union doca_data task_user_data,
				union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs notify_add tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_notify_add_is_supported(const struct doca_devinfo *devinfo);

/** Sets the notify_add callbacks and pool size (while idle; DOCA_ERROR_NOT_PERMITTED otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_add_set_conf(struct doca_sync_event *event, doca_sync_event_task_notify_add_completion_cb_t task_completion_cb,
				doca_sync_event_task_notify_add_completion_cb_t task_error_cb, uint32_t num_tasks);

/** Takes a notify_add task from the pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_notify_add_alloc_init(struct doca_sync_event *event, uint64_t inc_val, uint64_t *fetched_val_ptr, union doca_data user_data,
				struct doca_sync_event_task_notify_add **task);

/** The generic task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_notify_add_as_doca_task(struct doca_sync_event_task_notify_add *task);

/** Sets inc_val. */
DOCA_EXPERIMENTAL
void doca_sync_event_task_notify_add_set_inc_val(struct doca_sync_event_task_notify_add *task, uint64_t inc_val);

/** The task's inc_val. */
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_notify_add_get_inc_val(const struct doca_sync_event_task_notify_add *task);

/** Sets fetched_val_ptr. */
DOCA_EXPERIMENTAL
void doca_sync_event_task_notify_add_set_fetched_val_ptr(struct doca_sync_event_task_notify_add *task, uint64_t *fetched_val_ptr);

/** The task's fetched_val_ptr. */
DOCA_EXPERIMENTAL
uint64_t *doca_sync_event_task_notify_add_get_fetched_val_ptr(const struct doca_sync_event_task_notify_add *task);

/* ---- wait_gt ---- */

struct doca_sync_event_task_wait_gt;

/** The callback of a completed (or failed) wait_gt task. */
typedef void (*doca_sync_event_task_wait_gt_completion_cb_t)(struct doca_sync_event_task_wait_gt *task, union doca_data task_user_data,
				union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs wait_gt tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_wait_gt_is_supported(const struct doca_devinfo *devinfo);

/** Sets the wait_gt callbacks and pool size (while idle; DOCA_ERROR_NOT_PERMITTED otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_gt_set_conf(struct doca_sync_event *event, doca_sync_event_task_wait_gt_completion_cb_t task_completion_cb,
				doca_sync_event_task_wait_gt_completion_cb_t task_error_cb, uint32_t num_tasks);

/** Takes a wait_gt task from the pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_gt_alloc_init(struct doca_sync_event *event, uint64_t wait_val, uint64_t mask, union doca_data user_data,
				struct doca_sync_event_task_wait_gt **task);

/** The generic task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_wait_gt_as_doca_task(struct doca_sync_event_task_wait_gt *task);

/** Sets wait_val. */
DOCA_EXPERIMENTAL
void doca_sync_event_task_wait_gt_set_wait_val(struct doca_sync_event_task_wait_gt *task, uint64_t wait_val);

/** The task's wait_val. */
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_wait_gt_get_wait_val(const struct doca_sync_event_task_wait_gt *task);

/** Sets mask. */
DOCA_EXPERIMENTAL
void doca_sync_event_task_wait_gt_set_mask(struct doca_sync_event_task_wait_gt *task, uint64_t mask);

/** The task's mask. */
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_wait_gt_get_mask(const struct doca_sync_event_task_wait_gt *task);

/* ---- wait_eq ---- */

struct doca_sync_event_task_wait_eq;

/** The callback of a completed (or failed) wait_eq task. */
typedef void (*doca_sync_event_task_wait_eq_completion_cb_t)(struct doca_sync_event_task_wait_eq *task, union doca_data task_user_data,
				union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs wait_eq tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_wait_eq_is_supported(const struct doca_devinfo *devinfo);

/** Sets the wait_eq callbacks and pool size (while idle; DOCA_ERROR_NOT_PERMITTED otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_eq_set_conf(struct doca_sync_event *event, doca_sync_event_task_wait_eq_completion_cb_t task_completion_cb,
				doca_sync_event_task_wait_eq_completion_cb_t task_error_cb, uint32_t num_tasks);

/** Takes a wait_eq task from the pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_eq_alloc_init(struct doca_sync_event *event, uint64_t wait_val, uint64_t mask, union doca_data user_data,
				struct doca_sync_event_task_wait_eq **task);

/** The generic task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_wait_eq_as_doca_task(struct doca_sync_event_task_wait_eq *task);

/** Sets wait_val. */
DOCA_EXPERIMENTAL
void doca_sync_event_task_wait_eq_set_wait_val(struct doca_sync_event_task_wait_eq *task, uint64_t wait_val);

/** The task's wait_val. */
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_wait_eq_get_wait_val(const struct doca_sync_event_task_wait_eq *task);

/** Sets mask. */
DOCA_EXPERIMENTAL
void doca_sync_event_task_wait_eq_set_mask(struct doca_sync_event_task_wait_eq *task, uint64_t mask);

/** The task's mask. */
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_wait_eq_get_mask(const struct doca_sync_event_task_wait_eq *task);

/* ---- wait_neq ---- */

struct doca_sync_event_task_wait_neq;

/** The callback of a completed (or failed) wait_neq task. */
typedef void (*doca_sync_event_task_wait_neq_completion_cb_t)(struct doca_sync_event_task_wait_neq *task, union doca_data task_user_data,
				union doca_data ctx_user_data);

/** DOCA_SUCCESS when the device runs wait_neq tasks. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_cap_task_wait_neq_is_supported(const struct doca_devinfo *devinfo);

/** Sets the wait_neq callbacks and pool size (while idle; DOCA_ERROR_NOT_PERMITTED otherwise). */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_neq_set_conf(struct doca_sync_event *event, doca_sync_event_task_wait_neq_completion_cb_t task_completion_cb,
				doca_sync_event_task_wait_neq_completion_cb_t task_error_cb, uint32_t num_tasks);

/** Takes a wait_neq task from the pool. */
DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_task_wait_neq_alloc_init(struct doca_sync_event *event, uint64_t wait_val, uint64_t mask, union doca_data user_data,
				struct doca_sync_event_task_wait_neq **task);

/** The generic task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_sync_event_task_wait_neq_as_doca_task(struct doca_sync_event_task_wait_neq *task);

/** Sets wait_val. */
DOCA_EXPERIMENTAL
void doca_sync_event_task_wait_neq_set_wait_val(struct doca_sync_event_task_wait_neq *task, uint64_t wait_val);

/** The task's wait_val. */
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_wait_neq_get_wait_val(const struct doca_sync_event_task_wait_neq *task);

/** Sets mask. */
DOCA_EXPERIMENTAL
void doca_sync_event_task_wait_neq_set_mask(struct doca_sync_event_task_wait_neq *task, uint64_t mask);

/** The task's mask. */
DOCA_EXPERIMENTAL
uint64_t doca_sync_event_task_wait_neq_get_mask(const struct doca_sync_event_task_wait_neq *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SYNC_EVENT_H_ */
