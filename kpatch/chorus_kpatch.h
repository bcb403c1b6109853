/* SPDX-License-Identifier: GPL-2.0-or-later (shared by the GPL-2.0 module and GPL-3.0 user space) */
/* chorus_kpatch.h — the one record format for DMA period-interrupt timestamps.
 *
 * Shared by three parties, so that all three speak exactly the same bytes:
 *   - the kernel module kpatch/chorus_kpatch.ko (producer, one FIFO per PCM
 *     substream, read through a character device),
 *   - the simulator's ALSA plugin (producer: its "side channel", a FIFO under
 *     the run directory, see sim/),
 *   - audiod's reader (consumer).
 *
 * A reader reads whole records (read(2) of a multiple of
 * sizeof(struct chorus_kpatch_record)); every field is little-endian on the
 * wire (all supported hosts are little-endian; a big-endian port must
 * byte-swap).  A record is valid when magic == CHORUS_KPATCH_MAGIC,
 * size == sizeof(record) and version is 1 or 2 (CHORUS_KPATCH_VERSION, what
 * producers write now):
 *   version 1: `update_ns` was `reserved` and is zero, no F_UPDATE_TIME;
 *   version 2: with CHORUS_KPATCH_F_UPDATE_TIME, `update_ns` is the time
 *     from time_ns to a second time taken after ALSA updated hw_ptr (the
 *     return of snd_pcm_period_elapsed_under_stream_lock), so the instant
 *     the frame hw_ptr was reached is bracketed: for a driver that reports
 *     its DMA position when ALSA asks (snd-dummy's hrtimer, an HDA position
 *     register, snd-aloop's jiffies) it lies in [time_ns, time_ns +
 *     update_ns]; for one whose position was latched before it reported the
 *     period, before time_ns.  Without the flag update_ns is zero.
 * The layout is the same in both versions (a reader of version 1 rejects
 * version 2 records as "unknown version"; one of version 2 reads both).
 *
 * Sequence numbers count every period interrupt the producer saw on the
 * substream, whether or not its record reached the FIFO, so a reader detects
 * loss as a jump in seq; `dropped` is the producer's running count of records
 * it could not queue (FIFO full), so overflow is never silent.
 */
#ifndef CHORUS_KPATCH_H
#define CHORUS_KPATCH_H

#ifdef __KERNEL__
#include <linux/types.h>
typedef __u8 ckp_u8;
typedef __u16 ckp_u16;
typedef __u32 ckp_u32;
typedef __u64 ckp_u64;
typedef __s64 ckp_s64;
#else
#include <stdint.h>
typedef uint8_t ckp_u8;
typedef uint16_t ckp_u16;
typedef uint32_t ckp_u32;
typedef uint64_t ckp_u64;
typedef int64_t ckp_s64;
#endif

#define CHORUS_KPATCH_MAGIC   0x4b434843u /* "CHCK" little-endian */
#define CHORUS_KPATCH_VERSION 2
#define CHORUS_KPATCH_VERSION_MIN 1 /* oldest version readers accept */

/* flags */
#define CHORUS_KPATCH_F_SIM     0x0001u /* produced by the simulator */
#define CHORUS_KPATCH_F_XRUN    0x0002u /* producer knows the stream overran here */
#define CHORUS_KPATCH_F_CAPTURE 0x0004u /* capture substream (else playback) */
#define CHORUS_KPATCH_F_UPDATE_TIME 0x0008u /* version 2: update_ns holds the time after the update */
#define CHORUS_KPATCH_F_KNOWN   0x000fu /* every flag defined */

/* update_ns saturates here (a bracket of over 4.29 s is no bracket). */
#define CHORUS_KPATCH_UPDATE_NS_MAX 0xffffffffu

struct chorus_kpatch_record {
	ckp_u32 magic;      /* CHORUS_KPATCH_MAGIC */
	ckp_u16 version;    /* CHORUS_KPATCH_VERSION */
	ckp_u16 size;       /* sizeof(struct chorus_kpatch_record) == 48 */
	ckp_u64 seq;        /* per-substream interrupt count from 0; a jump means records lost */
	ckp_s64 time_ns;    /* interrupt time on the node's cpu clock (CLOCK_MONOTONIC_RAW), ns */
	ckp_u64 hw_ptr;     /* substream hw_ptr after the period, frames (ALSA boundary-wrapped) */
	ckp_u32 dropped;    /* producer's running count of records lost to a full FIFO */
	ckp_u16 card;       /* ALSA card number (simulator: virtual node number) */
	ckp_u8  device;     /* ALSA PCM device number */
	ckp_u8  subdevice;  /* ALSA subdevice number */
	ckp_u16 flags;      /* CHORUS_KPATCH_F_* */
	ckp_u16 period_frames; /* period size in frames, 0 if unknown (> 65535) */
	ckp_u32 update_ns;  /* version 2 with F_UPDATE_TIME: ns from time_ns to after the hw_ptr
			     * update (saturating); else zero (version 1: "reserved") */
};

/*
 * The kernel module's character device.  There is one misc device for all
 * substreams: a reader opens it, selects one substream with
 * CHORUS_KPATCH_IOC_SELECT, then read(2)s whole records and poll(2)s for
 * more.  One reader per substream at a time (a second SELECT of a busy
 * substream fails with EBUSY): the FIFO is single-producer/single-consumer.
 * SELECT empties the FIFO and zeroes `dropped`; `seq` keeps counting.
 * The ioctl structs have the same layout on 32- and 64-bit user space.
 */
#define CHORUS_KPATCH_DEV_NAME "chorus_kpatch"
#define CHORUS_KPATCH_DEV_PATH "/dev/chorus_kpatch"

#define CHORUS_KPATCH_STREAM_PLAYBACK 0 /* == SNDRV_PCM_STREAM_PLAYBACK */
#define CHORUS_KPATCH_STREAM_CAPTURE  1 /* == SNDRV_PCM_STREAM_CAPTURE */

struct chorus_kpatch_select {
	ckp_u16 card;       /* ALSA card number */
	ckp_u8  device;     /* PCM device number */
	ckp_u8  subdevice;  /* subdevice number */
	ckp_u8  stream;     /* CHORUS_KPATCH_STREAM_* */
	ckp_u8  pad[3];     /* zero */
};

struct chorus_kpatch_stats {
	ckp_u64 seq;          /* interrupts seen on the substream so far (next record's seq) */
	ckp_u32 dropped;      /* records lost to a full FIFO since SELECT */
	ckp_u32 queued;       /* records waiting in the FIFO now */
	ckp_u32 fifo_depth;   /* FIFO capacity, records */
	ckp_u32 probe_missed; /* module-wide: probe hits the kernel could not run us for */
	ckp_u32 reserved[2];  /* zero */
};

#ifdef __KERNEL__
#include <linux/ioctl.h>
#else
#include <sys/ioctl.h>
#endif
#define CHORUS_KPATCH_IOC_MAGIC 0xC4
#define CHORUS_KPATCH_IOC_SELECT _IOW(CHORUS_KPATCH_IOC_MAGIC, 1, struct chorus_kpatch_select)
#define CHORUS_KPATCH_IOC_STATS  _IOR(CHORUS_KPATCH_IOC_MAGIC, 2, struct chorus_kpatch_stats)

#ifndef __KERNEL__
_Static_assert(sizeof(struct chorus_kpatch_record) == 48, "kpatch record is 48 bytes");
_Static_assert(sizeof(struct chorus_kpatch_select) == 8, "select is 8 bytes");
_Static_assert(sizeof(struct chorus_kpatch_stats) == 32, "stats is 32 bytes");
#endif

#endif
