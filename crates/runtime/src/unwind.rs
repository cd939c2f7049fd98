//! Catching panics of user blocks so that they surface as errors on the caller's side.
//!
//! Blocks are user code; a panic in one must neither kill a worker thread silently (that
//! would lose the element and, with bounded queues, could deadlock the producers) nor
//! tear down the whole process. Every call into user code goes through [`catch`].

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    static IN_USER_CODE: Cell<bool> = const { Cell::new(false) };
}

/// Name given to every thread the runtime spawns; a panic hook can recognise them (the
/// CLI silences the default hook for these threads because the runtime reports the panic
/// itself).
pub const WORKER_THREAD_NAME: &str = "perfcompose-worker";

/// Run `f`, turning a panic into its message.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    // AssertUnwindSafe: after a panic we never look at the block's state again for this
    // element; blocks are `Fn` (shared, stateless by contract), so a later element sees
    // whatever state a correct block would leave.
    let outer = IN_USER_CODE.with(|c| c.replace(true));
    let r = catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(p.as_ref()));
    IN_USER_CODE.with(|c| c.set(outer));
    r
}

/// Whether the current thread is inside a call to user code that the runtime guards (a
/// panic here is caught and reported as an error, so a panic hook may stay quiet).
pub fn in_user_code() -> bool {
    IN_USER_CODE.with(Cell::get)
}

/// The message of a panic payload (`&str` or `String`; anything else is described).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// Whether the current thread is one of the runtime's workers.
pub fn on_worker_thread() -> bool {
    std::thread::current().name() == Some(WORKER_THREAD_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catches_str_and_string_payloads() {
        assert_eq!(catch(|| 5).unwrap(), 5);
        assert_eq!(catch(|| -> i32 { panic!("boom") }).unwrap_err(), "boom");
        let n = 3;
        assert_eq!(
            catch(|| -> i32 { panic!("boom {n}") }).unwrap_err(),
            "boom 3"
        );
    }
}
