#!/usr/bin/env bash
# Partial credit: the share of the four photos renamed correctly with their contents kept.
# Absolute paths, as ClawGym-Task's scripts use (ClawGym-RL runs them from /).
ws=/root/.openclaw/workspace
ok=0
for n in 001 002 003 004; do
  if [ -f "$ws/photos/holiday-$n.jpg" ] && [ ! -e "$ws/photos/IMG_$n.JPG" ] && [ "$(cat "$ws/photos/holiday-$n.jpg")" = "photo $n" ]; then
    ok=$((ok + 1))
  else
    echo "photo $n not renamed correctly"
  fi
done
awk -v ok="$ok" 'BEGIN { print ok / 4 }'
