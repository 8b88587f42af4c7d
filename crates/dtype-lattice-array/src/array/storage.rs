//! Element storage: one shared vector of fixed-width words per array, the word being the
//! element's width (`u8` for bool, int8, the 1-, 2- and 4-bit integers and the 4-, 6- and 8-bit
//! floats; `u16` for float16, bfloat16 and 16-bit integers; … `u128` for complex128). Typed
//! views (`&[f32]` of a `u32` vector) are `bytemuck` casts: no copy, no `unsafe`.
//!
//! Key arrays store their key data: `key_words` `u32` words per key.

use std::sync::Arc;

/// The words of an array, shared between clones (arrays are immutable).
#[derive(Clone, Debug)]
pub(crate) enum Storage {
    W8(Shared<u8>),
    W16(Shared<u16>),
    W32(Shared<u32>),
    W64(Shared<u64>),
    W128(Shared<u128>),
}

/// A shared vector of words, read through `Deref` as the slice of an array's words: the
/// vector's words from `start` on. `start` is 0 but in a large buffer from [`pool::shared`],
/// where it skips the words before the first 64-byte line boundary (see [`pool::LINE`]). The
/// vector is `None` only inside [`Storage`]'s `drop`, which moves it out to [`pool`] whole:
/// an `Option` rather than an empty vector left in its place, whose reference count would be
/// raised and lowered again for every array freed.
#[derive(Clone, Debug)]
pub(crate) struct Shared<W> {
    words: Option<Arc<Vec<W>>>,
    start: usize,
}

impl<W> Default for Shared<W> {
    /// An empty vector.
    fn default() -> Shared<W> {
        Shared {
            words: Some(Arc::default()),
            start: 0,
        }
    }
}

impl<W> From<Arc<Vec<W>>> for Shared<W> {
    fn from(a: Arc<Vec<W>>) -> Shared<W> {
        Shared {
            words: Some(a),
            start: 0,
        }
    }
}

impl<W> Shared<W> {
    /// The words, writable if no other storage shares them.
    fn unique_mut(&mut self) -> Option<&mut [W]> {
        let start = self.start;
        Arc::get_mut(self.words.as_mut()?)?.get_mut(start..)
    }
}

impl<W> std::ops::Deref for Shared<W> {
    type Target = [W];

    fn deref(&self) -> &[W] {
        match &self.words {
            Some(v) => v.get(self.start..).unwrap_or_default(),
            None => &[],
        }
    }
}

/// A storage word: `u8`, `u16`, `u32`, `u64` or `u128` (sealed).
pub trait Word: sealed::Words + bytemuck::Pod + Default + Send + Sync + 'static {}

/// Buffers freed by arrays, kept for the next result.
///
/// - Large buffers (at least [`POOL_MIN_BYTES`](pool::POOL_MIN_BYTES), the most recently
///   freed [`POOL_BUFFERS`](pool::POOL_BUFFERS) per word width up to
///   [`POOL_MAX_BYTES`](pool::POOL_MAX_BYTES) in all, shared by all threads): a fresh buffer
///   of tens of megabytes costs a page fault per 4 KiB on first write (NumPy avoids that with
///   huge pages, which safe Rust cannot ask for), a recycled one is already mapped. The
///   oldest buffer leaves first, so a program's current sizes replace an earlier program's.
/// - Medium buffers (above [`SMALL_BYTES`](pool::SMALL_BYTES), at most
///   [`MEDIUM_BYTES`](pool::MEDIUM_BYTES), at most [`MEDIUM_BUFFERS`](pool::MEDIUM_BUFFERS)
///   per word width and thread): the blocks a fused loop of compiled `jit` computes, one after
///   another on each core, reuse the same few cache-resident buffers instead of clearing fresh
///   ones.
/// - Small buffers (at most [`SMALL_BYTES`](pool::SMALL_BYTES), at most
///   [`SMALL_BUFFERS`](pool::SMALL_BUFFERS) per word width and thread) are kept whole, the
///   shared vector with its words: an operation on a few elements then allocates nothing (NumPy
///   keeps a cache of small data blocks for the same reason).
pub(crate) mod pool {
    use std::cell::RefCell;
    use std::sync::{Arc, Mutex};

    /// The smallest buffer worth keeping.
    pub(crate) const POOL_MIN_BYTES: usize = 1 << 22;
    /// How many large buffers of one word width are kept.
    pub(crate) const POOL_BUFFERS: usize = 8;
    /// The most bytes of large buffers of one word width kept.
    pub(crate) const POOL_MAX_BYTES: usize = 1 << 30;
    /// The largest medium buffer kept.
    pub(crate) const MEDIUM_BYTES: usize = 1 << 19;
    /// How many medium buffers of one word width a thread keeps.
    pub(crate) const MEDIUM_BUFFERS: usize = 16;
    /// The largest small buffer kept.
    pub(crate) const SMALL_BYTES: usize = 1 << 10;
    /// How many small buffers of one word width a thread keeps.
    pub(crate) const SMALL_BUFFERS: usize = 32;

    /// The pools of one word width.
    pub(crate) trait Pooled: bytemuck::Pod + Default {
        /// The large buffers.
        fn pool() -> &'static Mutex<Vec<Vec<Self>>>;
        /// This thread's small buffers (each unshared).
        fn with_small<R>(f: impl FnOnce(&mut Vec<Arc<Vec<Self>>>) -> R) -> Option<R>;
        /// This thread's medium buffers.
        fn with_medium<R>(f: impl FnOnce(&mut Vec<Vec<Self>>) -> R) -> Option<R>;
    }

    macro_rules! pooled {
        ($($t:ty),*) => {$(
            impl Pooled for $t {
                fn pool() -> &'static Mutex<Vec<Vec<$t>>> {
                    static POOL: Mutex<Vec<Vec<$t>>> = Mutex::new(Vec::new());
                    &POOL
                }
                fn with_small<R>(f: impl FnOnce(&mut Vec<Arc<Vec<$t>>>) -> R) -> Option<R> {
                    thread_local! {
                        static SMALL: RefCell<Vec<Arc<Vec<$t>>>> = const { RefCell::new(Vec::new()) };
                    }
                    SMALL.try_with(|c| c.try_borrow_mut().ok().map(|mut c| f(&mut c))).ok().flatten()
                }
                fn with_medium<R>(f: impl FnOnce(&mut Vec<Vec<$t>>) -> R) -> Option<R> {
                    thread_local! {
                        static MEDIUM: RefCell<Vec<Vec<$t>>> = const { RefCell::new(Vec::new()) };
                    }
                    MEDIUM.try_with(|c| c.try_borrow_mut().ok().map(|mut c| f(&mut c))).ok().flatten()
                }
            }
        )*};
    }
    pooled!(u8, u16, u32, u64, u128);

    /// Keeps `v` for reuse: in this thread's cache if it is medium-sized and the cache has
    /// room; in the shared pool if it is large (the pool's oldest buffers leaving to keep it
    /// within [`POOL_BUFFERS`] and [`POOL_MAX_BYTES`]).
    pub(crate) fn recycle<W: Pooled>(v: Vec<W>) {
        let bytes = v.capacity() * size_of::<W>();
        if bytes <= MEDIUM_BYTES {
            if bytes > SMALL_BYTES {
                W::with_medium(|c| {
                    if c.len() < MEDIUM_BUFFERS {
                        c.push(v);
                    }
                });
            }
            return;
        }
        if !(POOL_MIN_BYTES..=POOL_MAX_BYTES).contains(&bytes) {
            return;
        }
        let evicted = {
            let Ok(mut p) = W::pool().lock() else {
                return;
            };
            p.push(v);
            let mut total: usize = p.iter().map(|v| v.capacity() * size_of::<W>()).sum();
            let mut drop_n = 0;
            while p.len() - drop_n > POOL_BUFFERS || total > POOL_MAX_BYTES {
                total -= p[drop_n].capacity() * size_of::<W>();
                drop_n += 1;
            }
            p.drain(..drop_n).collect::<Vec<_>>()
        };
        // Unmapped outside the lock.
        drop(evicted);
    }

    /// Keeps `a` for reuse if it is unshared: whole if it is small and this thread's cache
    /// has room, else its words if they are large; else lets it go.
    ///
    /// Whether it is shared is read from its counts, which no other thread can raise (only
    /// the owners of a vector clone it, and no weak pointer to one is ever made); no
    /// read-modify-write of a counter, each costing as much as the rest of a small
    /// operation. [`shared`] takes a kept vector back with `Arc::get_mut`, whose acquiring
    /// check orders the writes to come after the former owners' reads.
    pub(crate) fn give<W: Pooled>(a: Arc<Vec<W>>) {
        if Arc::strong_count(&a) != 1 || Arc::weak_count(&a) != 0 {
            return;
        }
        let cap = a.capacity();
        if cap == 0 {
            return;
        }
        if cap * size_of::<W>() <= SMALL_BYTES {
            W::with_small(|c| {
                if c.len() < SMALL_BUFFERS {
                    c.push(a);
                }
            });
        } else if let Some(v) = Arc::into_inner(a) {
            recycle(v);
        }
    }

    /// The cache line: a large buffer's words start on a multiple of it.
    pub(crate) const LINE: usize = 64;

    /// `n` words written by `fill`, in a shared vector: a cached one when `n` is small, else
    /// a pooled or fresh one. With `zero`, `fill` is given zeroed words; without, a recycled
    /// buffer keeps its old words (for a `fill` that writes every word: clearing tens of
    /// megabytes first costs a pass over memory).
    ///
    /// The words of a large buffer (at least [`POOL_MIN_BYTES`]) start at a [`LINE`]
    /// boundary, as XLA aligns its buffers: the global allocator aligns a vector to its
    /// word, 16 bytes at most, so that a row of 256 bytes read at a random place would
    /// otherwise span five cache lines instead of four (a scatter-add of such rows measured
    /// about a tenth faster aligned). `Vec` cannot ask the allocator for more alignment on
    /// stable Rust, so the vector is longer by a line and the words start inside it.
    pub(crate) fn shared<W: Pooled, E>(
        n: usize,
        zero: bool,
        fill: impl FnOnce(&mut [W]) -> Result<(), E>,
    ) -> Result<super::Shared<W>, E> {
        if n * size_of::<W>() <= SMALL_BYTES
            && let Some(mut a) = W::with_small(|c| {
                let i = c.iter().rposition(|a| a.capacity() >= n)?;
                Some(c.swap_remove(i))
            })
            .flatten()
            && let Some(v) = Arc::get_mut(&mut a)
        {
            // A `fill` that writes every word may find the old ones (the common case, a
            // result of the size just freed, then costs no clearing).
            if zero || v.len() != n {
                v.clear();
                v.resize(n, W::default());
            } else if cfg!(debug_assertions) {
                bytemuck::cast_slice_mut::<W, u8>(v).fill(0xA5);
            }
            fill(v)?;
            return Ok(a.into());
        }
        let pad = if n * size_of::<W>() >= POOL_MIN_BYTES {
            LINE / size_of::<W>()
        } else {
            0
        };
        let mut v = if zero {
            zeroed::<W>(n + pad)
        } else {
            reused::<W>(n + pad)
        };
        // The words before the first line boundary (the vector is aligned to its word, whose
        // size divides the line's).
        let start = if pad == 0 {
            0
        } else {
            (LINE - v.as_ptr() as usize % LINE) % LINE / size_of::<W>()
        };
        v.truncate(start + n);
        fill(&mut v[start..])?;
        Ok(super::Shared {
            words: Some(Arc::new(v)),
            start,
        })
    }

    /// A vector of `n` default words, reusing a pooled buffer of a fitting size if any.
    pub(crate) fn zeroed<W: Pooled>(n: usize) -> Vec<W> {
        match pooled::<W>(n) {
            Some(mut v) => {
                v.fill(W::default());
                v
            }
            None => vec![W::default(); n],
        }
    }

    /// A vector of `n` words: a pooled buffer of a fitting size with whatever words it held
    /// (any bit pattern is a valid word), else a fresh zeroed one.
    pub(crate) fn reused<W: Pooled>(n: usize) -> Vec<W> {
        pooled::<W>(n).unwrap_or_else(|| vec![W::default(); n])
    }

    /// A kept buffer of `n` words of a fitting size (at least `n`, at most `2n` words), if
    /// any, with whatever words it held.
    fn pooled<W: Pooled>(n: usize) -> Option<Vec<W>> {
        let bytes = n * size_of::<W>();
        let fits = |v: &Vec<W>| v.capacity() >= n && v.capacity() <= 2 * n;
        if bytes > SMALL_BYTES && bytes <= MEDIUM_BYTES {
            let mut v = W::with_medium(|c| {
                let i = c.iter().rposition(fits)?;
                Some(c.swap_remove(i))
            })
            .flatten()?;
            v.truncate(n);
            v.resize(n, W::default());
            return Some(poisoned(v));
        }
        if bytes < POOL_MIN_BYTES {
            return None;
        }
        let mut p = W::pool().lock().ok()?;
        // The most recently kept first: its pages are the likeliest in cache.
        let i = p.iter().rposition(fits)?;
        let mut v = p.swap_remove(i);
        drop(p);
        v.truncate(n);
        v.resize(n, W::default());
        Some(poisoned(v))
    }

    /// In debug builds (the test suites), a reused buffer's words are overwritten with a
    /// pattern, so that a kernel that relies on its old contents (or on zeros) instead of
    /// writing every word fails the tests rather than passing by luck.
    fn poisoned<W: Pooled>(mut v: Vec<W>) -> Vec<W> {
        if cfg!(debug_assertions) {
            bytemuck::cast_slice_mut::<W, u8>(&mut v).fill(0xA5);
        }
        v
    }
}

impl Drop for Storage {
    /// The last owner of a buffer gives it to [`pool`].
    fn drop(&mut self) {
        fn give<W: pool::Pooled>(s: &mut Shared<W>) {
            if let Some(a) = s.words.take() {
                pool::give(a);
            }
        }
        match self {
            Storage::W8(a) => give(a),
            Storage::W16(a) => give(a),
            Storage::W32(a) => give(a),
            Storage::W64(a) => give(a),
            Storage::W128(a) => give(a),
        }
    }
}

// `Words` is sealed: outside the crate it cannot be named, so `Storage` in its signatures is
// unreachable there, whatever the lint infers from `Word` being public.
#[allow(private_interfaces)]
pub(crate) mod sealed {
    use super::Storage;

    /// How storage holds words of one width (not implementable outside the crate).
    pub trait Words: Sized {
        /// Wraps a vector of these words.
        fn into_storage(v: Vec<Self>) -> Storage;
        /// Wraps a shared vector of these words.
        fn into_shared_storage(v: super::Shared<Self>) -> Storage;
        /// The words, if the storage holds this width.
        fn view(s: &Storage) -> Option<&[Self]>;
    }
}

use sealed::Words;

macro_rules! words {
    ($($t:ty => $v:ident),*) => {$(
        impl Word for $t {}
        #[allow(private_interfaces)]
        impl Words for $t {
            fn into_storage(v: Vec<Self>) -> Storage {
                Storage::$v(Arc::new(v).into())
            }
            fn into_shared_storage(v: Shared<Self>) -> Storage {
                Storage::$v(v)
            }
            fn view(s: &Storage) -> Option<&[Self]> {
                match s {
                    Storage::$v(v) => Some(v),
                    _ => None,
                }
            }
        }
    )*};
}

words!(u8 => W8, u16 => W16, u32 => W32, u64 => W64, u128 => W128);

/// A word of at most 64 bits, as a `u64` and back (truncating): what word loops that move
/// bits between widths compute in.
pub(crate) trait Word64: Word + pool::Pooled {
    /// The word, zero-extended.
    fn to_u64(self) -> u64;
    /// The low bits of `v`.
    fn from_u64(v: u64) -> Self;
}

macro_rules! word64 {
    ($($t:ty),*) => {$(
        impl Word64 for $t {
            #[inline(always)]
            fn to_u64(self) -> u64 {
                u64::from(self)
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
        }
    )*};
}

word64!(u8, u16, u32, u64);

impl Storage {
    /// The number of words.
    pub(crate) fn len(&self) -> usize {
        match self {
            Storage::W8(v) => v.len(),
            Storage::W16(v) => v.len(),
            Storage::W32(v) => v.len(),
            Storage::W64(v) => v.len(),
            Storage::W128(v) => v.len(),
        }
    }

    /// The words as little-endian bytes, writable if no other storage shares them.
    pub(crate) fn unique_bytes_mut(&mut self) -> Option<&mut [u8]> {
        fn mine<W: Word>(s: &mut Shared<W>) -> Option<&mut [u8]> {
            s.unique_mut().map(bytemuck::cast_slice_mut)
        }
        match self {
            Storage::W8(v) => mine(v),
            Storage::W16(v) => mine(v),
            Storage::W32(v) => mine(v),
            Storage::W64(v) => mine(v),
            Storage::W128(v) => mine(v),
        }
    }

    /// The words as little-endian bytes (the layout of NumPy's buffers).
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Storage::W8(v) => v,
            Storage::W16(v) => bytemuck::cast_slice(v),
            Storage::W32(v) => bytemuck::cast_slice(v),
            Storage::W64(v) => bytemuck::cast_slice(v),
            Storage::W128(v) => bytemuck::cast_slice(v),
        }
    }

    /// Storage of `n` zeroed words of `width` bytes (1, 2, 4, 8 or 16), filled by `fill` through
    /// its little-endian bytes.
    pub(crate) fn filled<E>(
        width: usize,
        n: usize,
        fill: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<Storage, E> {
        Storage::build(width, n, true, fill)
    }

    /// [`Storage::filled`] for a `fill` that writes every byte: the words it is given may hold
    /// a recycled buffer's old values instead of zeros.
    pub(crate) fn overwritten<E>(
        width: usize,
        n: usize,
        fill: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<Storage, E> {
        Storage::build(width, n, false, fill)
    }

    fn build<E>(
        width: usize,
        n: usize,
        zero: bool,
        fill: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<Storage, E> {
        fn words<W: Word + pool::Pooled, E>(
            n: usize,
            zero: bool,
            fill: impl FnOnce(&mut [u8]) -> Result<(), E>,
        ) -> Result<Storage, E> {
            let a = pool::shared::<W, E>(n, zero, |v| fill(bytemuck::cast_slice_mut(v)))?;
            Ok(W::into_shared_storage(a))
        }
        match width {
            1 => words::<u8, E>(n, zero, fill),
            2 => words::<u16, E>(n, zero, fill),
            4 => words::<u32, E>(n, zero, fill),
            8 => words::<u64, E>(n, zero, fill),
            _ => words::<u128, E>(n, zero, fill),
        }
    }

    /// Storage of `n` words of `W`, each written by `fill` (which may be given a recycled
    /// buffer's old words instead of zeros).
    pub(crate) fn words<W: Word + pool::Pooled>(n: usize, fill: impl FnOnce(&mut [W])) -> Storage {
        match pool::shared::<W, std::convert::Infallible>(n, false, |v| {
            fill(v);
            Ok(())
        }) {
            Ok(a) => W::into_shared_storage(a),
            Err(never) => match never {},
        }
    }

    /// Storage of `len` bytes as `width`-byte words, every byte written by `fill` (the buffer
    /// may be a recycled one: `fill` must write it all).
    pub(crate) fn with_bytes(width: usize, len: usize, fill: impl FnOnce(&mut [u8])) -> Storage {
        fn go<W: Word + pool::Pooled>(len: usize, fill: impl FnOnce(&mut [u8])) -> Storage {
            Storage::words::<W>(len / size_of::<W>(), |w| fill(bytemuck::cast_slice_mut(w)))
        }
        match width {
            1 => go::<u8>(len, fill),
            2 => go::<u16>(len, fill),
            4 => go::<u32>(len, fill),
            8 => go::<u64>(len, fill),
            _ => go::<u128>(len, fill),
        }
    }

    /// Storage of `width`-byte words read from little-endian `bytes` (whole words only).
    pub(crate) fn from_bytes(width: usize, bytes: &[u8]) -> Storage {
        fn read<W: Word>(bytes: &[u8]) -> Storage {
            let n = bytes.len() / size_of::<W>();
            let mut v = vec![W::default(); n];
            bytemuck::cast_slice_mut::<W, u8>(&mut v).copy_from_slice(&bytes[..n * size_of::<W>()]);
            W::into_storage(v)
        }
        match width {
            1 => read::<u8>(bytes),
            2 => read::<u16>(bytes),
            4 => read::<u32>(bytes),
            8 => read::<u64>(bytes),
            _ => read::<u128>(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small array freed by its last owner lends its vector to the next result of its
    /// size on the thread; one still shared keeps its words.
    #[test]
    fn a_freed_small_vector_is_reused_and_a_shared_one_is_not() {
        let s = Storage::words::<u32>(8, |w| w.fill(7));
        let p = s.bytes().as_ptr();
        drop(s);
        let t = Storage::words::<u32>(8, |w| w.fill(1));
        assert_eq!(t.bytes().as_ptr(), p);
        let u = t.clone();
        drop(t);
        let v = Storage::words::<u32>(8, |w| w.fill(2));
        assert_ne!(v.bytes().as_ptr(), u.bytes().as_ptr());
        assert_eq!(u.bytes(), bytemuck::cast_slice::<u32, u8>(&[1; 8]));
        assert_eq!(v.bytes(), bytemuck::cast_slice::<u32, u8>(&[2; 8]));
    }

    /// A large buffer's words start at a cache line, also when it is recycled, through every
    /// accessor, for every word width; the words are exactly the ones asked for.
    #[test]
    fn a_large_buffer_starts_at_a_line() {
        fn check<W: Word + pool::Pooled + From<u8> + PartialEq>(width: usize) {
            let n = pool::POOL_MIN_BYTES / width + 3;
            for round in 0..3u8 {
                let mut s = Storage::words::<W>(n, |w| w.fill(W::from(round)));
                assert_eq!(s.len(), n);
                assert_eq!(s.bytes().len(), n * width);
                assert_eq!(s.bytes().as_ptr() as usize % pool::LINE, 0, "{width}");
                assert_eq!(W::view(&s).unwrap().len(), n);
                assert!(W::view(&s).unwrap().iter().all(|&w| w == W::from(round)));
                let p = s.bytes().as_ptr();
                let mine = s.unique_bytes_mut().unwrap();
                assert_eq!((mine.as_ptr(), mine.len()), (p, n * width));
                let t = s.clone();
                assert!(s.unique_bytes_mut().is_none());
                drop(t);
            }
            let z = Storage::filled(width, n, |_| Ok::<(), ()>(())).unwrap();
            assert_eq!(z.bytes().as_ptr() as usize % pool::LINE, 0);
            assert!(z.bytes().iter().all(|&b| b == 0));
        }
        check::<u8>(1);
        check::<u16>(2);
        check::<u32>(4);
        check::<u64>(8);
        check::<u128>(16);
    }
}
