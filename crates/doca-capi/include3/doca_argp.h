/*
 * doca_argp.h: command-line and JSON configuration parsing for DOCA programs.
 *
 * A program calls doca_argp_init, registers its parameters (create, name, describe,
 * give a callback and a type, register), then doca_argp_start(argc, argv). Each value
 * found is passed to its parameter's callback as (value, program_config): a char * for
 * strings, an int * for integers, a bool * for booleans and, for JSON objects, a char *
 * holding the object's JSON text. Every program also gets -h/--help, -v/--version,
 * -l/--log-level <level> and -j/--json <path> (a JSON file with the same parameters,
 * keyed by long name, at top level or under "doca_general_flags"/"doca_program_flags").
 */
#ifndef DOCA_ARGP_H_
#define DOCA_ARGP_H_

#include <stdarg.h>

#include <doca_compat.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A parameter's callback: (value, program_config). */
typedef doca_error_t (*doca_argp_param_cb_t)(void *, void *);

/** Receives the arguments after "--" (DPDK programs). */
typedef doca_error_t (*doca_argp_dpdk_cb_t)(int argc, char **argv);

/** Checks the whole configuration once parsing is done: (program_config). */
typedef doca_error_t (*doca_argp_validation_cb_t)(void *);

/** Parameter value types. */
enum doca_argp_type {
	DOCA_ARGP_TYPE_UNKNOWN = 0,
	DOCA_ARGP_TYPE_STRING,	 /**< A string. */
	DOCA_ARGP_TYPE_INT,	 /**< An integer. */
	DOCA_ARGP_TYPE_BOOLEAN,	 /**< A flag (true when given). */
	DOCA_ARGP_TYPE_JSON_OBJ, /**< A JSON object (from the JSON file). */
};

struct doca_argp_param;

/** Prints the usage text. */
DOCA_STABLE
void doca_argp_usage(void);

/** Starts a parser; program_config is passed to every callback. */
DOCA_STABLE
doca_error_t doca_argp_init(const char *program_name, void *program_config);

/** Registers a parameter; the parser owns it from now on. */
DOCA_STABLE
doca_error_t doca_argp_register_param(struct doca_argp_param *input_param);

/** Replaces the default -v/--version output. */
DOCA_STABLE
doca_error_t doca_argp_register_version_callback(doca_argp_param_cb_t callback);

/** Called with program_config once every parameter was parsed. */
DOCA_STABLE
doca_error_t doca_argp_register_validation_callback(doca_argp_validation_cb_t callback);

/** Parses the command line (and the JSON file it names). */
DOCA_STABLE
doca_error_t doca_argp_start(int argc, char **argv);

/** Frees the parser and its parameters. */
DOCA_STABLE
doca_error_t doca_argp_destroy(void);

/** Passes the arguments after "--" to callback. */
DOCA_STABLE
void doca_argp_set_dpdk_program(doca_argp_dpdk_cb_t callback);

/** Adds the --grpc-address flag. */
DOCA_STABLE
void doca_argp_set_grpc_program(void);

/** Creates an unregistered parameter. */
DOCA_STABLE
doca_error_t doca_argp_param_create(struct doca_argp_param **param);

/** The one-letter name, without "-". */
DOCA_STABLE
void doca_argp_param_set_short_name(struct doca_argp_param *param, const char *name);

/** The long name, without "--". */
DOCA_STABLE
void doca_argp_param_set_long_name(struct doca_argp_param *param, const char *name);

/** The value's placeholder in the usage text, e.g. "<path>". */
DOCA_STABLE
void doca_argp_param_set_arguments(struct doca_argp_param *param, const char *arguments);

/** The usage text's description. */
DOCA_STABLE
void doca_argp_param_set_description(struct doca_argp_param *param, const char *description);

/** The callback receiving the value. */
DOCA_STABLE
void doca_argp_param_set_callback(struct doca_argp_param *param, doca_argp_param_cb_t callback);

/** The value type. */
DOCA_STABLE
void doca_argp_param_set_type(struct doca_argp_param *param, enum doca_argp_type type);

/** The parameter must be given. */
DOCA_STABLE
void doca_argp_param_set_mandatory(struct doca_argp_param *param);

/** The parameter is accepted only on the command line, not in the JSON file. */
DOCA_STABLE
void doca_argp_param_set_cli_only(struct doca_argp_param *param);

/** The parameter may be given more than once (the callback runs for each). */
DOCA_STABLE
void doca_argp_param_set_multiplicity(struct doca_argp_param *param);

/** Frees a parameter that was not registered. */
DOCA_STABLE
doca_error_t doca_argp_param_destroy(struct doca_argp_param *param);

/** The --grpc-address value. */
DOCA_STABLE
doca_error_t doca_argp_get_grpc_addr(const char **address);

/** The log level given with -l/--log-level (or the default). */
DOCA_STABLE
doca_error_t doca_argp_get_log_level(int *log_level);

/** The SDK log level --sdk-log-level gave, or the SDK's global level when none was given. */
DOCA_EXPERIMENTAL
doca_error_t doca_argp_get_sdk_log_level(int *log_level);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_ARGP_H_ */
