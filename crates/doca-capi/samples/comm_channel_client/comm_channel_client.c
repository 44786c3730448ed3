/*
 * comm_channel_client: the host side of a DOCA 2.2 comm channel pair, in the shape of
 * DOCA's "comm channel client" sample. It connects to "cc_sample_server" with its device,
 * sends a text and prints the server's answer.
 *
 *   comm_channel_client [-p PCI] [-t TEXT]
 *
 * Defaults: 3b:00.0, "Message from the client".
 * Build: gcc comm_channel_client.c $(pkg-config --cflags --libs doca)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_comm_channel.h>
#include <doca_dev.h>
#include <doca_log.h>

DOCA_LOG_REGISTER(CC_CLIENT);

#define SERVER_NAME "cc_sample_server"
#define MAX_MSG_SIZE 4080
#define QUEUE_SIZE 8
#define SLEEP_NS 10000
#define MAX_TEXT 4080

struct cc_config {
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	char text[MAX_TEXT];
};

static doca_error_t copy_param(char *dst, const char *src, size_t max)
{
	if (strnlen(src, max) == max) {
		DOCA_LOG_ERR("Parameter is too long: at most %zu characters", max - 1);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(dst, src);
	return DOCA_SUCCESS;
}

static doca_error_t pci_cb(void *p, void *c)
{
	return copy_param(((struct cc_config *)c)->pci, p, DOCA_DEVINFO_PCI_ADDR_SIZE);
}

static doca_error_t text_cb(void *p, void *c)
{
	return copy_param(((struct cc_config *)c)->text, p, MAX_TEXT);
}

static doca_error_t register_param(const char *s, const char *l, const char *desc, callback_func cb)
{
	struct doca_argp_param *p;
	doca_error_t result = doca_argp_param_create(&p);

	if (result != DOCA_SUCCESS)
		return result;
	doca_argp_param_set_short_name(p, s);
	doca_argp_param_set_long_name(p, l);
	doca_argp_param_set_description(p, desc);
	doca_argp_param_set_callback(p, cb);
	doca_argp_param_set_type(p, DOCA_ARGP_TYPE_STRING);
	return doca_argp_register_param(p);
}

static doca_error_t open_dev(const char *pci, struct doca_dev **dev)
{
	struct doca_devinfo **list;
	uint32_t n, i;
	uint8_t eq;
	doca_error_t result;

	result = doca_devinfo_list_create(&list, &n);
	if (result != DOCA_SUCCESS)
		return result;
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < n; i++) {
		if (doca_devinfo_get_is_pci_addr_equal(list[i], pci, &eq) == DOCA_SUCCESS && eq) {
			result = doca_dev_open(list[i], dev);
			break;
		}
	}
	doca_devinfo_list_destroy(list);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("No device at %s: %s", pci, doca_get_error_string(result));
	return result;
}

static doca_error_t create_comm_channel_client(struct cc_config *cfg)
{
	struct doca_comm_channel_ep_t *ep = NULL;
	struct doca_comm_channel_addr_t *peer_addr = NULL;
	struct doca_dev *dev = NULL;
	struct timespec ts = {.tv_sec = 0, .tv_nsec = SLEEP_NS};
	char msg[MAX_MSG_SIZE + 1];
	size_t msg_len;
	doca_error_t result;

	result = doca_comm_channel_ep_create(&ep);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create Comm Channel endpoint: %s", doca_get_error_string(result));
		return result;
	}
	result = open_dev(cfg->pci, &dev);
	if (result != DOCA_SUCCESS)
		goto destroy;
	if ((result = doca_comm_channel_ep_set_device(ep, dev)) != DOCA_SUCCESS ||
	    (result = doca_comm_channel_ep_set_max_msg_size(ep, MAX_MSG_SIZE)) != DOCA_SUCCESS ||
	    (result = doca_comm_channel_ep_set_send_queue_size(ep, QUEUE_SIZE)) != DOCA_SUCCESS ||
	    (result = doca_comm_channel_ep_set_recv_queue_size(ep, QUEUE_SIZE)) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to set up the endpoint: %s", doca_get_error_string(result));
		goto destroy;
	}
	result = doca_comm_channel_ep_connect(ep, SERVER_NAME, &peer_addr);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Couldn't establish a connection with the server: %s", doca_get_error_string(result));
		goto destroy;
	}
	while ((result = doca_comm_channel_ep_sendto(ep, cfg->text, strlen(cfg->text) + 1, DOCA_CC_MSG_FLAG_NONE,
						     peer_addr)) == DOCA_ERROR_AGAIN)
		nanosleep(&ts, &ts);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Message was not sent: %s", doca_get_error_string(result));
		goto destroy;
	}
	msg_len = MAX_MSG_SIZE;
	while ((result = doca_comm_channel_ep_recvfrom(ep, msg, &msg_len, DOCA_CC_MSG_FLAG_NONE, &peer_addr)) ==
	       DOCA_ERROR_AGAIN) {
		nanosleep(&ts, &ts);
		msg_len = MAX_MSG_SIZE;
	}
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Response was not received: %s", doca_get_error_string(result));
		goto destroy;
	}
	msg[msg_len] = '\0';
	DOCA_LOG_INFO("Received message: %s", msg);

destroy:
	if (peer_addr != NULL)
		doca_comm_channel_ep_disconnect(ep, peer_addr);
	doca_comm_channel_ep_destroy(ep);
	if (dev != NULL)
		doca_dev_close(dev);
	return result;
}

int main(int argc, char **argv)
{
	struct cc_config cfg = {0};
	doca_error_t result;

	strcpy(cfg.pci, "3b:00.0");
	strcpy(cfg.text, "Message from the client");

	result = doca_log_create_standard_backend();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = doca_argp_init("comm_channel_client", &cfg);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = register_param("p", "pci-addr", "DOCA Comm Channel device PCI address", pci_cb);
	if (result == DOCA_SUCCESS)
		result = register_param("t", "text", "Text to be sent to the other side of channel", text_cb);
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse sample input: %s", doca_get_error_string(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = create_comm_channel_client(&cfg);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Sample function has failed: %s", doca_get_error_string(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
