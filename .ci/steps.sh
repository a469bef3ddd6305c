# Sourced by .ci/run. Each CI step is timed, and the table of every step is printed when the
# run ends, passed or failed (EXIT trap), so a slow or failing step is named in the log:
#
#   step NAME COMMAND...       runs a step in the foreground
#   step_bg NAME COMMAND...    starts a step in the background, its output kept in a file
#   step_wait NAME             waits for it, prints its output, fails if it failed
#
# Per step: when it started (m:s after the run's start), its wall time, and the CPU time
# (user + system) of the processes it ran, which is the figure to compare between runs on a
# machine that others load. Budget and figures: docs/ci.md.

CI_STEP_NAMES=()
CI_STEP_START_S=()
CI_STEP_WALL_S=()
CI_STEP_CPU_S=()
CI_STEP_RESULT=()
CI_RUN_START_S=$SECONDS
CI_STEP_DIR="$(mktemp -d "${TMPDIR:-/tmp}/ci-steps.XXXXXX")"
declare -A CI_BG_PID=() CI_BG_START_S=() CI_BG_FILE=()
CI_CLK_TCK="$(getconf CLK_TCK 2>/dev/null || echo 100)"

# CPU seconds (user + system) of the children this subshell has waited for: cutime and
# cstime, fields 16 and 17 of /proc/PID/stat, in clock ticks. A subshell's own counters start
# at zero, so each step runs in one and reads them there (into CI_CPU_S: a $(...) would read
# those of yet another subshell) when its command has ended.
ci_children_cpu_s() {
  local stat
  read -r stat < "/proc/$BASHPID/stat"
  stat="${stat##*) }"  # after "pid (comm) ": field 3 is now the first
  # shellcheck disable=SC2086
  set -- $stat
  CI_CPU_S=$(( (${14} + ${15} + CI_CLK_TCK / 2) / CI_CLK_TCK ))
}

# In a subshell: runs the command and writes "wall_s cpu_s exit_code" to $1.
ci_measured() {
  local result="$1"; shift
  local t0=$SECONDS rc=0
  trap - EXIT
  "$@" || rc=$?
  ci_children_cpu_s
  echo "$((SECONDS - t0)) $CI_CPU_S $rc" > "$result"
  return "$rc"
}

# Adds a finished step to the table from its result file; returns its exit code.
ci_record() {
  local name="$1" start="$2" result="$3" wall cpu rc
  if ! read -r wall cpu rc < "$result" 2>/dev/null; then wall=$((SECONDS - CI_RUN_START_S - start)); cpu=0; rc=1; fi
  CI_STEP_NAMES+=("$name")
  CI_STEP_START_S+=("$start")
  CI_STEP_WALL_S+=("$wall")
  CI_STEP_CPU_S+=("$cpu")
  if [ "$rc" -eq 0 ]; then CI_STEP_RESULT+=(ok); else CI_STEP_RESULT+=("FAILED (exit $rc)"); fi
  return "$rc"
}

ci_slug() { printf '%s' "$1" | tr -c 'A-Za-z0-9' '_'; }

step() {
  local name="$1"; shift
  local start=$((SECONDS - CI_RUN_START_S)) result
  result="$CI_STEP_DIR/$(ci_slug "$name").result"
  printf '\n=== step: %s (%s) ===\n' "$name" "$*"
  ( ci_measured "$result" "$@" ) || true
  ci_record "$name" "$start" "$result"
}

step_bg() {
  local name="$1"; shift
  local file
  file="$CI_STEP_DIR/$(ci_slug "$name")"
  printf '\n=== step started in the background: %s (%s); its output follows when it ends ===\n' "$name" "$*"
  CI_BG_START_S[$name]=$((SECONDS - CI_RUN_START_S))
  CI_BG_FILE[$name]="$file"
  ( ci_measured "$file.result" "$@" ) < /dev/null > "$file.log" 2>&1 &
  CI_BG_PID[$name]=$!
}

step_wait() {
  local name="$1"
  local file="${CI_BG_FILE[$name]}"
  wait "${CI_BG_PID[$name]}" || true
  unset "CI_BG_PID[$name]"
  printf '\n=== step ended (ran in the background): %s; its output ===\n' "$name"
  cat "$file.log"
  ci_record "$name" "${CI_BG_START_S[$name]}" "$file.result"
}

# Stops a process and everything it started (by process id, children first).
ci_kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do ci_kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}

ci_mmss() { printf '%d:%02d' "$(($1 / 60))" "$(($1 % 60))"; }

ci_step_table() {
  local i name total=$((SECONDS - CI_RUN_START_S))
  # A background step not waited for: a step before its step_wait failed.
  for name in "${!CI_BG_PID[@]}"; do
    if [ -f "${CI_BG_FILE[$name]}.result" ]; then
      printf '\n=== step ended (ran in the background, not waited for): %s; its output ===\n' "$name"
      cat "${CI_BG_FILE[$name]}.log" 2>/dev/null || true
      ci_record "$name" "${CI_BG_START_S[$name]}" "${CI_BG_FILE[$name]}.result" || true
      continue
    fi
    ci_kill_tree "${CI_BG_PID[$name]}"
    printf '\n=== step stopped unfinished (ran in the background): %s; its output ===\n' "$name"
    cat "${CI_BG_FILE[$name]}.log" 2>/dev/null || true
    CI_STEP_NAMES+=("$name"); CI_STEP_START_S+=("${CI_BG_START_S[$name]}")
    CI_STEP_WALL_S+=("$((total - CI_BG_START_S[$name]))"); CI_STEP_CPU_S+=(0); CI_STEP_RESULT+=("stopped unfinished")
  done
  printf '\nCI step times (m:s; start = after the run began; CPU = user + system of the step'"'"'s processes; 2 cores):\n'
  printf '| %-30s | %6s | %6s | %6s | %s\n' step start wall CPU result
  for i in "${!CI_STEP_NAMES[@]}"; do
    printf '| %-30s | %6s | %6s | %6s | %s\n' "${CI_STEP_NAMES[$i]}" "$(ci_mmss "${CI_STEP_START_S[$i]}")" \
      "$(ci_mmss "${CI_STEP_WALL_S[$i]}")" "$(ci_mmss "${CI_STEP_CPU_S[$i]}")" "${CI_STEP_RESULT[$i]}"
  done
  printf '| %-30s | %6s | %6s | %6s | %s\n' 'whole run' '0:00' "$(ci_mmss "$total")" '' "budget 40:00 (docs/ci.md)"
  printf 'load average at the end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
  rm -rf "$CI_STEP_DIR"
}
trap ci_step_table EXIT
