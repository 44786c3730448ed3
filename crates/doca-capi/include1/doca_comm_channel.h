/*
 * doca_comm_channel.h (DOCA 1.3): the comm channel between a host process (client) and a
 * DPU-side process (service), in its first form: an endpoint is made from attributes
 * (no device: the client uses the host function it runs on, the service listens for
 * every host function its DPU serves), and calls block unless the endpoint or the call
 * says not to.
 */
#ifndef DOCA_COMM_CHANNEL_H_
#define DOCA_COMM_CHANNEL_H_

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <doca_compat.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The longest service name, with its NUL. */
#define SERVICE_NAME_MAX 128

/** Flags of one send or receive. */
enum doca_comm_channel_msg_flags {
	DOCA_CC_MSG_FLAG_DONTWAIT = 0x1, /**< Do not block: DOCA_ERROR_AGAIN instead. */
	DOCA_CC_MSG_FLAG_MORE = 0x2,	 /**< Not supported (refused). */
};

/** Flags of an endpoint. */
enum doca_comm_channel_init_flags {
	DOCA_COMM_CHANNEL_INIT_FLAG_NONBLOCK = 0x1, /**< No call of the endpoint blocks. */
};

/** A local endpoint. */
struct doca_comm_channel_ep_t;

/** A peer of an endpoint (valid until it is disconnected or the endpoint destroyed). */
struct doca_comm_channel_addr_t;

/** What an endpoint is made with. */
struct doca_comm_channel_init_attr {
	uint32_t cookie;  /**< The program's own value (kept, not used). */
	uint32_t flags;	  /**< 0 or DOCA_COMM_CHANNEL_INIT_FLAG_NONBLOCK. */
	uint32_t maxmsgs; /**< Messages a send queue holds (0: the default). */
	uint32_t msgsize; /**< The largest message in bytes (0: the default, 4080 at most). */
};

/**
 * Makes an endpoint. DOCA_ERROR_NOT_PERMITTED for a msgsize over the largest supported;
 * DOCA_ERROR_INVALID_VALUE for unknown flags; DOCA_ERROR_NOT_FOUND where this process
 * has no device to talk through.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_create(struct doca_comm_channel_init_attr *attr,
					 struct doca_comm_channel_ep_t **ep);

/** On the DPU side: serves `name` (up to SERVICE_NAME_MAX bytes with the NUL). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_listen(struct doca_comm_channel_ep_t *local_ep, const char *name);

/**
 * On the host side: connects to service `name`; blocks until connected unless the
 * endpoint does not block. DOCA_ERROR_CONNECTION_ABORTED when no such service listens.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_connect(struct doca_comm_channel_ep_t *local_ep, const char *name,
					  struct doca_comm_channel_addr_t **peer_addr);

/**
 * Sends one message of len bytes; blocks while the peer's queue is full unless flags
 * or the endpoint say not to (DOCA_ERROR_AGAIN then). DOCA_ERROR_INVALID_VALUE for a
 * message longer than msgsize; DOCA_ERROR_NOT_CONNECTED for a peer that is gone.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_sendto(struct doca_comm_channel_ep_t *local_ep, const void *msg, size_t len,
					 int flags, struct doca_comm_channel_addr_t *peer_addr);

/**
 * Receives one message into msg (*len: its room in, the message's length out) and says
 * from which peer; a service meets new peers this way. Blocks while nothing came
 * unless flags or the endpoint say not to (DOCA_ERROR_AGAIN then).
 * DOCA_ERROR_NOT_CONNECTED with *peer_addr set when a peer's connection ended.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_recvfrom(struct doca_comm_channel_ep_t *local_ep, void *msg, size_t *len,
					   int flags, struct doca_comm_channel_addr_t **peer_addr);

/** Ends the connection with a peer (its address is gone afterwards). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_disconnect(struct doca_comm_channel_ep_t *local_ep,
					     struct doca_comm_channel_addr_t *peer_addr);

/** Destroys an endpoint and its peers' connections. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_ep_destroy(struct doca_comm_channel_ep_t *ep);

/** The program's value kept with a peer (0 for a new peer). */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_user_data_get(struct doca_comm_channel_addr_t *peer_addr,
						       uint64_t *user_data);

/** Keeps a value of the program's with a peer. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_user_data_set(struct doca_comm_channel_addr_t *peer_addr,
						       uint64_t user_context);

/** A descriptor that polls readable when the endpoint has something to receive. */
typedef int doca_event_channel_t;
#define doca_pollfd pollfd
#define DOCA_POLLIN POLLIN
#define DOCA_POLLOUT POLLOUT

/** The endpoint's descriptor for doca_comm_channels_poll (or poll, epoll). */
__DOCA_EXPERIMENTAL
doca_event_channel_t doca_comm_channel_ep_event_channel_get(struct doca_comm_channel_ep_t *local_ep);

/** poll() over endpoints' descriptors: how many are ready, 0 on timeout, -1 on error. */
__DOCA_EXPERIMENTAL
int doca_comm_channels_poll(struct doca_pollfd fds[], uint32_t nfds, int timeout);

/** What an endpoint knows of a peer. */
struct doca_comm_channel_peer_addr_info {
	uint16_t vport;	  /**< The peer's function (its PCI device and function numbers). */
	uint32_t msgsize; /**< The largest message. */
	uint32_t maxmsgs; /**< Messages a send queue holds. */
	uint32_t curmsgs; /**< Messages sent and not yet taken by the peer. */
	uint64_t rx_msgs;
	uint64_t tx_msgs;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
};

/** Fills info for a peer. DOCA_ERROR_NOT_CONNECTED for a peer that is gone. */
__DOCA_EXPERIMENTAL
doca_error_t doca_comm_channel_peer_addr_info_get(struct doca_comm_channel_addr_t *peer_addr,
						  struct doca_comm_channel_peer_addr_info *info);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMM_CHANNEL_H_ */
