/* replay.c — per-sender replay windows (see replay.h). */
#include "libdev/replay.h"

#include <glib.h>
#include <string.h>

typedef struct {
	int have;      /* a packet of this type arrived in this boot */
	uint32_t top;  /* newest sequence number */
	uint64_t bits; /* bit k: top - k arrived (bit 0: top itself) */
} window;

typedef struct {
	uint64_t boot;
	window w[REPLAY_TYPES];
} sender_state;

struct dev_replay {
	GHashTable *senders; /* node -> sender_state */
	uint32_t max;
};

dev_replay *dev_replay_new(uint32_t max_senders)
{
	dev_replay *w = g_new0(dev_replay, 1);
	w->senders = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	w->max = max_senders ? max_senders : 1;
	return w;
}

void dev_replay_free(dev_replay *w)
{
	if (!w)
		return;
	g_hash_table_destroy(w->senders);
	g_free(w);
}

/* Judge seq against one type's window and take it when fresh. */
static replay_verdict take(window *win, uint32_t seq)
{
	if (!win->have) {
		win->have = 1;
		win->top = seq;
		win->bits = 1;
		return REPLAY_OK;
	}
	int32_t d = (int32_t)(seq - win->top); /* serial-number distance */
	if (d > 0) {
		win->bits = d >= REPLAY_WINDOW ? 0 : win->bits << d;
		win->bits |= 1;
		win->top = seq;
		return REPLAY_OK;
	}
	uint32_t back = (uint32_t)(-(int64_t)d);
	if (back >= REPLAY_WINDOW)
		return REPLAY_OLD;
	if (win->bits & ((uint64_t)1 << back))
		return REPLAY_SEEN;
	win->bits |= (uint64_t)1 << back;
	return REPLAY_OK;
}

replay_verdict dev_replay_check(dev_replay *w, uint32_t sender, unsigned type, uint64_t boot, uint32_t seq)
{
	if (type >= REPLAY_TYPES)
		return REPLAY_OLD;
	sender_state *s = g_hash_table_lookup(w->senders, GUINT_TO_POINTER(sender));
	if (!s) {
		if (g_hash_table_size(w->senders) >= w->max)
			return REPLAY_FULL;
		s = g_new0(sender_state, 1);
		s->boot = boot;
		g_hash_table_insert(w->senders, GUINT_TO_POINTER(sender), s);
	}
	if (boot < s->boot)
		return REPLAY_STALE_BOOT;
	if (boot > s->boot) {
		/* The sender restarted: its numbers start afresh. */
		memset(s->w, 0, sizeof s->w);
		s->boot = boot;
	}
	return take(&s->w[type], seq);
}

size_t dev_replay_senders(const dev_replay *w)
{
	return g_hash_table_size(w->senders);
}

const char *dev_replay_name(replay_verdict v)
{
	static const char *const names[REPLAY_N] = {"ok", "seen", "old", "stale_boot", "full"};
	return v < REPLAY_N ? names[v] : "?";
}
