# The reader's second terminal, for test/helpers/docs-session.ts: sources one block's script
# at a time, named on fd 3, and answers on fd 4 (`done`, `restart`, `printed TEXT`, `finished`).
set -euo pipefail

# curl as the docs use it, except that an HTTP error status fails the command, and a status
# the docs state (EXPECT_STATUS, see shell-blocks.ts) must be exactly the answer's.
curl() {
  local head status rc=0
  head=$(mktemp)
  command curl --show-error --dump-header "$head" "$@" || rc=$?
  status=$(sed -n 's/^HTTP\/[0-9.]* \([0-9]*\).*/\1/p' "$head" | tail -n 1)
  rm -f "$head"
  [ "$rc" -eq 0 ] || return "$rc"
  if [ -n "${EXPECT_STATUS:-}" ]; then
    [ "$status" = "$EXPECT_STATUS" ] && return 0
    printf '\ncurl: HTTP %s, where the docs say %s\n' "${status:-(none)}" "$EXPECT_STATUS" >&2
    return 1
  fi
  [ "${status:-0}" -lt 400 ] && return 0
  printf '\ncurl: HTTP %s\n' "$status" >&2
  return 22
}

# What a `# restart the service` (or `# start the service`) line runs: the service is stopped,
# when it runs, and started.
__docs_restart() {
  local reply
  echo restart >&4
  IFS= read -r reply <&3
  [ "$reply" = ready ] || { printf 'the service did not start: %s\n' "$reply" >&2; return 1; }
}

# What a `# wait until it prints "TEXT"` line runs: asks, every tenth of a second, whether the
# block has printed TEXT, and gives up at once when the command last started with `&` has ended.
__docs_wait_for() {
  local reply rc=0 until=$((SECONDS + 60))
  while :; do
    printf 'printed %s\n' "$1" >&4
    IFS= read -r reply <&3
    [ "$reply" = yes ] && return 0
    if ! kill -0 "${!:-0}" 2>/dev/null; then
      wait "${!:-0}" 2>/dev/null || rc=$?
      printf 'the background command ended (status %s) before it printed "%s"\n' "$rc" "$1" >&2
      return 1
    fi
    if [ "$SECONDS" -ge "$until" ]; then
      printf 'nothing printed "%s" within 60 s\n' "$1" >&2
      return 1
    fi
    sleep 0.1
  done
}

while IFS= read -r __docs_next <&3 && [ "$__docs_next" != end ]; do
  source "$__docs_next"
  echo done >&4
done

# A server or listener a block started in the background must have kept running.
for __docs_pid in $(jobs -p); do
  if ! kill -0 "$__docs_pid" 2>/dev/null; then
    __docs_rc=0
    wait "$__docs_pid" || __docs_rc=$?
    printf 'a background command (pid %s) ended with status %s before the last block did\n' "$__docs_pid" "$__docs_rc" >&2
    exit 1
  fi
done
echo finished >&4
