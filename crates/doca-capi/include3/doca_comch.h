/*
 * doca_comch.h: the comm channel of the task generation (control path). A server runs
 * on the DPU side for one host function (its representor) and a name; clients on the
 * host side reach it by that name. Both are contexts on a progress engine: messages go
 * out as send tasks and come in as events, and a server reports its connections.
 *
 * A client's start answers DOCA_ERROR_IN_PROGRESS: it is starting until it has reached
 * its server (which may come up later), and a progress of its engine reports it
 * running. A send task taken is always accepted; it completes once the message is on its
 * way, and the message it points to must stay unchanged until then. Messages sent before
 * either side stops still arrive, and before the end of the connection is seen.
 *
 * The fast path (doca_comch_consumer.h, doca_comch_producer.h) runs on established
 * connections; a connection context reports the other side's consumers coming and going.
 */
#ifndef DOCA_COMCH_H_
#define DOCA_COMCH_H_

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
struct doca_comch_connection;
/** A server (DPU side). */
struct doca_comch_server;
/** A client (host side). */
struct doca_comch_client;
/** A send task. */
struct doca_comch_task_send;
/** The event of a message received. */
struct doca_comch_event_msg_recv;
/** The event of a connection that came up or went away. */
struct doca_comch_event_connection_status_changed;
/** The event of a consumer announced or gone (fast path). */
struct doca_comch_event_consumer;

/** The statistics of a connection. */
enum doca_comch_counter {
	DOCA_COMCH_COUNTER_SENT_MESSAGES = 1, /**< messages this side sent */
	DOCA_COMCH_COUNTER_SENT_BYTES = 2,    /**< bytes this side sent */
	DOCA_COMCH_COUNTER_RECV_MESSAGES = 3, /**< messages this side received */
	DOCA_COMCH_COUNTER_RECV_BYTES = 4,    /**< bytes this side received */
};

/** A send task completed (or failed: doca_task_get_status says why). */
typedef void (*doca_comch_task_send_completion_cb_t)(struct doca_comch_task_send *task,
						     union doca_data task_user_data,
						     union doca_data ctx_user_data);

/** A message came: it lies in the channel's buffer until the callback returns. */
typedef void (*doca_comch_event_msg_recv_cb_t)(struct doca_comch_event_msg_recv *event,
					       uint8_t *recv_buffer,
					       uint32_t msg_len,
					       struct doca_comch_connection *comch_connection);

/** A connection came up or went away; change_successful is 1 when it did. */
typedef void (*doca_comch_event_connection_status_changed_cb_t)(
	struct doca_comch_event_connection_status_changed *event,
	struct doca_comch_connection *comch_connection,
	uint8_t change_successful);

/** A consumer was announced or went away on a connection. */
typedef void (*doca_comch_event_consumer_cb_t)(struct doca_comch_event_consumer *event,
					       struct doca_comch_connection *comch_connection,
					       uint32_t id);

/* ---- connections ---- */

/** Sets a connection's user data. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_connection_set_user_data(struct doca_comch_connection *connection,
						 union doca_data user_data);

/** A connection's user data. */
DOCA_EXPERIMENTAL
union doca_data doca_comch_connection_get_user_data(const struct doca_comch_connection *connection);

/** The server a connection belongs to; NULL for a client's. */
DOCA_EXPERIMENTAL
struct doca_comch_server *doca_comch_server_get_server_ctx(const struct doca_comch_connection *connection);

/** The client a connection belongs to; NULL for a server's. */
DOCA_EXPERIMENTAL
struct doca_comch_client *doca_comch_client_get_client_ctx(const struct doca_comch_connection *connection);

/** Refreshes a connection's counters (they are always current here). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_connection_update_info(struct doca_comch_connection *comch_connection);

/** One counter of a connection. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_connection_get_counter(const struct doca_comch_connection *comch_connection,
					       enum doca_comch_counter counter_type,
					       uint64_t *counter_value);

/* ---- capabilities ---- */

/** The longest name, with its terminating NUL. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_cap_get_max_name_len(const struct doca_devinfo *devinfo, uint32_t *max_name_len);

/** The largest message. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_cap_get_max_msg_size(const struct doca_devinfo *devinfo, uint32_t *size);

/** The largest receive queue. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_cap_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *size);

/** The most clients one server takes. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_cap_get_max_clients(const struct doca_devinfo *devinfo, uint32_t *num_clients);

/** The most send tasks of one server or client. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_cap_get_max_send_tasks(const struct doca_devinfo *devinfo, uint32_t *max_send_tasks);

/** DOCA_SUCCESS when the device can run a server (DPU side). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_cap_server_is_supported(const struct doca_devinfo *devinfo);

/** DOCA_SUCCESS when the device can run a client (host side). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_cap_client_is_supported(const struct doca_devinfo *devinfo);

/* ---- servers ---- */

/** Creates an idle server of `name` for the host function `repr` stands for. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_create(struct doca_dev *dev,
				      struct doca_dev_rep *repr,
				      const char *name,
				      struct doca_comch_server **comch_server);

/** Destroys an idle server. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_destroy(struct doca_comch_server *comch_server);

/** Sets the largest message (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_set_max_msg_size(struct doca_comch_server *comch_server, uint32_t size);

/** The largest message. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_get_max_msg_size(const struct doca_comch_server *comch_server, uint32_t *size);

/** Sets the receive queue size (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_set_recv_queue_size(struct doca_comch_server *comch_server, uint32_t size);

/** The receive queue size. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_get_recv_queue_size(const struct doca_comch_server *comch_server, uint32_t *size);

/** The device given at creation. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_get_device(const struct doca_comch_server *comch_server, struct doca_dev **dev);

/** The representor given at creation. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_get_device_repr(const struct doca_comch_server *comch_server,
					       struct doca_dev_rep **repr);

/** The server's context. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_comch_server_as_ctx(struct doca_comch_server *comch_server);

/** Ends one connection: its disconnect callback runs now; messages sent before arrive. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_disconnect(struct doca_comch_server *comch_server,
					  struct doca_comch_connection *connection);

/* ---- clients ---- */

/** Creates an idle client of the server called `name`. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_client_create(struct doca_dev *dev, const char *name, struct doca_comch_client **comch_client);

/** Destroys an idle client. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_client_destroy(struct doca_comch_client *comch_client);

/** Sets the largest message (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_client_set_max_msg_size(struct doca_comch_client *comch_client, uint32_t size);

/** The largest message. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_client_get_max_msg_size(const struct doca_comch_client *comch_client, uint32_t *size);

/** Sets the receive queue size (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_client_set_recv_queue_size(struct doca_comch_client *comch_client, uint32_t size);

/** The receive queue size. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_client_get_recv_queue_size(const struct doca_comch_client *comch_client, uint32_t *size);

/** The device given at creation. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_client_get_device(const struct doca_comch_client *comch_client, struct doca_dev **dev);

/** The client's context. */
DOCA_EXPERIMENTAL
struct doca_ctx *doca_comch_client_as_ctx(struct doca_comch_client *comch_client);

/** The client's connection, once it runs (DOCA_ERROR_BAD_STATE before). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_client_get_connection(const struct doca_comch_client *comch_client,
					      struct doca_comch_connection **connection);

/* ---- send tasks ---- */

/** Sets a server's send task callbacks and number of tasks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_task_send_set_conf(struct doca_comch_server *comch_server,
						  doca_comch_task_send_completion_cb_t task_completion_cb,
						  doca_comch_task_send_completion_cb_t task_error_cb,
						  uint32_t num_send_tasks);

/** Sets a client's send task callbacks and number of tasks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_client_task_send_set_conf(struct doca_comch_client *comch_client,
						  doca_comch_task_send_completion_cb_t task_completion_cb,
						  doca_comch_task_send_completion_cb_t task_error_cb,
						  uint32_t num_send_tasks);

/** Takes a server's send task of `len` bytes at `msg` to `peer` (DOCA_ERROR_NO_MEMORY
 * when all are taken). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_task_send_alloc_init(struct doca_comch_server *comch_server,
						    struct doca_comch_connection *peer,
						    const void *msg,
						    uint32_t len,
						    struct doca_comch_task_send **task);

/** Takes a client's send task of `len` bytes at `msg` to `peer`. */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_client_task_send_alloc_init(struct doca_comch_client *comch_client,
						    struct doca_comch_connection *peer,
						    const void *msg,
						    uint32_t len,
						    struct doca_comch_task_send **task);

/** The generic task of a send task. */
DOCA_EXPERIMENTAL
struct doca_task *doca_comch_task_send_as_task(struct doca_comch_task_send *task);

/** A send task's connection. */
DOCA_EXPERIMENTAL
struct doca_comch_connection *doca_comch_task_send_get_peer(const struct doca_comch_task_send *task);

/** A send task's message. */
DOCA_EXPERIMENTAL
const void *doca_comch_task_send_get_msg(const struct doca_comch_task_send *task);

/** A send task's message length. */
DOCA_EXPERIMENTAL
uint32_t doca_comch_task_send_get_len(const struct doca_comch_task_send *task);

/* ---- events ---- */

/** Sets a server's message callback (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_event_msg_recv_register(struct doca_comch_server *comch_server,
						       doca_comch_event_msg_recv_cb_t recv_event_cb);

/** Sets a client's message callback (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_client_event_msg_recv_register(struct doca_comch_client *comch_client,
						       doca_comch_event_msg_recv_cb_t recv_event_cb);

/** Sets a server's connect and disconnect callbacks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_event_connection_status_changed_register(
	struct doca_comch_server *comch_server,
	doca_comch_event_connection_status_changed_cb_t connect_event_cb,
	doca_comch_event_connection_status_changed_cb_t disconnect_event_cb);

/** Sets a server's consumer callbacks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_server_event_consumer_register(struct doca_comch_server *comch_server,
						       doca_comch_event_consumer_cb_t new_consumer_event_cb,
						       doca_comch_event_consumer_cb_t expired_consumer_event_cb);

/** Sets a client's consumer callbacks (while idle). */
DOCA_EXPERIMENTAL
doca_error_t doca_comch_client_event_consumer_register(struct doca_comch_client *comch_client,
						       doca_comch_event_consumer_cb_t new_consumer_event_cb,
						       doca_comch_event_consumer_cb_t expired_consumer_event_cb);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMCH_H_ */
