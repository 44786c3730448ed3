/*
 * doca_comch_producer.h: the sending end of comch's fast path. A producer lives on an
 * established comch connection and sends buffers to the consumers the other side
 * announced (by id). A send waits, in order, while its consumer has no buffer posted; it
 * completes once the data is on its way, and its buffer must stay unchanged until then.
 * A send to a consumer that is not (or no longer) announced fails.
 */
#ifndef DOCA_COMCH_PRODUCER_H_
#define DOCA_COMCH_PRODUCER_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_ctx;
struct doca_devinfo;
struct doca_task;
struct doca_comch_connection;

/** A producer. */
struct doca_comch_producer;
/** A send task. */
struct doca_comch_producer_task_send;

/** A send task completed or failed. */
typedef void (*doca_comch_producer_task_send_completion_cb_t)(struct doca_comch_producer_task_send *task,
							      union doca_data task_user_data,
							      union doca_data ctx_user_data);

/** Creates an idle producer on an established connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_create(struct doca_comch_connection *comch_connection,
					struct doca_comch_producer **producer);

/** Destroys an idle producer. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_destroy(struct doca_comch_producer *producer);

/** DOCA_SUCCESS when the device runs producers. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_cap_is_supported(const struct doca_devinfo *devinfo);

/** The producer's id, unique on its connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_get_id(const struct doca_comch_producer *producer, uint32_t *id);

/** The most send tasks of one producer. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo, uint32_t *max_num_tasks);

/** The largest buffer one send carries. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_cap_get_max_buf_size(const struct doca_devinfo *devinfo, uint32_t *max_buf_size);

/** The longest buffer list of a task (1: one buffer per task). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_cap_get_max_buf_list_len(const struct doca_devinfo *devinfo,
							  uint32_t *max_buf_list_len);

/** The most producers on one connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_cap_get_max_producers(const struct doca_devinfo *devinfo, uint32_t *max_producers);

/** The producer's context. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_comch_producer_as_ctx(struct doca_comch_producer *producer);

/** Sets the send callbacks and number of tasks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_task_send_set_conf(struct doca_comch_producer *producer,
						    doca_comch_producer_task_send_completion_cb_t task_completion_cb,
						    doca_comch_producer_task_send_completion_cb_t task_error_cb,
						    uint32_t num_send_tasks);

/** Takes a send task: buf's data and imm_data (copied, up to 16 bytes) to consumer_id. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_producer_task_send_alloc_init(struct doca_comch_producer *producer,
						      const struct doca_buf *buf,
						      uint8_t *imm_data,
						      uint32_t imm_data_len,
						      uint32_t consumer_id,
						      struct doca_comch_producer_task_send **task);

/** The task's buffer. */
DOCA_EXPERIMENTAL
const struct doca_buf *doca_comch_producer_task_send_get_buf(struct doca_comch_producer_task_send *task);

/** Sets the task's buffer. */
DOCA_EXPERIMENTAL
void doca_comch_producer_task_send_set_buf(struct doca_comch_producer_task_send *task, const struct doca_buf *buf);

/** The task's consumer id. */
DOCA_EXPERIMENTAL
uint32_t doca_comch_producer_task_send_get_consumer_id(struct doca_comch_producer_task_send *task);

/** Sets the task's consumer id. */
DOCA_EXPERIMENTAL
void doca_comch_producer_task_send_set_consumer_id(struct doca_comch_producer_task_send *task,
						   const uint32_t consumer_id);

/** The task's immediate data; NULL when it has none. */
DOCA_EXPERIMENTAL
uint8_t *doca_comch_producer_task_send_get_imm_data(struct doca_comch_producer_task_send *task);

/** The task's immediate data length. */
DOCA_EXPERIMENTAL
uint32_t doca_comch_producer_task_send_get_imm_data_len(struct doca_comch_producer_task_send *task);

/** Sets the task's immediate data (copied, up to 16 bytes). */
DOCA_EXPERIMENTAL
void doca_comch_producer_task_send_set_imm_data(struct doca_comch_producer_task_send *task,
						uint8_t *imm_data,
						uint32_t imm_data_len);

/** The generic task of a send task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_comch_producer_task_send_as_task(struct doca_comch_producer_task_send *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMCH_PRODUCER_H_ */
