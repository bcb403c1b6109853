#!/bin/sh
# cross/elf-libs.sh TRIPLET DEST FILE... — copy into DEST the shared
# libraries that the ELF files FILE... need (DT_NEEDED, recursively) and
# their program interpreter, each at the path the foreign loader looks it up
# (/lib/TRIPLET, /usr/lib/TRIPLET), as `ldd` cannot list them for a foreign
# architecture.  Libraries come from the host's multiarch directories (the
# :arm64 packages that make arm64-deps installed), or from DEST itself (a
# library already there, e.g. unpacked into it, is taken as it is).  Files that are not ELF
# (scripts) are passed over.  Fails naming a library it cannot find.
set -eu
triplet=$1 dest=$2
shift 2
dirs="/lib/$triplet /usr/lib/$triplet"
todo=$(mktemp)
seen=$(mktemp)
trap 'rm -f "$todo" "$seen"' EXIT
for f in "$@"; do
    head -c 4 "$f" 2>/dev/null | grep -q 'ELF' && echo "$f" >> "$todo"
done
# Each file's interpreter and needed names; each found library joins the queue once.
while [ -s "$todo" ]; do
    f=$(head -n 1 "$todo")
    sed -i 1d "$todo"
    interp=$(readelf -l "$f" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
    if [ -n "$interp" ] && [ ! -e "$dest$interp" ]; then
        mkdir -p "$dest$(dirname "$interp")"
        cp -L "$interp" "$dest$interp"
    fi
    for n in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        grep -qx "$n" "$seen" && continue
        echo "$n" >> "$seen"
        lib=""
        for d in $dirs; do
            [ -e "$dest$d/$n" ] && { lib=$dest$d/$n; break; }
        done
        if [ -n "$lib" ]; then
            echo "$lib" >> "$todo"
            continue
        fi
        for d in $dirs; do
            [ -e "$d/$n" ] && { lib=$d/$n; break; }
        done
        [ -n "$lib" ] || { echo "elf-libs: $n (needed by $f) not found in $dirs" >&2; exit 1; }
        mkdir -p "$dest$(dirname "$lib")"
        cp -L "$lib" "$dest$lib"
        echo "$dest$lib" >> "$todo"
    done
done
