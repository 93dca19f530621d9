// hookbox prelude, part 4: URL and URLSearchParams. A compact parser for
// absolute and relative URLs: special schemes get an authority, a normalised
// path and default ports dropped; other schemes keep an opaque path.

const SPECIAL_PORTS = {
  "http:": "80",
  "https:": "443",
  "ws:": "80",
  "wss:": "443",
  "ftp:": "21",
  "file:": "",
};
const URL_RE = /^([a-zA-Z][a-zA-Z0-9+.-]*:)?(\/\/([^/?#]*))?([^?#]*)(\?[^#]*)?(#.*)?$/;

function formEncode(s) {
  return encodeURIComponent(s).replace(/%20/g, "+").replace(
    /[!'()~]/g,
    (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase(),
  );
}

function formDecode(s) {
  try {
    return decodeURIComponent(s.replace(/\+/g, " "));
  } catch {
    return s;
  }
}

class URLSearchParams {
  #list = [];
  #onChange;
  constructor(init = "", onChange) {
    this.#onChange = onChange;
    if (typeof init === "string") this.#parse(init);
    else if (init instanceof URLSearchParams) this.#list = [...init];
    else if (init && typeof init[Symbol.iterator] === "function") {
      this.#list = [...init].map(([k, v]) => [String(k), String(v)]);
    } else if (init) this.#list = Object.entries(init).map(([k, v]) => [k, String(v)]);
  }
  #parse(text) {
    this.#list = text.replace(/^\?/, "").split("&").filter(Boolean).map((pair) => {
      const i = pair.indexOf("=");
      return i < 0
        ? [formDecode(pair), ""]
        : [formDecode(pair.slice(0, i)), formDecode(pair.slice(i + 1))];
    });
  }
  #changed() {
    if (this.#onChange) this.#onChange(this.toString());
  }
  get size() {
    return this.#list.length;
  }
  append(k, v) {
    this.#list.push([String(k), String(v)]);
    this.#changed();
  }
  delete(k) {
    this.#list = this.#list.filter(([n]) => n !== k);
    this.#changed();
  }
  get(k) {
    const e = this.#list.find(([n]) => n === k);
    return e ? e[1] : null;
  }
  getAll(k) {
    return this.#list.filter(([n]) => n === k).map(([, v]) => v);
  }
  has(k) {
    return this.#list.some(([n]) => n === k);
  }
  set(k, v) {
    const i = this.#list.findIndex(([n]) => n === k);
    if (i < 0) this.#list.push([String(k), String(v)]);
    else {this.#list = this.#list.filter(([n], j) => n !== k || j === i).map((
        e,
        j,
      ) => (j === i ? [e[0], String(v)] : e)
      );}
    this.#changed();
  }
  sort() {
    this.#list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    this.#changed();
  }
  forEach(fn, self) {
    for (const [k, v] of this.#list) fn.call(self, v, k, this);
  }
  keys() {
    return this.#list.map(([k]) => k)[Symbol.iterator]();
  }
  values() {
    return this.#list.map(([, v]) => v)[Symbol.iterator]();
  }
  entries() {
    return this.#list.map((e) => [...e])[Symbol.iterator]();
  }
  [Symbol.iterator]() {
    return this.entries();
  }
  toString() {
    return this.#list.map(([k, v]) => `${formEncode(k)}=${formEncode(v)}`).join("&");
  }
}

function normalizePath(path) {
  const out = [];
  for (const seg of path.split("/").slice(1)) {
    if (seg === "..") out.length > 0 && out.pop();
    else if (seg !== ".") out.push(seg);
  }
  const last = path.split("/").pop();
  if (last === "." || last === "..") out.push("");
  return "/" + out.join("/");
}

// Control characters and non-ASCII (whole surrogate pairs) are percent-encoded.
const NON_PRINTABLE =
  // deno-lint-ignore no-control-regex
  /[\u0000-\u001f\u007f]|[\u0080-\ud7ff\ue000-\uffff]|[\ud800-\udbff][\udc00-\udfff]/g;

function encodePart(s, extra) {
  return s.replace(extra, (c) => encodeURIComponent(c)).replace(
    NON_PRINTABLE,
    (c) => encodeURIComponent(c),
  );
}

function parseUrl(input, base) {
  const text = String(input).trim().replace(/[\t\n\r]/g, "");
  const m = URL_RE.exec(text.replace(/\\/g, "/"));
  if (!m) return null;
  let [, protocol, , authority, path, search = "", hash = ""] = m;
  if (!protocol) {
    if (!base) return null;
    protocol = base.protocol;
    if (authority === undefined) {
      authority = base.hostname + (base.port ? `:${base.port}` : "");
      if (base.username) {
        authority = `${base.username}${base.password ? ":" + base.password : ""}@${authority}`;
      }
      if (path === "") {
        path = base.pathname;
        if (!m[5]) search = base.search;
      } else if (!path.startsWith("/")) {
        path = base.pathname.replace(/[^/]*$/, "") + path;
      }
    }
  }
  protocol = protocol.toLowerCase();
  const special = protocol in SPECIAL_PORTS;
  if (!special) {
    return {
      protocol,
      username: "",
      password: "",
      hostname: authority ?? "",
      port: "",
      pathname: path,
      search,
      hash,
      special,
    };
  }
  if (authority === undefined || (authority === "" && protocol !== "file:")) return null;
  const at = authority.lastIndexOf("@");
  const userinfo = at < 0 ? "" : authority.slice(0, at);
  const hostport = at < 0 ? authority : authority.slice(at + 1);
  const hp = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(hostport);
  if (!hp || /[\s<>^|%]/.test(hp[1])) return null;
  const port = hp[2] && String(Number(hp[2])) !== SPECIAL_PORTS[protocol]
    ? String(Number(hp[2]))
    : "";
  const [username = "", password = ""] = userinfo ? userinfo.split(/:(.*)/s) : [];
  return {
    protocol,
    username: encodePart(username, /[ "#<>?`{}/:;=@[\]^|]/g),
    password: encodePart(password, /[ "#<>?`{}/:;=@[\]^|]/g),
    hostname: hp[1].toLowerCase(),
    port,
    pathname: encodePart(normalizePath(path || "/"), /[ "<>`{}]/g),
    search: search === "?" ? "" : encodePart(search, /[ "<>]/g),
    hash: hash === "#" ? "" : encodePart(hash, /[ "<>`]/g),
    special,
  };
}

class URL {
  #u;
  #params;
  constructor(input, base) {
    const b = base === undefined ? undefined : base instanceof URL ? base.#u : parseUrl(base);
    if (base !== undefined && !b) throw new TypeError(`Invalid base URL: ${base}`);
    const u = parseUrl(input, b);
    if (!u) {
      throw Object.assign(new TypeError(`Invalid URL: ${input}`), {
        code: "ERR_INVALID_URL",
        input: String(input),
      });
    }
    this.#u = u;
    this.#params = new URLSearchParams(u.search, (s) => {
      this.#u.search = s ? `?${s}` : "";
    });
  }
  static canParse(input, base) {
    try {
      new URL(input, base);
      return true;
    } catch {
      return false;
    }
  }
  get protocol() {
    return this.#u.protocol;
  }
  get username() {
    return this.#u.username;
  }
  get password() {
    return this.#u.password;
  }
  get hostname() {
    return this.#u.hostname;
  }
  get port() {
    return this.#u.port;
  }
  get host() {
    return this.#u.hostname + (this.#u.port ? `:${this.#u.port}` : "");
  }
  get origin() {
    return this.#u.special && this.#u.protocol !== "file:"
      ? `${this.#u.protocol}//${this.host}`
      : "null";
  }
  get pathname() {
    return this.#u.pathname;
  }
  set pathname(v) {
    this.#u.pathname = this.#u.special
      ? normalizePath(String(v).startsWith("/") ? String(v) : `/${v}`)
      : String(v);
  }
  get search() {
    return this.#u.search;
  }
  set search(v) {
    const s = String(v).replace(/^\?/, "");
    this.#u.search = s ? `?${s}` : "";
    this.#params = new URLSearchParams(s, (t) => {
      this.#u.search = t ? `?${t}` : "";
    });
  }
  get hash() {
    return this.#u.hash;
  }
  set hash(v) {
    const s = String(v).replace(/^#/, "");
    this.#u.hash = s ? `#${s}` : "";
  }

  get searchParams() {
    return this.#params;
  }
  get href() {
    const u = this.#u;
    const auth = u.username ? `${u.username}${u.password ? ":" + u.password : ""}@` : "";
    const slashes = u.special || u.hostname ? "//" : "";
    return `${u.protocol}${slashes}${auth}${this.host}${u.pathname}${u.search}${u.hash}`;
  }
  toString() {
    return this.href;
  }
  toJSON() {
    return this.href;
  }
}

defineGlobal("URL", URL);
defineGlobal("URLSearchParams", URLSearchParams);
