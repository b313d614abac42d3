#!/usr/bin/env bash
# fetch_wdas_cloud.sh: Walt Disney Animation Studios' cloud data set, the
# volume rendering community's standard cloud, at the resolution asked for.
#
# Contract:
#   scripts/fetch_wdas_cloud.sh [DIR] [sixteenth|eighth|quarter|half|full]
#   (default DIR: .dev/wdas, git-ignored; default resolution: sixteenth)
#   writes DIR/wdas_cloud_<res>.vdb (wdas_cloud.vdb for full), checks its size
#   and MD5, prints its path. Idempotent: a complete, verified file is kept.
#
# Source: https://assets.disneyanimation.com/wdas_cloud.zip (2,983,590,864
# bytes, MD5 d8a216f2fc9b68366b1fa5cb1a1dd350), as recorded by the DataLad
# dataset datalad-datasets/disneyanimation-cloud (whose git-annex keys give
# the sizes and MD5s below); licence CC BY-SA 3.0, Copyright 2017 Disney
# Enterprises, Inc. Nothing of it is kept in this repository. Without a
# network: the sixteenth is also, byte for byte, a blob in the history of
# public repositories (git object 668ff4aeec890b7a18321c3c488e2c5d37ba1a45,
# e.g. sergeneren/Volumetric-Path-Tracer, assets/wdas_cloud_sixteenth.vdb);
# a file put at DIR/wdas_cloud_sixteenth.vdb from anywhere is kept when its
# size and MD5 are the published ones. The zip is read
# over HTTP ranges when the server allows (python3's zipfile over a ranged
# reader: only the asked member is transferred), else downloaded whole to
# DIR/wdas_cloud.zip (resumable) and the member extracted.
#
# Then: bin/render --volume DIR/wdas_cloud_sixteenth.vdb -o cloud.png
# (a .vdb gets the cloud's default light: docs/scenes.md, "Lights").
set -euo pipefail
dir=${1:-.dev/wdas}
res=${2:-sixteenth}
url=https://assets.disneyanimation.com/wdas_cloud.zip
zip_md5=d8a216f2fc9b68366b1fa5cb1a1dd350
case "$res" in
    sixteenth) name=wdas_cloud_sixteenth.vdb size=1631620 md5=24d4aa07ad6eda389c9d97d780c2414e ;;
    eighth) name=wdas_cloud_eighth.vdb size=10032545 md5=7b21e4df602bbb56c482eaf37ebb1673 ;;
    quarter) name=wdas_cloud_quarter.vdb size=68366243 md5=e657facb28150c11f33aebddaff84160 ;;
    half) name=wdas_cloud_half.vdb size=491820521 md5=be4548948cf51275d5048f99d9c7bacc ;;
    full) name=wdas_cloud.vdb size=2929823546 md5=aac926390727f3e4aefc2fc1dbf5e605 ;;
    *) echo "fetch_wdas_cloud.sh: unknown resolution '$res'; expected sixteenth, eighth, quarter, half or full" >&2; exit 2 ;;
esac
mkdir -p "$dir"
out="$dir/$name"
verified() { [ -f "$1" ] && [ "$(stat -c %s "$1")" = "$2" ] && [ "$(md5sum "$1" | cut -d' ' -f1)" = "$3" ]; }
if verified "$out" "$size" "$md5"; then echo "$out"; exit 0; fi
rm -f "$out"
# 1. only the member, over HTTP ranges
if python3 - "$url" "wdas_cloud/$name" "$out.part" <<'PY' 2>/dev/null; then mv "$out.part" "$out"; fi
import io, sys, urllib.request, zipfile
url, member, dst = sys.argv[1:4]
class Ranged(io.RawIOBase):
    def __init__(self, url):
        req = urllib.request.Request(url, method="HEAD")
        with urllib.request.urlopen(req, timeout=30) as r:
            if r.headers.get("Accept-Ranges") != "bytes": raise SystemExit(1)
            self.size = int(r.headers["Content-Length"])
        self.pos = 0
    def seekable(self): return True
    def readable(self): return True
    def tell(self): return self.pos
    def seek(self, off, whence=0):
        self.pos = off if whence == 0 else self.pos + off if whence == 1 else self.size + off
        return self.pos
    def readinto(self, b):
        if self.pos >= self.size: return 0
        end = min(self.size, self.pos + len(b)) - 1
        req = urllib.request.Request(url, headers={"Range": "bytes=%d-%d" % (self.pos, end)})
        with urllib.request.urlopen(req, timeout=60) as r: data = r.read()
        b[:len(data)] = data
        self.pos += len(data)
        return len(data)
with zipfile.ZipFile(io.BufferedReader(Ranged(url), 1 << 20)) as z, z.open(member) as src, open(dst, "wb") as f:
    while True:
        chunk = src.read(1 << 20)
        if not chunk: break
        f.write(chunk)
PY
# 2. else the whole zip, resumable, checked, then the member
if [ ! -f "$out" ]; then
    rm -f "$out.part"
    zip="$dir/wdas_cloud.zip"
    curl -fL -C - -o "$zip" "$url" ||
        { echo "fetch_wdas_cloud.sh: could not download $url (no network? run this elsewhere and carry $dir)" >&2; exit 1; }
    [ "$(md5sum "$zip" | cut -d' ' -f1)" = "$zip_md5" ] ||
        { echo "fetch_wdas_cloud.sh: $zip does not have the MD5 $zip_md5: remove it and run again" >&2; exit 1; }
    python3 -c 'import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as s, open(sys.argv[3], "wb") as d: shutil.copyfileobj(s, d)' \
        "$zip" "wdas_cloud/$name" "$out"
fi
verified "$out" "$size" "$md5" ||
    { echo "fetch_wdas_cloud.sh: $out is not the published file ($size bytes, MD5 $md5)" >&2; rm -f "$out"; exit 1; }
echo "$out"
