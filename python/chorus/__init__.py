"""chorus — Python bindings of libsync (libchorus-sync.so.1) through ctypes.

Convert timestamps between a chorus node's clocks with their uncertainties,
read the node's ticker and fetch audio by time on any clock, with numpy
arrays in and out (docs/libsync.md "Python", man libsync(3)).

    import chorus
    with chorus.Client() as c:                  # subscribes to sync/ticker
        g = c.convert(cpu_ns, "cpu", "global")  # numpy int64 array in
        g.value, g.frac, g.se                   # int64, float64, float64 arrays
    for e in chorus.ticker():                   # every conversion syncd publishes
        print(e.src, e.dst, e.slope, e.se_end)
    a = chorus.fetch_audio("global", t0_ns, t1_ns)
    a.samples                                   # (frames, channels) numpy array
    a.t0, a.t0_frac, a.t0_se, a.period, a.period_se, a.t0_clock

Clocks are named as everywhere in chorus: "global", "node3:cpu",
"node3:audio0", or a bare kind ("cpu", "audio0") for the node syncd runs on.
Failures raise chorus.SyncError carrying libsync's errno and reason.  The
library is found through $CHORUS_LIBSYNC (a path), else the dynamic linker
("libchorus-sync.so.1").  The node is the one $CHORUS_RUN (and in
simulation $CHORUS_NODE, $CHORUS_SIM_CLOCK) point at, as for every chorus
client.
"""

import ctypes
import errno as _errno
import math
import os

import numpy as np

__all__ = ["SyncError", "Client", "Conversion", "TickerEntry", "Audio", "ticker", "fetch_audio", "now", "parse_clock"]

_WHY = 512


class SyncError(OSError):
    """A libsync failure: .errno (positive errno value) and .reason (libsync's text)."""

    def __init__(self, err, reason):
        super().__init__(err, reason)
        self.reason = reason


class _ClockId(ctypes.Structure):
    _fields_ = [("node", ctypes.c_uint32), ("kind", ctypes.c_uint16), ("index", ctypes.c_uint16)]


class _Conv(ctypes.Structure):
    _fields_ = [("x0", ctypes.c_int64), ("y0", ctypes.c_int64), ("yoff", ctypes.c_double),
                ("slope", ctypes.c_double), ("xbar", ctypes.c_double), ("var_c", ctypes.c_double),
                ("var_s", ctypes.c_double), ("rms", ctypes.c_double), ("wander", ctypes.c_double),
                ("xmin", ctypes.c_int64), ("xmax", ctypes.c_int64), ("updated_ns", ctypes.c_int64),
                ("n", ctypes.c_uint32), ("flags", ctypes.c_uint32)]


class _TickerEntry(ctypes.Structure):
    _fields_ = [("src", _ClockId), ("dst", _ClockId), ("conv", _Conv)]


class _TickerHead(ctypes.Structure):
    _fields_ = [("node", ctypes.c_uint32), ("root", ctypes.c_uint32), ("now_ns", ctypes.c_int64),
                ("count", ctypes.c_size_t)]


class _Tval(ctypes.Structure):
    _fields_ = [("i", ctypes.c_int64), ("f", ctypes.c_double)]


class _AudioInfo(ctypes.Structure):
    _fields_ = [("first_frame", ctypes.c_int64), ("frames", ctypes.c_int64), ("gap_frames", ctypes.c_int64),
                ("rate_hz", ctypes.c_uint32), ("channels", ctypes.c_uint32), ("sample_bytes", ctypes.c_uint32),
                ("format", ctypes.c_char * 16), ("has_t0", ctypes.c_int), ("t0_clock", ctypes.c_char * 32),
                ("t0", ctypes.c_int64), ("t0_frac", ctypes.c_double), ("t0_se", ctypes.c_double),
                ("period", ctypes.c_double), ("period_se", ctypes.c_double), ("se_ns", ctypes.c_double)]


class _GError(ctypes.Structure):
    _fields_ = [("domain", ctypes.c_uint32), ("code", ctypes.c_int), ("message", ctypes.c_char_p)]


def _load():
    path = os.environ.get("CHORUS_LIBSYNC") or "libchorus-sync.so.1"
    lib = ctypes.CDLL(path)
    glib = ctypes.CDLL("libglib-2.0.so.0")
    P, I64, SZ, C = ctypes.POINTER, ctypes.c_int64, ctypes.c_size_t, ctypes.c_char_p
    sig = {
        "sync_clock_parse": (ctypes.c_int, [C, I64, P(_ClockId), P(C)]),
        "sync_clock_format": (C, [_ClockId, ctypes.c_char_p, SZ]),
        "sync_now": (I64, [ctypes.c_int]),
        "sync_now_init": (ctypes.c_int, [P(C)]),
        "sync_client_new": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                              ctypes.c_void_p, P(P(_GError))]),
        "sync_client_free": (None, [ctypes.c_void_p]),
        "sync_client_wait": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
        "sync_client_ready": (ctypes.c_int, [ctypes.c_void_p]),
        "sync_client_connected": (ctypes.c_int, [ctypes.c_void_p]),
        "sync_client_info": (None, [ctypes.c_void_p, P(ctypes.c_uint32), P(ctypes.c_uint32)]),
        "sync_client_convert_many": (SZ, [ctypes.c_void_p, _ClockId, _ClockId, P(I64), SZ, I64, P(I64),
                                          P(ctypes.c_double), P(ctypes.c_double), P(ctypes.c_int32),
                                          ctypes.c_char_p, SZ]),
        "sync_ticker_read": (ctypes.c_int, [ctypes.c_int, P(_TickerHead), P(_TickerEntry), SZ, ctypes.c_char_p,
                                            SZ]),
        "sync_conv_var": (ctypes.c_double, [P(_Conv), _Tval]),
        "sync_audio_fetch": (ctypes.c_int, [ctypes.c_uint32, C, I64, I64, C, ctypes.c_int,
                                            P(ctypes.c_void_p), ctypes.c_char_p, SZ]),
        "sync_audio_info": (None, [ctypes.c_void_p, P(_AudioInfo)]),
        "sync_audio_data": (ctypes.c_void_p, [ctypes.c_void_p, P(SZ)]),
        "sync_audio_free": (None, [ctypes.c_void_p]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    glib.g_main_context_iteration.restype = ctypes.c_int
    glib.g_main_context_iteration.argtypes = [ctypes.c_void_p, ctypes.c_int]
    glib.g_error_free.argtypes = [ctypes.c_void_p]
    why = ctypes.c_char_p()
    if lib.sync_now_init(ctypes.byref(why)) < 0:
        raise SyncError(_errno.EINVAL, "CHORUS_SIM_CLOCK: " + why.value.decode())
    return lib, glib


_lib, _glib = _load()


def parse_clock(name, node=-1):
    """The clock id of a name ("global", "node3:cpu", "audio0" with node); raises SyncError."""
    cid, why = _ClockId(), ctypes.c_char_p()
    if _lib.sync_clock_parse(name.encode(), node, ctypes.byref(cid), ctypes.byref(why)) < 0:
        raise SyncError(_errno.EINVAL, 'clock "%s": %s' % (name, why.value.decode()))
    return cid


def _clock_name(cid):
    buf = ctypes.create_string_buffer(32)
    return _lib.sync_clock_format(cid, buf, 32).decode()


def now(kind="cpu"):
    """The node's cpu (or "realtime") clock now, int ns (virtual in simulation)."""
    k = {"cpu": 0, "realtime": 1}.get(kind)
    if k is None:
        raise SyncError(_errno.EINVAL, 'now(): "%s" is not cpu or realtime' % kind)
    return int(_lib.sync_now(k))


class Conversion:
    """Converted times: value (int64, destination units) + frac (float64, |frac| <= 0.5), se (float64,
    standard error in destination units), and err (int32: 0, or -errno where errors="mask")."""

    def __init__(self, value, frac, se, err):
        self.value, self.frac, self.se, self.err = value, frac, se, err

    def __len__(self):
        return len(self.value)

    def as_float(self, origin=0):
        """value + frac - origin as float64 (exact while |value - origin| < 2**50)."""
        return (self.value - np.int64(origin)).astype(np.float64) + self.frac


class Client:
    """A subscription to the node's ticker (libsync's sync_client): converts arrays of times."""

    def __init__(self, timeout_s=5.0):
        err = ctypes.POINTER(_GError)()
        self._c = _lib.sync_client_new(None, None, None, None, ctypes.byref(err))
        if not self._c:
            msg = err.contents.message.decode()
            code = err.contents.code
            _glib.g_error_free(err)
            raise SyncError(code or _errno.EINVAL, msg)
        if _lib.sync_client_wait(self._c, int(timeout_s * 1000)) < 0:
            self.close()
            raise SyncError(_errno.ETIMEDOUT, "no ticker from syncd (sync/ticker) within %.1f s" % timeout_s)
        n, r = ctypes.c_uint32(), ctypes.c_uint32()
        _lib.sync_client_info(self._c, ctypes.byref(n), ctypes.byref(r))
        self.node, self.root = n.value, (None if r.value == 0xFFFFFFFF else r.value)

    def close(self):
        if self._c:
            _lib.sync_client_free(self._c)
            self._c = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _pump(self):
        # Take in the tickers that arrived since the last call (the client
        # lives on GLib's default context, which nobody else iterates here).
        while _glib.g_main_context_iteration(None, 0):
            pass

    @property
    def connected(self):
        self._pump()
        return bool(_lib.sync_client_connected(self._c))

    def convert(self, x, src, dst, now_ns=None, errors="raise"):
        """Convert integer times x (scalar or array; src's unit: ns, frames for audio clocks) from clock
        src to clock dst.  errors="raise": the first failure raises SyncError with libsync's reason;
        errors="mask": failed elements get err < 0 and NaN frac/se."""
        if errors not in ("raise", "mask"):
            raise ValueError('errors must be "raise" or "mask"')
        if not self._c:
            raise SyncError(_errno.EBADF, "the client is closed")
        self._pump()
        a = np.ascontiguousarray(np.atleast_1d(x))
        if a.dtype.kind not in "iu":
            raise TypeError("times must be integers (int64 ns or frames), got %s" % a.dtype)
        a = a.astype(np.int64, copy=False)
        s, d = parse_clock(src, self.node), parse_clock(dst, self.node)
        n = a.size
        vi = np.empty(n, np.int64)
        vf = np.empty(n, np.float64)
        se = np.empty(n, np.float64)
        er = np.empty(n, np.int32)
        why = ctypes.create_string_buffer(_WHY)
        P = ctypes.POINTER
        failed = _lib.sync_client_convert_many(
            self._c, s, d, a.ctypes.data_as(P(ctypes.c_int64)), n,
            ctypes.c_int64(-(2 ** 63)) if now_ns is None else ctypes.c_int64(now_ns),
            vi.ctypes.data_as(P(ctypes.c_int64)), vf.ctypes.data_as(P(ctypes.c_double)),
            se.ctypes.data_as(P(ctypes.c_double)), er.ctypes.data_as(P(ctypes.c_int32)), why, _WHY)
        if failed and errors == "raise":
            first = int(er[er < 0][0])
            raise SyncError(-first, "%s -> %s: %s" % (src, dst, why.value.decode()))
        return Conversion(vi, vf, se, er)


class TickerEntry:
    """One conversion syncd publishes: src -> dst, the line (x0, y0, slope), the number of points n,
    the residual rms, age_s, and se_end (standard error at the newest data, dst units)."""

    def __init__(self, e, now_ns):
        self.src, self.dst = _clock_name(e.src), _clock_name(e.dst)
        c = e.conv
        self.x0, self.y0, self.slope, self.n, self.rms = c.x0, c.y0, c.slope, c.n, c.rms
        self.xmin, self.xmax, self.flags = c.xmin, c.xmax, c.flags
        self.age_s = (now_ns - c.updated_ns) / 1e9
        self.se_end = math.sqrt(_lib.sync_conv_var(ctypes.byref(c), _Tval(c.xmax, 0.0)))

    def __repr__(self):
        return "TickerEntry(%s -> %s slope=%.12g n=%d se_end=%.4g age_s=%.1f)" % (
            self.src, self.dst, self.slope, self.n, self.se_end, self.age_s)


def ticker(timeout_s=2.0, max_entries=None):
    """Every conversion in the node's ticker (sync/ticker, all its parts) now, as a list of TickerEntry.

    max_entries: at most this many (None: all of them, however large the field)."""
    h = _TickerHead()
    why = ctypes.create_string_buffer(_WHY)
    size = 1024 if max_entries is None else max_entries
    while True:
        buf = (_TickerEntry * size)()
        n = _lib.sync_ticker_read(int(timeout_s * 1000), ctypes.byref(h), buf, size, why, _WHY)
        if n < 0:
            raise SyncError(-n, why.value.decode())
        # The ticker grew past the buffer: read it again with room for all.
        if max_entries is not None or n < size or h.count <= size:
            return [TickerEntry(buf[i], h.now_ns) for i in range(n)]
        size = h.count + 64


_DTYPES = {"S16_LE": np.dtype("<i2"), "S32_LE": np.dtype("<i4"), "FLOAT_LE": np.dtype("<f4")}


class Audio:
    """Fetched audio: samples (frames x channels numpy array, audiod's sample format), rate_hz,
    first_frame, gap_frames (frames audiod no longer held, zeros), and the time of the first frame:
    t0_clock, t0 (int) + t0_frac, t0_se, period (clock units per frame), period_se; t0 is None when
    audiod stated no time."""

    def __init__(self, info, samples):
        self.samples, self.rate_hz, self.first_frame = samples, info.rate_hz, info.first_frame
        self.gap_frames, self.format = info.gap_frames, info.format.decode()
        self.t0_clock = info.t0_clock.decode() if info.has_t0 else None
        self.t0 = info.t0 if info.has_t0 else None
        self.t0_frac, self.t0_se = info.t0_frac, info.t0_se
        self.period, self.period_se, self.se_ns = info.period, info.period_se, info.se_ns


def fetch_audio(clock, t_from, t_to, device=0, channels=None, timeout_s=10.0):
    """The audio of [t_from, t_to) on clock (integers in its unit) from audio device `device`;
    channels: a list of indices or None for all.  Raises SyncError with audiod's or libsync's reason."""
    ch = None if channels is None else ",".join(str(int(c)) for c in channels).encode()
    p = ctypes.c_void_p()
    why = ctypes.create_string_buffer(_WHY)
    rc = _lib.sync_audio_fetch(device, clock.encode(), int(t_from), int(t_to), ch, int(timeout_s * 1000),
                               ctypes.byref(p), why, _WHY)
    if rc < 0:
        raise SyncError(-rc, why.value.decode())
    try:
        info = _AudioInfo()
        _lib.sync_audio_info(p, ctypes.byref(info))
        nb = ctypes.c_size_t()
        ptr = _lib.sync_audio_data(p, ctypes.byref(nb))
        dt = _DTYPES.get(info.format.decode())
        if dt is None:
            raise SyncError(_errno.EPROTO, "unknown sample format %s" % info.format.decode())
        raw = ctypes.string_at(ptr, nb.value) if nb.value else b""
        samples = np.frombuffer(raw, dtype=dt).reshape(-1, info.channels).copy()
        return Audio(info, samples)
    finally:
        _lib.sync_audio_free(p)
