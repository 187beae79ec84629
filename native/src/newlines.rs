//! The `\n`s of a block in order, for the file path's line search (`offline::scan_lines`).
//!
//! One search per line (the C library's `memchr`) cost about 75 instructions a line of a
//! 200-byte tick: each call pays its set-up and its unaligned head again, and the `memchr`
//! crate's iterator costs about as much (measured with callgrind: 76). Here a window of the
//! block (4 KiB) is turned into a bit mask at once, one bit per byte, 64 bytes a step with
//! AVX2 where the CPU has it (SSE2, x86-64's baseline, otherwise; a plain loop off x86-64),
//! and each line then takes the lowest bit left: about 35 instructions a line.

/// Bytes turned into mask words per window.
const WINDOW: usize = 4096;

pub struct Newlines<'b> {
    buf: &'b [u8],
    /// The window's start, and its mask words (`words[i]` bit `j`: byte `start + 64 i + j`).
    start: usize,
    words: [u64; WINDOW / 64],
    /// Mask words filled in this window, and the next one to read.
    filled: usize,
    next_word: usize,
    /// The bits of the word being read, the ones taken cleared.
    bits: u64,
    bits_at: usize,
}

impl<'b> Newlines<'b> {
    pub fn new(buf: &'b [u8]) -> Self {
        let mut out = Newlines {
            buf,
            start: 0,
            words: [0; WINDOW / 64],
            filled: 0,
            next_word: 0,
            bits: 0,
            bits_at: 0,
        };
        out.fill(0);
        out
    }

    /// The position of the next `\n` (None when there is none left).
    #[inline]
    pub fn next(&mut self) -> Option<usize> {
        if self.bits == 0 {
            // The words in locals: a 200-byte line passes over two or three empty ones.
            let mut i = self.next_word;
            let bits = loop {
                if i < self.filled {
                    // (`i` is below 64: the mask spares a bounds check)
                    let bits = self.words[i % (WINDOW / 64)];
                    i += 1;
                    if bits != 0 {
                        break bits;
                    }
                    continue;
                }
                let next = self.start + WINDOW;
                if next >= self.buf.len() {
                    self.next_word = i;
                    return None;
                }
                self.fill(next);
                i = 0;
            };
            self.bits = bits;
            self.bits_at = self.start + 64 * (i - 1);
            self.next_word = i;
        }
        let at = self.bits_at + self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(at)
    }

    /// Fill the mask words of the window at `start`.
    fn fill(&mut self, start: usize) {
        let window = &self.buf[start.min(self.buf.len())..self.buf.len().min(start + WINDOW)];
        self.start = start;
        self.filled = window.len().div_ceil(64);
        self.next_word = 0;
        let whole = window.len() / 64;
        masks(&window[..whole * 64], &mut self.words[..whole]);
        if whole < self.filled {
            self.words[whole] = scalar_mask(&window[whole * 64..]);
        }
    }
}

/// The mask of up to 64 bytes, a byte at a time.
fn scalar_mask(bytes: &[u8]) -> u64 {
    bytes.iter().enumerate().fold(0, |mask, (i, &b)| mask | (u64::from(b == b'\n') << i))
}

/// The masks of `bytes` (64 per word, `bytes.len() == 64 * words.len()`).
fn masks(bytes: &[u8], words: &mut [u64]) {
    debug_assert_eq!(bytes.len(), 64 * words.len());
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (just checked).
            unsafe { masks_avx2(bytes, words) };
        } else {
            masks_sse2(bytes, words);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (word, chunk) in words.iter_mut().zip(bytes.chunks_exact(64)) {
        *word = scalar_mask(chunk);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn masks_avx2(bytes: &[u8], words: &mut [u64]) {
    use std::arch::x86_64::{_mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8};
    let newline = _mm256_set1_epi8(b'\n' as i8);
    for (word, chunk) in words.iter_mut().zip(bytes.chunks_exact(64)) {
        // SAFETY: `chunk` holds 64 bytes; unaligned loads of 32 at 0 and 32 stay inside.
        let (lo, hi) = unsafe {
            (
                _mm256_loadu_si256(chunk.as_ptr().cast()),
                _mm256_loadu_si256(chunk.as_ptr().add(32).cast()),
            )
        };
        let lo = _mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, newline)) as u32;
        let hi = _mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, newline)) as u32;
        *word = u64::from(lo) | (u64::from(hi) << 32);
    }
}

#[cfg(target_arch = "x86_64")]
fn masks_sse2(bytes: &[u8], words: &mut [u64]) {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY (each block): SSE2 is part of x86-64; the loads read 16 bytes at 0, 16, 32 and
    // 48 of a 64-byte chunk.
    let newline = unsafe { _mm_set1_epi8(b'\n' as i8) };
    for (word, chunk) in words.iter_mut().zip(bytes.chunks_exact(64)) {
        let mut mask = 0u64;
        for part in 0..4 {
            let bits = unsafe {
                let v = _mm_loadu_si128(chunk.as_ptr().add(16 * part).cast());
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)) as u32 & 0xffff
            };
            mask |= u64::from(bits) << (16 * part);
        }
        *word = mask;
    }
}

#[cfg(test)]
mod tests {
    use super::{masks_sse2, scalar_mask, Newlines};

    fn all(buf: &[u8]) -> Vec<usize> {
        let mut found = Newlines::new(buf);
        std::iter::from_fn(|| found.next()).collect()
    }

    #[test]
    fn every_newline_is_found_in_order_whatever_the_length_and_place() {
        // Lengths around the word and window edges; newlines at every kind of offset.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for len in (0..300).chain([4095, 4096, 4097, 8191, 8192, 8193, 12_345]) {
            for density in [0u64, 3, 40, 255] {
                let buf: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        if seed % 256 < density { b'\n' } else { (seed >> 8) as u8 | 0x80 }
                    })
                    .collect();
                let want: Vec<usize> = buf.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| i).collect();
                assert_eq!(all(&buf), want, "len {len} density {density}");
            }
        }
        assert_eq!(all(b""), Vec::<usize>::new());
        assert_eq!(all(b"\n"), vec![0]);
        assert_eq!(all(&[b'\n'; 130]), (0..130).collect::<Vec<_>>());
    }

    #[test]
    fn the_sse2_masks_are_the_plain_ones() {
        let bytes: Vec<u8> = (0..256u32).map(|i| if i % 7 == 0 || i % 64 == 63 { b'\n' } else { i as u8 ^ 0x0a ^ 0x01 }).collect();
        let mut words = [0u64; 4];
        masks_sse2(&bytes, &mut words);
        for (k, word) in words.iter().enumerate() {
            assert_eq!(*word, scalar_mask(&bytes[64 * k..64 * k + 64]));
        }
    }
}
