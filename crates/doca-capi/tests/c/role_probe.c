/* Which side of the machine a program sees: built with pkg-config doca (host) or
 * doca-dpu (DOCA_ARCH_DPU), it lists its devices and, on the DPU, their representors;
 * with an argument it then waits that many milliseconds holding its device open, so
 * that a host and a DPU program can be seen running at once. */
#include "common.h"

int main(int argc, char **argv)
{
	struct doca_devinfo **list;
	struct doca_dev *dev;
	uint32_t n = 0, i;
	char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];

#ifdef DOCA_ARCH_DPU
	printf("arch=dpu\n");
#else
	printf("arch=host\n");
#endif
	CHECK(doca_devinfo_list_create(&list, &n));
	ASSERT(n > 0);
	for (i = 0; i < n; i++) {
		CHECK(doca_devinfo_get_pci_addr_str(list[i], pci));
		printf("dev=%s\n", pci);
	}
	CHECK(doca_dev_open(list[0], &dev));
	CHECK(doca_devinfo_list_destroy(list));
	{
		struct doca_devinfo_rep **reps;
		uint32_t nr = 0;
		doca_error_t r = doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_ALL, &reps, &nr);

		if (r == DOCA_SUCCESS) {
			for (i = 0; i < nr; i++) {
				CHECK(doca_devinfo_rep_get_pci_addr_str(reps[i], pci));
				printf("rep=%s\n", pci);
			}
			CHECK(doca_devinfo_rep_list_destroy(reps));
		} else {
			printf("reps=%s\n", doca_get_error_name(r));
		}
	}
	fflush(stdout);
	if (argc > 1)
		usleep((useconds_t)atoi(argv[1]) * 1000);
	CHECK(doca_dev_close(dev));
	printf("role_probe: ok\n");
	return 0;
}
