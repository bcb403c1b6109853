/* chorus-selftest — checks a node's capture path end to end and prints a
 * table (docs/man/chorus-selftest.1, docs/audiod.md §5.1).
 *
 * It is a client of the running syncd and audiod, as a user is: it reads
 * audio/K/status with chorus-cat, streams with `audioget --follow`, asks for
 * frames and times with audioget, converts with synctool (tools.h).  On any
 * node it reports the timestamp source, lost records, the card's fitted
 * rate against CLOCK_MONOTONIC_RAW and the fit's residual (report.h).  With
 * --play PCM it plays a known signal there and checks what audiod captured
 * (loopback.h); with --xrun-pid it provokes an overrun (xrun.h).  Exit
 * status: 0 every check passed, 1 a check failed, 2 usage or audiod could
 * not be reached.
 */
#include <stdio.h>
#include <stdlib.h>

#include "selftest/loopback.h"
#include "selftest/report.h"
#include "selftest/tools.h"
#include "selftest/xrun.h"

static gint o_device, o_seconds, o_stop_ms, o_seed = 1, o_rt, o_xrun_pid;
static gchar *o_play, *o_expect, *o_save, *o_compare, *o_label, *o_tools;
static gboolean o_nominal;

static GOptionEntry entries[] = {
	{"device", 'd', 0, G_OPTION_ARG_INT, &o_device, "audiod device K (audio/K; default 0)", "K"},
	{"play", 'p', 0, G_OPTION_ARG_STRING, &o_play, "play the test signal into this PCM (looped back into the captured one)", "PCM"},
	{"seconds", 's', 0, G_OPTION_ARG_INT, &o_seconds, "length of the test (default 12 with --play, else 4)", "S"},
	{"xrun-pid", 'x', 0, G_OPTION_ARG_INT, &o_xrun_pid, "provoke an overrun: SIGSTOP this audiod for longer than its buffer", "PID"},
	{"stop-ms", 0, 0, G_OPTION_ARG_INT, &o_stop_ms, "how long to stop it (default three buffers)", "MS"},
	{"expect-source", 'e', 0, G_OPTION_ARG_STRING, &o_expect, "fail unless audiod uses this timestamp source (kpatch, alsa)", "SRC"},
	{"nominal", 0, 0, G_OPTION_ARG_NONE, &o_nominal, "the card is clocked by the cpu (a virtual card): the rate must be nominal", NULL},
	{"seed", 0, 0, G_OPTION_ARG_INT, &o_seed, "noise seed of the test signal", "N"},
	{"rt", 0, 0, G_OPTION_ARG_INT, &o_rt, "SCHED_FIFO priority of the player (default: none)", "PRIO"},
	{"save", 0, 0, G_OPTION_ARG_FILENAME, &o_save, "write the measured clock offset to FILE", "FILE"},
	{"compare", 0, 0, G_OPTION_ARG_FILENAME, &o_compare, "compare the clock offset with an earlier run's --save FILE", "FILE"},
	{"label", 0, 0, G_OPTION_ARG_STRING, &o_label, "name of this run in the table", "TEXT"},
	{"tools", 0, 0, G_OPTION_ARG_FILENAME, &o_tools, "directory of audioget, chorus-cat, synctool (default: next to this program, else PATH)", "DIR"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

/* Wait (up to 20 s) until audiod states a fit of 16 observations or more;
 * fills *st.  0, or -1 with the reason in why. */
static int wait_fit(tools_status *st, char *why, size_t len)
{
	for (int i = 0; i < 40; i++) {
		if (tools_status_read(o_device, st, why, len) == 0 && st->have_fit && st->fit_n >= 16)
			return 0;
		g_usleep(500000);
	}
	if (!*why)
		g_snprintf(why, len, "audio/%d: no fit stated in 20 s", o_device);
	return -1;
}

int main(int argc, char **argv)
{
	GError *err = NULL;
	char why[512] = "";
	GOptionContext *oc = g_option_context_new("- check the capture path: audiod, syncd, the card, kpatch");
	g_option_context_add_main_entries(oc, entries, NULL);
	if (!g_option_context_parse(oc, &argc, &argv, &err)) {
		fprintf(stderr, "chorus-selftest: %s\n", err->message);
		return 2;
	}
	g_option_context_free(oc);
	setvbuf(stdout, NULL, _IOLBF, 0);
	tools_set_dir(o_tools);
	if (!o_seconds)
		o_seconds = o_play ? 12 : 4;
	tools_status s0, s9;
	if (wait_fit(&s0, why, sizeof why) < 0) {
		fprintf(stderr, "chorus-selftest: %s\n", why);
		return 2;
	}
	report_begin(o_label ? o_label : s0.pcm);
	report_rowf("device", REPORT_INFO, "%s|%u Hz, %u ch, %s, period %u, buffer %u", s0.pcm, s0.rate, s0.channels,
		    s0.format, s0.period, s0.buffer);
	if (o_play) {
		loopback_cfg lc = {.device = o_device, .play = o_play, .seconds = o_seconds, .seed = o_seed, .rt = o_rt, .xrun_pid = o_xrun_pid, .stop_ms = o_stop_ms, .save = o_save, .compare = o_compare, .label = o_label};
		loopback_run(&lc, &s0);
	} else {
		g_usleep((gulong)o_seconds * 1000000);
		if (o_xrun_pid > 0)
			xrun_provoke(o_device, o_xrun_pid, o_stop_ms, &s0);
	}
	if (tools_status_read(o_device, &s9, why, sizeof why) < 0)
		report_row("status at the end", "-", why, REPORT_FAIL);
	else
		report_status(&s0, &s9, o_expect, o_nominal, o_xrun_pid > 0);
	return report_end();
}
