# shard_lib.sh - helpers for the shard tests (sourced after lib.sh, bash).

# The shard of relative path REL among N, worked out here from the rule the
# README documents (FNV-1a, 64 bits, over the path's bytes; mod N; plus 1),
# not asked of kiln.
shard_of() { # shard_of REL N
	printf '%s\n' "$1" | shards_of "$2" | cut -d' ' -f1
}
# For each path on stdin (one a line): "SHARD PATH".
shards_of() { # shards_of N
	/usr/bin/python3 -c '
import sys
for line in sys.stdin.buffer:
    path = line.rstrip(b"\n")
    h = 0xcbf29ce484222325
    for b in path:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    sys.stdout.buffer.write(b"%d %s\n" % (h % int(sys.argv[1]) + 1, path))' "$1"
}

# Every regular file under DIR: path, permission bits, mtime (ns) and
# SHA-256, sorted: content and the metadata servers build ETags from (but
# the artifacts' mtimes: the time they were written; and the index beside
# the manifest, which records inodes, and which a merge does not write).
meta_digest() { # meta_digest DIR
	(cd "$1" && find . -type f ! -name .kiln-manifest.json.index \( \( -name kiln-manifest.json -o -name 'kiln.*.conf' \) -printf '%P %m\n' -o -printf '%P %m %T@\n' \) | LC_ALL=C sort >"$T/.meta.$$" &&
		find . -type f ! -name .kiln-manifest.json.index -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum &&
		cat "$T/.meta.$$" && rm -f "$T/.meta.$$")
}

# What a runner's artifact upload and download would carry: every file of
# RUN that SRC (the tree it started from) does not have, copied into DEST.
# Without --keep-meta, as actions/upload-artifact does, mode and mtime are
# lost (new files, umask mode, current time).
gather() { # gather SRC RUN DEST [--keep-meta]
	local src=$1 run=$2 dest=$3 keep=${4:-}
	(cd "$run" && find . -type f -printf '%P\n' | LC_ALL=C sort) >"$T/.run.list"
	(cd "$src" && find . -type f -printf '%P\n' | LC_ALL=C sort) >"$T/.src.list"
	LC_ALL=C comm -23 "$T/.run.list" "$T/.src.list" >"$T/.new.list"
	if [ "$keep" = --keep-meta ]; then
		rsync -a --files-from="$T/.new.list" "$run/" "$dest/"
	else
		(cd "$run" && tr '\n' '\0' <"$T/.new.list" | xargs -0 -r cp --parents -t "$dest")
	fi
}

# A tree of real work for four shards: the example site and 48 text files
# of different sizes (made here, the same bytes every time).
make_tree() { # make_tree DEST
	fresh_site "$1"
	/usr/bin/python3 - "$1/gen" <<'PY'
import os, random, sys
top = sys.argv[1]
rnd = random.Random(16)
words = "const let var function return if else for while await async import export default class extends new this null true false".split()
for i in range(48):
    d = os.path.join(top, "part%d" % (i % 6))
    os.makedirs(d, exist_ok=True)
    n = 2000 + (i * 997) % 30000
    text = " ".join(rnd.choice(words) + str(rnd.randrange(50)) for _ in range(n // 6))
    with open(os.path.join(d, "mod%02d.js" % i), "w") as f:
        f.write(text + "\n")
PY
	find "$1/gen" -exec touch -d '2024-05-06 07:08:09.5' {} +
}
