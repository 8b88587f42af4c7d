//! Runs of elementwise calls in a loop body as one program ([`super::tight`]): where a body
//! computes a chain of small elementwise results (odeint's bodies: some 48,000 of the 60,000
//! calls of a solve and its gradient are elementwise, most on one or two elements), each call
//! through the body's table costs more than its arithmetic. A run of such calls becomes a
//! [`Program`]: its operands read once into registers, each call one instruction on
//! registers, and only the results read after the run written back to their buffers
//! (measured on odeint's solve and gradient: 7 % faster in float32, 9 % in float64, A/B in
//! one run).
//!
//! A register holds a value of at most [`LANES`] elements, each element's word zero-extended
//! to 64 bits. Each instruction computes every element with the same function its call's
//! elementwise kernel ([`super::chunk::Elementwise`]) applies to that element, so a program
//! writes what its calls write, bit for bit.

use crate::kernels::fast::{self, BinOp, BitOp, Cmp};
use crate::kernels::simd::FEW;

use super::chunk::FloatWord;

/// Elements of one register: a call of more elements is not in a program.
pub(super) const LANES: usize = FEW;

/// The most registers of a program.
pub(super) const MAX_REGISTERS: usize = 128;

/// The operation of an instruction (what an elementwise kernel computes, per element).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Code {
    F32(BinOp),
    /// float64 arithmetic (JAX's rules only, as the kernel).
    F64(BinOp),
    Cmp32(Cmp),
    /// float64 comparisons (JAX's rules only).
    Cmp64(Cmp),
    /// float32 `neg` (true) or `abs`.
    Sign32(bool),
    Sign64(bool),
    /// `select_n` of a bool predicate and two cases.
    Select,
    /// float32 fused multiply-add, whether the product and the addend are negated.
    Fma32(bool, bool),
    Fma64(bool, bool),
    /// Integer `add`, `sub`, `mul` (wrapping), `max` or `min` on words of this many bytes,
    /// signed or not.
    Int(BinOp, usize, bool),
    /// `and`, `or` or `xor`.
    Bits(BitOp),
    /// float32 `integer_pow` by this power (JAX's rules only).
    IntPow32(i64),
    IntPow64(i64),
}

impl Code {
    /// Whether the kernel runs only under JAX's rules (elsewhere the implementation does).
    fn xla_only(self) -> bool {
        match self {
            Code::F64(_) | Code::Cmp64(_) => <u64 as FloatWord>::XLA_ONLY,
            Code::IntPow32(_) | Code::IntPow64(_) => true,
            _ => false,
        }
    }

    fn arity(self) -> usize {
        match self {
            Code::Sign32(_) | Code::Sign64(_) | Code::IntPow32(_) | Code::IntPow64(_) => 1,
            Code::Select | Code::Fma32(..) | Code::Fma64(..) => 3,
            _ => 2,
        }
    }
}

/// An instruction's function: computes its result's lanes from its operands'.
type Exec = fn(&mut [u64], &Instr);

/// One instruction: its function, the elements it computes, its operands' and result's
/// registers (as offsets of their first lane) and an immediate (a power).
#[derive(Clone, Copy)]
struct Instr {
    exec: Exec,
    n: u8,
    a: u32,
    b: u32,
    c: u32,
    o: u32,
    imm: i64,
}

/// An operand read into a register: `count` elements of `width` bytes (one element: its
/// word in the first `lanes` lanes).
#[derive(Clone, Copy, Debug)]
struct Load {
    reg: u32,
    width: u8,
    count: u8,
    lanes: u8,
}

/// A result written back: `count` elements of `width` bytes from a register.
#[derive(Clone, Copy, Debug)]
pub(super) struct Store {
    reg: u32,
    width: u8,
    count: u8,
    /// The buffer it is written to (the caller's numbering).
    pub(super) slot: u32,
}

/// A run of elementwise calls as one program (see the module documentation).
pub(super) struct Program {
    loads: Vec<Load>,
    code: Vec<Instr>,
    stores: Vec<Store>,
    registers: usize,
    xla_only: bool,
}

/// A register of a program being built, and the elements it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Reg {
    index: u32,
    count: u8,
}

/// Builds a [`Program`]: loads, instructions and stores in the order they are added.
pub(super) struct Builder {
    prog: Program,
    /// Per register: the lanes it holds (a one-element value spread over them), and whether
    /// it is a load.
    lanes: Vec<(u8, Option<usize>)>,
}

impl Builder {
    pub(super) fn new() -> Builder {
        Builder {
            prog: Program {
                loads: Vec::new(),
                code: Vec::new(),
                stores: Vec::new(),
                registers: 0,
                xla_only: false,
            },
            lanes: Vec::new(),
        }
    }

    /// Registers used so far.
    pub(super) fn registers(&self) -> usize {
        self.prog.registers
    }

    fn register(&mut self, count: usize, load: Option<usize>) -> Option<Reg> {
        if self.prog.registers >= MAX_REGISTERS || count == 0 || count > LANES {
            return None;
        }
        let index = u32::try_from(self.prog.registers).ok()?;
        self.prog.registers += 1;
        let count = u8::try_from(count).ok()?;
        self.lanes.push((count, load));
        Some(Reg { index, count })
    }

    /// A register loaded with an operand of `count` elements of `width` bytes (the
    /// program's next load: [`Program::load`]'s `k`).
    pub(super) fn load(&mut self, width: usize, count: usize) -> Option<Reg> {
        if !matches!(width, 1 | 2 | 4 | 8) {
            return None;
        }
        let k = self.prog.loads.len();
        let r = self.register(count, Some(k))?;
        self.prog.loads.push(Load {
            reg: r.index,
            width: u8::try_from(width).ok()?,
            count: r.count,
            lanes: r.count,
        });
        Some(r)
    }

    /// The instruction of `code` on `args` (each with whether it is one element standing for
    /// all) computing `n` elements, and the register of its result; `None` where it cannot
    /// be added (nothing added).
    pub(super) fn op(&mut self, code: Code, n: usize, args: &[(Reg, bool)]) -> Option<Reg> {
        if args.len() != code.arity()
            || exec_of(code).is_none()
            || n == 0
            || n > LANES
            || args
                .iter()
                .any(|&(r, one)| usize::from(r.count) != if one { 1 } else { n })
            || self.prog.registers >= MAX_REGISTERS
        {
            return None;
        }
        let mut at = [0u32; 3];
        for (slot, &(r, one)) in at.iter_mut().zip(args) {
            if one && n > 1 {
                self.spread(r, n)?;
            }
            *slot = r.index * LANES as u32;
        }
        let (exec, imm) = exec_of(code)?;
        let r = self.register(n, None)?;
        self.prog.xla_only |= code.xla_only();
        self.prog.code.push(Instr {
            exec,
            n: r.count,
            a: at[0],
            b: at[1],
            c: at[2],
            o: r.index * LANES as u32,
            imm,
        });
        Some(r)
    }

    /// Makes the one-element register `r` hold its element in its first `n` lanes.
    fn spread(&mut self, r: Reg, n: usize) -> Option<()> {
        let (lanes, load) = self.lanes.get_mut(r.index as usize)?;
        if usize::from(*lanes) >= n {
            return Some(());
        }
        *lanes = u8::try_from(n).ok()?;
        match load {
            Some(k) => self.prog.loads.get_mut(*k)?.lanes = *lanes,
            None => self.prog.code.push(Instr {
                exec: spread,
                n: *lanes,
                a: r.index * LANES as u32,
                b: 0,
                c: 0,
                o: r.index * LANES as u32,
                imm: 0,
            }),
        }
        Some(())
    }

    /// Writes `r`'s elements, of `width` bytes, to buffer `slot` at the end of the program.
    pub(super) fn store(&mut self, r: Reg, width: usize, slot: usize) -> Option<()> {
        if !matches!(width, 1 | 2 | 4 | 8) {
            return None;
        }
        self.prog.stores.push(Store {
            reg: r.index,
            width: u8::try_from(width).ok()?,
            count: r.count,
            slot: u32::try_from(slot).ok()?,
        });
        Some(())
    }

    pub(super) fn finish(self) -> Program {
        self.prog
    }
}

impl Program {
    /// Lanes of the register file the program runs on.
    pub(super) fn lanes(&self) -> usize {
        self.registers * LANES
    }

    /// Whether the program runs only under JAX's rules ([`crate::lax::on_xla`]).
    pub(super) fn xla_only(&self) -> bool {
        self.xla_only
    }

    /// The stores, in order.
    pub(super) fn stores(&self) -> &[Store] {
        &self.stores
    }

    /// Reads load `k`'s operand from `bytes` into `regs`; false where the bytes are too few.
    #[inline]
    pub(super) fn load(&self, regs: &mut [u64], k: usize, bytes: &[u8]) -> bool {
        let Some(l) = self.loads.get(k) else {
            return false;
        };
        let base = l.reg as usize * LANES;
        let Some(lanes) = regs.get_mut(base..base + LANES) else {
            return false;
        };
        let (count, spread) = (usize::from(l.count), usize::from(l.lanes));
        match l.width {
            1 => fill::<u8>(lanes, bytes, count, spread),
            2 => fill::<u16>(lanes, bytes, count, spread),
            4 => fill::<u32>(lanes, bytes, count, spread),
            _ => fill::<u64>(lanes, bytes, count, spread),
        }
        .is_some()
    }

    /// Runs the instructions on `regs` (loaded).
    #[inline]
    pub(super) fn exec(&self, regs: &mut [u64]) {
        for i in &self.code {
            (i.exec)(regs, i);
        }
    }

    /// Writes store `s`'s elements into `out`; false where `out` is of another size.
    #[inline]
    pub(super) fn store(&self, regs: &[u64], s: &Store, out: &mut [u8]) -> bool {
        let base = s.reg as usize * LANES;
        let Some(lanes) = regs.get(base..base + usize::from(s.count)) else {
            return false;
        };
        match s.width {
            1 => spill::<u8>(lanes, out),
            2 => spill::<u16>(lanes, out),
            4 => spill::<u32>(lanes, out),
            _ => spill::<u64>(lanes, out),
        }
    }
}

/// A word of a register's element: the low bytes of its lane.
trait Word: bytemuck::Pod {
    fn lane(self) -> u64;
    fn of(lane: u64) -> Self;
}

macro_rules! word {
    ($($t:ty),*) => {$(
        impl Word for $t {
            #[inline(always)]
            fn lane(self) -> u64 {
                u64::from(self)
            }
            #[inline(always)]
            fn of(lane: u64) -> $t {
                lane as $t
            }
        }
    )*};
}
word!(u8, u16, u32, u64);

/// `count` words of `W` from `bytes` into the first lanes (one word: into the first
/// `spread`).
#[inline(always)]
fn fill<W: Word>(lanes: &mut [u64], bytes: &[u8], count: usize, spread: usize) -> Option<()> {
    let size = std::mem::size_of::<W>();
    if count == 1 {
        let x = bytemuck::pod_read_unaligned::<W>(bytes.get(..size)?).lane();
        lanes.get_mut(..spread)?.fill(x);
        return Some(());
    }
    let words = bytes.get(..count * size)?;
    for (r, w) in lanes.iter_mut().zip(words.chunks_exact(size)) {
        *r = bytemuck::pod_read_unaligned::<W>(w).lane();
    }
    Some(())
}

/// The lanes' words of `W` into `out` (of as many words); false where it is of another size.
#[inline(always)]
fn spill<W: Word>(lanes: &[u64], out: &mut [u8]) -> bool {
    let size = std::mem::size_of::<W>();
    if out.len() != lanes.len() * size {
        return false;
    }
    for (o, &x) in out.chunks_exact_mut(size).zip(lanes) {
        o.copy_from_slice(bytemuck::bytes_of(&W::of(x)));
    }
    true
}

/// `f` of one operand, lane by lane.
#[inline(always)]
fn lanes1(r: &mut [u64], i: &Instr, f: impl Fn(u64) -> u64) {
    let (a, o) = (i.a as usize, i.o as usize);
    for k in 0..usize::from(i.n) {
        let Some(&x) = r.get(a + k) else { return };
        if let Some(z) = r.get_mut(o + k) {
            *z = f(x);
        }
    }
}

/// `f` of two operands, lane by lane.
#[inline(always)]
fn lanes2(r: &mut [u64], i: &Instr, f: impl Fn(u64, u64) -> u64) {
    let (a, b, o) = (i.a as usize, i.b as usize, i.o as usize);
    for k in 0..usize::from(i.n) {
        let (Some(&x), Some(&y)) = (r.get(a + k), r.get(b + k)) else {
            return;
        };
        if let Some(z) = r.get_mut(o + k) {
            *z = f(x, y);
        }
    }
}

/// `f` of three operands, lane by lane.
#[inline(always)]
fn lanes3(r: &mut [u64], i: &Instr, f: impl Fn(u64, u64, u64) -> u64) {
    let (a, b, c, o) = (i.a as usize, i.b as usize, i.c as usize, i.o as usize);
    for k in 0..usize::from(i.n) {
        let (Some(&x), Some(&y), Some(&w)) = (r.get(a + k), r.get(b + k), r.get(c + k)) else {
            return;
        };
        if let Some(z) = r.get_mut(o + k) {
            *z = f(x, y, w);
        }
    }
}

fn spread(r: &mut [u64], i: &Instr) {
    let a = i.a as usize;
    let Some(&x) = r.get(a) else { return };
    if let Some(lanes) = r.get_mut(a..a + usize::from(i.n)) {
        lanes.fill(x);
    }
}

/// A float word as a register holds it.
trait Lane: FloatWord {
    fn of(x: u64) -> Self;
    fn word(self) -> u64;
}

impl Lane for u32 {
    #[inline(always)]
    fn of(x: u64) -> u32 {
        x as u32
    }
    #[inline(always)]
    fn word(self) -> u64 {
        u64::from(self)
    }
}

impl Lane for u64 {
    #[inline(always)]
    fn of(x: u64) -> u64 {
        x
    }
    #[inline(always)]
    fn word(self) -> u64 {
        self
    }
}

fn float<W: Lane, const OP: u8>(r: &mut [u64], i: &Instr) {
    lanes2(r, i, |x, y| W::op::<OP>(W::of(x), W::of(y)).word());
}

fn compare<W: Lane, const C: u8>(r: &mut [u64], i: &Instr) {
    lanes2(r, i, |x, y| u64::from(W::compare::<C>(W::of(x), W::of(y))));
}

/// `neg` (`NEG`) or `abs` of a float whose sign is bit `SIGN`: bit operations, as the kernel.
fn sign<const SIGN: u32, const NEG: bool>(r: &mut [u64], i: &Instr) {
    let bit = 1u64 << SIGN;
    if NEG {
        lanes1(r, i, |x| x ^ bit);
    } else {
        lanes1(r, i, |x| x & !bit);
    }
}

fn select(r: &mut [u64], i: &Instr) {
    lanes3(r, i, |p, a, b| if p != 0 { b } else { a });
}

fn fma32<const NP: bool, const NZ: bool>(r: &mut [u64], i: &Instr) {
    let s = |neg: bool| if neg { -1.0 } else { 1.0 };
    let (sp, sz) = (s(NP), s(NZ));
    crate::kernels::simd::fused(|| {
        lanes3(r, i, |a, b, c| {
            u64::from(super::fma::f32_word(a as u32, b as u32, c as u32, sp, sz))
        });
    });
}

fn fma64<const NP: bool, const NZ: bool>(r: &mut [u64], i: &Instr) {
    let s = |neg: bool| if neg { -1.0 } else { 1.0 };
    let (sp, sz) = (s(NP), s(NZ));
    crate::kernels::simd::fused(|| lanes3(r, i, |a, b, c| super::fma::f64_word(a, b, c, sp, sz)));
}

fn integer_pow32(r: &mut [u64], i: &Instr) {
    let y = i.imm;
    lanes1(r, i, |x| u64::from(fast::integer_pow32_word(x as u32, y)));
}

fn integer_pow64(r: &mut [u64], i: &Instr) {
    let y = i.imm;
    lanes1(r, i, |x| fast::integer_pow64_word(x, y));
}

/// An integer word as a register holds it (zero-extended).
trait IntLane: Copy + Ord {
    fn of(x: u64) -> Self;
    fn word(self) -> u64;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
}

macro_rules! int_lane {
    ($($t:ty => $u:ty),*) => {$(
        impl IntLane for $t {
            #[inline(always)]
            fn of(x: u64) -> $t { x as $u as $t }
            #[inline(always)]
            fn word(self) -> u64 { u64::from(self as $u) }
            #[inline(always)]
            fn add(self, o: $t) -> $t { self.wrapping_add(o) }
            #[inline(always)]
            fn sub(self, o: $t) -> $t { self.wrapping_sub(o) }
            #[inline(always)]
            fn mul(self, o: $t) -> $t { self.wrapping_mul(o) }
        }
    )*};
}
int_lane!(i8 => u8, u8 => u8, i16 => u16, u16 => u16, i32 => u32, u32 => u32, i64 => u64, u64 => u64);

fn int<W: IntLane, const OP: u8>(r: &mut [u64], i: &Instr) {
    lanes2(r, i, |x, y| {
        let (x, y) = (W::of(x), W::of(y));
        match OP {
            BinOp::ADD => x.add(y),
            BinOp::SUB => x.sub(y),
            BinOp::MUL => x.mul(y),
            BinOp::MAX => x.max(y),
            _ => x.min(y),
        }
        .word()
    });
}

fn bits<const OP: u8>(r: &mut [u64], i: &Instr) {
    lanes2(r, i, |x, y| match OP {
        0 => x & y,
        1 => x | y,
        _ => x ^ y,
    });
}

/// The function of `code`, and its immediate (`None`: integer `div`, shifts).
fn exec_of(code: Code) -> Option<(Exec, i64)> {
    macro_rules! bin {
        ($f:ident, $w:ty, $op:expr, $div:expr) => {
            match $op {
                BinOp::Add => $f::<$w, { BinOp::ADD }> as Exec,
                BinOp::Sub => $f::<$w, { BinOp::SUB }>,
                BinOp::Mul => $f::<$w, { BinOp::MUL }>,
                BinOp::Div if $div => $f::<$w, { BinOp::DIV }>,
                BinOp::Div => return None,
                BinOp::Max => $f::<$w, { BinOp::MAX }>,
                BinOp::Min => $f::<$w, { BinOp::MIN }>,
            }
        };
    }
    macro_rules! cmp {
        ($w:ty, $c:expr) => {
            match $c {
                Cmp::Eq => compare::<$w, { Cmp::code(Cmp::Eq) }> as Exec,
                Cmp::Ne => compare::<$w, { Cmp::code(Cmp::Ne) }>,
                Cmp::Lt => compare::<$w, { Cmp::code(Cmp::Lt) }>,
                Cmp::Le => compare::<$w, { Cmp::code(Cmp::Le) }>,
                Cmp::Gt => compare::<$w, { Cmp::code(Cmp::Gt) }>,
                Cmp::Ge => compare::<$w, { Cmp::code(Cmp::Ge) }>,
            }
        };
    }
    macro_rules! signs {
        ($f:ident, $p:expr, $z:expr) => {
            match ($p, $z) {
                (false, false) => $f::<false, false> as Exec,
                (false, true) => $f::<false, true>,
                (true, false) => $f::<true, false>,
                (true, true) => $f::<true, true>,
            }
        };
    }
    let f: Exec = match code {
        Code::F32(op) => bin!(float, u32, op, true),
        Code::F64(op) => bin!(float, u64, op, true),
        Code::Cmp32(c) => cmp!(u32, c),
        Code::Cmp64(c) => cmp!(u64, c),
        Code::Sign32(true) => sign::<31, true>,
        Code::Sign32(false) => sign::<31, false>,
        Code::Sign64(true) => sign::<63, true>,
        Code::Sign64(false) => sign::<63, false>,
        Code::Select => select,
        Code::Fma32(p, z) => signs!(fma32, p, z),
        Code::Fma64(p, z) => signs!(fma64, p, z),
        Code::Int(op, width, signed) => match (width, signed) {
            (1, true) => bin!(int, i8, op, false),
            (1, false) => bin!(int, u8, op, false),
            (2, true) => bin!(int, i16, op, false),
            (2, false) => bin!(int, u16, op, false),
            (4, true) => bin!(int, i32, op, false),
            (4, false) => bin!(int, u32, op, false),
            (8, true) => bin!(int, i64, op, false),
            (8, false) => bin!(int, u64, op, false),
            _ => return None,
        },
        Code::Bits(BitOp::And) => bits::<0>,
        Code::Bits(BitOp::Or) => bits::<1>,
        Code::Bits(BitOp::Xor) => bits::<2>,
        Code::Bits(_) => return None,
        Code::IntPow32(y) => return Some((integer_pow32, y)),
        Code::IntPow64(y) => return Some((integer_pow64, y)),
    };
    Some((f, 0))
}
