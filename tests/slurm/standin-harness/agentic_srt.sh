#!/usr/bin/env bash
# Stand-in for a benchmark repository's AgentX harness (the file the agentic recipes run as
# /infmax-workspace/benchmarks/multi_node/agentic_srt.sh). The real one drives aiperf against the
# model served on GB300 nodes, which cannot run here; this keeps its interface, as infx relies on it:
# it requires what the real one checks before it starts, says the profile it was given, and
# writes one aggregate per concurrency of CONC_LIST (else CONC) to
# $INFMAX_CONTAINER_WORKSPACE/<RESULT_FILENAME>_conc<N>.json. The aggregate comes from the test:
# $AGENTX_STANDIN_AGGREGATES/conc<N>.json when it exists (copied as it is: a symbolic link or a FIFO
# stays one, so a test can plant one where a result belongs), else
# $AGENTX_STANDIN_AGGREGATES/default.json with the concurrency written in.
set -euo pipefail
for name in MODEL MODEL_PREFIX FRAMEWORK PRECISION CONC RESULT_FILENAME DURATION AGENTX_STANDIN_AGGREGATES; do
    if [ -z "${!name:-}" ]; then
        echo "ERROR: $name is not set" >&2
        exit 1
    fi
done
workspace="${INFMAX_CONTAINER_WORKSPACE:-/infmax-workspace}"
echo "agentx profile: DURATION=$DURATION AIPERF_WARMUP_REQUESTS_PER_LANE=${AIPERF_WARMUP_REQUESTS_PER_LANE:-10}"
read -r -a concs <<< "${CONC_LIST:-$CONC}"
for conc in "${concs[@]}"; do
    target="$workspace/${RESULT_FILENAME}_conc${conc}.json"
    given="$AGENTX_STANDIN_AGGREGATES/conc${conc}.json"
    if [ -e "$given" ] || [ -L "$given" ]; then
        cp -a "$given" "$target"
    else
        python3 -c 'import json, sys; data = json.load(open(sys.argv[1])); data["conc"] = int(sys.argv[2]); print(json.dumps(data))' \
            "$AGENTX_STANDIN_AGGREGATES/default.json" "$conc" > "$target"
    fi
    echo "wrote $target"
done
