# pbzip2 1.1.13 (Debian package pbzip2): bzip2 compression of a file in parallel.
#
# Structure (pbzip2.cpp): with -p1 (or a one-block file) `directcompress` reads a block
# of 900,000 bytes, compresses it with libbzip2's BZ2_bzBuffToBuffCompress and writes it,
# block after block, on one thread: seq(read, compress, write). With -pN (N > 1) the
# main thread is a producer that reads 900,000-byte blocks into a queue, N consumer
# threads compress one block each at a time, and a fileWriter thread writes the
# compressed blocks in order: pipe(read, tpool(N, compress), write).
#
# Size x: the number of 900,000-byte blocks in the input. Unit: one block.
CASE_TITLE="pbzip2 1.1.13 (parallel bzip2)"
CASE_UNIT="block of 900,000 bytes"
CASE_X=2,4,8,16
CASE_X_SMOKE=1,2,3
CASE_X_PAIRED=8
CASE_WORKERS="1 2 4"
CASE_BLOCKS=(read compress write)
BLOCK_BYTES=900000

case_inputs() {
    local top
    top=$(largest "$@")
    gen text $((top * BLOCK_BYTES)) text.all
    for x in "$@"; do
        head -c $((x * BLOCK_BYTES)) text.all >"in_$x.txt"
        # The input's last block: the compress block's unit at size x.
        tail -c "$BLOCK_BYTES" "in_$x.txt" >"blk_$x.txt"
        # The compressed output the writer thread writes.
        pbzip2 -p1 -9 -c "in_$x.txt" >"ref_$x.bz2"
    done
}

# The producer's reads: read(2) of 900,000 bytes at a time.
block_read() { per_unit "$1" -- dd if="in_$1.txt" of=/dev/null bs=$BLOCK_BYTES status=none; }
# One consumer on one block: libbzip2 at level 9 (Debian's bzip2 uses the same library).
block_compress() { per_unit 1 -- bzip2 -9 -c "blk_$1.txt"; }
# The writer's writes: the compressed blocks into a new file.
block_write() { per_unit "$1" -- dd if="ref_$1.bz2" of="w_$1.bz2" bs=$BLOCK_BYTES status=none; }

program() { per_unit --out "out_$2.bz2" "$2" -- pbzip2 -p"$1" -9 -c "in_$2.txt"; }

term() {
    if [ "$1" -eq 1 ]; then
        echo "seq(read, compress, write)"
    else
        echo "pipe(read, tpool($1, compress), write)"
    fi
}
