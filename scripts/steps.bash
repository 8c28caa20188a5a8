# Named steps with their durations, for .ci/run and scripts/test (sourced, not run).
#
# `step NAME` ends the current step and starts the next, printing "== NAME". When
# WIKISUGGEST_STEP_TIMES names a file, each step's seconds are appended to it ("NAME<TAB>S"),
# and `steps_report` prints them as a table with their total.
_step_name=""
_step_start=0

step() {
    steps_end
    _step_name="$1"
    _step_start=$SECONDS
    echo "== $1"
}

steps_end() {
    if [ -n "$_step_name" ] && [ -n "${WIKISUGGEST_STEP_TIMES:-}" ]; then
        printf '%s\t%d\n' "$_step_name" $((SECONDS - _step_start)) >>"$WIKISUGGEST_STEP_TIMES"
    fi
    _step_name=""
}

steps_report() {
    [ -s "${WIKISUGGEST_STEP_TIMES:-}" ] || return 0
    echo "== time per step (seconds)"
    awk -F '\t' '{ printf "%6d  %s\n", $2, $1; total += $2 }
        END { printf "%6d  total (%d min %d s)\n", total, total / 60, total % 60 }' \
        "$WIKISUGGEST_STEP_TIMES"
}
