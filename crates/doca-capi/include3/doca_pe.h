/*
 * doca_pe.h: the progress engine and tasks. Contexts connected to an engine get their
 * tasks' completions, through the callbacks their libraries' *_set_conf named, when the
 * program calls doca_pe_progress; an idle program can sleep on the engine's
 * notification handle (an eventfd).
 */
#ifndef DOCA_PE_H_
#define DOCA_PE_H_

#include <stdlib.h>

#include <doca_compat.h>
#include <doca_ctx.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_pe;
struct doca_task;
struct doca_ctx;

/** The shape of every task callback: the task, its user data and its context's. */
typedef void (*doca_task_completion_cb_t)(struct doca_task *task, union doca_data task_user_data,
					  union doca_data ctx_user_data);

/** Which contexts a notified engine progresses: here, every mode progresses all. */
enum doca_pe_event_mode {
	DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE = 0,
	DOCA_PE_EVENT_MODE_PROGRESS_ALL = 1,
};

/** Flags of doca_task_submit_ex (hints: every task is reported at once here). */
enum doca_task_submit_flag {
	DOCA_TASK_SUBMIT_FLAG_NONE = 0,
	DOCA_TASK_SUBMIT_FLAG_FLUSH = 1 << 0,
	DOCA_TASK_SUBMIT_FLAG_OPTIMIZE_REPORTS = 1 << 1,
};

/** Creates a progress engine. */
DOCA_STABLE
doca_error_t doca_pe_create(struct doca_pe **pe);

/** Destroys an engine (DOCA_ERROR_IN_USE while contexts are connected: destroy them first). */
DOCA_STABLE
doca_error_t doca_pe_destroy(struct doca_pe *pe);

/**
 * Runs completion callbacks and state changes that are ready: 1 when anything happened,
 * else 0. Callbacks run inside this call and must not call it.
 */
DOCA_STABLE
uint8_t doca_pe_progress(struct doca_pe *pe);

/** The engine's notification handle (the same for the engine's life). */
DOCA_STABLE
doca_error_t doca_pe_get_notification_handle(const struct doca_pe *pe, doca_notification_handle_t *handle);

/** Sets a Windows I/O completion port for the engine to notify (DOCA 2.6); on Linux,
 * DOCA_ERROR_NOT_SUPPORTED. */
DOCA_STABLE
doca_error_t doca_pe_set_notification_handle(struct doca_pe *pe, doca_notification_handle_t handle,
					     union doca_data completion_key);

/** Arms the handle: it becomes readable when a completion is ready. */
DOCA_STABLE
doca_error_t doca_pe_request_notification(struct doca_pe *pe);

/** Clears the engine's handle after waking, before progressing (the handle given is not checked). */
DOCA_STABLE
doca_error_t doca_pe_clear_notification(struct doca_pe *pe, doca_notification_handle_t handle);

/** Tasks submitted on this engine and not yet completed. */
DOCA_STABLE
doca_error_t doca_pe_get_num_inflight_tasks(const struct doca_pe *pe, size_t *num_inflight_tasks);

/** Sets which contexts a notified engine progresses. */
DOCA_EXPERIMENTAL
doca_error_t doca_pe_set_event_mode(struct doca_pe *pe, enum doca_pe_event_mode mode);

/**
 * Connects an idle context (DOCA_ERROR_BAD_STATE otherwise) to the engine, for its
 * life (DOCA_ERROR_NOT_PERMITTED when it already has one).
 */
DOCA_STABLE
doca_error_t doca_pe_connect_ctx(struct doca_pe *pe, struct doca_ctx *ctx);

/** Submits a task; on success the task is DOCA's until its callback runs. */
DOCA_STABLE
doca_error_t doca_task_submit(struct doca_task *task);

/** Submits a task after checking it (DOCA_ERROR_INVALID_VALUE: not submitted). */
DOCA_STABLE
doca_error_t doca_task_try_submit(struct doca_task *task);

/** Submits a task with flags of enum doca_task_submit_flag. */
DOCA_EXPERIMENTAL
doca_error_t doca_task_submit_ex(struct doca_task *task, uint32_t flags);

/** Returns a task to its context's pool (not while it is submitted). */
DOCA_STABLE
void doca_task_free(struct doca_task *task);

/** DOCA_SUCCESS, or the error the task completed with. */
DOCA_STABLE
doca_error_t doca_task_get_status(const struct doca_task *task);

/** Sets the task's user data. */
DOCA_STABLE
void doca_task_set_user_data(struct doca_task *task, union doca_data user_data);

/** The task's user data. */
DOCA_STABLE
union doca_data doca_task_get_user_data(const struct doca_task *task);

/** The task's context. */
DOCA_STABLE
struct doca_ctx *doca_task_get_ctx(const struct doca_task *task);

/*
 * Task batches. In DOCA a task batch is allocated by a context whose library batches its
 * tasks (the Ethernet send queue); no library here does, so none exists: these answer
 * DOCA_ERROR_INVALID_VALUE (the getters a neutral value) for any pointer.
 */
struct doca_task_batch;

/** Batch sizes of a task batch. */
enum doca_task_batch_max_tasks_number {
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_16,
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_32,
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_64,
	DOCA_TASK_BATCH_MAX_TASKS_NUMBER_128,
};

/** Batch sizes of an event batch. */
enum doca_event_batch_events_number {
	DOCA_EVENT_BATCH_EVENTS_NUMBER_1,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_2,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_4,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_8,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_16,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_32,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_64,
	DOCA_EVENT_BATCH_EVENTS_NUMBER_128,
};

/** Submits a task batch. */
DOCA_EXPERIMENTAL
doca_error_t doca_task_batch_submit(struct doca_task_batch *task_batch);

/** Submits a task batch after validating it. */
DOCA_EXPERIMENTAL
doca_error_t doca_task_batch_try_submit(struct doca_task_batch *task_batch);

/** Frees a task batch back to its context. */
DOCA_EXPERIMENTAL
void doca_task_batch_free(struct doca_task_batch *task_batch);

/** A completed task batch's status. */
DOCA_EXPERIMENTAL
doca_error_t doca_task_batch_get_status(const struct doca_task_batch *task_batch);

/** Sets a task batch's user data. */
DOCA_EXPERIMENTAL
void doca_task_batch_set_user_data(struct doca_task_batch *task_batch, union doca_data user_data);

/** A task batch's user data. */
DOCA_EXPERIMENTAL
union doca_data doca_task_batch_get_user_data(const struct doca_task_batch *task_batch);

/** The context that allocated a task batch. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_task_batch_get_ctx(const struct doca_task_batch *task_batch);

/** The user data of the context that allocated a task batch. */
DOCA_EXPERIMENTAL
union doca_data doca_task_batch_get_ctx_user_data(const struct doca_task_batch *task_batch);

/** The number of tasks in a task batch. */
DOCA_EXPERIMENTAL
uint16_t doca_task_batch_get_tasks_num(struct doca_task_batch *task_batch);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_PE_H_ */
