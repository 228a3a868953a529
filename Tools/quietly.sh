#!/usr/bin/env bash
# quietly.sh LOG "WHAT" "HOW LONG" COMMAND...: runs COMMAND with its output in LOG and says, instead of a
# thousand lines of compiler output, what is happening, roughly how long it takes and how far it has come:
# SwiftPM's `[done/total]` steps, on one line rewritten in a terminal, a line a minute elsewhere (CI logs).
# When COMMAND fails, its errors (with the lines around them) and the end of LOG are printed, and its status
# is returned. VERBOSE=1 shows everything as it comes.
set -uo pipefail
log=$1 what=$2 estimate=$3
shift 3
mkdir -p "$(dirname "$log")"

if [ "${VERBOSE:-0}" = 1 ]; then
    "$@" 2>&1 | tee "$log"
    exit "${PIPESTATUS[0]}"
fi

elapsed() {
    local seconds=$(( $(date +%s) - started ))
    if [ "$seconds" -ge 60 ]; then printf '%d min %02d s' $((seconds / 60)) $((seconds % 60)); else printf '%d s' "$seconds"; fi
}

progress() {
    # The last `[done/total]` SwiftPM printed, as "done of total steps (percent)".
    local step
    step=$(grep -ao '^\[[0-9]*/[0-9]*\]' "$log" 2>/dev/null | tail -1 | tr -d '[]')
    if [ -n "$step" ] && [ "${step#*/}" -gt 0 ]; then
        printf '%s of %s steps (%d %%)' "${step%/*}" "${step#*/}" $(( ${step%/*} * 100 / ${step#*/} ))
    else
        printf 'working'
    fi
}

echo "$what ($estimate; the output goes to $log, VERBOSE=1 shows it)"
started=$(date +%s)
"$@" > "$log" 2>&1 &
command=$!
terminal=0
[ -t 1 ] && terminal=1
last_line=$started
while kill -0 "$command" 2>/dev/null; do
    sleep 1
    if [ "$terminal" = 1 ]; then
        printf '\r  %s, %s   ' "$(progress)" "$(elapsed)"
    elif [ $(( $(date +%s) - last_line )) -ge 60 ]; then
        echo "  $(progress), $(elapsed)"
        last_line=$(date +%s)
    fi
done
wait "$command"
status=$?
[ "$terminal" = 1 ] && printf '\r\033[K'
if [ "$status" = 0 ]; then
    echo "  done in $(elapsed)"
    exit 0
fi
echo "  failed after $(elapsed) (exit status $status). What went wrong:"
if grep -aq 'error:' "$log"; then
    grep -a -B2 -A6 'error:' "$log" | head -120
else
    tail -60 "$log"
fi
echo "The whole output: $log"
exit "$status"
