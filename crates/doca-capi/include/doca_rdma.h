/*
 * doca_rdma.h: the RDMA library of DOCA 2.2. A context has one connection, made by
 * exchanging the details doca_rdma_export gives (out of band) and passing the peer's to
 * doca_rdma_connect; its jobs (receive, send, read, write, atomics) run on work queues.
 */
#ifndef DOCA_RDMA_H_
#define DOCA_RDMA_H_

#include <stdbool.h>
#include <stdint.h>
#include <doca_types.h>
#include <doca_buf.h>
#include <doca_compat.h>
#include <doca_ctx.h>
#include <doca_error.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_devinfo;
struct doca_rdma_addr;

/** Where an RDMA context is in its life. */
enum doca_rdma_state {
	DOCA_RDMA_STATE_RESET = 0,	/**< Not started. */
	DOCA_RDMA_STATE_INIT,		/**< Started, not connected. */
	DOCA_RDMA_STATE_CONNECTED,	/**< Connected. */
	DOCA_RDMA_STATE_ERROR,		/**< The connection failed or ended. */
};

/** RDMA transports. */
enum doca_rdma_transport_type {
	DOCA_RDMA_TRANSPORT_RC,	/**< Reliable connection. */
	DOCA_RDMA_TRANSPORT_DC,	/**< Dynamically connected (not in this generation). */
};

/** A GID. */
struct doca_rdma_gid {
	uint8_t raw[DOCA_GID_BYTE_LENGTH]; /**< Its bytes. */
};

/** RDMA job types. */
enum doca_rdma_job_types {
	DOCA_RDMA_JOB_RECV = DOCA_ACTION_RDMA_FIRST + 1,
	DOCA_RDMA_JOB_SEND,
	DOCA_RDMA_JOB_SEND_IMM,
	DOCA_RDMA_JOB_READ,
	DOCA_RDMA_JOB_WRITE,
	DOCA_RDMA_JOB_WRITE_IMM,
	DOCA_RDMA_JOB_ATOMIC_CMP_SWP,
	DOCA_RDMA_JOB_ATOMIC_FETCH_ADD,
};

/** Receives the peer's next send (appended to dst_buff's data), or a write with immediate. */
struct doca_rdma_job_recv {
	struct doca_job base;		/**< type DOCA_RDMA_JOB_RECV. */
	struct doca_buf *dst_buff;	/**< Where the message goes; NULL for an empty message. */
};

/** Sends src_buff's data to the peer's posted receive. */
struct doca_rdma_job_send {
	struct doca_job base;				/**< type DOCA_RDMA_JOB_SEND or _SEND_IMM. */
	struct doca_buf const *src_buff;		/**< The message. */
	doca_be32_t immediate_data;			/**< Immediate data (_SEND_IMM). */
	struct doca_rdma_addr const *rdma_peer_addr;	/**< DC and UD only: unused with RC. */
};

/** Read: the peer's src_buff data into the tailroom of the local dst_buff. Write: the local src_buff data into the tailroom of the peer's dst_buff. */
struct doca_rdma_job_read_write {
	struct doca_job base;				/**< type DOCA_RDMA_JOB_READ, _WRITE or _WRITE_IMM. */
	struct doca_buf *dst_buff;			/**< Destination. */
	struct doca_buf const *src_buff;		/**< Source. */
	doca_be32_t immediate_data;			/**< Immediate data (_WRITE_IMM). */
	struct doca_rdma_addr const *rdma_peer_addr;	/**< DC only: unused with RC. */
};

/** An atomic on the peer's 8 bytes; their value before it lands in result_buff. */
struct doca_rdma_job_atomic {
	struct doca_job base;				/**< type DOCA_RDMA_JOB_ATOMIC_CMP_SWP or _FETCH_ADD. */
	struct doca_buf *cmp_or_add_dest_buff;		/**< The peer's 8 bytes (aligned). */
	struct doca_buf *result_buff;			/**< Receives the value before. */
	uint64_t swap_or_add_data;			/**< The value swapped in, or added. */
	uint64_t cmp_data;				/**< The value compared with. */
	struct doca_rdma_addr const *rdma_peer_addr;	/**< DC only: unused with RC. */
};

/** What a receive got. */
enum doca_rdma_opcode_t {
	DOCA_RDMA_OPCODE_RECV_SEND = 0,
	DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM,
	DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM,
};

/**
 * The result of an RDMA job: the program points the event's result.ptr at one before
 * doca_workq_progress_retrieve, which fills it (result.u64 holds the status when
 * result.ptr is NULL).
 */
struct doca_rdma_result {
	doca_error_t result;			/**< The job's status. */
	enum doca_rdma_opcode_t opcode;		/**< A receive's opcode. */
	uint32_t length;			/**< Bytes received or read (0 for sends and writes). */
	struct doca_rdma_addr *rdma_peer_addr;	/**< DC and UD only: NULL. */
	doca_be32_t immediate_data;		/**< A receive's immediate data. */
};

struct doca_rdma;

/** Creates an RDMA context (add a device with doca_ctx_dev_add). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_create(struct doca_rdma **rdma);

/** Destroys an RDMA context (stopped, its device removed). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_destroy(struct doca_rdma *rdma);

/** The context of an RDMA instance. */
__DOCA_EXPERIMENTAL
struct doca_ctx *doca_rdma_as_ctx(struct doca_rdma *rdma);

/** DOCA_SUCCESS when the device runs this job type. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_job_get_supported(const struct doca_devinfo *devinfo, enum doca_rdma_job_types job_type);

/** The connection details for the peer's doca_rdma_connect (after doca_ctx_start; valid until the context is destroyed). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_export(const struct doca_rdma *rdma, const void **local_rdma_conn_details,
			      size_t *local_rdma_conn_details_size);

/** Connects to the peer whose details are given (after doca_ctx_start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_connect(struct doca_rdma *rdma, const void *remote_rdma_conn_details,
			       size_t remote_rdma_conn_details_size);

/** The largest receive queue. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_recv_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_recv_queue_size);

/** The largest send queue. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_send_queue_size(const struct doca_devinfo *devinfo, uint32_t *max_send_queue_size);

/** The largest message. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_message_size(const struct doca_devinfo *devinfo, uint32_t *max_message_size);

/** The most chained buffers of a job of this type on this transport. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_max_buf_chain_len(const struct doca_devinfo *devinfo, enum doca_rdma_job_types job_type,
					     enum doca_rdma_transport_type transport_type,
					     uint32_t *max_buf_chain_len);

/** The number of GIDs of the device. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gid_table_size(struct doca_devinfo *devinfo, uint32_t *gid_table_size);

/** num_entries GIDs of the device from start_index. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gid(struct doca_devinfo *devinfo, uint32_t start_index, uint32_t num_entries,
			       struct doca_rdma_gid *gid_array);

/** DOCA_SUCCESS when the device runs this transport. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_transport_type_supported(const struct doca_devinfo *devinfo,
						    enum doca_rdma_transport_type transport_type);

/** Sets the send queue size (before start; rounded up to a power of 2). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_send_queue_size(struct doca_rdma *rdma, uint32_t send_queue_size);

/** Sets the receive queue size (before start; rounded up to a power of 2). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_recv_queue_size(struct doca_rdma *rdma, uint32_t recv_queue_size);

/** Sets the transport (before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_transport_type(struct doca_rdma *rdma, enum doca_rdma_transport_type transport_type);

/** Sets the MTU (before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_mtu(struct doca_rdma *rdma, enum doca_mtu_size mtu);

/** Sets what the peer may do (RDMA access flags; after doca_ctx_dev_add, before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_permissions(struct doca_rdma *rdma, uint32_t permissions);

/** Sets whether the connection uses GRH (before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_grh_enabled(struct doca_rdma *rdma, bool grh_enabled);

/** Sets the GID index (after doca_ctx_dev_add, before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_gid_index(struct doca_rdma *rdma, uint32_t gid_index);

/** Sets the most chained buffers of a receive (before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_recv_buf_chain_len(struct doca_rdma *rdma, uint32_t recv_buf_chain_len);

/** Sets the service level (before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_set_sl(struct doca_rdma *rdma, uint32_t sl);

/** The send queue size in use. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_send_queue_size(const struct doca_rdma *rdma, uint32_t *send_queue_size);

/** The receive queue size in use. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_recv_queue_size(const struct doca_rdma *rdma, uint32_t *recv_queue_size);

/** The transport. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_transport_type(const struct doca_rdma *rdma, enum doca_rdma_transport_type *transport_type);

/** The MTU. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_mtu(const struct doca_rdma *rdma, enum doca_mtu_size *mtu);

/** The permissions. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_permissions(struct doca_rdma *rdma, uint32_t *permissions);

/** Whether GRH is used. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_grh_enabled(const struct doca_rdma *rdma, bool *grh_enabled);

/** The GID index. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_gid_index(const struct doca_rdma *rdma, uint32_t *gid_index);

/** The most chained buffers of a receive. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_recv_buf_chain_len(const struct doca_rdma *rdma, uint32_t *recv_buf_chain_len);

/** The service level. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_sl(const struct doca_rdma *rdma, uint32_t *sl);

/** Where the context is in its life. */
__DOCA_EXPERIMENTAL
doca_error_t doca_rdma_get_state(const struct doca_rdma *rdma, enum doca_rdma_state *state);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_RDMA_H_ */
