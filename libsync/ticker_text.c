/* ticker_text.c — the ticker's text lines (see ticker_text.h). */
#include "libsync/ticker_text.h"

#include <math.h>

void sync_ticker_format_head(const sync_ticker_head *h, GString *out)
{
	g_string_append_printf(out, "ticker node%u now=%" G_GINT64_FORMAT " conversions=%zu", h->node, h->now_ns,
			       h->count);
	if (h->root != SYNC_TICKER_NO_ROOT)
		g_string_append_printf(out, " root=node%u", h->root);
	g_string_append(out, "\n");
}

void sync_ticker_format_entry(const sync_ticker_entry *e, int64_t now_ns, GString *out)
{
	char a[SYNC_CLOCK_NAME_MAX], b[SYNC_CLOCK_NAME_MAX];
	const sync_conv *c = &e->conv;
	sync_tval end = sync_tval_of(c->xmax);
	g_string_append_printf(out, "%s -> %s slope=%.15g", sync_clock_format(e->from, a, sizeof a),
			       sync_clock_format(e->to, b, sizeof b), c->slope);
	if (c->flags & SYNC_CONV_FIXED) {
		g_string_append_printf(out, " exact x0=%" G_GINT64_FORMAT " y0=%" G_GINT64_FORMAT "\n", c->x0, c->y0);
		return;
	}
	if (c->flags & SYNC_CONV_PIECE) {
		/* History (bridge.h): its wander field is the rate random walk. */
		if (e->from.kind == SYNC_KIND_AUDIO) /* x in frames */
			g_string_append_printf(out, " n=%u rms=%.4g piece data=%" G_GINT64_FORMAT "frames", c->n, c->rms,
					       c->xmax - c->xmin);
		else
			g_string_append_printf(out, " n=%u rms=%.4g piece data=%.3fs", c->n, c->rms,
					       (double)(c->xmax - c->xmin) * 1e-9);
		g_string_append_printf(out, " ended=%.3fs-ago wander=%.3g", (double)(now_ns - c->updated_ns) * 1e-9, c->wander);
		if (c->flags & SYNC_CONV_TAU_MASK)
			g_string_append_printf(out, " wander_span=%.0fs", sync_conv_piece_tau(c, 1.0) * 1e-9);
		g_string_append_printf(out, "%s\n", c->flags & SYNC_CONV_BREAK ? " break-after" : "");
		return;
	}
	g_string_append_printf(out, " n=%u rms=%.4g se_end=%.4g age=%.3fs%s\n", c->n, c->rms, sqrt(sync_conv_var(c, end)),
			       (double)(now_ns - c->updated_ns) * 1e-9, c->flags & SYNC_CONV_LOWER ? " lower-envelope" : "");
}
