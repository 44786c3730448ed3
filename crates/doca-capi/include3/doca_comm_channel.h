/*
 * doca_comm_channel.h: the comm channel of DOCA 2.x, still offered beside doca_comch.h as
 * DOCA 2.5 and 2.6 shipped it (programs of that time combine it with the progress
 * engine). Whole messages between a host process (client) and a DPU-side service. The DPU side listens for a service name with its device and the
 * representor of a host function; the host side connects with that function's device.
 * Everything is non-blocking: DOCA_ERROR_AGAIN when nothing is there (or no room yet).
 */
#ifndef DOCA_COMM_CHANNEL_H_
#define DOCA_COMM_CHANNEL_H_

#include <stddef.h>
#include <stdint.h>
#include <doca_compat.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Message flags. */
enum doca_comm_channel_msg_flags {
	DOCA_CC_MSG_FLAG_NONE = 0,
};

/** An endpoint: a service (DPU side) or a client (host side). */
struct doca_comm_channel_ep_t;
/** The far end of one connection; valid until disconnected or the endpoint is destroyed. */
struct doca_comm_channel_addr_t;

/** An event channel: a descriptor for epoll/poll, readable while the operation may proceed. */
typedef doca_event_handle_t doca_event_channel_t;

/** Longest service name, without the terminating NUL. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_get_max_service_name_len(uint32_t *max_service_name_len);
/** Largest message the device carries. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_get_max_message_size(struct doca_devinfo *devinfo, uint32_t *max_message_size);
/** Largest send queue. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_get_max_send_queue_size(struct doca_devinfo *devinfo, uint32_t *max_send_queue_size);
/** Largest receive queue. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_get_max_recv_queue_size(struct doca_devinfo *devinfo, uint32_t *max_recv_queue_size);
/** Most connections a service accepts. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_get_service_max_num_connections(struct doca_devinfo *devinfo,
							       uint32_t *max_num_connections);

/** Creates an endpoint. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_create(struct doca_comm_channel_ep_t **ep);
/** The device set. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_device(struct doca_comm_channel_ep_t *ep, struct doca_dev **device);
/** The representor set. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_device_rep(struct doca_comm_channel_ep_t *ep,
						 struct doca_dev_rep **device_rep);
/** The largest message. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_max_msg_size(struct doca_comm_channel_ep_t *ep, uint16_t *max_msg_size);
/** The send queue size. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_send_queue_size(struct doca_comm_channel_ep_t *ep, uint16_t *send_queue_size);
/** The receive queue size. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_recv_queue_size(struct doca_comm_channel_ep_t *ep, uint16_t *recv_queue_size);
/** Sets the device (before listen or connect). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_set_device(struct doca_comm_channel_ep_t *ep, struct doca_dev *device);
/** Sets the representor of the host function a service serves (DPU side). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_set_device_rep(struct doca_comm_channel_ep_t *ep, struct doca_dev_rep *device_rep);
/** Sets the largest message (1 to the device's maximum). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_set_max_msg_size(struct doca_comm_channel_ep_t *ep, uint16_t max_msg_size);
/** Sets the send queue size. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_set_send_queue_size(struct doca_comm_channel_ep_t *ep, uint16_t send_queue_size);
/** Sets the receive queue size. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_set_recv_queue_size(struct doca_comm_channel_ep_t *ep, uint16_t recv_queue_size);

/** The send and receive event channels (level-triggered descriptors). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_event_channel(struct doca_comm_channel_ep_t *local_ep,
						    doca_event_channel_t *send_event_channel,
						    doca_event_channel_t *recv_event_channel);
/** The service event channel: readable while connections wait to be accepted. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_service_event_channel(struct doca_comm_channel_ep_t *local_ep,
							    doca_event_channel_t *service_event_channel);
/** Arms the send event channel. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_event_handle_arm_send(struct doca_comm_channel_ep_t *local_ep);
/** Arms the receive event channel. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_event_handle_arm_recv(struct doca_comm_channel_ep_t *local_ep);

/** Serves a name (DPU side). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_listen(struct doca_comm_channel_ep_t *local_ep, const char *name);
/** Connects to a service (host side); sending answers DOCA_ERROR_AGAIN until it is reached. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_connect(struct doca_comm_channel_ep_t *local_ep, const char *name,
					  struct doca_comm_channel_addr_t **peer_addr);
/** Sends one whole message (1 byte to the largest message). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_sendto(struct doca_comm_channel_ep_t *local_ep, const void *msg, size_t len,
					 int flags, struct doca_comm_channel_addr_t *peer_addr);
/** Receives one whole message: *len is the buffer's size in, the message's size out. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_recvfrom(struct doca_comm_channel_ep_t *local_ep, void *msg, size_t *len,
					   int flags, struct doca_comm_channel_addr_t **peer_addr);
/** Ends a connection; the peer address is freed. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_disconnect(struct doca_comm_channel_ep_t *local_ep,
					     struct doca_comm_channel_addr_t *peer_addr);
/** Destroys an endpoint and its peer addresses. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_destroy(struct doca_comm_channel_ep_t *local_ep);

/** The peer's user data. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_get_user_data(struct doca_comm_channel_addr_t *peer_addr,
						       uint64_t *user_data);
/** Sets the peer's user data. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_set_user_data(struct doca_comm_channel_addr_t *peer_addr,
						       uint64_t user_context);
/** Refreshes the peer's statistics (they are live here). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_update_info(struct doca_comm_channel_addr_t *peer_addr);
/** Messages sent to the peer. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_get_send_messages(const struct doca_comm_channel_addr_t *peer_addr,
							   uint64_t *send_messages);
/** Bytes sent to the peer. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_get_send_bytes(const struct doca_comm_channel_addr_t *peer_addr,
							uint64_t *send_bytes);
/** Messages received from the peer. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_get_recv_messages(const struct doca_comm_channel_addr_t *peer_addr,
							   uint64_t *recv_messages);
/** Bytes received from the peer. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_get_recv_bytes(const struct doca_comm_channel_addr_t *peer_addr,
							uint64_t *recv_bytes);
/** Messages sent that the peer has not received yet. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_get_send_in_flight_messages(const struct doca_comm_channel_addr_t *peer_addr,
								     uint64_t *send_in_flight_messages);
/** Refreshes the service's state (connections are accepted). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_update_service_state_info(struct doca_comm_channel_ep_t *local_ep);
/** The connected peers: an array owned by the endpoint, valid until the next call. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_peer_addr_list(const struct doca_comm_channel_ep_t *local_ep,
						     struct doca_comm_channel_addr_t ***peer_addr_array,
						     uint32_t *peer_addr_array_len);
/** Connections accepted whose greeting was not read yet. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_get_pending_connections(const struct doca_comm_channel_ep_t *local_ep,
							  uint32_t *pending_connections);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMM_CHANNEL_H_ */
