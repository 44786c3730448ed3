/*
 * sync_event_host: the host side of a DOCA 2.2 sync event pair, in the shape of DOCA's
 * "sync event host" sample. It creates a sync event the DPU subscribes to, exports it,
 * sends the export blob over the comm channel, signals the DPU (value 1), and waits for
 * the DPU's signal (a value above 1). Run sync_event_dpu first.
 *
 *   sync_event_host [-d PCI] [--async] [--qdepth N] [--atomic]
 *
 * Default device: 3b:00.0. Build: gcc sync_event_host.c $(pkg-config --cflags --libs doca)
 */
#include "../sync_event_common.h"

DOCA_LOG_REGISTER(SYNC_EVENT_HOST);

static doca_error_t sync_event_run(struct sync_event_config *cfg, struct sync_event_runtime_objects *r)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = SLEEP_NS};
	const uint8_t *blob;
	size_t blob_sz;
	uint64_t value = 0;
	doca_error_t result;

	result = sync_event_open_dev(cfg->dev_pci_addr, &r->dev);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to open device %s: %s", cfg->dev_pci_addr, doca_get_error_string(result));
		return result;
	}
	result = doca_sync_event_get_export_to_dpu_supported(doca_dev_as_devinfo(r->dev));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("The device cannot export sync events to the DPU: %s", doca_get_error_string(result));
		return result;
	}
	if ((result = doca_sync_event_create(&r->se)) != DOCA_SUCCESS ||
	    (result = doca_sync_event_publisher_add_location_cpu(r->se, r->dev)) != DOCA_SUCCESS ||
	    (result = doca_sync_event_subscriber_add_location_dpu(r->se)) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create and configure the sync event: %s", doca_get_error_string(result));
		return result;
	}
	result = sync_event_start(cfg, r);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to start the sync event: %s", doca_get_error_string(result));
		return result;
	}
	result = sync_event_cc_init(r);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to initialize the comm channel: %s", doca_get_error_string(result));
		return result;
	}
	result = doca_sync_event_export_to_dpu(r->se, r->dev, &blob, &blob_sz);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to export the sync event: %s", doca_get_error_string(result));
		return result;
	}
	while ((result = doca_comm_channel_ep_sendto(r->ep, blob, blob_sz, DOCA_CC_MSG_FLAG_NONE, r->peer)) ==
	       DOCA_ERROR_AGAIN)
		nanosleep(&ts, &ts);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to send the export blob: %s", doca_get_error_string(result));
		return result;
	}
	DOCA_LOG_INFO("Signaling the DPU");
	result = sync_event_signal(cfg, r, 1);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to signal the DPU: %s", doca_get_error_string(result));
		return result;
	}
	DOCA_LOG_INFO("Waiting for the DPU's signal");
	result = sync_event_wait(cfg, r, 1);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to wait for the DPU: %s", doca_get_error_string(result));
		return result;
	}
	if (!cfg->is_async_mode && doca_sync_event_get(r->se, &value) == DOCA_SUCCESS)
		DOCA_LOG_INFO("Sync event value is %" PRIu64, value);
	DOCA_LOG_INFO("Done: the DPU signaled back");
	return DOCA_SUCCESS;
}

int main(int argc, char **argv)
{
	struct sync_event_config cfg = {0};
	struct sync_event_runtime_objects r = {0};
	doca_error_t result;

	strcpy(cfg.dev_pci_addr, "3b:00.0");
	cfg.async_num_tasks = 8;
	result = doca_log_create_standard_backend();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
#ifdef DOCA_ARCH_DPU
	DOCA_LOG_ERR("Sample can run only on the host");
	return EXIT_FAILURE;
#endif
	result = doca_argp_init("sync_event_host", &cfg);
	if (result == DOCA_SUCCESS)
		result = sync_event_params_register(false);
	if (result == DOCA_SUCCESS)
		result = doca_argp_start(argc, argv);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to parse sample input: %s", doca_get_error_string(result));
		doca_argp_destroy();
		return EXIT_FAILURE;
	}
	result = sync_event_run(&cfg, &r);
	sync_event_cleanup(&r);
	if (result != DOCA_SUCCESS)
		DOCA_LOG_ERR("Sample function has failed: %s", doca_get_error_string(result));
	doca_argp_destroy();
	return result == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
