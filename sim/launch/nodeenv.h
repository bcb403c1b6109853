/* nodeenv.h — point libdev at one simulated node's devices for a call.
 * Device paths follow CHORUS_NODE and CHORUS_RUN at call time
 * (libdev/path.h); the truth and the chaos checks read each node's devices
 * in turn from one process, so they set both around each read and put the
 * previous values back. */
#ifndef CHORUS_SIM_LAUNCH_NODEENV_H
#define CHORUS_SIM_LAUNCH_NODEENV_H

#include <glib.h>

typedef struct {
	char *node, *run; /* the values before, or NULL when unset */
} csim_node_env;

/* From now on libdev names node `node`'s devices under run_dir.  Returns
 * what to give csim_node_env_leave. */
csim_node_env csim_node_env_enter(const char *run_dir, int node);

/* Put CHORUS_NODE and CHORUS_RUN back as they were before *e. */
void csim_node_env_leave(csim_node_env *e);

/* Node `node`'s status device `dev` read once (2 s at most) into b,
 * NUL-terminated; 0 or a negative errno. */
int csim_node_status_read(const char *run_dir, int node, const char *dev, GByteArray *b);

#endif
