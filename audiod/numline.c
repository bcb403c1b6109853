/* numline.c — audiod's own numbering line in the run directory (see
 * numline.h). */
#include "audiod/numline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "libdev/path.h"

struct numline {
	int k;            /* device index */
	unsigned rate_hz; /* frames/s */
	int64_t saved_ns; /* cpu time the line was last saved */
	gboolean warned;  /* a failed save was logged */
};

numline *numline_new(int k, unsigned rate_hz)
{
	numline *nl = g_new0(numline, 1);
	nl->k = k;
	nl->rate_hz = rate_hz;
	return nl;
}

void numline_free(numline *nl)
{
	g_free(nl);
}

/* The file in the run directory where the line of device k is kept.
 * Returns TRUE with the path in buf, FALSE when there is no run
 * directory's path for it. */
static gboolean line_path(int k, char *buf, size_t len)
{
	char name[32];
	const char *why;
	g_snprintf(name, sizeof name, "audio%d.numbering", k);
	return dev_path(name, buf, len, &why) == 0;
}

/* Whose line a file holds: this boot, this node's (simulated) cpu clock,
 * the simulated world's epoch (a test's next world reuses the clock's
 * name) and device k, as "boot=… clock=… world=… dev=K" with one word per
 * field.  Returns a new string (g_free). */
static char *line_owner(int k)
{
	char *boot = NULL;
	if (g_file_get_contents("/proc/sys/kernel/random/boot_id", &boot, NULL, NULL))
		g_strstrip(boot);
	const char *clk = g_getenv("CHORUS_SIM_CLOCK"), *world = g_getenv("CHORUS_SIM_EPOCH_NS");
	char *who = g_strdup_printf("boot=%s clock=%s world=%s dev=%d", boot ? boot : "-", clk && *clk ? clk : "-",
				    world && *world ? world : "-", k);
	g_free(boot);
	g_strdelimit(who + 5, " \n", '_'); /* one word per field */
	return who;
}

/* The file's first line for this owner and rate.  Returns a new string. */
static char *line_head(const numline *nl)
{
	char *who = line_owner(nl->k);
	char *head = g_strdup_printf("chorus-audiod-numbering 1 rate=%u %s", nl->rate_hz, who);
	g_free(who);
	return head;
}

/* NUMLINE_POINTS (cpu, frame) points of the line that holds now, a quarter
 * second apart up to the frame `newest`, from th's current fit.  Returns
 * FALSE when th has no fit yet. */
static gboolean line_points(const numline *nl, const timehist *th, int64_t newest, int64_t *cpu, int64_t *frame)
{
	sync_conv c;
	if (timehist_current(th, &c) < 0)
		return FALSE;
	for (int i = 0; i < NUMLINE_POINTS; i++) {
		frame[i] = newest - (int64_t)(NUMLINE_POINTS - 1 - i) * nl->rate_hz / 4;
		sync_tval y = sync_conv_apply(&c, sync_tval_of(frame[i]));
		cpu[i] = y.i + (int64_t)llround(y.f);
	}
	return TRUE;
}

gboolean numline_save(numline *nl, int64_t now, int64_t newest, const timehist *th)
{
	int64_t cpu[NUMLINE_POINTS], frame[NUMLINE_POINTS];
	char path[DEV_PATH_MAX];
	if (now - nl->saved_ns < NUMLINE_SAVE_INTERVAL_NS || !line_path(nl->k, path, sizeof path))
		return FALSE;
	if (newest <= 0 || !line_points(nl, th, newest, cpu, frame))
		return FALSE;
	nl->saved_ns = now;
	char *head = line_head(nl);
	GString *t = g_string_new(head);
	g_free(head);
	g_string_append_c(t, '\n');
	for (int i = 0; i < NUMLINE_POINTS; i++)
		g_string_append_printf(t, "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT "\n", cpu[i], frame[i]);
	GError *e = NULL;
	gboolean ok = g_file_set_contents(path, t->str, (gssize)t->len, &e);
	if (!ok && !nl->warned) {
		g_warning("audio/%d: %s (a restart will number afresh)", nl->k, e->message);
		nl->warned = TRUE;
	}
	g_clear_error(&e);
	g_string_free(t, TRUE);
	return ok;
}

gboolean numline_load(const numline *nl, int64_t now, int64_t *cpu, int64_t *frame)
{
	char path[DEV_PATH_MAX], *text = NULL;
	if (!line_path(nl->k, path, sizeof path) || !g_file_get_contents(path, &text, NULL, NULL))
		return FALSE;
	gchar **l = g_strsplit(text, "\n", -1);
	g_free(text);
	unsigned rate = 0;
	char *head = line_head(nl);
	gboolean ok = l[0] && !strcmp(l[0], head) && sscanf(l[0], "chorus-audiod-numbering 1 rate=%u", &rate) == 1;
	g_free(head);
	for (int i = 0; ok && i < NUMLINE_POINTS; i++) {
		long long c, f;
		ok = l[i + 1] && sscanf(l[i + 1], "%lld %lld", &c, &f) == 2 && (i == 0 || c >= cpu[i - 1]);
		cpu[i] = c;
		frame[i] = f;
	}
	g_strfreev(l);
	return ok && now - cpu[NUMLINE_POINTS - 1] <= NUMLINE_MAX_AGE_NS && now >= cpu[NUMLINE_POINTS - 1];
}
