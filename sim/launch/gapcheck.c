/* gapcheck.c — explaining the audio gaps a client saw (gapcheck.h). */
#include "sim/launch/gapcheck.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static gboolean overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	return a0 < b1 && b0 < a1;
}

csim_gap_verdict csim_gap_judge(const csim_gap *g, double rate_hz, const csim_overrun *ov, size_t n_ov,
				const csim_downtime *dt, size_t n_dt)
{
	if (g->kind == CSIM_GAP_SILENT)
		return CSIM_GAP_UNEXPLAINED;
	if (g->kind == CSIM_GAP_DECLARED)
		for (size_t i = 0; i < n_ov; i++)
			if (ov[i].node == g->node && overlaps(g->from, g->to, ov[i].from, ov[i].to))
				return CSIM_GAP_BY_OVERRUN;
	double len_s = g->kind == CSIM_GAP_DECLARED && rate_hz > 0 && g->to > g->from ? (double)(g->to - g->from) / rate_hz : 0;
	for (size_t i = 0; i < n_dt; i++)
		if (dt[i].node == g->node && dt[i].from_s <= g->t_s && dt[i].to_s >= g->t_s - CSIM_GAP_SETTLE_S - len_s)
			return CSIM_GAP_BY_DOWNTIME;
	return CSIM_GAP_UNEXPLAINED;
}

const char *csim_gap_verdict_name(csim_gap_verdict v)
{
	switch (v) {
	case CSIM_GAP_BY_OVERRUN:
		return "overrun";
	case CSIM_GAP_BY_DOWNTIME:
		return "downtime";
	default:
		return "UNEXPLAINED";
	}
}

const char *csim_gap_kind_name(csim_gap_kind k)
{
	switch (k) {
	case CSIM_GAP_DECLARED:
		return "declared";
	case CSIM_GAP_SILENT:
		return "silent";
	default:
		return "backwards";
	}
}

gboolean csim_gap_parse_overrun(const char *line, int64_t *from, int64_t *to)
{
	const char *p = strstr(line, ": overrun, frames [");
	if (!p)
		return FALSE;
	int64_t a, b;
	int used = 0;
	if (sscanf(p, ": overrun, frames [%" SCNd64 ", %" SCNd64 ") lost%n", &a, &b, &used) != 2 || used == 0 || b < a)
		return FALSE;
	*from = a;
	*to = b;
	return TRUE;
}
