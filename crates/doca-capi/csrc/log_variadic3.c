/* The task generation's variadic doca_log entry points: format, then pass the text to
 * the logger. They are defined under the doca3__ link names; the install step gives
 * them their public names in this generation's library. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <doca_error.h>

doca_error_t doca_capi_log_text3(uint32_t level, int source, int line, int bucket, const char *text);
doca_error_t doca3__log(uint32_t level, int source, const char *fname, int line, const char *func,
			const char *format, ...) __attribute__((format(printf, 6, 7)));
doca_error_t doca3__log_rate_limit(uint32_t level, int source, const char *fname, int line, const char *func,
				   int bucket, const char *format, ...) __attribute__((format(printf, 7, 8)));

static doca_error_t log_va(uint32_t level, int source, int line, int bucket, const char *format, va_list ap)
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
		return doca_capi_log_text3(level, source, line, bucket, small);
	{
		char *big = malloc((size_t)n + 1);
		doca_error_t r;

		if (big == NULL)
			return DOCA_ERROR_NO_MEMORY;
		vsnprintf(big, (size_t)n + 1, format, ap);
		r = doca_capi_log_text3(level, source, line, bucket, big);
		free(big);
		return r;
	}
}

doca_error_t doca3__log(uint32_t level, int source, const char *fname, int line, const char *func,
			const char *format, ...)
{
	va_list ap;
	doca_error_t r;

	(void)fname;
	(void)func;
	va_start(ap, format);
	r = log_va(level, source, line, -1, format, ap);
	va_end(ap);
	return r;
}

doca_error_t doca3__log_rate_limit(uint32_t level, int source, const char *fname, int line, const char *func,
				   int bucket, const char *format, ...)
{
	va_list ap;
	doca_error_t r;

	(void)fname;
	(void)func;
	va_start(ap, format);
	r = log_va(level, source, line, bucket, format, ap);
	va_end(ap);
	return r;
}
