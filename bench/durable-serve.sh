#!/bin/sh
# Two `ssgen serve` processes, one in memory and one keeping every write
# (--data-dir --persist-all), driven in turn by the same `ssgen bench`
# load; prints each run's rate, the ratio per round, the load average,
# and the CPU (µs) and context switches each server spent per request.
#
#   go build -o /tmp/ssgen ./cmd/ssgen
#   sh bench/durable-serve.sh /tmp/ssgen [ROUNDS] [MIX] [REQUESTS]
#
# MIX is ssgen bench's --mix (default get=0,set=100; get=50,set=50 for
# the mixed row). Linux only (reads /proc).
set -eu
B=${1:?usage: durable-serve.sh SSGEN [ROUNDS] [MIX] [REQUESTS]}
ROUNDS=${2:-3}
MIX=${3:-get=0,set=100}
REQ=${4:-40000}
MEMPORT=${MEMPORT:-19301}
DISKPORT=${DISKPORT:-19302}
DIR=$(mktemp -d)
"$B" serve --listen 127.0.0.1:$MEMPORT --log-level warn >/dev/null &
MEM=$!
"$B" serve --listen 127.0.0.1:$DISKPORT --data-dir "$DIR" --persist-all --log-level warn >/dev/null &
DISK=$!
trap 'kill $MEM $DISK 2>/dev/null; wait $MEM $DISK 2>/dev/null; rm -rf "$DIR"' EXIT INT TERM
sleep 1

# cpu PID: the process's user+system ticks; csw PID: its threads' context switches
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
csw() { cat /proc/$1/task/*/status | awk '/ctxt_switches/ {n+=$2} END {print n}'; }
TICK=$(getconf CLK_TCK)

run() { # name pid port
	c0=$(cpu $2); s0=$(csw $2); l=$(cut -d' ' -f1 /proc/loadavg)
	out=$("$B" bench --broker mqtt://127.0.0.1:$3 --clients 4 --in-flight 16 --mix "$MIX" --requests "$REQ" --json)
	c1=$(cpu $2); s1=$(csw $2)
	ops=$(printf '%s\n' "$out" | sed -n 's/.*"ops_per_sec": *\([0-9]*\).*/\1/p' | head -1)
	p99=$(printf '%s\n' "$out" | sed -n 's/.*"p99_ns": *\([0-9]*\).*/\1/p' | tail -1 | awk '{printf "%.2f", $1/1e6}')
	us=$(awk -v a=$c0 -v b=$c1 -v n=$REQ -v t=$TICK 'BEGIN {printf "%.1f", (b-a)*1e6/t/n}')
	cs=$(awk -v a=$s0 -v b=$s1 -v n=$REQ 'BEGIN {printf "%.2f", (b-a)/n}')
	echo "$1 load=$l ops/s=$ops p99_ms=$p99 server_cpu_us/req=$us ctxsw/req=$cs" >&2
	echo "$ops"
}

i=1
while [ $i -le "$ROUNDS" ]; do
	m=$(run memory $MEM $MEMPORT)
	k=$(run kept $DISK $DISKPORT)
	awk -v m="$m" -v k="$k" -v i=$i 'BEGIN {printf "round %d: kept/memory %.2f\n", i, k/m}' >&2
	i=$((i + 1))
done
