/*
 * sync_event_dpu: the DPU side of a DOCA 2.2 sync event pair, in the shape of DOCA's
 * "sync event DPU" sample. It serves the comm channel for the host function whose
 * representor it opens, receives the host's export blob, creates its sync event handle
 * from it, waits for the host's signal (a value above 0) and signals back (value 2, or
 * an add of 1 with --atomic). Run it before sync_event_host.
 *
 *   sync_event_dpu [-d PCI] [-r REP_PCI] [--async] [--qdepth N] [--atomic]
 *
 * Defaults: 03:00.0, representor 3b:00.0.
 * Build: gcc sync_event_dpu.c $(pkg-config --cflags --libs doca-dpu)
 */
#include "../sync_event_common.h"

DOCA_LOG_REGISTER(SYNC_EVENT_DPU);

static doca_error_t sync_event_run(struct sync_event_config *cfg, struct sync_event_runtime_objects *r)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = SLEEP_NS};
	uint8_t blob[SYNC_EVENT_CC_MAX_MSG_SIZE];
	size_t blob_sz = sizeof(blob);
	doca_error_t result;

	result = sync_event_open_dev(cfg->dev_pci_addr, &r->dev);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to open device %s: %s", cfg->dev_pci_addr, doca_get_error_string(result));
		return result;
	}
	result = sync_event_open_rep(r->dev, cfg->rep_pci_addr, &r->rep);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to open representor %s: %s", cfg->rep_pci_addr, doca_get_error_string(result));
		return result;
	}
	result = doca_sync_event_get_create_from_export_supported(doca_dev_as_devinfo(r->dev));
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("The device cannot create sync events from exports: %s", doca_get_error_string(result));
		return result;
	}
	result = sync_event_cc_init(r);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to initialize the comm channel: %s", doca_get_error_string(result));
		return result;
	}
	DOCA_LOG_INFO("Waiting for the host's export blob");
	while ((result = doca_comm_channel_ep_recvfrom(r->ep, blob, &blob_sz, DOCA_CC_MSG_FLAG_NONE, &r->peer)) ==
	       DOCA_ERROR_AGAIN) {
		nanosleep(&ts, &ts);
		blob_sz = sizeof(blob);
	}
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to receive the export blob: %s", doca_get_error_string(result));
		return result;
	}
	result = doca_sync_event_create_from_export(r->dev, blob, blob_sz, &r->se);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to create the sync event from export: %s", doca_get_error_string(result));
		return result;
	}
	result = sync_event_start(cfg, r);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to start the sync event: %s", doca_get_error_string(result));
		return result;
	}
	DOCA_LOG_INFO("Waiting for the host's signal");
	result = sync_event_wait(cfg, r, 0);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to wait for the host: %s", doca_get_error_string(result));
		return result;
	}
	DOCA_LOG_INFO("Signaling the host");
	result = sync_event_signal(cfg, r, 2);
	if (result != DOCA_SUCCESS) {
		DOCA_LOG_ERR("Failed to signal the host: %s", doca_get_error_string(result));
		return result;
	}
	DOCA_LOG_INFO("Done: signaled the host");
	return DOCA_SUCCESS;
}

int main(int argc, char **argv)
{
	struct sync_event_config cfg = {0};
	struct sync_event_runtime_objects r = {0};
	doca_error_t result;

	strcpy(cfg.dev_pci_addr, "03:00.0");
	strcpy(cfg.rep_pci_addr, "3b:00.0");
	cfg.async_num_tasks = 8;
	result = doca_log_create_standard_backend();
	if (result != DOCA_SUCCESS)
		return EXIT_FAILURE;
#ifndef DOCA_ARCH_DPU
	DOCA_LOG_ERR("Sample can run only on the DPU");
	return EXIT_FAILURE;
#endif
	result = doca_argp_init("sync_event_dpu", &cfg);
	if (result == DOCA_SUCCESS)
		result = sync_event_params_register(true);
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
