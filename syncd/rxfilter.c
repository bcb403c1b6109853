/* rxfilter.c — loading and calling the receive filter (see rxfilter_load.h
 * and, for the hook itself, rxfilter.h). */
#include "syncd/rxfilter_load.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include "syncd/rxfilter.h"

struct syncd_rxf {
	void *dl;                          /* dlopen handle */
	const syncd_rxfilter_ops *ops;     /* the object's syncd_rxfilter */
	syncd_rxfilter_senders_fn senders; /* optional syncd_rxfilter_senders, or NULL */
	void *h;                           /* what ops->open returned */
	char *path;
};

syncd_rxf *syncd_rxf_load(const char *path, const char *arg, uint32_t self, GError **err)
{
	void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		g_set_error(err, SYNCD_RXFILTER_ERROR, ENOENT, "receive filter %s: cannot load it: %s", path, dlerror());
		return NULL;
	}
	dlerror();
	const syncd_rxfilter_ops *ops = dlsym(dl, "syncd_rxfilter");
	const char *dl_why = dlerror();
	if (!ops || dl_why) {
		g_set_error(err, SYNCD_RXFILTER_ERROR, ENOEXEC, "receive filter %s: no symbol syncd_rxfilter: %s", path,
			    dl_why ? dl_why : "it is NULL");
		dlclose(dl);
		return NULL;
	}
	if (ops->abi != SYNCD_RXFILTER_ABI) {
		g_set_error(err, SYNCD_RXFILTER_ERROR, EPROTO,
			    "receive filter %s: ABI %d, but this syncd speaks ABI %d (rebuild the filter)", path, ops->abi,
			    SYNCD_RXFILTER_ABI);
		dlclose(dl);
		return NULL;
	}
	if (!ops->open || !ops->deliver) {
		g_set_error(err, SYNCD_RXFILTER_ERROR, ENOEXEC, "receive filter %s: syncd_rxfilter lacks open or deliver",
			    path);
		dlclose(dl);
		return NULL;
	}
	char *why = NULL;
	void *h = ops->open(self, arg, &why);
	if (!h) {
		g_set_error(err, SYNCD_RXFILTER_ERROR, EINVAL, "receive filter %s: refused node%u%s%s: %s", path, self,
			    arg ? " with argument " : "", arg ? arg : "", why ? why : "no reason given");
		free(why);
		dlclose(dl);
		return NULL;
	}
	free(why); /* a message on success is not part of the contract; do not leak it */
	syncd_rxf *f = g_new0(syncd_rxf, 1);
	f->dl = dl;
	f->ops = ops;
	f->senders = (syncd_rxfilter_senders_fn)dlsym(dl, "syncd_rxfilter_senders");
	f->h = h;
	f->path = g_strdup(path);
	return f;
}

gboolean syncd_rxf_load_env(uint32_t self, syncd_rxf **out, GError **err)
{
	const char *path = g_getenv("CHORUS_RX_FILTER");
	*out = NULL;
	if (!path || !*path)
		return TRUE;
	*out = syncd_rxf_load(path, g_getenv("CHORUS_RX_FILTER_ARG"), self, err);
	return *out != NULL;
}

gboolean syncd_rxf_deliver(syncd_rxf *f, uint32_t sender, int64_t *rx_ns)
{
	return f->ops->deliver(f->h, sender, rx_ns) != 0;
}

gboolean syncd_rxf_reachable(syncd_rxf *f, uint32_t peer, int64_t now_ns)
{
	return !f->ops->reachable || f->ops->reachable(f->h, peer, now_ns) != 0;
}

int syncd_rxf_senders(syncd_rxf *f, uint32_t *out, size_t max)
{
	return f->senders ? f->senders(f->h, out, max) : -1;
}

void syncd_rxf_describe(syncd_rxf *f, GString *out)
{
	char line[512] = "";
	if (f->ops->describe)
		f->ops->describe(f->h, line, sizeof line);
	line[sizeof line - 1] = '\0';
	if (*line)
		g_string_append_printf(out, "%s\n", line);
	else
		g_string_append_printf(out, "receive filter %s\n", f->path);
}

void syncd_rxf_free(syncd_rxf *f)
{
	if (!f)
		return;
	if (f->ops->close)
		f->ops->close(f->h);
	dlclose(f->dl);
	g_free(f->path);
	g_free(f);
}
