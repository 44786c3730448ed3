/*
 * doca_common_defines.h: small helpers shared by the DOCA headers.
 */
#ifndef DOCA_COMMON_DEFINES_H_
#define DOCA_COMMON_DEFINES_H_

#if defined(__GNUC__) || defined(__clang__)
/** Tells the compiler that x is expected to be true. */
#define doca_likely(x) __builtin_expect(!!(x), 1)
/** Tells the compiler that x is expected to be false. */
#define doca_unlikely(x) __builtin_expect(!!(x), 0)
#else
#define doca_likely(x) (x)
#define doca_unlikely(x) (x)
#endif

#endif /* DOCA_COMMON_DEFINES_H_ */
