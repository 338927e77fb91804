//! The replay window of a keyed session: a datagram a host captured and sends again carries a
//! valid MAC, so the MAC alone cannot refuse it. Every datagram of a driver carries a count
//! unique within its incarnation (the low bits of the packet's `uid`, covered by the MAC with
//! the rest), so the receiving driver keeps, per sending node, the highest count accepted and
//! which of the `WINDOW` counts below it were accepted, as IPsec's anti-replay window does
//! (RFC 4303 §3.4.3): a count seen before, or older than the window, is refused. A new epoch
//! (a restarted sender, which counts from 1 again) starts an empty window.

/// Counts remembered below the highest one accepted. RFC 4303 §3.4.3 asks for at least 32 and
/// recommends 64, for one path; a castlab sender's datagrams reach a receiver over several
/// groups and queues, whose reordering can exceed that (a 20-packet queue per layer on six
/// layers, a delay line of hundreds of frames on a user-space router): 1024 (our choice),
/// 128 bytes per sending node.
pub(crate) const WINDOW: u64 = 1024;
const WORDS: usize = (WINDOW / 64) as usize;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ReplayWindow {
    /// The highest count accepted (0: none yet).
    top: u64,
    /// Bit `i` (word `i / 64`, bit `i % 64`): count `top - i` was accepted.
    seen: [u64; WORDS],
}

impl ReplayWindow {
    /// Accept `count` once: false if it was accepted before or lies `WINDOW` or more below the
    /// highest count accepted.
    pub(crate) fn accept(&mut self, count: u64) -> bool {
        if count > self.top || (self.top == 0 && self.seen[0] & 1 == 0) {
            let shift = count - self.top;
            self.shift(shift);
            self.top = count;
            self.seen[0] |= 1;
            return true;
        }
        let off = self.top - count;
        if off >= WINDOW {
            return false;
        }
        let (w, b) = ((off / 64) as usize, off % 64);
        if self.seen[w] >> b & 1 == 1 {
            return false;
        }
        self.seen[w] |= 1 << b;
        true
    }

    /// Move every remembered count `by` places further from the top.
    fn shift(&mut self, by: u64) {
        if by >= WINDOW {
            self.seen = [0; WORDS];
            return;
        }
        let (words, bits) = ((by / 64) as usize, (by % 64) as u32);
        for i in (0..WORDS).rev() {
            let hi = if i >= words { self.seen[i - words] } else { 0 };
            let lo = if bits > 0 && i > words { self.seen[i - words - 1] >> (64 - bits) } else { 0 };
            self.seen[i] = if bits > 0 { hi << bits | lo } else { hi };
        }
    }

    pub(crate) fn reset(&mut self) {
        *self = ReplayWindow::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The rule written out on a set: accepted iff never accepted and, unless it is the new
    /// highest, within WINDOW of the highest accepted so far.
    struct Model {
        accepted: BTreeSet<u64>,
    }
    impl Model {
        fn accept(&mut self, c: u64) -> bool {
            let top = self.accepted.iter().next_back().copied();
            let ok = match top {
                None => true,
                Some(t) if c > t => true,
                Some(t) => t - c < WINDOW && !self.accepted.contains(&c),
            };
            if ok {
                self.accepted.insert(c);
            }
            ok
        }
    }

    #[test]
    fn a_count_is_accepted_once_and_not_below_the_window() {
        let mut w = ReplayWindow::default();
        assert!(w.accept(5) && !w.accept(5));
        assert!(w.accept(3) && !w.accept(3) && w.accept(4));
        assert!(w.accept(5 + WINDOW - 1));
        assert!(!w.accept(5 + WINDOW - 1));
        // 3 and 4 now lie WINDOW or more below the top; 6 does not and was never seen
        assert!(!w.accept(4) && !w.accept(3) && w.accept(6));
        assert!(w.accept(10 * WINDOW) && !w.accept(5 + WINDOW - 1) && w.accept(10 * WINDOW - 1));
        w.reset();
        assert!(w.accept(1) && !w.accept(1));
    }

    #[test]
    fn agrees_with_the_rule_on_reordered_and_repeated_counts() {
        // xorshift64, fixed seed: counts that mostly climb, jump back by up to 1.5 windows,
        // repeat, and leap ahead by more than a window now and then
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut w = ReplayWindow::default();
        let mut m = Model { accepted: BTreeSet::new() };
        let mut c: u64 = 1;
        let (mut yes, mut no) = (0, 0);
        for _ in 0..200_000 {
            let r = next();
            let count = match r % 16 {
                0..=9 => {
                    c += 1 + r % 3;
                    c
                }
                10..=13 => c.saturating_sub((r >> 8) % (WINDOW + WINDOW / 2)),
                14 => c,
                _ => {
                    c += WINDOW / 2 + (r >> 8) % (2 * WINDOW);
                    c
                }
            };
            let got = w.accept(count);
            assert_eq!(got, m.accept(count), "count {count}, top {c}");
            if got {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(yes > 100_000 && no > 20_000, "{yes} accepted, {no} refused");
    }
}
