//! Convolutions as matrix products of patches ("im2col"), on one of two layouts:
//!
//! - *feature inner* ([`Layout::FeatureInner`]): the left operand `[batch, spatial…,
//!   feature]`, the kernel `[window…, in feature, out feature]`, the result `[batch,
//!   spatial…, out feature]` (row-major). Each result position's window of the (padded,
//!   dilated) input is a row of a patch matrix, `window × in features` long, copied from the
//!   input's feature runs; the result is that matrix times the kernel read as a `(window · in
//!   features) × out features` matrix. Rows are cut into blocks (the tasks), a block's
//!   patch rows into chunks of the contraction of at most [`CHUNK`] elements.
//! - *batch inner* ([`Layout::BatchInner`]), for a left operand whose batch dimension is its
//!   innermost (a kernel gradient's, whose batch is the input's features): the left operand
//!   `[feature, spatial…, batch]`, the kernel `[in feature, window…, out feature]`, the result
//!   `[spatial…, batch, out feature]`. For each result position, the transposed patch matrix
//!   (a row per input feature and window position, each a run of the batch copied from the
//!   input) is multiplied, read transposed, by the kernel, in chunks of the contraction
//!   (the tasks), the chunks' products added in order.
//!
//! Feature groups split the features, batch groups the batch, each group with its slice of
//! the kernel's output features. Patch blocks hold about [`PATCH`] elements; the tasks run on
//! rayon's pool, each multiplying with the caller's product (`gemm` for floats, a wrapping
//! loop for integers). Every result element is its products summed by the product over one
//! chunk of its contraction (window position, then input feature; or input feature, then
//! window position), the chunks' sums added in order: exact for integers, equal to rounding
//! to any other order for floats.

use rayon::prelude::*;

/// Elements of a patch block: 256 Ki (1 MiB of float32), within a core's L2 cache.
const PATCH: usize = 1 << 18;
/// The longest contraction multiplied at once by a feature-inner task.
const CHUNK: usize = 4096;

/// The operands' layout (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `[batch, spatial…, feature]`, `[window…, in, out]` → `[batch, spatial…, out]`.
    FeatureInner,
    /// `[feature, spatial…, batch]`, `[in, window…, out]` → `[spatial…, batch, out]`.
    BatchInner,
}

/// A convolution's sizes. Every spatial list has one entry per spatial dimension.
#[derive(Clone, Debug)]
pub(crate) struct Geometry {
    /// The operands' layout.
    pub(crate) layout: Layout,
    /// The left operand's batch size (all batch groups).
    pub(crate) batch: usize,
    /// The left operand's features (all feature groups).
    pub(crate) features: usize,
    /// The left operand's spatial sizes.
    pub(crate) spatial: Vec<usize>,
    /// The kernel's spatial sizes.
    pub(crate) window: Vec<usize>,
    /// The kernel's output features (all groups).
    pub(crate) out_features: usize,
    /// The result's spatial sizes.
    pub(crate) out_spatial: Vec<usize>,
    /// Window strides (positive).
    pub(crate) strides: Vec<usize>,
    /// Low padding of each spatial dimension (negative: cropping).
    pub(crate) pad_lo: Vec<i64>,
    /// The left operand's dilation (positive).
    pub(crate) lhs_dilation: Vec<usize>,
    /// The kernel's dilation (positive).
    pub(crate) rhs_dilation: Vec<usize>,
    /// `feature_group_count` (positive, dividing the features and the output features).
    pub(crate) feature_groups: usize,
    /// `batch_group_count` (positive, dividing the batch and the output features).
    pub(crate) batch_groups: usize,
}

/// A matrix product `out = a · b` of a row-major `m×k` `a` (`k×m` read transposed when the
/// flag is set) and a row-major `k×n` `b`, into a row-major `m×n` `out` (overwritten).
pub(crate) type MatMul<'a, T> =
    &'a (dyn Fn(&[T], bool, &[T], (usize, usize, usize), &mut [T]) + Sync);

/// Where a run of the input is copied from: `None` for padding or a dilation's hole.
type Source = Option<usize>;

/// The derived sizes of a [`Geometry`].
struct Plan<'g> {
    g: &'g Geometry,
    groups: usize,
    /// Input features per group (the kernel's input features).
    cg: usize,
    /// Output features per group.
    og: usize,
    /// Result batch (the left batch over the batch groups).
    nout: usize,
    /// Result positions per example.
    positions: usize,
    /// Window positions.
    taps: usize,
    /// For each spatial dimension, `taps_at[d][o · window[d] + k]`: the input index that
    /// result index `o` reads at window index `k`, or `usize::MAX` where it reads padding or
    /// a hole of the dilation.
    taps_at: Vec<Vec<usize>>,
    /// Strides of the left operand's spatial dimensions, in elements.
    lhs_strides: Vec<usize>,
    /// The stride of the left operand's outermost dimension (batch or feature), in elements.
    outer_stride: usize,
    /// The left operand's size.
    lhs_len: usize,
}

impl<'g> Plan<'g> {
    /// The plan, or `None` when the sizes do not fit (`usize` overflow, groups that do not
    /// divide).
    fn new(g: &'g Geometry) -> Option<Plan<'g>> {
        let d = g.spatial.len();
        let lists = [
            g.window.len(),
            g.out_spatial.len(),
            g.strides.len(),
            g.pad_lo.len(),
            g.lhs_dilation.len(),
            g.rhs_dilation.len(),
        ];
        if lists.iter().any(|&n| n != d) || g.feature_groups == 0 || g.batch_groups == 0 {
            return None;
        }
        let groups = g.feature_groups.checked_mul(g.batch_groups)?;
        if !g.features.is_multiple_of(g.feature_groups)
            || !g.out_features.is_multiple_of(groups)
            || !g.batch.is_multiple_of(g.batch_groups)
        {
            return None;
        }
        let product = |v: &[usize]| v.iter().try_fold(1usize, |n, &x| n.checked_mul(x));
        let mut taps_at = Vec::new();
        taps_at.try_reserve_exact(d).ok()?;
        for i in 0..d {
            let (os, k) = (g.out_spatial[i], g.window[i]);
            let mut t = Vec::new();
            t.try_reserve_exact(os.checked_mul(k)?).ok()?;
            for o in 0..os {
                for w in 0..k {
                    // The index in the padded, dilated input, then in the input.
                    let q = i128::try_from(o).ok()? * g.strides[i] as i128
                        + i128::try_from(w).ok()? * g.rhs_dilation[i] as i128
                        - i128::from(g.pad_lo[i]);
                    let ld = g.lhs_dilation[i] as i128;
                    let at = if q >= 0 && q % ld == 0 && q / ld < g.spatial[i] as i128 {
                        (q / ld) as usize
                    } else {
                        usize::MAX
                    };
                    t.push(at);
                }
            }
            taps_at.push(t);
        }
        // The innermost dimension's size: features, or batch.
        let inner = match g.layout {
            Layout::FeatureInner => g.features,
            Layout::BatchInner => g.batch,
        };
        let mut lhs_strides = vec![0usize; d];
        let mut s = inner;
        for i in (0..d).rev() {
            lhs_strides[i] = s;
            s = s.checked_mul(g.spatial[i])?;
        }
        let outer = match g.layout {
            Layout::FeatureInner => g.batch,
            Layout::BatchInner => g.features,
        };
        Some(Plan {
            g,
            groups,
            cg: g.features / g.feature_groups,
            og: g.out_features / groups,
            nout: g.batch / g.batch_groups,
            positions: product(&g.out_spatial)?,
            taps: product(&g.window)?,
            taps_at,
            lhs_strides,
            outer_stride: s,
            lhs_len: s.checked_mul(outer)?,
        })
    }

    /// The result multi-index of position `p`, into `o`.
    fn position(&self, mut p: usize, o: &mut [usize]) {
        for i in (0..o.len()).rev() {
            o[i] = p % self.g.out_spatial[i];
            p /= self.g.out_spatial[i];
        }
    }

    /// The window multi-index of tap `t`, into `k`.
    fn tap(&self, mut t: usize, k: &mut [usize]) {
        for i in (0..k.len()).rev() {
            k[i] = t % self.g.window[i];
            t /= self.g.window[i];
        }
    }

    /// The next window multi-index after `k` (row-major, wrapping to zeros).
    fn next_tap(&self, k: &mut [usize]) {
        for i in (0..k.len()).rev() {
            k[i] += 1;
            if k[i] < self.g.window[i] {
                return;
            }
            k[i] = 0;
        }
    }

    /// Where result position `o` reads window position `k`, from `base`: an offset of the
    /// left operand, or `None` (padding, a hole).
    fn source(&self, base: usize, o: &[usize], k: &[usize]) -> Source {
        let mut at = base;
        for (i, (&oi, &ki)) in o.iter().zip(k).enumerate() {
            let s = self.taps_at[i][oi * self.g.window[i] + ki];
            if s == usize::MAX {
                return None;
            }
            at += s * self.lhs_strides[i];
        }
        Some(at)
    }

    /// Rows `rows` and contraction columns `cols` of group `group`'s patch matrix
    /// (feature inner), into `out` (row-major, `cols.len()` wide).
    fn fill_rows<T: Copy + Default>(
        &self,
        lhs: &[T],
        group: usize,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        out: &mut [T],
    ) {
        let g = self.g;
        let d = g.spatial.len();
        let width = cols.len();
        let (cg, positions) = (self.cg.max(1), self.positions.max(1));
        let image = if g.batch_groups > 1 {
            group * self.nout
        } else {
            0
        };
        let channel = if g.feature_groups > 1 {
            group * self.cg
        } else {
            0
        };
        let (mut o, mut k, mut k0) = (vec![0usize; d], vec![0usize; d], vec![0usize; d]);
        self.tap(cols.start / cg, &mut k0);
        for (r, dst) in rows.zip(out.chunks_exact_mut(width.max(1))) {
            self.position(r % positions, &mut o);
            let base = (image + r / positions) * self.outer_stride + channel;
            k.copy_from_slice(&k0);
            let mut runs = Runs::new(lhs, dst);
            let (mut j, mut c0) = (0, cols.start % cg);
            while j < width {
                let len = (cg - c0).min(width - j);
                runs.push(self.source(base, &o, &k).map(|a| a + c0), j, len);
                j += len;
                c0 = 0;
                self.next_tap(&mut k);
            }
            runs.flush();
        }
    }

    /// Rows `rows` of group `group`'s transposed patch matrix at result position `p` (batch
    /// inner: a row per input feature and window position, in that order, each of the
    /// group's batch), into `out` (row-major).
    fn fill_columns<T: Copy + Default>(
        &self,
        lhs: &[T],
        group: usize,
        p: usize,
        rows: std::ops::Range<usize>,
        out: &mut [T],
    ) {
        let g = self.g;
        let d = g.spatial.len();
        let (width, taps) = (self.nout, self.taps.max(1));
        let batch = if g.batch_groups > 1 {
            group * self.nout
        } else {
            0
        };
        let channel = if g.feature_groups > 1 {
            group * self.cg
        } else {
            0
        };
        let (mut o, mut k) = (vec![0usize; d], vec![0usize; d]);
        self.position(p, &mut o);
        self.tap(rows.start % taps, &mut k);
        let mut runs = Runs::new(lhs, out);
        for (j, r) in rows.enumerate() {
            let c = r / taps;
            let base = (channel + c) * self.outer_stride + batch;
            runs.push(self.source(base, &o, &k), j * width, width);
            self.next_tap(&mut k);
        }
        runs.flush();
    }
}

/// Copies of runs of the left operand into a patch row (or block), adjacent runs merged.
struct Runs<'a, T> {
    lhs: &'a [T],
    dst: &'a mut [T],
    /// The pending copy: source, destination, length.
    pending: Option<(usize, usize, usize)>,
}

impl<'a, T: Copy + Default> Runs<'a, T> {
    fn new(lhs: &'a [T], dst: &'a mut [T]) -> Runs<'a, T> {
        Runs {
            lhs,
            dst,
            pending: None,
        }
    }

    /// `len` elements at `at` in the destination, from `src` (zeros for `None`).
    fn push(&mut self, src: Source, at: usize, len: usize) {
        match (src, self.pending) {
            (Some(s), Some((ps, pd, pl))) if ps + pl == s && pd + pl == at => {
                self.pending = Some((ps, pd, pl + len));
            }
            (Some(s), _) => {
                self.flush();
                self.pending = Some((s, at, len));
            }
            (None, _) => {
                self.flush();
                if let Some(slot) = self.dst.get_mut(at..at + len) {
                    slot.fill(T::default());
                }
            }
        }
    }

    fn flush(&mut self) {
        if let Some((s, d, len)) = self.pending.take()
            && let Some(slot) = self.dst.get_mut(d..d + len)
        {
            match self.lhs.get(s..s + len) {
                Some(src) => slot.copy_from_slice(src),
                None => slot.fill(T::default()),
            }
        }
    }
}

/// Buffers for the tasks, one a pool thread, reused from task to task (their contents are
/// unspecified: every user overwrites what it reads). A thread that finds its buffer busy
/// (it took another task while waiting inside a product) gets a fresh one.
struct Scratch<T>(Vec<std::sync::Mutex<Vec<T>>>);

impl<T: Copy + Default> Scratch<T> {
    fn new() -> Scratch<T> {
        let threads = rayon::current_num_threads().max(1);
        Scratch((0..threads).map(|_| Default::default()).collect())
    }

    /// `f` of a buffer of `n` elements.
    fn with<R>(&self, n: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
        let mine = rayon::current_thread_index()
            .and_then(|i| self.0.get(i))
            .and_then(|m| m.try_lock().ok());
        match mine {
            Some(mut v) => {
                if v.len() < n {
                    v.resize(n, T::default());
                }
                f(&mut v[..n])
            }
            None => f(&mut vec![T::default(); n]),
        }
    }
}

/// The convolution of `lhs` and `rhs` into `out` on `geometry`'s layout, through `matmul`;
/// `add` sums the partial products of a long contraction. Returns false (and leaves `out`
/// unspecified) when the slices do not have the sizes the geometry says.
pub(crate) fn conv<T: Copy + Default + Send + Sync>(
    geometry: &Geometry,
    lhs: &[T],
    rhs: &[T],
    out: &mut [T],
    matmul: MatMul<'_, T>,
    add: fn(T, T) -> T,
) -> bool {
    let Some(plan) = Plan::new(geometry) else {
        return false;
    };
    let g = geometry;
    let (Some(kc), Some(m)) = (
        plan.taps.checked_mul(plan.cg),
        plan.nout.checked_mul(plan.positions),
    ) else {
        return false;
    };
    if lhs.len() != plan.lhs_len
        || Some(rhs.len()) != kc.checked_mul(g.out_features)
        || Some(out.len()) != m.checked_mul(g.out_features)
    {
        return false;
    }
    if out.is_empty() {
        return true;
    }
    // Each group's kernel, `kc × og` (its columns of the kernel's rows), contiguous.
    let (groups, og) = (plan.groups, plan.og);
    let kernels: Vec<Vec<T>> = if groups == 1 {
        Vec::new()
    } else {
        (0..groups)
            .map(|grp| {
                rhs.chunks_exact(g.out_features)
                    .flat_map(|row| &row[grp * og..(grp + 1) * og])
                    .copied()
                    .collect()
            })
            .collect()
    };
    let kernel = |grp: usize| -> &[T] { if groups == 1 { rhs } else { &kernels[grp] } };
    match g.layout {
        Layout::FeatureInner => feature_inner(&plan, lhs, &kernel, out, (kc, m), matmul, add),
        Layout::BatchInner => batch_inner(&plan, lhs, &kernel, out, kc, matmul, add),
    }
    true
}

/// The feature-inner convolution (see [`conv`]): `m` result rows, `kc` contracted elements.
fn feature_inner<'k, T: Copy + Default + Send + Sync>(
    plan: &Plan<'_>,
    lhs: &[T],
    kernel: &(dyn Fn(usize) -> &'k [T] + Sync),
    out: &mut [T],
    (kc, m): (usize, usize),
    matmul: MatMul<'_, T>,
    add: fn(T, T) -> T,
) {
    let (groups, og, o) = (plan.groups, plan.og, plan.g.out_features);
    let chunk = kc.clamp(1, CHUNK);
    // Rows per task: a patch block of about PATCH elements, at least two tasks a thread.
    let threads = rayon::current_num_threads().max(1);
    let mut block = (PATCH / chunk).max(16).min(m);
    let wanted = 2 * threads;
    if groups * m.div_ceil(block) < wanted {
        block = m.div_ceil(wanted.div_ceil(groups)).clamp(1, m);
    }
    // The result by group (`[group][row][og]`) when there are groups, else in place.
    let mut grouped = if groups == 1 {
        Vec::new()
    } else {
        vec![T::default(); groups * m * og]
    };
    let target: &mut [T] = if groups == 1 { out } else { &mut grouped };
    let mut tasks: Vec<(usize, usize, &mut [T])> = Vec::new();
    for (grp, part) in target.chunks_mut(m * og).enumerate() {
        for (b, rows) in part.chunks_mut(block * og).enumerate() {
            tasks.push((grp, b * block, rows));
        }
    }
    let (patches, partials) = (Scratch::new(), Scratch::new());
    tasks.into_par_iter().for_each(|(grp, r0, dst)| {
        let rows = dst.len() / og;
        let w = kernel(grp);
        let mut k0 = 0;
        loop {
            let k1 = (k0 + chunk).min(kc);
            patches.with(rows * (k1 - k0), |patch| {
                plan.fill_rows(lhs, grp, r0..r0 + rows, k0..k1, patch);
                let wk = &w[k0 * og..k1 * og];
                if k0 == 0 {
                    matmul(patch, false, wk, (rows, k1 - k0, og), dst);
                } else {
                    partials.with(rows * og, |partial| {
                        matmul(patch, false, wk, (rows, k1 - k0, og), partial);
                        for (o, &p) in dst.iter_mut().zip(partial.iter()) {
                            *o = add(*o, p);
                        }
                    });
                }
            });
            if k1 >= kc {
                break;
            }
            k0 = k1;
        }
    });
    if groups > 1 {
        out.par_chunks_mut(o).enumerate().for_each(|(row, o)| {
            for (grp, dst) in o.chunks_exact_mut(og).enumerate() {
                let at = (grp * m + row) * og;
                dst.copy_from_slice(&grouped[at..at + og]);
            }
        });
    }
}

/// The batch-inner convolution (see [`conv`]): `kc` contracted elements.
fn batch_inner<'k, T: Copy + Default + Send + Sync>(
    plan: &Plan<'_>,
    lhs: &[T],
    kernel: &(dyn Fn(usize) -> &'k [T] + Sync),
    out: &mut [T],
    kc: usize,
    matmul: MatMul<'_, T>,
    add: fn(T, T) -> T,
) {
    let (groups, og, nout) = (plan.groups, plan.og, plan.nout);
    let positions = plan.positions;
    let chunk = (PATCH / nout.max(1))
        .clamp(64, CHUNK.max(64))
        .min(kc.max(1));
    let chunks = kc.div_ceil(chunk).max(1);
    // Each group's positions' contractions split in `splits` runs of chunks (enough tasks for
    // the pool), each run its own partial product (`nout × og`), its chunks added in order.
    let threads = rayon::current_num_threads().max(1);
    let splits = (32 * threads)
        .div_ceil((groups * positions).max(1))
        .clamp(1, chunks);
    let mut partials = vec![T::default(); groups * positions * splits * nout * og];
    let (patches, sums) = (Scratch::new(), Scratch::new());
    partials
        .par_chunks_mut((nout * og).max(1))
        .enumerate()
        .for_each(|(task, dst)| {
            let (grp, rest) = (task / (positions * splits), task % (positions * splits));
            let (p, split) = (rest / splits, rest % splits);
            let w = kernel(grp);
            let (first, last) = (split * chunks / splits, (split + 1) * chunks / splits);
            for ci in first..last {
                let (k0, k1) = (ci * chunk, ((ci + 1) * chunk).min(kc));
                patches.with((k1 - k0) * nout, |patch| {
                    plan.fill_columns(lhs, grp, p, k0..k1, patch);
                    let wk = &w[k0 * og..k1 * og];
                    if ci == first {
                        matmul(patch, true, wk, (nout, k1 - k0, og), dst);
                    } else {
                        sums.with(nout * og, |sum| {
                            matmul(patch, true, wk, (nout, k1 - k0, og), sum);
                            for (d, &x) in dst.iter_mut().zip(sum.iter()) {
                                *d = add(*d, x);
                            }
                        });
                    }
                });
            }
        });
    // The result, `[position][batch][group · og]`: each group's runs added in order.
    let o = plan.g.out_features;
    out.par_chunks_mut(nout * o)
        .enumerate()
        .for_each(|(p, block)| {
            for grp in 0..groups {
                for split in 0..splits {
                    let at = ((grp * positions + p) * splits + split) * nout * og;
                    let part = &partials[at..at + nout * og];
                    for (b, row) in part.chunks_exact(og).enumerate() {
                        let dst = &mut block[b * o + grp * og..b * o + (grp + 1) * og];
                        if split == 0 {
                            dst.copy_from_slice(row);
                        } else {
                            for (d, &x) in dst.iter_mut().zip(row) {
                                *d = add(*d, x);
                            }
                        }
                    }
                }
            }
        });
}

/// `out = a · b` in wrapping integer arithmetic (the integer convolutions' product; `a`
/// read transposed when `a_t`).
pub(crate) fn matmul_wrapping(
    a: &[i64],
    a_t: bool,
    b: &[i64],
    (m, k, n): (usize, usize, usize),
    out: &mut [i64],
) {
    for (i, row) in out.chunks_exact_mut(n.max(1)).take(m).enumerate() {
        row.fill(0);
        for l in 0..k {
            let x = if a_t { a[l * m + i] } else { a[i * k + l] };
            if x == 0 {
                continue;
            }
            for (c, &y) in row.iter_mut().zip(&b[l * n..(l + 1) * n]) {
                *c = c.wrapping_add(x.wrapping_mul(y));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A direct evaluation of the convolution's definition on the feature-inner layout.
    fn reference(g: &Geometry, lhs: &[i64], rhs: &[i64]) -> Vec<i64> {
        let d = g.spatial.len();
        let groups = g.feature_groups * g.batch_groups;
        let (cg, og, nout) = (
            g.features / g.feature_groups,
            g.out_features / groups,
            g.batch / g.batch_groups,
        );
        let positions: usize = g.out_spatial.iter().product();
        let taps: usize = g.window.iter().product();
        let mut out = vec![0i64; nout * positions * g.out_features];
        for n in 0..nout {
            for p in 0..positions {
                let mut o = vec![0; d];
                let mut q = p;
                for i in (0..d).rev() {
                    o[i] = q % g.out_spatial[i];
                    q /= g.out_spatial[i];
                }
                for f in 0..g.out_features {
                    let grp = f / og;
                    let img = if g.batch_groups > 1 {
                        grp * nout + n
                    } else {
                        n
                    };
                    let c_off = if g.feature_groups > 1 { grp * cg } else { 0 };
                    let mut s = 0i64;
                    for t in 0..taps {
                        let mut k = vec![0; d];
                        let mut u = t;
                        for i in (0..d).rev() {
                            k[i] = u % g.window[i];
                            u /= g.window[i];
                        }
                        let mut idx = Some(img);
                        for i in 0..d {
                            let pos = (o[i] * g.strides[i] + k[i] * g.rhs_dilation[i]) as i64
                                - g.pad_lo[i];
                            let ld = g.lhs_dilation[i] as i64;
                            idx = match idx {
                                Some(a)
                                    if pos >= 0
                                        && pos % ld == 0
                                        && ((pos / ld) as usize) < g.spatial[i] =>
                                {
                                    Some(a * g.spatial[i] + (pos / ld) as usize)
                                }
                                _ => None,
                            };
                        }
                        let Some(base) = idx else { continue };
                        for c in 0..cg {
                            let x = lhs[base * g.features + c_off + c];
                            let w = rhs[(t * cg + c) * g.out_features + f];
                            s = s.wrapping_add(x.wrapping_mul(w));
                        }
                    }
                    out[(n * positions + p) * g.out_features + f] = s;
                }
            }
        }
        out
    }

    fn values(n: usize, seed: i64) -> Vec<i64> {
        (0..n as i64)
            .map(|i| (i * 7 + seed * 13) % 11 - 5)
            .collect()
    }

    /// `x` (row-major `shape`) with its dimensions in the order `perm`.
    fn permuted(x: &[i64], shape: &[usize], perm: &[usize]) -> Vec<i64> {
        let n = shape.len();
        let mut strides = vec![1usize; n];
        for i in (0..n.saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * shape[i + 1];
        }
        let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        let total: usize = out_shape.iter().product();
        (0..total)
            .map(|mut flat| {
                let mut at = 0;
                for i in (0..n).rev() {
                    at += (flat % out_shape[i]) * strides[perm[i]];
                    flat /= out_shape[i];
                }
                x[at]
            })
            .collect()
    }

    /// Strides, padding (negative too), both dilations, feature and batch groups, and long
    /// contractions (several chunks), on both layouts: the blocked patch products equal the
    /// definition, in integers and (exact) in float64 through `gemm`.
    #[test]
    fn patches_times_kernels_are_the_definition() {
        #[rustfmt::skip]
        let cases = [
            // (batch, features, spatial, window, out features, strides, pad lo, pad hi,
            //  lhs dilation, rhs dilation, feature groups, batch groups)
            (2, 3, vec![7, 5], vec![3, 2], 4, vec![1, 2], vec![1, 0], vec![1, 1], vec![1, 1], vec![1, 2], 1, 1),
            (1, 4, vec![6], vec![3], 6, vec![2], vec![-1], vec![2], vec![2], vec![1], 2, 1),
            (4, 2, vec![5], vec![2], 6, vec![1], vec![0], vec![0], vec![1], vec![3], 1, 2),
            (3, 6, vec![3, 3, 4], vec![2, 1, 2], 3, vec![1, 1, 2], vec![0, 1, 1], vec![1, 0, 0], vec![1, 2, 1], vec![1, 1, 1], 3, 1),
            (2, 64, vec![40], vec![70], 2, vec![1], vec![35], vec![34], vec![1], vec![1], 1, 1),
            (20, 3, vec![5, 4], vec![3, 3], 4, vec![1, 1], vec![1, 1], vec![1, 1], vec![1, 1], vec![1, 1], 1, 1),
            (3, 5, vec![], vec![], 2, vec![], vec![], vec![], vec![], vec![], 1, 1),
            // Batch inner: a contraction of several chunks split between tasks.
            (512, 64, vec![40], vec![38], 2, vec![1], vec![0], vec![0], vec![1], vec![1], 1, 1),
        ];
        for (batch, features, spatial, window, of, strides, lo, hi, ld, rd, fg, bg) in cases {
            let d = spatial.len();
            let out_spatial: Vec<usize> = (0..d)
                .map(|i| {
                    let dil = |s: usize, d: usize| if s == 0 { 0 } else { 1 + d * (s - 1) };
                    let padded = dil(spatial[i], ld[i]) as i64 + lo[i] + hi[i];
                    let w = dil(window[i], rd[i]) as i64;
                    if padded < w {
                        0
                    } else {
                        ((padded - w) / strides[i] as i64 + 1) as usize
                    }
                })
                .collect();
            let mut g = Geometry {
                layout: Layout::FeatureInner,
                batch,
                features,
                spatial: spatial.clone(),
                window: window.clone(),
                out_features: of,
                out_spatial: out_spatial.clone(),
                strides,
                pad_lo: lo,
                lhs_dilation: ld,
                rhs_dilation: rd,
                feature_groups: fg,
                batch_groups: bg,
            };
            let lshape: Vec<usize> = [&[batch][..], &spatial, &[features]].concat();
            let rshape: Vec<usize> = [&window[..], &[features / fg, of]].concat();
            let lhs = values(lshape.iter().product(), 1);
            let rhs = values(rshape.iter().product(), 2);
            let want = reference(&g, &lhs, &rhs);
            let f = |v: &[i64]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
            let mm = |a: &[f64], a_t, b: &[f64], mkn, o: &mut [f64]| {
                crate::kernels::gemm::matmul((a, a_t), (b, false), mkn, o);
            };
            let mut got = vec![0i64; want.len()];
            assert!(conv(
                &g,
                &lhs,
                &rhs,
                &mut got,
                &matmul_wrapping,
                i64::wrapping_add
            ));
            assert_eq!(got, want, "{g:?}");
            let mut got = vec![0f64; want.len()];
            assert!(conv(&g, &f(&lhs), &f(&rhs), &mut got, &mm, |a, b| a + b));
            assert_eq!(got, f(&want), "{g:?}");
            // The batch-inner layout: operands and result permuted.
            g.layout = Layout::BatchInner;
            let lp: Vec<usize> = [vec![d + 1], (1..=d).collect(), vec![0]].concat();
            let rp: Vec<usize> = [vec![d], (0..d).collect(), vec![d + 1]].concat();
            let oshape: Vec<usize> = [&[batch / bg][..], &out_spatial, &[of]].concat();
            let op: Vec<usize> = [(1..=d).collect(), vec![0, d + 1]].concat();
            let (l2, r2) = (permuted(&lhs, &lshape, &lp), permuted(&rhs, &rshape, &rp));
            let want = permuted(&want, &oshape, &op);
            let mut got = vec![0i64; want.len()];
            assert!(conv(
                &g,
                &l2,
                &r2,
                &mut got,
                &matmul_wrapping,
                i64::wrapping_add
            ));
            assert_eq!(got, want, "{g:?}");
            let mut got = vec![0f64; want.len()];
            assert!(conv(&g, &f(&l2), &f(&r2), &mut got, &mm, |a, b| a + b));
            assert_eq!(got, f(&want), "{g:?}");
        }
    }
}
