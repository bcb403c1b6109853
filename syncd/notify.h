/* notify.h — how syncd's parts tell the daemon that what its devices show
 * has changed, without knowing the daemon (root.c, rbs.c; the daemon's
 * handler is in devices.c).  A callback and its user data, as GLib passes
 * them; a part keeps a copy and calls it on its own thread (the main loop).
 */
#ifndef CHORUS_SYNCD_NOTIFY_H
#define CHORUS_SYNCD_NOTIFY_H

typedef enum {
	/* State on sync/ticker, sync/clocks or sync/rbs changed: publish it
	 * at the next flush that ticker_interval_s allows. */
	SYNCD_CHANGED,
	/* Global time was (re)defined here: publish at the next flush,
	 * whatever ticker_interval_s says. */
	SYNCD_CHANGED_AT_ONCE,
	/* A batch of events (one socket wake-up) is done: flush now if
	 * something changed and ticker_interval_s allows. */
	SYNCD_SETTLED,
} syncd_change;

typedef struct {
	void (*fn)(void *user, syncd_change what); /* NULL: nobody listens */
	void *user;
} syncd_notify;

/* Call n's callback, if any, with `what`. */
static inline void syncd_notify_call(const syncd_notify *n, syncd_change what)
{
	if (n->fn)
		n->fn(n->user, what);
}

#endif
