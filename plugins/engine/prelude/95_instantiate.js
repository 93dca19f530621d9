// QuickJS creates most built-in functions lazily, on first access. Walking
// everything reachable from the global object here, while Wizer snapshots the
// engine, puts them into the snapshot, so a call does not rebuild the
// built-ins it touches. Descriptors are read without running getters.
{
  const seen = new Set();
  const queue = [globalThis];
  const follow = (v) => {
    if ((typeof v === "object" && v !== null) || typeof v === "function") queue.push(v);
  };
  while (queue.length > 0) {
    const object = queue.pop();
    if (seen.has(object)) continue;
    seen.add(object);
    for (const key of Reflect.ownKeys(object)) {
      const d = Reflect.getOwnPropertyDescriptor(object, key);
      if (d !== undefined) (follow(d.value), follow(d.get), follow(d.set));
    }
    follow(Reflect.getPrototypeOf(object));
  }
}
