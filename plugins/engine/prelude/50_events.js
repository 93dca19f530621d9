// deno-lint-ignore-file no-unused-vars -- prelude files are fragments of one function body

// hookbox prelude, part 5: a minimal EventEmitter (node:events).

class EventEmitter {
  #listeners = new Map();
  on(name, fn) {
    const list = this.#listeners.get(name) ?? [];
    this.#listeners.set(name, [...list, fn]);
    this._listenerAdded?.(name);
    return this;
  }
  addListener(name, fn) {
    return this.on(name, fn);
  }
  once(name, fn) {
    const wrapper = (...args) => {
      this.off(name, wrapper);
      fn.apply(this, args);
    };
    wrapper.listener = fn;
    return this.on(name, wrapper);
  }
  off(name, fn) {
    const list = this.#listeners.get(name) ?? [];
    this.#listeners.set(name, list.filter((f) => f !== fn && f.listener !== fn));
    return this;
  }
  removeListener(name, fn) {
    return this.off(name, fn);
  }
  removeAllListeners(name) {
    if (name === undefined) this.#listeners.clear();
    else this.#listeners.delete(name);
    return this;
  }
  emit(name, ...args) {
    const list = this.#listeners.get(name);
    if (list === undefined || list.length === 0) {
      if (name === "error") throw args[0];
      return false;
    }
    for (const fn of list) fn.apply(this, args);
    return true;
  }
  listenerCount(name) {
    return (this.#listeners.get(name) ?? []).length;
  }
  listeners(name) {
    return (this.#listeners.get(name) ?? []).map((f) => f.listener ?? f);
  }
  setMaxListeners() {
    return this;
  }
}
