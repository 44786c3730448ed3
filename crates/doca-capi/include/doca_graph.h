/*
 * doca_graph.h: job graphs. Nodes (a context's job, a user callback, or a sub-graph)
 * run once every node they depend on has completed; one event reports the whole
 * instance. Build the graph, start it, attach it to a work queue, then create
 * instances, give each node its data and submit with doca_workq_graph_submit.
 */
#ifndef DOCA_GRAPH_H_
#define DOCA_GRAPH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <doca_compat.h>
#include <doca_ctx.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Graph job types. */
enum doca_graph_job_types {
	DOCA_GRAPH_JOB = DOCA_ACTION_GRAPH_FIRST + 1,
};

struct doca_graph;
struct doca_graph_node;
struct doca_graph_instance;

/** Creates a graph. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_create(struct doca_graph **graph);

/** Destroys a stopped graph and its nodes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_destroy(struct doca_graph *graph);

/** A node running one job of job_type on ctx. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_ctx_node_create(struct doca_graph *graph, int job_type, const struct doca_ctx *ctx,
					struct doca_graph_node **node);

/** A user node's function: its return value is the node's result. */
typedef doca_error_t (*doca_graph_user_node_cb_t)(void *cookie, struct doca_event *ev);

/** A node running cb. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_user_node_create(struct doca_graph *graph, doca_graph_user_node_cb_t cb,
					 struct doca_graph_node **node);

/** A node running an instance of sub_graph. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_sub_graph_node_create(struct doca_graph *graph, struct doca_graph *sub_graph,
					      struct doca_graph_node **node);

/** to runs after from (a cycle is refused). */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_add_dependency(struct doca_graph *graph, struct doca_graph_node *from,
				       struct doca_graph_node *to);

/** Starts the graph: its shape is fixed from now on. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_start(struct doca_graph *graph);

/** Stops the graph. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_stop(struct doca_graph *graph);

/** Lets instances of the graph run on workq. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_workq_add(struct doca_graph *graph, struct doca_workq *workq);

/** Detaches the graph from workq. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_workq_rm(struct doca_graph *graph, struct doca_workq *workq);

/** Creates an instance of a started graph. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_create(const struct doca_graph *graph, struct doca_graph_instance **graph_instance);

/** Destroys an instance (not while it runs). */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_destroy(struct doca_graph_instance *graph_instance);

/** Gives a context node its job; ev receives the node's event when it completes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_ctx_node_data(struct doca_graph_instance *graph_instance,
						   struct doca_graph_node *node, struct doca_job *job,
						   struct doca_event *ev);

/** Gives a user node its cookie and the event passed to its callback. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_user_node_data(struct doca_graph_instance *graph_instance,
						    struct doca_graph_node *node, void *cookie, struct doca_event *ev);

/** Gives a sub-graph node its instance; ev receives the sub-graph's event. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_sub_graph_node_data(struct doca_graph_instance *graph_instance,
							 struct doca_graph_node *node,
							 struct doca_graph_instance *sub_graph_instance,
							 struct doca_event *ev);

/** Runs an instance; its event (type DOCA_GRAPH_JOB) carries user_data. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_graph_submit(struct doca_workq *workq, struct doca_graph_instance *graph_instance,
				     union doca_data user_data);

/** The number of nodes that failed in the last run. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_get_num_failed_nodes(const struct doca_graph_instance *graph_instance,
						      uint32_t *num_failed_nodes);

/** The nodes that failed in the last run: *num_failed_nodes in, the count written out. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_get_failed_nodes(const struct doca_graph_instance *graph_instance,
						  const struct doca_graph_node **failed_nodes,
						  uint32_t *num_failed_nodes);

/** A node's state in an instance. */
enum doca_graph_instance_node_state {
	DOCA_GRAPH_INSTANCE_NODE_STATE_NOT_STARTED,
	DOCA_GRAPH_INSTANCE_NODE_STATE_STARTED,
	DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED,
	DOCA_GRAPH_INSTANCE_NODE_STATE_ERROR,
};

/** A node's state. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_node_get_state(const struct doca_graph_instance *graph_instance,
						const struct doca_graph_node *node,
						enum doca_graph_instance_node_state *state);

/** A node's result (its doca_error_t in u64). */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_node_get_result(const struct doca_graph_instance *graph_instance,
						 const struct doca_graph_node *node, union doca_data *result);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GRAPH_H_ */
