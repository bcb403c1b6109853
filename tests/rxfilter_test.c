/* rxfilter_test.c — a receive filter (syncd/rxfilter.h) for the loader's
 * test, built as shared objects by syncd/module.mk: it drops every packet
 * from one sender, moves the receive time of packets from another, and
 * counts what it saw; its describe() line shows the counters.
 *
 * Argument (CHORUS_RX_FILTER_ARG): "DROP SHIFT_NODE SHIFT_NS", e.g.
 * "3 4 1000000000" drops node 3's packets and moves node 4's by +1 s;
 * "refuse" makes open() fail with a reason.  Built with -DRXF_TEST_ABI=N
 * it declares ABI N; with -DRXF_TEST_NO_SYMBOL it exports no syncd_rxfilter.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncd/rxfilter.h"

#ifndef RXF_TEST_ABI
#define RXF_TEST_ABI SYNCD_RXFILTER_ABI
#endif

typedef struct {
	uint32_t self, drop, shift_node;
	long long shift_ns;
	unsigned long long kept, dropped, own, shifted;
} rxf_test;

static void *test_open(uint32_t self, const char *arg, char **why)
{
	rxf_test *t = calloc(1, sizeof *t);
	unsigned drop, shift_node;
	long long shift_ns;
	if (!t || !arg || sscanf(arg, "%u %u %lld", &drop, &shift_node, &shift_ns) != 3) {
		*why = strdup(arg && !strcmp(arg, "refuse") ? "refused on purpose" : "argument is not DROP SHIFT_NODE SHIFT_NS");
		free(t);
		return NULL;
	}
	t->self = self;
	t->drop = drop;
	t->shift_node = shift_node;
	t->shift_ns = shift_ns;
	return t;
}

static int test_deliver(void *h, uint32_t sender, int64_t *rx_ns)
{
	rxf_test *t = h;
	if (sender == t->self)
		t->own++;
	if (sender == t->drop) {
		t->dropped++;
		return 0;
	}
	if (sender == t->shift_node) {
		*rx_ns += t->shift_ns;
		t->shifted++;
	}
	t->kept++;
	return 1;
}

static void test_describe(void *h, char *buf, size_t len)
{
	const rxf_test *t = h;
	snprintf(buf, len, "test filter: node%u kept=%llu dropped=%llu own=%llu shifted=%llu", t->self, t->kept,
		 t->dropped, t->own, t->shifted);
}

static void test_close(void *h)
{
	free(h);
}

#ifndef RXF_TEST_NO_SYMBOL
const syncd_rxfilter_ops syncd_rxfilter = {
	.abi = RXF_TEST_ABI,
	.open = test_open,
	.deliver = test_deliver,
	.describe = test_describe,
	.close = test_close,
};
#else
/* Another name: the loader must say the symbol is missing. */
const syncd_rxfilter_ops syncd_rxfilter_misnamed = {
	.abi = RXF_TEST_ABI,
	.open = test_open,
	.deliver = test_deliver,
	.describe = test_describe,
	.close = test_close,
};
#endif
