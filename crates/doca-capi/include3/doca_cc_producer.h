/*
 * doca_cc_producer.h: DOCA 2.6's names of the comm channel's task generation (doca_cc),
 * renamed doca_comch in DOCA 2.7. Programs of DOCA 2.6 call these; each is the
 * doca_comch function of the same shape (see doca_comch_producer.h; a 2.6 send carries
 * no immediate data), over the same channel.
 */
#ifndef DOCA_CC_PRODUCER_H_
#define DOCA_CC_PRODUCER_H_

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
struct doca_cc_connection;

/** A producer. */
struct doca_cc_producer;
/** A send task. */
struct doca_cc_producer_task_send;

/** A send task completed or failed. */
typedef void (*doca_cc_producer_task_send_completion_cb_t)(struct doca_cc_producer_task_send *task,
							      union doca_data task_user_data,
							      union doca_data ctx_user_data);

/** Creates an idle producer on an established connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_producer_create(struct doca_cc_connection *cc_connection,
					struct doca_cc_producer **producer);

/** Destroys an idle producer. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_producer_destroy(struct doca_cc_producer *producer);

/** DOCA_SUCCESS when the device runs producers. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_producer_cap_is_supported(const struct doca_devinfo *devinfo);

/** The producer's id, unique on its connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_producer_get_id(const struct doca_cc_producer *producer, uint32_t *id);

/** The most send tasks of one producer. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_producer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo, uint32_t *max_num_tasks);

/** The largest buffer one send carries. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_producer_cap_get_max_buf_size(const struct doca_devinfo *devinfo, uint32_t *max_buf_size);

/** The most producers on one connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_producer_cap_get_max_producers(const struct doca_devinfo *devinfo, uint32_t *max_producers);

/** The producer's context. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_cc_producer_as_ctx(struct doca_cc_producer *producer);

/** Sets the send callbacks and number of tasks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_producer_task_send_set_conf(struct doca_cc_producer *producer,
						    doca_cc_producer_task_send_completion_cb_t task_completion_cb,
						    doca_cc_producer_task_send_completion_cb_t task_error_cb,
						    uint32_t num_send_tasks);

/** Takes a send task: buf's data and imm_data (copied, up to 16 bytes) to consumer_id. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_producer_task_send_alloc_init(struct doca_cc_producer *producer, struct doca_buf *buf,
						   uint32_t consumer_id, struct doca_cc_producer_task_send **task);

/** The task's buffer. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_cc_producer_task_send_get_buf(struct doca_cc_producer_task_send *task);

/** Sets the task's buffer. */
DOCA_EXPERIMENTAL
void doca_cc_producer_task_send_set_buf(struct doca_cc_producer_task_send *task, struct doca_buf *buf);

/** The task's consumer id. */
DOCA_EXPERIMENTAL
uint32_t doca_cc_producer_task_send_get_consumer_id(struct doca_cc_producer_task_send *task);

/** Sets the task's consumer id. */
DOCA_EXPERIMENTAL
void doca_cc_producer_task_send_set_consumer_id(struct doca_cc_producer_task_send *task,
						   const uint32_t consumer_id);

/** The generic task of a send task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_cc_producer_task_send_as_task(struct doca_cc_producer_task_send *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CC_PRODUCER_H_ */
