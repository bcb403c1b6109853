#!/bin/sh
# Install the Debian packages chorus needs (arguments) when run as root;
# otherwise print the exact apt-get line.  Quiet when nothing is missing.
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "deps: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing || {
        echo "deps: apt-get install failed" >&2; exit 1; }
else
    echo "deps: missing packages; run as root:" >&2
    echo "  apt-get install -y$missing" >&2
    exit 1
fi
