/* clockid.c — parse and print clock names (see clockid.h). */
#include "libsync/clockid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_uint(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (n == 0 || n > 10)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_kind(const char *s, sync_clock_id *id, const char **why)
{
	uint64_t idx;
	if (strcmp(s, "cpu") == 0) {
		id->kind = SYNC_KIND_CPU;
		return 0;
	}
	if (strcmp(s, "realtime") == 0) {
		id->kind = SYNC_KIND_REALTIME;
		return 0;
	}
	if (strncmp(s, "audio", 5) == 0) {
		if (parse_uint(s + 5, strlen(s + 5), UINT16_MAX, &idx) < 0) {
			*why = "audio clock needs a device index 0..65535 (audio0)";
			return -EINVAL;
		}
		id->kind = SYNC_KIND_AUDIO;
		id->index = (uint16_t)idx;
		return 0;
	}
	*why = "unknown clock kind (expected cpu, realtime, audio<k>, global or utc)";
	return -EINVAL;
}

int sync_clock_parse(const char *text, int64_t default_node, sync_clock_id *out, const char **why)
{
	const char *dummy;
	sync_clock_id id = {0, 0, 0};
	uint64_t node;
	if (!why)
		why = &dummy;
	if (!text || !*text) {
		*why = "empty clock name";
		return -EINVAL;
	}
	if (strcmp(text, "global") == 0) {
		*out = sync_clock_global();
		return 0;
	}
	if (strcmp(text, "utc") == 0) {
		*out = sync_clock_utc();
		return 0;
	}
	const char *colon = strchr(text, ':');
	if (!colon) {
		if (default_node < 0) {
			*why = "clock name needs a node (node3:cpu) or is 'global' or 'utc'";
			return -EINVAL;
		}
		id.node = (uint32_t)default_node;
		if (parse_kind(text, &id, why) < 0)
			return -EINVAL;
		*out = id;
		return 0;
	}
	if (strncmp(text, "node", 4) != 0 ||
	    parse_uint(text + 4, (size_t)(colon - text - 4), UINT32_MAX, &node) < 0) {
		*why = "node part must be node<N> with N a decimal number";
		return -EINVAL;
	}
	id.node = (uint32_t)node;
	if (parse_kind(colon + 1, &id, why) < 0)
		return -EINVAL;
	*out = id;
	return 0;
}

char *sync_clock_format(sync_clock_id id, char *buf, size_t len)
{
	switch (id.kind) {
	case SYNC_KIND_GLOBAL:
		snprintf(buf, len, "global");
		break;
	case SYNC_KIND_UTC:
		snprintf(buf, len, "utc");
		break;
	case SYNC_KIND_CPU:
		snprintf(buf, len, "node%u:cpu", id.node);
		break;
	case SYNC_KIND_REALTIME:
		snprintf(buf, len, "node%u:realtime", id.node);
		break;
	case SYNC_KIND_AUDIO:
		snprintf(buf, len, "node%u:audio%u", id.node, id.index);
		break;
	default:
		snprintf(buf, len, "node%u:kind%u.%u", id.node, id.kind, id.index);
	}
	return buf;
}

int sync_clock_equal(sync_clock_id a, sync_clock_id b)
{
	return a.node == b.node && a.kind == b.kind && a.index == b.index;
}

sync_clock_id sync_clock_cpu(uint32_t node) { return (sync_clock_id){node, SYNC_KIND_CPU, 0}; }
sync_clock_id sync_clock_realtime(uint32_t node) { return (sync_clock_id){node, SYNC_KIND_REALTIME, 0}; }
sync_clock_id sync_clock_audio(uint32_t node, uint16_t index) { return (sync_clock_id){node, SYNC_KIND_AUDIO, index}; }
sync_clock_id sync_clock_global(void) { return (sync_clock_id){0, SYNC_KIND_GLOBAL, 0}; }
sync_clock_id sync_clock_utc(void) { return (sync_clock_id){0, SYNC_KIND_UTC, 0}; }
