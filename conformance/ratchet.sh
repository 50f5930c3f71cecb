#!/usr/bin/env bash
# Conformance ratchet: runs bpftrace's runtime cases (../shared/conformance)
# against gotrace and fails if a case listed in conformance/passing.txt does
# not pass. The list only grows: --update adds the ids that pass now and never
# removes one. Prints gotrace's pass count next to bpftrace 0.17's baseline.
#
#   bash conformance/ratchet.sh [--update] [run.py options, e.g. --filter REGEX -v]
#
# SHARED (default ../shared beside the repository) locates the shared material.
# A full run takes several minutes (308 cases, 2 at a time, each up to its timeout).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
shared=${SHARED:-$(cd "$root/.." && pwd)/shared}
runner=$shared/conformance/run.py
update=0
if [ "${1:-}" = "--update" ]; then
	update=1
	shift
fi
[ -f "$runner" ] || { echo "ratchet: no conformance runner at $runner (set SHARED)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go build -o "$tmp/gotrace" ./cmd/gotrace) || { echo "ratchet: go build ./cmd/gotrace failed"; exit 1; }

# run.py exits 1 whenever any case fails, which is expected: judge from its JSON.
python3 "$runner" --bin "$tmp/gotrace" --json "$tmp/out.json" --jobs 2 \
	--baseline "$shared/conformance/baseline-bpftrace.json" "$@" || true
[ -s "$tmp/out.json" ] || { echo "ratchet: the runner wrote no results"; exit 1; }

python3 - "$tmp/out.json" "$here/passing.txt" "$shared/conformance" "$update" "$tmp/gotrace" <<'PY'
import json, os, re, subprocess, sys

out_path, list_path, conf_dir, update, gotrace = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5]
out = json.load(open(out_path))
results = {r["id"]: r for r in out["results"]}
passed = {i for i, r in results.items() if r["status"] == "PASS"}
listed = [l.rstrip("\n") for l in open(list_path) if l.strip()] if os.path.exists(list_path) else []

# The machine is noisy: a listed case that failed gets one more run, alone,
# and counts as regressed only if it fails again.
retry = sorted(i for i in listed if i in results and i not in passed)
if retry:
    print(f"ratchet: re-running {len(retry)} listed case(s) that failed")
    rerun = out_path + ".retry.json"
    subprocess.run([sys.executable, os.path.join(conf_dir, "run.py"), "--bin", gotrace, "--jobs", "1",
                    "--json", rerun, "--filter", "^(" + "|".join(re.escape(i) for i in retry) + ")$"])
    if os.path.exists(rerun):
        for r in json.load(open(rerun))["results"]:
            if r["status"] == "PASS":
                passed.add(r["id"])
                results[r["id"]] = r

trivial = set()
with open(os.path.join(conf_dir, "cases", "cases.jsonl")) as f:
    for line in f:
        if line.strip():
            c = json.loads(line)
            if c.get("trivially_passable"):
                trivial.add(c["id"])
base = set(json.load(open(os.path.join(conf_dir, "baseline-bpftrace.json")))["passed"]) - trivial

ran = set(results)
regressed = sorted(i for i in listed if i in ran and i not in passed)
not_run = [i for i in listed if i not in ran]
new = sorted(passed - set(listed))

print()
print(f"ratchet: gotrace passes {len(passed - trivial)} of {len(ran - trivial)} cases run "
      f"(trivially passable ones excluded); bpftrace 0.17 passes {len(base & ran)} of them; "
      f"gotrace passes {len(passed & base)} of bpftrace's")
print(f"ratchet: {len(listed)} listed in passing.txt, {len(new)} newly passing, {len(regressed)} regressed"
      + (f", {len(not_run)} listed but not run (filtered)" if not_run else ""))
for i in regressed:
    print(f"REGRESSED {i} -- {results[i]['reason']}")
if new and not update:
    print("ratchet: run 'bash conformance/ratchet.sh --update' to add the newly passing cases:")
    for i in new:
        print(f"  NEW {i}")
if update and new:
    merged = sorted(set(listed) | passed)
    with open(list_path, "w") as f:
        f.writelines(i + "\n" for i in merged)
    print(f"ratchet: passing.txt now lists {len(merged)} cases")
sys.exit(1 if regressed else 0)
PY
