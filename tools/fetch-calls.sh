#!/bin/sh
# Fetch real recorded animal calls for the field benchmark (issue 11) from
# Debian's gcompris-qt-data and print the paths of the extracted files.
#
# Why fetched, not committed: the recordings are GPL-3 (GCompris's farm
# animals, "2000, 2008 Bruno Coudoin and others") and Free Art License 1.2
# (the memory-sound barks, Lionel Allorge and Yves Combe), per the package's
# /usr/share/doc/gcompris-qt-data/copyright.  Both let us copy them, but
# redistributing them inside chorus would bind the tree to their terms (the
# GPL's source and notice duties, the FAL's "attach this licence" and its
# ban on sublicensing).  Taking them from the Debian archive at run time
# keeps chorus's own licence and leaves the notices with the package; the
# copyright file is copied beside the sounds.
#
# The package keeps its data in Qt resource bundles (.rcc); the embedded
# python3 (standard library only) unpacks the few files we use.  The sounds
# are Ogg/Vorbis, 44.1 kHz mono, which libsndfile reads directly.
#
# usage: tools/fetch-calls.sh [CACHE_DIR]     (default build/calls)
# Uses the installed package when there is one; otherwise `apt-get download`
# (no root needed) into the cache.  Exit 1 with a reason when it cannot.
set -eu
dir=${1:-build/calls}
pkg=gcompris-qt-data
mkdir -p "$dir"
command -v python3 >/dev/null || sh "$(dirname "$0")/deps.sh" python3-minimal || {
    echo "fetch-calls: python3 is needed to unpack the Qt resource bundles" >&2; exit 1; }

rcc=/usr/share/gcompris-qt/rcc
copyright=/usr/share/doc/$pkg/copyright
if [ ! -f "$rcc/explore_farm_animals.rcc" ]; then
    if [ ! -f "$dir/pkg/$rcc/explore_farm_animals.rcc" ]; then
        (cd "$dir" && rm -f ${pkg}_*.deb && apt-get download -q "$pkg" >/dev/null) || {
            echo "fetch-calls: apt-get download $pkg failed (no network or no apt sources?)" >&2; exit 1; }
        dpkg -x "$dir"/${pkg}_*.deb "$dir/pkg"
        rm -f "$dir"/${pkg}_*.deb
        # Keep only the two bundles and the licence notices (of 75 MB).
        find "$dir/pkg" -type f ! -name explore_farm_animals.rcc ! -name memory-sound.rcc \
            ! -path "*/doc/$pkg/copyright" -delete
    fi
    rcc=$dir/pkg$rcc
    copyright=$dir/pkg$copyright
fi
cp "$copyright" "$dir/COPYRIGHT.gcompris-qt-data"

python3 - "$dir" "$rcc" <<'EOF'
# Qt rcc format (versions 1-3): header "qres", version, tree, data and names
# offsets; tree entries name(4) flags(2) then dir: count(4) first(4), file:
# country(2) language(2) data(4); 8 more bytes of mtime from version 2.  Flag
# 1 = zlib with a 4-byte length first, 2 = directory, 4 = zstd (unsupported).
import os, struct, sys, zlib
out, rccdir = sys.argv[1], sys.argv[2]
want = {
    "explore_farm_animals.rcc": ["duck.ogg", "dog.ogg", "chickens.ogg", "horse.ogg", "cat.ogg"],
    "memory-sound.rcc": ["LRBark_1_LA_cut.ogg", "LRBark_3_LA_cut.ogg"],
}
for bundle, names in want.items():
    d = open(os.path.join(rccdir, bundle), "rb").read()
    if d[:4] != b"qres":
        sys.exit("fetch-calls: %s: not a Qt resource bundle" % bundle)
    ver, tree, data, nameoff = struct.unpack(">IIII", d[4:20])
    esz = 14 if ver == 1 else 22
    def name(off):
        n, = struct.unpack(">H", d[nameoff + off:nameoff + off + 2])
        return d[nameoff + off + 6:nameoff + off + 6 + 2 * n].decode("utf-16-be")
    def walk(i):
        e = tree + i * esz
        noff, flags = struct.unpack(">IH", d[e:e + 6])
        if flags & 2:
            cnt, first = struct.unpack(">II", d[e + 6:e + 14])
            for c in range(first, first + cnt):
                walk(c)
            return
        nm = name(noff)
        if nm not in names:
            return
        doff, = struct.unpack(">I", d[e + 10:e + 14])
        sz, = struct.unpack(">I", d[data + doff:data + doff + 4])
        blob = d[data + doff + 4:data + doff + 4 + sz]
        if flags & 4:
            sys.exit("fetch-calls: %s: zstd-compressed entry, not supported" % nm)
        if flags & 1:
            blob = zlib.decompress(blob[4:])
        open(os.path.join(out, nm), "wb").write(blob)
        names.remove(nm)
    walk(0)
    if names:
        sys.exit("fetch-calls: %s lacks %s" % (bundle, " ".join(names)))
EOF
for f in duck dog chickens horse cat LRBark_1_LA_cut LRBark_3_LA_cut; do
    echo "$dir/$f.ogg"
done
