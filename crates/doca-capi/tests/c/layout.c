/* The numeric facts of DOCA 2.2 on x86-64: struct sizes and offsets, enum values, macros.
 * Checked at compile time; the Rust side mirrors the struct layouts with const asserts. */
#include <stddef.h>
#include <stdio.h>
#include <doca_argp.h>
#include <doca_buf.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_erasure_coding.h>
#include <doca_error.h>
#include <doca_graph.h>
#include <doca_log.h>
#include <doca_sha.h>
#include <doca_sync_event.h>
#include <doca_types.h>
#include <doca_version.h>

#define SIZE(t, n) _Static_assert(sizeof(t) == (n), "sizeof " #t)
#define OFF(t, f, n) _Static_assert(offsetof(t, f) == (n), "offsetof " #t "." #f)
#define VAL(e, n) _Static_assert((long long)(e) == (n), #e)

SIZE(enum doca_access_flags, 4);
SIZE(doca_error_t, 4);
SIZE(union doca_data, 8);
SIZE(struct doca_job, 24);
OFF(struct doca_job, type, 0);
OFF(struct doca_job, flags, 4);
OFF(struct doca_job, ctx, 8);
OFF(struct doca_job, user_data, 16);
SIZE(struct doca_event, 24);
OFF(struct doca_event, type, 0);
OFF(struct doca_event, user_data, 8);
OFF(struct doca_event, result, 16);
SIZE(struct doca_dma_job_memcpy, 40);
OFF(struct doca_dma_job_memcpy, dst_buff, 24);
OFF(struct doca_dma_job_memcpy, src_buff, 32);
SIZE(struct doca_sha_job, 48);
OFF(struct doca_sha_job, req_buf, 24);
OFF(struct doca_sha_job, resp_buf, 32);
OFF(struct doca_sha_job, flags, 40);
SIZE(struct doca_sha_partial_job, 56);
OFF(struct doca_sha_partial_job, session, 48);
SIZE(struct doca_ec_job, 48);
SIZE(struct doca_ec_job_create, 48);
SIZE(struct doca_ec_job_update, 48);
SIZE(struct doca_ec_job_recover, 48);
OFF(struct doca_ec_job, coding_matrix, 24);
OFF(struct doca_ec_job, src_buff, 32);
OFF(struct doca_ec_job, dst_buff, 40);
OFF(struct doca_ec_job_create, create_matrix, 24);
OFF(struct doca_ec_job_create, src_original_data_buff, 32);
OFF(struct doca_ec_job_create, dst_rdnc_buff, 40);
OFF(struct doca_ec_job_update, src_data_rdnc_buff, 32);
OFF(struct doca_ec_job_recover, dst_recovered_data_buff, 40);
SIZE(struct doca_sync_event_job_wait, 40);
OFF(struct doca_sync_event_job_wait, value, 24);
OFF(struct doca_sync_event_job_wait, mask, 32);
SIZE(struct doca_sync_event_job_get, 32);
OFF(struct doca_sync_event_job_get, value, 24);
SIZE(struct doca_sync_event_job_update_set, 32);
SIZE(struct doca_sync_event_job_update_add, 40);
OFF(struct doca_sync_event_job_update_add, fetched, 32);
SIZE(doca_sync_event_remote_t, 16);
SIZE(struct doca_dma_memcpy_result, 4);
SIZE(struct doca_sync_event_result, 4);

VAL(DOCA_ERROR_IN_PROGRESS, 26);
VAL(DOCA_ERROR_UNEXPECTED, 22);
VAL(DOCA_ERROR_IO_FAILED, 17);
VAL(DOCA_DMA_JOB_MEMCPY, 65537);
VAL(DOCA_SHA_JOB_SHA1, 589825);
VAL(DOCA_SHA_JOB_SHA256, 589826);
VAL(DOCA_SHA_JOB_SHA512, 589827);
VAL(DOCA_SHA_JOB_SHA1_PARTIAL, 589828);
VAL(DOCA_SHA_JOB_SHA256_PARTIAL, 589829);
VAL(DOCA_SHA_JOB_SHA512_PARTIAL, 589830);
VAL(DOCA_SHA_JOB_FLAGS_SHA_PARTIAL_FINAL, 1);
VAL(DOCA_EC_JOB_GALOIS_MUL, 1114113);
VAL(DOCA_EC_JOB_CREATE, 1114114);
VAL(DOCA_EC_JOB_UPDATE, 1114115);
VAL(DOCA_EC_JOB_RECOVER, 1114116);
VAL(DOCA_CODING_MATRIX_CAUCHY, 1);
VAL(DOCA_CODING_MATRIX_VANDERMONDE, 2);
VAL(DOCA_SYNC_EVENT_JOB_WAIT_GT, 983041);
VAL(DOCA_SYNC_EVENT_JOB_GET, 983042);
VAL(DOCA_SYNC_EVENT_JOB_UPDATE_SET, 983043);
VAL(DOCA_SYNC_EVENT_JOB_UPDATE_ADD, 983044);
VAL(DOCA_GRAPH_JOB, 917505);
VAL(DOCA_GRAPH_INSTANCE_NODE_STATE_ERROR, 3);
VAL(DOCA_ARGP_TYPE_JSON_OBJ, 4);
VAL(DOCA_LOG_LEVEL_CRIT, 20);
VAL(DOCA_LOG_LEVEL_DEBUG, 60);
VAL(DOCA_ACTION_NVRD_TRANSPORT_FIRST, 18 << 16);
VAL(DOCA_ACCESS_DPU_READ_WRITE, 32);
VAL(DOCA_DEV_REP_FILTER_EMULATED, 4);
VAL(DOCA_PCI_FUNC_SF, 2);
VAL(DOCA_MTU_SIZE_RAW_ETHERNET, 5);
VAL(DOCA_DEVINFO_PCI_ADDR_SIZE, 13);
VAL(DOCA_DEVINFO_PCI_BDF_SIZE, 8);
VAL(DOCA_DEVINFO_IFACE_NAME_SIZE, 256);
VAL(DOCA_SHA512_BYTE_COUNT, 64);
VAL(DOCA_CURRENT_VERSION_NUM, (2 << 24) | (2 << 16) | 80);
VAL(doca_event_invalid_handle, -1);
VAL(DOCA_GID_BYTE_LENGTH, 16);

int main(void)
{
	doca_error_t r = DOCA_SUCCESS;

	DOCA_ERROR_PROPAGATE(r, DOCA_ERROR_AGAIN);
	DOCA_ERROR_PROPAGATE(r, DOCA_ERROR_FULL);
	if (r != DOCA_ERROR_AGAIN || !DOCA_IS_ERROR(r) || DOCA_IS_ERROR(DOCA_SUCCESS))
		return 1;
	printf("layout: ok\n");
	return 0;
}
