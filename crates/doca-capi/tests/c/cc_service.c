/* A comm channel service with several clients, as two builds of one program: built for
 * the DPU (pkg-config doca-dpu) it serves "cc_service_test" for the host function
 * 3b:00.0 and waits for the number of clients given; built for the host it is one
 * client, whose tag is the argument. The service checks its peer list, pending
 * connections, each peer's user data and statistics, answers every client, and
 * disconnects one; each client checks its own statistics and the answer. */
#include <time.h>

#include <doca_comm_channel.h>

#include "common.h"

#define SERVICE "cc_service_test"
#define MAX_MSG 256
#define SECONDS 60

static void nap(void)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 1000000};

	nanosleep(&ts, NULL);
}

static struct doca_dev *open_pci(const char *pci)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n = 0, i;
	uint8_t eq = 0;

	CHECK(doca_devinfo_list_create(&list, &n));
	for (i = 0; i < n; i++) {
		CHECK(doca_devinfo_get_is_pci_addr_equal(list[i], pci, &eq));
		if (eq) {
			CHECK(doca_dev_open(list[i], &dev));
			break;
		}
	}
	CHECK(doca_devinfo_list_destroy(list));
	ASSERT(dev != NULL);
	return dev;
}

static struct doca_comm_channel_ep_t *endpoint(struct doca_dev *dev)
{
	struct doca_comm_channel_ep_t *ep;

	CHECK(doca_comm_channel_ep_create(&ep));
	CHECK(doca_comm_channel_ep_set_device(ep, dev));
	CHECK(doca_comm_channel_ep_set_max_msg_size(ep, MAX_MSG));
	CHECK(doca_comm_channel_ep_set_send_queue_size(ep, 8));
	CHECK(doca_comm_channel_ep_set_recv_queue_size(ep, 8));
	return ep;
}

static uint64_t stat_of(doca_error_t (*get)(const struct doca_comm_channel_addr_t *, uint64_t *),
			const struct doca_comm_channel_addr_t *peer)
{
	uint64_t v = 0;

	CHECK(get(peer, &v));
	return v;
}

#ifdef DOCA_ARCH_DPU
int main(int argc, char **argv)
{
	struct doca_dev *dev = open_pci("03:00.0");
	struct doca_devinfo_rep **reps;
	struct doca_dev_rep *rep = NULL;
	struct doca_comm_channel_ep_t *ep = endpoint(dev);
	struct doca_comm_channel_addr_t *peers[8] = {0}, **list = NULL;
	uint32_t want = argc > 1 ? (uint32_t)atoi(argv[1]) : 2, got = 0, nreps = 0, i, len = 0, pending = 0;
	uint8_t eq = 0;
	char msg[MAX_MSG];
	size_t msg_len;
	time_t start = time(NULL);

	ASSERT(want >= 1 && want <= 8);
	CHECK(doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_NET, &reps, &nreps));
	for (i = 0; i < nreps; i++) {
		CHECK(doca_devinfo_rep_get_is_pci_addr_equal(reps[i], "3b:00.0", &eq));
		if (eq) {
			CHECK(doca_dev_rep_open(reps[i], &rep));
			break;
		}
	}
	CHECK(doca_devinfo_rep_list_destroy(reps));
	ASSERT(rep != NULL);
	CHECK(doca_comm_channel_ep_set_device_rep(ep, rep));
	CHECK(doca_comm_channel_ep_listen(ep, SERVICE));
	CHECK(doca_comm_channel_ep_get_pending_connections(ep, &pending));
	ASSERT(pending <= want);
	printf("listening\n");
	fflush(stdout);
	/* One message from each client; its first byte is its tag, kept as user data. */
	while (got < want) {
		struct doca_comm_channel_addr_t *from = NULL;
		doca_error_t r;

		msg_len = sizeof(msg);
		r = doca_comm_channel_ep_recvfrom(ep, msg, &msg_len, DOCA_CC_MSG_FLAG_NONE, &from);
		if (r == DOCA_ERROR_AGAIN) {
			ASSERT(time(NULL) - start < SECONDS);
			nap();
			continue;
		}
		CHECK(r);
		ASSERT(from != NULL && msg_len >= 1);
		for (i = 0; i < got; i++)
			ASSERT(peers[i] != from);
		CHECK(doca_comm_channel_peer_addr_set_user_data(from, (uint64_t)(unsigned char)msg[0]));
		CHECK(doca_comm_channel_peer_addr_update_info(from));
		ASSERT(stat_of(doca_comm_channel_peer_addr_get_recv_messages, from) == 1);
		ASSERT(stat_of(doca_comm_channel_peer_addr_get_recv_bytes, from) == msg_len);
		ASSERT(stat_of(doca_comm_channel_peer_addr_get_send_messages, from) == 0);
		peers[got++] = from;
	}
	CHECK(doca_comm_channel_ep_update_service_state_info(ep));
	CHECK(doca_comm_channel_ep_get_pending_connections(ep, &pending));
	ASSERT(pending == 0);
	CHECK(doca_comm_channel_ep_get_peer_addr_list(ep, &list, &len));
	ASSERT(len == want);
	for (i = 0; i < got; i++) {
		uint32_t j, found = 0;
		uint64_t tag = 0;

		for (j = 0; j < len; j++)
			found += list[j] == peers[i];
		ASSERT(found == 1);
		CHECK(doca_comm_channel_peer_addr_get_user_data(peers[i], &tag));
		snprintf(msg, sizeof(msg), "ack %c", (char)tag);
		while (doca_comm_channel_ep_sendto(ep, msg, strlen(msg) + 1, DOCA_CC_MSG_FLAG_NONE, peers[i]) ==
		       DOCA_ERROR_AGAIN)
			nap();
		ASSERT(stat_of(doca_comm_channel_peer_addr_get_send_messages, peers[i]) == 1);
		ASSERT(stat_of(doca_comm_channel_peer_addr_get_send_bytes, peers[i]) == strlen(msg) + 1);
	}
	/* Each answer is taken by its client: nothing stays in flight. */
	for (i = 0; i < got; i++) {
		while (stat_of(doca_comm_channel_peer_addr_get_send_in_flight_messages, peers[i]) != 0) {
			ASSERT(time(NULL) - start < SECONDS);
			nap();
		}
	}
	/* One peer disconnected: the list is one shorter. */
	CHECK(doca_comm_channel_ep_disconnect(ep, peers[0]));
	CHECK(doca_comm_channel_ep_get_peer_addr_list(ep, &list, &len));
	ASSERT(len == want - 1);
	for (i = 0; i < len; i++)
		ASSERT(list[i] != peers[0]);
	printf("service: %u clients served, peer list and statistics agree\n", want);
	CHECK(doca_comm_channel_ep_destroy(ep));
	CHECK(doca_dev_rep_close(rep));
	CHECK(doca_dev_close(dev));
	return 0;
}
#else
int main(int argc, char **argv)
{
	struct doca_dev *dev = open_pci("3b:00.0");
	struct doca_comm_channel_ep_t *ep = endpoint(dev);
	struct doca_comm_channel_addr_t *peer = NULL, *from = NULL;
	char tag = argc > 1 ? argv[1][0] : 'A';
	char msg[MAX_MSG], want[16];
	size_t msg_len;
	doca_error_t r;
	time_t start = time(NULL);

	CHECK(doca_comm_channel_ep_connect(ep, SERVICE, &peer));
	snprintf(msg, sizeof(msg), "%c from a client", tag);
	while ((r = doca_comm_channel_ep_sendto(ep, msg, strlen(msg) + 1, DOCA_CC_MSG_FLAG_NONE, peer)) ==
	       DOCA_ERROR_AGAIN) {
		ASSERT(time(NULL) - start < SECONDS);
		nap();
	}
	CHECK(r);
	ASSERT(stat_of(doca_comm_channel_peer_addr_get_send_messages, peer) == 1);
	for (;;) {
		msg_len = sizeof(msg);
		r = doca_comm_channel_ep_recvfrom(ep, msg, &msg_len, DOCA_CC_MSG_FLAG_NONE, &from);
		if (r != DOCA_ERROR_AGAIN)
			break;
		ASSERT(time(NULL) - start < SECONDS);
		nap();
	}
	CHECK(r);
	ASSERT(from == peer);
	snprintf(want, sizeof(want), "ack %c", tag);
	ASSERT(strcmp(msg, want) == 0);
	ASSERT(stat_of(doca_comm_channel_peer_addr_get_recv_messages, peer) == 1);
	printf("client %c: answered\n", tag);
	CHECK(doca_comm_channel_ep_disconnect(ep, peer));
	CHECK(doca_comm_channel_ep_destroy(ep));
	CHECK(doca_dev_close(dev));
	return 0;
}
#endif
