//! The queue of a work queue's inline completions: a ring whose pushes and pops are
//! inlined where they are used, and whose next slot can be taken empty and filled in
//! place, so that a job's record is written straight into its slot when it is submitted
//! (a `VecDeque` push copies a value built a moment earlier, and that copy stalls on
//! store forwarding).

use std::mem::MaybeUninit;

/// A value that owns nothing, written into a slot to be filled in place.
pub(crate) trait Empty {
    /// Writes the value at `p`.
    ///
    /// # Safety
    /// `p` is valid for writes and aligned; what it held is overwritten, not dropped.
    unsafe fn write_empty(p: *mut Self);
}

/// A FIFO ring of `T` with a power-of-two capacity; it allocates only to grow.
pub(crate) struct Ring<T: Empty> {
    slots: Box<[MaybeUninit<T>]>,
    /// Index of the oldest element.
    head: usize,
    /// Elements held: slots `head, head + 1, ...` (modulo the capacity) are initialized.
    len: usize,
}

impl<T: Empty> Ring<T> {
    pub(crate) fn new() -> Ring<T> {
        Ring {
            slots: Box::new([]),
            head: 0,
            len: 0,
        }
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn at(&self, i: usize) -> usize {
        (self.head + i) & (self.slots.len() - 1)
    }

    /// Makes room for `additional` more elements without further allocation.
    pub(crate) fn reserve(&mut self, additional: usize) {
        let want = self.len + additional;
        if want <= self.slots.len() {
            return;
        }
        let cap = want.next_power_of_two();
        let mut slots: Box<[MaybeUninit<T>]> = (0..cap).map(|_| MaybeUninit::uninit()).collect();
        for (i, slot) in slots.iter_mut().enumerate().take(self.len) {
            let from = self.at(i);
            // SAFETY: slot `from` holds the i-th element; it is moved once, and the old
            // slots are then freed without dropping anything (`MaybeUninit`).
            slot.write(unsafe { self.slots[from].assume_init_read() });
        }
        self.slots = slots;
        self.head = 0;
    }

    /// Takes the next slot at the back, writes [`Empty::empty`] there, and gives it to
    /// be filled.
    #[inline(always)]
    pub(crate) fn push_empty(&mut self) -> &mut T {
        if self.len == self.slots.len() {
            self.reserve(1);
        }
        let i = self.at(self.len);
        self.len += 1;
        let slot = &mut self.slots[i];
        // SAFETY: a free slot (nothing to drop), written whole, then held.
        unsafe {
            T::write_empty(slot.as_mut_ptr());
            slot.assume_init_mut()
        }
    }

    #[inline(always)]
    pub(crate) fn push_back(&mut self, v: T) {
        if self.len == self.slots.len() {
            self.reserve(1);
        }
        let i = self.at(self.len);
        self.len += 1;
        self.slots[i].write(v);
    }

    #[inline(always)]
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        Some(self.take_front())
    }

    /// [`pop_front`](Ring::pop_front) of a ring known not to be empty (it panics if it
    /// is): the value comes straight from its slot, with no `Option` around it.
    #[inline(always)]
    pub(crate) fn take_front(&mut self) -> T {
        assert!(self.len > 0, "take_front on an empty ring");
        let i = self.head;
        self.head = self.at(1);
        self.len -= 1;
        // SAFETY: slot `i` held the oldest element; it is no longer counted as held.
        unsafe { self.slots[i].assume_init_read() }
    }

    #[inline(always)]
    pub(crate) fn pop_back(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let i = self.at(self.len);
        // SAFETY: slot `i` held the newest element; it is no longer counted as held.
        Some(unsafe { self.slots[i].assume_init_read() })
    }

    #[inline(always)]
    pub(crate) fn front(&self) -> Option<&T> {
        if self.len == 0 {
            return None;
        }
        // SAFETY: the oldest slot is held while `len > 0`.
        Some(unsafe { self.slots[self.head].assume_init_ref() })
    }

    #[inline(always)]
    pub(crate) fn back_mut(&mut self) -> Option<&mut T> {
        if self.len == 0 {
            return None;
        }
        let i = self.at(self.len - 1);
        // SAFETY: the newest slot is held while `len > 0`.
        Some(unsafe { self.slots[i].assume_init_mut() })
    }
}

impl<T: Empty> Drop for Ring<T> {
    fn drop(&mut self) {
        while let Some(v) = self.pop_front() {
            drop(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Empty, Ring};
    use std::collections::VecDeque;
    use std::rc::Rc;

    impl Empty for (u64, Option<Rc<()>>) {
        unsafe fn write_empty(p: *mut Self) {
            // SAFETY: the caller's contract.
            unsafe { p.write((u64::MAX, None)) }
        }
    }

    #[test]
    fn behaves_as_a_deque_and_drops_what_it_holds() {
        let token = Rc::new(());
        let mut r: Ring<(u64, Option<Rc<()>>)> = Ring::new();
        let mut d = VecDeque::new();
        let mut x = 0u64;
        for step in 0..5000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match (x >> 33) % 5 {
                0 | 1 => {
                    if step % 2 == 0 {
                        r.push_back((step, Some(Rc::clone(&token))));
                    } else {
                        let e = r.push_empty();
                        assert_eq!(*e, (u64::MAX, None));
                        *e = (step, Some(Rc::clone(&token)));
                    }
                    d.push_back(step);
                }
                2 => assert_eq!(r.pop_front().map(|v| v.0), d.pop_front()),
                3 => assert_eq!(r.pop_back().map(|v| v.0), d.pop_back()),
                _ => {
                    assert_eq!(r.front().map(|v| v.0), d.front().copied());
                    assert_eq!(r.back_mut().map(|v| v.0), d.back().copied());
                    r.reserve(3);
                }
            }
            assert_eq!(r.len(), d.len());
            assert_eq!(r.is_empty(), d.is_empty());
            assert_eq!(Rc::strong_count(&token), 1 + d.len());
        }
        drop(r);
        assert_eq!(Rc::strong_count(&token), 1);
    }
}
