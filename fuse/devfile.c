/* devfile.c — one open file of chorus-fuse (see devfile.h). */
#include "fuse/devfile.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "libdev/dev.h"

/* A stream read takes at most this many bytes from the socket before it
 * answers (the kernel asks for up to 128 KiB at a time anyway). */
#define STREAM_BATCH (256 * 1024)
/* The most zero bytes one gap of a sensor stream becomes. */
#define GAP_MAX_BYTES (64 * 1024 * 1024)

struct devfile {
	GMutex lock;
	char name[DEV_PATH_MAX];
	dev_link *l;
	dev_pattern pattern;
	int flags;
	GByteArray *text;   /* status: the snapshot; command/query: replies (or usage) */
	gboolean wrote;     /* command/query: a write happened (read gives replies) */
	GByteArray *pend;   /* streams: bytes received, not yet read */
	GByteArray *rx;     /* receive scratch */
	uint64_t delivered; /* streams: bytes read so far */
	struct timespec mtime;
	gboolean gone;          /* streams: the service went away or refused */
	gboolean last_was_data; /* streams: the last read returned bytes */
	uint32_t item_size;
	uint32_t next_id;
};

static void stamp_now(devfile *f)
{
	clock_gettime(CLOCK_REALTIME, &f->mtime);
}

/* Is this message text a person reads line by line (valid UTF-8, no NUL)? */
static gboolean is_text(const uint8_t *p, size_t n)
{
	return n > 0 && !memchr(p, 0, n) && g_utf8_validate((const char *)p, (gssize)n, NULL);
}

/* Append one stream message to pend.  Lock held.  Returns bytes added. */
static size_t take_message(devfile *f, const dev_msg *m)
{
	size_t before = f->pend->len;
	if (m->type == DEV_MSG_PKT_DATA) {
		g_byte_array_append(f->pend, m->u.pkt.data, m->u.pkt.len);
		if (is_text(m->u.pkt.data, m->u.pkt.len) && m->u.pkt.data[m->u.pkt.len - 1] != '\n')
			g_byte_array_append(f->pend, (const guint8 *)"\n", 1);
		if (m->u.pkt.dropped)
			g_message("%s: %u messages were dropped for this reader (it fell behind)", f->name,
				  m->u.pkt.dropped);
	} else if (m->type == DEV_MSG_SENS_DATA) {
		g_byte_array_append(f->pend, m->u.data.items, m->u.data.bytes);
	} else if (m->type == DEV_MSG_SENS_GAP) {
		uint64_t bytes = (uint64_t)(m->u.gap.to - m->u.gap.from) * f->item_size;
		g_message("%s: items [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") were lost; %s", f->name, m->u.gap.from,
			  m->u.gap.to, bytes <= GAP_MAX_BYTES ? "read as zeros" : "too many to fill: the stream ends");
		if (bytes > GAP_MAX_BYTES) {
			f->gone = TRUE;
		} else {
			g_byte_array_set_size(f->pend, (guint)(before + bytes));
			memset(f->pend->data + before, 0, bytes);
		}
	} else if (m->type == DEV_MSG_SENS_OPENED) {
		f->item_size = m->u.opened.item_size;
	} else if (m->type == DEV_MSG_SENS_END) {
		f->gone = TRUE;
	} else if (m->type == DEV_MSG_ERROR) {
		g_message("%s: the service ended the stream: %.*s", f->name, (int)m->u.error.text_len, m->u.error.text);
		f->gone = TRUE;
	}
	if (f->pend->len > before)
		stamp_now(f);
	return f->pend->len - before;
}

/* Receive stream messages into pend: wait up to wait_ms for the first,
 * then take what is already there, up to STREAM_BATCH bytes.  Lock held. */
static void pull(devfile *f, int wait_ms)
{
	int t = wait_ms;
	while (!f->gone && f->pend->len < STREAM_BATCH) {
		/* poll first: only what is already queued (t = 0) or comes
		 * within t ms, never a socket timeout's rounding to jiffies. */
		struct pollfd p = {dev_link_fd(f->l), POLLIN, 0};
		int pr = poll(&p, 1, t);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;
		dev_msg m;
		int rc = dev_link_recv(f->l, f->rx, &m, DEVFILE_CALL_MS);
		if (rc == -ETIMEDOUT)
			break;
		if (rc < 0) {
			g_message("%s: %s; the stream ends", f->name,
				  rc == -ECONNRESET ? "the service went away" : g_strerror(-rc));
			f->gone = TRUE;
			break;
		}
		if (take_message(f, &m) > 0)
			t = 0;
	}
}

static int send_simple(devfile *f, uint8_t type, const void *payload, size_t len, uint32_t *id)
{
	GByteArray *b = g_byte_array_new();
	*id = ++f->next_id + 0x40000000u; /* apart from dev_link's own ids */
	dev_wire_begin(b, type, 0, *id);
	if (len)
		dev_wire_bytes(b, payload, len);
	int rc = dev_wire_end(b);
	if (rc == 0)
		rc = dev_link_send(f->l, b, DEVFILE_CALL_MS);
	g_byte_array_free(b, TRUE);
	return rc;
}

devfile *devfile_open(const char *name, int flags, const fuse_caller *who, int *err)
{
	GError *e = NULL;
	int rc = fuse_creds_enter(who);
	if (rc < 0) {
		g_message("%s: cannot act as uid %u gid %u: %s", name, (unsigned)who->uid, (unsigned)who->gid,
			  g_strerror(-rc));
		*err = rc;
		return NULL;
	}
	dev_link *l = dev_link_open(name, DEVFILE_CALL_MS, &e);
	fuse_creds_leave();
	if (!l) {
		*err = e->code > 0 ? -e->code : -EIO;
		g_message("open %s for uid %u: %s", name, (unsigned)who->uid, e->message);
		g_error_free(e);
		return NULL;
	}
	devfile *f = g_new0(devfile, 1);
	g_mutex_init(&f->lock);
	g_strlcpy(f->name, name, sizeof f->name);
	f->l = l;
	f->pattern = dev_link_pattern(l);
	f->flags = flags & O_ACCMODE;
	f->text = g_byte_array_new();
	f->pend = g_byte_array_new();
	f->rx = g_byte_array_new();
	f->item_size = dev_link_item_size(l);
	stamp_now(f);
	gboolean reading = f->flags != O_WRONLY, writing = f->flags != O_RDONLY;
	uint32_t id;
	rc = 0;
	switch (f->pattern) {
	case DEV_PATTERN_STATUS:
		if (writing)
			rc = -EINVAL;
		else if ((rc = dev_link_status(l, FALSE, f->text, DEVFILE_CALL_MS)) < 0)
			g_message("%s: reading the status: %s", name, f->text->len ? (const char *)f->text->data : g_strerror(-rc));
		break;
	case DEV_PATTERN_SENSOR:
		if (writing) {
			rc = -EINVAL;
		} else {
			uint8_t p[24];
			int64_t first = 0, last = DEV_SENSOR_OPEN_END;
			uint32_t fl = DEV_SENSOR_FROM_NEXT, zero = 0;
			/* little-endian fields (docs/protocol.md "SENS_OPEN") */
			for (int i = 0; i < 8; i++) {
				p[i] = (uint8_t)((uint64_t)first >> (8 * i));
				p[8 + i] = (uint8_t)((uint64_t)last >> (8 * i));
			}
			for (int i = 0; i < 4; i++) {
				p[16 + i] = (uint8_t)(fl >> (8 * i));
				p[20 + i] = (uint8_t)(zero >> (8 * i));
			}
			rc = send_simple(f, DEV_MSG_SENS_OPEN, p, sizeof p, &id);
		}
		break;
	case DEV_PATTERN_PACKET:
		if (reading)
			rc = send_simple(f, DEV_MSG_PKT_SUB, NULL, 0, &id);
		break;
	default:
		break;
	}
	if (rc < 0) {
		if (rc == -EINVAL)
			g_message("%s: a %s device cannot be written", name, dev_pattern_name(f->pattern));
		*err = rc;
		devfile_close(f);
		return NULL;
	}
	return f;
}

dev_pattern devfile_pattern(devfile *f)
{
	return f->pattern;
}

static ssize_t copy_from(const GByteArray *b, char *buf, size_t size, off_t off)
{
	if (off < 0 || (uint64_t)off >= b->len)
		return 0;
	size_t n = MIN(size, b->len - (size_t)off);
	memcpy(buf, b->data + off, n);
	return (ssize_t)n;
}

ssize_t devfile_read(devfile *f, char *buf, size_t size, off_t off)
{
	ssize_t r = 0;
	g_mutex_lock(&f->lock);
	switch (f->pattern) {
	case DEV_PATTERN_STATUS:
		r = copy_from(f->text, buf, size, off);
		break;
	case DEV_PATTERN_COMMAND:
		if (!f->wrote && !f->text->len) {
			int rc = dev_link_usage(f->l, f->text, DEVFILE_CALL_MS);
			if (rc < 0) {
				g_byte_array_set_size(f->text, 0);
				r = rc;
				break;
			}
		}
		r = copy_from(f->text, buf, size, off);
		break;
	case DEV_PATTERN_QUERY:
		r = copy_from(f->text, buf, size, off);
		break;
	case DEV_PATTERN_PACKET:
	case DEV_PATTERN_SENSOR:
		/* What has come, else end of file for now once after data (so
		 * `tail -f` finishes a batch, prints it and polls fstat), else
		 * wait a little for the next message. */
		if (!f->pend->len)
			pull(f, 0);
		if (!f->pend->len && !f->last_was_data)
			pull(f, STREAM_WAIT_MS);
		r = (ssize_t)MIN(size, f->pend->len);
		f->last_was_data = r > 0;
		memcpy(buf, f->pend->data, (size_t)r);
		g_byte_array_remove_range(f->pend, 0, (guint)r);
		f->delivered += (uint64_t)r;
		break;
	}
	g_mutex_unlock(&f->lock);
	return r;
}

/* Run one command or query; its reply is appended to f->text.  0 or a
 * negative errno. */
static int call_one(devfile *f, const char *req, size_t len)
{
	int status = 0;
	GByteArray *out = g_byte_array_new();
	int rc = dev_link_call(f->l, req, len, &status, out, DEVFILE_CALL_MS);
	if (f->pattern == DEV_PATTERN_QUERY)
		g_byte_array_set_size(f->text, 0);
	if (rc < 0) {
		g_autofree char *m = g_strdup_printf("error %s: %.*s\n", g_strerror(-rc), (int)out->len, out->data);
		g_byte_array_append(f->text, (const guint8 *)m, (guint)strlen(m));
	} else if (f->pattern == DEV_PATTERN_QUERY) {
		g_byte_array_append(f->text, out->data, out->len);
		if (status < 0)
			rc = status;
	} else {
		g_autofree char *m = g_strdup_printf("%s%.*s%s", status ? "error: " : "", (int)out->len, out->data,
						     out->len && out->data[out->len - 1] == '\n' ? "" : "\n");
		g_byte_array_append(f->text, (const guint8 *)m, (guint)strlen(m));
		/* By convention a failed command answers -errno; a positive
		 * or out-of-range status is still a failure. */
		if (status < 0)
			rc = status >= -4095 ? status : -EIO;
		else if (status > 0)
			rc = -EIO;
	}
	g_byte_array_free(out, TRUE);
	return rc;
}

/* PKT_SEND: answered OK or ERROR; messages of the subscription met on the
 * way are kept for reading.  Lock held. */
static int send_packet(devfile *f, const char *buf, size_t size)
{
	uint32_t id;
	int rc = send_simple(f, DEV_MSG_PKT_SEND, buf, size, &id);
	while (rc == 0) {
		dev_msg m;
		rc = dev_link_recv(f->l, f->rx, &m, DEVFILE_CALL_MS);
		if (rc < 0)
			break;
		if (m.id != id) {
			take_message(f, &m);
			continue;
		}
		if (m.type == DEV_MSG_ERROR) {
			g_message("%s: message refused: %.*s", f->name, (int)m.u.error.text_len, m.u.error.text);
			rc = m.u.error.err > 0 ? -m.u.error.err : -EIO;
		}
		break;
	}
	return rc;
}

ssize_t devfile_write(devfile *f, const char *buf, size_t size)
{
	int rc = 0;
	g_mutex_lock(&f->lock);
	if (!f->wrote) {
		g_byte_array_set_size(f->text, 0); /* usage read before is not a reply */
		f->wrote = TRUE;
	}
	switch (f->pattern) {
	case DEV_PATTERN_COMMAND: {
		/* One command per line; stop at the first failure. */
		const char *p = buf, *end = buf + size;
		while (p < end && rc == 0) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = (size_t)((nl ? nl : end) - p);
			if (len && !(len == 1 && p[0] == '\r'))
				rc = call_one(f, p, len && p[len - 1] == '\r' ? len - 1 : len);
			p += len + (nl ? 1 : 0);
		}
		if (rc < 0)
			g_message("%s: command failed (%s): %.*s", f->name, g_strerror(-rc), (int)f->text->len,
				  f->text->data);
		break;
	}
	case DEV_PATTERN_QUERY:
		rc = call_one(f, buf, size);
		break;
	case DEV_PATTERN_PACKET:
		rc = send_packet(f, buf, size && buf[size - 1] == '\n' ? size - 1 : size);
		break;
	default:
		rc = -EBADF;
	}
	g_mutex_unlock(&f->lock);
	return rc < 0 ? rc : (ssize_t)size;
}

void devfile_stat(devfile *f, struct stat *st)
{
	g_mutex_lock(&f->lock);
	switch (f->pattern) {
	case DEV_PATTERN_PACKET:
	case DEV_PATTERN_SENSOR:
		if (f->flags != O_WRONLY)
			pull(f, 0);
		/* What was read and what is waiting: `tail -f` on a remote
		 * file system reads only as far as st_size has grown. */
		st->st_size = (off_t)(f->delivered + f->pend->len);
		st->st_mtim = f->mtime;
		break;
	default:
		st->st_size = f->text->len;
		break;
	}
	g_mutex_unlock(&f->lock);
}

void devfile_close(devfile *f)
{
	if (!f)
		return;
	dev_link_close(f->l);
	g_byte_array_free(f->text, TRUE);
	g_byte_array_free(f->pend, TRUE);
	g_byte_array_free(f->rx, TRUE);
	g_mutex_clear(&f->lock);
	g_free(f);
}

int devfile_probe(const char *name, dev_pattern *pattern)
{
	GError *e = NULL;
	dev_link *l = dev_link_open(name, 2000, &e);
	if (!l) {
		int rc = e->code > 0 ? -e->code : -EIO;
		g_error_free(e);
		return rc;
	}
	*pattern = dev_link_pattern(l);
	dev_link_close(l);
	return 0;
}
