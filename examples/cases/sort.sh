# GNU sort 9.1 (Debian package coreutils) with --parallel=N, in the C locale.
#
# Structure (sort.c, `sortlines`): the input is read into memory, then the lines are
# split over a binary merge tree: each of the N leaves sorts its share of the lines on
# a thread of its own (two sequential merge sorts of its halves, merged), and the
# internal nodes merge their children's lines, the root writing the output. A node is
# split only while it has at least 128 Ki lines. With N = 2 the halves are sorted side by
# side and merged at the root: seq(tpool(2, sort_half), merge). With N = 1 the same
# work runs on one thread: both halves, then the merge: seq(sort_half, merge) (a time
# per unit of x counts the half twice, see below).
#
# Size x: thousands of lines in the input. Unit: a thousand lines. `sort_half` sorts
# half the input (x/2 units), so its time per unit is per unit of its half; composed
# per unit of x, seq(sort_half, merge) is both halves one after the other and
# tpool(2, sort_half) the two side by side.
CASE_TITLE="GNU sort 9.1 --parallel=N (merge sort on threads)"
CASE_UNIT="thousand lines"
CASE_X=256,512,1024,2048
CASE_X_SMOKE=16,32,48
CASE_X_PAIRED=1024
CASE_WORKERS="1 2 4"
CASE_BLOCKS=(sort_half merge)
export LC_ALL=C

case_inputs() {
    local top
    top=$(largest "$@")
    gen lines $((top * 1000)) lines.all
    for x in "$@"; do
        head -n $((x * 1000)) lines.all >"in_$x.txt"
        head -n $((x * 500)) "in_$x.txt" >"lo_$x.txt"
        tail -n +$((x * 500 + 1)) "in_$x.txt" >"hi_$x.txt"
        sort --parallel=1 "lo_$x.txt" >"lo_$x.sorted"
        sort --parallel=1 "hi_$x.txt" >"hi_$x.sorted"
    done
}

# One leaf: a merge sort of half the lines on one thread (its output is not the
# program's: thrown away).
block_sort_half() { per_unit "$(divide "$1" 2)" -- sort --parallel=1 "lo_$1.txt"; }
# The root: the merge of the two sorted halves, written to a file.
block_merge() { per_unit --out "m_$1.txt" "$1" -- sort -m "lo_$1.sorted" "hi_$1.sorted"; }

program() { per_unit --out "out_$2.txt" "$2" -- sort --parallel="$1" "in_$2.txt"; }

term() {
    if [ "$1" -eq 1 ]; then
        echo "seq(sort_half, merge)"
    else
        echo "seq(tpool($1, sort_half), merge)"
    fi
}
