# Sourced by .ci/run: `step NAME COMMAND...` runs one CI step and records its wall time and
# the CPU time (user + system) of the processes it ran; the table of every step is printed
# when the run ends, passed or failed (EXIT trap), so a slow or failing step is named in the
# log. Budget and history of the figures: docs/ci.md.

CI_STEP_NAMES=()
CI_STEP_WALL_S=()
CI_STEP_CPU_S=()
CI_STEP_RESULT=()
CI_RUN_START_S=$SECONDS

# CPU seconds (user + system) of all children this shell has waited for (cutime and cstime,
# fields 16 and 17 of /proc/$$/stat, in clock ticks): read here, not in a subshell, whose
# own counters would start at zero.
CI_CLK_TCK="$(getconf CLK_TCK 2>/dev/null || echo 100)"
ci_children_cpu_s() {
  local stat
  read -r stat < "/proc/$$/stat"
  stat="${stat##*) }"  # after "pid (comm) ": field 3 is now the first
  set -- $stat
  echo $(( (${14} + ${15} + CI_CLK_TCK / 2) / CI_CLK_TCK ))
}

step() {
  local name="$1"; shift
  local wall0=$SECONDS cpu0 cpu1 rc=0
  cpu0="$(ci_children_cpu_s)"
  printf '\n=== step: %s (%s) ===\n' "$name" "$*"
  "$@" || rc=$?
  cpu1="$(ci_children_cpu_s)"
  CI_STEP_NAMES+=("$name")
  CI_STEP_WALL_S+=("$((SECONDS - wall0))")
  CI_STEP_CPU_S+=("$((cpu1 - cpu0))")
  if [ "$rc" -eq 0 ]; then CI_STEP_RESULT+=(ok); else CI_STEP_RESULT+=("FAILED (exit $rc)"); fi
  return "$rc"
}

ci_mmss() { printf '%d:%02d' "$(($1 / 60))" "$(($1 % 60))"; }

ci_step_table() {
  local i total=$((SECONDS - CI_RUN_START_S))
  printf '\nCI step times (wall m:s; CPU m:s = user + system of the step'"'"'s processes; 2 cores):\n'
  printf '| %-26s | %7s | %7s | %s\n' step wall CPU result
  for i in "${!CI_STEP_NAMES[@]}"; do
    printf '| %-26s | %7s | %7s | %s\n' "${CI_STEP_NAMES[$i]}" "$(ci_mmss "${CI_STEP_WALL_S[$i]}")" "$(ci_mmss "${CI_STEP_CPU_S[$i]}")" "${CI_STEP_RESULT[$i]}"
  done
  printf '| %-26s | %7s | %7s | %s\n' 'whole run' "$(ci_mmss "$total")" '' "budget 40:00 (docs/ci.md)"
  printf 'load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
}
trap ci_step_table EXIT
