#!/usr/bin/env bash
# scale.sh - what a run costs as the tree grows: for each size, build a tree
# of small text files (200 B-5 KB, in about 3,000 directories) from a seed,
# then time and measure the peak RSS of a cold run, an unchanged re-run, a
# re-run with one file changed, `kiln check` and `kiln clean`, next to the
# floor: one stat of every file (`find DIR -type f -printf '%s %T@\n'`, on
# the tree with its siblings, as a re-run sees it, page cache warm).
#
# A benchmark, not a test: it reports, it never fails on speed.  The same
# SEED and size always give the same tree (paths, sizes and bytes).
#
# usage: tests/bench/scale.sh [KILN_BINARY...]
#   With several binaries (say main's and a branch's), each size's tree is
#   built once and each binary runs every step on its own fresh copy of it,
#   in turn, RUNS times: compare them as ratios within one run.
#   SIZES="25000 50000"   the tree sizes (default 25000 50000 100000 200000 400000)
#   RUNS=1                rounds of all binaries per size
#   SEED=1                the generator's seed
#   KILN_OPTS="--gzip"    the options of every compress run (default: gzip only)
#   SCALE_KEEP=DIR        build the trees under DIR and leave the last copy there (cleaned)
#
# Output: a header line naming each binary by its number, then per size,
# round and binary one line per step, with the floor measured right before
# it and the step's ratios to it:
#   files bin step wall_s cpu_s rss_mb floor_s floor_cpu x_wall x_cpu
# (CPU is user + system time: on a shared machine it moves less than the
# wall time) and the line "files bin manifest bytes"; at the end, per
# binary, the medians over the rounds and, from one size to the next, the
# ratio of each step's median wall time, CPU time and peak RSS (linear is
# 2.0 when the sizes double).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 0 ]; then KILNS=("$@"); else KILNS=("${KILN:-$here/../../build/kiln}"); fi
RUNS=${RUNS:-1}
SIZES=${SIZES:-25000 50000 100000 200000 400000}
SEED=${SEED:-1}
read -r -a OPTS <<<"${KILN_OPTS:---gzip}"
TIME=/usr/bin/time
for k in "${KILNS[@]}"; do
	[ -x "$k" ] || { echo "scale.sh: no kiln binary at $k" >&2; exit 2; }
done
[ -x "$TIME" ] || { echo "scale.sh: needs GNU time at $TIME (Debian: time)" >&2; exit 2; }

if [ -n "${SCALE_KEEP:-}" ]; then
	T=$SCALE_KEEP
	mkdir -p "$T"
else
	T=$(mktemp -d "${TMPDIR:-/tmp}/kiln-scale.XXXXXX")
	trap 'rm -rf "$T"' EXIT
fi

# make_tree DIR N: N files, deterministic from SEED and N.  Directories are
# about N/65 (3,000 at 200,000 files), two levels deep; each file is a slice
# of a word text (so it compresses like prose or markup) of 200..5120 bytes.
make_tree() {
	/usr/bin/python3 - "$1" "$2" "$SEED" <<'EOF'
import os, random, sys
top, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed * 1000003 + n)
words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
         for _ in range(2000)]
pool = " ".join(rng.choice(words) for _ in range(400000)).encode()
ndirs = max(1, n // 65)
dirs = []
for d in range(ndirs):
    p = os.path.join(top, "s%02d" % (d % 50), "d%04d" % d)
    os.makedirs(p, exist_ok=True)
    dirs.append(p)
exts = [".html", ".css", ".js", ".json", ".svg", ".txt"]
for i in range(n):
    size = rng.randint(200, 5120)
    off = rng.randint(0, len(pool) - size)
    name = "f%06d%s" % (i, exts[i % len(exts)])
    with open(os.path.join(dirs[i % ndirs], name), "wb") as f:
        f.write(pool[off:off + size])
EOF
}

# measure WHAT CMD...: run CMD under GNU time; sets WALL and CPU (user +
# system, s) and RSS (MB).  A kiln exit status other than 0 fails the
# benchmark: it must measure runs that did their work.
measure() {
	local what=$1 out u s
	shift
	out=$T/time.out
	if ! "$TIME" -f '%e %U %S %M' -o "$out" "$@" >"$T/run.log" 2>&1; then
		echo "scale.sh: $what failed:" >&2
		cat "$T/run.log" >&2
		exit 1
	fi
	read -r WALL u s RSS <"$out"
	CPU=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
	RSS=$(awk -v k="$RSS" 'BEGIN { printf "%.1f", k / 1024 }')
}

# floor DIR: the floor on DIR as it is now (a re-run sees sources and
# siblings): FW and FC, the medians of 3 runs' wall and CPU time, after
# sync(1) and a warm-up.  Measured right before each step it is compared with, so that
# the two see the same machine (it is shared and its load moves).
floor() {
	local w=() c=() _
	sync # the last step's writes on disk, not written back while this one runs
	find "$1" -type f -printf '%s %T@\n' >/dev/null
	for _ in 1 2 3; do
		measure floor bash -c "find \"\$1\" -type f -printf '%s %T@\n' >/dev/null" _ "$1"
		w+=("$WALL")
		c+=("$CPU")
	done
	FW=$(printf '%s\n' "${w[@]}" | sort -n | sed -n 2p)
	FC=$(printf '%s\n' "${c[@]}" | sort -n | sed -n 2p)
}

echo "kiln ${OPTS[*]} -q; $(nproc) cores; seed $SEED; page cache warm; $RUNS round(s); load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!KILNS[@]}"; do echo "bin $((i + 1)): ${KILNS[$i]}"; done
printf '%-8s %-3s %-11s %8s %8s %8s %8s %8s %7s %7s\n' files bin step wall_s cpu_s rss_mb \
	floor_s floor_cpu x_wall x_cpu
# step N BIN NAME: print and keep the line of step NAME, measured with the
# floor just before it (FW, FC).
step_line() {
	awk -v n="$1" -v b="$2" -v s="$3" -v w="$WALL" -v c="$CPU" -v r="$RSS" -v fw="$FW" \
		-v fc="$FC" 'BEGIN {
		printf "%-8s %-3s %-11s %8.2f %8.2f %8.1f %8.2f %8.2f %7.1f %7.1f\n", n, b, s, w, c, r,
			fw, fc, (fw > 0 ? w / fw : 0), (fc > 0 ? c / fc : 0) }'
	echo "$1 $2 $3 $WALL $CPU $RSS $FW $FC" >>"$T/results"
}
# steps N BIN KILN: every step on a fresh copy of the tree $T/src
steps() {
	local n=$1 b=$2 KILN=$3 d=$T/tree f1 mbytes left cw cc cr
	rm -rf "$d"
	cp -a "$T/src" "$d"
	# the copy (and the last round's removal) written back, and its inodes
	# in the cache, as for every step: a cold run after minutes of another
	# round's writes took 2.5 times as long as the first round's
	sync
	find "$d" -type f -printf '%s %T@\n' >/dev/null
	measure cold "$KILN" "${OPTS[@]}" -q "$d"
	cw=$WALL cc=$CPU cr=$RSS
	floor "$d"
	WALL=$cw CPU=$cc RSS=$cr step_line "$n" "$b" cold
	floor "$d"
	measure unchanged "$KILN" "${OPTS[@]}" -q "$d"
	step_line "$n" "$b" unchanged
	# One file changed: same size, new bytes (content decides, not mtimes).
	f1=$(find "$d" -type f -name 'f000000.*' | head -n 1)
	/usr/bin/python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[0]=(b[0]+1)%256 if b[0]!=32 else 33; open(p,"wb").write(b)' "$f1"
	floor "$d"
	measure one-changed "$KILN" "${OPTS[@]}" -q "$d"
	step_line "$n" "$b" one-changed
	floor "$d"
	measure check "$KILN" check -q "$d"
	step_line "$n" "$b" check
	mbytes=$(stat -c %s "$d/kiln-manifest.json" 2>/dev/null || echo 0)
	floor "$d"
	measure clean "$KILN" clean -q "$d"
	step_line "$n" "$b" clean
	left=$(find "$d" -type f | wc -l)
	[ "$left" -eq "$n" ] || { echo "scale.sh: clean left $left files, not $n" >&2; exit 1; }
	printf '%-8s %-3s %-11s %8s\n' "$n" "$b" manifest "$mbytes"
}
: >"$T/results"
for n in $SIZES; do
	rm -rf "$T/src" "$T/tree"
	mkdir -p "$T/src"
	make_tree "$T/src" "$n"
	got=$(find "$T/src" -type f | wc -l)
	[ "$got" -eq "$n" ] || { echo "scale.sh: built $got files, not $n" >&2; exit 1; }
	for _ in $(seq "$RUNS"); do
		for i in "${!KILNS[@]}"; do
			steps "$n" "$((i + 1))" "${KILNS[$i]}"
		done
	done
done
rm -rf "$T/src"

# The medians of the rounds, and what each doubling of the tree costs.
/usr/bin/python3 - "$T/results" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
steps = ["cold", "unchanged", "one-changed", "check", "clean"]
runs = {}
for n, b, step, wall, cpu, rss, fw, fc in rows:
    w, c, r, fw, fc = map(float, (wall, cpu, rss, fw, fc))
    runs.setdefault((b, step, int(n)), []).append(
        (w, c, r, w / fw if fw else 0, c / fc if fc else 0, fw, fc))
sizes = sorted({int(r[0]) for r in rows})
bins = sorted({r[1] for r in rows}, key=int)
med = {k: tuple(statistics.median(x[i] for x in v) for i in range(7)) for k, v in runs.items()}


def cell(b, s, n):
    m = med.get((b, s, n))
    return "-" if not m else "%.2f %.2f (%.1f %.1f) %.0f" % (m[0], m[1], m[3], m[4], m[2])


W = 31
for b in bins:
    print(f"bin {b}: medians of {len(runs[(b, 'cold', sizes[0])])} round(s): wall_s cpu_s "
          "(wall x floor, cpu x floor) peak_rss_mb")
    print("%-11s" % "step" + "".join("%*s" % (W, n) for n in sizes))
    for s in steps:
        print("%-11s" % s + "".join("%*s" % (W, cell(b, s, n)) for n in sizes))
    print("%-11s" % "floor" + "".join(
        "%*s" % (W, "%.2f %.2f" % (med[(b, "unchanged", n)][5], med[(b, "unchanged", n)][6]))
        for n in sizes))
    if len(sizes) < 2:
        continue
    print(f"bin {b}: each size against the one before: wall x, cpu x, peak RSS x")
    print("%-11s" % "step" + "".join("%*s" % (W, f"{a}->{c}") for a, c in zip(sizes, sizes[1:])))
    for s in steps + ["floor"]:
        cells = []
        for a, c in zip(sizes, sizes[1:]):
            x = med.get((b, "unchanged" if s == "floor" else s, a))
            y = med.get((b, "unchanged" if s == "floor" else s, c))
            if not x or not y:
                cells.append("-")
            elif s == "floor":
                cells.append("%.2f %.2f" % (y[5] / x[5], y[6] / x[6]))
            else:
                cells.append("%.2f %.2f %.2f" % (y[0] / x[0], y[1] / x[1], y[2] / x[2]))
        print("%-11s" % s + "".join("%*s" % (W, c) for c in cells))
EOF
