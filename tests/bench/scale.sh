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
# round and binary one line per step:
#   files bin step wall_s peak_rss_mb wall/floor
# and the lines "files bin floor wall_s" and "files bin manifest bytes";
# at the end, per binary, the medians over the rounds (each step's wall
# time, its ratio to the floor and its peak RSS; the floor) and, from one
# size to the next, the ratio of each step's median wall time and of its
# median peak RSS (linear is 2.0 when the sizes double).
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

# measure WHAT CMD...: run CMD under GNU time; sets WALL (s) and RSS (MB).
# A kiln exit status other than 0 fails the benchmark: it must measure
# runs that did their work.
measure() {
	local what=$1 out
	shift
	out=$T/time.out
	if ! "$TIME" -f '%e %M' -o "$out" "$@" >"$T/run.log" 2>&1; then
		echo "scale.sh: $what failed:" >&2
		cat "$T/run.log" >&2
		exit 1
	fi
	read -r WALL RSS <"$out"
	RSS=$(awk -v k="$RSS" 'BEGIN { printf "%.1f", k / 1024 }')
}

floor() { find "$1" -type f -printf '%s %T@\n' >/dev/null; }

echo "kiln ${OPTS[*]} -q; $(nproc) cores; seed $SEED; page cache warm; $RUNS round(s)"
for i in "${!KILNS[@]}"; do echo "bin $((i + 1)): ${KILNS[$i]}"; done
printf '%-8s %-3s %-11s %9s %12s %11s\n' files bin step wall_s peak_rss_mb wall/floor
# steps N BIN KILN: every step on a fresh copy of the tree $T/src
steps() {
	local n=$1 b=$2 KILN=$3 d=$T/tree f1 mbytes left fl
	rm -rf "$d"
	cp -a "$T/src" "$d"
	floor "$d" # warm the page cache's inodes the same way for every step
	measure cold "$KILN" "${OPTS[@]}" -q "$d"
	cold_w=$WALL cold_r=$RSS
	# The floor on the tree as a re-run sees it (sources and siblings):
	# median of 3, after one warm-up.
	floor "$d"
	fl=()
	for _ in 1 2 3; do measure floor bash -c "find \"\$1\" -type f -printf '%s %T@\n' >/dev/null" _ "$d"; fl+=("$WALL"); done
	FLOOR=$(printf '%s\n' "${fl[@]}" | sort -n | sed -n 2p)
	line() {
		awk -v n="$n" -v b="$b" -v s="$1" -v w="$2" -v r="$3" -v f="$FLOOR" 'BEGIN {
			x = (f > 0) ? sprintf("%.1f", w / f) : "-"
			printf "%-8s %-3s %-11s %9.2f %12.1f %11s\n", n, b, s, w, r, x }'
		echo "$n $b $1 $2 $3 $FLOOR" >>"$T/results"
	}
	line cold "$cold_w" "$cold_r"
	measure unchanged "$KILN" "${OPTS[@]}" -q "$d"
	line unchanged "$WALL" "$RSS"
	# One file changed: same size, new bytes (content decides, not mtimes).
	f1=$(find "$d" -type f -name 'f000000.*' | head -n 1)
	/usr/bin/python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[0]=(b[0]+1)%256 if b[0]!=32 else 33; open(p,"wb").write(b)' "$f1"
	measure one-changed "$KILN" "${OPTS[@]}" -q "$d"
	line one-changed "$WALL" "$RSS"
	measure check "$KILN" check -q "$d"
	line check "$WALL" "$RSS"
	mbytes=$(stat -c %s "$d/kiln-manifest.json" 2>/dev/null || echo 0)
	measure clean "$KILN" clean -q "$d"
	line clean "$WALL" "$RSS"
	left=$(find "$d" -type f | wc -l)
	[ "$left" -eq "$n" ] || { echo "scale.sh: clean left $left files, not $n" >&2; exit 1; }
	printf '%-8s %-3s %-11s %9.2f\n' "$n" "$b" floor "$FLOOR"
	printf '%-8s %-3s %-11s %9s\n' "$n" "$b" manifest "$mbytes"
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
for n, b, step, wall, rss, floor in rows:
    runs.setdefault((b, step, int(n)), []).append((float(wall), float(rss), float(floor)))
sizes = sorted({int(r[0]) for r in rows})
bins = sorted({r[1] for r in rows}, key=int)
med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) for k, v in runs.items()}


def cell(b, s, n):
    m = med.get((b, s, n))
    return "-" if not m else "%.2f (%.1f) %.0f" % (m[0], m[0] / m[2] if m[2] else 0, m[1])


for b in bins:
    print(f"bin {b}: medians of {len(runs[(b, 'cold', sizes[0])])} round(s): "
          "wall_s (x floor) peak_rss_mb")
    print("%-11s" % "step" + "".join("%21s" % n for n in sizes))
    for s in steps:
        print("%-11s" % s + "".join("%21s" % cell(b, s, n) for n in sizes))
    print("%-11s" % "floor" + "".join("%21s" % ("%.2f" % med[(b, "cold", n)][2]) for n in sizes))
    if len(sizes) < 2:
        continue
    print(f"bin {b}: each size against the one before: wall x, peak RSS x")
    print("%-11s" % "step" + "".join("%21s" % f"{a}->{c}" for a, c in zip(sizes, sizes[1:])))
    for s in steps + ["floor"]:
        cells = []
        for a, c in zip(sizes, sizes[1:]):
            x, y = med.get((b, "cold" if s == "floor" else s, a)), med.get((b, "cold" if s == "floor" else s, c))
            if not x or not y:
                cells.append("-")
            elif s == "floor":
                cells.append("%.2f" % (y[2] / x[2]))
            else:
                cells.append("%.2f %.2f" % (y[0] / x[0], y[1] / x[1]))
        print("%-11s" % s + "".join("%21s" % c for c in cells))
EOF
