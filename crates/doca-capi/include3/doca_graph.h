/*
 * doca_graph.h: graphs on a progress engine (task generation). A graph's nodes are
 * context nodes (each instance gives them a task), user nodes (a callback) and
 * sub-graph nodes; dependencies order them. Instances of a started graph are submitted
 * to the engine, and the graph's callback reports each one from doca_pe_progress.
 */
#ifndef DOCA_GRAPH_H_
#define DOCA_GRAPH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <doca_compat.h>
#include <doca_ctx.h>
#include <doca_error.h>
#include <doca_pe.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_graph;
struct doca_graph_node;
struct doca_graph_instance;

/** The callback of a completed (or failed) instance. */
typedef void (*doca_graph_completion_cb_t)(struct doca_graph_instance *instance,
					   union doca_data instance_user_data, union doca_data graph_user_data);

/** A user node's work: a failure fails the instance. */
typedef doca_error_t (*doca_graph_user_node_cb_t)(void *cookie);

/** Creates a graph whose instances run on pe. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_create(struct doca_pe *pe, struct doca_graph **graph);

/** Destroys a stopped graph with no instance left. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_destroy(struct doca_graph *graph);

/** Sets the instance callbacks and how many instances may exist (before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_set_conf(struct doca_graph *graph, doca_graph_completion_cb_t graph_completion_cb,
				 doca_graph_completion_cb_t graph_error_cb, uint32_t num_graph_instances);

/** Sets the user data every instance callback receives (before start). */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_set_user_data(struct doca_graph *graph, union doca_data user_data);

/** The graph's user data. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_get_user_data(const struct doca_graph *graph, union doca_data *user_data);

/** A node running one task of ctx per instance. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_node_create_from_ctx(struct doca_graph *graph, const struct doca_ctx *ctx,
					     struct doca_graph_node **node);

/** A node calling cb with the instance's cookie. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_node_create_from_user(struct doca_graph *graph, doca_graph_user_node_cb_t cb,
					      struct doca_graph_node **node);

/** A node running an instance of a started sub-graph. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_node_create_from_graph(struct doca_graph *graph, struct doca_graph *sub_graph,
					       struct doca_graph_node **node);

/** to runs after from (DOCA_ERROR_NOT_PERMITTED for a cycle). */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_add_dependency(struct doca_graph *graph, struct doca_graph_node *from,
				       struct doca_graph_node *to);

/** Starts the graph: every context node's context is running. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_start(struct doca_graph *graph);

/** Stops the graph (DOCA_ERROR_IN_USE while instances exist). */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_stop(struct doca_graph *graph);

/** Creates an instance of a started graph. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_create(const struct doca_graph *graph, struct doca_graph_instance **graph_instance);

/** Destroys an instance (DOCA_ERROR_IN_USE while submitted). */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_destroy(struct doca_graph_instance *graph_instance);

/** Sets the instance's user data (not while submitted). */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_user_data(struct doca_graph_instance *graph_instance, union doca_data user_data);

/** The instance's user data. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_get_user_data(const struct doca_graph_instance *graph_instance,
					       union doca_data *user_data);

/** The task a context node runs (a task of the node's context). */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_ctx_node_data(struct doca_graph_instance *graph_instance,
						   struct doca_graph_node *node, struct doca_task *task);

/** The cookie a user node's callback gets. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_user_node_data(struct doca_graph_instance *graph_instance,
						    struct doca_graph_node *node, void *cookie);

/** The sub-graph instance a sub-graph node runs. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_sub_graph_node_data(struct doca_graph_instance *graph_instance,
							 struct doca_graph_node *node,
							 struct doca_graph_instance *sub_graph_instance);

/** Submits the instance to its graph's engine. */
DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_submit(struct doca_graph_instance *graph_instance);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GRAPH_H_ */
