//! An OTF2 archive opened through the OTF2 library: its global definitions, and the event
//! records of chosen locations handed to a closure in order. The only module with
//! `unsafe`: every call into the library and every callback it makes is here.
//!
//! The library reports errors through a process-wide callback ([`install_error_handler`])
//! that keeps the last message for the thread, instead of printing it; a failed call
//! becomes [`Error::Library`] with that message. Callbacks never unwind into C: a panic in
//! one is caught, the read interrupted, and the panic resumed once the library returned.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::Once;

use crate::defs::{Clock, Comm, Definitions, Group, Location, Region};
use crate::error::Error;
use crate::event::{Event, Record};
use crate::sys;

type Code = sys::OTF2_CallbackCode;
const CONTINUE: Code = sys::OTF2_CallbackCode_enum_OTF2_CALLBACK_SUCCESS;
const INTERRUPT: Code = sys::OTF2_CallbackCode_enum_OTF2_CALLBACK_INTERRUPT;
const SUCCESS: sys::OTF2_ErrorCode = sys::OTF2_ErrorCode_OTF2_SUCCESS;

thread_local! {
    /// The library's last error message on this thread.
    static LAST_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The library's error callback: keep the message (formatted with the C library's
/// `vsnprintf`) for the failed call to report, print nothing.
unsafe extern "C" fn on_library_error(
    _user: *mut c_void,
    _file: *const c_char,
    _line: u64,
    _function: *const c_char,
    code: sys::OTF2_ErrorCode,
    format: *const c_char,
    va: *mut sys::__va_list_tag,
) -> sys::OTF2_ErrorCode {
    let mut buf = [0 as c_char; 1024];
    let text = if format.is_null() {
        String::new()
    } else {
        // SAFETY: `format` and `va` are the format string and argument list the library
        // passes to its error callback for exactly this use; `buf` is writable for its
        // length, and vsnprintf writes at most that many bytes including the final NUL.
        let n = unsafe { sys::vsnprintf(buf.as_mut_ptr(), buf.len() as _, format, va) };
        if n < 0 {
            String::new()
        } else {
            // SAFETY: vsnprintf NUL-terminated `buf` within its length.
            unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        }
    };
    let message = format!("{}: {text}", code_name(code));
    LAST_ERROR.with(|e| *e.borrow_mut() = Some(message));
    code
}

/// The library's name and description of an error code.
fn code_name(code: sys::OTF2_ErrorCode) -> String {
    // SAFETY: both functions take any code and return a pointer to a static string (or
    // null), which is only read here.
    let (name, description) = unsafe {
        (
            sys::OTF2_Error_GetName(code),
            sys::OTF2_Error_GetDescription(code),
        )
    };
    let read = |p: *const c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: a non-null pointer from the library's static table of strings.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    let (name, description) = (read(name), read(description));
    if description.is_empty() {
        name
    } else {
        description
    }
}

/// Route the library's error messages to [`LAST_ERROR`] (once per process).
fn install_error_handler() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers a callback with the signature the library expects; the
        // callback reads only its arguments and a thread-local, and never unwinds.
        unsafe {
            sys::OTF2_Error_RegisterCallback(Some(on_library_error), std::ptr::null_mut());
        }
    });
}

fn take_last_error() -> Option<String> {
    LAST_ERROR.with(|e| e.borrow_mut().take())
}

/// An open archive.
pub struct Archive {
    reader: NonNull<sys::OTF2_Reader>,
    path: PathBuf,
}

impl Drop for Archive {
    fn drop(&mut self) {
        // SAFETY: `reader` came from OTF2_Reader_Open and is closed only here.
        unsafe {
            sys::OTF2_Reader_Close(self.reader.as_ptr());
        }
    }
}

/// What the callbacks of one read share: the closure's state, and what stopped the read.
struct Shared<'a, T> {
    state: &'a mut T,
    error: Option<Error>,
    panic: Option<Box<dyn Any + Send>>,
}

/// Run `f` on the shared state behind `user` (a callback's user data), catching panics
/// and errors: either stops the read.
///
/// # Safety
/// `user` must be the `Shared<T>` pointer this module registered for the read in
/// progress, not aliased elsewhere while the callback runs.
unsafe fn with_shared<T>(user: *mut c_void, f: impl FnOnce(&mut T) -> Result<(), Error>) -> Code {
    // SAFETY: the caller guarantees `user` is our exclusive `Shared<T>` for this read.
    let shared = unsafe { &mut *(user as *mut Shared<'_, T>) };
    if shared.error.is_some() || shared.panic.is_some() {
        return INTERRUPT;
    }
    match catch_unwind(AssertUnwindSafe(|| f(shared.state))) {
        Ok(Ok(())) => CONTINUE,
        Ok(Err(e)) => {
            shared.error = Some(e);
            INTERRUPT
        }
        Err(p) => {
            shared.panic = Some(p);
            INTERRUPT
        }
    }
}

/// Copy a C string the library passes to a callback.
///
/// # Safety
/// `p` is null or a NUL-terminated string valid for the duration of the call.
unsafe fn c_string(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: as the caller guarantees.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

impl Archive {
    /// Open the archive whose anchor file is `path` (`traces.otf2`).
    pub fn open(path: &Path) -> Result<Archive, Error> {
        install_error_handler();
        let c_path = CString::new(path.as_os_str().as_bytes()).map_err(|_| Error::Library {
            path: path.to_path_buf(),
            call: "OTF2_Reader_Open",
            doing: "opening its anchor file".into(),
            message: "the path contains a NUL byte".into(),
        })?;
        if !path.is_file() {
            return Err(Error::Library {
                path: path.to_path_buf(),
                call: "OTF2_Reader_Open",
                doing: "opening its anchor file".into(),
                message: if path.exists() {
                    "not a file (give the anchor file, e.g. traces.otf2)".into()
                } else {
                    "no such file".into()
                },
            });
        }
        take_last_error();
        // SAFETY: `c_path` is NUL-terminated and outlives the call; the library copies it.
        let reader = unsafe { sys::OTF2_Reader_Open(c_path.as_ptr()) };
        let reader = NonNull::new(reader).ok_or_else(|| Error::Library {
            path: path.to_path_buf(),
            call: "OTF2_Reader_Open",
            doing: "opening its anchor file (truncated, or not an OTF2 anchor?)".into(),
            message: take_last_error().unwrap_or_else(|| "the library could not open it".into()),
        })?;
        let archive = Archive {
            reader,
            path: path.to_path_buf(),
        };
        // SAFETY: `reader` is open; serial callbacks need no further setup.
        let code = unsafe { sys::OTF2_Reader_SetSerialCollectiveCallbacks(reader.as_ptr()) };
        archive.check(code, "OTF2_Reader_SetSerialCollectiveCallbacks", || {
            "opening its anchor file".into()
        })?;
        Ok(archive)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn library_error(
        &self,
        call: &'static str,
        code: Option<sys::OTF2_ErrorCode>,
        doing: String,
    ) -> Error {
        let message = take_last_error()
            .or_else(|| code.map(code_name))
            .unwrap_or_else(|| "failed".into());
        Error::Library {
            path: self.path.clone(),
            call,
            doing,
            message,
        }
    }

    fn check(
        &self,
        code: sys::OTF2_ErrorCode,
        call: &'static str,
        doing: impl FnOnce() -> String,
    ) -> Result<(), Error> {
        if code == SUCCESS {
            Ok(())
        } else {
            Err(self.library_error(call, Some(code), doing()))
        }
    }

    /// A file of the archive, as OTF2 lays it out: `traces.otf2` beside `traces.def` and
    /// the folder `traces/` (`NAME.def`, `NAME.evt` per location).
    fn file(&self, name: &str) -> String {
        let stem = self
            .path
            .file_stem()
            .map_or_else(|| "traces".into(), |s| s.to_string_lossy().into_owned());
        if name.is_empty() {
            format!("{stem}/")
        } else if name.starts_with('.') {
            format!("{stem}{name}")
        } else {
            format!("{stem}/{name}")
        }
    }

    /// Finish a read: a panic in a callback resumes here, an error from one is returned
    /// before the library's "interrupted" code.
    fn finish_read<T>(
        &self,
        shared: Shared<'_, T>,
        code: sys::OTF2_ErrorCode,
        call: &'static str,
        doing: impl FnOnce() -> String,
    ) -> Result<(), Error> {
        if let Some(p) = shared.panic {
            resume_unwind(p);
        }
        if let Some(e) = shared.error {
            return Err(e);
        }
        self.check(code, call, doing)
    }

    /// Read the global definitions.
    pub fn definitions(&mut self) -> Result<Definitions, Error> {
        let r = self.reader.as_ptr();
        take_last_error();
        // SAFETY: `r` is open; the returned reader belongs to it (closed below).
        let gdr = unsafe { sys::OTF2_Reader_GetGlobalDefReader(r) };
        if gdr.is_null() {
            let doing = format!("reading its global definitions ({})", self.file(".def"));
            return Err(self.library_error("OTF2_Reader_GetGlobalDefReader", None, doing));
        }
        let mut defs = Definitions::default();
        let mut shared = Shared {
            state: &mut defs,
            error: None,
            panic: None,
        };
        // SAFETY: the callbacks struct is created, filled with callbacks whose signatures
        // bindgen generated from the library's typedefs, registered with the user data
        // `shared` (which outlives the read below), used, and deleted; `gdr` is open.
        let code = unsafe {
            let cbs = sys::OTF2_GlobalDefReaderCallbacks_New();
            sys::OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cbs, Some(def_clock));
            sys::OTF2_GlobalDefReaderCallbacks_SetStringCallback(cbs, Some(def_string));
            sys::OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cbs, Some(def_region));
            sys::OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cbs, Some(def_location));
            sys::OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cbs, Some(def_group));
            sys::OTF2_GlobalDefReaderCallbacks_SetCommCallback(cbs, Some(def_comm));
            sys::OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cbs, Some(def_inter_comm));
            let reg = sys::OTF2_Reader_RegisterGlobalDefCallbacks(
                r,
                gdr,
                cbs,
                &mut shared as *mut Shared<'_, Definitions> as *mut c_void,
            );
            sys::OTF2_GlobalDefReaderCallbacks_Delete(cbs);
            let mut n = 0u64;
            let code = if reg == SUCCESS {
                sys::OTF2_Reader_ReadAllGlobalDefinitions(r, gdr, &mut n)
            } else {
                reg
            };
            sys::OTF2_Reader_CloseGlobalDefReader(r, gdr);
            code
        };
        self.finish_read(shared, code, "OTF2_Reader_ReadAllGlobalDefinitions", || {
            format!("reading its global definitions ({})", self.file(".def"))
        })?;
        Ok(defs)
    }

    /// Read the events of `locations` one location after the other, each in its order,
    /// handing `visit` the index of the location in `locations` and the record. An error
    /// from `visit` stops the read and is returned.
    pub fn read_events(
        &mut self,
        locations: &[u64],
        visit: &mut dyn FnMut(usize, Record) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let r = self.reader.as_ptr();
        take_last_error();
        for &loc in locations {
            // SAFETY: `r` is open; selecting a location only marks it for reading.
            let code = unsafe { sys::OTF2_Reader_SelectLocation(r, loc) };
            self.check(code, "OTF2_Reader_SelectLocation", || {
                format!("selecting location {loc}")
            })?;
        }
        // Local definitions (Score-P's mapping tables from local to global references)
        // are read before the events, which the library then maps.
        // SAFETY: `r` is open.
        let defs_open = unsafe { sys::OTF2_Reader_OpenDefFiles(r) } == SUCCESS;
        take_last_error();
        // SAFETY: `r` is open.
        let code = unsafe { sys::OTF2_Reader_OpenEvtFiles(r) };
        self.check(code, "OTF2_Reader_OpenEvtFiles", || {
            format!("opening its event files ({})", self.file(""))
        })?;
        let mut evt_readers = Vec::with_capacity(locations.len());
        let mut failure = None;
        for &loc in locations {
            if defs_open {
                // SAFETY: `r` is open with its definition files; a null reader means the
                // location has no local definitions, which is allowed.
                let dr = unsafe { sys::OTF2_Reader_GetDefReader(r, loc) };
                if !dr.is_null() {
                    let mut n = 0u64;
                    // SAFETY: `dr` was just returned for `r`; no callbacks are registered,
                    // so reading only loads the mapping tables; it is closed right after.
                    let code = unsafe {
                        let code = sys::OTF2_Reader_ReadAllLocalDefinitions(r, dr, &mut n);
                        sys::OTF2_Reader_CloseDefReader(r, dr);
                        code
                    };
                    if code != SUCCESS {
                        let doing = format!(
                            "reading the local definitions of location {loc} ({})",
                            self.file(&format!("{loc}.def"))
                        );
                        failure = Some(self.library_error(
                            "OTF2_Reader_ReadAllLocalDefinitions",
                            Some(code),
                            doing,
                        ));
                        break;
                    }
                }
                take_last_error();
            }
            // SAFETY: `r` is open with its event files.
            let er = unsafe { sys::OTF2_Reader_GetEvtReader(r, loc) };
            if er.is_null() {
                let doing = format!(
                    "reading the events of location {loc} ({})",
                    self.file(&format!("{loc}.evt"))
                );
                failure = Some(self.library_error("OTF2_Reader_GetEvtReader", None, doing));
                break;
            }
            evt_readers.push(er);
        }
        if defs_open {
            // SAFETY: `r` is open; its definition readers are all closed.
            unsafe { sys::OTF2_Reader_CloseDefFiles(r) };
        }
        let mut result = match failure {
            Some(e) => Err(e),
            None => Ok(()),
        };
        for (i, &er) in evt_readers.iter().enumerate() {
            if result.is_ok() {
                result = self.read_location(er, i, locations[i], visit);
            }
            // SAFETY: `er` came from OTF2_Reader_GetEvtReader on `r` and is closed once.
            unsafe { sys::OTF2_Reader_CloseEvtReader(r, er) };
        }
        // SAFETY: `r` is open; its event readers are all closed.
        unsafe { sys::OTF2_Reader_CloseEvtFiles(r) };
        result
    }

    fn read_location(
        &self,
        er: *mut sys::OTF2_EvtReader,
        index: usize,
        location: u64,
        visit: &mut dyn FnMut(usize, Record) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let r = self.reader.as_ptr();
        let mut sink = EventSink { index, visit };
        let mut shared = Shared {
            state: &mut sink,
            error: None,
            panic: None,
        };
        // SAFETY: as for the definitions: callbacks with bindgen's signatures, user data
        // `shared` outliving the read, the callbacks struct deleted after registration
        // (the library copies it); `er` is an open event reader of `r`.
        let code = unsafe {
            let cbs = sys::OTF2_EvtReaderCallbacks_New();
            sys::OTF2_EvtReaderCallbacks_SetEnterCallback(cbs, Some(ev_enter));
            sys::OTF2_EvtReaderCallbacks_SetLeaveCallback(cbs, Some(ev_leave));
            sys::OTF2_EvtReaderCallbacks_SetMpiSendCallback(cbs, Some(ev_send));
            sys::OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cbs, Some(ev_isend));
            sys::OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cbs, Some(ev_isend_done));
            sys::OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cbs, Some(ev_irecv_req));
            sys::OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cbs, Some(ev_recv));
            sys::OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cbs, Some(ev_irecv));
            sys::OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(cbs, Some(ev_test));
            sys::OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cbs, Some(ev_cancel));
            sys::OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cbs, Some(ev_coll_begin));
            sys::OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cbs, Some(ev_coll_end));
            sys::OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(
                cbs,
                Some(ev_nbc_request),
            );
            sys::OTF2_EvtReaderCallbacks_SetRmaPutCallback(cbs, Some(ev_rma_put));
            sys::OTF2_EvtReaderCallbacks_SetRmaGetCallback(cbs, Some(ev_rma_get));
            let reg = sys::OTF2_Reader_RegisterEvtCallbacks(
                r,
                er,
                cbs,
                &mut shared as *mut Shared<'_, EventSink<'_>> as *mut c_void,
            );
            sys::OTF2_EvtReaderCallbacks_Delete(cbs);
            let mut n = 0u64;
            if reg == SUCCESS {
                sys::OTF2_Reader_ReadAllLocalEvents(r, er, &mut n)
            } else {
                reg
            }
        };
        self.finish_read(shared, code, "OTF2_Reader_ReadAllLocalEvents", || {
            format!(
                "reading the events of location {location} ({})",
                self.file(&format!("{location}.evt"))
            )
        })
    }
}

/// Where event callbacks send their records.
struct EventSink<'a> {
    index: usize,
    visit: &'a mut dyn FnMut(usize, Record) -> Result<(), Error>,
}

// Definition callbacks: each stores one definition (the user data is the
// `Shared<Definitions>` of `Archive::definitions`).

unsafe extern "C" fn def_clock(
    user: *mut c_void,
    resolution: u64,
    offset: u64,
    length: u64,
    _realtime: u64,
) -> Code {
    // SAFETY: registered with `Shared<Definitions>` user data by `Archive::definitions`.
    unsafe {
        with_shared(user, |d: &mut Definitions| {
            d.clock = Some(Clock {
                resolution,
                offset,
                length,
            });
            Ok(())
        })
    }
}

unsafe extern "C" fn def_string(user: *mut c_void, id: u32, s: *const c_char) -> Code {
    // SAFETY: the library passes a NUL-terminated string valid during the callback.
    let s = unsafe { c_string(s) };
    // SAFETY: registered with `Shared<Definitions>` user data by `Archive::definitions`.
    unsafe {
        with_shared(user, |d: &mut Definitions| {
            d.strings.insert(id, s);
            Ok(())
        })
    }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn def_region(
    user: *mut c_void,
    id: u32,
    name: u32,
    canonical_name: u32,
    _description: u32,
    role: sys::OTF2_RegionRole,
    paradigm: sys::OTF2_Paradigm,
    _flags: sys::OTF2_RegionFlag,
    _file: u32,
    _begin: u32,
    _end: u32,
) -> Code {
    // SAFETY: registered with `Shared<Definitions>` user data by `Archive::definitions`.
    unsafe {
        with_shared(user, |d: &mut Definitions| {
            d.regions.insert(
                id,
                Region {
                    name,
                    canonical_name,
                    role,
                    paradigm,
                },
            );
            Ok(())
        })
    }
}

unsafe extern "C" fn def_location(
    user: *mut c_void,
    id: u64,
    name: u32,
    kind: sys::OTF2_LocationType,
    events: u64,
    group: u32,
) -> Code {
    // SAFETY: registered with `Shared<Definitions>` user data by `Archive::definitions`.
    unsafe {
        with_shared(user, |d: &mut Definitions| {
            d.locations.insert(
                id,
                Location {
                    name,
                    kind,
                    events,
                    group,
                },
            );
            Ok(())
        })
    }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn def_group(
    user: *mut c_void,
    id: u32,
    name: u32,
    kind: sys::OTF2_GroupType,
    paradigm: sys::OTF2_Paradigm,
    flags: sys::OTF2_GroupFlag,
    n: u32,
    members: *const u64,
) -> Code {
    let members = if n == 0 || members.is_null() {
        Vec::new()
    } else {
        // SAFETY: the library passes `n` members at `members`, valid during the callback.
        unsafe { std::slice::from_raw_parts(members, n as usize) }.to_vec()
    };
    // SAFETY: registered with `Shared<Definitions>` user data by `Archive::definitions`.
    unsafe {
        with_shared(user, |d: &mut Definitions| {
            d.groups.insert(
                id,
                Group {
                    name,
                    kind,
                    paradigm,
                    flags,
                    members,
                },
            );
            Ok(())
        })
    }
}

unsafe extern "C" fn def_comm(
    user: *mut c_void,
    id: u32,
    name: u32,
    group: u32,
    parent: u32,
    _flags: sys::OTF2_CommFlag,
) -> Code {
    // SAFETY: registered with `Shared<Definitions>` user data by `Archive::definitions`.
    unsafe {
        with_shared(user, |d: &mut Definitions| {
            d.comms.insert(
                id,
                Comm {
                    name,
                    group,
                    parent,
                },
            );
            Ok(())
        })
    }
}

unsafe extern "C" fn def_inter_comm(
    user: *mut c_void,
    id: u32,
    _name: u32,
    _group_a: u32,
    _group_b: u32,
    _common: u32,
    _flags: sys::OTF2_CommFlag,
) -> Code {
    // SAFETY: registered with `Shared<Definitions>` user data by `Archive::definitions`.
    unsafe {
        with_shared(user, |d: &mut Definitions| {
            d.inter_comms.insert(id);
            Ok(())
        })
    }
}

// Event callbacks: each hands one record to the sink (the user data is the
// `Shared<EventSink>` of `Archive::read_location`).

/// Hand `event` to the sink behind `user`.
///
/// # Safety
/// `user` is the `Shared<EventSink>` registered by `Archive::read_location`.
unsafe fn emit(user: *mut c_void, time: u64, position: u64, event: Event) -> Code {
    // SAFETY: as the caller guarantees.
    unsafe {
        with_shared(user, |s: &mut EventSink<'_>| {
            (s.visit)(
                s.index,
                Record {
                    position,
                    time,
                    event,
                },
            )
        })
    }
}

/// Defines an event callback with the library's leading parameters (location, time,
/// position, user data, attributes), the record's own parameters, and the `Event` built
/// from them.
macro_rules! event_callback {
    ($name:ident ( $($arg:ident : $ty:ty),* ) => $event:expr) => {
        unsafe extern "C" fn $name(
            _location: sys::OTF2_LocationRef,
            time: sys::OTF2_TimeStamp,
            position: u64,
            user: *mut c_void,
            _attributes: *mut sys::OTF2_AttributeList,
            $($arg: $ty),*
        ) -> Code {
            // SAFETY: registered with `Shared<EventSink>` user data by
            // `Archive::read_location`.
            unsafe { emit(user, time, position, $event) }
        }
    };
}

event_callback!(ev_enter(region: u32) => Event::Enter { region });
event_callback!(ev_leave(region: u32) => Event::Leave { region });
event_callback!(ev_send(receiver: u32, comm: u32, tag: u32, bytes: u64) =>
    Event::MpiSend { receiver, comm, tag, bytes });
event_callback!(ev_isend(receiver: u32, comm: u32, tag: u32, bytes: u64, request: u64) =>
    Event::MpiIsend { receiver, comm, tag, bytes, request });
event_callback!(ev_isend_done(request: u64) => Event::MpiIsendComplete { request });
event_callback!(ev_irecv_req(request: u64) => Event::MpiIrecvRequest { request });
event_callback!(ev_recv(sender: u32, comm: u32, tag: u32, bytes: u64) =>
    Event::MpiRecv { sender, comm, tag, bytes });
event_callback!(ev_irecv(sender: u32, comm: u32, tag: u32, bytes: u64, request: u64) =>
    Event::MpiIrecv { sender, comm, tag, bytes, request });
event_callback!(ev_test(request: u64) => Event::MpiRequestTest { request });
event_callback!(ev_cancel(request: u64) => Event::MpiRequestCancelled { request });
event_callback!(ev_coll_begin() => Event::MpiCollectiveBegin);
event_callback!(ev_coll_end(op: sys::OTF2_CollectiveOp, comm: u32, root: u32, sent: u64,
    received: u64) => Event::MpiCollectiveEnd { op, comm, root, sent, received });
event_callback!(ev_nbc_request(_request: u64) =>
    Event::NotReplayed { what: "non-blocking collective" });
event_callback!(ev_rma_put(_win: u32, _remote: u32, _bytes: u64, _matching: u64) =>
    Event::NotReplayed { what: "one-sided put" });
event_callback!(ev_rma_get(_win: u32, _remote: u32, _bytes: u64, _matching: u64) =>
    Event::NotReplayed { what: "one-sided get" });
