//! The threads of a loaded or staged unit test: their names, and each pinned to a core of
//! its own.

/// Name of the thread a loaded or staged unit test times its block on.
pub const TIMED_THREAD_NAME: &str = "perfcompose-timed";
/// Name of the other threads of a loaded or staged unit test (siblings, other stages).
pub const LOAD_THREAD_NAME: &str = "perfcompose-load";

/// Start `f` on a thread named `name`, pinned to the `core`-th core (modulo the cores,
/// where the OS allows pinning): the threads of a loaded or staged unit test each get a
/// core of their own, as the workers of a pinned program do (`Config { pin: true }`, the
/// default of `validate` and `bench --term`). Unpinned, the scheduler at times keeps two
/// busy threads on one core of the two.
pub(super) fn on_core<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    name: &str,
    core: usize,
    f: impl FnOnce() -> T + Send + 'scope,
) -> std::thread::ScopedJoinHandle<'scope, T> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn_scoped(scope, move || {
            if let Some(ids) = core_affinity::get_core_ids().filter(|c| !c.is_empty()) {
                let _ = core_affinity::set_for_current(ids[core % ids.len()]);
            }
            f()
        })
        .expect("the OS refused to start a unit test's thread")
}
