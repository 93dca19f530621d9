/**
 * Named opcodes: the one table the rewriter uses instead of hex literals.
 * Values are from the WebAssembly core spec (and its exception-handling,
 * threads and bulk-memory proposals).
 *
 * @module
 */

/** Single-byte opcodes (and the prefixes of multi-byte ones). */
export const OP = {
  unreachable: 0x00,
  nop: 0x01,
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  try: 0x06,
  catch: 0x07,
  throw: 0x08,
  rethrow: 0x09,
  throwRef: 0x0a,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  brTable: 0x0e,
  return: 0x0f,
  call: 0x10,
  callIndirect: 0x11,
  returnCall: 0x12,
  returnCallIndirect: 0x13,
  callRef: 0x14,
  returnCallRef: 0x15,
  delegate: 0x18,
  catchAll: 0x19,
  drop: 0x1a,
  select: 0x1b,
  selectTyped: 0x1c,
  tryTable: 0x1f,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  globalGet: 0x23,
  globalSet: 0x24,
  tableGet: 0x25,
  tableSet: 0x26,
  /** The first load (`i32.load`); loads and stores run to {@linkcode OP.i64Store32}. */
  i32Load: 0x28,
  i32Store: 0x36,
  i64Store: 0x37,
  f32Store: 0x38,
  f64Store: 0x39,
  i32Store8: 0x3a,
  i32Store16: 0x3b,
  i64Store32: 0x3e,
  memorySize: 0x3f,
  memoryGrow: 0x40,
  i32Const: 0x41,
  i64Const: 0x42,
  f32Const: 0x43,
  f64Const: 0x44,
  /** The first numeric instruction without immediates; they run to {@linkcode OP.i64ExtendI32U}'s end of range. */
  i32Eqz: 0x45,
  i32Eq: 0x46,
  i32GtU: 0x4b,
  i64Eq: 0x51,
  i64LtS: 0x53,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32ShrU: 0x76,
  i64Sub: 0x7d,
  i64Shl: 0x86,
  i64ShrU: 0x88,
  i64ExtendI32U: 0xad,
  /** The last numeric instruction without immediates (`i64.extend32_s`). */
  i64Extend32S: 0xc4,
  refNull: 0xd0,
  refIsNull: 0xd1,
  refFunc: 0xd2,
  refEq: 0xd3,
  refAsNonNull: 0xd4,
  brOnNull: 0xd5,
  brOnNonNull: 0xd6,
  /** Prefix of the bulk-memory, table and saturating-conversion opcodes. */
  misc: 0xfc,
  /** Prefix of the SIMD opcodes. */
  simd: 0xfd,
  /** Prefix of the threads (atomic) opcodes. */
  atomic: 0xfe,
} as const;

/** Memarg alignment flag: an explicit memory index follows (multi-memory). */
export const MEMARG_MEMORY_INDEX = 0x40;

/** Sub-opcodes after the {@linkcode OP.misc} prefix that the rewriter handles. */
export const MISC = {
  memoryInit: 8,
  dataDrop: 9,
  memoryCopy: 10,
  memoryFill: 11,
  tableInit: 12,
  tableCopy: 14,
  tableGrow: 15,
  tableFill: 17,
} as const;

/** Sub-opcodes after the {@linkcode OP.atomic} prefix. */
export const ATOMIC = {
  notify: 0x00,
  wait32: 0x01,
  wait64: 0x02,
  fence: 0x03,
  /** First atomic store / read-modify-write. */
  firstWrite: 0x17,
  /** First compare-exchange. */
  firstCmpxchg: 0x48,
  last: 0x4e,
} as const;

/** Sub-opcodes after the {@linkcode OP.simd} prefix that write memory. */
export const SIMD = {
  v128Store: 11,
  firstStoreLane: 88,
  lastStoreLane: 91,
} as const;

/** Value types. */
export const TYPE = {
  i32: 0x7f,
  i64: 0x7e,
  f32: 0x7d,
  f64: 0x7c,
  v128: 0x7b,
  funcref: 0x70,
  externref: 0x6f,
  /** The empty block type. */
  void: 0x40,
  /** A function type entry. */
  func: 0x60,
} as const;
