#!/bin/bash
# bash on purpose ([[ ]], arrays, $'…'): Harbor's solve.sh scripts are bash, not sh.
files=(data/*.csv)
[[ -f ${files[0]} ]] || { echo $'no csv\tfound' >&2; exit 1; }
awk -F, 'NR > 1 { s += $2 } END { print s }' "${files[0]}" > total.txt
