#!/bin/sh
# Runs pack-job.yaml's three steps in order: plan, workers, merge (each Job
# applied once the one before it has completed).
#   pack.sh [kubectl options, e.g. -n NAMESPACE]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
docs() { /usr/bin/python3 -c '
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
print(yaml.safe_dump_all([d for d in docs if d["metadata"]["name"] in sys.argv[2:]]))
' "$here/pack-job.yaml" "$@"; }
docs ferry-pack-options ferry-pack-plan | kubectl "$@" apply -f -
kubectl "$@" wait --for=condition=complete --timeout=24h job/ferry-pack-plan
docs ferry-pack | kubectl "$@" apply -f -
kubectl "$@" wait --for=condition=complete --timeout=168h job/ferry-pack
docs ferry-pack-merge | kubectl "$@" apply -f -
kubectl "$@" wait --for=condition=complete --timeout=24h job/ferry-pack-merge
