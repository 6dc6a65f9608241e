#!/bin/sh
# Kills one process of an MPI job and checks that each survivor raised UnavailableError within
# the timeout instead of hanging. usage: run_fault.sh <mpirun> <distribute_fault> <np> <mode> <survivors>
# --enable-recovery keeps the survivors alive when a process dies (by default mpirun kills the job).
mpirun=$1 exe=$2 np=$3 mode=$4 survivors=$5
out=$(timeout 90 "$mpirun" --oversubscribe --enable-recovery -np "$np" "$exe" "$mode" 2>&1)
echo "$out"
case $out in *"built without MPI"*) exit 77 ;; esac
found=$(echo "$out" | grep -c '^FAULT-DETECTED.*UNAVAILABLE')
echo "survivors that raised UnavailableError: $found of $survivors expected"
[ "$found" -eq "$survivors" ]
