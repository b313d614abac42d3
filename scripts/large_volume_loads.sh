#!/bin/sh
# Times the loads of large volumes and their host memory (docs/large-volumes.md,
# "Loading large volumes"): for each file, `render --volume FILE --print-scene` under
# /usr/bin/time -v from a warm page cache, REPS times, printing the load
# time the tool reports (load_s), the command's CPU time and its maximum
# resident set, and the same for a 32^3 volume as the process' baseline.
#
#   sh scripts/large_volume_loads.sh DIR [REPS]
#
# DIR gets the files when they are not there yet (scripts/make_large_volume.py:
# 1024x1024x512 and 1024x1024x432 int16, 512x512x1024 f32, 32^3 int16; about
# 3 GB of disk). Run from the repository root after make.
set -eu
dir=${1:?usage: sh scripts/large_volume_loads.sh DIR [REPS]}
reps=${2:-3}
mkdir -p "$dir"
make_vol() { [ -f "$dir/$1.raw" ] || python3 scripts/make_large_volume.py "$dir/$1" "$2" "$3" "$4" "$5"; }
make_vol small32 32 32 32 i16
make_vol ct1g 1024 1024 512 i16
make_vol ct906 1024 1024 432 i16
make_vol f1g 512 512 1024 f32
echo "host $(hostname), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1e6}' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg)"
./bin/render --version | head -n 1
for v in small32 ct1g ct906 f1g; do
    cat "$dir/$v.raw" > /dev/null # warm page cache
    i=0
    while [ "$i" -lt "$reps" ]; do
        out=$(/usr/bin/time -v ./bin/render --volume "$dir/$v.mhd" --transfer ct --print-scene 2>&1)
        printf '%s: load_s %s, user %s s, sys %s s, max RSS %s kB\n' "$v" \
            "$(printf '%s\n' "$out" | sed -n 's/^load_s //p')" \
            "$(printf '%s\n' "$out" | sed -n 's/.*User time (seconds): //p')" \
            "$(printf '%s\n' "$out" | sed -n 's/.*System time (seconds): //p')" \
            "$(printf '%s\n' "$out" | sed -n 's/.*Maximum resident set size (kbytes): //p')"
        i=$((i + 1))
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
