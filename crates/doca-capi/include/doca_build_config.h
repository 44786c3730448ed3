/*
 * doca_build_config.h: the architecture this installation was built for.
 */
#ifndef DOCA_BUILD_CONFIG_H_
#define DOCA_BUILD_CONFIG_H_

/** Programs run on the host side (there is no DPU: every device is software). */
#define DOCA_ARCH_HOST 1

#if defined(__x86_64__) || defined(_M_X64)
#define DOCA_ARCH_X86 1
#elif defined(__aarch64__)
#define DOCA_ARCH_ARM64 1
#endif

#endif /* DOCA_BUILD_CONFIG_H_ */
