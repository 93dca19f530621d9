// deno-lint-ignore-file no-unused-vars -- prelude files are fragments of one function body

// hookbox prelude, part 1: a compact version of Node's util.inspect/format,
// enough for console.log of plain data (objects, arrays, errors, primitives).

function quoteString(s) {
  const q = !s.includes("'") ? "'" : !s.includes('"') ? '"' : !s.includes("`") ? "`" : "'";
  const escaped = s.replace(/[\\\n\t\r\b\f\v]/g, (c) => JSON.stringify(c).slice(1, -1));
  return q + (q === "'" ? escaped.replace(/'/g, "\\'") : escaped) + q;
}

function inspectKey(key) {
  if (typeof key === "symbol") return `[${key.toString()}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : quoteString(key);
}

function inspectPrimitive(value) {
  switch (typeof value) {
    case "string":
      return quoteString(value);
    case "bigint":
      return `${value}n`;
    case "number":
      return Object.is(value, -0) ? "-0" : String(value);
    case "symbol":
      return value.toString();
    case "function":
      return value.name ? `[Function: ${value.name}]` : "[Function (anonymous)]";
    default:
      return String(value);
  }
}

function joinEntries(entries, open, close, indent) {
  if (entries.length === 0) return open + close;
  const start = entries.length + indent + open.length + 10;
  const total = entries.reduce((n, e) => n + e.length, start);
  if (total + entries.length <= 80 && !entries.some((e) => e.includes("\n"))) {
    return `${open} ${entries.join(", ")} ${close}`;
  }
  const pad = " ".repeat(indent + 2);
  return `${open}\n${pad}${entries.join(`,\n${pad}`)}\n${" ".repeat(indent)}${close}`;
}

function inspectValue(value, depth, indent, seen) {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) {
    return inspectPrimitive(value);
  }
  if (typeof value === "function") return inspectPrimitive(value);
  if (seen.includes(value)) return "[Circular *1]";
  if (value instanceof Error) return value.stack ? `${value.stack}`.trimEnd() : String(value);
  if (value instanceof Date) return value.toISOString();
  if (value instanceof RegExp) return String(value);
  const isArray = Array.isArray(value);
  if (depth > 2) return isArray ? "[Array]" : "[Object]";
  seen.push(value);
  const entries = [];
  if (isArray) {
    for (const item of value) entries.push(inspectValue(item, depth + 1, indent + 2, seen));
  }
  for (const key of Object.keys(value)) {
    if (isArray && /^\d+$/.test(key)) continue;
    entries.push(`${inspectKey(key)}: ${inspectValue(value[key], depth + 1, indent + 2, seen)}`);
  }
  seen.pop();
  const ctor = value.constructor && value.constructor.name;
  const prefix = !isArray && ctor && ctor !== "Object" ? `${ctor} ` : "";
  return prefix + joinEntries(entries, isArray ? "[" : "{", isArray ? "]" : "}", indent);
}

/** Node-style `util.inspect` for plain data. */
function inspect(value) {
  return inspectValue(value, 0, 0, []);
}

/** Node-style `util.format`: %s %d %i %f %j %o %O %c %%. */
function format(...args) {
  let first = args[0];
  let rest = 1;
  const out = [];
  if (typeof first === "string") {
    first = first.replace(/%([sdifjoOc%])/g, (m, f) => {
      if (f === "%") return "%";
      if (rest >= args.length) return m;
      const a = args[rest++];
      if (f === "s") return typeof a === "string" ? a : inspectShort(a);
      if (f === "d" || f === "i") return formatNumber(a, f === "i");
      if (f === "f") return String(parseFloat(a));
      if (f === "j") return JSON.stringify(a);
      if (f === "c") return "";
      return inspect(a);
    });
    out.push(first);
  } else {
    rest = 0;
  }
  for (; rest < args.length; rest++) {
    const a = args[rest];
    out.push(typeof a === "string" ? a : inspect(a));
  }
  return out.join(" ");
}

function inspectShort(a) {
  if (typeof a === "bigint") return `${a}n`;
  if (typeof a === "object" && a !== null) return inspect(a);
  return String(a);
}

function formatNumber(a, integer) {
  if (typeof a === "bigint") return `${a}n`;
  if (typeof a === "object" && a !== null) return "NaN";
  const n = Number(a);
  return String(integer ? Math.trunc(n) : n);
}
