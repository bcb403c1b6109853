/* fuzz_ticker.c — libFuzzer target over the binary ticker in parts
 * (libsync/ticker_wire.h, ticker_asm.h; issue 17's wire version 2): the
 * input is a sequence of parts, each prefixed by its length (2 bytes, little
 * endian), fed to one assembler as sync/ticker and sync/ticker-part would
 * hand them to a client; the first part is also read as a request.
 * Beyond "no crash, no sanitizer report": the assembler never wants an
 * entry past the snapshot's total, a complete snapshot holds its total
 * less the skipped entries, and what it holds loads into a conversion
 * graph whose conversions are finite.  With LLVMFuzzerInitialize the seed
 * corpus is written when FUZZ_TICKER_SEEDS names a directory. */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libsync/graph.h"
#include "libsync/ticker_asm.h"
#include "libsync/ticker_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static void check_complete(const sync_ticker_asm *a)
{
	size_t n = 0;
	const sync_ticker_entry *e = sync_ticker_asm_entries(a, &n);
	const char *why;
	assert(n + sync_ticker_asm_skipped(a, &why) == sync_ticker_asm_head(a)->count);
	sync_graph_params gp;
	sync_graph_params_default(&gp);
	sync_graph *g = sync_graph_new(&gp);
	char w[200];
	size_t skipped = 0;
	int loaded = sync_ticker_entries_to_graph(e, n, g, &skipped, w, sizeof w);
	assert(loaded >= 0 && (size_t)loaded + skipped == n);
	for (size_t i = 0; i < n && i < 8; i++) {
		sync_graph_result r;
		if (sync_graph_convert(g, e[i].from, e[i].to, sync_tval_of(e[i].conv.x0), e[i].conv.updated_ns, &r, w,
				       sizeof w) == 0)
			assert(isfinite(r.value.f) && !(r.var < 0));
	}
	sync_graph_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sync_ticker_asm *a = sync_ticker_asm_new();
	char why[200];
	int first = 1;
	while (size >= 2) {
		size_t len = (size_t)data[0] | (size_t)data[1] << 8;
		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		if (first) {
			sync_ticker_req q;
			const char *w;
			int rq = sync_ticker_unpack_req(data, len, &q, &w);
			assert(rq == 0 || rq == -EBADMSG || rq == -EMSGSIZE);
			first = 0;
		}
		int rc = sync_ticker_asm_add(a, data, len, why, sizeof why);
		assert(rc == 0 || rc == 1 || rc == -EBADMSG || rc == -EMSGSIZE || rc == -ESTALE || rc == -EPROTO);
		if (sync_ticker_asm_epoch(a))
			assert(sync_ticker_asm_next(a) <= sync_ticker_asm_head(a)->count);
		if (rc == 1) {
			assert(sync_ticker_asm_complete(a));
			check_complete(a);
		}
		data += len;
		size -= len;
	}
	sync_ticker_asm_free(a);
	return 0;
}

/* A well-formed snapshot of `total` entries in parts of `per`, epoch 7. */
static void write_seed(const char *dir, const char *name, size_t total, size_t per)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	for (size_t at = 0; at < total; at += per) {
		size_t n = total - at < per ? total - at : per;
		sync_ticker_part p = {.head = {.node = 2, .root = 1, .now_ns = 5000000000LL, .count = total}, .epoch = 7, .first = at, .n = n};
		size_t bytes = sync_ticker_part_size(n);
		uint8_t *buf = calloc(1, bytes);
		sync_ticker_pack_part_head(&p, buf);
		for (size_t i = 0; i < n; i++) {
			sync_ticker_entry e = {.from = sync_clock_cpu((uint32_t)(at + i + 2)), .to = sync_clock_cpu(1)};
			e.conv = sync_conv_fixed(1000, 2000, 1.0000125);
			e.conv.flags = 0;
			e.conv.var_c = 4;
			e.conv.var_s = 1e-20;
			e.conv.xmin = 0;
			e.conv.xmax = 100000;
			e.conv.n = 32;
			e.conv.updated_ns = 5000000000LL;
			sync_ticker_pack_entry(&e, buf + bytes - (n - i) * SYNC_TICKER_ENTRY);
		}
		uint8_t lp[2] = {(uint8_t)(bytes & 0xff), (uint8_t)(bytes >> 8)};
		fwrite(lp, 1, 2, f);
		fwrite(buf, 1, bytes, f);
		free(buf);
	}
	fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("FUZZ_TICKER_SEEDS");
	if (dir && *dir) {
		write_seed(dir, "one-part", 3, 8);
		write_seed(dir, "three-parts", 7, 3);
	}
	return 0;
}
