/* history_store.c — syncd's pieces of history as bytes (history_store.h). */
#include "syncd/history_store.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "libsync/ticker_wire.h"

struct history_store {
	char *owner;
	uint32_t node;
	GPtrArray *pairs; /* history_store_pair* */
};

/* The GVariant types of the file and of its body (version 1). */
#define FILE_TYPE "(sqsay)"
#define BODY_TYPE "(sua(yydday))"
#define PAIR_TYPE "(yydday)"

/* The flags a saved piece may carry. */
#define PIECE_FLAGS (SYNC_CONV_LOWER | SYNC_CONV_UPPER | SYNC_CONV_PIECE | SYNC_CONV_BREAK | SYNC_CONV_TAU_MASK)

/* same_pieces compares pieces as bytes: sync_conv has no padding. */
_Static_assert(sizeof(sync_conv) == 104, "sync_conv is compared with memcmp");

static void pair_free(gpointer data)
{
	history_store_pair *p = data;
	g_array_free(p->pieces, TRUE);
	g_free(p);
}

history_store *history_store_new(const char *owner, uint32_t node)
{
	history_store *s = g_new0(history_store, 1);
	s->owner = g_strdup(owner);
	s->node = node;
	s->pairs = g_ptr_array_new_with_free_func(pair_free);
	return s;
}

void history_store_free(history_store *s)
{
	if (!s)
		return;
	g_ptr_array_free(s->pairs, TRUE);
	g_free(s->owner);
	g_free(s);
}

void history_store_add(history_store *s, history_store_kind kind, sync_clock_id from, sync_clock_id to,
		       sync_fit_mode mode, double nominal, double unit_ns, const sync_conv *pieces, size_t n)
{
	if (!n)
		return;
	history_store_pair *p = g_new0(history_store_pair, 1);
	*p = (history_store_pair){kind, from, to, mode, nominal, unit_ns, g_array_sized_new(FALSE, FALSE, sizeof(sync_conv), (guint)n)};
	g_array_append_vals(p->pieces, pieces, (guint)n);
	g_ptr_array_add(s->pairs, p);
}

const char *history_store_owner(const history_store *s)
{
	return s->owner;
}

uint32_t history_store_node(const history_store *s)
{
	return s->node;
}

guint history_store_n_pairs(const history_store *s)
{
	return s->pairs->len;
}

const history_store_pair *history_store_pair_at(const history_store *s, guint i)
{
	return g_ptr_array_index(s->pairs, i);
}

size_t history_store_n_pieces(const history_store *s)
{
	size_t n = 0;
	for (guint i = 0; i < s->pairs->len; i++)
		n += history_store_pair_at(s, i)->pieces->len;
	return n;
}

/* A piece as same_pieces compares it: without its q2 and the q2's span. */
static sync_conv sans_q2(sync_conv c)
{
	c.wander = 0;
	c.flags &= ~SYNC_CONV_TAU_MASK;
	return c;
}

gboolean history_store_same_pieces(const history_store *a, const history_store *b)
{
	guint na = a ? a->pairs->len : 0, nb = b ? b->pairs->len : 0;
	if (na != nb)
		return FALSE;
	for (guint i = 0; i < na; i++) {
		const history_store_pair *p = history_store_pair_at(a, i), *q = history_store_pair_at(b, i);
		if (p->kind != q->kind || !sync_clock_equal(p->from, q->from) || !sync_clock_equal(p->to, q->to) ||
		    p->mode != q->mode || p->nominal != q->nominal || p->unit_ns != q->unit_ns ||
		    p->pieces->len != q->pieces->len)
			return FALSE;
		for (guint k = 0; k < p->pieces->len; k++) {
			sync_conv x = sans_q2(g_array_index(p->pieces, sync_conv, k));
			sync_conv y = sans_q2(g_array_index(q->pieces, sync_conv, k));
			if (memcmp(&x, &y, sizeof x))
				return FALSE;
		}
	}
	return TRUE;
}

/* v as it is stored: little-endian.  Takes the caller's reference (a
 * floating v is sunk) and returns one. */
static GVariant *little_endian(GVariant *v)
{
	g_variant_take_ref(v);
	if (G_BYTE_ORDER == G_LITTLE_ENDIAN)
		return v;
	GVariant *s = g_variant_ref_sink(g_variant_byteswap(v));
	g_variant_unref(v);
	return s;
}

/* A pair's pieces as a one-part ticker (new bytes). */
static GVariant *pieces_ticker(const history_store *s, const history_store_pair *p)
{
	size_t n = p->pieces->len, size = sync_ticker_size(n);
	sync_ticker_entry *e = g_new(sync_ticker_entry, n);
	for (size_t i = 0; i < n; i++)
		e[i] = (sync_ticker_entry){p->from, p->to, g_array_index(p->pieces, sync_conv, i)};
	sync_ticker_head h = {s->node, SYNC_TICKER_NO_ROOT, 0, n};
	uint8_t *buf = g_malloc(size);
	sync_ticker_pack(&h, e, buf);
	g_free(e);
	return g_variant_new_from_data(G_VARIANT_TYPE_BYTESTRING, buf, size, TRUE, g_free, buf);
}

GBytes *history_store_pack(const history_store *s, char *why, size_t len)
{
	if (s->pairs->len > HISTORY_STORE_MAX_PAIRS) {
		g_snprintf(why, len, "%u pairs, more than the %u a history file holds", s->pairs->len,
			   (unsigned)HISTORY_STORE_MAX_PAIRS);
		return NULL;
	}
	size_t bytes = 0;
	for (guint i = 0; i < s->pairs->len; i++) {
		const history_store_pair *p = history_store_pair_at(s, i);
		if (p->pieces->len > HISTORY_STORE_MAX_PIECES) {
			g_snprintf(why, len, "a pair of %u pieces, more than the %d a history file holds", p->pieces->len,
				   HISTORY_STORE_MAX_PIECES);
			return NULL;
		}
		bytes += sync_ticker_size(p->pieces->len) + 32;
	}
	if (bytes > HISTORY_STORE_MAX_BYTES) {
		g_snprintf(why, len, "%zu bytes of pieces, more than the %u a history file holds", bytes,
			   HISTORY_STORE_MAX_BYTES);
		return NULL;
	}
	GVariantBuilder pb;
	g_variant_builder_init(&pb, G_VARIANT_TYPE("a" PAIR_TYPE));
	for (guint i = 0; i < s->pairs->len; i++) {
		const history_store_pair *p = history_store_pair_at(s, i);
		g_variant_builder_add_value(&pb, g_variant_new("(yydd@ay)", (guchar)p->kind, (guchar)p->mode, p->nominal,
							       p->unit_ns, pieces_ticker(s, p)));
	}
	GVariant *body = little_endian(g_variant_new("(su@a" PAIR_TYPE ")", s->owner, s->node, g_variant_builder_end(&pb)));
	GBytes *bb = g_variant_get_data_as_bytes(body);
	GBytes *out = history_store_frame(HISTORY_STORE_MAGIC, HISTORY_STORE_VERSION, bb);
	g_bytes_unref(bb);
	g_variant_unref(body);
	return out;
}

GBytes *history_store_frame(const char *magic, guint16 version, GBytes *body)
{
	char *sum = g_compute_checksum_for_bytes(G_CHECKSUM_SHA256, body);
	GVariant *file = little_endian(
		g_variant_new("(sqs@ay)", magic, version, sum, g_variant_new_from_bytes(G_VARIANT_TYPE_BYTESTRING, body, TRUE)));
	GBytes *out = g_variant_get_data_as_bytes(file);
	g_variant_unref(file);
	g_free(sum);
	return out;
}

/* len bytes at data as a GVariant of `type`, checked to be in normal form
 * (every offset and size consistent: nothing truncated or corrupt in its
 * framing) and in host order.  NULL when it is not. */
static GVariant *parse(const char *type, const void *data, size_t len)
{
	GBytes *b = g_bytes_new(data, len); /* a copy: aligned for the doubles */
	GVariant *v = g_variant_ref_sink(g_variant_new_from_bytes(G_VARIANT_TYPE(type), b, FALSE));
	g_bytes_unref(b);
	if (!g_variant_is_normal_form(v)) {
		g_variant_unref(v);
		return NULL;
	}
	return little_endian(v); /* the same swap reads it back */
}

/* Pair i (its values and pieces as a ticker) checked into a new record;
 * NULL with the reason in why[len]. */
static history_store_pair *unpack_pair(uint32_t node, guint i, guchar kind, guchar mode, double nominal,
				       double unit_ns, const uint8_t *buf, size_t blen, char *why, size_t len)
{
	const char *r = NULL;
	sync_ticker_head h;
	if (kind != HISTORY_STORE_LOCAL && kind != HISTORY_STORE_RBS)
		r = "its kind is neither local (1) nor rbs (2)";
	else if (mode != SYNC_FIT_MEAN && mode != SYNC_FIT_LOWER && mode != SYNC_FIT_UPPER)
		r = "its fit mode is not mean, lower or upper";
	else if (!isfinite(nominal) || !(nominal >= 0))
		r = "its nominal slope is not a finite number >= 0";
	else if (!isfinite(unit_ns) || !(unit_ns > 0))
		r = "its ns per unit of x is not a finite number > 0";
	else if (sync_ticker_unpack_head(buf, blen, &h, &r) < 0)
		; /* r says why */
	else if (h.count < 1 || h.count > HISTORY_STORE_MAX_PIECES)
		r = "it holds no piece, or more than 256";
	else if (h.node != node)
		r = "its pieces name another node";
	if (r) {
		g_snprintf(why, len, "pair %u: %s", i, r);
		return NULL;
	}
	history_store_pair *p = g_new0(history_store_pair, 1);
	p->kind = kind;
	p->mode = mode;
	p->nominal = nominal;
	p->unit_ns = unit_ns;
	p->pieces = g_array_sized_new(FALSE, FALSE, sizeof(sync_conv), (guint)h.count);
	char a[SYNC_CLOCK_NAME_MAX], b[SYNC_CLOCK_NAME_MAX];
	for (size_t k = 0; k < h.count; k++) {
		sync_ticker_entry e;
		const sync_conv *c = &e.conv;
		if (sync_ticker_unpack_entry(buf, k, &e, &r) < 0) {
			/* r says why */
		} else if (k == 0) {
			p->from = e.from;
			p->to = e.to;
			if (sync_clock_equal(e.from, e.to) || e.from.kind == SYNC_KIND_GLOBAL || e.to.kind == SYNC_KIND_GLOBAL ||
			    e.from.kind == SYNC_KIND_UTC || e.to.kind == SYNC_KIND_UTC)
				r = "its clocks are the same, global or utc: no pair syncd fits";
			else if (kind == HISTORY_STORE_RBS &&
				 (!sync_clock_equal(e.from, sync_clock_cpu(node)) || e.to.kind != SYNC_KIND_CPU))
				r = "an RBS pair is this node's cpu -> another node's cpu";
		} else if (!sync_clock_equal(e.from, p->from) || !sync_clock_equal(e.to, p->to)) {
			r = "its pieces name different clocks";
		}
		if (!r && ((c->flags & ~(uint32_t)PIECE_FLAGS) || !(c->flags & SYNC_CONV_PIECE) ||
			   (c->flags & SYNC_CONV_LOWER && c->flags & SYNC_CONV_UPPER)))
			r = "flags other than a piece's (PIECE, BREAK, LOWER or UPPER, the q2's span)";
		else if (!r && (c->n < 3 || !(c->slope > 0)))
			r = "a piece rests on fewer than 3 observations, or its slope is not > 0";
		else if (!r && k && c->xmin < g_array_index(p->pieces, sync_conv, k - 1).xmax)
			r = "a piece begins before the end of the one before";
		if (r) {
			g_snprintf(why, len, "pair %u (%s -> %s), piece %zu: %s", i, sync_clock_format(p->from, a, sizeof a),
				   sync_clock_format(p->to, b, sizeof b), k, r);
			pair_free(p);
			return NULL;
		}
		g_array_append_val(p->pieces, e.conv);
	}
	return p;
}

int history_store_unpack(const void *data, size_t len, const char *owner, uint32_t node, history_store **out,
			 char *why, size_t wlen)
{
	if (!len) {
		g_snprintf(why, wlen, "empty (not a syncd history file)");
		return -EBADMSG;
	}
	if (len > HISTORY_STORE_MAX_BYTES) {
		g_snprintf(why, wlen, "%zu bytes, more than the %u a history file holds", len, HISTORY_STORE_MAX_BYTES);
		return -EBADMSG;
	}
	GVariant *file = parse(FILE_TYPE, data, len);
	if (!file) {
		g_snprintf(why, wlen, "not a syncd history file, or truncated (its encoding is malformed)");
		return -EBADMSG;
	}
	const char *magic, *sum;
	guint16 version;
	GVariant *bv;
	g_variant_get(file, "(&sq&s@ay)", &magic, &version, &sum, &bv);
	int rc = 0;
	GVariant *body = NULL, *pairs = NULL;
	history_store *s = NULL;
	gsize blen;
	const uint8_t *bd = g_variant_get_fixed_array(bv, &blen, 1);
	char *want = NULL;
	if (strcmp(magic, HISTORY_STORE_MAGIC)) {
		g_snprintf(why, wlen, "not a syncd history file (it begins \"%.40s\")", magic);
		rc = -EBADMSG;
	} else if (version != HISTORY_STORE_VERSION) {
		g_snprintf(why, wlen, "a history file of version %u; this syncd reads version %d", version,
			   HISTORY_STORE_VERSION);
		rc = -EPROTONOSUPPORT;
	} else if (strcmp(sum, (want = g_compute_checksum_for_data(G_CHECKSUM_SHA256, bd, blen)))) {
		g_snprintf(why, wlen, "corrupt: its checksum does not match its contents");
		rc = -EBADMSG;
	} else if (!(body = parse(BODY_TYPE, bd, blen))) {
		g_snprintf(why, wlen, "corrupt: its body's encoding is malformed");
		rc = -EBADMSG;
	}
	const char *own = NULL;
	guint32 nd = 0;
	if (!rc) {
		g_variant_get(body, "(&su@a" PAIR_TYPE ")", &own, &nd, &pairs);
		if (strcmp(own, owner)) {
			g_snprintf(why, wlen, "written in another boot (%.80s; this is %.80s): its pieces name other instants",
				   own, owner);
			rc = -ESTALE;
		} else if (nd != node) {
			g_snprintf(why, wlen, "written by node%u, this is node%u", nd, node);
			rc = -EXDEV;
		} else if (g_variant_n_children(pairs) > HISTORY_STORE_MAX_PAIRS) {
			g_snprintf(why, wlen, "%zu pairs, more than the %u a history file holds", g_variant_n_children(pairs),
				   (unsigned)HISTORY_STORE_MAX_PAIRS);
			rc = -EBADMSG;
		}
	}
	if (!rc) {
		s = history_store_new(owner, node);
		for (gsize i = 0; i < g_variant_n_children(pairs) && !rc; i++) {
			guchar kind, mode;
			double nominal, unit;
			GVariant *tv;
			g_variant_get_child(pairs, i, "(yydd@ay)", &kind, &mode, &nominal, &unit, &tv);
			gsize tlen;
			const uint8_t *td = g_variant_get_fixed_array(tv, &tlen, 1);
			history_store_pair *p = unpack_pair(node, (guint)i, kind, mode, nominal, unit, td, tlen, why, wlen);
			if (p)
				g_ptr_array_add(s->pairs, p);
			else
				rc = -EBADMSG;
			g_variant_unref(tv);
		}
	}
	if (rc) {
		history_store_free(s);
	} else {
		*out = s;
	}
	if (pairs)
		g_variant_unref(pairs);
	if (body)
		g_variant_unref(body);
	g_free(want);
	g_variant_unref(bv);
	g_variant_unref(file);
	return rc;
}
