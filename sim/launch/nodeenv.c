/* nodeenv.c — one node's devices for a call (nodeenv.h). */
#include "sim/launch/nodeenv.h"

#include "libdev/link.h"

static void restore(const char *name, const char *value)
{
	if (value)
		g_setenv(name, value, TRUE);
	else
		g_unsetenv(name);
}

csim_node_env csim_node_env_enter(const char *run_dir, int node)
{
	csim_node_env e = {g_strdup(g_getenv("CHORUS_NODE")), g_strdup(g_getenv("CHORUS_RUN"))};
	char id[16];
	g_snprintf(id, sizeof id, "%d", node);
	g_setenv("CHORUS_NODE", id, TRUE);
	g_setenv("CHORUS_RUN", run_dir, TRUE);
	return e;
}

void csim_node_env_leave(csim_node_env *e)
{
	restore("CHORUS_NODE", e->node);
	restore("CHORUS_RUN", e->run);
	g_free(e->node);
	g_free(e->run);
	e->node = e->run = NULL;
}

int csim_node_status_read(const char *run_dir, int node, const char *dev, GByteArray *b)
{
	csim_node_env saved = csim_node_env_enter(run_dir, node);
	int rc = dev_status_read_sync(dev, FALSE, b, 2000);
	csim_node_env_leave(&saved);
	if (rc == 0)
		g_byte_array_append(b, (const guint8 *)"", 1);
	return rc;
}
