# Named steps with their durations, for .ci/run and scripts/test (sourced, not run).
#
# `step NAME` ends the current step and starts the next, printing "== NAME". When
# WIKISUGGEST_STEP_TIMES names a file, each step's wall-clock seconds and the CPU seconds its
# commands used (user + system, of the processes it waited for) are appended to it
# ("NAME<TAB>WALL<TAB>CPU"), and `steps_report` prints them as a table with their totals. On a
# shared machine the wall clock depends on the load; the CPU time much less.
_step_name=""
_step_start=0
_step_cpu=0
_steps_now=0

# CPU seconds used so far by this shell's finished children, into _steps_now: bash's `times`
# (its second line), run in this shell (in a subshell it would count the subshell's children).
_steps_cpu() {
    local times_file
    times_file="$(mktemp)"
    times >"$times_file"
    _steps_now=$(awk 'NR == 2 {
        total = 0
        for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); total += t[1] * 60 + t[2] }
        printf "%d", total
    }' "$times_file")
    rm -f "$times_file"
}

step() {
    steps_end
    _step_name="$1"
    _step_start=$SECONDS
    _steps_cpu
    _step_cpu=$_steps_now
    echo "== $1"
}

steps_end() {
    if [ -n "$_step_name" ] && [ -n "${WIKISUGGEST_STEP_TIMES:-}" ]; then
        _steps_cpu
        printf '%s\t%d\t%d\n' "$_step_name" $((SECONDS - _step_start)) \
            $((_steps_now - _step_cpu)) >>"$WIKISUGGEST_STEP_TIMES"
    fi
    _step_name=""
}

steps_report() {
    [ -s "${WIKISUGGEST_STEP_TIMES:-}" ] || return 0
    echo "== time per step (seconds: wall clock, CPU)"
    awk -F '\t' '{ printf "%6d %6d  %s\n", $2, $3, $1; wall += $2; cpu += $3 }
        END { printf "%6d %6d  total (%d min %d s)\n", wall, cpu, wall / 60, wall % 60 }' \
        "$WIKISUGGEST_STEP_TIMES"
}
