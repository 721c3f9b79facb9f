// A small ONNX evaluator for the shipped policies (agents/<preset>/<name>.onnx): reads the
// model file's protobuf wire format and runs the graph on the CPU, for Node and the browser
// without onnxruntime. It mirrors what greed_env/bots/onnx_backend.py asks of onnxruntime
// (one float32 input `obs` (batch, dim) -> logits (batch, n)) and its `masked_argmax`.
//
// Tensors are {type, dims, data}: float32 in a Float32Array, bool in a Uint8Array, int32 in an
// Int32Array, int64 as a plain array of numbers (exact below 2**53; int64 limits used as
// "to the end" markers round to +-9.22e18, which reads the same).

const FLOAT = 1;
const INT32 = 6;
const INT64 = 7;
const BOOL = 9;
const TYPE_NAMES = { 1: 'float', 6: 'int32', 7: 'int64', 9: 'bool', 10: 'float16', 11: 'double' };
const MIN_OPSET = 13;

// ----------------------------------------------------------------------------------------
// protobuf wire format

class WireReader {
  /** @param {Uint8Array} bytes */
  constructor(bytes) {
    this.buf = bytes;
    this.pos = 0;
  }

  done() {
    return this.pos >= this.buf.length;
  }

  /** A varint as a signed 64-bit number (exact below 2**53). */
  varint() {
    const start = this.pos;
    let value = 0;
    let scale = 1;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('ONNX file is truncated (a varint runs off the end)');
      const byte = this.buf[this.pos++];
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) break;
      scale *= 128;
      if (this.pos - start >= 10) throw new Error('ONNX file is corrupt (a varint is longer than 10 bytes)');
    }
    return this.pos - start <= 7 ? value : this.bigVarint(start);
  }

  bigVarint(start) {
    let value = 0n;
    for (let i = this.pos - 1; i >= start; i--) value = (value << 7n) | BigInt(this.buf[i] & 0x7f);
    return Number(BigInt.asIntN(64, value));
  }

  take(n) {
    if (this.pos + n > this.buf.length) throw new Error('ONNX file is truncated (a field runs off the end)');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

/** Every field of one message as [fieldNumber, wireType, value]; value: number or bytes. */
function fieldsOf(bytes) {
  const r = new WireReader(bytes);
  const out = [];
  while (!r.done()) {
    const key = r.varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) out.push([field, wire, r.varint()]);
    else if (wire === 2) out.push([field, wire, r.take(r.varint())]);
    else if (wire === 5) out.push([field, wire, r.take(4)]);
    else if (wire === 1) out.push([field, wire, r.take(8)]);
    else throw new Error(`ONNX file is corrupt (protobuf wire type ${wire})`);
  }
  return out;
}

const utf8 = new TextDecoder();

function float32Of(bytes) {
  return new DataView(bytes.buffer, bytes.byteOffset, 4).getFloat32(0, true);
}

/** A repeated varint field: packed (one length-delimited field) or one value per field. */
function pushVarints(out, wire, value) {
  if (wire === 0) {
    out.push(value);
    return;
  }
  const r = new WireReader(value);
  while (!r.done()) out.push(r.varint());
}

/** A repeated float field: packed or one fixed32 per field. */
function pushFloats(out, wire, value) {
  if (wire !== 2 && wire !== 5) throw new Error('ONNX file is corrupt (a float field of the wrong wire type)');
  const view = new DataView(value.buffer, value.byteOffset, value.length);
  for (let k = 0; k + 4 <= value.length; k += 4) out.push(view.getFloat32(k, true));
}

function readOpset(bytes) {
  const opset = { domain: '', version: 0 };
  for (const [f, , v] of fieldsOf(bytes)) {
    if (f === 1) opset.domain = utf8.decode(v);
    else if (f === 2) opset.version = v;
  }
  return opset;
}

function readModel(bytes) {
  const model = { graph: null, opsets: [] };
  for (const [f, , v] of fieldsOf(bytes)) {
    if (f === 7) model.graph = readGraph(v);
    else if (f === 8) model.opsets.push(readOpset(v));
  }
  if (!model.graph) throw new Error('ONNX file holds no graph (is it an ONNX model?)');
  return model;
}

function readGraph(bytes) {
  const graph = { nodes: [], initializers: [], inputs: [], outputs: [] };
  for (const [f, , v] of fieldsOf(bytes)) {
    if (f === 1) graph.nodes.push(readNode(v));
    else if (f === 5) graph.initializers.push(readTensor(v));
    else if (f === 11) graph.inputs.push(readValueInfo(v));
    else if (f === 12) graph.outputs.push(readValueInfo(v));
    else if (f === 15) throw new Error('ONNX graph has sparse initializers, which this evaluator does not read');
  }
  return graph;
}

function readNode(bytes) {
  const node = { inputs: [], outputs: [], name: '', opType: '', domain: '', attrs: {} };
  for (const [f, , v] of fieldsOf(bytes)) {
    if (f === 1) node.inputs.push(utf8.decode(v));
    else if (f === 2) node.outputs.push(utf8.decode(v));
    else if (f === 3) node.name = utf8.decode(v);
    else if (f === 4) node.opType = utf8.decode(v);
    else if (f === 5) {
      const attr = readAttribute(v);
      node.attrs[attr.name] = attr.value;
    } else if (f === 7) node.domain = utf8.decode(v);
  }
  return node;
}

function readAttribute(bytes) {
  const attr = { name: '', value: undefined };
  const floats = [];
  const ints = [];
  let type = 0;
  for (const [f, wire, v] of fieldsOf(bytes)) {
    if (f === 1) attr.name = utf8.decode(v);
    else if (f === 2) attr.value = float32Of(v);
    else if (f === 3) attr.value = v;
    else if (f === 4) attr.value = utf8.decode(v);
    else if (f === 5) attr.value = tensorOf(readTensor(v));
    else if (f === 7) pushFloats(floats, wire, v);
    else if (f === 8) pushVarints(ints, wire, v);
    else if (f === 20) type = v;
  }
  if (type === 6) attr.value = floats;
  if (type === 7) attr.value = ints;
  return attr;
}

function readTensor(bytes) {
  const t = { name: '', dims: [], dataType: 0, raw: null, floats: [], ints: [], external: false };
  for (const [f, wire, v] of fieldsOf(bytes)) {
    if (f === 1) pushVarints(t.dims, wire, v);
    else if (f === 2) t.dataType = v;
    else if (f === 3) throw new Error('ONNX tensor is split into segments, which this evaluator does not read');
    else if (f === 4) pushFloats(t.floats, wire, v);
    else if (f === 5 || f === 7) pushVarints(t.ints, wire, v);
    else if (f === 8) t.name = utf8.decode(v);
    else if (f === 9) t.raw = v;
    else if (f === 13) t.external = true;
    else if (f === 14) t.external = t.external || v === 1;
  }
  return t;
}

function readValueInfo(bytes) {
  const info = { name: '', elemType: 0, dims: null };
  for (const [f, , v] of fieldsOf(bytes)) {
    if (f === 1) info.name = utf8.decode(v);
    else if (f === 2) readTypeInto(info, v);
  }
  return info;
}

function readTypeInto(info, bytes) {
  for (const [f, , v] of fieldsOf(bytes)) {
    if (f !== 1) continue;
    for (const [g, , w] of fieldsOf(v)) {
      if (g === 1) info.elemType = w;
      else if (g === 2) info.dims = fieldsOf(w).filter(([h]) => h === 1).map(([, , d]) => readDim(d));
    }
  }
}

function readDim(bytes) {
  for (const [f, , v] of fieldsOf(bytes)) {
    if (f === 1) return v;
    if (f === 2) return utf8.decode(v);
  }
  return null;
}

// ----------------------------------------------------------------------------------------
// tensors

function tensor(type, dims, data) {
  return { type, dims, data };
}

function sizeOf(dims) {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

function alloc(type, n) {
  if (type === FLOAT) return new Float32Array(n);
  if (type === BOOL) return new Uint8Array(n);
  if (type === INT32) return new Int32Array(n);
  if (type === INT64) return new Array(n).fill(0);
  throw new Error(`ONNX tensors of type ${TYPE_NAMES[type] ?? type} are not supported`);
}

function typedCopy(Kind, raw) {
  if (raw.length % Kind.BYTES_PER_ELEMENT) throw new Error('ONNX tensor raw_data has a partial element');
  const copy = new Uint8Array(raw.length);
  copy.set(raw);
  return new Kind(copy.buffer);
}

/** A tensor from a TensorProto read by readTensor. */
function tensorOf(t) {
  const where = `ONNX initializer '${t.name}'`;
  if (t.external) throw new Error(`${where} keeps its data in an external file; save the model with its weights inside`);
  const n = sizeOf(t.dims);
  let data;
  if (t.dataType === FLOAT) data = t.raw ? typedCopy(Float32Array, t.raw) : Float32Array.from(t.floats);
  else if (t.dataType === INT64) data = t.raw ? Array.from(typedCopy(BigInt64Array, t.raw), Number) : t.ints.slice();
  else if (t.dataType === INT32) data = t.raw ? typedCopy(Int32Array, t.raw) : Int32Array.from(t.ints);
  else if (t.dataType === BOOL) data = t.raw ? typedCopy(Uint8Array, t.raw) : Uint8Array.from(t.ints, (x) => (x ? 1 : 0));
  else throw new Error(`${where} has data type ${TYPE_NAMES[t.dataType] ?? t.dataType}, which this evaluator does not read`);
  if (data.length !== n) throw new Error(`${where} holds ${data.length} values for dims [${t.dims}]`);
  return tensor(t.dataType, t.dims.slice(), data);
}

/** Numbers of a 1-D int tensor (axes, shapes, starts). */
function intsOf(t) {
  return Array.from(t.data, Number);
}

// ----------------------------------------------------------------------------------------
// broadcasting

function broadcastDims(...all) {
  const rank = Math.max(...all.map((d) => d.length));
  const out = new Array(rank).fill(1);
  for (const dims of all) {
    const shift = rank - dims.length;
    dims.forEach((d, k) => {
      const o = out[shift + k];
      if (d !== o && d !== 1 && o !== 1) throw new Error(`ONNX shapes [${all.join('], [')}] do not broadcast`);
      if (o === 1) out[shift + k] = d;
    });
  }
  return out;
}

const knownMaps = new Map();
const KNOWN_MAPS = 256;
const KNOWN_MAP_SIZE = 1 << 16;

/** For each flat index of `outDims`, the flat index into a tensor of `dims` it reads; null when
 * the dims are equal (identity). Small maps are kept: a graph asks for the same ones at every
 * run. */
function indexMap(outDims, dims) {
  if (dims.length === outDims.length && dims.every((d, k) => d === outDims[k])) return null;
  const key = `${outDims}|${dims}`;
  const known = knownMaps.get(key);
  if (known !== undefined) return known;
  const map = buildIndexMap(outDims, dims);
  if (map.length <= KNOWN_MAP_SIZE) {
    if (knownMaps.size >= KNOWN_MAPS) knownMaps.delete(knownMaps.keys().next().value);
    knownMaps.set(key, map);
  }
  return map;
}

function buildIndexMap(outDims, dims) {
  const n = sizeOf(outDims);
  const shift = outDims.length - dims.length;
  const strides = new Array(outDims.length).fill(0);
  let stride = 1;
  for (let k = dims.length - 1; k >= 0; k--) {
    strides[shift + k] = dims[k] === 1 ? 0 : stride;
    stride *= dims[k];
  }
  const map = new Int32Array(n);
  const index = new Array(outDims.length).fill(0);
  let at = 0;
  for (let flat = 0; flat < n; flat++) {
    map[flat] = at;
    for (let k = outDims.length - 1; k >= 0; k--) {
      index[k]++;
      at += strides[k];
      if (index[k] < outDims[k]) break;
      at -= strides[k] * index[k];
      index[k] = 0;
    }
  }
  return map;
}

function elementwise(inputs, type, fn) {
  const dims = broadcastDims(...inputs.map((t) => t.dims));
  const n = sizeOf(dims);
  const out = alloc(type, n);
  const maps = inputs.map((t) => indexMap(dims, t.dims));
  const [a, b, c] = inputs.map((t) => t.data);
  const [ma, mb, mc] = maps;
  if (inputs.length === 1) for (let k = 0; k < n; k++) out[k] = fn(a[ma ? ma[k] : k]);
  else if (inputs.length === 2) for (let k = 0; k < n; k++) out[k] = fn(a[ma ? ma[k] : k], b[mb ? mb[k] : k]);
  else for (let k = 0; k < n; k++) out[k] = fn(a[ma ? ma[k] : k], b[mb ? mb[k] : k], c[mc ? mc[k] : k]);
  return tensor(type, dims, out);
}

function sameType(node, a, b) {
  if (a.type !== b.type) {
    throw new Error(`ONNX ${node.opType} node '${node.name}' mixes ${TYPE_NAMES[a.type]} and ${TYPE_NAMES[b.type]}`);
  }
  return a.type;
}

function arithmetic(floatFn, intFn) {
  return (node, [a, b]) => {
    const type = sameType(node, a, b);
    const isInt = type === INT64 || type === INT32;
    return elementwise([a, b], type, isInt ? intFn : floatFn);
  };
}

function comparison(fn) {
  return (node, [a, b]) => {
    sameType(node, a, b);
    return elementwise([a, b], BOOL, (x, y) => (fn(x, y) ? 1 : 0));
  };
}

function normAxis(axis, rank) {
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) throw new Error(`ONNX axis ${axis} is out of range for rank ${rank}`);
  return a;
}

// ----------------------------------------------------------------------------------------
// operators: each (node, inputs, prepared) -> output tensor

function castTo(type, x) {
  if (type === FLOAT) return x;
  if (type === BOOL) return x ? 1 : 0;
  if (type === INT64 || type === INT32) return Math.trunc(Number(x));
  throw new Error(`ONNX Cast to ${TYPE_NAMES[type] ?? type} is not supported`);
}

function cast(node, [x]) {
  const to = node.attrs.to;
  return elementwise([x], to, (v) => castTo(to, v));
}

function shape(node, [x]) {
  const rank = x.dims.length;
  const clamp = (v) => Math.min(Math.max(v < 0 ? v + rank : v, 0), rank);
  const start = clamp(node.attrs.start ?? 0);
  const end = clamp(node.attrs.end ?? rank);
  const dims = x.dims.slice(start, Math.max(start, end));
  return tensor(INT64, [dims.length], dims);
}

function expand(node, [x, to]) {
  const dims = broadcastDims(x.dims, intsOf(to));
  const map = indexMap(dims, x.dims);
  const out = alloc(x.type, sizeOf(dims));
  for (let k = 0; k < out.length; k++) out[k] = x.data[map ? map[k] : k];
  return tensor(x.type, dims, out);
}

function reshape(node, [x, to]) {
  const allowZero = node.attrs.allowzero === 1;
  const dims = intsOf(to).map((d, k) => (d === 0 && !allowZero ? x.dims[k] : d));
  const known = dims.reduce((p, d) => (d === -1 ? p : p * d), 1);
  const free = dims.indexOf(-1);
  if (free >= 0) dims[free] = known === 0 ? 0 : sizeOf(x.dims) / known;
  if (sizeOf(dims) !== sizeOf(x.dims) || !dims.every(Number.isInteger)) {
    throw new Error(`ONNX Reshape node '${node.name}' cannot reshape [${x.dims}] to [${intsOf(to)}]`);
  }
  return tensor(x.type, dims, x.data);
}

function unsqueeze(node, [x, axes]) {
  const rank = x.dims.length + axes.data.length;
  const at = new Set(intsOf(axes).map((a) => normAxis(a, rank)));
  const dims = [];
  let k = 0;
  for (let d = 0; d < rank; d++) dims.push(at.has(d) ? 1 : x.dims[k++]);
  return tensor(x.type, dims, x.data);
}

function sliceRange(dim, start, end, step) {
  if (step === 0) throw new Error('ONNX Slice step 0');
  const lo = step > 0 ? 0 : -1;
  const hi = step > 0 ? dim : dim - 1;
  const clamp = (v) => Math.min(Math.max(v < 0 ? v + dim : v, lo), hi);
  const from = clamp(start);
  const to = clamp(end);
  return { from, step, count: Math.max(0, Math.ceil((to - from) / step)) };
}

function slice(node, [x, starts, ends, axes, steps]) {
  const rank = x.dims.length;
  const ranges = x.dims.map((d) => ({ from: 0, step: 1, count: d }));
  const axisList = axes ? intsOf(axes) : intsOf(starts).map((_, k) => k);
  const stepList = steps ? intsOf(steps) : axisList.map(() => 1);
  axisList.forEach((axis, k) => {
    const a = normAxis(axis, rank);
    ranges[a] = sliceRange(x.dims[a], starts.data[k], ends.data[k], stepList[k]);
  });
  return gather(x, ranges);
}

/** The sub-tensor picked by one {from, step, count} range per axis. */
function gather(x, ranges) {
  const dims = ranges.map((r) => r.count);
  const n = sizeOf(dims);
  const out = alloc(x.type, n);
  const strides = x.dims.map((_, k) => sizeOf(x.dims.slice(k + 1)));
  const index = new Array(dims.length).fill(0);
  for (let flat = 0; flat < n; flat++) {
    let at = 0;
    for (let k = 0; k < dims.length; k++) at += (ranges[k].from + index[k] * ranges[k].step) * strides[k];
    out[flat] = x.data[at];
    for (let k = dims.length - 1; k >= 0; k--) {
      if (++index[k] < dims[k]) break;
      index[k] = 0;
    }
  }
  return tensor(x.type, dims, out);
}

function concat(node, inputs) {
  const rank = inputs[0].dims.length;
  const axis = normAxis(node.attrs.axis, rank);
  const dims = inputs[0].dims.slice();
  dims[axis] = inputs.reduce((s, t) => s + t.dims[axis], 0);
  const outer = sizeOf(dims.slice(0, axis));
  const out = alloc(inputs[0].type, sizeOf(dims));
  const blocks = inputs.map((t) => sizeOf(t.dims.slice(axis)));
  let at = 0;
  for (let o = 0; o < outer; o++) {
    inputs.forEach((t, k) => {
      const block = blocks[k];
      for (let j = 0; j < block; j++) out[at++] = t.data[o * block + j];
    });
  }
  return tensor(inputs[0].type, dims, out);
}

function reduceMax(node, [x, axesInput]) {
  const rank = x.dims.length;
  const listed = axesInput ? intsOf(axesInput) : node.attrs.axes ?? [];
  if (!listed.length && node.attrs.noop_with_empty_axes === 1) return x;
  const axes = new Set(listed.length ? listed.map((a) => normAxis(a, rank)) : x.dims.map((_, k) => k));
  const kept = x.dims.map((d, k) => (axes.has(k) ? 1 : d));
  const out = alloc(x.type, sizeOf(kept)).fill(-Infinity);
  const map = indexMap(x.dims, kept) ?? null;
  for (let k = 0; k < x.data.length; k++) {
    const o = map ? map[k] : k;
    const v = x.data[k];
    if (v > out[o] || Number.isNaN(v)) out[o] = v;
  }
  const keepDims = node.attrs.keepdims ?? 1;
  const dims = keepDims ? kept : x.dims.filter((_, k) => !axes.has(k));
  return tensor(x.type, dims, out);
}

function clip(node, [x, lo, hi]) {
  const min = lo ? lo.data[0] : -Infinity;
  const max = hi ? hi.data[0] : Infinity;
  return elementwise([x], x.type, (v) => (v < min ? min : v > max ? max : v));
}

function where(node, [cond, a, b]) {
  sameType(node, a, b);
  return elementwise([cond, a, b], a.type, (c, x, y) => (c ? x : y));
}

// ----------------------------------------------------------------------------------------
// Gemm and MatMul: dot products of rows with packed weight rows

/** Weights as one Float32Array row of K per output column (N of them), packed once. */
function packRows(b, transposed) {
  const [rows, cols] = b.dims;
  const [n, k] = transposed ? [rows, cols] : [cols, rows];
  let w = b.data;
  if (!transposed) {
    w = new Float32Array(rows * cols);
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) w[c * rows + r] = b.data[r * cols + c];
  }
  return { n, k, data: w };
}

// The dot products are summed in float64, each over k in order. Blocks of four inputs by
// three weight rows keep twelve sums in registers, so each value loaded serves three or four
// products: about three times the speed of one dot product at a time on a batch.

/** sums[i + r, j + c] for r < 4, c < 3: four input rows by three weight rows. */
function block4x3(x, i, w, j, k, n, sums) {
  const a0 = i * k;
  const a1 = a0 + k;
  const a2 = a1 + k;
  const a3 = a2 + k;
  const o0 = j * k;
  const o1 = o0 + k;
  const o2 = o1 + k;
  let s00 = 0, s01 = 0, s02 = 0, s03 = 0, s10 = 0, s11 = 0, s12 = 0, s13 = 0, s20 = 0, s21 = 0, s22 = 0, s23 = 0;
  for (let q = 0; q < k; q++) {
    const x0 = x[a0 + q];
    const x1 = x[a1 + q];
    const x2 = x[a2 + q];
    const x3 = x[a3 + q];
    let v = w[o0 + q];
    s00 += v * x0; s01 += v * x1; s02 += v * x2; s03 += v * x3;
    v = w[o1 + q];
    s10 += v * x0; s11 += v * x1; s12 += v * x2; s13 += v * x3;
    v = w[o2 + q];
    s20 += v * x0; s21 += v * x1; s22 += v * x2; s23 += v * x3;
  }
  const r = i * n + j;
  sums[r] = s00; sums[r + 1] = s10; sums[r + 2] = s20;
  sums[r + n] = s01; sums[r + n + 1] = s11; sums[r + n + 2] = s21;
  sums[r + 2 * n] = s02; sums[r + 2 * n + 1] = s12; sums[r + 2 * n + 2] = s22;
  sums[r + 3 * n] = s03; sums[r + 3 * n + 1] = s13; sums[r + 3 * n + 2] = s23;
}

/** sums[i, j + c] for c < 4: one input row by four weight rows (a batch of one). */
function block1x4(x, i, w, j, k, n, sums) {
  const a = i * k;
  const o0 = j * k;
  const o1 = o0 + k;
  const o2 = o1 + k;
  const o3 = o2 + k;
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (let q = 0; q < k; q++) {
    const v = x[a + q];
    s0 += v * w[o0 + q]; s1 += v * w[o1 + q]; s2 += v * w[o2 + q]; s3 += v * w[o3 + q];
  }
  const r = i * n + j;
  sums[r] = s0; sums[r + 1] = s1; sums[r + 2] = s2; sums[r + 3] = s3;
}

/** The dot product of x[a .. a + k) and w[o .. o + k), summed in order. */
function dotAt(x, a, w, o, k) {
  let s = 0;
  for (let q = 0; q < k; q++) s += x[a + q] * w[o + q];
  return s;
}

/** sums[i, j]: one input row by one weight row. */
function block1x1(x, i, w, j, k, n, sums) {
  sums[i * n + j] = dotAt(x, i * k, w, j * k, k);
}

/** The float64 dot products a[i, :] . w[j, :] as an (m, n) row-major array. */
function denseRows(a, m, packed) {
  const { n, k, data: w } = packed;
  const x = Float64Array.from(a.subarray(0, m * k));
  const sums = new Float64Array(m * n);
  const m4 = m - (m % 4);
  const n3 = n - (n % 3);
  const n4 = n - (n % 4);
  for (let j = 0; j < n3; j += 3) for (let i = 0; i < m4; i += 4) block4x3(x, i, w, j, k, n, sums);
  for (let j = n3; j < n; j++) for (let i = 0; i < m4; i++) block1x1(x, i, w, j, k, n, sums);
  for (let i = m4; i < m; i++) {
    for (let j = 0; j < n4; j += 4) block1x4(x, i, w, j, k, n, sums);
    for (let j = n4; j < n; j++) block1x1(x, i, w, j, k, n, sums);
  }
  return sums;
}

function transpose2d(t) {
  const [r, c] = t.dims;
  const out = new Float32Array(r * c);
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out[j * r + i] = t.data[i * c + j];
  return tensor(t.type, [c, r], out);
}

function gemm(node, [a, b, c], packed) {
  const attrs = node.attrs;
  const left = attrs.transA ? transpose2d(a) : a;
  const weights = packed ?? packRows(b, attrs.transB === 1);
  const [m, depth] = left.dims;
  if (depth !== weights.k) throw new Error(`ONNX Gemm node '${node.name}': inner dims ${depth} and ${weights.k} differ`);
  const sums = denseRows(left.data, m, weights);
  const alpha = attrs.alpha ?? 1;
  const beta = attrs.beta ?? 1;
  const map = c ? indexMap([m, weights.n], c.dims) : null;
  for (let k = 0; k < sums.length; k++) sums[k] = alpha * sums[k] + (c ? beta * c.data[map ? map[k] : k] : 0);
  return tensor(FLOAT, [m, weights.n], Float32Array.from(sums));
}

/**
 * A Gemm that is the graph's output, computed only at the columns asked for: `wanted[i]`
 * lists the columns of row i; the others are -Infinity. Each sum runs in order in float64, as
 * in the full product, so each value is the one the full product gives.
 */
function gemmColumns(node, [a, , c], packed, wanted) {
  const { n, k, data: w } = packed;
  const [m, depth] = a.dims;
  if (depth !== k) throw new Error(`ONNX Gemm node '${node.name}': inner dims ${depth} and ${k} differ`);
  if (wanted.length !== m) throw new Error(`ONNX run: ${wanted.length} lists of wanted columns for a batch of ${m}`);
  const alpha = node.attrs.alpha ?? 1;
  const beta = node.attrs.beta ?? 1;
  const map = c ? indexMap([m, n], c.dims) : null;
  const x = Float64Array.from(a.data);
  const out = new Float32Array(m * n).fill(-Infinity);
  for (let i = 0; i < m; i++) {
    for (const j of wanted[i]) {
      if (!(Number.isInteger(j) && j >= 0 && j < n)) throw new Error(`ONNX run: column ${j} is outside 0..${n - 1}`);
      const at = i * n + j;
      out[at] = alpha * dotAt(x, i * k, w, j * k, k) + (c ? beta * c.data[map ? map[at] : at] : 0);
    }
  }
  return tensor(FLOAT, [m, n], out);
}

function matMul(node, [a, b], packed) {
  const aDims = a.dims.length === 1 ? [1, a.dims[0]] : a.dims;
  const bDims = b.dims.length === 1 ? [b.dims[0], 1] : b.dims;
  const [m, depth] = aDims.slice(-2);
  const cols = bDims[bDims.length - 1];
  if (depth !== bDims[bDims.length - 2]) {
    throw new Error(`ONNX MatMul node '${node.name}': inner dims ${depth} and ${bDims[bDims.length - 2]} differ`);
  }
  const batch = broadcastDims(aDims.slice(0, -2), bDims.slice(0, -2));
  const aMap = indexMap(batch, aDims.slice(0, -2));
  const bMap = indexMap(batch, bDims.slice(0, -2));
  const out = new Float32Array(sizeOf(batch) * m * cols);
  for (let p = 0; p < sizeOf(batch); p++) {
    const ap = aMap ? aMap[p] : p;
    const bp = bMap ? bMap[p] : p;
    const rows = a.data.subarray(ap * m * depth, (ap + 1) * m * depth);
    const weights = packed ?? packRows(tensor(FLOAT, [depth, cols], b.data.subarray(bp * depth * cols, (bp + 1) * depth * cols)), false);
    out.set(denseRows(rows, m, weights), p * m * cols);
  }
  const dims = [...batch, ...(a.dims.length === 1 ? [] : [m]), ...(b.dims.length === 1 ? [] : [cols])];
  return tensor(FLOAT, dims, out);
}

const OPERATORS = {
  Add: arithmetic((x, y) => x + y, (x, y) => x + y),
  And: (node, [a, b]) => elementwise([a, b], BOOL, (x, y) => (x && y ? 1 : 0)),
  Cast: cast,
  Clip: clip,
  Concat: concat,
  Div: arithmetic((x, y) => x / y, (x, y) => Math.trunc(x / y)),
  Expand: expand,
  Gemm: gemm,
  Greater: comparison((x, y) => x > y),
  GreaterOrEqual: comparison((x, y) => x >= y),
  MatMul: matMul,
  Mul: arithmetic((x, y) => x * y, (x, y) => x * y),
  Not: (node, [x]) => elementwise([x], BOOL, (v) => (v ? 0 : 1)),
  ReduceMax: reduceMax,
  Reshape: reshape,
  Shape: shape,
  Slice: slice,
  Sub: arithmetic((x, y) => x - y, (x, y) => x - y),
  Tanh: (node, [x]) => elementwise([x], FLOAT, Math.tanh),
  Unsqueeze: unsqueeze,
  Where: where,
};

/** The operator names this evaluator runs, sorted. */
export const SUPPORTED_OPS = Object.freeze(Object.keys(OPERATORS).sort());

// ----------------------------------------------------------------------------------------
// loading

function checkOpset(model) {
  const onnx = model.opsets.find((o) => o.domain === '' || o.domain === 'ai.onnx');
  if (!onnx) throw new Error('ONNX model imports no ai.onnx opset');
  if (onnx.version < MIN_OPSET) {
    throw new Error(`ONNX opset ${onnx.version} is not supported (this evaluator reads opset ${MIN_OPSET} and later)`);
  }
}

function checkOperators(nodes) {
  const foreign = nodes.filter((n) => n.domain !== '' && n.domain !== 'ai.onnx');
  if (foreign.length) throw new Error(`ONNX operator domain '${foreign[0].domain}' is not supported (node '${foreign[0].name}', ${foreign[0].opType})`);
  const unknown = [...new Set(nodes.map((n) => n.opType))].filter((op) => !OPERATORS[op]).sort();
  if (unknown.length) throw new Error(`ONNX operators not supported by this evaluator: ${unknown.join(', ')}`);
}

function theInput(graph, constants) {
  const inputs = graph.inputs.filter((i) => !constants.has(i.name));
  const names = inputs.map((i) => i.name).join(', ');
  if (inputs.length !== 1) throw new Error(`ONNX graph must have one float input (batch, dim); it has ${inputs.length}: ${names}`);
  const [input] = inputs;
  const dim = input.dims?.[1];
  if (input.elemType !== FLOAT || input.dims?.length !== 2 || !(Number.isInteger(dim) && dim > 0)) {
    const shown = input.dims ? `[${input.dims}]` : 'no shape';
    throw new Error(`ONNX graph input '${input.name}' must be float (batch, dim); it is ${TYPE_NAMES[input.elemType] ?? input.elemType} ${shown}`);
  }
  return { name: input.name, dim };
}

function theOutput(graph) {
  if (graph.outputs.length !== 1) {
    throw new Error(`ONNX graph must have one output; it has ${graph.outputs.length}: ${graph.outputs.map((o) => o.name).join(', ')}`);
  }
  const [output] = graph.outputs;
  const n = output.dims?.[output.dims.length - 1];
  return { name: output.name, dim: Number.isInteger(n) ? n : null };
}

function checkOrder(graph, available) {
  const known = new Set(available);
  for (const node of graph.nodes) {
    for (const name of node.inputs) {
      if (name && !known.has(name)) throw new Error(`ONNX node '${node.name}' (${node.opType}) reads '${name}' before it is computed`);
    }
    node.outputs.forEach((name) => known.add(name));
  }
  const out = graph.outputs[0].name;
  if (!known.has(out)) throw new Error(`ONNX graph output '${out}' is never computed`);
}

/** Gemm and MatMul weights that are initializers, packed once at load. */
function prepare(node, constants) {
  const b = constants.get(node.inputs[1]);
  if (!b || b.type !== FLOAT || b.dims.length !== 2) return null;
  if (node.opType === 'Gemm') return packRows(b, node.attrs.transB === 1);
  if (node.opType === 'MatMul') return packRows(b, false);
  return null;
}

/** Whether the node is a Gemm giving the graph's output from packed weights, so that it can
 * compute only the columns a caller asks for. */
function byColumns(node, packed, outputName) {
  return node.opType === 'Gemm' && packed !== null && !node.attrs.transA && node.outputs[0] === outputName;
}

/** The logits of a batch: each node in turn, from the initializers and the observations. */
function runPlan({ constants, input, output, steps }, obs, batch, wanted) {
  const data = obs instanceof Float32Array ? obs : Float32Array.from(obs);
  if (!Number.isInteger(batch) || batch < 1 || data.length !== batch * input.dim) {
    throw new Error(`ONNX run: ${data.length} values are not ${batch} observations of ${input.dim}`);
  }
  const values = new Map(constants);
  values.set(input.name, tensor(FLOAT, [batch, input.dim], data));
  for (const { node, op, packed, columns } of steps) {
    const args = node.inputs.map((name) => (name ? values.get(name) : null));
    const partial = wanted && columns;
    values.set(node.outputs[0], partial ? gemmColumns(node, args, packed, wanted) : op(node, args, packed));
  }
  const result = values.get(output.name);
  if (result.type !== FLOAT || result.dims.length !== 2 || result.dims[0] !== batch) {
    throw new Error(`ONNX run: output '${output.name}' is ${TYPE_NAMES[result.type]} [${result.dims}], not float (batch, n)`);
  }
  return result.data;
}

/**
 * @typedef {object} OnnxModel
 * @property {string} inputName the graph's float input, (batch, inputDim)
 * @property {string} outputName the graph's one output, (batch, outputDim)
 * @property {number} inputDim length of one observation
 * @property {number|null} outputDim length of one row of logits, when the file states it
 * @property {string[]} opTypes the operators the graph uses, sorted
 * @property {(obs: Float32Array|number[], batch: number, wanted?: number[][]) => Float32Array} run
 *   the logits of a batch of observations (row-major batch x inputDim), row-major batch x
 *   outputDim. With `wanted` (one list of columns per row, e.g. the legal actions), a graph
 *   whose output is a Gemm computes only those columns, each value as the full run gives it,
 *   and the others are -Infinity; any other graph computes every column.
 */

/**
 * Load an ONNX policy from the bytes of its file.
 *
 * @param {Uint8Array|ArrayBuffer} bytes the .onnx file
 * @returns {OnnxModel}
 * @throws {Error} naming what is refused: an operator outside SUPPORTED_OPS, weights in an
 *   external file, an opset before 13, or a graph without one float input and one output
 */
export function loadOnnx(bytes) {
  const buf = ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : new Uint8Array(bytes);
  const model = readModel(buf);
  const graph = model.graph;
  checkOpset(model);
  checkOperators(graph.nodes);
  const constants = new Map(graph.initializers.map((t) => [t.name, tensorOf(t)]));
  const input = theInput(graph, constants);
  const output = theOutput(graph);
  checkOrder(graph, [...constants.keys(), input.name]);
  const plan = {
    constants, input, output,
    steps: graph.nodes.map((node) => {
      const packed = prepare(node, constants);
      return { node, op: OPERATORS[node.opType], packed, columns: byColumns(node, packed, output.name) };
    }),
  };
  const run = (obs, batch, wanted = null) => runPlan(plan, obs, batch, wanted);
  const opTypes = [...new Set(graph.nodes.map((n) => n.opType))].sort();
  return Object.freeze({ inputName: input.name, outputName: output.name, inputDim: input.dim, outputDim: output.dim, opTypes, run });
}

/**
 * The index of the largest logit among legal actions, the first on exact ties (as numpy's
 * argmax over the logits with illegal actions at -inf; greed_env.bots.onnx_backend.masked_argmax).
 *
 * @param {ArrayLike<number>} logits one row of logits
 * @param {ArrayLike<number|boolean>} mask truthy where the action is legal, same length
 * @returns {number}
 * @throws {Error} when the lengths differ or no action is legal
 */
export function maskedArgmax(logits, mask) {
  if (logits.length !== mask.length) throw new Error(`logits (${logits.length}) and mask (${mask.length}) differ in length`);
  let best = -1;
  for (let k = 0; k < logits.length; k++) {
    if (!mask[k]) continue;
    if (Number.isNaN(logits[k])) return k;
    if (best < 0 || logits[k] > logits[best]) best = k;
  }
  if (best < 0) throw new Error('a position without legal actions (chance node or game over)');
  return best;
}
