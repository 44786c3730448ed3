/* The variadic doca_log entry points: format, then pass the text to the logger. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "doca_log.h"

doca_error_t doca_capi_log_text(uint32_t level, int source, int line, int bucket, int developer,
				 const char *text);

static doca_error_t log_va(uint32_t level, int source, int line, int bucket, int developer,
			   const char *format, va_list ap)
{
	char small[512];
	va_list copy;
	int n;

	if (format == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	va_copy(copy, ap);
	n = vsnprintf(small, sizeof(small), format, copy);
	va_end(copy);
	if (n < 0)
		return DOCA_ERROR_INVALID_VALUE;
	if ((size_t)n < sizeof(small))
		return doca_capi_log_text(level, source, line, bucket, developer, small);
	{
		char *big = malloc((size_t)n + 1);
		doca_error_t r;

		if (big == NULL)
			return DOCA_ERROR_NO_MEMORY;
		vsnprintf(big, (size_t)n + 1, format, ap);
		r = doca_capi_log_text(level, source, line, bucket, developer, big);
		free(big);
		return r;
	}
}

doca_error_t doca_log(uint32_t level, int source, int line, const char *format, ...)
{
	va_list ap;
	doca_error_t r;

	va_start(ap, format);
	r = log_va(level, source, line, -1, 0, format, ap);
	va_end(ap);
	return r;
}

doca_error_t doca_log_developer(uint32_t level, int source, int line, const char *format, ...)
{
	va_list ap;
	doca_error_t r;

	va_start(ap, format);
	r = log_va(level, source, line, -1, 1, format, ap);
	va_end(ap);
	return r;
}

doca_error_t doca_log_rate_limit(uint32_t level, int source, int line, int bucket, const char *format, ...)
{
	va_list ap;
	doca_error_t r;

	va_start(ap, format);
	r = log_va(level, source, line, bucket, 0, format, ap);
	va_end(ap);
	return r;
}
