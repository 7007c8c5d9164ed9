//! The systemd journal's kernel lines of this boot, through libsystemd's `sd_journal` API loaded
//! at run time (the one library passive mode may load: ARCHITECTURE.md §4). Readable by members
//! of `adm` and `systemd-journal`; for others the journal shows no kernel lines, which the caller
//! reports as [`Refusal::Empty`].
//!
//! The calls (sd-journal(3), sd_id128_get_boot(3)): `sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY)`,
//! `sd_journal_add_match` for `_TRANSPORT=kernel` and `_BOOT_ID=<this boot>`, then
//! `sd_journal_next` and `sd_journal_get_data("MESSAGE")` per entry, and `sd_journal_close`.

#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void};

use crate::source::kernel_log::{Refusal, Sink};

/// The library's soname.
pub const LIBSYSTEMD: &str = "libsystemd.so.0";
/// `SD_JOURNAL_LOCAL_ONLY` (systemd/sd-journal.h).
const SD_JOURNAL_LOCAL_ONLY: c_int = 1;

type Open = unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int;
type AddMatch = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> c_int;
type Next = unsafe extern "C" fn(*mut c_void) -> c_int;
type GetData =
    unsafe extern "C" fn(*mut c_void, *const c_char, *mut *const c_void, *mut usize) -> c_int;
type Close = unsafe extern "C" fn(*mut c_void);
type GetBoot = unsafe extern "C" fn(*mut [u8; 16]) -> c_int;

/// Reads the kernel's journal entries of this boot into `sink`.
pub(crate) fn read(sink: &mut Sink<'_>) -> Result<(), Refusal> {
    // SAFETY: loading libsystemd runs its constructors, which only set up its own state; the
    // library is a system library, not one named by the user or the environment's ROCm paths.
    let lib = unsafe { libloading::Library::new(LIBSYSTEMD) }.map_err(|_| Refusal::Absent)?;
    // SAFETY: each symbol is looked up with the type its man page declares (see the module doc).
    let (open, add_match, next, get_data, close, get_boot) = unsafe {
        let sym = |e: libloading::Error| Refusal::Unusable(e.to_string());
        (
            *lib.get::<Open>(b"sd_journal_open\0").map_err(sym)?,
            *lib.get::<AddMatch>(b"sd_journal_add_match\0")
                .map_err(sym)?,
            *lib.get::<Next>(b"sd_journal_next\0").map_err(sym)?,
            *lib.get::<GetData>(b"sd_journal_get_data\0").map_err(sym)?,
            *lib.get::<Close>(b"sd_journal_close\0").map_err(sym)?,
            *lib.get::<GetBoot>(b"sd_id128_get_boot\0").map_err(sym)?,
        )
    };
    let mut boot = [0u8; 16];
    // SAFETY: `boot` is the 16-byte sd_id128_t the call fills.
    if unsafe { get_boot(&mut boot) } < 0 {
        return Err(Refusal::Unusable("sd_id128_get_boot".into()));
    }
    let boot_match = format!(
        "_BOOT_ID={}",
        boot.iter().map(|b| format!("{b:02x}")).collect::<String>()
    );
    let mut j: *mut c_void = std::ptr::null_mut();
    // SAFETY: `j` receives the journal handle; it is closed below on every path.
    let r = unsafe { open(&mut j, SD_JOURNAL_LOCAL_ONLY) };
    if r < 0 || j.is_null() {
        return Err(match -r {
            libc::EPERM | libc::EACCES => Refusal::Denied,
            _ => Refusal::Unusable(format!("sd_journal_open: {}", -r)),
        });
    }
    let result = (|| {
        for m in ["_TRANSPORT=kernel", boot_match.as_str()] {
            // SAFETY: `j` is open; the match is a byte string of the given length, copied.
            if unsafe { add_match(j, m.as_ptr().cast(), m.len()) } < 0 {
                return Err(Refusal::Unusable(format!("sd_journal_add_match {m}")));
            }
        }
        while !sink.full() {
            // SAFETY: `j` is open.
            let r = unsafe { next(j) };
            if r <= 0 {
                break;
            }
            let mut data: *const c_void = std::ptr::null();
            let mut len = 0usize;
            // SAFETY: `j` is open and positioned on an entry; the field name is NUL-terminated.
            let r = unsafe { get_data(j, c"MESSAGE".as_ptr(), &mut data, &mut len) };
            if r < 0 || data.is_null() {
                continue;
            }
            // SAFETY: on success `data` points to `len` bytes that stay valid until the next
            // call on `j`; they are copied out before it.
            let field = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) };
            let message = field.strip_prefix(b"MESSAGE=").unwrap_or(field);
            sink.push(None, None, message);
        }
        Ok(())
    })();
    // SAFETY: `j` was opened above and is not used after this.
    unsafe { close(j) };
    result
}
