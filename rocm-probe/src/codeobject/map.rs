//! The memory map of a file being inspected: the one module of the code-object reader that
//! needs `unsafe` (ARCHITECTURE.md §4: "the memory map of large binaries").
//!
//! A fat-binary library is over a gigabyte; its bundle headers are a few kilobytes spread
//! through it. Mapping the file and reading only those ranges touches a few pages instead of
//! reading the whole file, and the pages stay the kernel's page cache (nothing is copied).

#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::sync::Arc;

use memmap2::{Advice, Mmap, UncheckedAdvice};

/// A read-only view of a whole file.
#[derive(Debug)]
pub(crate) struct Mapped {
    /// `None` for an empty file, which cannot be mapped.
    map: Option<Mmap>,
    /// The file, to ask where its holes are.
    file: Option<File>,
    /// Bytes already in memory (a member of a fixture archive), in place of a map.
    memory: Option<Arc<[u8]>>,
}

impl Mapped {
    /// Maps `file` read-only.
    pub(crate) fn new(file: &File) -> io::Result<Self> {
        let len = file.metadata()?.len();
        if len == 0 {
            return Ok(Self {
                map: None,
                file: None,
                memory: None,
            });
        }
        // SAFETY: the mapping is read-only and private to this process, and every access goes
        // through `bytes()`, a slice of exactly the mapped length. What Rust cannot rule out is
        // another process changing the file while it is mapped: a write shows through
        // (harmless here: every value read is bounds-checked as if it were hostile anyway) and
        // a truncation turns reads past the new end into SIGBUS. Inspected files are installed
        // libraries and build outputs, not files being rewritten; this is the trade every
        // mmap-based object reader (roc-obj-ls's objdump, LLVM) makes.
        let map = unsafe { Mmap::map(file)? };
        // Bundle headers are far apart: readahead around each one would only read pages that
        // are never looked at.
        let _ = map.advise(Advice::Random);
        Ok(Self {
            map: Some(map),
            file: file.try_clone().ok(),
            memory: None,
        })
    }

    /// A view of bytes already in memory.
    pub(crate) fn memory(bytes: Arc<[u8]>) -> Self {
        Self {
            map: None,
            file: None,
            memory: Some(bytes),
        }
    }

    /// Where the first byte of data at or after `offset` is, skipping holes (which read as
    /// zeros without being stored): the file's length when only a hole is left; `None` when
    /// the file system cannot tell.
    pub(crate) fn next_data(&self, offset: usize) -> Option<usize> {
        let file = self.file.as_ref()?;
        let at = i64::try_from(offset).ok()?;
        match nix::unistd::lseek(file, at, nix::unistd::Whence::SeekData) {
            Ok(d) => usize::try_from(d).ok(),
            Err(nix::errno::Errno::ENXIO) => Some(self.bytes().len()),
            Err(_) => None,
        }
    }

    /// The file's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match (&self.map, &self.memory) {
            (Some(map), _) => map,
            (None, Some(memory)) => memory,
            (None, None) => &[],
        }
    }

    /// Drops the pages of `offset..offset + len` from this process's page tables after a
    /// large range has been scanned, so that scanning a big file does not grow the resident
    /// set by its size. The pages stay in the page cache; reading them again faults them back
    /// in. Out-of-range requests are ignored.
    pub(crate) fn release(&self, offset: usize, len: usize) {
        let Some(map) = &self.map else { return };
        let page = 4096;
        let start = offset.next_multiple_of(page);
        let end = offset.saturating_add(len).min(map.len());
        if start >= end {
            return;
        }
        // SAFETY: MADV_DONTNEED on a read-only, file-backed mapping discards no data: the
        // mapping has no private (copy-on-write) pages, since it is never written, so the
        // next access reads the same bytes from the file again. No reference into the range
        // outlives this call's caller's use of it (callers release only ranges they have
        // finished scanning), and even one that did would still see the file's bytes.
        let _ =
            unsafe { map.unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start) };
    }
}
