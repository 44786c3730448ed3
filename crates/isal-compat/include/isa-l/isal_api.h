/* Library version queries (ISA-L's isal_api.h). */
#ifndef _ISAL_API_H
#define _ISAL_API_H

#ifdef __cplusplus
extern "C" {
#endif

/* "2.32.0": the ISA-L release whose interface this library provides. */
const char *isal_get_version_str(void);
/* 0x022000: major << 16 | minor << 8 | patch. */
unsigned isal_get_version(void);

#ifdef __cplusplus
}
#endif
#endif
