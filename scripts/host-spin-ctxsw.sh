#!/bin/sh
# Two CPU-bound loops pinned to one CPU of this machine: how often does the kernel switch them?
# Prints, per loop, voluntary/nonvoluntary context switches and CPU time over the window; when
# perf works, the ticks on that CPU and its switches (all, and loop-to-loop); the CPU's local
# timer interrupts and steal time.
#
# usage: scripts/host-spin-ctxsw.sh [CPU] [SECONDS] [AUTOGROUP_NICE] [SLICE_NS]
#   The loops run in a new session (setsid), hence in their own autogroup.
#   AUTOGROUP_NICE (optional, -20..19, needs root; "" to skip): nice of that autogroup; -20
#   makes tasks of other sessions that share the CPU rare (weight 88761 against 1024).
#   SLICE_NS (optional, 100000..100000000, v6.12+): a custom EEVDF slice for both loops, set
#   with sched_setattr(SCHED_OTHER, sched_runtime = SLICE_NS) as `chrt` 2.38 cannot.
# Not run by CI. Documentation: docs/host-context-switches.md.
set -eu
cpu=${1:-1}
secs=${2:-10}
agnice=${3:-}
slice=${4:-}
dir=$(mktemp -d)

setsid sh -c "
  taskset -c $cpu sh -c 'while :; do :; done' & echo \$! > $dir/a
  taskset -c $cpu sh -c 'while :; do :; done' & echo \$! > $dir/b
  wait" &
while [ ! -s "$dir/a" ] || [ ! -s "$dir/b" ]; do sleep 0.01; done
a=$(cat "$dir/a"); b=$(cat "$dir/b")
sleep 0.2   # let taskset exec the loop
if [ -n "$agnice" ]; then echo "$agnice" > "/proc/$a/autogroup"; fi
if [ -n "$slice" ]; then
  python3 - "$slice" "$a" "$b" <<'PY'
import ctypes, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
slice_ns = int(sys.argv[1])
# struct sched_attr (SCHED_ATTR_SIZE_VER1, 56 bytes): size, policy, flags, nice, priority,
# runtime, deadline, period, util_min, util_max. Policy 0 = SCHED_OTHER.
attr = struct.pack("=IIQiIQQQII", 56, 0, 0, 0, 0, slice_ns, 0, 0, 0, 0)
for pid in sys.argv[2:]:
    if libc.syscall(314, int(pid), ctypes.c_char_p(attr), 0) != 0:  # __NR_sched_setattr
        sys.exit(f"sched_setattr({pid}): errno {ctypes.get_errno()}")
PY
fi

# One snapshot: both loops' status and stat, the CPU's interrupts and times, a timestamp.
snap="cat /proc/$a/status /proc/$a/stat /proc/$b/status /proc/$b/stat /proc/interrupts /proc/stat; date +%s%N"
window="{ $snap; } > $dir/s0; sleep $secs; { $snap; } > $dir/s1"
if perf record -q -e sched:sched_switch -C "$cpu" -o "$dir/probe" true >/dev/null 2>&1; then
  # The snapshots run inside the recording, so both cover the same window.
  perf record -q -e sched:sched_switch -e timer:hrtimer_expire_entry -C "$cpu" -o "$dir/rec" \
    -- sh -c "$window" 2>/dev/null
else
  sh -c "$window"
fi
kill "$a" "$b"

# Parse the two snapshots.
vals() { # file -> "a_vol a_nonvol a_ticks b_vol b_nonvol b_ticks loc res steal total ns"
  awk -v c="$cpu" '
    /^voluntary_ctxt_switches/ { v[++nv] = $2 }
    /^nonvoluntary_ctxt_switches/ { n[++nn] = $2 }
    /^[0-9]+ \(sh\)/ { t[++nt] = $14 + $15 }
    $1 == "LOC:" { loc = $(c + 2) }
    $1 == "RES:" { res = $(c + 2) }
    $1 == "cpu" c { tot = 0; for (i = 2; i <= NF; i++) tot += $i; steal = $9 }
    /^[0-9]+$/ { ns = $1 }
    END { print v[1], n[1], t[1], v[2], n[2], t[2], loc, res, steal, tot, ns }' "$1"
}
set -- $(vals "$dir/s0") $(vals "$dir/s1")
hz=$(getconf CLK_TCK)
echo "$@" | awk -v hz="$hz" -v c="$cpu" -v ag="${agnice:-0}" -v sl="${slice:-default}" -v load="$(cut -d' ' -f1 /proc/loadavg)" '{
  w = ($22 - $11) / 1e9
  printf "window %.2f s, cpu %d, loop autogroup nice %d, slice %s, load1 %s\n", w, c, ag, sl, load
  for (k = 0; k < 2; k++) {
    dv = $(12 + 3 * k) - $(1 + 3 * k); dn = $(13 + 3 * k) - $(2 + 3 * k)
    dt = ($(14 + 3 * k) - $(3 + 3 * k)) / hz
    printf "loop %s: voluntary %d nonvoluntary %d (%.1f/s wall), cpu %.2f s (%.0f%%), %.1f nonvoluntary per cpu-s\n",
      (k ? "b" : "a"), dv, dn, dn / w, dt, 100 * dt / w, (dt > 0 ? dn / dt : 0)
  }
  printf "cpu %d: local timer interrupts %d (%.0f/s), rescheduling IPIs %d, steal %.1f%%\n",
    c, $18 - $7, ($18 - $7) / w, $19 - $8, 100 * ($20 - $9) / ($21 - $10)
}'
w=$(echo "$@" | awk '{ print ($22 - $11) / 1e9 }')
if [ -s "$dir/rec" ]; then
  # Every switch on the CPU, and the ticks (tick_nohz_handler expiries) that drove them.
  perf script -i "$dir/rec" -F event,trace 2>/dev/null | awk -v a="$a" -v b="$b" -v s="$w" '
    /hrtimer_expire_entry/ { if ($0 ~ /function=tick_nohz_handler/) tick++; else other++ }
    /sched_switch/ {
      match($0, /prev_pid=[0-9]+/); p = substr($0, RSTART + 9, RLENGTH - 9)
      match($0, /next_pid=[0-9]+/); n = substr($0, RSTART + 9, RLENGTH - 9)
      all++; if ((p == a && n == b) || (p == b && n == a)) loop++ }
    END { printf "perf: %d ticks (%.1f/s), %d other hrtimer expiries; %d switches on the CPU (%.1f/s), %d loop-to-loop (%.1f/s, %.3f per tick)\n",
            tick, tick / s, other, all, all / s, loop, loop / s, (tick ? loop / tick : 0) }'
fi
rm -rf "$dir"
