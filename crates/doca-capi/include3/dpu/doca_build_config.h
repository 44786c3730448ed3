/*
 * doca_build_config.h, DPU flavour: the architecture this installation was built for.
 *
 * Programs built with `pkg-config --cflags --libs doca-dpu` see this file instead of the
 * host one: DOCA_ARCH_DPU is defined (samples that must run on the DPU check it), and
 * pkg-config's libraries include a small object that makes the process the DPU side of
 * the machine before main.
 */
#ifndef DOCA_BUILD_CONFIG_H_
#define DOCA_BUILD_CONFIG_H_

#undef DOCA_ARCH_HOST
/** Programs run on the DPU side of the machine. */
#define DOCA_ARCH_DPU 1

#if defined(__x86_64__) || defined(_M_X64)
/* A BlueField's cores are Arm; in software the DPU side runs on the build machine's CPU. */
#define DOCA_ARCH_X86 1
#elif defined(__aarch64__)
#define DOCA_ARCH_ARM 1
#define DOCA_ARCH_ARM64 1
#endif

#endif /* DOCA_BUILD_CONFIG_H_ */
