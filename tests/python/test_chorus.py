"""tests/python/test_chorus.py — the chorus Python module (python/chorus) against one simulated node's
real syncd and audiod (tests/test_python.sh starts them): conversions of numpy arrays with their
standard errors, errors as exceptions with libsync's reason, the ticker, audio by global time."""

import errno
import os
import subprocess
import unittest

import numpy as np

import chorus

BIN = os.environ["CHORUS_TEST_BIN"]


class TestChorus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.c = chorus.Client()

    @classmethod
    def tearDownClass(cls):
        cls.c.close()

    def test_convert_array(self):
        now = chorus.now()
        x = now - np.arange(1000, dtype=np.int64) * 1_000_000  # the last second, every ms
        g = self.c.convert(x, "cpu", "global")
        self.assertEqual(g.value.dtype, np.int64)
        self.assertEqual(len(g), 1000)
        self.assertTrue(np.all(g.err == 0))
        self.assertTrue(np.all(np.isfinite(g.se)) and np.all(g.se >= 0))
        self.assertTrue(np.all(np.abs(g.frac) <= 0.5))
        # Times 1 ms apart stay 1 ms apart to the clocks' skew (|skew| < 100 ppm: 100 ns per ms).
        d = np.diff(g.as_float(g.value[0]))
        self.assertTrue(np.all(np.abs(-d - 1e6) < 100), d[:5])
        # There and back again: the inverse map returns the input to within rounding (1 ns).
        back = self.c.convert(g.value, "global", "cpu")
        self.assertTrue(np.all(np.abs(back.as_float(x[0]) - (x - x[0]).astype(float) + g.frac) < 1.0))

    def test_same_as_synctool(self):
        # One value through the bindings and through synctool (the graph rebuilt from the ticker):
        # the same conversions give the same answer to well within its standard error.
        x = chorus.now() - 500_000_000
        g = self.c.convert([x], "node2:cpu", "global")
        out = subprocess.run([os.path.join(BIN, "synctool"), "convert", "cpu", "global", str(x)],
                             capture_output=True, text=True, check=True).stdout.split()
        v = float(out[0]) - g.value[0]
        self.assertLess(abs(v - g.frac[0]), max(1.0, 0.1 * g.se[0]), out)

    def test_errors(self):
        with self.assertRaises(chorus.SyncError) as e:
            self.c.convert([1], "bogus", "global")
        self.assertEqual(e.exception.errno, errno.EINVAL)
        self.assertIn("bogus", e.exception.reason)
        with self.assertRaises(chorus.SyncError) as e:
            self.c.convert([1], "node99:cpu", "global")
        self.assertIn(e.exception.errno, (errno.ENOENT, errno.ENOLINK))
        self.assertIn("node99", e.exception.reason)
        with self.assertRaises(TypeError):
            self.c.convert([1.5], "cpu", "global")
        # An hour before now is long before the card's data (the node started
        # seconds ago), whatever the machine's uptime (cpu time 1 ns is not,
        # in a VM booted a minute ago): refused.
        m = self.c.convert([chorus.now(), chorus.now() - 3600 * 10**9], "cpu", "node2:audio0", errors="mask")
        self.assertEqual(m.err[0], 0)
        self.assertLess(m.err[1], 0)
        self.assertTrue(np.isnan(m.se[1]))

    def test_ticker(self):
        t = chorus.ticker()
        pairs = {(e.src, e.dst) for e in t}
        self.assertTrue(any("node2:audio0" in p for p in pairs), pairs)
        a = [e for e in t if e.src == "node2:audio0" and e.dst == "node2:cpu"]
        self.assertEqual(len(a), 1, pairs)
        # ns per frame at 48 kHz with the card 18.5 ppm fast and the cpu -41 ppm: 20833 ns +- 0.1 %.
        self.assertAlmostEqual(a[0].slope / (1e9 / 48000), 1.0, delta=1e-3)
        self.assertGreaterEqual(a[0].n, 3)  # a fit with a standard error
        self.assertTrue(a[0].se_end >= 0 and a[0].age_s < 10)

    def test_fetch_audio(self):
        g1 = int(self.c.convert([chorus.now() - 200_000_000], "cpu", "global").value[0])
        g0 = g1 - 500_000_000
        a = chorus.fetch_audio("global", g0, g1)
        self.assertEqual(a.samples.dtype, np.int16)
        self.assertEqual(a.samples.shape[1], 2)
        self.assertLessEqual(abs(a.samples.shape[0] - 24000), 2)
        self.assertEqual(a.gap_frames, 0)
        self.assertTrue(np.any(a.samples != 0))
        self.assertEqual(a.t0_clock, "global")
        # The first frame is the first at or after g0: within one frame period of it.
        self.assertGreaterEqual(a.t0 - g0 + a.t0_frac, -a.t0_se * 5 - 1)
        self.assertLess(a.t0 - g0 + a.t0_frac, a.period + 5 * a.t0_se + 1)
        self.assertAlmostEqual(a.period / (1e9 / 48000), 1.0, delta=1e-3)
        # A later start on the same clock is the same samples, shifted by whole frames.
        b = chorus.fetch_audio("global", g0 + 10_000_000, g1, channels=[1])
        k = b.first_frame - a.first_frame
        self.assertTrue(470 <= k <= 490, k)
        n = b.samples.shape[0]
        self.assertTrue(np.array_equal(b.samples[:, 0], a.samples[k:k + n, 1]))

    def test_fetch_refused(self):
        with self.assertRaises(chorus.SyncError) as e:
            chorus.fetch_audio("global", 1, 2)
        self.assertTrue(e.exception.reason, "no reason given")
        with self.assertRaises(chorus.SyncError) as e:
            chorus.fetch_audio("global", 5, 2)
        self.assertEqual(e.exception.errno, errno.EINVAL)


if __name__ == "__main__":
    unittest.main(verbosity=2)
