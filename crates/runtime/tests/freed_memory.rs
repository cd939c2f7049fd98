//! `bench::keep_freed_memory`: memory a stream of inputs frees stays with the process for
//! the next stream (its own process: the allocator's settings are process-wide).

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_freed_stream_of_inputs_stays_with_the_process() {
    perfcompose_runtime::bench::keep_freed_memory();
    // SAFETY: `mallinfo2` only reads the allocator's statistics.
    let free_held = || unsafe { libc::mallinfo2() }.fordblks;
    let before = free_held();
    // A cold unit test's stream: 4,096 copies of 2,048 ints, written, then freed.
    let stream: Vec<Vec<i32>> = (0..4096).map(|i| vec![i; 2048]).collect();
    assert_eq!(
        stream.iter().map(|v| v[7] as i64).sum::<i64>(),
        4095 * 4096 / 2
    );
    drop(stream);
    let kept = free_held().saturating_sub(before);
    // 32 MiB freed; glibc's defaults hand back everything over 128 KiB at the heap's top.
    assert!(kept >= 16 << 20, "kept {kept} bytes of 32 MiB freed");
}
