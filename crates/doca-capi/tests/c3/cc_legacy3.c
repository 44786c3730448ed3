/*
 * A DOCA 2.5/2.6-style program as two processes: the 2.x comm channel
 * (doca_comm_channel_ep_*) carries the descriptors while the work runs on a progress
 * engine. The host exports an mmap and a sync event and sends both descriptors with
 * doca_comm_channel_ep_sendto; the DPU side receives them with
 * doca_comm_channel_ep_recvfrom (polling on DOCA_ERROR_AGAIN), copies its bytes into the
 * host's memory with a DMA memcpy task on its progress engine, signals the event and
 * answers "done" on the channel; the host waits for the event with a wait task on its own
 * progress engine, checks its memory and the answer.
 *
 *   cc_legacy3 NAME
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_comm_channel.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_sync_event.h>

#include "common3.h"

#define LEN 8192
#define MAX_MSG 4080

static void nap(void)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 10 * 1000};

	nanosleep(&ts, &ts);
}

/* Sets up an endpoint as DOCA 2.x samples do. */
static struct doca_comm_channel_ep_t *ep_open(struct doca_dev *dev, struct doca_dev_rep *rep)
{
	struct doca_comm_channel_ep_t *ep;
	uint32_t max_msg = 0;

	CHECK(doca_comm_channel_get_max_message_size(doca_dev_as_devinfo(dev), &max_msg));
	ASSERT(max_msg >= MAX_MSG);
	CHECK(doca_comm_channel_ep_create(&ep));
	CHECK(doca_comm_channel_ep_set_device(ep, dev));
	if (rep != NULL)
		CHECK(doca_comm_channel_ep_set_device_rep(ep, rep));
	CHECK(doca_comm_channel_ep_set_max_msg_size(ep, MAX_MSG));
	CHECK(doca_comm_channel_ep_set_send_queue_size(ep, 8));
	CHECK(doca_comm_channel_ep_set_recv_queue_size(ep, 8));
	return ep;
}

/* Receives one message, waiting while there is none. */
static size_t recv_msg(struct doca_comm_channel_ep_t *ep, void *buf, struct doca_comm_channel_addr_t **peer)
{
	size_t len;
	doca_error_t r;

	for (;;) {
		len = MAX_MSG;
		r = doca_comm_channel_ep_recvfrom(ep, buf, &len, DOCA_CC_MSG_FLAG_NONE, peer);
		if (r != DOCA_ERROR_AGAIN)
			break;
		nap();
	}
	CHECK(r);
	return len;
}

/* Sends one message, waiting while the peer is not reached yet. */
static void send_msg(struct doca_comm_channel_ep_t *ep, const void *buf, size_t len, struct doca_comm_channel_addr_t *peer)
{
	doca_error_t r;

	while ((r = doca_comm_channel_ep_sendto(ep, buf, len, DOCA_CC_MSG_FLAG_NONE, peer)) == DOCA_ERROR_AGAIN)
		nap();
	CHECK(r);
}

#ifdef DOCA_ARCH_DPU
static int copies_done;

/* On the DPU side: opens the representor of the host function at `pci`. */
static struct doca_dev_rep *open_rep_at(struct doca_dev *dev, const char *pci)
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

static void copied(struct doca_dma_task_memcpy *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	copies_done++;
	doca_task_free(doca_dma_task_memcpy_as_task(task));
}

static void copy_failed(struct doca_dma_task_memcpy *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	fprintf(stderr, "copy failed: %s\n", doca_error_get_descr(doca_task_get_status(doca_dma_task_memcpy_as_task(task))));
	exit(1);
}

static int dpu_side(const char *name)
{
	static uint8_t mine[LEN];
	static char blobs[2][MAX_MSG];
	size_t blob_len[2];
	struct doca_dev *dev = open_dev_at("03:00.0");
	struct doca_dev_rep *rep = open_rep_at(dev, "3b:00.0");
	struct doca_comm_channel_ep_t *ep = ep_open(dev, rep);
	char rep_iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
	uint16_t rep_vhca = 0, dev_vhca = 0;
	uint8_t hotplug = 1;
	struct doca_comm_channel_addr_t *peer = NULL;
	struct doca_pe *pe;
	struct doca_mmap *remote, *local;
	struct doca_sync_event *se;
	struct doca_buf_inventory *inv;
	struct doca_buf *src, *dst;
	struct doca_dma *dma;
	struct doca_dma_task_memcpy *task;
	union doca_data ud = {.u64 = 0};
	void *remote_addr;
	size_t remote_len;
	uint32_t i;

	/* The representor as newer programs query it. */
	CHECK(doca_devinfo_rep_get_iface_name(doca_dev_rep_as_devinfo(rep), rep_iface, sizeof(rep_iface)));
	ASSERT(strcmp(rep_iface, "pf0hpf") == 0);
	CHECK(doca_devinfo_rep_get_is_hotplug(doca_dev_rep_as_devinfo(rep), &hotplug));
	ASSERT(hotplug == 0);
	CHECK(doca_devinfo_rep_get_vhca_id(doca_dev_rep_as_devinfo(rep), &rep_vhca));
	CHECK(doca_devinfo_get_vhca_id(doca_dev_as_devinfo(dev), &dev_vhca));
	ASSERT(rep_vhca != dev_vhca);
	CHECK(doca_comm_channel_ep_listen(ep, name));
	blob_len[0] = recv_msg(ep, blobs[0], &peer);
	blob_len[1] = recv_msg(ep, blobs[1], &peer);
	CHECK(doca_mmap_create_from_export(NULL, blobs[0], blob_len[0], dev, &remote));
	CHECK(doca_mmap_get_memrange(remote, &remote_addr, &remote_len));
	ASSERT(remote_len == LEN);
	CHECK(doca_sync_event_create_from_export(dev, (const uint8_t *)blobs[1], blob_len[1], &se));
	CHECK(doca_sync_event_start(se));

	for (i = 0; i < LEN; i++)
		mine[i] = (uint8_t)(i * 11 + 7);
	CHECK(doca_mmap_create(&local));
	CHECK(doca_mmap_set_memrange(local, mine, LEN));
	CHECK(doca_mmap_add_dev(local, dev));
	CHECK(doca_mmap_start(local));
	CHECK(doca_buf_inventory_create(4, &inv));
	CHECK(doca_buf_inventory_start(inv));
	CHECK(doca_buf_inventory_buf_get_by_data(inv, local, mine, LEN, &src));
	CHECK(doca_buf_inventory_buf_get_by_addr(inv, remote, remote_addr, LEN, &dst));
	CHECK(doca_pe_create(&pe));
	CHECK(doca_dma_create(dev, &dma));
	CHECK(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)));
	CHECK(doca_dma_task_memcpy_set_conf(dma, copied, copy_failed, 2));
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma)));
	CHECK(doca_dma_task_memcpy_alloc_init(dma, src, dst, ud, &task));
	CHECK(doca_task_submit(doca_dma_task_memcpy_as_task(task)));
	while (copies_done < 1)
		if (doca_pe_progress(pe) == 0)
			nap();
	CHECK(doca_sync_event_update_set(se, 1));
	send_msg(ep, "done", 4, peer);

	CHECK(doca_ctx_stop(doca_dma_as_ctx(dma)));
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_pe_destroy(pe));
	CHECK(doca_buf_dec_refcount(src, NULL));
	CHECK(doca_buf_dec_refcount(dst, NULL));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_destroy(local));
	CHECK(doca_mmap_destroy(remote));
	CHECK(doca_sync_event_stop(se));
	CHECK(doca_sync_event_destroy(se));
	/* The host's last word ends the conversation. */
	(void)recv_msg(ep, blobs[0], &peer);
	CHECK(doca_comm_channel_ep_destroy(ep));
	CHECK(doca_dev_rep_close(rep));
	CHECK(doca_dev_close(dev));
	printf("cc_legacy3 dpu: copied %d bytes into the host's memory and signalled its event\n", LEN);
	return 0;
}
#else
static bool waited;

static void wait_done(struct doca_sync_event_task_wait_eq *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	waited = true;
	doca_task_free(doca_sync_event_task_wait_eq_as_doca_task(task));
}

static void wait_failed(struct doca_sync_event_task_wait_eq *task, union doca_data tud, union doca_data cud)
{
	(void)tud;
	(void)cud;
	fprintf(stderr, "wait failed: %s\n",
		doca_error_get_descr(doca_task_get_status(doca_sync_event_task_wait_eq_as_doca_task(task))));
	exit(1);
}

static int host_side(const char *name)
{
	static uint8_t host_mem[LEN];
	char reply[MAX_MSG];
	struct doca_dev *dev = open_dev_at("3b:00.0");
	struct doca_comm_channel_ep_t *ep = ep_open(dev, NULL);
	struct doca_comm_channel_addr_t *peer = NULL;
	struct doca_mmap *mmap;
	struct doca_sync_event *se;
	struct doca_sync_event_task_wait_eq *wait;
	struct doca_pe *pe;
	union doca_data ud = {.u64 = 0};
	const void *mmap_blob;
	const uint8_t *se_blob;
	size_t mmap_len, se_len, len;
	int k;

	CHECK(doca_comm_channel_ep_connect(ep, name, &peer));
	CHECK(doca_mmap_create(&mmap));
	CHECK(doca_mmap_set_memrange(mmap, host_mem, LEN));
	CHECK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_FLAG_PCI_READ_WRITE));
	CHECK(doca_mmap_add_dev(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	CHECK(doca_mmap_export_pci(mmap, dev, &mmap_blob, &mmap_len));
	CHECK(doca_sync_event_create(&se));
	CHECK(doca_sync_event_add_publisher_location_remote_pci(se));
	CHECK(doca_sync_event_add_subscriber_location_cpu(se, dev));
	/* Waited on as a task of this side's progress engine. */
	CHECK(doca_pe_create(&pe));
	CHECK(doca_pe_connect_ctx(pe, doca_sync_event_as_ctx(se)));
	CHECK(doca_sync_event_task_wait_eq_set_conf(se, wait_done, wait_failed, 1));
	CHECK(doca_ctx_start(doca_sync_event_as_ctx(se)));
	CHECK(doca_sync_event_export_to_remote_pci(se, dev, &se_blob, &se_len));
	ASSERT(mmap_len <= MAX_MSG && se_len <= MAX_MSG);
	send_msg(ep, mmap_blob, mmap_len, peer);
	send_msg(ep, se_blob, se_len, peer);
	CHECK(doca_sync_event_task_wait_eq_alloc_init(se, 1, UINT64_MAX, ud, &wait));
	CHECK(doca_task_submit(doca_sync_event_task_wait_eq_as_doca_task(wait)));
	while (!waited)
		if (doca_pe_progress(pe) == 0)
			nap();
	for (k = 0; k < LEN; k++)
		ASSERT(host_mem[k] == (uint8_t)(k * 11 + 7));
	len = recv_msg(ep, reply, &peer);
	ASSERT(len == 4 && memcmp(reply, "done", 4) == 0);
	send_msg(ep, "bye", 3, peer);

	CHECK(doca_ctx_stop(doca_sync_event_as_ctx(se)));
	CHECK(doca_sync_event_destroy(se));
	CHECK(doca_pe_destroy(pe));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_comm_channel_ep_disconnect(ep, peer));
	CHECK(doca_comm_channel_ep_destroy(ep));
	CHECK(doca_dev_close(dev));
	printf("cc_legacy3 host: the DPU side's bytes arrived, its event was seen, and it answered\n");
	return 0;
}
#endif

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s NAME\n", argv[0]);
		return 2;
	}
#ifdef DOCA_ARCH_DPU
	return dpu_side(argv[1]);
#else
	return host_side(argv[1]);
#endif
}
