/*
 * doca_cc_consumer.h: DOCA 2.6's names of the comm channel's task generation (doca_cc),
 * renamed doca_comch in DOCA 2.7. Programs of DOCA 2.6 call these; each is the
 * doca_comch function of the same shape (see doca_comch_consumer.h), over the same channel.
 */
#ifndef DOCA_CC_CONSUMER_H_
#define DOCA_CC_CONSUMER_H_

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
struct doca_mmap;
struct doca_task;
struct doca_cc_connection;

/** A consumer. */
struct doca_cc_consumer;
/** A post-receive task. */
struct doca_cc_consumer_task_post_recv;

/** A post-receive task completed (its buffer holds the data) or failed. */
typedef void (*doca_cc_consumer_task_post_recv_completion_cb_t)(struct doca_cc_consumer_task_post_recv *task,
								   union doca_data task_user_data,
								   union doca_data ctx_user_data);

/** Creates an idle consumer on an established connection; its buffers lie in buf_mmap. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_consumer_create(struct doca_cc_connection *cc_connection,
					struct doca_mmap *buf_mmap,
					struct doca_cc_consumer **consumer);

/** Destroys an idle consumer. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_consumer_destroy(struct doca_cc_consumer *consumer);

/** DOCA_SUCCESS when the device runs consumers. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_consumer_cap_is_supported(const struct doca_devinfo *devinfo);

/** The consumer's id, unique on its connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_consumer_get_id(const struct doca_cc_consumer *consumer, uint32_t *id);

/** The most post-receive tasks of one consumer. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_consumer_cap_get_max_num_tasks(const struct doca_devinfo *devinfo, uint32_t *max_num_tasks);

/** The largest buffer one message fills. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_consumer_cap_get_max_buf_size(const struct doca_devinfo *devinfo, uint32_t *max_buf_size);

/** The most consumers on one connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_consumer_cap_get_max_consumers(const struct doca_devinfo *devinfo, uint32_t *max_consumers);

/** The consumer's context. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_cc_consumer_as_ctx(struct doca_cc_consumer *consumer);

/** Sets the post-receive callbacks and number of tasks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_consumer_task_post_recv_set_conf(
	struct doca_cc_consumer *consumer,
	doca_cc_consumer_task_post_recv_completion_cb_t task_completion_cb,
	doca_cc_consumer_task_post_recv_completion_cb_t task_error_cb,
	uint32_t num_post_recv_tasks);

/** Takes a post-receive task whose buffer's room receives the next message. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_consumer_task_post_recv_alloc_init(struct doca_cc_consumer *consumer,
							   struct doca_buf *buf,
							   struct doca_cc_consumer_task_post_recv **task);

/** The task's buffer. */
DOCA_EXPERIMENTAL
struct doca_buf *doca_cc_consumer_task_post_recv_get_buf(struct doca_cc_consumer_task_post_recv *task);

/** Sets the task's buffer. */
DOCA_EXPERIMENTAL
void doca_cc_consumer_task_post_recv_set_buf(struct doca_cc_consumer_task_post_recv *task, struct doca_buf *buf);

/** The id of the producer that filled the buffer (after completion). */
DOCA_EXPERIMENTAL
uint32_t doca_cc_consumer_task_post_recv_get_producer_id(struct doca_cc_consumer_task_post_recv *task);

/** The generic task of a post-receive task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_cc_consumer_task_post_recv_as_task(struct doca_cc_consumer_task_post_recv *task);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CC_CONSUMER_H_ */
