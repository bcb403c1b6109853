/* allow.c — the node numbers a syncd believes (see allow.h). */
#include "syncd/allow.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct syncd_allow {
	GArray *lo, *hi; /* guint32 ranges, in the order given */
};

static int number(const char *s, uint32_t *v)
{
	if (!g_ascii_isdigit(*s))
		return -1;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end || x >= UINT32_MAX) /* UINT32_MAX is the wire's "no node" */
		return -1;
	*v = (uint32_t)x;
	return 0;
}

int syncd_allow_parse(const char *text, syncd_allow **out, char *why, size_t len)
{
	*out = NULL;
	gchar **items = g_strsplit_set(text ? text : "", ", \t", -1);
	syncd_allow *a = g_new0(syncd_allow, 1);
	a->lo = g_array_new(FALSE, FALSE, sizeof(guint32));
	a->hi = g_array_new(FALSE, FALSE, sizeof(guint32));
	for (gchar **p = items; *p; p++) {
		if (!**p)
			continue;
		uint32_t lo, hi;
		char *dash = strchr(*p, '-');
		int bad;
		if (dash) {
			*dash = 0;
			bad = number(*p, &lo) < 0 || number(dash + 1, &hi) < 0;
			*dash = '-';
		} else {
			bad = number(*p, &lo) < 0;
			hi = lo;
		}
		if (bad || hi < lo) {
			snprintf(why, len, "\"%.40s\": %s", *p,
				 bad ? "expected a node number (0..4294967294) or a range N-M" : "the range ends below its start");
			g_strfreev(items);
			syncd_allow_free(a);
			return -EINVAL;
		}
		g_array_append_val(a->lo, lo);
		g_array_append_val(a->hi, hi);
	}
	g_strfreev(items);
	if (a->lo->len == 0) {
		syncd_allow_free(a);
		return 0;
	}
	*out = a;
	return 0;
}

void syncd_allow_free(syncd_allow *a)
{
	if (!a)
		return;
	g_array_free(a->lo, TRUE);
	g_array_free(a->hi, TRUE);
	g_free(a);
}

int syncd_allow_has(const syncd_allow *a, uint32_t node)
{
	if (!a)
		return 1;
	for (guint i = 0; i < a->lo->len; i++)
		if (node >= g_array_index(a->lo, guint32, i) && node <= g_array_index(a->hi, guint32, i))
			return 1;
	return 0;
}

char *syncd_allow_format(const syncd_allow *a)
{
	if (!a)
		return g_strdup("any");
	GString *s = g_string_new("");
	for (guint i = 0; i < a->lo->len; i++) {
		guint32 lo = g_array_index(a->lo, guint32, i), hi = g_array_index(a->hi, guint32, i);
		g_string_append_printf(s, "%s%u", i ? "," : "", lo);
		if (hi != lo)
			g_string_append_printf(s, "-%u", hi);
	}
	return g_string_free(s, FALSE);
}
