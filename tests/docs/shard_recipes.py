#!/usr/bin/env python3
"""shard_recipes.py - run a CI recipe of docs/shards.md the way its CI would.

usage: shard_recipes.py TOP ID WORK BIN

ID is the block's (commands.py): the GitHub Actions matrix or the GitLab
`parallel:` recipe.  Each job runs in a directory of its own under WORK
(WORK/shard-N for the Nth shard, WORK/merge), its `run:` or `script:`
commands with bash -e and BIN first on PATH (where commands.sh put kiln
and its npm and npx stand-ins).

GitHub: the shard job runs once per value of its matrix, with
${{ matrix.NAME }} put in; actions/checkout does nothing (the directory is
the checkout); actions/upload-artifact copies the files its `path:` globs
match, relative to their common directory as the action keeps them,
without mode or mtime (artifacts keep neither), under the artifact's name;
the merge job's actions/download-artifact with `merge-multiple` copies
every artifact its `pattern` matches into its `path`.
GitLab: the job with `parallel: N` runs N times with CI_NODE_INDEX (1 to
N) and CI_NODE_TOTAL set; its `artifacts: paths:` are copied in turn into
the directory of the job that `needs` it before that job's script.
Exits 1 at the first step that fails or that the recipe does not shape as
described, saying which.
"""
import fnmatch
import glob
import os
import shutil
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import commands  # noqa: E402


def need(cond, what):
    if not cond:
        raise SystemExit("shard_recipes.py: recipe: " + what)


def run(cmd, cwd, path, env=None):
    print("shard_recipes.py: %s: $ %s" % (os.path.basename(cwd), cmd), file=sys.stderr)
    e = dict(os.environ, PATH=path + ":" + os.environ["PATH"], **(env or {}))
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", cmd], cwd=cwd, env=e)
    need(r.returncode == 0, "%r exited %d" % (cmd, r.returncode))


def copy_plain(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)


def github(recipe, work, path):
    jobs = recipe["jobs"]
    shard = next(j for j in jobs.values() if "strategy" in j)
    merge = next(j for j in jobs.values() if "needs" in j)
    (key, values), = shard["strategy"]["matrix"].items()
    artifacts = os.path.join(work, "artifacts")
    for v in values:
        d = os.path.join(work, "shard-%s" % v)
        os.makedirs(d)
        sub = lambda s: s.replace("${{ matrix.%s }}" % key, str(v))
        for step in shard["steps"]:
            uses = step.get("uses", "")
            if "run" in step:
                run(sub(step["run"]), d, path)
            elif uses.startswith("actions/upload-artifact@"):
                w = step["with"]
                globs = [sub(p.strip()) for p in w["path"].split("\n") if p.strip()]
                tops = [p.split("*", 1)[0].rstrip("/") for p in globs]
                base = os.path.commonpath(tops)
                out = os.path.join(artifacts, sub(w["name"]))
                n = 0
                for g in globs:
                    for f in glob.glob(os.path.join(d, g), recursive=True):
                        if os.path.isfile(f):
                            copy_plain(f, os.path.join(out, os.path.relpath(f, os.path.join(d, base))))
                            n += 1
                need(n > 0, "shard %s: upload-artifact found no file" % v)
            else:
                need(uses.startswith("actions/checkout@"), "a step this runner knows: %r" % step)
    d = os.path.join(work, "merge")
    os.makedirs(d)
    for step in merge["steps"]:
        uses = step.get("uses", "")
        if "run" in step:
            run(step["run"], d, path)
        elif uses.startswith("actions/download-artifact@"):
            w = step["with"]
            need(w.get("merge-multiple") is True, "download-artifact with merge-multiple")
            names = [a for a in sorted(os.listdir(artifacts)) if fnmatch.fnmatch(a, w["pattern"])]
            need(len(names) == len(values), "the pattern matches every shard's artifact")
            for a in names:
                top = os.path.join(artifacts, a)
                for dp, _, files in os.walk(top):
                    for f in files:
                        copy_plain(os.path.join(dp, f), os.path.join(d, w["path"], os.path.relpath(os.path.join(dp, f), top)))
        else:
            need(uses.startswith("actions/checkout@"), "a step this runner knows: %r" % step)


def gitlab(recipe, work, path):
    par = next(n for n, j in recipe.items() if "parallel" in j)
    job = recipe[par]
    merge = next(j for j in recipe.values() if par in j.get("needs", []))
    total = int(job["parallel"])
    m = os.path.join(work, "merge")
    os.makedirs(m)
    for i in range(1, total + 1):
        d = os.path.join(work, "shard-%d" % i)
        os.makedirs(d)
        for cmd in job["script"]:
            run(cmd, d, path, {"CI_NODE_INDEX": str(i), "CI_NODE_TOTAL": str(total)})
        for p in job["artifacts"]["paths"]:
            for dp, _, files in os.walk(os.path.join(d, p)):
                for f in files:
                    src = os.path.join(dp, f)
                    copy_plain(src, os.path.join(m, os.path.relpath(src, d)))
    for cmd in merge["script"]:
        run(cmd, m, path)


def main(argv):
    if len(argv) != 5:
        raise SystemExit(__doc__.split("\n\n")[1])
    top, ident, work, path = argv[1:]
    recipe = yaml.safe_load(commands.find(top, ident).text)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if "jobs" in recipe:
        github(recipe, work, path)
    else:
        gitlab(recipe, work, path)


if __name__ == "__main__":
    main(sys.argv)
