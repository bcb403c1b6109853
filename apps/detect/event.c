/* event.c — detection event text codec (see event.h). */
#include "apps/detect/event.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int num(const char *k, const char *v, double *out, char *why, size_t wlen);

void det_event_format(const det_event *e, GString *out)
{
	char b[6][G_ASCII_DTOSTR_BUF_SIZE];
	g_string_append_printf(out, "v=1 node=%u dev=%u seq=%" G_GUINT64_FORMAT " profile=%s onset_frame=%s onset_se=%s rate=%s"
				    " cpu_ns=%" G_GINT64_FORMAT " cpu_se_ns=%s",
			       e->node, e->dev, e->seq, e->profile[0] ? e->profile : "-",
			       g_ascii_formatd(b[0], sizeof b[0], "%.4f", e->onset_frame),
			       g_ascii_formatd(b[1], sizeof b[1], "%.4g", e->onset_se),
			       g_ascii_formatd(b[2], sizeof b[2], "%.6g", e->rate_hz), e->cpu_ns,
			       g_ascii_formatd(b[3], sizeof b[3], "%.4g", e->cpu_se_ns));
	if (e->has_global)
		g_string_append_printf(out, " global_ns=%" G_GINT64_FORMAT " global_se_ns=%s", e->global_ns,
				       g_ascii_formatd(b[4], sizeof b[4], "%.4g", e->global_se_ns));
	else
		g_string_append(out, " global_ns=none");
	g_string_append_printf(out, " duration_s=%s f_lo=%.0f f_hi=%.0f snr_db=%.1f enr_db=%.1f template=%d",
			       g_ascii_formatd(b[5], sizeof b[5], "%.4f", e->duration_s), e->f_lo_hz, e->f_hi_hz, e->snr_db,
			       e->enr_db, e->template_id);
	if (e->onset_crb_se > 0 && e->onset_crb_se < e->onset_se)
		g_string_append_printf(out, " onset_crb_se=%s", g_ascii_formatd(b[5], sizeof b[5], "%.4g", e->onset_crb_se));
	if (e->call[0])
		g_string_append_printf(out, " call=%s", e->call);
	for (int i = 0; i < e->n_alt && i < DET_EVENT_ALT; i++)
		g_string_append_printf(out, "%s%s", i ? "," : " onset_alt=",
				       g_ascii_formatd(b[0], sizeof b[0], "%.2f", e->onset_alt[i]));
}

/* onset_alt's comma-separated list into e. */
static int alts(const char *v, det_event *e, char *why, size_t wlen)
{
	gchar **p = g_strsplit(v, ",", -1);
	int rc = 0, n = (int)g_strv_length(p);
	if (n > DET_EVENT_ALT) {
		g_snprintf(why, wlen, "onset_alt: %d alternatives (at most %d)", n, DET_EVENT_ALT);
		rc = -EINVAL;
	}
	for (int i = 0; !rc && i < n; i++)
		rc = num("onset_alt", p[i], &e->onset_alt[i], why, wlen);
	e->n_alt = rc ? 0 : n;
	g_strfreev(p);
	return rc;
}

static int num(const char *k, const char *v, double *out, char *why, size_t wlen)
{
	char *end;
	double x = g_ascii_strtod(v, &end);
	if (end == v || *end || !isfinite(x)) {
		g_snprintf(why, wlen, "%s: \"%s\" is not a number", k, v);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static int inum(const char *k, const char *v, int64_t *out, char *why, size_t wlen)
{
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (end == v || *end || errno) {
		g_snprintf(why, wlen, "%s: \"%s\" is not an integer", k, v);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

int det_event_parse(const char *text, size_t len, det_event *e, char *why, size_t wlen)
{
	memset(e, 0, sizeof *e);
	char *t = g_strndup(text, len);
	gchar **tok = g_strsplit_set(t, " \t\r\n", -1);
	g_free(t);
	unsigned seen = 0; /* bits: v node onset_frame rate cpu_ns global global_se */
	int rc = 0;
	for (gchar **p = tok; *p && !rc; p++) {
		if (!**p)
			continue;
		char *eq = strchr(*p, '=');
		if (!eq) {
			g_snprintf(why, wlen, "\"%s\" is not key=value", *p);
			rc = -EINVAL;
			break;
		}
		*eq = 0;
		const char *k = *p, *v = eq + 1;
		int64_t i;
		if (!strcmp(k, "v")) {
			if ((rc = inum(k, v, &i, why, wlen)) == 0 && i != 1) {
				g_snprintf(why, wlen, "event version %s is not 1", v);
				rc = -EINVAL;
			}
			seen |= 1;
		} else if (!strcmp(k, "node")) {
			if ((rc = inum(k, v, &i, why, wlen)) == 0 && (i < 0 || i > UINT32_MAX)) {
				g_snprintf(why, wlen, "node %s out of range", v);
				rc = -EINVAL;
			}
			e->node = (uint32_t)i;
			seen |= 2;
		} else if (!strcmp(k, "dev")) {
			if ((rc = inum(k, v, &i, why, wlen)) == 0 && (i < 0 || i > 255)) {
				g_snprintf(why, wlen, "dev %s out of range 0..255", v);
				rc = -EINVAL;
			}
			e->dev = (uint32_t)i;
		} else if (!strcmp(k, "seq")) {
			if ((rc = inum(k, v, &i, why, wlen)) == 0 && i < 0) {
				g_snprintf(why, wlen, "seq %s is negative", v);
				rc = -EINVAL;
			}
			e->seq = (uint64_t)i;
		} else if (!strcmp(k, "profile")) {
			g_strlcpy(e->profile, v, sizeof e->profile);
		} else if (!strcmp(k, "onset_frame")) {
			rc = num(k, v, &e->onset_frame, why, wlen);
			seen |= 4;
		} else if (!strcmp(k, "onset_se")) {
			rc = num(k, v, &e->onset_se, why, wlen);
		} else if (!strcmp(k, "onset_crb_se")) {
			rc = num(k, v, &e->onset_crb_se, why, wlen);
			if (!rc && !(e->onset_crb_se >= 0)) {
				g_snprintf(why, wlen, "onset_crb_se %s is negative", v);
				rc = -EINVAL;
			}
		} else if (!strcmp(k, "rate")) {
			rc = num(k, v, &e->rate_hz, why, wlen);
			if (!rc && !(e->rate_hz > 0)) {
				g_snprintf(why, wlen, "rate %s is not positive", v);
				rc = -EINVAL;
			}
			seen |= 8;
		} else if (!strcmp(k, "cpu_ns")) {
			rc = inum(k, v, &e->cpu_ns, why, wlen);
			seen |= 16;
		} else if (!strcmp(k, "cpu_se_ns")) {
			rc = num(k, v, &e->cpu_se_ns, why, wlen);
		} else if (!strcmp(k, "global_ns")) {
			if (strcmp(v, "none")) {
				rc = inum(k, v, &e->global_ns, why, wlen);
				e->has_global = TRUE;
			}
			seen |= 32;
		} else if (!strcmp(k, "global_se_ns")) {
			rc = num(k, v, &e->global_se_ns, why, wlen);
			seen |= 64;
		} else if (!strcmp(k, "duration_s")) {
			rc = num(k, v, &e->duration_s, why, wlen);
		} else if (!strcmp(k, "f_lo")) {
			rc = num(k, v, &e->f_lo_hz, why, wlen);
		} else if (!strcmp(k, "f_hi")) {
			rc = num(k, v, &e->f_hi_hz, why, wlen);
		} else if (!strcmp(k, "snr_db")) {
			rc = num(k, v, &e->snr_db, why, wlen);
		} else if (!strcmp(k, "enr_db")) {
			rc = num(k, v, &e->enr_db, why, wlen);
		} else if (!strcmp(k, "call")) {
			if (strlen(v) >= sizeof e->call) {
				g_snprintf(why, wlen, "call: a call type's name is at most %zu characters", sizeof e->call - 1);
				rc = -EINVAL;
				break;
			}
			g_strlcpy(e->call, v, sizeof e->call);
		} else if (!strcmp(k, "onset_alt")) {
			rc = alts(v, e, why, wlen);
		} else if (!strcmp(k, "template")) {
			if ((rc = inum(k, v, &i, why, wlen)) == 0 && (i < 0 || i > 65535)) {
				g_snprintf(why, wlen, "template %s out of range 0..65535", v);
				rc = -EINVAL;
			}
			e->template_id = (int)i;
		}
	}
	g_strfreev(tok);
	if (!rc && (seen & 63) != 63) {
		g_snprintf(why, wlen, "event lacks %s", !(seen & 1) ? "v" : !(seen & 2) ? "node"
								    : !(seen & 4)       ? "onset_frame"
								    : !(seen & 8)       ? "rate"
								    : !(seen & 16)      ? "cpu_ns"
											: "global_ns");
		rc = -EINVAL;
	}
	if (!rc && e->has_global && (!(seen & 64) || !(e->global_se_ns > 0))) {
		g_snprintf(why, wlen, "global_se_ns missing or not > 0 (no conversion is exact)");
		rc = -EINVAL;
	}
	/* Without it (an older detect), or beyond the whole: the whole. */
	if (!rc && !(e->onset_crb_se > 0 && e->onset_crb_se <= e->onset_se))
		e->onset_crb_se = e->onset_se;
	if (!rc)
		rc = det_event_check(e, why, wlen);
	return rc;
}

gboolean det_call_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 31)
		return FALSE;
	for (size_t i = 0; i < n; i++)
		if (!g_ascii_isalnum(s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
			return FALSE;
	return TRUE;
}

/* Far beyond any real value, yet far from int64's ends (no sum overflows). */
#define T_MAX_NS ((int64_t)1 << 62)

int det_event_check(const det_event *e, char *why, size_t wlen)
{
	const char *bad = NULL;
	if (e->node == UINT32_MAX)
		bad = "node 4294967295 is the wire's \"no node\"";
	else if (e->dev > 255)
		bad = "dev beyond 255";
	else if (!(e->rate_hz >= 1000 && e->rate_hz <= 1e6))
		bad = "rate outside 1000..1000000 Hz";
	else if (!(e->onset_frame >= 0) || e->onset_frame > 1e18)
		bad = "onset_frame negative or beyond 1e18";
	else if (!(e->onset_se >= 0) || e->onset_se > e->rate_hz * 3600)
		bad = "onset_se negative or beyond an hour";
	else if (e->cpu_ns <= 0 || e->cpu_ns > T_MAX_NS)
		bad = "cpu_ns not in 1..2^62";
	else if (!(e->cpu_se_ns >= 0) || e->cpu_se_ns > 3.6e12)
		bad = "cpu_se_ns negative or beyond an hour";
	else if (e->has_global && (e->global_ns <= 0 || e->global_ns > T_MAX_NS))
		bad = "global_ns not in 1..2^62";
	else if (e->has_global && e->global_se_ns > 3.6e12)
		bad = "global_se_ns beyond an hour";
	else if (!(e->duration_s >= 0) || e->duration_s > 3600)
		bad = "duration_s negative or beyond an hour";
	else if (!(e->f_lo_hz >= 0) || e->f_hi_hz < e->f_lo_hz || e->f_hi_hz > e->rate_hz)
		bad = "band not 0 <= f_lo <= f_hi <= rate";
	else if (e->template_id < 0 || e->template_id > 65535)
		bad = "template outside 0..65535";
	else if (e->call[0] && !det_call_name_ok(e->call))
		bad = "call not a call type's name (1-31 of A-Z a-z 0-9 _ . -)";
	else if (e->n_alt < 0 || e->n_alt > DET_EVENT_ALT)
		bad = "more than DET_EVENT_ALT alternative onsets";
	for (int i = 0; !bad && i < e->n_alt; i++)
		if (!(fabs(e->onset_alt[i]) <= e->rate_hz * 3600))
			bad = "an alternative onset beyond an hour";
	if (!bad)
		return 0;
	g_snprintf(why, wlen, "%s", bad);
	return -EINVAL;
}

double det_event_global_crb_se_ns(const det_event *e)
{
	double fr = 1e9 / e->rate_hz, whole = e->onset_se * fr, crb = (e->onset_crb_se > 0 ? e->onset_crb_se : e->onset_se) * fr;
	return sqrt(fmax(0.0, e->global_se_ns * e->global_se_ns - whole * whole) + crb * crb);
}
