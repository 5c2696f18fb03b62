#!/usr/bin/env bash
# As ClawGym-Task's reward.sh: check.py-style sub-scores as JSON, averaged by python3 on the last line.
set -euo pipefail
ws=/root/.openclaw/workspace
exists=0; right=0
if [ -f "$ws/word_count.txt" ]; then exists=1; fi
if [ "$exists" = 1 ] && [ "$(tr -d ' \n' < "$ws/word_count.txt")" = "$(tr -d ' \n' < "$ws/reward/expected.txt")" ]; then right=1; fi
echo "{\"exists\": $exists, \"right\": $right}" | python3 -c 'import json, sys; d = json.loads(sys.stdin.read()); print(sum(map(float, d.values())) / len(d))'
