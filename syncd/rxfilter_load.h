/* rxfilter_load.h — syncd's side of the receive-filter hook: loading the
 * object named by CHORUS_RX_FILTER (the interface it implements is
 * syncd/rxfilter.h) and calling it from the RBS receive path (rbs.c).
 * Implemented in rxfilter.c.
 *
 * Errors: GError in SYNCD_RXFILTER_ERROR with an errno code (ENOENT: the
 * object cannot be loaded, ENOEXEC: it lacks the symbol or a required
 * callback, EPROTO: its ABI is not SYNCD_RXFILTER_ABI, EINVAL: its open()
 * refused); every message names the object's path.
 */
#ifndef CHORUS_SYNCD_RXFILTER_LOAD_H
#define CHORUS_SYNCD_RXFILTER_LOAD_H

#include <glib.h>
#include <stdint.h>

#define SYNCD_RXFILTER_ERROR g_quark_from_static_string("syncd-rxfilter")

typedef struct syncd_rxf syncd_rxf;

/* dlopen `path`, check its `syncd_rxfilter` symbol and ABI, and open it for
 * node `self` with `arg` (may be NULL).  Returns the loaded filter, or NULL
 * with *err (naming `path` and, for loader failures, dlerror()). */
syncd_rxf *syncd_rxf_load(const char *path, const char *arg, uint32_t self, GError **err);

/* The filter the environment asks for: CHORUS_RX_FILTER (unset or empty:
 * none) opened with CHORUS_RX_FILTER_ARG.  Returns TRUE with *out the
 * filter or NULL (none asked for), or FALSE with *err when the variable is
 * set and loading fails — syncd then refuses to start. */
gboolean syncd_rxf_load_env(uint32_t self, syncd_rxf **out, GError **err);

/* A packet from `sender` arrived at *rx_ns (node cpu ns): TRUE to keep it
 * (*rx_ns possibly moved by the filter), FALSE to drop it. */
gboolean syncd_rxf_deliver(syncd_rxf *f, uint32_t sender, int64_t *rx_ns);

/* Whether `peer` and we reach each other at all at now_ns (the filter's
 * `reachable`; TRUE when it has none). */
gboolean syncd_rxf_reachable(syncd_rxf *f, uint32_t peer, int64_t now_ns);

/* The senders the filter could ever keep (rxfilter.h
 * syncd_rxfilter_senders): up to max into out, returning how many there
 * are, or -1 when the filter does not say (any sender). */
int syncd_rxf_senders(syncd_rxf *f, uint32_t *out, size_t max);

/* The filter's one-line description and counters, with a newline,
 * appended to out. */
void syncd_rxf_describe(syncd_rxf *f, GString *out);

/* Close the filter and unload its object (NULL is fine). */
void syncd_rxf_free(syncd_rxf *f);

#endif
