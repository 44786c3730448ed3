/*
 * comm_channel_server: the DPU side of a DOCA 2.2 comm channel pair, in the shape of
 * DOCA's "comm channel server" sample. It serves "cc_sample_server" to the host function
 * whose representor it opens, waits for a message from the client, prints it and answers.
 *
 *   comm_channel_server [-p PCI] [-r REP_PCI] [-t TEXT]
 *
 * Defaults: 03:00.0, representor 3b:00.0, "Message from the server".
 * Build: gcc comm_channel_server.c $(pkg-config --cflags --libs doca-dpu)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <doca_argp.h>
#include <doca_comm_channel.h>
#include <doca_dev.h>
#include <doca_log.h>

DOCA_LOG_REGISTER(CC_SERVER);

#define SERVER_NAME "cc_sample_server"
#define MAX_MSG_SIZE 4080
#define QUEUE_SIZE 8
#define SLEEP_NS 10000
#define MAX_TEXT 4080

struct cc_config {
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
	char rep_pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE];
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

static doca_error_t rep_cb(void *p, void *c)
{
	return copy_param(((struct cc_config *)c)->rep_pci, p, DOCA_DEVINFO_REP_PCI_ADDR_SIZE);
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

static doca_error_t open_dev_and_rep(const char *pci, const char *rep_pci, struct doca_dev **dev,
				     struct doca_dev_rep **rep)
{
	struct doca_devinfo **list;
	struct doca_devinfo_rep **reps;
	uint32_t n, nreps, i;
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
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("No device at %s: %s", pci, doca_get_error_string(result));
		return result;
	}
	result = doca_devinfo_rep_list_create(*dev, DOCA_DEV_REP_FILTER_NET, &reps, &nreps);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to list representors: %s", doca_get_error_string(result));
		return result;
	}
	result = DOCA_ERROR_NOT_FOUND;
	for (i = 0; i < nreps; i++) {
		if (doca_devinfo_rep_get_is_pci_addr_equal(reps[i], rep_pci, &eq) == DOCA_SUCCESS && eq) {
			result = doca_dev_rep_open(reps[i], rep);
			break;
		}
	}
	doca_devinfo_rep_list_destroy(reps);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("No representor at %s: %s", rep_pci, doca_get_error_string(result));
	return result;
}

static doca_error_t create_comm_channel_server(struct cc_config *cfg)
{
	struct doca_comm_channel_ep_t *ep = NULL;
	struct doca_comm_channel_addr_t *peer_addr = NULL;
	struct doca_dev *dev = NULL;
	struct doca_dev_rep *rep = NULL;
	struct timespec ts = {.tv_sec = 0, .tv_nsec = SLEEP_NS};
	char msg[MAX_MSG_SIZE + 1];
	size_t msg_len;
	doca_error_t result;

	result = doca_comm_channel_ep_create(&ep);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create Comm Channel endpoint: %s", doca_get_error_string(result));
		return result;
	}
	result = open_dev_and_rep(cfg->pci, cfg->rep_pci, &dev, &rep);
	if (result != DOCA_SUCCESS)
		goto destroy;
	if ((result = doca_comm_channel_ep_set_device(ep, dev)) != DOCA_SUCCESS ||
	    (result = doca_comm_channel_ep_set_device_rep(ep, rep)) != DOCA_SUCCESS ||
	    (result = doca_comm_channel_ep_set_max_msg_size(ep, MAX_MSG_SIZE)) != DOCA_SUCCESS ||
	    (result = doca_comm_channel_ep_set_send_queue_size(ep, QUEUE_SIZE)) != DOCA_SUCCESS ||
	    (result = doca_comm_channel_ep_set_recv_queue_size(ep, QUEUE_SIZE)) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to set up the endpoint: %s", doca_get_error_string(result));
		goto destroy;
	}
	result = doca_comm_channel_ep_listen(ep, SERVER_NAME);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Comm Channel server couldn't start listening: %s", doca_get_error_string(result));
		goto destroy;
	}
	DOCA_LOG_INFO("Server started Listening, waiting for new connections");

	msg_len = MAX_MSG_SIZE;
	while ((result = doca_comm_channel_ep_recvfrom(ep, msg, &msg_len, DOCA_CC_MSG_FLAG_NONE, &peer_addr)) ==
	       DOCA_ERROR_AGAIN) {
		nanosleep(&ts, &ts);
		msg_len = MAX_MSG_SIZE;
	}
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Message was not received: %s", doca_get_error_string(result));
		goto destroy;
	}
	msg[msg_len] = '\0';
	DOCA_LOG_INFO("Received message: %s", msg);

	while ((result = doca_comm_channel_ep_sendto(ep, cfg->text, strlen(cfg->text) + 1, DOCA_CC_MSG_FLAG_NONE,
						     peer_addr)) == DOCA_ERROR_AGAIN)
		nanosleep(&ts, &ts);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Message was not sent: %s", doca_get_error_string(result));
		goto destroy;
	}
	DOCA_LOG_INFO("Response sent: %s", cfg->text);

destroy:
	if (peer_addr != NULL)
		doca_comm_channel_ep_disconnect(ep, peer_addr);
	doca_comm_channel_ep_destroy(ep);
	if (rep != NULL)
		doca_dev_rep_close(rep);
	if (dev != NULL)
		doca_dev_close(dev);
	return result;
}

int main(int argc, char **argv)
{
	struct cc_config cfg = {0};
	doca_error_t result;

	strcpy(cfg.pci, "03:00.0");
	strcpy(cfg.rep_pci, "3b:00.0");
	strcpy(cfg.text, "Message from the server");

	result = doca_log_create_standard_backend();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
#ifndef DOCA_ARCH_DPU
	DOCA_LOG_ERR("Server can run only on the DPU");
	return EXIT_FAILURE;
#endif
	result = doca_argp_init("comm_channel_server", &cfg);
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
	result = register_param("p", "pci-addr", "DOCA Comm Channel device PCI address", pci_cb);
	if (result == DOCA_SUCCESS)
		result = register_param("r", "rep-pci", "DOCA Comm Channel device representor PCI address", rep_cb);
	if (result == DOCA_SUCCESS)
		result = register_param("t", "text", "Text to be sent to the other side of channel", text_cb);
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse sample input: %s", doca_get_error_string(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = create_comm_channel_server(&cfg);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Sample function has failed: %s", doca_get_error_string(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
