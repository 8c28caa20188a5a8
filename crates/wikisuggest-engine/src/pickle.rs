//! A small, safe decoder for the subset of Python pickles found in the published datasets.
//!
//! The dataset values were written by `pickle.dumps` (protocols 2–5) and hold only
//! `dict`/`str`/`int`, numpy scalar ints and numpy `float32` arrays. Instead of a general
//! pickle machine, this is a stack machine that knows exactly those opcodes and an
//! allow-list of globals, and *interprets* the few numpy constructors itself. Anything
//! else is a typed [`PickleError`]; no input makes it panic, loop or allocate more than a
//! small multiple of its input size (shared objects are counted each time they are
//! expanded into values, against an allowance proportional to the input).
//!
//! Objects live in an arena and the stack and memo hold arena ids, so a memoized object
//! that is mutated afterwards (a dict filled by `SETITEMS`, a dtype finished by `BUILD`)
//! is seen mutated through every reference, as in Python.

use std::collections::HashMap;

use crate::error::PickleError;

/// A decoded pickle value.
#[derive(Debug, Clone, PartialEq)]
pub enum PickleValue {
    /// `None`.
    None,
    /// `bool`.
    Bool(bool),
    /// `int` or a numpy integer scalar (must fit in `i64`).
    Int(i64),
    /// `float` or a numpy float scalar.
    Float(f64),
    /// `str`.
    Str(String),
    /// `bytes` or `bytearray`.
    Bytes(Vec<u8>),
    /// `tuple`.
    Tuple(Vec<PickleValue>),
    /// `list`.
    List(Vec<PickleValue>),
    /// `dict`, in insertion order.
    Dict(Vec<(PickleValue, PickleValue)>),
    /// A numpy `ndarray` of a numeric dtype.
    Array(NdArray),
}

/// Element type of a numpy array or scalar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dtype {
    /// numpy kind character: `b` (bool), `i` (signed), `u` (unsigned), `f` (float).
    pub kind: u8,
    /// Item size in bytes.
    pub size: u8,
    /// Whether the raw bytes are little-endian.
    pub little_endian: bool,
}

impl Dtype {
    /// Parses a numpy type string such as `f4`, `<i8` or `|b1`.
    fn parse(s: &str) -> Option<Self> {
        let (little_endian, rest) = match s.as_bytes().first()? {
            b'<' | b'=' | b'|' => (true, &s[1..]),
            b'>' => (false, &s[1..]),
            _ => (true, s),
        };
        let kind = *rest.as_bytes().first()?;
        let size: u8 = rest.get(1..)?.parse().ok()?;
        let ok = match kind {
            b'b' => size == 1,
            b'i' | b'u' => matches!(size, 1 | 2 | 4 | 8),
            b'f' => matches!(size, 4 | 8),
            _ => false,
        };
        ok.then_some(Self {
            kind,
            size,
            little_endian,
        })
    }

    fn item(&self, raw: &[u8]) -> Option<PickleValue> {
        let size = usize::from(self.size);
        if raw.len() != size {
            return None;
        }
        let mut buf = [0u8; 8];
        // Normalise to little-endian in the low `size` bytes of `buf`.
        for (i, &b) in raw.iter().enumerate() {
            let at = if self.little_endian { i } else { size - 1 - i };
            buf[at] = b;
        }
        let bits = u64::from_le_bytes(buf);
        Some(match self.kind {
            b'b' => PickleValue::Bool(bits != 0),
            b'u' => PickleValue::Int(i64::try_from(bits).ok()?),
            b'i' => {
                // Sign-extend from `size` bytes.
                let shift = 64 - 8 * u32::from(self.size);
                PickleValue::Int(((bits << shift) as i64) >> shift)
            }
            b'f' if size == 4 => PickleValue::Float(f64::from(f32::from_bits(bits as u32))),
            b'f' => PickleValue::Float(f64::from_bits(bits)),
            _ => return None,
        })
    }
}

/// A numpy array: dtype, shape and its raw element bytes in C or Fortran order.
#[derive(Debug, Clone, PartialEq)]
pub struct NdArray {
    /// Element type.
    pub dtype: Dtype,
    /// Dimensions.
    pub shape: Vec<usize>,
    /// Whether `data` is in Fortran (column-major) order.
    pub fortran_order: bool,
    /// Raw element bytes (length = product of `shape` × item size).
    pub data: Vec<u8>,
}

impl NdArray {
    /// The elements of a one-dimensional `float32` array, or `None` for any other array.
    pub fn to_f32_vec(&self) -> Option<Vec<f32>> {
        if self.dtype.kind != b'f' || self.dtype.size != 4 || self.shape.len() != 1 {
            return None;
        }
        let conv = if self.dtype.little_endian {
            f32::from_le_bytes
        } else {
            f32::from_be_bytes
        };
        Some(
            self.data
                .chunks_exact(4)
                .map(|c| conv([c[0], c[1], c[2], c[3]]))
                .collect(),
        )
    }
}

/// Decodes one pickle, like `pickle.loads` restricted to the supported subset.
///
/// As in Python, bytes after the STOP opcode are ignored.
pub fn loads(data: &[u8]) -> Result<PickleValue, PickleError> {
    Machine::new(data).run()
}

/// Callables the machine knows how to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Global {
    /// `numpy.core.multiarray._reconstruct` (protocol ≤ 4 arrays).
    Reconstruct,
    /// `numpy.ndarray` (only as an argument of `_reconstruct`).
    NdArrayType,
    /// `numpy.dtype`.
    DtypeType,
    /// `numpy.core.multiarray.scalar` (numpy scalars).
    Scalar,
    /// `numpy.core.numeric._frombuffer` (protocol 5 arrays).
    FromBuffer,
    /// `_codecs.encode` (how protocol 2 writes non-empty `bytes`).
    CodecsEncode,
    /// `bytes` (how protocol 2 writes `b""`: `bytes()`).
    Bytes,
}

impl Global {
    fn resolve(module: &str, name: &str) -> Option<Self> {
        Some(match (module, name) {
            ("numpy.core.multiarray" | "numpy._core.multiarray", "_reconstruct") => {
                Self::Reconstruct
            }
            ("numpy.core.multiarray" | "numpy._core.multiarray", "scalar") => Self::Scalar,
            ("numpy.core.numeric" | "numpy._core.numeric", "_frombuffer") => Self::FromBuffer,
            ("numpy", "ndarray") => Self::NdArrayType,
            ("numpy", "dtype") => Self::DtypeType,
            ("_codecs", "encode") => Self::CodecsEncode,
            ("__builtin__" | "builtins", "bytes") => Self::Bytes,
            _ => return None,
        })
    }
}

type Id = usize;

/// Arena objects. Containers refer to their items by id.
#[derive(Debug)]
enum Obj {
    Value(PickleValue),
    Tuple(Vec<Id>),
    List(Vec<Id>),
    Dict(DictObj),
    Global(Global),
    Dtype(Dtype),
    /// Result of `_reconstruct`: an array waiting for its `BUILD` state.
    PendingArray,
}

#[derive(Debug, Clone, Copy)]
enum Slot {
    Mark,
    Obj(Id),
}

/// Nesting limit when converting the arena to values (also breaks reference cycles).
const MAX_DEPTH: usize = 64;

/// How much the values of one pickle may expand to: at most this many values and bytes
/// of text per input byte, plus a small floor. A pickle refers to a memoized object in
/// two bytes, so shared containers ("billion laughs": a list of ten references to a list
/// of ten references to …) would otherwise expand exponentially when converted to values.
const EXPANSION_PER_BYTE: usize = 16;
const EXPANSION_FLOOR: usize = 1 << 16;

/// What is left of the expansion allowance while converting arena objects to values.
struct Budget {
    values: usize,
    bytes: usize,
}

impl Budget {
    fn for_input(len: usize) -> Self {
        let n = len
            .saturating_mul(EXPANSION_PER_BYTE)
            .saturating_add(EXPANSION_FLOOR);
        Self {
            values: n,
            bytes: n,
        }
    }

    /// Takes one value of `bytes` payload bytes; `false` once the allowance is spent.
    fn take(&mut self, bytes: usize) -> bool {
        match (self.values.checked_sub(1), self.bytes.checked_sub(bytes)) {
            (Some(v), Some(b)) => {
                (self.values, self.bytes) = (v, b);
                true
            }
            _ => false,
        }
    }
}

struct Machine<'a> {
    data: &'a [u8],
    pos: usize,
    /// Offset of the opcode being executed, for error messages.
    op_pos: usize,
    arena: Vec<Obj>,
    stack: Vec<Slot>,
    memo: Vec<Option<Id>>,
    budget: Budget,
}

impl<'a> Machine<'a> {
    fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            pos: 0,
            op_pos: 0,
            arena: Vec::new(),
            stack: Vec::new(),
            memo: Vec::new(),
            budget: Budget::for_input(data.len()),
        }
    }

    fn malformed(&self, reason: impl Into<String>) -> PickleError {
        PickleError::Malformed {
            pos: self.op_pos,
            reason: reason.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], PickleError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or(PickleError::Truncated(self.data.len()))?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn byte(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, PickleError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, PickleError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, PickleError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn len_u64(&mut self) -> Result<usize, PickleError> {
        let n = self.u64()?;
        usize::try_from(n).map_err(|_| PickleError::Truncated(self.data.len()))
    }

    /// A `\n`-terminated text argument (GLOBAL).
    fn line(&mut self) -> Result<&'a str, PickleError> {
        let rest = &self.data[self.pos..];
        let nl = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or(PickleError::Truncated(self.data.len()))?;
        self.pos += nl + 1;
        std::str::from_utf8(&rest[..nl]).map_err(|_| self.malformed("non-UTF-8 text argument"))
    }

    fn alloc(&mut self, obj: Obj) -> Id {
        self.arena.push(obj);
        self.arena.len() - 1
    }

    fn push(&mut self, obj: Obj) {
        let id = self.alloc(obj);
        self.stack.push(Slot::Obj(id));
    }

    fn push_value(&mut self, v: PickleValue) {
        self.push(Obj::Value(v));
    }

    fn pop(&mut self) -> Result<Id, PickleError> {
        match self.stack.pop() {
            Some(Slot::Obj(id)) => Ok(id),
            Some(Slot::Mark) => Err(self.malformed("unexpected MARK on the stack")),
            None => Err(self.malformed("stack underflow")),
        }
    }

    fn top(&self) -> Result<Id, PickleError> {
        match self.stack.last() {
            Some(Slot::Obj(id)) => Ok(*id),
            Some(Slot::Mark) => Err(self.malformed("unexpected MARK on the stack")),
            None => Err(self.malformed("stack underflow")),
        }
    }

    /// Pops everything down to (and including) the topmost MARK.
    fn pop_mark(&mut self) -> Result<Vec<Id>, PickleError> {
        let at = self
            .stack
            .iter()
            .rposition(|s| matches!(s, Slot::Mark))
            .ok_or_else(|| self.malformed("no MARK on the stack"))?;
        let items = self.stack[at + 1..]
            .iter()
            .map(|s| match s {
                Slot::Obj(id) => *id,
                // rposition found the last mark, so none follows it.
                Slot::Mark => 0,
            })
            .collect();
        self.stack.truncate(at);
        Ok(items)
    }

    fn str_of(&self, id: Id) -> Option<&str> {
        match self.arena.get(id) {
            Some(Obj::Value(PickleValue::Str(s))) => Some(s),
            _ => None,
        }
    }

    fn memo_put(&mut self, index: usize) -> Result<(), PickleError> {
        let id = self.top()?;
        // Memo indices are small and dense in practice; bound them by the input size so
        // a hostile index cannot force a huge allocation.
        if index > self.data.len() {
            return Err(self.malformed("memo index out of range"));
        }
        if self.memo.len() <= index {
            self.memo.resize(index + 1, None);
        }
        self.memo[index] = Some(id);
        Ok(())
    }

    fn memo_get(&mut self, index: usize) -> Result<(), PickleError> {
        let id = self
            .memo
            .get(index)
            .copied()
            .flatten()
            .ok_or_else(|| self.malformed(format!("memo key {index} not found")))?;
        self.stack.push(Slot::Obj(id));
        Ok(())
    }

    fn run(mut self) -> Result<PickleValue, PickleError> {
        loop {
            self.op_pos = self.pos;
            let op = self.byte()?;
            match op {
                0x80 => {
                    // PROTO
                    let proto = self.byte()?;
                    if !(2..=5).contains(&proto) {
                        return Err(self.malformed(format!("unsupported protocol {proto}")));
                    }
                }
                0x95 => {
                    // FRAME: framing is only an I/O hint; the length is not needed.
                    self.u64()?;
                }
                b'.' => {
                    // STOP
                    let id = self.pop()?;
                    let mut budget = std::mem::replace(&mut self.budget, Budget::for_input(0));
                    return self.value(id, 0, &mut budget);
                }
                b'(' => self.stack.push(Slot::Mark),
                b'0' => {
                    // POP
                    self.pop()?;
                }
                b'1' => {
                    // POP_MARK
                    self.pop_mark()?;
                }
                b'2' => {
                    // DUP
                    let id = self.top()?;
                    self.stack.push(Slot::Obj(id));
                }
                b'N' => self.push_value(PickleValue::None),
                0x88 => self.push_value(PickleValue::Bool(true)),
                0x89 => self.push_value(PickleValue::Bool(false)),
                b'J' => {
                    // BININT
                    let v = self.u32()? as i32;
                    self.push_value(PickleValue::Int(i64::from(v)));
                }
                b'K' => {
                    // BININT1
                    let v = self.byte()?;
                    self.push_value(PickleValue::Int(i64::from(v)));
                }
                b'M' => {
                    // BININT2
                    let v = self.u16()?;
                    self.push_value(PickleValue::Int(i64::from(v)));
                }
                0x8a => {
                    // LONG1
                    let n = usize::from(self.byte()?);
                    let raw = self.take(n)?;
                    let v =
                        long_from_le(raw).ok_or_else(|| self.malformed("int exceeds 64 bits"))?;
                    self.push_value(PickleValue::Int(v));
                }
                0x8b => {
                    // LONG4
                    let n = self.u32()? as i32;
                    let n =
                        usize::try_from(n).map_err(|_| self.malformed("negative LONG4 size"))?;
                    let raw = self.take(n)?;
                    let v =
                        long_from_le(raw).ok_or_else(|| self.malformed("int exceeds 64 bits"))?;
                    self.push_value(PickleValue::Int(v));
                }
                b'G' => {
                    // BINFLOAT (big-endian)
                    let b = self.take(8)?;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    self.push_value(PickleValue::Float(f64::from_be_bytes(a)));
                }
                0x8c => {
                    // SHORT_BINUNICODE
                    let n = usize::from(self.byte()?);
                    self.unicode(n)?;
                }
                b'X' => {
                    // BINUNICODE
                    let n = self.u32()? as usize;
                    self.unicode(n)?;
                }
                0x8d => {
                    // BINUNICODE8
                    let n = self.len_u64()?;
                    self.unicode(n)?;
                }
                b'C' => {
                    // SHORT_BINBYTES
                    let n = usize::from(self.byte()?);
                    self.bytes(n)?;
                }
                b'B' => {
                    // BINBYTES
                    let n = self.u32()? as usize;
                    self.bytes(n)?;
                }
                0x8e | 0x96 => {
                    // BINBYTES8, BYTEARRAY8
                    let n = self.len_u64()?;
                    self.bytes(n)?;
                }
                b')' => self.push(Obj::Tuple(Vec::new())),
                b't' => {
                    let items = self.pop_mark()?;
                    self.push(Obj::Tuple(items));
                }
                0x85..=0x87 => {
                    // TUPLE1..TUPLE3
                    let n = usize::from(op - 0x84);
                    let mut items = Vec::with_capacity(n);
                    for _ in 0..n {
                        items.push(self.pop()?);
                    }
                    items.reverse();
                    self.push(Obj::Tuple(items));
                }
                b']' => self.push(Obj::List(Vec::new())),
                b'l' => {
                    let items = self.pop_mark()?;
                    self.push(Obj::List(items));
                }
                b'a' => {
                    // APPEND
                    let item = self.pop()?;
                    self.extend_list(vec![item])?;
                }
                b'e' => {
                    // APPENDS
                    let items = self.pop_mark()?;
                    self.extend_list(items)?;
                }
                b'}' => self.push(Obj::Dict(DictObj::default())),
                b'd' => {
                    let items = self.pop_mark()?;
                    let pairs = pairs(&items).ok_or_else(|| self.malformed("odd DICT items"))?;
                    self.push(Obj::Dict(DictObj::default()));
                    self.set_items(pairs)?;
                }
                b's' => {
                    // SETITEM
                    let v = self.pop()?;
                    let k = self.pop()?;
                    self.set_items(vec![(k, v)])?;
                }
                b'u' => {
                    // SETITEMS
                    let items = self.pop_mark()?;
                    let pairs =
                        pairs(&items).ok_or_else(|| self.malformed("odd SETITEMS items"))?;
                    self.set_items(pairs)?;
                }
                0x94 => {
                    // MEMOIZE
                    let n = self.memo.len();
                    self.memo_put(n)?;
                }
                b'q' => {
                    // BINPUT
                    let i = usize::from(self.byte()?);
                    self.memo_put(i)?;
                }
                b'r' => {
                    // LONG_BINPUT
                    let i = self.u32()? as usize;
                    self.memo_put(i)?;
                }
                b'h' => {
                    // BINGET
                    let i = usize::from(self.byte()?);
                    self.memo_get(i)?;
                }
                b'j' => {
                    // LONG_BINGET
                    let i = self.u32()? as usize;
                    self.memo_get(i)?;
                }
                b'c' => {
                    // GLOBAL
                    let module = self.line()?;
                    let name = self.line()?;
                    self.global(module, name)?;
                }
                0x93 => {
                    // STACK_GLOBAL
                    let name = self.pop()?;
                    let module = self.pop()?;
                    let (Some(module), Some(name)) = (self.str_of(module), self.str_of(name))
                    else {
                        return Err(self.malformed("STACK_GLOBAL needs two strings"));
                    };
                    let (module, name) = (module.to_owned(), name.to_owned());
                    self.global(&module, &name)?;
                }
                b'R' => {
                    // REDUCE
                    let args = self.pop()?;
                    let func = self.pop()?;
                    let obj = self.reduce(func, args)?;
                    self.push(obj);
                }
                b'b' => {
                    // BUILD
                    let state = self.pop()?;
                    let target = self.top()?;
                    self.build(target, state)?;
                }
                _ => {
                    return Err(PickleError::UnsupportedOpcode {
                        opcode: op,
                        pos: self.op_pos,
                    });
                }
            }
        }
    }

    fn unicode(&mut self, n: usize) -> Result<(), PickleError> {
        let raw = self.take(n)?;
        // Python's pickle uses 'surrogatepass'; titles never contain lone surrogates,
        // so those are rejected rather than mapped.
        let s = std::str::from_utf8(raw).map_err(|_| self.malformed("invalid UTF-8 in str"))?;
        self.push_value(PickleValue::Str(s.to_owned()));
        Ok(())
    }

    fn bytes(&mut self, n: usize) -> Result<(), PickleError> {
        let raw = self.take(n)?.to_vec();
        self.push_value(PickleValue::Bytes(raw));
        Ok(())
    }

    fn global(&mut self, module: &str, name: &str) -> Result<(), PickleError> {
        let g = Global::resolve(module, name).ok_or_else(|| PickleError::UnsupportedGlobal {
            module: module.to_owned(),
            name: name.to_owned(),
        })?;
        self.push(Obj::Global(g));
        Ok(())
    }

    fn extend_list(&mut self, items: Vec<Id>) -> Result<(), PickleError> {
        let target = self.top()?;
        match self.arena.get_mut(target) {
            Some(Obj::List(list)) => {
                list.extend(items);
                Ok(())
            }
            _ => Err(self.malformed("APPEND(S) target is not a list")),
        }
    }

    fn set_items(&mut self, new: Vec<(Id, Id)>) -> Result<(), PickleError> {
        let target = self.top()?;
        let mut keyed = Vec::with_capacity(new.len());
        let mut budget = std::mem::replace(&mut self.budget, Budget::for_input(0));
        for (k, v) in new {
            let key = self.value(k, 0, &mut budget);
            match key {
                Ok(key) => keyed.push((key, k, v)),
                Err(e) => {
                    self.budget = budget;
                    return Err(e);
                }
            }
        }
        self.budget = budget;
        let op_pos = self.op_pos;
        let Some(Obj::Dict(dict)) = self.arena.get_mut(target) else {
            return Err(PickleError::Malformed {
                pos: op_pos,
                reason: "SETITEM(S) target is not a dict".into(),
            });
        };
        for (key, k, v) in keyed {
            dict.insert(key, k, v);
        }
        Ok(())
    }

    fn reduce(&mut self, func: Id, args: Id) -> Result<Obj, PickleError> {
        let Some(Obj::Global(g)) = self.arena.get(func) else {
            return Err(self.malformed("REDUCE callable is not a known global"));
        };
        let g = *g;
        let Some(Obj::Tuple(args)) = self.arena.get(args) else {
            return Err(self.malformed("REDUCE arguments are not a tuple"));
        };
        let args = args.clone();
        match g {
            Global::Reconstruct => {
                // _reconstruct(ndarray, (0,), b'b'): an empty array finished by BUILD.
                match args.first().and_then(|&a| self.arena.get(a)) {
                    Some(Obj::Global(Global::NdArrayType)) => Ok(Obj::PendingArray),
                    _ => Err(self.malformed("_reconstruct of something other than ndarray")),
                }
            }
            Global::DtypeType => {
                let spec = args
                    .first()
                    .and_then(|&a| self.str_of(a))
                    .ok_or_else(|| self.malformed("dtype() without a type string"))?;
                Dtype::parse(spec)
                    .map(Obj::Dtype)
                    .ok_or_else(|| self.malformed(format!("unsupported dtype {spec:?}")))
            }
            Global::Scalar => {
                let (Some(&d), Some(&raw)) = (args.first(), args.get(1)) else {
                    return Err(self.malformed("scalar() needs (dtype, bytes)"));
                };
                let dtype = self.dtype_of(d)?;
                let raw = self.bytes_of(raw)?;
                dtype
                    .item(raw)
                    .map(Obj::Value)
                    .ok_or_else(|| self.malformed("scalar bytes do not fit the dtype"))
            }
            Global::FromBuffer => {
                // _frombuffer(buffer, dtype, shape, order)
                let [buf, d, shape, order] = args[..] else {
                    return Err(self.malformed("_frombuffer needs 4 arguments"));
                };
                let dtype = self.dtype_of(d)?;
                let shape = self.shape_of(shape)?;
                let fortran_order = match self.str_of(order) {
                    Some("C") => false,
                    Some("F") => true,
                    _ => return Err(self.malformed("_frombuffer order must be 'C' or 'F'")),
                };
                let data = self.bytes_of(buf)?.to_vec();
                self.array(dtype, shape, fortran_order, data)
            }
            Global::CodecsEncode => {
                let (Some(text), Some("latin1")) = (
                    args.first().and_then(|&a| self.str_of(a)),
                    args.get(1).and_then(|&a| self.str_of(a)),
                ) else {
                    return Err(self.malformed("_codecs.encode needs (str, 'latin1')"));
                };
                let bytes = text
                    .chars()
                    .map(|c| u8::try_from(u32::from(c)).ok())
                    .collect::<Option<Vec<u8>>>()
                    .ok_or_else(|| self.malformed("latin1 text outside U+0000..U+00FF"))?;
                Ok(Obj::Value(PickleValue::Bytes(bytes)))
            }
            Global::Bytes if args.is_empty() => Ok(Obj::Value(PickleValue::Bytes(Vec::new()))),
            Global::Bytes => Err(self.malformed("bytes() with arguments")),
            Global::NdArrayType => Err(self.malformed("ndarray called directly")),
        }
    }

    fn build(&mut self, target: Id, state: Id) -> Result<(), PickleError> {
        let Some(Obj::Tuple(state)) = self.arena.get(state) else {
            return Err(self.malformed("BUILD state is not a tuple"));
        };
        let state = state.clone();
        match self.arena.get(target) {
            Some(Obj::Dtype(d)) => {
                // (version, byteorder, subarray, names, fields, elsize, alignment, flags)
                let mut d = *d;
                match state.get(1).and_then(|&b| self.str_of(b)) {
                    Some("<" | "|" | "=") => d.little_endian = true,
                    Some(">") => d.little_endian = false,
                    _ => return Err(self.malformed("dtype state without a byte order")),
                }
                let structured = state.get(3).is_some_and(|names| {
                    !matches!(self.arena.get(*names), Some(Obj::Value(PickleValue::None)))
                });
                if structured {
                    return Err(self.malformed("structured dtypes are not supported"));
                }
                self.arena[target] = Obj::Dtype(d);
                Ok(())
            }
            Some(Obj::PendingArray) => {
                // (version, shape, dtype, is_fortran, rawdata); version is optional.
                let s = match state.len() {
                    5 => &state[1..],
                    4 => &state[..],
                    _ => return Err(self.malformed("ndarray state must have 4 or 5 items")),
                };
                let dtype = self.dtype_of(s[1])?;
                let shape = self.shape_of(s[0])?;
                let fortran_order = match self.arena.get(s[2]) {
                    Some(Obj::Value(PickleValue::Bool(b))) => *b,
                    Some(Obj::Value(PickleValue::Int(i))) => *i != 0,
                    _ => return Err(self.malformed("ndarray fortran flag is not a bool")),
                };
                let data = self.bytes_of(s[3])?.to_vec();
                let array = self.array(dtype, shape, fortran_order, data)?;
                self.arena[target] = array;
                Ok(())
            }
            _ => Err(self.malformed("BUILD on an unsupported object")),
        }
    }

    fn array(
        &self,
        dtype: Dtype,
        shape: Vec<usize>,
        fortran_order: bool,
        data: Vec<u8>,
    ) -> Result<Obj, PickleError> {
        let expected = shape
            .iter()
            .try_fold(usize::from(dtype.size), |acc, &d| acc.checked_mul(d));
        if expected != Some(data.len()) {
            return Err(self.malformed("array data length does not match its shape"));
        }
        Ok(Obj::Value(PickleValue::Array(NdArray {
            dtype,
            shape,
            fortran_order,
            data,
        })))
    }

    fn dtype_of(&self, id: Id) -> Result<Dtype, PickleError> {
        match self.arena.get(id) {
            Some(Obj::Dtype(d)) => Ok(*d),
            _ => Err(self.malformed("expected a numpy dtype")),
        }
    }

    fn bytes_of(&self, id: Id) -> Result<&[u8], PickleError> {
        match self.arena.get(id) {
            Some(Obj::Value(PickleValue::Bytes(b))) => Ok(b),
            _ => Err(self.malformed("expected bytes")),
        }
    }

    fn shape_of(&self, id: Id) -> Result<Vec<usize>, PickleError> {
        let Some(Obj::Tuple(dims)) = self.arena.get(id) else {
            return Err(self.malformed("array shape is not a tuple"));
        };
        dims.iter()
            .map(|&d| match self.arena.get(d) {
                Some(Obj::Value(PickleValue::Int(n))) => usize::try_from(*n).ok(),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| self.malformed("array shape holds a non-dimension"))
    }

    /// Converts an arena object into an owned value, within `budget`.
    fn value(&self, id: Id, depth: usize, budget: &mut Budget) -> Result<PickleValue, PickleError> {
        if depth > MAX_DEPTH {
            return Err(self.malformed("nesting too deep (or self-referencing)"));
        }
        let payload = match self.arena.get(id) {
            Some(Obj::Value(PickleValue::Str(s))) => s.len(),
            Some(Obj::Value(PickleValue::Bytes(b))) => b.len(),
            Some(Obj::Value(PickleValue::Array(a))) => a.data.len(),
            _ => 0,
        };
        if !budget.take(payload) {
            return Err(self.malformed(format!(
                "expands to more than {EXPANSION_PER_BYTE} values or bytes per input byte \
                 (shared containers)"
            )));
        }
        let many = |ids: &[Id], budget: &mut Budget| -> Result<Vec<PickleValue>, PickleError> {
            ids.iter()
                .map(|&i| self.value(i, depth + 1, budget))
                .collect()
        };
        match self.arena.get(id) {
            Some(Obj::Value(v)) => Ok(v.clone()),
            Some(Obj::Tuple(items)) => Ok(PickleValue::Tuple(many(items, budget)?)),
            Some(Obj::List(items)) => Ok(PickleValue::List(many(items, budget)?)),
            Some(Obj::Dict(dict)) => Ok(PickleValue::Dict(
                dict.entries
                    .iter()
                    .map(|&(k, v)| {
                        Ok((
                            self.value(k, depth + 1, budget)?,
                            self.value(v, depth + 1, budget)?,
                        ))
                    })
                    .collect::<Result<_, PickleError>>()?,
            )),
            Some(Obj::Global(_)) | Some(Obj::Dtype(_)) => {
                Err(self.malformed("a class or dtype is not a value"))
            }
            Some(Obj::PendingArray) => Err(self.malformed("ndarray without BUILD state")),
            None => Err(self.malformed("dangling object id")),
        }
    }
}

/// A dict under construction: entries in insertion order plus an index by key.
///
/// Python semantics: a repeated key keeps its first position and takes the last value.
/// `True`/`1` and `1.0` are equal keys in Python; only `str` and `int`/`bool` keys are
/// indexed (the datasets use `str` keys), other keys fall back to a linear comparison.
#[derive(Debug, Default)]
struct DictObj {
    entries: Vec<(Id, Id)>,
    keys: Vec<PickleValue>,
    str_index: HashMap<String, usize>,
    int_index: HashMap<i64, usize>,
}

impl DictObj {
    fn insert(&mut self, key: PickleValue, k: Id, v: Id) {
        let found = match &key {
            PickleValue::Str(s) => self.str_index.get(s.as_str()).copied(),
            PickleValue::Int(i) => self.int_index.get(i).copied(),
            PickleValue::Bool(b) => self.int_index.get(&i64::from(*b)).copied(),
            other => self.keys.iter().position(|e| e == other),
        };
        match found {
            Some(i) => self.entries[i].1 = v,
            None => {
                let i = self.entries.len();
                match &key {
                    PickleValue::Str(s) => {
                        self.str_index.insert(s.clone(), i);
                    }
                    PickleValue::Int(n) => {
                        self.int_index.insert(*n, i);
                    }
                    PickleValue::Bool(b) => {
                        self.int_index.insert(i64::from(*b), i);
                    }
                    _ => {}
                }
                self.entries.push((k, v));
                self.keys.push(key);
            }
        }
    }
}

/// Groups `[k1, v1, k2, v2, …]` into pairs.
fn pairs(items: &[Id]) -> Option<Vec<(Id, Id)>> {
    items
        .len()
        .is_multiple_of(2)
        .then(|| items.chunks_exact(2).map(|c| (c[0], c[1])).collect())
}

/// Decodes a little-endian two's-complement integer (LONG1/LONG4) that fits in `i64`.
fn long_from_le(raw: &[u8]) -> Option<i64> {
    if raw.is_empty() {
        return Some(0);
    }
    let negative = raw.last().is_some_and(|&b| b & 0x80 != 0);
    let fill = if negative { 0xff } else { 0x00 };
    // Bytes beyond the 8th must be pure sign extension.
    if raw.len() > 8 && raw[8..].iter().any(|&b| b != fill) {
        return None;
    }
    let mut buf = [fill; 8];
    let n = raw.len().min(8);
    buf[..n].copy_from_slice(&raw[..n]);
    let v = i64::from_le_bytes(buf);
    // With more than 8 bytes, the sign of the truncated value must agree.
    if raw.len() > 8 && (v < 0) != negative {
        return None;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long1_sign_extension() {
        assert_eq!(long_from_le(&[]), Some(0));
        assert_eq!(long_from_le(&[0xff]), Some(-1));
        assert_eq!(long_from_le(&[0x00, 0x80, 0x00]), Some(0x8000));
        assert_eq!(
            long_from_le(&[0, 0, 0, 0, 0, 0, 0, 0x80, 0xff]),
            Some(i64::MIN)
        );
        assert_eq!(long_from_le(&[0, 0, 0, 0, 0, 0, 0, 0x80, 0x00]), None);
        assert_eq!(long_from_le(&[0, 0, 0, 0, 0, 0, 0, 0, 1]), None);
    }

    #[test]
    fn dtype_parsing() {
        let d = Dtype::parse("f4").unwrap();
        assert_eq!((d.kind, d.size, d.little_endian), (b'f', 4, true));
        assert!(!Dtype::parse(">i8").unwrap().little_endian);
        assert!(Dtype::parse("U8").is_none());
        assert!(Dtype::parse("f3").is_none());
        assert!(Dtype::parse("").is_none());
    }

    #[test]
    fn scalar_items() {
        let i2 = Dtype::parse("i2").unwrap();
        assert_eq!(i2.item(&[0xfe, 0xff]), Some(PickleValue::Int(-2)));
        let u8d = Dtype::parse("u8").unwrap();
        assert_eq!(u8d.item(&[0xff; 8]), None);
        let be = Dtype::parse(">i4").unwrap();
        assert_eq!(be.item(&[0, 0, 1, 0]), Some(PickleValue::Int(256)));
    }
}
