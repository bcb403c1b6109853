/* history.c — the fits one clock pair had (history.h). */
#include "syncd/history.h"

#include <errno.h>
#include <math.h>

#include "libsync/ticker_wire.h"

struct syncd_history {
	syncd_history_params p;
	GArray *pieces;        /* sync_conv, oldest first, flagged PIECE, wander = q2 */
	syncd_continuity line; /* the pair's line sampled, for its wander */
	int64_t last_note_ns;  /* cpu time of the newest sample (INT64_MIN: none) */
	guint restored;        /* the oldest this many pieces came from syncd_history_restore */
};

syncd_history *syncd_history_new(const syncd_history_params *p)
{
	syncd_history *h = g_new0(syncd_history, 1);
	h->p = *p;
	if (!(h->p.unit_ns > 0))
		h->p.unit_ns = 1.0;
	h->pieces = g_array_new(FALSE, FALSE, sizeof(sync_conv));
	syncd_continuity_init(&h->line, h->p.unit_ns);
	h->last_note_ns = INT64_MIN;
	return h;
}

void syncd_history_free(syncd_history *h)
{
	if (!h)
		return;
	g_array_free(h->pieces, TRUE);
	g_free(h);
}

static const sync_conv *newest(const syncd_history *h)
{
	return h->pieces->len ? &g_array_index(h->pieces, sync_conv, h->pieces->len - 1) : NULL;
}

/* The oldest k pieces go (the restored ones are the oldest). */
static void drop_oldest(syncd_history *h, guint k)
{
	g_array_remove_range(h->pieces, 0, k);
	h->restored -= MIN(h->restored, k);
}

/* Only the oldest len pieces stay. */
static void keep_oldest(syncd_history *h, guint len)
{
	g_array_set_size(h->pieces, len);
	h->restored = MIN(h->restored, len);
}

void syncd_history_note(syncd_history *h, int64_t x, int64_t y, double se, int64_t at_ns)
{
	if (!isfinite(se) || !(se > 0))
		return;
	/* A pair's published fit may switch between two fits of it (an RBS
	 * pair's RBS and sender-receiver ones), whose newest observations
	 * differ: a sample before the newest is skipped, not a reason to
	 * start afresh. */
	if (h->line.n && x <= h->line.x[(h->line.head + h->line.n - 1) % SYNCD_CONTINUITY_SAMPLES])
		return;
	syncd_continuity_note(&h->line, 0, x, y, se);
	h->last_note_ns = at_ns;
}

gboolean syncd_history_close(syncd_history *h, const sync_conv *c, double fit_q2, gboolean brk)
{
	if (!h->p.max_pieces || c->n < 3 || !(c->slope > 0) || !(fit_q2 >= 0) || !isfinite(fit_q2))
		return FALSE;
	/* A fit that began inside the last piece's data (a periodic piece
	 * of the same window, or clocks reset) replaces it: pieces never
	 * overlap. */
	while (h->pieces->len && newest(h)->xmax > c->xmin)
		keep_oldest(h, h->pieces->len - 1);
	sync_conv p = *c;
	p.flags = (p.flags & ~(SYNC_CONV_FIXED | SYNC_CONV_BREAK | SYNC_CONV_TAU_MASK)) | SYNC_CONV_PIECE |
		  (brk ? SYNC_CONV_BREAK : 0);
	p.wander = fit_q2; /* its own fit's bound; published with the line's when larger */
	g_array_append_val(h->pieces, p);
	if (h->pieces->len > h->p.max_pieces)
		drop_oldest(h, h->pieces->len - h->p.max_pieces);
	if (brk) /* a step is no wander: the line starts afresh after it */
		syncd_continuity_init(&h->line, h->p.unit_ns);
	return TRUE;
}

/* The q2 piece p is published with: the line's measure now (more of the
 * line than when p was kept) when there is one, else p's own fit's bound.
 * The oldest piece (`oldest`) is also what a time before all the pair's
 * data is carried back with (libsync/bridge.h sync_bridge_beyond), where
 * q2 is the whole error: it gets the larger of the two — the line's is a
 * mean over few span pairs while the pair is young, 0 by chance as often
 * as not; the fit's is its mean plus a standard error.  *tau_ns gets the
 * line's span when that is taken (0: the fit's, half the piece's data). */
static double published_q2(const syncd_history *h, const sync_conv *p, gboolean oldest, int64_t *tau_ns)
{
	int64_t tau = 0;
	double q2 = syncd_continuity_q2(&h->line, NULL, &tau);
	*tau_ns = tau && (!oldest || q2 > p->wander) ? tau : 0;
	return *tau_ns ? q2 : p->wander;
}

/* Piece i as it is published: the q2 of published_q2, and its span when
 * that is the line's (else the piece's own: none for a piece kept here, the
 * saved one for a restored piece). */
static sync_conv published(const syncd_history *h, guint i)
{
	sync_conv c = g_array_index(h->pieces, sync_conv, i);
	int64_t tau;
	c.wander = published_q2(h, &c, i == 0, &tau);
	if (tau)
		sync_conv_set_piece_tau(&c, (double)tau * 1e-9);
	return c;
}

uint32_t syncd_history_min_n(const sync_fit *f, uint32_t window)
{
	return sync_fit_used_from(f) > 0 ? 3 : window / 2;
}

gboolean syncd_history_keep(syncd_history *h, const sync_conv *c, uint32_t min_n, double fit_q2)
{
	if (!h->p.every_ns || c->n < min_n)
		return FALSE;
	double every = (double)h->p.every_ns / h->p.unit_ns;
	const sync_conv *last = newest(h);
	/* After a break the new run's first fit is kept at once, as the very
	 * first is: nothing bridges across the break, so without it the
	 * frames from the restart to the next periodic piece converted with
	 * nothing once the fit's window had moved past them. */
	if (last && !(last->flags & SYNC_CONV_BREAK) && (double)(c->xmin - last->xmax) < every)
		return FALSE;
	return syncd_history_close(h, c, fit_q2, FALSE);
}

guint syncd_history_renumber(syncd_history *h, int64_t x)
{
	const sync_conv *last = newest(h);
	if (!last || x >= last->xmax)
		return 0;
	guint gone = h->pieces->len;
	keep_oldest(h, 0);
	syncd_continuity_init(&h->line, h->p.unit_ns);
	h->last_note_ns = INT64_MIN;
	return gone;
}

size_t syncd_history_entries(const syncd_history *h, sync_clock_id from, sync_clock_id to, int64_t current_xmin,
			     GArray *out)
{
	size_t k = 0;
	for (guint i = 0; i < h->pieces->len; i++) {
		const sync_conv *p = &g_array_index(h->pieces, sync_conv, i);
		if (p->xmax > current_xmin)
			break;
		sync_ticker_entry e = {from, to, *p};
		e.conv = published(h, i);
		g_array_append_val(out, e);
		k++;
	}
	return k;
}

guint syncd_history_expire(syncd_history *h, int64_t now_ns)
{
	guint old = 0;
	while (old < h->pieces->len && now_ns - g_array_index(h->pieces, sync_conv, old).updated_ns > h->p.max_age_ns)
		old++;
	drop_oldest(h, old);
	return old;
}

gboolean syncd_history_idle(const syncd_history *h, int64_t now_ns)
{
	return !h->pieces->len && (h->last_note_ns == INT64_MIN || now_ns - h->last_note_ns > h->p.max_age_ns);
}

guint syncd_history_count(const syncd_history *h)
{
	return h->pieces->len;
}

void syncd_history_describe(const syncd_history *h, int64_t now_ns, int64_t current_xmin, GString *out)
{
	const sync_conv *p = newest(h);
	if (!p)
		return;
	/* The wander published with it (syncd_history_entries). */
	char from[96];
	int64_t span = 0, tau;
	syncd_continuity_q2(&h->line, &span, NULL);
	double q2 = published_q2(h, p, h->pieces->len == 1, &tau);
	if (tau)
		g_snprintf(from, sizeof from, "measured over %.0f s of the line, spans of %.0f s", (double)span * 1e-9,
			   (double)tau * 1e-9);
	else
		g_snprintf(from, sizeof from, "%s; %zu samples of the line over %.0f s",
			   h->restored == h->pieces->len ? "as saved before syncd restarted" : "its fit's bound", h->line.n,
			   (double)span * 1e-9);
	/* q2 in (y/x)^2 per x unit as a fractional rate's, per second. */
	double frac = q2 / (p->slope * p->slope) / h->p.unit_ns * 1e9;
	double u = h->p.unit_ns * 1e-9;
	g_string_append_printf(out, " %u piece%s (newest: data %.1f s, ended %.1f s ago, wander %.3g ppb/sqrt(s), %s)",
			       h->pieces->len, h->pieces->len == 1 ? "" : "s", (double)(p->xmax - p->xmin) * u,
			       (double)(now_ns - p->updated_ns) * 1e-9, sqrt(frac) * 1e9, from);
	if (p->flags & SYNC_CONV_BREAK)
		g_string_append(out, ", a break after it");
	else if (current_xmin != INT64_MIN && current_xmin >= p->xmax)
		g_string_append_printf(out, ", bridged over %.1f s to the current fit", (double)(current_xmin - p->xmax) * u);
	else
		g_string_append(out, ", no fit after it yet");
	if (h->restored)
		g_string_append_printf(out, ", %u from before syncd restarted", h->restored);
}

double syncd_history_unit(const syncd_history *h)
{
	return h->p.unit_ns;
}

size_t syncd_history_export(const syncd_history *h, const sync_conv *current, double fit_q2, GArray *out)
{
	syncd_history t = *h; /* the line and parameters as they are; pieces copied */
	t.pieces = g_array_copy(h->pieces);
	if (current)
		syncd_history_close(&t, current, fit_q2, FALSE);
	for (guint i = 0; i < t.pieces->len; i++) {
		sync_conv c = published(&t, i);
		g_array_append_val(out, c);
	}
	size_t n = t.pieces->len;
	g_array_free(t.pieces, TRUE);
	return n;
}

int syncd_history_restore(syncd_history *h, const sync_conv *pieces, size_t n, const char **why)
{
	if (h->pieces->len) {
		*why = "the history holds pieces already";
		return -EBUSY;
	}
	for (size_t i = 0; i < n; i++) {
		const sync_conv *c = &pieces[i];
		if (sync_conv_check(c, why) < 0)
			return -EINVAL;
		if (!(c->flags & SYNC_CONV_PIECE) || (c->flags & SYNC_CONV_FIXED)) {
			*why = "a piece of history must be flagged PIECE and not FIXED";
			return -EINVAL;
		}
		if (c->n < 3 || !(c->slope > 0)) {
			*why = "a piece of history rests on 3 observations or more, with a slope > 0";
			return -EINVAL;
		}
		if (i && c->xmin < pieces[i - 1].xmax) {
			*why = "pieces of history must follow one another (each begins at or after the end of the one before)";
			return -EINVAL;
		}
	}
	size_t from = n > h->p.max_pieces ? n - h->p.max_pieces : 0;
	g_array_append_vals(h->pieces, pieces + from, (guint)(n - from));
	h->restored = h->pieces->len;
	return (int)h->restored;
}

guint syncd_history_restored(const syncd_history *h)
{
	return h->restored;
}
