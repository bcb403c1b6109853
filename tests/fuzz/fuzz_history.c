/* fuzz_history.c — libFuzzer target over syncd's history file
 * (syncd/history_store.h): what a restarted syncd reads from disk.  The
 * first byte of the input chooses how the rest is read: even, as the whole
 * file; odd, as the file's body, wrapped in the file's magic, version and
 * the body's right checksum (else the checksum would stop almost every
 * input before the body's parser).  Beyond "no crash, no sanitizer
 * report": the result is one of the documented codes, and a store that is
 * accepted holds only what the checks allow (1 to 256 pieces per pair,
 * each a piece with n >= 3 and slope > 0, in order) and packs into bytes
 * that read back to the same store and pack to the same bytes.  With
 * LLVMFuzzerInitialize the seed corpus is written when FUZZ_HISTORY_SEEDS
 * names a directory. */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "syncd/history_store.h"

#define OWNER "boot=e9051cfa-4230-4329-a932-047270a28cdb"
#define NODE 7

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* v in the file's byte order (little-endian); takes the reference. */
static GVariant *le(GVariant *v)
{
	g_variant_take_ref(v);
	if (G_BYTE_ORDER == G_LITTLE_ENDIAN)
		return v;
	GVariant *s = g_variant_ref_sink(g_variant_byteswap(v));
	g_variant_unref(v);
	return s;
}

/* A file around body bytes, with the right checksum. */
static GBytes *wrap(const uint8_t *body, size_t len)
{
	GBytes *bb = g_bytes_new(body, len);
	GBytes *out = history_store_frame(HISTORY_STORE_MAGIC, HISTORY_STORE_VERSION, bb);
	g_bytes_unref(bb);
	return out;
}

static void check_accepted(const history_store *s)
{
	for (guint i = 0; i < history_store_n_pairs(s); i++) {
		const history_store_pair *p = history_store_pair_at(s, i);
		assert(p->pieces->len >= 1 && p->pieces->len <= HISTORY_STORE_MAX_PIECES);
		for (guint k = 0; k < p->pieces->len; k++) {
			const sync_conv *c = &g_array_index(p->pieces, sync_conv, k);
			assert((c->flags & SYNC_CONV_PIECE) && !(c->flags & SYNC_CONV_FIXED));
			assert(c->n >= 3 && c->slope > 0);
			assert(!k || c->xmin >= g_array_index(p->pieces, sync_conv, k - 1).xmax);
		}
	}
	char why[300];
	GBytes *b = history_store_pack(s, why, sizeof why);
	assert(b);
	gsize len;
	const uint8_t *d = g_bytes_get_data(b, &len);
	history_store *t = NULL;
	assert(history_store_unpack(d, len, OWNER, NODE, &t, why, sizeof why) == 0);
	assert(history_store_same_pieces(s, t));
	GBytes *b2 = history_store_pack(t, why, sizeof why);
	assert(b2 && g_bytes_equal(b, b2));
	g_bytes_unref(b2);
	history_store_free(t);
	g_bytes_unref(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	GBytes *file = data[0] & 1 ? wrap(data + 1, size - 1) : g_bytes_new(data + 1, size - 1);
	gsize len;
	const uint8_t *d = g_bytes_get_data(file, &len);
	history_store *s = NULL;
	char why[300] = "";
	int rc = history_store_unpack(d, len, OWNER, NODE, &s, why, sizeof why);
	assert(rc == 0 || rc == -EBADMSG || rc == -EPROTONOSUPPORT || rc == -ESTALE || rc == -EXDEV);
	assert(rc == 0 ? s != NULL : (s == NULL && *why));
	if (s)
		check_accepted(s);
	history_store_free(s);
	g_bytes_unref(file);
	return 0;
}

/* A store of a local pair and an RBS pair, three pieces each. */
static history_store *seed_store(void)
{
	history_store *s = history_store_new(OWNER, NODE);
	sync_conv p[3];
	for (int i = 0; i < 3; i++)
		p[i] = (sync_conv){.x0 = 1000000000000LL + i * 300000000000LL,
				   .y0 = 1700000000000000000LL,
				   .slope = 1.0000125,
				   .var_c = 4,
				   .var_s = 1e-22,
				   .rms = 2,
				   .wander = 3e-18,
				   .xmin = 1000000000000LL + i * 300000000000LL - 30000000000LL,
				   .xmax = 1000000000000LL + i * 300000000000LL + 30000000000LL,
				   .updated_ns = 1000000000000LL + i * 300000000000LL + 30000000000LL,
				   .n = 64,
				   .flags = SYNC_CONV_PIECE | (i == 1 ? SYNC_CONV_BREAK : 0) | (5u << SYNC_CONV_TAU_SHIFT)};
	history_store_add(s, HISTORY_STORE_LOCAL, sync_clock_cpu(NODE), sync_clock_realtime(NODE), SYNC_FIT_MEAN, 1.0,
			  1.0, p, 3);
	history_store_add(s, HISTORY_STORE_RBS, sync_clock_cpu(NODE), sync_clock_cpu(3), SYNC_FIT_MEAN, 1.0, 1.0, p, 3);
	return s;
}

static void write_seed(const char *dir, const char *name, uint8_t mode, const uint8_t *d, size_t len)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(&mode, 1, 1, f);
	fwrite(d, 1, len, f);
	fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("FUZZ_HISTORY_SEEDS");
	if (!dir || !*dir)
		return 0;
	history_store *s = seed_store();
	char why[300];
	GBytes *b = history_store_pack(s, why, sizeof why);
	gsize len;
	const uint8_t *d = g_bytes_get_data(b, &len);
	write_seed(dir, "file", 0, d, len);
	/* The body alone: the file's fourth member. */
	GBytes *copy = g_bytes_new(d, len);
	GVariant *f = le(g_variant_new_from_bytes(G_VARIANT_TYPE("(sqsay)"), copy, FALSE));
	GVariant *body = g_variant_get_child_value(f, 3);
	gsize blen;
	const uint8_t *bd = g_variant_get_fixed_array(body, &blen, 1);
	write_seed(dir, "body", 1, bd, blen);
	g_variant_unref(body);
	g_variant_unref(f);
	g_bytes_unref(copy);
	g_bytes_unref(b);
	history_store_free(s);
	return 0;
}
