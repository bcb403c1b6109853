/* kpatch-dump — print DMA period-interrupt timestamps live.
 *
 *   kpatch-dump -c 0 -d 0 -s 0            capture substream of hw:0,0
 *   kpatch-dump -c 1 --playback           playback substream of hw:1,0
 *   kpatch-dump --path $CHORUS_RUN/...    the simulator's side channel
 *
 * One line per record: seq, cpu time (ns), hw_ptr (frames), the interval
 * and frame advance since the previous record and the rate they imply, the
 * time from the record's time to after the hw_ptr update (upd_us: record
 * version 2; '-' without it), the producer's drop count and flags.  Loss and malformed input are printed as
 * '#' lines as they happen; a summary goes to stderr at the end.
 */
#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <glib-unix.h>

#include "kpatch/reader.h"

struct dump {
	struct kpatch_reader *r;
	GMainLoop *loop;
	gint64 count; /* records still to print, <0 for no limit */
	int have_prev;
	struct chorus_kpatch_record prev;
	struct kpatch_reader_stats last; /* to print only new problems */
	int status;                      /* exit status */
};

/* Prints a '#' line when input was rejected since the last call. */
static void report_news(struct dump *d)
{
	struct kpatch_reader_stats st;
	const char *why = kpatch_reader_last_problem(d->r);

	kpatch_reader_get_stats(d->r, &st);
	if ((st.malformed != d->last.malformed || st.foreign != d->last.foreign) && why)
		printf("# rejected input: %s\n", why);
	d->last = st;
}

/* Prints one record, with deltas from the previous one. */
static void print_record(struct dump *d, const struct chorus_kpatch_record *rec)
{
	/* Loss is shown where it happened, before the record that shows it. */
	if (d->have_prev && rec->seq > d->prev.seq + 1)
		printf("# seq gap: %" PRIu64 " record(s) missing\n",
		       rec->seq - d->prev.seq - 1);
	else if (d->have_prev && rec->seq <= d->prev.seq)
		printf("# producer restarted (seq went back)\n");
	if (d->have_prev && rec->dropped > d->prev.dropped)
		printf("# producer overflow: %" PRIu32 " record(s) dropped\n",
		       rec->dropped - d->prev.dropped);
	printf("%8" PRIu64 " %20" PRId64 " %12" PRIu64, rec->seq, rec->time_ns,
	       rec->hw_ptr);
	if (d->have_prev && rec->time_ns > d->prev.time_ns) {
		double dt = (double)(rec->time_ns - d->prev.time_ns);
		/* hw_ptr wraps at ALSA's boundary; a backward step is a wrap
		 * or a restart, not a rate. */
		int64_t df = (int64_t)(rec->hw_ptr - d->prev.hw_ptr);

		printf(" %10.1f %8" PRId64 " %10.1f", dt / 1e3, df,
		       df >= 0 ? (double)df * 1e9 / dt : 0.0);
	} else {
		printf(" %10s %8s %10s", "-", "-", "-");
	}
	if (kpatch_record_has_update(rec))
		printf(" %8.1f", rec->update_ns / 1e3);
	else
		printf(" %8s", "-");
	printf(" %6" PRIu32 " %s%s%s\n", rec->dropped,
	       rec->flags & CHORUS_KPATCH_F_CAPTURE ? "c" : "p",
	       rec->flags & CHORUS_KPATCH_F_XRUN ? ",xrun" : "",
	       rec->flags & CHORUS_KPATCH_F_SIM ? ",sim" : "");
	d->prev = *rec;
	d->have_prev = 1;
}

static gboolean on_input(gint fd, GIOCondition cond, gpointer data)
{
	struct dump *d = data;
	struct chorus_kpatch_record recs[32];
	int n, i;

	n = kpatch_reader_read(d->r, recs, G_N_ELEMENTS(recs));
	if (n < 0) {
		g_printerr("kpatch-dump: %s: read: %s\n",
			   kpatch_reader_path(d->r), g_strerror(-n));
		d->status = 1;
		g_main_loop_quit(d->loop);
		return G_SOURCE_REMOVE;
	}
	for (i = 0; i < n && d->count != 0; i++) {
		print_record(d, &recs[i]);
		if (d->count > 0)
			d->count--;
	}
	report_news(d);
	fflush(stdout);
	struct kpatch_reader_stats st;

	kpatch_reader_get_stats(d->r, &st);
	/* A regular file stays readable at its end: stop there. */
	if (d->count == 0 || (n == 0 && (st.eof || (cond & (G_IO_HUP | G_IO_ERR))))) {
		g_main_loop_quit(d->loop);
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(((struct dump *)data)->loop);
	return G_SOURCE_CONTINUE;
}

static void print_summary(struct dump *d)
{
	struct kpatch_reader_stats st;
	struct chorus_kpatch_stats ks;

	kpatch_reader_get_stats(d->r, &st);
	g_printerr("kpatch-dump: %" PRIu64 " records, %" PRIu64 " gaps (%" PRIu64
		   " lost), %" PRIu64 " overflow drops, %" PRIu64 " restarts, %" PRIu64 " xruns, %" PRIu64 " malformed, %" PRIu64 " foreign\n",
		   st.seq.records, st.seq.seq_gaps, st.seq.seq_lost,
		   st.seq.overflows, st.seq.seq_resets, st.seq.xruns,
		   st.malformed, st.foreign);
	if (kpatch_reader_kernel_stats(d->r, &ks) == 0)
		g_printerr("kpatch-dump: module: seq %" PRIu64 ", dropped %u, queued %u"
			   ", fifo %u, probe missed %u\n",
			   ks.seq, ks.dropped,
			   ks.queued, ks.fifo_depth, ks.probe_missed);
}

int main(int argc, char **argv)
{
	gint card = 0, device = 0, subdevice = 0;
	gint64 count = -1;
	gboolean playback = FALSE;
	gchar *path = NULL;
	GOptionEntry entries[] = {
		{"card", 'c', 0, G_OPTION_ARG_INT, &card, "ALSA card number (0)", "N"},
		{"device", 'd', 0, G_OPTION_ARG_INT, &device, "PCM device number (0)", "N"},
		{"subdevice", 's', 0, G_OPTION_ARG_INT, &subdevice, "subdevice (0)", "N"},
		{"playback", 'p', 0, G_OPTION_ARG_NONE, &playback, "the playback substream (default capture)", NULL},
		{"path", 0, 0, G_OPTION_ARG_FILENAME, &path, "read a record file or FIFO (simulator side channel) instead", "FILE"},
		{"count", 'n', 0, G_OPTION_ARG_INT64, &count, "stop after N records", "N"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GOptionContext *ctx = g_option_context_new("- print kpatch period-interrupt timestamps");
	GError *err = NULL;
	struct dump d = {.count = -1};
	int rc;

	g_option_context_add_main_entries(ctx, entries, NULL);
	if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
		g_printerr("kpatch-dump: %s\n", err->message);
		g_error_free(err);
		g_option_context_free(ctx);
		return 2;
	}
	g_option_context_free(ctx);

	if (path) {
		rc = kpatch_reader_open_path(path, &d.r);
		if (rc < 0)
			g_printerr("kpatch-dump: %s: %s\n", path, g_strerror(-rc));
	} else {
		char dev[256] = "?";

		kpatch_reader_path_for_pcm(card, device, subdevice, !playback,
					   dev, sizeof(dev));
		rc = kpatch_reader_open_for_pcm(card, device, subdevice,
						playback ? CHORUS_KPATCH_STREAM_PLAYBACK
							 : CHORUS_KPATCH_STREAM_CAPTURE,
						&d.r);
		if (rc == -ENOENT)
			g_printerr("kpatch-dump: %s: no such device: is chorus_kpatch loaded? (modprobe chorus_kpatch)\n", dev);
		else if (rc < 0)
			g_printerr("kpatch-dump: %s: card %d device %d subdevice %d %s: %s\n",
				   dev, card, device, subdevice,
				   playback ? "playback" : "capture", g_strerror(-rc));
	}
	g_free(path);
	if (rc < 0)
		return 1;

	d.count = count;
	d.loop = g_main_loop_new(NULL, FALSE);
	printf("#    seq              time_ns       hw_ptr      dt_us   frames    rate_hz   upd_us dropped flags\n");
	g_unix_fd_add(kpatch_reader_fd(d.r), G_IO_IN | G_IO_HUP | G_IO_ERR, on_input, &d);
	g_unix_signal_add(SIGINT, on_signal, &d);
	g_unix_signal_add(SIGTERM, on_signal, &d);
	g_main_loop_run(d.loop);
	print_summary(&d);
	g_main_loop_unref(d.loop);
	kpatch_reader_free(d.r);
	return d.status;
}
