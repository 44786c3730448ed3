/*
 * comch's fast path between two processes, written the way DOCA's high-speed data path
 * sample is: a server (DPU build) and a client (host build) on their own progress
 * engine, a consumer and a producer on engines of their own.
 *
 *   comch_fast3 NAME [COUNT]
 *
 * The client's consumer posts buffers; the server's producer, once the consumer is
 * announced, sends COUNT buffers of varied lengths with their sequence number as
 * immediate data; the client checks each (bytes, length, immediate data, producer id)
 * and reposts its buffer, then says "done" on the control path; both sides stop.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_comch.h>
#include <doca_comch_consumer.h>
#include <doca_comch_producer.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include "comch3.h"


#define NUM_BUFS 8
#define BUF_SIZE 4096

static struct {
	struct doca_pe *pe;	 /* the connection's engine */
	struct doca_pe *fast_pe; /* the consumer's or producer's engine */
	struct doca_ctx *ctx;
	struct doca_comch_connection *conn;
	uint32_t remote_consumer;
	bool done_msg, finish;
	long received, sent, send_done;
	uint32_t producer_id;
	enum doca_ctx_states state, fast_state;
} st;

static uint8_t mem[NUM_BUFS * BUF_SIZE];

static void nap(void)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000};
	nanosleep(&ts, &ts);
}

static uint32_t len_of(long i)
{
	return 1 + (uint32_t)((i * 397) % BUF_SIZE);
}

static void fill(uint8_t *p, long i, uint32_t len)
{
	for (uint32_t k = 0; k < len; k++)
		p[k] = (uint8_t)(i * 31 + k);
}

static void state_cb(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev, enum doca_ctx_states next)
{
	(void)ctx;
	(void)prev;
	*(enum doca_ctx_states *)ud.ptr = next;
}

static void msg_recv(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len, struct doca_comch_connection *conn)
{
	(void)event;
	(void)conn;
	if (len == 4 && memcmp(buf, "done", 4) == 0)
		st.done_msg = true;
}

#ifdef DOCA_ARCH_DPU
static void new_consumer(struct doca_comch_event_consumer *event, struct doca_comch_connection *conn, uint32_t id)
{
	(void)event;
	st.conn = conn;
	st.remote_consumer = id;
}

static void expired_consumer(struct doca_comch_event_consumer *event, struct doca_comch_connection *conn, uint32_t id)
{
	(void)event;
	(void)conn;
	(void)id;
}
#endif

static void progress_all(void)
{
	uint8_t a = doca_pe_progress(st.pe);
	uint8_t b = st.fast_pe != NULL ? doca_pe_progress(st.fast_pe) : 0;

	if (a == 0 && b == 0)
		nap();
}

static struct doca_mmap *local_mmap(struct doca_dev *dev, uint8_t *base, size_t len)
{
	struct doca_mmap *mmap;

	CHECK(doca_mmap_create(&mmap));
	CHECK(doca_mmap_set_memrange(mmap, base, len));
	CHECK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_PCI_READ_WRITE));
	CHECK(doca_mmap_add_dev(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	return mmap;
}

#ifdef DOCA_ARCH_DPU
static void produced(struct doca_comch_producer_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	st.send_done++;
	ASSERT(doca_buf_dec_refcount((struct doca_buf *)doca_comch_producer_task_send_get_buf(task), NULL) == DOCA_SUCCESS);
	doca_task_free(doca_comch_producer_task_send_as_task(task));
}

static void produce_failed(struct doca_comch_producer_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	fprintf(stderr, "producer send failed: %s\n", doca_error_get_name(doca_task_get_status(doca_comch_producer_task_send_as_task(task))));
	exit(1);
}
#else
static void consumed(struct doca_comch_consumer_task_post_recv *task, union doca_data tud, union doca_data cud)
{
	struct doca_buf *buf = doca_comch_consumer_task_post_recv_get_buf(task);
	void *data;
	size_t len;
	uint8_t want[BUF_SIZE];
	long seq;

	(void)tud;
	(void)cud;
	CHECK(doca_buf_get_data(buf, &data));
	CHECK(doca_buf_get_data_len(buf, &len));
	ASSERT(doca_comch_consumer_task_post_recv_get_imm_data_len(task) == sizeof(seq));
	memcpy(&seq, doca_comch_consumer_task_post_recv_get_imm_data(task), sizeof(seq));
	if (seq != st.received || len != len_of(seq)) {
		fprintf(stderr, "message %ld: sequence %ld, length %zu\n", st.received, seq, len);
		exit(1);
	}
	fill(want, seq, (uint32_t)len);
	ASSERT(memcmp(data, want, len) == 0);
	if (st.producer_id == 0)
		st.producer_id = doca_comch_consumer_task_post_recv_get_producer_id(task);
	ASSERT(st.producer_id == doca_comch_consumer_task_post_recv_get_producer_id(task));
	st.received++;
	CHECK(doca_buf_reset_data_len(buf));
	CHECK(doca_task_submit(doca_comch_consumer_task_post_recv_as_task(task)));
}

static void consume_failed(struct doca_comch_consumer_task_post_recv *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	/* Flushed at stop: the task goes back. */
	doca_task_free(doca_comch_consumer_task_post_recv_as_task(task));
}
#endif

int main(int argc, char **argv)
{
	union doca_data ud = {.ptr = &st.state}, fud = {.ptr = &st.fast_state};
	struct doca_buf_inventory *inv;
	struct doca_mmap *mmap;
	struct doca_dev *dev;
	long count = argc > 2 ? atol(argv[2]) : 1000;

	if (argc < 2) {
		fprintf(stderr, "usage: %s NAME [COUNT]\n", argv[0]);
		return 2;
	}
	CHECK(doca_pe_create(&st.pe));
	CHECK(doca_buf_inventory_create(2 * NUM_BUFS, &inv));
	CHECK(doca_buf_inventory_start(inv));
#ifdef DOCA_ARCH_DPU
	struct doca_comch_server *server;
	struct doca_dev_rep *rep = NULL;
	struct doca_comch_producer *producer;
	uint32_t max_buf = 0;

	dev = open_dev_at("03:00.0");
	CHECK(doca_comch_producer_cap_is_supported(doca_dev_as_devinfo(dev)));
	CHECK(doca_comch_producer_cap_get_max_buf_size(doca_dev_as_devinfo(dev), &max_buf));
	ASSERT(max_buf >= BUF_SIZE);
	rep = open_rep_at(dev, "3b:00.0");
	CHECK(doca_comch_server_create(dev, rep, argv[1], &server));
	st.ctx = doca_comch_server_as_ctx(server);
	CHECK(doca_comch_server_task_send_set_conf(server, comch_send_done, comch_send_failed, 8));
	CHECK(doca_comch_server_event_msg_recv_register(server, msg_recv));
	CHECK(doca_comch_server_event_consumer_register(server, new_consumer, expired_consumer));
	CHECK(doca_pe_connect_ctx(st.pe, st.ctx));
	CHECK(doca_ctx_set_state_changed_cb(st.ctx, state_cb));
	CHECK(doca_ctx_set_user_data(st.ctx, ud));
	CHECK(doca_ctx_start(st.ctx));
	while (st.remote_consumer == 0)
		progress_all();
	/* The producer, on an engine of its own. */
	mmap = local_mmap(dev, mem, sizeof(mem));
	CHECK(doca_pe_create(&st.fast_pe));
	CHECK(doca_comch_producer_create(st.conn, &producer));
	CHECK(doca_pe_connect_ctx(st.fast_pe, doca_comch_producer_as_ctx(producer)));
	CHECK(doca_comch_producer_task_send_set_conf(producer, produced, produce_failed, NUM_BUFS));
	CHECK(doca_ctx_set_state_changed_cb(doca_comch_producer_as_ctx(producer), state_cb));
	CHECK(doca_ctx_set_user_data(doca_comch_producer_as_ctx(producer), fud));
	CHECK(doca_ctx_start(doca_comch_producer_as_ctx(producer)));
	for (long k = 0; k < count; k++) {
		struct doca_comch_producer_task_send *task;
		struct doca_buf *buf;
		uint8_t *p = mem + (k % NUM_BUFS) * BUF_SIZE;
		uint32_t len = len_of(k);
		doca_error_t r;

		/* A buffer is reused once its send completed. */
		while (k - st.send_done >= NUM_BUFS)
			progress_all();
		fill(p, k, len);
		CHECK(doca_buf_inventory_buf_get_by_data(inv, mmap, p, len, &buf));
		CHECK(doca_comch_producer_task_send_alloc_init(producer, buf, (uint8_t *)&k, sizeof(k), st.remote_consumer, &task));
		while ((r = doca_task_submit(doca_comch_producer_task_send_as_task(task))) == DOCA_ERROR_AGAIN)
			progress_all();
		CHECK(r);
	}
	while (!st.done_msg || st.send_done < count)
		progress_all();
	ASSERT(doca_ctx_stop(doca_comch_producer_as_ctx(producer)) == DOCA_SUCCESS);
	CHECK(doca_comch_producer_destroy(producer));
	CHECK(doca_pe_destroy(st.fast_pe));
	st.fast_pe = NULL;
	while (st.state != DOCA_CTX_STATE_IDLE) {
		doca_error_t r = doca_ctx_stop(st.ctx);

		ASSERT(r == DOCA_SUCCESS || r == DOCA_ERROR_IN_PROGRESS);
		progress_all();
	}
	CHECK(doca_comch_server_destroy(server));
	CHECK(doca_dev_rep_close(rep));
	printf("comch_fast3 server: %ld buffers produced\n", st.send_done);
#else
	struct doca_comch_client *client;
	struct doca_comch_consumer *consumer;
	struct doca_comch_consumer_task_post_recv *task;
	struct doca_buf *bufs[NUM_BUFS];
	struct doca_comch_task_send *msg;
	uint32_t id = 0;

	dev = open_dev_at("3b:00.0");
	CHECK(doca_comch_client_create(dev, argv[1], &client));
	st.ctx = doca_comch_client_as_ctx(client);
	CHECK(doca_comch_client_task_send_set_conf(client, comch_send_done, comch_send_failed, 8));
	CHECK(doca_comch_client_event_msg_recv_register(client, msg_recv));
	CHECK(doca_pe_connect_ctx(st.pe, st.ctx));
	CHECK(doca_ctx_set_state_changed_cb(st.ctx, state_cb));
	CHECK(doca_ctx_set_user_data(st.ctx, ud));
	ASSERT(doca_ctx_start(st.ctx) == DOCA_ERROR_IN_PROGRESS);
	while (st.state != DOCA_CTX_STATE_RUNNING)
		progress_all();
	CHECK(doca_comch_client_get_connection(client, &st.conn));
	/* The consumer, on an engine of its own. */
	mmap = local_mmap(dev, mem, sizeof(mem));
	CHECK(doca_pe_create(&st.fast_pe));
	CHECK(doca_comch_consumer_create(st.conn, mmap, &consumer));
	CHECK(doca_comch_consumer_get_id(consumer, &id));
	ASSERT(id != 0);
	CHECK(doca_pe_connect_ctx(st.fast_pe, doca_comch_consumer_as_ctx(consumer)));
	CHECK(doca_comch_consumer_task_post_recv_set_conf(consumer, consumed, consume_failed, NUM_BUFS));
	CHECK(doca_ctx_set_state_changed_cb(doca_comch_consumer_as_ctx(consumer), state_cb));
	CHECK(doca_ctx_set_user_data(doca_comch_consumer_as_ctx(consumer), fud));
	ASSERT(doca_ctx_start(doca_comch_consumer_as_ctx(consumer)) == DOCA_ERROR_IN_PROGRESS);
	while (st.fast_state != DOCA_CTX_STATE_RUNNING)
		progress_all();
	for (int k = 0; k < NUM_BUFS; k++) {
		CHECK(doca_buf_inventory_buf_get_by_addr(inv, mmap, mem + k * BUF_SIZE, BUF_SIZE, &bufs[k]));
		CHECK(doca_comch_consumer_task_post_recv_alloc_init(consumer, bufs[k], &task));
		CHECK(doca_task_submit(doca_comch_consumer_task_post_recv_as_task(task)));
	}
	while (st.received < count)
		progress_all();
	CHECK(doca_comch_client_task_send_alloc_init(client, st.conn, "done", 4, &msg));
	CHECK(doca_task_submit(doca_comch_task_send_as_task(msg)));
	/* Stopping flushes the posted receives (their error callback frees them). */
	ASSERT(doca_ctx_stop(doca_comch_consumer_as_ctx(consumer)) == DOCA_ERROR_IN_PROGRESS);
	while (st.fast_state != DOCA_CTX_STATE_IDLE)
		progress_all();
	for (int k = 0; k < NUM_BUFS; k++)
		CHECK(doca_buf_dec_refcount(bufs[k], NULL));
	CHECK(doca_comch_consumer_destroy(consumer));
	CHECK(doca_pe_destroy(st.fast_pe));
	st.fast_pe = NULL;
	/* The server stops once it saw "done": the client's channel ends. */
	while (st.state != DOCA_CTX_STATE_IDLE) {
		doca_error_t r = doca_ctx_stop(st.ctx);

		ASSERT(r == DOCA_SUCCESS || r == DOCA_ERROR_IN_PROGRESS);
		progress_all();
	}
	CHECK(doca_comch_client_destroy(client));
	printf("comch_fast3 client: %ld buffers consumed in order from producer %u\n", st.received, st.producer_id);
#endif
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_pe_destroy(st.pe));
	CHECK(doca_dev_close(dev));
	return 0;
}
