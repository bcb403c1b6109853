/* history_file.c — syncd's pieces of history kept across its restarts
 * (history_file.h). */
#include "syncd/history_file.h"

#include <errno.h>
#include <string.h>

#include "libdev/path.h"
#include "syncd/history_store.h"

struct history_file {
	uint32_t node;
	char *path;            /* NULL: nothing is kept */
	char *owner;           /* this boot (and simulated clocks), as the file names it */
	char *off_why;         /* why nothing is kept, when path is NULL */
	history_store *read;   /* pieces read and not yet restored (NULL: none) */
	history_store *file;   /* what the file holds as far as we know (NULL: nothing) */
	char load_note[320];   /* what the load found */
	size_t loaded;         /* pieces restored */
	int64_t last_check_ns; /* cpu time the pieces were last compared with the file's (INT64_MIN: never) */
	int64_t interval_ns;   /* least time between two writes while syncd runs */
	guint64 saved, failed;
	char last_error[320]; /* the last write's failure, or "" */
};

/* The owner line: this boot, and in simulation the node's clocks and
 * world (as audiod/numline.c names its owner).  NULL + *why when the boot
 * id cannot be read. */
static char *owner_line(char **why)
{
	char *boot = NULL;
	GError *e = NULL;
	if (!g_file_get_contents("/proc/sys/kernel/random/boot_id", &boot, NULL, &e)) {
		*why = g_strdup_printf("no boot id to tell this boot's cpu clock from another's (%s)", e->message);
		g_error_free(e);
		return NULL;
	}
	g_strstrip(boot);
	if (!*boot) {
		g_free(boot);
		*why = g_strdup("no boot id to tell this boot's cpu clock from another's (/proc/sys/kernel/random/boot_id "
				"is empty)");
		return NULL;
	}
	const char *clk = g_getenv("CHORUS_SIM_CLOCK"), *utc = g_getenv("CHORUS_SIM_UTC"),
		   *world = g_getenv("CHORUS_SIM_EPOCH_NS");
	char *line;
	if ((clk && *clk) || (utc && *utc))
		line = g_strdup_printf("boot=%s clock=%s utc=%s world=%s", boot, clk && *clk ? clk : "-",
				       utc && *utc ? utc : "-", world && *world ? world : "-");
	else
		line = g_strdup_printf("boot=%s", boot);
	g_free(boot);
	return line;
}

/* The default path: $STATE_DIRECTORY/NAME (its first directory), else
 * NAME in the run directory, made if need be.  NULL + *why. */
static char *default_path(char **why)
{
	const char *sd = g_getenv("STATE_DIRECTORY");
	if (sd && *sd) {
		gchar **dirs = g_strsplit(sd, ":", 2);
		char *p = g_build_filename(dirs[0], HISTORY_FILE_NAME, NULL);
		g_strfreev(dirs);
		return p;
	}
	char run[DEV_PATH_MAX];
	const char *w;
	if (dev_run_dir(run, sizeof run, &w) < 0) {
		*why = g_strdup_printf("no run directory for it: %s", w);
		return NULL;
	}
	if (g_mkdir_with_parents(run, 0755) < 0) {
		*why = g_strdup_printf("cannot make the run directory %s: %s", run, g_strerror(errno));
		return NULL;
	}
	return g_build_filename(run, HISTORY_FILE_NAME, NULL);
}

history_file *history_file_new(const char *setting, uint32_t node)
{
	history_file *f = g_new0(history_file, 1);
	f->node = node;
	f->last_check_ns = INT64_MIN;
	f->interval_ns = HISTORY_FILE_INTERVAL_NS;
	g_strlcpy(f->load_note, "not read", sizeof f->load_note);
	if (setting && !strcmp(setting, "none")) {
		f->off_why = g_strdup("[syncd] history_file = none");
		return f;
	}
	f->owner = owner_line(&f->off_why);
	if (f->owner)
		f->path = setting && *setting ? g_strdup(setting) : default_path(&f->off_why);
	if (!f->path)
		g_message("history: pieces of history are not kept across restarts: %s", f->off_why);
	return f;
}

void history_file_set_interval(history_file *f, int64_t interval_ns)
{
	if (interval_ns > 0)
		f->interval_ns = interval_ns;
}

void history_file_free(history_file *f)
{
	if (!f)
		return;
	history_store_free(f->read);
	history_store_free(f->file);
	g_free(f->path);
	g_free(f->owner);
	g_free(f->off_why);
	g_free(f);
}

const char *history_file_path(const history_file *f)
{
	return f->path;
}

size_t history_file_load(history_file *f)
{
	if (!f->path)
		return 0;
	char *data = NULL;
	gsize len = 0;
	GError *e = NULL;
	if (!g_file_get_contents(f->path, &data, &len, &e)) {
		if (g_error_matches(e, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
			g_strlcpy(f->load_note, "no file yet", sizeof f->load_note);
		} else {
			g_snprintf(f->load_note, sizeof f->load_note, "not read: %s", e->message);
			g_warning("history: %s: starting with no pieces", e->message);
		}
		g_error_free(e);
		return 0;
	}
	char why[256];
	int rc = history_store_unpack(data, len, f->owner, f->node, &f->read, why, sizeof why);
	g_free(data);
	if (rc < 0) {
		g_snprintf(f->load_note, sizeof f->load_note, "not loaded: %s", why);
		if (rc == -ESTALE || rc == -EXDEV)
			g_message("history: %s is not loaded: %s; starting with no pieces", f->path, why);
		else
			g_warning("history: %s is not loaded: %s; starting with no pieces", f->path, why);
		return 0;
	}
	/* Until something changes, the file holds what was read. */
	history_store_free(f->file);
	f->file = NULL;
	size_t n = history_store_n_pieces(f->read);
	g_snprintf(f->load_note, sizeof f->load_note, "%zu pieces of %u pairs read", n, history_store_n_pairs(f->read));
	return n;
}

/* Give the pairs of `kind` read to restore(); the reasons of refusals
 * logged.  Returns the pieces kept. */
static size_t restore_kind(history_file *f, history_store_kind kind,
			   int (*restore)(void *target, const history_store_pair *p, int64_t now_ns, const char **why),
			   void *target, int64_t now_ns)
{
	if (!f->read)
		return 0;
	size_t kept = 0;
	char a[SYNC_CLOCK_NAME_MAX], b[SYNC_CLOCK_NAME_MAX];
	for (guint i = 0; i < history_store_n_pairs(f->read); i++) {
		const history_store_pair *p = history_store_pair_at(f->read, i);
		if (p->kind != kind || !target)
			continue;
		const char *why = "";
		int rc = restore(target, p, now_ns, &why);
		if (rc < 0)
			g_warning("history: %s -> %s: its %u saved pieces are not restored: %s",
				  sync_clock_format(p->from, a, sizeof a), sync_clock_format(p->to, b, sizeof b),
				  p->pieces->len, why);
		else
			kept += (size_t)rc;
	}
	f->loaded += kept;
	return kept;
}

static int restore_pair(void *target, const history_store_pair *p, int64_t now_ns, const char **why)
{
	return syncd_pairs_restore(target, p->from, p->to, p->mode, p->nominal, p->unit_ns,
				   (const sync_conv *)(void *)p->pieces->data, p->pieces->len, now_ns, why);
}

static int restore_peer(void *target, const history_store_pair *p, int64_t now_ns, const char **why)
{
	return rbs_core_restore(target, p->to.node, (const sync_conv *)(void *)p->pieces->data, p->pieces->len,
				now_ns, why);
}

/* Both parts restored: what the file holds is what was read. */
static void restored(history_file *f)
{
	g_snprintf(f->load_note + strlen(f->load_note), sizeof f->load_note - strlen(f->load_note),
		   ", %zu restored", f->loaded);
	f->file = f->read;
	f->read = NULL;
	g_message("history: %zu pieces restored from %s (%s)", f->loaded, f->path, f->load_note);
}

size_t history_file_restore_pairs(history_file *f, syncd_pairs *pairs, int64_t now_ns)
{
	return restore_kind(f, HISTORY_STORE_LOCAL, restore_pair, pairs, now_ns);
}

size_t history_file_restore_rbs(history_file *f, rbs_core *core, int64_t now_ns)
{
	size_t n = restore_kind(f, HISTORY_STORE_RBS, restore_peer, core, now_ns);
	if (f->read)
		restored(f);
	return n;
}

/* Every pair's pieces now (with_current: and its current fit). */
static history_store *collect(const history_file *f, syncd_pairs *pairs, rbs_core *core, gboolean with_current)
{
	history_store *s = history_store_new(f->owner, f->node);
	syncd_pairs_export(pairs, with_current, s);
	if (core)
		rbs_core_export(core, with_current, s);
	return s;
}

/* Write s; on success it is what the file holds (taken), else freed. */
static gboolean write_store(history_file *f, history_store *s)
{
	char why[200];
	GError *e = NULL;
	GBytes *b = history_store_pack(s, why, sizeof why);
	gboolean ok = b != NULL;
	if (!b) {
		g_snprintf(f->last_error, sizeof f->last_error, "%s: not written: %s", f->path, why);
	} else {
		gsize len;
		const char *data = g_bytes_get_data(b, &len);
		ok = g_file_set_contents_full(f->path, data, (gssize)len,
					      G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_DURABLE, 0644, &e);
		if (!ok) {
			g_strlcpy(f->last_error, e->message, sizeof f->last_error);
			g_error_free(e);
		}
		g_bytes_unref(b);
	}
	if (!ok) {
		f->failed++;
		g_warning("history: cannot save the pieces of history (%" G_GUINT64_FORMAT " failures so far): %s", f->failed,
			  f->last_error);
		history_store_free(s);
		return FALSE;
	}
	f->saved++;
	history_store_free(f->file);
	f->file = s;
	return TRUE;
}

gboolean history_file_tick(history_file *f, syncd_pairs *pairs, rbs_core *core, int64_t now_ns)
{
	if (!f->path || f->read) /* not kept, or not restored yet */
		return FALSE;
	if (f->last_check_ns != INT64_MIN && now_ns - f->last_check_ns < f->interval_ns)
		return FALSE;
	f->last_check_ns = now_ns;
	history_store *s = collect(f, pairs, core, FALSE);
	/* Nothing changed but the q2s (or no piece yet, no file): no write. */
	if (history_store_same_pieces(s, f->file)) {
		history_store_free(s);
		return FALSE;
	}
	return write_store(f, s);
}

gboolean history_file_save_final(history_file *f, syncd_pairs *pairs, rbs_core *core)
{
	if (!f->path)
		return FALSE;
	if (f->read) /* never restored: what was read goes back as it was */
		return write_store(f, g_steal_pointer(&f->read));
	history_store *s = collect(f, pairs, core, TRUE);
	gboolean ok = write_store(f, s);
	if (ok)
		g_message("history: %zu pieces of %u pairs saved to %s", history_store_n_pieces(f->file),
			  history_store_n_pairs(f->file), f->path);
	return ok;
}

void history_file_describe(const history_file *f, GString *out)
{
	if (!f->path) {
		g_string_append_printf(out, "history_file none (pieces of history not kept across restarts: %s)\n",
				       f->off_why);
		return;
	}
	g_string_append_printf(out, "history_file %s saved=%" G_GUINT64_FORMAT " failed=%" G_GUINT64_FORMAT " loaded=%zu (%s)",
			       f->path, f->saved, f->failed, f->loaded, f->load_note);
	if (*f->last_error)
		g_string_append_printf(out, " last_error=%s", f->last_error);
	g_string_append_c(out, '\n');
}
