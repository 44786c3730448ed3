/*
 * arch_dpu.c: linked into programs built with the DPU flavour of the installation
 * (pkg-config doca-dpu). Before main, it tells the library that the program was built
 * for the DPU, so the process sees the DPU side of the machine (DOCA_SW_ROLE still
 * overrides), as a program built on a BlueField's Arm cores does.
 */
#include <doca_build_config.h>

#ifndef DOCA_ARCH_DPU
#error "arch_dpu.c is built with the DPU flavour of doca_build_config.h"
#endif

int doca_capi_build_role_set(int dpu);

__attribute__((constructor)) static void doca_arch_dpu_role(void)
{
	(void)doca_capi_build_role_set(1);
}
