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

// The atom table (interned strings: property names, identifiers) doubles its
// hash when it fills up. Adding 512 atoms here, freed again right away, leaves
// room for at least 512 new names (an event's keys, say) before the next
// rehash, so a call does not rehash every atom on each run.
{
  const names = {};
  for (let i = 0; i < 512; i++) names[`\0hookbox-atom-${i}`] = i;
}
