/* queue.c — chorus-mqtt's on-disk message queue (queue.h). */
#include "apps/mqtt/queue.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK(chorus - mqtt - queue - error - quark, mqtt_queue_error)

enum { UNSENT,
       IN_FLIGHT,
       ACKED };

typedef struct {
	guint64 seq;
	size_t bytes; /* topic + payload */
	int state;
} entry;

struct mqtt_queue {
	char *dir;
	int dirfd;
	size_t max_count, max_bytes;
	GQueue q;          /* entry *, oldest first */
	GList *cursor;     /* the first UNSENT link, or NULL */
	GHashTable *index; /* seq -> GList link */
	mqtt_queue_stats st;
};

static char *msg_path(const mqtt_queue *q, guint64 seq, const char *ext)
{
	return g_strdup_printf("%s/%016" G_GINT64_MODIFIER "x.%s", q->dir, seq, ext);
}

/* Write all of buf to fd, retrying EINTR and short writes; 0 or -errno. */
static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Write a file atomically: tmp, fsync, close, rename, fsync the directory. */
static int write_file(mqtt_queue *q, const char *path, const char *tmp, const void *a, size_t alen, const void *b,
		      size_t blen, GError **err)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		g_set_error(err, MQTT_QUEUE_ERROR, e, "%s: cannot create: %s", tmp, g_strerror(e));
		return -e;
	}
	int rc = write_all(fd, a, alen);
	if (!rc && blen)
		rc = write_all(fd, b, blen);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (!rc && fsync(q->dirfd) < 0)
		rc = -errno;
	if (rc) {
		g_set_error(err, MQTT_QUEUE_ERROR, -rc, "%s: cannot write: %s", path, g_strerror(-rc));
		unlink(tmp);
	}
	return rc;
}

/* Remove the message file of seq; 0 or -errno with *err. */
static int remove_file(mqtt_queue *q, guint64 seq, GError **err)
{
	char *p = msg_path(q, seq, "msg");
	int rc = 0;
	if (unlink(p) < 0 && errno != ENOENT) {
		rc = -errno;
		g_set_error(err, MQTT_QUEUE_ERROR, -rc, "%s: cannot remove: %s", p, g_strerror(-rc));
	} else if (fsync(q->dirfd) < 0) {
		rc = -errno;
		g_set_error(err, MQTT_QUEUE_ERROR, -rc, "%s: cannot sync: %s", q->dir, g_strerror(-rc));
	}
	g_free(p);
	return rc;
}

/* Record the next sequence number (the queue drained: no file says it). */
static int save_next(mqtt_queue *q, GError **err)
{
	char *p = g_build_filename(q->dir, "next", NULL), *t = g_build_filename(q->dir, "next.tmp", NULL);
	char buf[32];
	int n = g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT "\n", q->st.next_seq);
	int rc = write_file(q, p, t, buf, (size_t)n, NULL, 0, err);
	g_free(p);
	g_free(t);
	return rc;
}

static gint cmp_seq(gconstpointer a, gconstpointer b)
{
	guint64 x = ((const entry *)a)->seq, y = ((const entry *)b)->seq;
	return x < y ? -1 : x > y;
}

/* Move the cursor past messages that are not UNSENT (after an
 * out-of-order acknowledgement and mqtt_queue_unsend_all, acknowledged
 * ones may follow unsent ones). */
static void fix_cursor(mqtt_queue *q)
{
	while (q->cursor && ((entry *)q->cursor->data)->state != UNSENT)
		q->cursor = q->cursor->next;
}

static void unlink_entry(mqtt_queue *q, GList *l)
{
	entry *e = l->data;
	if (q->cursor == l)
		q->cursor = l->next;
	g_hash_table_remove(q->index, &e->seq);
	q->st.count--;
	q->st.bytes -= e->bytes;
	g_queue_delete_link(&q->q, l);
	g_free(e);
}

static void add_entry(mqtt_queue *q, guint64 seq, size_t bytes)
{
	entry *e = g_new0(entry, 1);
	e->seq = seq;
	e->bytes = bytes;
	e->state = UNSENT;
	g_queue_push_tail(&q->q, e);
	g_hash_table_insert(q->index, &e->seq, q->q.tail);
	if (!q->cursor)
		q->cursor = q->q.tail;
	q->st.count++;
	q->st.bytes += bytes;
}

static gboolean load(mqtt_queue *q, GError **err)
{
	GDir *d = g_dir_open(q->dir, 0, err);
	if (!d)
		return FALSE;
	GList *found = NULL;
	const char *name;
	while ((name = g_dir_read_name(d))) {
		char *full = g_build_filename(q->dir, name, NULL);
		guint64 seq;
		char ext[8], extra;
		if (g_str_has_suffix(name, ".tmp")) {
			unlink(full); /* a write that never completed: the message was never accepted */
		} else if (sscanf(name, "%16" G_GINT64_MODIFIER "x.%3s%c", &seq, ext, &extra) == 2 && !strcmp(ext, "msg")) {
			struct stat s;
			if (stat(full, &s) == 0) {
				entry *e = g_new0(entry, 1);
				e->seq = seq;
				e->bytes = s.st_size > 0 ? (size_t)s.st_size - 1 : 0; /* the NUL after the topic */
				found = g_list_prepend(found, e);
			}
		} else if (!strcmp(name, "next")) {
			char *text = NULL;
			if (g_file_get_contents(full, &text, NULL, NULL))
				q->st.next_seq = MAX(q->st.next_seq, g_ascii_strtoull(text, NULL, 10));
			g_free(text);
		}
		g_free(full);
	}
	g_dir_close(d);
	found = g_list_sort(found, cmp_seq);
	for (GList *l = found; l; l = l->next) {
		entry *e = l->data;
		add_entry(q, e->seq, e->bytes);
		q->st.next_seq = MAX(q->st.next_seq, e->seq + 1);
		g_free(e);
	}
	g_list_free(found);
	return TRUE;
}

mqtt_queue *mqtt_queue_open(const char *dir, size_t max_count, size_t max_bytes, GError **err)
{
	if (g_mkdir_with_parents(dir, 0700) < 0) {
		int e = errno;
		g_set_error(err, MQTT_QUEUE_ERROR, e, "%s: cannot create the queue directory: %s", dir, g_strerror(e));
		return NULL;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		g_set_error(err, MQTT_QUEUE_ERROR, e, "%s: cannot open: %s", dir, g_strerror(e));
		return NULL;
	}
	mqtt_queue *q = g_new0(mqtt_queue, 1);
	q->dir = g_strdup(dir);
	q->dirfd = fd;
	q->max_count = q->st.max_count = max_count;
	q->max_bytes = q->st.max_bytes = max_bytes;
	q->st.next_seq = 1; /* 0 means "none" in this API */
	g_queue_init(&q->q);
	q->index = g_hash_table_new(g_int64_hash, g_int64_equal);
	if (!load(q, err)) {
		mqtt_queue_free(q);
		return NULL;
	}
	return q;
}

void mqtt_queue_free(mqtt_queue *q)
{
	if (!q)
		return;
	g_queue_clear_full(&q->q, g_free);
	g_hash_table_destroy(q->index);
	close(q->dirfd);
	g_free(q->dir);
	g_free(q);
}

guint64 mqtt_queue_peek_seq(const mqtt_queue *q)
{
	return q->st.next_seq;
}

/* Make room for one more message of `bytes`: drop the oldest unsent ones.
 * FALSE when only in-flight messages are left and they fill it. */
static gboolean make_room(mqtt_queue *q, size_t bytes)
{
	while (q->st.count + 1 > q->max_count || q->st.bytes + bytes > q->max_bytes) {
		fix_cursor(q);
		if (!q->cursor)
			return FALSE;
		entry *e = q->cursor->data;
		guint64 seq = e->seq;
		unlink_entry(q, q->cursor);
		GError *err = NULL;
		if (remove_file(q, seq, &err) < 0) {
			g_warning("queue: %s", err->message);
			g_error_free(err);
		}
		q->st.dropped_full++;
	}
	return TRUE;
}

guint64 mqtt_queue_push(mqtt_queue *q, const char *topic, const void *payload, size_t len, GError **err)
{
	size_t tl = strlen(topic), bytes = tl + len;
	if (bytes > q->max_bytes) {
		g_set_error(err, MQTT_QUEUE_ERROR, EMSGSIZE, "a message of %zu bytes exceeds the queue's %zu", bytes,
			    q->max_bytes);
		q->st.write_errors++;
		return 0;
	}
	if (!make_room(q, bytes)) {
		g_set_error(err, MQTT_QUEUE_ERROR, ENOSPC, "the queue is full of messages in flight");
		q->st.write_errors++;
		return 0;
	}
	guint64 seq = q->st.next_seq;
	char *p = msg_path(q, seq, "msg"), *t = msg_path(q, seq, "tmp");
	int rc = write_file(q, p, t, topic, tl + 1, payload, len, err);
	g_free(p);
	g_free(t);
	if (rc < 0) {
		q->st.write_errors++;
		return 0;
	}
	q->st.next_seq++;
	add_entry(q, seq, bytes);
	q->st.pushed++;
	return seq;
}

guint64 mqtt_queue_next_unsent(mqtt_queue *q, char **topic, void **payload, size_t *len, GError **err)
{
	for (fix_cursor(q); q->cursor; fix_cursor(q)) {
		GList *l = q->cursor;
		entry *e = l->data;
		char *p = msg_path(q, e->seq, "msg"), *data = NULL;
		gsize n = 0;
		gboolean ok = g_file_get_contents(p, &data, &n, err);
		char *nul = ok ? memchr(data, 0, n) : NULL;
		if (!nul) {
			if (ok)
				g_set_error(err, MQTT_QUEUE_ERROR, EBADMSG, "%s: no topic in the file", p);
			g_free(p);
			g_free(data);
			guint64 seq = e->seq;
			unlink_entry(q, l);
			remove_file(q, seq, NULL);
			q->st.write_errors++;
			return 0;
		}
		g_free(p);
		e->state = IN_FLIGHT;
		q->cursor = l->next;
		q->st.in_flight++;
		*topic = g_strndup(data, (gsize)(nul - data));
		*len = n - (size_t)(nul - data) - 1;
		*payload = g_memdup2(nul + 1, *len + 1);
		g_free(data);
		return e->seq;
	}
	return 0;
}

int mqtt_queue_ack(mqtt_queue *q, guint64 seq, GError **err)
{
	GList *l = g_hash_table_lookup(q->index, &seq);
	if (!l || ((entry *)l->data)->state != IN_FLIGHT)
		return -ENOENT;
	((entry *)l->data)->state = ACKED;
	q->st.in_flight--;
	int rc = 0;
	while (q->q.head && ((entry *)q->q.head->data)->state == ACKED) {
		guint64 s = ((entry *)q->q.head->data)->seq;
		unlink_entry(q, q->q.head);
		q->st.acked++;
		if (remove_file(q, s, rc ? NULL : err) < 0)
			rc = -EIO;
	}
	if (!q->q.head && !rc && save_next(q, err) < 0)
		rc = -EIO;
	return rc;
}

int mqtt_queue_unsend(mqtt_queue *q, guint64 seq)
{
	GList *l = g_hash_table_lookup(q->index, &seq);
	if (!l || ((entry *)l->data)->state != IN_FLIGHT)
		return -ENOENT;
	((entry *)l->data)->state = UNSENT;
	q->st.in_flight--;
	/* Everything after it is unsent too (it was the newest handed out),
	 * so it is the first unsent one. */
	q->cursor = l;
	return 0;
}

void mqtt_queue_unsend_all(mqtt_queue *q)
{
	GList *first = NULL;
	for (GList *l = q->q.head; l; l = l->next) {
		entry *e = l->data;
		if (e->state == IN_FLIGHT) {
			e->state = UNSENT;
			if (!first)
				first = l;
		}
	}
	q->st.in_flight = 0;
	if (first)
		q->cursor = first;
	fix_cursor(q);
}

void mqtt_queue_stats_get(const mqtt_queue *q, mqtt_queue_stats *s)
{
	*s = q->st;
}
