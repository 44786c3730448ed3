/* Device listing: properties of every device, open/close, representors. */
#include "common.h"
#include <doca_dma.h>
#include <doca_erasure_coding.h>
#include <doca_sha.h>
#include <doca_version.h>

int main(void)
{
	struct doca_devinfo **list;
	uint32_t n = 0, i;

	printf("DOCA %s (runtime %s)\n", doca_version(), doca_version_runtime());
	ASSERT(strcmp(doca_version(), doca_version_runtime()) == 0);
	ASSERT(DOCA_VERSION_EQ_CURRENT(2, 2, 80));
	ASSERT(DOCA_VERSION_LTE_CURRENT(2, 1, 0));

	CHECK(doca_devinfo_list_create(&list, &n));
	ASSERT(n >= 1);
	ASSERT(list[n] == NULL);
	for (i = 0; i < n; i++) {
		char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];
		char iface[DOCA_DEVINFO_IFACE_NAME_SIZE];
		char ibdev[DOCA_DEVINFO_IBDEV_NAME_SIZE];
		uint8_t mac[DOCA_DEVINFO_MAC_ADDR_SIZE], ipv4[DOCA_DEVINFO_IPV4_ADDR_SIZE];
		uint8_t ipv6[DOCA_DEVINFO_IPV6_ADDR_SIZE], eq = 0, flag = 0;
		uint16_t lid;

		CHECK(doca_devinfo_get_pci_addr_str(list[i], pci));
		ASSERT(strlen(pci) == DOCA_DEVINFO_PCI_ADDR_SIZE - 1);
		CHECK(doca_devinfo_get_is_pci_addr_equal(list[i], pci, &eq));
		ASSERT(eq == 1);
		CHECK(doca_devinfo_get_is_pci_addr_equal(list[i], pci + 5, &eq)); /* "XX:XX.X" form */
		ASSERT(eq == 1);
		CHECK(doca_devinfo_get_iface_name(list[i], iface, sizeof(iface)));
		CHECK(doca_devinfo_get_ibdev_name(list[i], ibdev, sizeof(ibdev)));
		CHECK(doca_devinfo_get_mac_addr(list[i], mac, sizeof(mac)));
		CHECK(doca_devinfo_get_ipv4_addr(list[i], ipv4, sizeof(ipv4)));
		CHECK(doca_devinfo_get_ipv6_addr(list[i], ipv6, sizeof(ipv6)));
		CHECK(doca_devinfo_get_lid(list[i], &lid));
		CHECK(doca_devinfo_get_is_hotplug_manager_supported(list[i], &flag));
		CHECK(doca_devinfo_get_is_mmap_export_dpu_supported(list[i], &flag));
		CHECK(doca_devinfo_rep_get_is_list_all_supported(list[i], &flag));
		printf("device %u: %s iface=%s ibdev=%s mac=%02x:%02x:%02x:%02x:%02x:%02x dma=%s sha=%s ec=%s\n", i, pci,
		       iface, ibdev, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5],
		       doca_get_error_name(doca_dma_job_get_supported(list[i], DOCA_DMA_JOB_MEMCPY)),
		       doca_get_error_name(doca_sha_job_get_supported(list[i], DOCA_SHA_JOB_SHA256)),
		       doca_get_error_name(doca_ec_job_get_supported(list[i], DOCA_EC_JOB_CREATE)));
		/* Too small a buffer is refused and left untouched. */
		memset(mac, 0xAB, sizeof(mac));
		EXPECT_ERR(doca_devinfo_get_mac_addr(list[i], mac, 2), DOCA_ERROR_INVALID_VALUE);
		ASSERT(mac[0] == 0xAB);
	}

	{
		struct doca_dev *dev;
		struct doca_devinfo *info;
		struct doca_devinfo_rep **reps;
		uint32_t nreps;
		char a[DOCA_DEVINFO_PCI_ADDR_SIZE], b[DOCA_DEVINFO_PCI_ADDR_SIZE];

		CHECK(doca_dev_open(list[0], &dev));
		CHECK(doca_devinfo_list_destroy(list));
		/* The device keeps its own information after the list is gone. */
		info = doca_dev_as_devinfo(dev);
		ASSERT(info != NULL);
		CHECK(doca_devinfo_get_pci_addr_str(info, a));
		CHECK(doca_devinfo_get_pci_addr_str(info, b));
		ASSERT(strcmp(a, b) == 0);
		/* The default device is a host device: no representors. */
		EXPECT_ERR(doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_NET, &reps, &nreps),
			   DOCA_ERROR_NOT_SUPPORTED);
		EXPECT_ERR(doca_devinfo_rep_list_create(dev, 12345, &reps, &nreps), DOCA_ERROR_INVALID_VALUE);
		CHECK(doca_dev_close(dev));
	}
	printf("dev_list: ok\n");
	return 0;
}
