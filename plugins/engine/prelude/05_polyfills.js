// hookbox prelude, part 0.5: ES2022/ES2023 library functions Node 20 has and
// QuickJS 2021-03-27 lacks (esbuild lowers syntax, not library calls).

function definePolyfill(target, name, value) {
  if (!(name in target)) {
    Object.defineProperty(target, name, { value, writable: true, configurable: true });
  }
}

function relativeIndex(length, index) {
  const i = Math.trunc(Number(index)) || 0;
  return i < 0 ? length + i : i;
}

const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype);

definePolyfill(Object, "hasOwn", (obj, key) => Object.prototype.hasOwnProperty.call(obj, key));

for (const proto of [Array.prototype, String.prototype, TypedArrayPrototype]) {
  definePolyfill(proto, "at", function at(index) {
    const i = relativeIndex(this.length, index);
    return i < 0 || i >= this.length ? undefined : this[i];
  });
}

for (const proto of [Array.prototype, TypedArrayPrototype]) {
  definePolyfill(proto, "findLastIndex", function findLastIndex(fn, self) {
    for (let i = this.length - 1; i >= 0; i--) if (fn.call(self, this[i], i, this)) return i;
    return -1;
  });
  definePolyfill(proto, "findLast", function findLast(fn, self) {
    const i = this.findLastIndex(fn, self);
    return i < 0 ? undefined : this[i];
  });
  definePolyfill(proto, "toReversed", function toReversed() {
    return this.slice().reverse();
  });
  definePolyfill(proto, "toSorted", function toSorted(compare) {
    return this.slice().sort(compare);
  });
  definePolyfill(proto, "with", function withAt(index, value) {
    const i = relativeIndex(this.length, index);
    if (i < 0 || i >= this.length) throw new RangeError("Invalid index : " + index);
    const copy = this.slice();
    copy[i] = value;
    return copy;
  });
}

definePolyfill(Array.prototype, "toSpliced", function toSpliced(...args) {
  const copy = this.slice();
  copy.splice(...args);
  return copy;
});
