/*
 * doca_cc.h: DOCA 2.6's names of the comm channel's task generation (doca_cc),
 * renamed doca_comch in DOCA 2.7. Programs of DOCA 2.6 call these; each is the
 * doca_comch function of the same shape (see doca_comch.h), over the same channel.
 */
#ifndef DOCA_CC_H_
#define DOCA_CC_H_

#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_dev_rep;
struct doca_devinfo;
struct doca_ctx;
struct doca_task;

/** One connection between a server and a client. */
struct doca_cc_connection;
/** A server (DPU side). */
struct doca_cc_server;
/** A client (host side). */
struct doca_cc_client;
/** A send task. */
struct doca_cc_task_send;
/** The event of a message received. */
struct doca_cc_event_msg_recv;
/** The event of a connection that came up or went away. */
struct doca_cc_event_connection_status_changed;
/** The event of a consumer announced or gone (fast path). */
struct doca_cc_event_consumer;

/** The statistics of a connection. */
enum doca_cc_counter {
	DOCA_CC_COUNTER_SENT_MESSAGES = 1, /**< messages this side sent */
	DOCA_CC_COUNTER_SENT_BYTES = 2,    /**< bytes this side sent */
	DOCA_CC_COUNTER_RECV_MESSAGES = 3, /**< messages this side received */
	DOCA_CC_COUNTER_RECV_BYTES = 4,    /**< bytes this side received */
};

/** A send task completed (or failed: doca_task_get_status says why). */
typedef void (*doca_cc_task_send_completion_cb_t)(struct doca_cc_task_send *task,
						     union doca_data task_user_data,
						     union doca_data ctx_user_data);

/** A message came: it lies in the channel's buffer until the callback returns. */
typedef void (*doca_cc_event_msg_recv_cb_t)(struct doca_cc_event_msg_recv *event,
					       uint8_t *recv_buffer,
					       uint32_t msg_len,
					       struct doca_cc_connection *cc_connection);

/** A connection came up or went away; change_successful is 1 when it did. */
typedef void (*doca_cc_event_connection_status_changed_cb_t)(
	struct doca_cc_event_connection_status_changed *event,
	struct doca_cc_connection *cc_connection,
	uint8_t change_successful);

/** A consumer was announced or went away on a connection. */
typedef void (*doca_cc_event_consumer_cb_t)(struct doca_cc_event_consumer *event,
					       struct doca_cc_connection *cc_connection,
					       uint32_t id);

/* ---- connections ---- */

/** Sets a connection's user data. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_connection_set_user_data(struct doca_cc_connection *connection,
						 union doca_data user_data);

/** A connection's user data. */
DOCA_EXPERIMENTAL
union doca_data doca_cc_connection_get_user_data(const struct doca_cc_connection *connection);

/** The server a connection belongs to; NULL for a client's. */
DOCA_EXPERIMENTAL
struct doca_cc_server *doca_cc_server_get_server_ctx(const struct doca_cc_connection *connection);

/** The client a connection belongs to; NULL for a server's. */
DOCA_EXPERIMENTAL
struct doca_cc_client *doca_cc_client_get_client_ctx(const struct doca_cc_connection *connection);

/** Refreshes a connection's counters (they are always current here). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_connection_update_info(struct doca_cc_connection *cc_connection);

/** One counter of a connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_connection_get_counter(const struct doca_cc_connection *cc_connection,
					       enum doca_cc_counter counter_type,
					       uint64_t *counter_value);

/* ---- capabilities ---- */

/** The longest name, with its terminating NUL. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_cap_get_max_name_len(const struct doca_devinfo *devinfo, uint32_t *max_name_len);

/** The largest message. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_cap_get_max_msg_size(const struct doca_devinfo *devinfo, uint32_t *size);

/** The largest receive queue. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_cap_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *size);

/** The most clients one server takes. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_cap_get_max_clients(const struct doca_devinfo *devinfo, uint32_t *num_clients);

/** The most send tasks of one server or client. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_cap_get_max_send_tasks(const struct doca_devinfo *devinfo, uint32_t *max_send_tasks);

/** DOCA_SUCCESS when the device can run a server (DPU side). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_cap_server_is_supported(const struct doca_devinfo *devinfo);

/** DOCA_SUCCESS when the device can run a client (host side). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_cap_client_is_supported(const struct doca_devinfo *devinfo);

/* ---- servers ---- */

/** Creates an idle server of `name` for the host function `repr` stands for. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_create(struct doca_dev *dev,
				      struct doca_dev_rep *repr,
				      const char *name,
				      struct doca_cc_server **comch_server);

/** Destroys an idle server. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_destroy(struct doca_cc_server *comch_server);

/** Sets the largest message (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_set_max_msg_size(struct doca_cc_server *comch_server, uint32_t size);

/** The largest message. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_get_max_msg_size(const struct doca_cc_server *comch_server, uint32_t *size);

/** Sets the receive queue size (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_set_recv_queue_size(struct doca_cc_server *comch_server, uint32_t size);

/** The receive queue size. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_get_recv_queue_size(const struct doca_cc_server *comch_server, uint32_t *size);

/** The device given at creation. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_get_device(const struct doca_cc_server *comch_server, struct doca_dev **dev);

/** The representor given at creation. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_get_device_repr(const struct doca_cc_server *comch_server,
					       struct doca_dev_rep **repr);

/** The server's context. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_cc_server_as_ctx(struct doca_cc_server *comch_server);

/* ---- clients ---- */

/** Creates an idle client of the server called `name`. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_client_create(struct doca_dev *dev, const char *name, struct doca_cc_client **comch_client);

/** Destroys an idle client. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_client_destroy(struct doca_cc_client *comch_client);

/** Sets the largest message (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_client_set_max_msg_size(struct doca_cc_client *comch_client, uint32_t size);

/** The largest message. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_client_get_max_msg_size(const struct doca_cc_client *comch_client, uint32_t *size);

/** Sets the receive queue size (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_client_set_recv_queue_size(struct doca_cc_client *comch_client, uint32_t size);

/** The receive queue size. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_client_get_recv_queue_size(const struct doca_cc_client *comch_client, uint32_t *size);

/** The device given at creation. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_client_get_device(const struct doca_cc_client *comch_client, struct doca_dev **dev);

/** The client's context. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_cc_client_as_ctx(struct doca_cc_client *comch_client);

/** The client's connection, once it runs (DOCA_ERROR_BAD_STATE before). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_client_get_connection(const struct doca_cc_client *comch_client,
					      struct doca_cc_connection **connection);

/* ---- send tasks ---- */

/** Sets a server's send task callbacks and number of tasks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_task_send_set_conf(struct doca_cc_server *comch_server,
						  doca_cc_task_send_completion_cb_t task_completion_cb,
						  doca_cc_task_send_completion_cb_t task_error_cb,
						  uint32_t num_send_tasks);

/** Sets a client's send task callbacks and number of tasks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_client_task_send_set_conf(struct doca_cc_client *comch_client,
						  doca_cc_task_send_completion_cb_t task_completion_cb,
						  doca_cc_task_send_completion_cb_t task_error_cb,
						  uint32_t num_send_tasks);

/** Takes a server's send task of `len` bytes at `msg` to `peer` (DOCA_ERROR_NO_MEMORY
 * when all are taken). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_task_send_alloc_init(struct doca_cc_server *comch_server,
						    struct doca_cc_connection *peer,
						    const void *msg,
						    uint32_t len,
						    struct doca_cc_task_send **task);

/** Takes a client's send task of `len` bytes at `msg` to `peer`. */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_client_task_send_alloc_init(struct doca_cc_client *comch_client,
						    struct doca_cc_connection *peer,
						    const void *msg,
						    uint32_t len,
						    struct doca_cc_task_send **task);

/** The generic task of a send task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_cc_task_send_as_task(struct doca_cc_task_send *task);

/* ---- events ---- */

/** Sets a server's message callback (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_event_msg_recv_register(struct doca_cc_server *comch_server,
						       doca_cc_event_msg_recv_cb_t recv_event_cb);

/** Sets a client's message callback (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_client_event_msg_recv_register(struct doca_cc_client *comch_client,
						       doca_cc_event_msg_recv_cb_t recv_event_cb);

/** Sets a server's connect and disconnect callbacks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_event_connection_register(
	struct doca_cc_server *comch_server,
	doca_cc_event_connection_status_changed_cb_t connect_event_cb,
	doca_cc_event_connection_status_changed_cb_t disconnect_event_cb);

/** Sets a server's consumer callbacks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_server_event_consumer_register(struct doca_cc_server *comch_server,
						       doca_cc_event_consumer_cb_t new_consumer_event_cb,
						       doca_cc_event_consumer_cb_t expired_consumer_event_cb);

/** Sets a client's consumer callbacks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_cc_client_event_consumer_register(struct doca_cc_client *comch_client,
						       doca_cc_event_consumer_cb_t new_consumer_event_cb,
						       doca_cc_event_consumer_cb_t expired_consumer_event_cb);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CC_H_ */
