/* The misuse table: each wrong call returns its documented error, leaves outputs alone
 * and crashes nothing. */
#include "common.h"
#include <doca_argp.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_comm_channel.h>
#include <doca_dma.h>
#include <doca_erasure_coding.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_rdma_bridge.h>
#include <doca_sha.h>
#include <doca_sync_event.h>

static int cases;

static doca_error_t version_cb(void *param, void *config)
{
	(void)param;
	(void)config;
	return DOCA_SUCCESS;
}

#define CASE(expr, code) \
	do { \
		EXPECT_ERR(expr, code); \
		cases++; \
	} while (0)

int main(void)
{
	struct doca_dev *dev = open_first_device();
	struct doca_devinfo *info = doca_dev_as_devinfo(dev);
	struct doca_dma *dma, *dma2;
	struct doca_sha *sha;
	struct doca_ec *ec;
	struct doca_workq *wq, *wq2, *tiny;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv, *stopped_inv;
	struct doca_buf *a, *b, *out_buf = (struct doca_buf *)0x1;
	struct doca_matrix *m, *rm, *out_m = (struct doca_matrix *)0x1;
	struct doca_event ev = {.type = 777};
	struct doca_devinfo **list;
	struct doca_dev *out_dev = (struct doca_dev *)0x1;
	uint8_t *mem = calloc(1, 65536);
	uint32_t n, missing3[] = {0, 1, 2}, missing2[] = {0, 1};
	size_t len;
	int fd;
	uint8_t flag;

	/* NULL arguments. */
	CASE(doca_devinfo_list_create(NULL, &n), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_devinfo_list_create(&list, NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_devinfo_list_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_dev_open(NULL, &out_dev), DOCA_ERROR_INVALID_VALUE);
	ASSERT(out_dev == (struct doca_dev *)0x1); /* outputs only on success */
	CASE(doca_dev_close(NULL), DOCA_ERROR_INVALID_VALUE);
	ASSERT(doca_dev_as_devinfo(NULL) == NULL);
	CASE(doca_mmap_create(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_mmap_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_mmap_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_buf_get_data_len(NULL, &len), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_buf_refcount_rm(NULL, NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_workq_create(8, NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_workq_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_ctx_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_dma_create(NULL), DOCA_ERROR_INVALID_VALUE);
	ASSERT(doca_dma_as_ctx(NULL) == NULL);
	CASE(doca_dma_job_get_supported(NULL, DOCA_DMA_JOB_MEMCPY), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_ec_matrix_destroy(NULL), DOCA_ERROR_INVALID_VALUE);

	/* Bad values. */
	CASE(doca_workq_create(0, &wq), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_buf_inventory_create(NULL, 0, DOCA_BUF_EXTENSION_NONE, &inv), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_buf_inventory_create(NULL, 4, 7, &inv), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_dma_job_get_supported(info, (enum doca_dma_job_types)12345), DOCA_ERROR_NOT_SUPPORTED);
	CASE(doca_dma_job_get_supported(info, (enum doca_dma_job_types)-1), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_log_source_destroy(9999), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_argp_start(0, NULL), DOCA_ERROR_INVALID_VALUE);
	ASSERT(strcmp(doca_get_error_name((doca_error_t)12345), "DOCA_ERROR_UNRECOGNIZED") == 0);
	ASSERT(strcmp(doca_get_error_string((doca_error_t)-3), "Unrecognized error code") == 0);
	ASSERT(strcmp(doca_get_error_name(DOCA_ERROR_IN_PROGRESS), "DOCA_ERROR_IN_PROGRESS") == 0);

	/* Memory life cycle. */
	CHECK(doca_mmap_create(NULL, &mmap));
	CASE(doca_mmap_set_permissions(mmap, 1u << 10), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_mmap_set_memrange(mmap, NULL, 64), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_mmap_set_memrange(mmap, mem, 65536));
	CHECK(doca_mmap_set_permissions(mmap, DOCA_ACCESS_LOCAL_READ_WRITE));
	CHECK(doca_mmap_dev_add(mmap, dev));
	CHECK(doca_mmap_start(mmap));
	CASE(doca_mmap_dev_add(mmap, dev), DOCA_ERROR_BAD_STATE);
	CASE(doca_mmap_set_dmabuf_memrange(mmap, 3, 0, 64), DOCA_ERROR_NOT_SUPPORTED);
	CHECK(doca_buf_inventory_create(NULL, 2, DOCA_BUF_EXTENSION_NONE, &stopped_inv));
	CASE(doca_buf_inventory_buf_by_addr(stopped_inv, mmap, mem, 64, &out_buf), DOCA_ERROR_BAD_STATE);
	ASSERT(out_buf == (struct doca_buf *)0x1);
	CHECK(doca_buf_inventory_destroy(stopped_inv));
	CHECK(doca_buf_inventory_create(NULL, 2, DOCA_BUF_EXTENSION_NONE, &inv));
	CHECK(doca_buf_inventory_start(inv));
	CHECK(doca_buf_inventory_buf_by_data(inv, mmap, mem, 1024, &a));
	CHECK(doca_buf_inventory_buf_by_addr(inv, mmap, mem + 4096, 4096, &b));
	CASE(doca_buf_inventory_buf_by_addr(inv, mmap, mem + 8192, 64, &out_buf), DOCA_ERROR_NO_MEMORY);
	CASE(doca_mmap_stop(mmap), DOCA_ERROR_IN_USE);

	/* Contexts and work queues. */
	CHECK(doca_dma_create(&dma));
	CHECK(doca_dma_create(&dma2));
	CHECK(doca_sha_create(&sha));
	CHECK(doca_workq_create(8, &wq));
	CHECK(doca_workq_create(8, &wq2));
	CHECK(doca_workq_create(1, &tiny));
	CASE(doca_ctx_start(doca_dma_as_ctx(dma)), DOCA_ERROR_BAD_STATE); /* no device */
	CASE(doca_ctx_workq_add(doca_dma_as_ctx(dma), wq), DOCA_ERROR_BAD_STATE); /* not started */
	CHECK(doca_ctx_dev_add(doca_dma_as_ctx(dma), dev));
	CASE(doca_ctx_dev_add(doca_dma_as_ctx(dma), dev), DOCA_ERROR_ALREADY_EXIST);
	CHECK(doca_ctx_start(doca_dma_as_ctx(dma)));
	CASE(doca_ctx_start(doca_dma_as_ctx(dma)), DOCA_ERROR_BAD_STATE);
	CASE(doca_ctx_dev_rm(doca_dma_as_ctx(dma), dev), DOCA_ERROR_BAD_STATE);
	CHECK(doca_ctx_workq_add(doca_dma_as_ctx(dma), wq));
	CHECK(doca_ctx_workq_add(doca_dma_as_ctx(dma), tiny));
	CASE(doca_ctx_stop(doca_dma_as_ctx(dma)), DOCA_ERROR_IN_USE);
	CASE(doca_dma_destroy(dma), DOCA_ERROR_IN_USE);
	CASE(doca_workq_destroy(wq), DOCA_ERROR_IN_USE);
	CASE(doca_workq_set_event_driven_enable(wq, 1), DOCA_ERROR_BAD_STATE);
	CASE(doca_workq_get_event_handle(wq, &fd), DOCA_ERROR_BAD_STATE);
	CASE(doca_workq_set_event_handle(wq, 0, 0), DOCA_ERROR_NOT_SUPPORTED);
	CASE(doca_ctx_set_datapath_on_gpu(doca_dma_as_ctx(dma), NULL), DOCA_ERROR_NOT_SUPPORTED);
	CASE(doca_workq_progress_retrieve(wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE), DOCA_ERROR_AGAIN);
	ASSERT(ev.type == 777); /* untouched */
	CASE(doca_workq_progress_retrieve(wq, NULL, DOCA_WORKQ_RETRIEVE_FLAGS_NONE), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_workq_progress_retrieve(wq, &ev, 5), DOCA_ERROR_INVALID_VALUE);
	{
		struct doca_dma_job_memcpy job = {
			.base = {.type = DOCA_DMA_JOB_MEMCPY, .ctx = doca_dma_as_ctx(dma)},
			.dst_buff = b,
			.src_buff = a,
		};

		CASE(doca_workq_submit(wq, NULL), DOCA_ERROR_INVALID_VALUE);
		CASE(doca_workq_submit(NULL, &job.base), DOCA_ERROR_INVALID_VALUE);
		job.base.ctx = NULL;
		CASE(doca_workq_submit(wq, &job.base), DOCA_ERROR_INVALID_VALUE);
		job.base.ctx = doca_dma_as_ctx(dma2); /* stopped */
		CASE(doca_workq_submit(wq, &job.base), DOCA_ERROR_BAD_STATE);
		job.base.ctx = doca_dma_as_ctx(dma);
		CASE(doca_workq_submit(wq2, &job.base), DOCA_ERROR_NOT_FOUND); /* not attached */
		job.base.type = DOCA_SHA_JOB_SHA256; /* another library's job */
		CASE(doca_workq_submit(wq, &job.base), DOCA_ERROR_INVALID_VALUE);
		job.base.type = -4;
		CASE(doca_workq_submit(wq, &job.base), DOCA_ERROR_INVALID_VALUE);
		job.base.type = DOCA_DMA_JOB_MEMCPY;
		job.base.flags = 0x40;
		CASE(doca_workq_submit(wq, &job.base), DOCA_ERROR_INVALID_VALUE);
		job.base.flags = 0;
		job.dst_buff = NULL;
		CASE(doca_workq_submit(wq, &job.base), DOCA_ERROR_INVALID_VALUE);
		job.dst_buff = b;
		/* Overlapping source and destination: the job fails, with the reason in its event. */
		job.dst_buff = a;
		CHECK(doca_workq_submit(wq, &job.base));
		CASE(wait_event(wq, &ev), DOCA_ERROR_IO_FAILED);
		ASSERT((doca_error_t)ev.result.u64 == DOCA_ERROR_INVALID_VALUE);
		job.dst_buff = b;
		/* A full queue. */
		CHECK(doca_workq_submit(tiny, &job.base));
		CASE(doca_workq_submit(tiny, &job.base), DOCA_ERROR_NO_MEMORY);
		CHECK(wait_event(tiny, &ev));
		CHECK(doca_buf_get_data_len(b, &len));
		ASSERT(len == 1024);
	}

	/* Erasure coding. */
	CHECK(doca_ec_create(&ec));
	CASE(doca_ec_matrix_create(ec, (enum doca_ec_matrix_types)9, 4, 2, &out_m), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_ec_matrix_create(ec, DOCA_CODING_MATRIX_CAUCHY, 0, 2, &out_m), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_ec_matrix_create(ec, DOCA_CODING_MATRIX_CAUCHY, 129, 2, &out_m), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_ec_matrix_create(ec, DOCA_CODING_MATRIX_CAUCHY, 4, 33, &out_m), DOCA_ERROR_INVALID_VALUE);
	ASSERT(out_m == (struct doca_matrix *)0x1);
	CHECK(doca_ec_matrix_create(ec, DOCA_CODING_MATRIX_CAUCHY, 4, 2, &m));
	CASE(doca_ec_recover_matrix_create(m, ec, missing3, 3, &out_m), DOCA_ERROR_INVALID_VALUE);
	CASE(doca_ec_recover_matrix_create(m, ec, NULL, 2, &out_m), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_ec_recover_matrix_create(m, ec, missing2, 2, &rm));
	CASE(doca_ec_update_matrix_create(rm, ec, missing2, 2, &out_m), DOCA_ERROR_INVALID_VALUE);
	CHECK(doca_ec_matrix_destroy(rm));
	CHECK(doca_ec_matrix_destroy(m));

	/* SHA queries. */
	CASE(doca_sha_get_min_dst_buffer_size(info, (enum doca_sha_job_type)DOCA_DMA_JOB_MEMCPY, &n),
	     DOCA_ERROR_NOT_SUPPORTED);
	CHECK(doca_ctx_get_event_driven_supported(doca_sha_as_ctx(sha), &flag));
	CASE(doca_sha_partial_session_destroy(sha, wq, NULL), DOCA_ERROR_INVALID_VALUE);

	/* Logging and argp without their set-up. */
	CASE(doca_argp_destroy(), DOCA_ERROR_BAD_STATE);
	CASE(doca_argp_register_version_callback(version_cb), DOCA_ERROR_BAD_STATE);
	CASE(doca_log_backend_level_set(NULL, DOCA_LOG_LEVEL_INFO), DOCA_ERROR_INVALID_VALUE);

	/* A sync event: waits that can never end; destroy while started. */
	{
		struct doca_sync_event *se;

		CHECK(doca_sync_event_create(&se));
		CHECK(doca_sync_event_publisher_add_location_cpu(se, dev));
		CHECK(doca_sync_event_subscriber_add_location_cpu(se, dev));
		CHECK(doca_sync_event_start(se));
		CASE(doca_sync_event_wait_gt(se, 0, 0), DOCA_ERROR_INVALID_VALUE);
		CASE(doca_sync_event_wait_gt_yield(se, 7, 7), DOCA_ERROR_INVALID_VALUE);
		CASE(doca_sync_event_destroy(se), DOCA_ERROR_IN_USE);
		CHECK(doca_sync_event_stop(se));
		CHECK(doca_sync_event_destroy(se));
	}

	/* Export and import, the comm channel, the RDMA bridge. */
	{
		static char big[5000];
		struct doca_mmap *em, *out_mmap = (struct doca_mmap *)0x1;
		const void *desc;
		size_t desc_len;
		uint8_t junk[88] = {0};
		struct doca_sync_event *se2, *out_se = (struct doca_sync_event *)0x1;
		const uint8_t *blob;
		size_t blob_len;
		struct doca_comm_channel_ep_t *ep;
		struct doca_comm_channel_addr_t *peer = NULL;
		char msg[16];
		size_t msg_len = sizeof(msg);
		struct ibv_pd *pd;
		uint32_t mkey;

		CHECK(doca_mmap_create(NULL, &em));
		CHECK(doca_mmap_dev_add(em, dev));
		CHECK(doca_mmap_set_memrange(em, mem + 32768, 4096));
		CASE(doca_mmap_export_dpu(em, dev, &desc, &desc_len), DOCA_ERROR_BAD_STATE); /* not started */
		CHECK(doca_mmap_start(em));
		CASE(doca_mmap_export_dpu(em, dev, &desc, &desc_len), DOCA_ERROR_NOT_PERMITTED); /* no DPU access */
		CASE(doca_mmap_export_rdma(em, dev, &desc, &desc_len), DOCA_ERROR_NOT_PERMITTED); /* no RDMA access */
		CASE(doca_mmap_export_dpu(em, dev, NULL, &desc_len), DOCA_ERROR_INVALID_VALUE);
		CASE(doca_mmap_create_from_export(NULL, junk, sizeof(junk), dev, &out_mmap), DOCA_ERROR_INVALID_VALUE);
		CASE(doca_mmap_create_from_export(NULL, NULL, 88, dev, &out_mmap), DOCA_ERROR_INVALID_VALUE);
		CHECK(doca_mmap_stop(em));
		CHECK(doca_mmap_set_permissions(em, DOCA_ACCESS_DPU_READ_WRITE));
		CHECK(doca_mmap_start(em));
		CHECK(doca_mmap_export_dpu(em, dev, &desc, &desc_len));
		CASE(doca_mmap_create_from_export(NULL, desc, desc_len - 1, dev, &out_mmap), DOCA_ERROR_INVALID_VALUE);
		CASE(doca_mmap_create_from_export(NULL, desc, desc_len, dev, &out_mmap), DOCA_ERROR_NOT_SUPPORTED);
		ASSERT(out_mmap == (struct doca_mmap *)0x1);
		CASE(doca_mmap_set_permissions(em, DOCA_ACCESS_LOCAL_READ_WRITE), DOCA_ERROR_BAD_STATE);
		CHECK(doca_mmap_stop(em));
		CHECK(doca_mmap_destroy(em));

		CHECK(doca_sync_event_create(&se2));
		CASE(doca_sync_event_export_to_dpu(se2, dev, NULL, &blob_len), DOCA_ERROR_INVALID_VALUE);
		CHECK(doca_sync_event_export_to_dpu(se2, dev, &blob, &blob_len));
		CASE(doca_sync_event_create_from_export(dev, blob, blob_len, &out_se), DOCA_ERROR_NOT_SUPPORTED);
		CASE(doca_sync_event_create_from_export(dev, junk, sizeof(junk), &out_se), DOCA_ERROR_INVALID_VALUE);
		CASE(doca_sync_event_create_from_export(dev, NULL, 0, &out_se), DOCA_ERROR_INVALID_VALUE);
		ASSERT(out_se == (struct doca_sync_event *)0x1);
		CHECK(doca_sync_event_destroy(se2));

		CHECK(doca_comm_channel_ep_create(&ep));
		CASE(doca_comm_channel_ep_listen(ep, "misuse"), DOCA_ERROR_BAD_STATE); /* no device */
		CASE(doca_comm_channel_ep_set_max_msg_size(ep, 0), DOCA_ERROR_INVALID_VALUE);
		CASE(doca_comm_channel_ep_set_send_queue_size(ep, 0), DOCA_ERROR_INVALID_VALUE);
		CHECK(doca_comm_channel_ep_set_device(ep, dev));
		CASE(doca_comm_channel_ep_listen(ep, "misuse"), DOCA_ERROR_NOT_SUPPORTED); /* the host connects */
		CASE(doca_comm_channel_ep_connect(ep, NULL, &peer), DOCA_ERROR_INVALID_VALUE);
		CASE(doca_comm_channel_ep_connect(ep, "", &peer), DOCA_ERROR_INVALID_VALUE);
		CASE(doca_comm_channel_ep_recvfrom(ep, msg, &msg_len, DOCA_CC_MSG_FLAG_NONE, &peer), DOCA_ERROR_BAD_STATE);
		CHECK(doca_comm_channel_ep_connect(ep, "misuse_nobody_listens", &peer));
		CASE(doca_comm_channel_ep_sendto(ep, "hi", 2, DOCA_CC_MSG_FLAG_NONE, peer), DOCA_ERROR_AGAIN);
		CASE(doca_comm_channel_ep_sendto(ep, "hi", 2, DOCA_CC_MSG_FLAG_NONE, (struct doca_comm_channel_addr_t *)msg),
		     DOCA_ERROR_INVALID_VALUE); /* not a peer of this endpoint */
		CASE(doca_comm_channel_ep_sendto(ep, big, sizeof(big), DOCA_CC_MSG_FLAG_NONE, peer), DOCA_ERROR_INVALID_VALUE);
		CASE(doca_comm_channel_ep_sendto(ep, "", 0, DOCA_CC_MSG_FLAG_NONE, peer), DOCA_ERROR_INVALID_VALUE);
		CASE(doca_comm_channel_ep_recvfrom(ep, msg, &msg_len, DOCA_CC_MSG_FLAG_NONE, &peer), DOCA_ERROR_AGAIN);
		CASE(doca_comm_channel_ep_set_device(ep, dev), DOCA_ERROR_BAD_STATE); /* after connect */
		CHECK(doca_comm_channel_ep_disconnect(ep, peer));
		CASE(doca_comm_channel_ep_disconnect(ep, peer), DOCA_ERROR_INVALID_VALUE); /* gone */
		CHECK(doca_comm_channel_ep_destroy(ep));
		CASE(doca_comm_channel_ep_destroy(NULL), DOCA_ERROR_INVALID_VALUE);

		CASE(doca_rdma_bridge_get_dev_pd(dev, &pd), DOCA_ERROR_NOT_SUPPORTED);
		CASE(doca_rdma_bridge_get_buf_mkey(a, dev, &mkey), DOCA_ERROR_NOT_SUPPORTED);
		CASE(doca_rdma_bridge_open_dev_from_pd(NULL, &out_dev), DOCA_ERROR_INVALID_VALUE);
	}

	/* Tear down in the allowed order; a released buffer cannot be taken back. */
	CHECK(doca_buf_refcount_rm(a, NULL));
	CASE(doca_buf_refcount_add(a, NULL), DOCA_ERROR_BAD_STATE);
	CHECK(doca_buf_refcount_rm(b, NULL));
	CHECK(doca_ctx_workq_rm(doca_dma_as_ctx(dma), wq));
	CHECK(doca_ctx_workq_rm(doca_dma_as_ctx(dma), tiny));
	CHECK(doca_workq_destroy(wq));
	CHECK(doca_workq_destroy(wq2));
	CHECK(doca_workq_destroy(tiny));
	CHECK(doca_ctx_stop(doca_dma_as_ctx(dma)));
	CASE(doca_ctx_stop(doca_dma_as_ctx(dma)), DOCA_ERROR_BAD_STATE);
	CASE(doca_dma_destroy(dma), DOCA_ERROR_IN_USE); /* device still attached */
	CHECK(doca_ctx_dev_rm(doca_dma_as_ctx(dma), dev));
	CASE(doca_ctx_dev_rm(doca_dma_as_ctx(dma), dev), DOCA_ERROR_NOT_FOUND);
	CHECK(doca_dma_destroy(dma));
	CHECK(doca_dma_destroy(dma2));
	CHECK(doca_sha_destroy(sha));
	CHECK(doca_ec_destroy(ec));
	CHECK(doca_buf_inventory_destroy(inv));
	CHECK(doca_mmap_destroy(mmap));
	CHECK(doca_dev_close(dev));
	free(mem);
	printf("misuse: %d cases ok\n", cases);
	return 0;
}
