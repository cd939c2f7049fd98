#!/bin/bash
# variants of rig_vs_program, interleaved
X=$1; ROUNDS=$2; OUT=$3
for r in $(seq 1 $ROUNDS); do
  for v in $VARIANTS; do
    case $v in base) E="";; p_spin0) E="SPIN_US=0";; r_spin_g1) E="PC_RIG_SPIN=1 PC_RIG_GROUP=1";; r_g1) E="PC_RIG_GROUP=1";; p_reuse) E="PC_PROG_REUSE=1";; p_drop) E="PC_DROP_LAST=1";; nokeep) E="NO_KEEP=1";; esac
    echo "== $v r$r $(date +%T)" >> $OUT
    env $E /tmp/rvp "pipe(inc, inc)" $X 15 >> $OUT 2>&1
  done
done
