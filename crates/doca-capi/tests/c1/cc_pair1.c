/*
 * The comm channel of DOCA 1.3 as its samples use it: endpoints made from attributes
 * (no device), blocking calls by default.
 *
 *   cc_pair1 server NAME CLIENTS   (built with doca-1-dpu) answers each client's messages
 *                                  with "Hello From Server" (and "bye" with "bye-ack"),
 *                                  until CLIENTS clients said "bye"
 *   cc_pair1 client NAME           (built with doca-1) the blocking exchange of the
 *                                  samples, then a non-blocking endpoint: DONTWAIT
 *                                  answers AGAIN, the event channel polls readable when
 *                                  the answer came; and the refusals
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_comm_channel.h>
#include <doca_error.h>

#include "../c/common.h"

#define MAX_MSG_SIZE 1024
#define MAX_NUM_MSGS 10

static int server(const char *name, int clients)
{
	struct doca_comm_channel_init_attr attr = {0};
	struct doca_comm_channel_ep_t *ep;
	struct doca_comm_channel_addr_t *peer = NULL;
	char buf[MAX_MSG_SIZE];
	const char response[] = "Hello From Server";
	int byes = 0, messages = 0;

	attr.msgsize = MAX_MSG_SIZE;
	attr.maxmsgs = MAX_NUM_MSGS;
	CHECK(doca_comm_channel_ep_create(&attr, &ep));
	CHECK(doca_comm_channel_ep_listen(ep, name));
	printf("cc_pair1 server: listening on %s\n", name);
	fflush(stdout);
	while (byes < clients) {
		size_t len = sizeof(buf);
		doca_error_t r = doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, &peer);
		uint64_t seen = 0;

		if (r == DOCA_ERROR_NOT_CONNECTED)
			continue; /* a client left */
		CHECK(r);
		buf[len < sizeof(buf) ? len : sizeof(buf) - 1] = 0;
		messages++;
		/* The first message of a peer finds its user data 0; count them per peer. */
		CHECK(doca_comm_channel_peer_addr_user_data_get(peer, &seen));
		CHECK(doca_comm_channel_peer_addr_user_data_set(peer, seen + 1));
		if (strcmp(buf, "bye") == 0) {
			char ack[64];

			snprintf(ack, sizeof(ack), "bye-ack %llu", (unsigned long long)(seen + 1));
			CHECK(doca_comm_channel_ep_sendto(ep, ack, strlen(ack) + 1, 0, peer));
			byes++;
			continue;
		}
		CHECK(doca_comm_channel_ep_sendto(ep, response, sizeof(response), 0, peer));
	}
	CHECK(doca_comm_channel_ep_destroy(ep));
	printf("cc_pair1 server: %d messages from %d clients answered\n", messages, clients);
	return 0;
}

/* One blocking round trip. */
static void ask(struct doca_comm_channel_ep_t *ep, struct doca_comm_channel_addr_t *peer, const char *what,
		const char *want)
{
	char buf[MAX_MSG_SIZE];
	size_t len = sizeof(buf);
	struct doca_comm_channel_addr_t *from = NULL;

	CHECK(doca_comm_channel_ep_sendto(ep, what, strlen(what) + 1, 0, peer));
	CHECK(doca_comm_channel_ep_recvfrom(ep, buf, &len, 0, &from));
	if (from != peer || len != strlen(want) + 1 || strcmp(buf, want) != 0) {
		fprintf(stderr, "asked %s, got '%.*s' (%zu bytes), expected '%s'\n", what, (int)len, buf, len, want);
		exit(1);
	}
}

static int client(const char *name)
{
	struct doca_comm_channel_init_attr attr = {0};
	struct doca_comm_channel_ep_t *ep, *nb;
	struct doca_comm_channel_addr_t *peer = NULL, *nb_peer = NULL, *from = NULL;
	struct doca_comm_channel_peer_addr_info info;
	char big[MAX_MSG_SIZE + 1], buf[MAX_MSG_SIZE];
	size_t len;
	struct doca_pollfd pfd;
	int i, n;

	attr.msgsize = MAX_MSG_SIZE;
	attr.maxmsgs = MAX_NUM_MSGS;
	CHECK(doca_comm_channel_ep_create(&attr, &ep));
	/* A service nobody runs: the connection fails. */
	EXPECT_ERR(doca_comm_channel_ep_connect(ep, "no-such-service", &peer), DOCA_ERROR_CONNECTION_ABORTED);
	CHECK(doca_comm_channel_ep_connect(ep, name, &peer));
	for (i = 0; i < 5; i++)
		ask(ep, peer, "Hello From Client", "Hello From Server");
	CHECK(doca_comm_channel_peer_addr_info_get(peer, &info));
	if (info.tx_msgs != 5 || info.rx_msgs != 5) {
		fprintf(stderr, "peer info: %llu sent, %llu received\n", (unsigned long long)info.tx_msgs,
			(unsigned long long)info.rx_msgs);
		return 1;
	}
	/* Refusals: a message over msgsize, an unsupported flag. */
	memset(big, 'x', sizeof(big));
	EXPECT_ERR(doca_comm_channel_ep_sendto(ep, big, sizeof(big), 0, peer), DOCA_ERROR_INVALID_VALUE);
	EXPECT_ERR(doca_comm_channel_ep_sendto(ep, "x", 2, DOCA_CC_MSG_FLAG_MORE, peer), DOCA_ERROR_NOT_SUPPORTED);
	/* Nothing to receive: DONTWAIT answers at once. */
	len = sizeof(buf);
	EXPECT_ERR(doca_comm_channel_ep_recvfrom(ep, buf, &len, DOCA_CC_MSG_FLAG_DONTWAIT, &from), DOCA_ERROR_AGAIN);
	ask(ep, peer, "bye", "bye-ack 6");
	CHECK(doca_comm_channel_ep_disconnect(ep, peer));
	CHECK(doca_comm_channel_ep_destroy(ep));

	/* A non-blocking endpoint, waited on through its event channel. */
	attr.flags = DOCA_COMM_CHANNEL_INIT_FLAG_NONBLOCK;
	CHECK(doca_comm_channel_ep_create(&attr, &nb));
	CHECK(doca_comm_channel_ep_connect(nb, name, &nb_peer));
	{
		doca_error_t r;

		while ((r = doca_comm_channel_ep_sendto(nb, "bye", 4, 0, nb_peer)) == DOCA_ERROR_AGAIN)
			;
		CHECK(r);
	}
	pfd.fd = doca_comm_channel_ep_event_channel_get(nb);
	pfd.events = DOCA_POLLIN;
	pfd.revents = 0;
	if (pfd.fd < 0)
		return 1;
	for (;;) {
		doca_error_t r;

		len = sizeof(buf);
		r = doca_comm_channel_ep_recvfrom(nb, buf, &len, 0, &from);
		if (r == DOCA_SUCCESS)
			break;
		EXPECT_ERR(r, DOCA_ERROR_AGAIN);
		n = doca_comm_channels_poll(&pfd, 1, 5000);
		if (n < 0)
			return 1;
	}
	if (from != nb_peer || strcmp(buf, "bye-ack 1") != 0) {
		fprintf(stderr, "non-blocking: got '%s'\n", buf);
		return 1;
	}
	CHECK(doca_comm_channel_ep_destroy(nb));
	printf("cc_pair1 client: 6 answers in order, then a non-blocking endpoint's answer through its event "
	       "channel\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "server") == 0)
		return server(argv[2], atoi(argv[3]));
	if (argc == 3 && strcmp(argv[1], "client") == 0)
		return client(argv[2]);
	fprintf(stderr, "usage: %s server NAME CLIENTS | client NAME\n", argv[0]);
	return 2;
}
