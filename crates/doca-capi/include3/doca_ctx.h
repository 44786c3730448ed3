/*
 * doca_ctx.h: the context every library instance is, with its states (task
 * generation). A context is connected to a progress engine (doca_pe.h), started, given
 * tasks, and stopped.
 */
#ifndef DOCA_CTX_H_
#define DOCA_CTX_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_ctx;
struct doca_task;

/** Where a context is in its life. */
enum doca_ctx_states {
	DOCA_CTX_STATE_IDLE = 0,     /**< Created or stopped: configurable, takes no tasks. */
	DOCA_CTX_STATE_STARTING = 1, /**< Starting asynchronously: no tasks yet. */
	DOCA_CTX_STATE_RUNNING = 2,  /**< Takes tasks. */
	DOCA_CTX_STATE_STOPPING = 3, /**< Stopping: tasks in flight complete or are flushed. */
};

/** Called after a context changed state (it is already in next_state). */
typedef void (*doca_ctx_state_changed_callback_t)(const union doca_data user_data, struct doca_ctx *ctx,
						  enum doca_ctx_states prev_state,
						  enum doca_ctx_states next_state);

/**
 * Starts a context connected to a progress engine: DOCA_SUCCESS when it is running
 * (DOCA_ERROR_NOT_CONNECTED without an engine, DOCA_ERROR_BAD_STATE unless idle).
 */
DOCA_STABLE
doca_error_t doca_ctx_start(struct doca_ctx *ctx);

/**
 * Stops a context: DOCA_SUCCESS when it is idle now; DOCA_ERROR_IN_PROGRESS while tasks
 * are in flight or allocated: it is stopping, tasks that never ran complete with an
 * error, and progressing the engine reports it idle once every task is freed.
 */
DOCA_STABLE
doca_error_t doca_ctx_stop(struct doca_ctx *ctx);

/** Tasks of this context submitted and not yet completed. */
DOCA_STABLE
doca_error_t doca_ctx_get_num_inflight_tasks(const struct doca_ctx *ctx, size_t *num_inflight_tasks);

/** Sets the user data every callback of the context receives. */
DOCA_STABLE
doca_error_t doca_ctx_set_user_data(struct doca_ctx *ctx, union doca_data user_data);

/** The context's user data. */
DOCA_STABLE
doca_error_t doca_ctx_get_user_data(const struct doca_ctx *ctx, union doca_data *user_data);

/** Sets the callback of state changes (while idle). */
DOCA_STABLE
doca_error_t doca_ctx_set_state_changed_cb(struct doca_ctx *ctx, doca_ctx_state_changed_callback_t cb);

/** The context's state. */
DOCA_STABLE
doca_error_t doca_ctx_get_state(const struct doca_ctx *ctx, enum doca_ctx_states *state);

/**
 * Flushes the tasks submitted without DOCA_TASK_SUBMIT_FLAG_FLUSH. Every submit is
 * carried out at once here, so nothing waits for this; the context must not be idle.
 */
DOCA_EXPERIMENTAL
void doca_ctx_flush_tasks(struct doca_ctx *ctx);

/** How many completion vectors the device has (valid vectors: 0 to the count - 1). */
DOCA_EXPERIMENTAL
doca_error_t doca_ctx_cap_get_num_completion_vectors(const struct doca_devinfo *devinfo, uint32_t *num_comp_vectors);

/**
 * Sets the completion vector of an idle context (DOCA_ERROR_BAD_STATE otherwise;
 * DOCA_ERROR_INVALID_VALUE for a vector the device lacks).
 */
DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_completion_vector(struct doca_ctx *ctx, uint32_t comp_vector);

struct doca_dpa;
struct doca_gpu;

/** Binds the context's data path to a DPA: DOCA_ERROR_NOT_SUPPORTED (no DPA here). */
DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_datapath_on_dpa(struct doca_ctx *ctx, struct doca_dpa *dpa_dev);

/** Binds the context's data path to a GPU: DOCA_ERROR_NOT_SUPPORTED (no GPU here). */
DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_datapath_on_gpu(struct doca_ctx *ctx, struct doca_gpu *gpu_dev);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CTX_H_ */
