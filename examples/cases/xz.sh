# xz 5.4.1 (Debian package xz-utils): LZMA2 compression in independent blocks.
#
# Structure (xz's file_io.c and liblzma's stream_encoder_mt.c): with -T1 xz runs in
# single-threaded mode, one thread reading 8 KiB at a time, compressing and writing:
# with --block-size it still cuts the input into blocks, one after another:
# seq(read, compress, write). With -TN (N > 1) the main thread reads the input (8 KiB
# reads, copied into the current block's buffer) and writes the compressed blocks in
# order, while N worker threads compress one block each at a time:
# pipe(seq(read, write), tpool(N, compress)).
#
# Preset -1 and 1 MiB blocks keep one unit of work at about 0.1–0.2 s on this machine.
# Size x: the number of 1 MiB blocks in the input. Unit: one block.
CASE_TITLE="xz 5.4.1 -1 --block-size=1MiB (multi-threaded LZMA2)"
CASE_UNIT="block of 1 MiB"
CASE_X=2,4,8,16
CASE_X_SMOKE=1,2,3
CASE_X_PAIRED=8
CASE_WORKERS="1 2 4"
CASE_BLOCKS=(read compress write)
BLOCK_BYTES=1048576

case_inputs() {
    local top
    top=$(largest "$@")
    gen text $((top * BLOCK_BYTES)) text.all
    for x in "$@"; do
        head -c $((x * BLOCK_BYTES)) text.all >"in_$x.txt"
        tail -c "$BLOCK_BYTES" "in_$x.txt" >"blk_$x.txt"
        xz -T1 -1 --block-size=$BLOCK_BYTES -c "in_$x.txt" >"ref_$x.xz"
    done
}

# xz's reads and writes go through an 8 KiB buffer (IO_BUFFER_SIZE).
block_read() { per_unit "$1" -- dd if="in_$1.txt" of=/dev/null bs=8192 status=none; }
# One worker on one block: a 1 MiB input is one block.
block_compress() { per_unit 1 -- xz -T1 -1 -c "blk_$1.txt"; }
block_write() { per_unit "$1" -- dd if="ref_$1.xz" of="w_$1.xz" bs=8192 status=none; }

program() { per_unit --out "out_$2.xz" "$2" -- xz -T"$1" -1 --block-size=$BLOCK_BYTES -c "in_$2.txt"; }

term() {
    if [ "$1" -eq 1 ]; then
        echo "seq(read, compress, write)"
    else
        echo "pipe(seq(read, write), tpool($1, compress))"
    fi
}
