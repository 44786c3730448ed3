/*
 * doca_build_config.h: the architecture this installation was built for. This is the
 * host flavour (pkg-config doca); the DPU flavour (pkg-config doca-dpu) is in dpu/.
 */
#ifndef DOCA_BUILD_CONFIG_H_
#define DOCA_BUILD_CONFIG_H_

#undef DOCA_ARCH_DPU
/** Programs run on the host side of the machine. */
#define DOCA_ARCH_HOST 1

#if defined(__x86_64__) || defined(_M_X64)
#define DOCA_ARCH_X86 1
#elif defined(__aarch64__)
#define DOCA_ARCH_ARM 1
#define DOCA_ARCH_ARM64 1
#endif

#endif /* DOCA_BUILD_CONFIG_H_ */
