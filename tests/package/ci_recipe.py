#!/usr/bin/env python3
"""ci_recipe.py - run a CI recipe of the README the way its CI would.

usage: ci_recipe.py TOP github|gitlab PROJECT   run the recipe in PROJECT
       ci_recipe.py TOP github --step ID        print step ID's command

TOP is the source tree; the recipes are the README's blocks
README.md#github-actions and README.md#gitlab-ci (tests/docs/commands.py).
github: the YAML block is a list of steps; each
step with `run:` runs in PROJECT with bash -e, its `env:` added and
GITHUB_OUTPUT as the environment gives it.  The actions/cache step must
keep the directory that the build's KILN_CACHE_DIR names, keyed by the
output of the step with id `kiln`.
gitlab: the block holds one job; its `script:` lines
run in PROJECT with its `variables:`, and its cache must keep the
KILN_CACHE_DIR directory, keyed by package-lock.json.
Exits 1 at the first recipe that does not have that shape or command that
fails, saying which.
"""
import os
import subprocess
import sys

import yaml


def block(top, ident):
    """The text of the README's command block IDENT."""
    sys.path.insert(0, os.path.join(top, "tests", "docs"))
    import commands
    return commands.find(top, ident).text


def need(cond, what):
    if not cond:
        raise SystemExit(f"ci_recipe.py: recipe: {what}")


def run(cmd, project, env):
    print(f"ci_recipe.py: $ {cmd}", file=sys.stderr)
    r = subprocess.run(["bash", "-e", "-c", cmd], cwd=project, env=dict(os.environ, **env))
    need(r.returncode == 0, f"{cmd!r} exited {r.returncode}")


def github(top, project, step):
    steps = yaml.safe_load(block(top, "README.md#github-actions"))
    by_id = {s["id"]: s for s in steps if "id" in s}
    need("kiln" in by_id and "run" in by_id["kiln"], "a step with id kiln that runs a command")
    if step:
        print(by_id[step]["run"])
        return
    cache = [s for s in steps if str(s.get("uses", "")).startswith("actions/cache@")]
    need(len(cache) == 1, "one actions/cache step")
    w = cache[0]["with"]
    prefix = "${{ steps.kiln.outputs.key }}"
    need(w["key"].startswith(prefix + "-"), "the cache key starts with the kiln step's key")
    need(w["restore-keys"] == prefix + "-", "restore-keys is the kiln step's key")
    dirs = {s.get("env", {}).get("KILN_CACHE_DIR") for s in steps} - {None}
    need(dirs == {w["path"]}, "KILN_CACHE_DIR is the cached path")
    for s in steps:
        if "run" in s:
            run(s["run"], project, {k: str(v) for k, v in s.get("env", {}).items()})


def gitlab(top, project):
    jobs = yaml.safe_load(block(top, "README.md#gitlab-ci"))
    need(len(jobs) == 1, "one job")
    job = next(iter(jobs.values()))
    env = {k: str(v) for k, v in job.get("variables", {}).items()}
    need(job["cache"]["paths"] == [env.get("KILN_CACHE_DIR")], "the cache keeps KILN_CACHE_DIR")
    need("package-lock.json" in job["cache"]["key"]["files"], "the cache is keyed by package-lock.json")
    for cmd in job["script"]:
        run(cmd, project, env)


def main(argv):
    if len(argv) == 5 and argv[2] == "github" and argv[3] == "--step":
        github(argv[1], None, argv[4])
    elif len(argv) == 4 and argv[2] == "github":
        github(argv[1], argv[3], None)
    elif len(argv) == 4 and argv[2] == "gitlab":
        gitlab(argv[1], argv[3])
    else:
        raise SystemExit(__doc__.split("\n\n")[1])


if __name__ == "__main__":
    main(sys.argv)
