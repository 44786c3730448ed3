/*
 * The host and DPU sides of a 3.x program as two processes, the way DOCA 3.x programs
 * share memory and events across the PCIe link: the host exports an mmap
 * (doca_mmap_export_pci) and a sync event (doca_sync_event_export_to_remote_pci) and
 * sends both descriptors over comch; the DPU side imports them, copies its own bytes
 * into the host's memory with a DMA memcpy task, and signals the event; the host waits
 * for it (doca_sync_event_wait_eq) and checks its memory.
 *
 *   xside3 NAME
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>

#include "comch3.h"
#include <doca_sync_event.h>


#define LEN 8192

static struct {
	struct doca_pe *pe;
	struct doca_ctx *ctx;
	enum doca_ctx_states state;
	uint8_t blobs[2][4080];
	uint32_t blob_len[2];
	int blobs_got;
	bool ok_msg;
	int copies_done;
} st;

static void nap(void)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000};
	nanosleep(&ts, &ts);
}

static void state_cb(const union doca_data ud, struct doca_ctx *ctx, enum doca_ctx_states prev, enum doca_ctx_states next)
{
	(void)ud;
	(void)ctx;
	(void)prev;
	st.state = next;
}

static void msg_recv(struct doca_comch_event_msg_recv *event, uint8_t *buf, uint32_t len, struct doca_comch_connection *conn)
{
	(void)event;
	(void)conn;
	if (len == 2 && memcmp(buf, "ok", 2) == 0) {
		st.ok_msg = true;
		return;
	}
	ASSERT(st.blobs_got < 2 && len <= sizeof(st.blobs[0]));
	memcpy(st.blobs[st.blobs_got], buf, len);
	st.blob_len[st.blobs_got++] = len;
}

#ifndef DOCA_ARCH_DPU
static void send_bytes(struct doca_comch_connection *conn, const void *msg, uint32_t len)
{
	struct doca_comch_task_send *task;

	CHECK(doca_comch_client_task_send_alloc_init(doca_comch_client_get_client_ctx(conn), conn, msg, len, &task));
	CHECK(doca_task_submit(doca_comch_task_send_as_task(task)));
}
#endif

#ifdef DOCA_ARCH_DPU
static struct doca_comch_connection *server_conn;

static void connected(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *conn, uint8_t ok)
{
	(void)event;
	ASSERT(ok);
	server_conn = conn;
}

static void disconnected(struct doca_comch_event_connection_status_changed *event, struct doca_comch_connection *conn, uint8_t ok)
{
	(void)event;
	(void)conn;
	(void)ok;
}

static void copied(struct doca_dma_task_memcpy *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	st.copies_done++;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

static void copy_failed(struct doca_dma_task_memcpy *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	fprintf(stderr, "copy failed: %s\n", doca_error_get_name(doca_task_get_status(doca_dma_task_memcpy_as_task(task))));
	exit(1);
}
#endif

int main(int argc, char **argv)
{
	union doca_data ud = {.ptr = &st};
	struct doca_dev *dev;

	if (argc < 2) {
		fprintf(stderr, "usage: %s NAME\n", argv[0]);
		return 2;
	}
	CHECK(doca_pe_create(&st.pe));
#ifdef DOCA_ARCH_DPU
	struct doca_comch_server *server;
	struct doca_dev_rep *rep = NULL;
	struct doca_mmap *remote, *local;
	struct doca_sync_event *se;
	struct doca_buf_inventory *inv;
	struct doca_buf *src, *dst;
	struct doca_dma *dma;
	struct doca_dma_task_memcpy *task;
	static uint8_t mine[LEN];
	void *remote_addr;
	size_t remote_len;
	uint32_t i;

	dev = open_dev_at("03:00.0");
	rep = open_rep_at(dev, "3b:00.0");
	CHECK(doca_comch_server_create(dev, rep, argv[1], &server));
	st.ctx = doca_comch_server_as_ctx(server);
	CHECK(doca_comch_server_task_send_set_conf(server, comch_send_done, comch_send_failed, 4));
	CHECK(doca_comch_server_event_msg_recv_register(server, msg_recv));
	CHECK(doca_comch_server_event_connection_status_changed_register(server, connected, disconnected));
	CHECK(doca_pe_connect_ctx(st.pe, st.ctx));
	CHECK(doca_ctx_set_state_changed_cb(st.ctx, state_cb));
	CHECK(doca_ctx_set_user_data(st.ctx, ud));
	CHECK(doca_ctx_start(st.ctx));
	while (st.blobs_got < 2)
		if (doca_pe_progress(st.pe) == 0)
			nap();
	/* The host's memory, and its event. */
	CHECK(doca_mmap_create_from_export(NULL, st.blobs[0], st.blob_len[0], dev, &remote));
	CHECK(doca_mmap_get_memrange(remote, &remote_addr, &remote_len));
	ASSERT(remote_len == LEN);
	ASSERT(doca_sync_event_cap_is_create_from_export_supported(doca_dev_as_devinfo(dev)) == DOCA_SUCCESS);
	CHECK(doca_sync_event_create_from_export(dev, st.blobs[1], st.blob_len[1], &se));
	CHECK(doca_sync_event_start(se));
	/* Copy this side's bytes into the host's memory. */
	for (i = 0; i < LEN; i++)
		mine[i] = (uint8_t)(i * 7 + 3);
	CHECK(doca_mmap_create(&local));
	CHECK(doca_mmap_set_memrange(local, mine, LEN));
	CHECK(doca_mmap_add_dev(local, dev));
	CHECK(doca_mmap_start(local));
	CHECK(doca_buf_inventory_create(4, &inv));
	CHECK(doca_buf_inventory_start(inv));
	CHECK(doca_buf_inventory_buf_get_by_data(inv, local, mine, LEN, &src));
	CHECK(doca_buf_inventory_buf_get_by_addr(inv, remote, remote_addr, LEN, &dst));
	CHECK(doca_dma_create(dev, &dma));
	CHECK(doca_pe_connect_ctx(st.pe, doca_dma_as_ctx(dma)));
	CHECK(doca_dma_task_memcpy_set_conf(dma, copied, copy_failed, 2));
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma)));
	CHECK(doca_dma_task_memcpy_alloc_init(dma, src, dst, ud, &task));
	CHECK(doca_task_submit(doca_dma_task_memcpy_as_task(task)));
	while (st.copies_done < 1)
		if (doca_pe_progress(st.pe) == 0)
			nap();
	/* Tell the host through its event; it answers "ok" on the channel. */
	CHECK(doca_sync_event_update_set(se, 1));
	while (!st.ok_msg)
		if (doca_pe_progress(st.pe) == 0)
			nap();
	CHECK(doca_ctx_stop(doca_dma_as_ctx(dma)));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_buf_dec_refcount(src, NULL));
	CHECK(doca_buf_dec_refcount(dst, NULL));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_destroy(local));
	CHECK(doca_mmap_destroy(remote));
	CHECK(doca_sync_event_stop(se));
	CHECK(doca_sync_event_destroy(se));
	while (st.state != DOCA_CTX_STATE_IDLE) {
		doca_error_t r = doca_ctx_stop(st.ctx);

		ASSERT(r == DOCA_SUCCESS || r == DOCA_ERROR_IN_PROGRESS);
		(void)doca_pe_progress(st.pe);
	}
	CHECK(doca_comch_server_destroy(server));
	CHECK(doca_dev_rep_close(rep));
	(void)server_conn;
	printf("xside3 dpu: copied %d bytes into the host's memory and signalled its event\n", LEN);
#else
	struct doca_comch_client *client;
	struct doca_comch_connection *conn;
	struct doca_mmap *mmap;
	struct doca_sync_event *se;
	static uint8_t host_mem[LEN];
	const void *mmap_blob;
	const uint8_t *se_blob;
	size_t mmap_len, se_len;
	uint64_t value = 0;

	dev = open_dev_at("3b:00.0");
	CHECK(doca_comch_client_create(dev, argv[1], &client));
	st.ctx = doca_comch_client_as_ctx(client);
	CHECK(doca_comch_client_task_send_set_conf(client, comch_send_done, comch_send_failed, 4));
	CHECK(doca_comch_client_event_msg_recv_register(client, msg_recv));
	CHECK(doca_pe_connect_ctx(st.pe, st.ctx));
	CHECK(doca_ctx_set_state_changed_cb(st.ctx, state_cb));
	CHECK(doca_ctx_set_user_data(st.ctx, ud));
	ASSERT(doca_ctx_start(st.ctx) == DOCA_ERROR_IN_PROGRESS);
	while (st.state != DOCA_CTX_STATE_RUNNING)
		if (doca_pe_progress(st.pe) == 0)
			nap();
	CHECK(doca_comch_client_get_connection(client, &conn));
	/* This side's memory, for the DPU side to write. */
	CHECK(doca_mmap_create(&mmap));
	CHECK(doca_mmap_set_memrange(mmap, host_mem, LEN));
	CHECK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_PCI_READ_WRITE));
	CHECK(doca_mmap_add_dev(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_mmap_export_pci(mmap, dev, &mmap_blob, &mmap_len));
	/* An event the DPU side publishes and this side waits on. */
	ASSERT(doca_sync_event_cap_is_export_to_remote_pci_supported(doca_dev_as_devinfo(dev)) == DOCA_SUCCESS);
	CHECK(doca_sync_event_create(&se));
	CHECK(doca_sync_event_add_publisher_location_remote_pci(se));
	CHECK(doca_sync_event_add_subscriber_location_cpu(se, dev));
	CHECK(doca_sync_event_start(se));
	CHECK(doca_sync_event_export_to_remote_pci(se, dev, &se_blob, &se_len));
	send_bytes(conn, mmap_blob, (uint32_t)mmap_len);
	send_bytes(conn, se_blob, (uint32_t)se_len);
	/* Progress the channel (the sends) while the DPU side works, then wait. */
	for (int k = 0; k < 1000 && doca_pe_progress(st.pe) == 0; k++)
		nap();
	CHECK(doca_sync_event_wait_eq(se, 1, UINT64_MAX));
	CHECK(doca_sync_event_get(se, &value));
	ASSERT(value == 1);
	for (int k = 0; k < LEN; k++)
		ASSERT(host_mem[k] == (uint8_t)(k * 7 + 3));
	send_bytes(conn, "ok", 2);
	while (st.state != DOCA_CTX_STATE_IDLE) {
		doca_error_t r;

		(void)doca_pe_progress(st.pe);
		r = doca_ctx_stop(st.ctx);
		ASSERT(r == DOCA_SUCCESS || r == DOCA_ERROR_IN_PROGRESS);
	}
	CHECK(doca_sync_event_stop(se));
	CHECK(doca_sync_event_destroy(se));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_comch_client_destroy(client));
	printf("xside3 host: the DPU side's bytes arrived and its event was seen\n");
#endif
	CHECK(doca_pe_destroy(st.pe));
	CHECK(doca_dev_close(dev));
	return 0;
}
