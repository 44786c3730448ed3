/*
 * cc_pair26.c as a DOCA 2.6 program writes it: the same server (DPU side) and client
 * (host side) under comch's 2.6 names (doca_cc.h), which DOCA 2.7 renamed doca_comch.
 *
 *   cc_pair26 NAME [COUNT]
 *
 * The client starts (DOCA_ERROR_IN_PROGRESS) and runs once the server is there, sends
 * COUNT numbered messages as fast as its send tasks allow, checks that every echo comes
 * back whole and in order, then sends "bye". The server echoes each message, answers
 * "bye" with "bye-ack" and stops at once from the completion callback of that send: the
 * client must still see "bye-ack" before it sees the end of the connection.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_cc.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_pe.h>

#include "common3.h"

/* On the DPU side: opens the representor of the host function at `pci` ("bus:dev.fn"). */
static inline struct doca_dev_rep *open_rep_at(struct doca_dev *dev, const char *pci)
{
	struct doca_devinfo_rep **reps;
	struct doca_dev_rep *rep = NULL;
	uint32_t nreps = 0, i;
	uint8_t is_addr;

	CHECK(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &nreps));
	for (i = 0; i < nreps && rep == NULL; i++) {
		CHECK(doca_devinfo_rep_is_equal_pci_addr(reps[i], pci, &is_addr));
		if (is_addr)
			CHECK(doca_dev_rep_open(reps[i], &rep));
	}
	CHECK(doca_devinfo_rep_destroy_list(reps));
	ASSERT(rep != NULL);
	return rep;
}

/* Send task completion: the task goes back to its pool. */
static inline void cc_send_done(struct doca_cc_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	doca_task_free(doca_cc_task_send_as_task(task));
}

/* Send task error: the test fails. */
static inline void cc_send_failed(struct doca_cc_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	fprintf(stderr, "send failed: %s\n", doca_error_get_name(doca_task_get_status(doca_cc_task_send_as_task(task))));
	exit(1);
}



#define NUM_SEND_TASKS 16
/* The server's tasks: an echo's completion may come after the client already answered
 * it with a new message (the two sides run apart), so twice the client's window. */
#define SERVER_SEND_TASKS (2 * NUM_SEND_TASKS)
#define RECV_QUEUE_SIZE 4

struct state {
	struct doca_pe *pe;
	struct doca_ctx *ctx;
	bool server;
	bool finish;
	int connects, disconnects;
	long echoes;		 /* client: echoes received in order */
	long received;		 /* server: messages received */
	bool got_ack;		 /* client: "bye-ack" came */
	int sends_done, sends_failed;
	char msgs[NUM_SEND_TASKS][32]; /* the client's messages in flight */
	int next_slot;
	enum doca_ctx_states last_state;
};

static struct state st;

static void nap(void)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000};
	nanosleep(&ts, &ts);
}

static void send_done(struct doca_cc_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct state *s = ctx_user_data.ptr;

	ASSERT(s == &st);
	s->sends_done++;
	doca_task_free(doca_cc_task_send_as_task(task));
	/* User data 1 marks the server's "bye-ack" (DOCA 2.6 has no getter of the message). */
	if (s->server && task_user_data.u64 == 1) {
		/* As DOCA's server sample does: stop right after the last send. */
		doca_error_t r = doca_ctx_stop(s->ctx);
		ASSERT(r == DOCA_SUCCESS || r == DOCA_ERROR_IN_PROGRESS);
	}
}

static void send_failed(struct doca_cc_task_send *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	struct state *s = ctx_user_data.ptr;

	(void)task_user_data;
	fprintf(stderr, "send failed: %s\n", doca_error_get_name(doca_task_get_status(doca_cc_task_send_as_task(task))));
	s->sends_failed++;
	doca_task_free(doca_cc_task_send_as_task(task));
}

static doca_error_t send_msg(struct doca_cc_connection *conn, const char *msg, uint32_t len, uint64_t tag)
{
	struct doca_cc_task_send *task;
	union doca_data ud = {.u64 = tag};
	doca_error_t r;

	if (st.server) {
		struct doca_cc_server *server = doca_cc_server_get_server_ctx(conn);

		ASSERT(server != NULL);
		ASSERT(doca_cc_client_get_client_ctx(conn) == NULL);
		r = doca_cc_server_task_send_alloc_init(server, conn, msg, len, &task);
	} else {
		struct doca_cc_client *client = doca_cc_client_get_client_ctx(conn);

		ASSERT(client != NULL);
		r = doca_cc_client_task_send_alloc_init(client, conn, msg, len, &task);
	}
	if (r != DOCA_SUCCESS)
		return r;
	doca_task_set_user_data(doca_cc_task_send_as_task(task), ud);
	r = doca_task_submit(doca_cc_task_send_as_task(task));
	if (r != DOCA_SUCCESS)
		doca_task_free(doca_cc_task_send_as_task(task));
	return r;
}

/* The server's echoes: a send's bytes stay until it completes, and sends complete in
 * order, so one slot per task, in turn, suffices. */
static char echo_ring[SERVER_SEND_TASKS][64];

static void msg_recv(struct doca_cc_event_msg_recv *event, uint8_t *buf, uint32_t len, struct doca_cc_connection *conn)
{
	(void)event;
	if (st.server) {
		union doca_data ud = doca_cc_connection_get_user_data(conn);

		ASSERT(ud.u64 == 0xc0ffee);
		st.received++;
		if (len == 3 && memcmp(buf, "bye", 3) == 0) {
			CHECK(send_msg(conn, "bye-ack", sizeof("bye-ack"), 1));
			return;
		}
		char *echo = echo_ring[(st.received - 1) % SERVER_SEND_TASKS];

		ASSERT(len + 5 < sizeof(echo_ring[0]));
		memcpy(echo, "echo:", 5);
		memcpy(echo + 5, buf, len);
		CHECK(send_msg(conn, echo, len + 5, 0));
		return;
	}
	if (len == sizeof("bye-ack") && strcmp((const char *)buf, "bye-ack") == 0) {
		st.got_ack = true;
		return;
	}
	char want[48];
	int n = snprintf(want, sizeof(want), "echo:msg %ld", st.echoes);

	if ((uint32_t)n != len || memcmp(want, buf, len) != 0) {
		fprintf(stderr, "echo %ld: got '%.*s', expected '%s'\n", st.echoes, (int)len, buf, want);
		exit(1);
	}
	st.echoes++;
}

#ifdef DOCA_ARCH_DPU
static void connected(struct doca_cc_event_connection_status_changed *event, struct doca_cc_connection *conn, uint8_t ok)
{
	union doca_data ud = {.u64 = 0xc0ffee};

	(void)event;
	ASSERT(ok);
	st.connects++;
	CHECK(doca_cc_connection_set_user_data(conn, ud));
}

static void disconnected(struct doca_cc_event_connection_status_changed *event, struct doca_cc_connection *conn, uint8_t ok)
{
	(void)event;
	(void)conn;
	(void)ok;
	st.disconnects++;
}
#endif

static void state_changed(const union doca_data user_data, struct doca_ctx *ctx, enum doca_ctx_states prev, enum doca_ctx_states next)
{
	struct state *s = user_data.ptr;

	(void)ctx;
	(void)prev;
	s->last_state = next;
	if (next == DOCA_CTX_STATE_IDLE)
		s->finish = true;
}

int main(int argc, char **argv)
{
	struct doca_dev *dev;
	union doca_data ud = {.ptr = &st};
	uint32_t max_msg = 0;
	long count = argc > 2 ? atol(argv[2]) : 500;

	if (argc < 2) {
		fprintf(stderr, "usage: %s NAME [COUNT]\n", argv[0]);
		return 2;
	}
	CHECK(doca_pe_create(&st.pe));
#ifdef DOCA_ARCH_DPU
	struct doca_cc_server *server;
	struct doca_dev_rep *rep = NULL;

	st.server = true;
	dev = open_dev_at("03:00.0");
	CHECK(doca_cc_cap_server_is_supported(doca_dev_as_devinfo(dev)));
	EXPECT_ERR(doca_cc_cap_client_is_supported(doca_dev_as_devinfo(dev)), DOCA_ERROR_NOT_SUPPORTED);
	rep = open_rep_at(dev, "3b:00.0");
	CHECK(doca_cc_server_create(dev, rep, argv[1], &server));
	{
		struct doca_dev *got_dev = NULL;
		struct doca_dev_rep *got_rep = NULL;

		CHECK(doca_cc_server_get_device(server, &got_dev));
		CHECK(doca_cc_server_get_device_repr(server, &got_rep));
		ASSERT(got_dev == dev && got_rep == rep);
	}
	st.ctx = doca_cc_server_as_ctx(server);
	CHECK(doca_cc_server_task_send_set_conf(server, send_done, send_failed, SERVER_SEND_TASKS));
	CHECK(doca_cc_server_event_msg_recv_register(server, msg_recv));
	CHECK(doca_cc_server_event_connection_register(server, connected, disconnected));
	CHECK(doca_cc_cap_get_max_msg_size(doca_dev_as_devinfo(dev), &max_msg));
	CHECK(doca_cc_server_set_max_msg_size(server, max_msg));
	CHECK(doca_cc_server_set_recv_queue_size(server, RECV_QUEUE_SIZE));
#else
	struct doca_cc_client *client;
	struct doca_cc_connection *conn;
	struct doca_cc_task_send *task;
	uint32_t size = 0;
	uint64_t counter = 0;

	dev = open_dev_at("3b:00.0");
	CHECK(doca_cc_cap_client_is_supported(doca_dev_as_devinfo(dev)));
	CHECK(doca_cc_client_create(dev, argv[1], &client));
	{
		struct doca_dev *got_dev = NULL;

		CHECK(doca_cc_client_get_device(client, &got_dev));
		ASSERT(got_dev == dev);
	}
	st.ctx = doca_cc_client_as_ctx(client);
	CHECK(doca_cc_client_task_send_set_conf(client, send_done, send_failed, NUM_SEND_TASKS));
	CHECK(doca_cc_client_event_msg_recv_register(client, msg_recv));
	CHECK(doca_cc_cap_get_max_msg_size(doca_dev_as_devinfo(dev), &max_msg));
	CHECK(doca_cc_client_set_max_msg_size(client, max_msg));
	CHECK(doca_cc_client_set_recv_queue_size(client, RECV_QUEUE_SIZE));
	CHECK(doca_cc_client_get_recv_queue_size(client, &size));
	ASSERT(size == RECV_QUEUE_SIZE);
	EXPECT_ERR(doca_cc_client_get_connection(client, &conn), DOCA_ERROR_BAD_STATE);
	/* A server-only call on a client is refused. */
	EXPECT_ERR(doca_cc_server_set_recv_queue_size((struct doca_cc_server *)client, 4),
		   DOCA_ERROR_INVALID_VALUE);
#endif
	CHECK(doca_pe_connect_ctx(st.pe, st.ctx));
	CHECK(doca_ctx_set_state_changed_cb(st.ctx, state_changed));
	CHECK(doca_ctx_set_user_data(st.ctx, ud));
#ifdef DOCA_ARCH_DPU
	CHECK(doca_ctx_start(st.ctx));
	ASSERT(st.last_state == DOCA_CTX_STATE_RUNNING);
	while (!st.finish) {
		if (doca_pe_progress(st.pe) == 0)
			nap();
	}
	ASSERT(st.connects == 1);
	ASSERT(st.received == count + 1);
	ASSERT(st.sends_done == count + 1 && st.sends_failed == 0);
	CHECK(doca_cc_server_destroy(server));
	CHECK(doca_dev_rep_close(rep));
	printf("cc_pair26 server: %ld messages echoed\n", st.received - 1);
#else
	EXPECT_ERR(doca_ctx_start(st.ctx), DOCA_ERROR_IN_PROGRESS);
	ASSERT(st.last_state == DOCA_CTX_STATE_STARTING);
	while (st.last_state != DOCA_CTX_STATE_RUNNING) {
		if (doca_pe_progress(st.pe) == 0)
			nap();
	}
	CHECK(doca_cc_client_get_connection(client, &conn));
	ASSERT(doca_cc_client_get_client_ctx(conn) == client);
	ASSERT(doca_cc_server_get_server_ctx(conn) == NULL);
	/* Refusals leave nothing behind. */
	EXPECT_ERR(doca_cc_client_task_send_alloc_init(client, conn, "x", 0, &task), DOCA_ERROR_INVALID_VALUE);
	EXPECT_ERR(doca_cc_client_task_send_alloc_init(client, conn, "x", max_msg + 1, &task),
		   DOCA_ERROR_INVALID_VALUE);
	for (long i = 0; i < count; i++) {
		char *slot = st.msgs[st.next_slot];
		doca_error_t r;
		int n;

		/* At most NUM_SEND_TASKS messages without their echo: the server never runs
		 * out of send tasks, and a slot is reused only once its message went out. */
		while (i - st.echoes >= NUM_SEND_TASKS)
			(void)doca_pe_progress(st.pe);
		n = snprintf(slot, sizeof(st.msgs[0]), "msg %ld", i);
		while ((r = send_msg(conn, slot, (uint32_t)n, 0)) == DOCA_ERROR_NO_MEMORY)
			(void)doca_pe_progress(st.pe);
		CHECK(r);
		st.next_slot = (st.next_slot + 1) % NUM_SEND_TASKS;
	}
	while (st.echoes < count) {
		if (doca_pe_progress(st.pe) == 0)
			nap();
	}
	CHECK(send_msg(conn, "bye", 3, 0));
	while (!st.got_ack && st.last_state == DOCA_CTX_STATE_RUNNING) {
		if (doca_pe_progress(st.pe) == 0)
			nap();
	}
	ASSERT(st.got_ack);
	CHECK(doca_cc_connection_get_counter(conn, DOCA_CC_COUNTER_SENT_MESSAGES, &counter));
	ASSERT(counter == (uint64_t)count + 1);
	CHECK(doca_cc_connection_get_counter(conn, DOCA_CC_COUNTER_RECV_MESSAGES, &counter));
	ASSERT(counter == (uint64_t)count + 1);
	/* The server stopped after its last send: the client sees its channel end. */
	while (st.last_state != DOCA_CTX_STATE_IDLE) {
		doca_error_t r = doca_ctx_stop(st.ctx);

		ASSERT(r == DOCA_SUCCESS || r == DOCA_ERROR_IN_PROGRESS);
		(void)doca_pe_progress(st.pe);
	}
	ASSERT(st.sends_done == count + 1 && st.sends_failed == 0);
	CHECK(doca_cc_client_destroy(client));
	printf("cc_pair26 client: %ld echoes in order, bye-ack before the end\n", st.echoes);
#endif
	CHECK(doca_pe_destroy(st.pe));
	CHECK(doca_dev_close(dev));
	return 0;
}
