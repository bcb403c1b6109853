#!/bin/sh
# tests/test_web_browser.sh BUILD SRCDIR — chorus-web's page in a real
# browser: a small simulated field (tests/web_field.sh, chorus-sim --web),
# headless Chromium driven through chromedriver (tests/web_browser.py):
# every node present, at least one located call drawn, the spectrogram
# updating; the screenshot is kept in $WEB_TEST_OUT (default
# BUILD/tests/web-out/web.png).  Exit 0 pass, 1 fail, 77 without python3,
# chromium or chromedriver (make deps installs them).
set -u
b=$1; src=$2
command -v /usr/bin/python3 >/dev/null || { echo "test_web_browser: SKIP: python3 not found (make deps)"; exit 77; }
command -v chromium >/dev/null || { echo "test_web_browser: SKIP: chromium not found (make deps installs chromium)"; exit 77; }
command -v chromedriver >/dev/null || { echo "test_web_browser: SKIP: chromedriver not found (make deps installs chromium-driver)"; exit 77; }
out=${WEB_TEST_OUT:-$b/tests/web-out}
mkdir -p "$out"
. "$src/tests/web_field.sh"
fail() { web_test_fail test_web_browser "$*"; }
web_test_field test_web_browser "$b" "$src"
/usr/bin/python3 "$src/tests/web_browser.py" "$WEB_URL" "$WEB_NODES" "$out"
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || fail "the page (above)"
echo "test_web_browser: PASS (screenshot $out/web.png)"
