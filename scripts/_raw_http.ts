/**
 * A lean HTTP/1.1 keep-alive client for load tests: one TCP connection,
 * one request at a time, the request head written by hand and the answer
 * read by its `content-length`. It costs the load generator a fraction of
 * what `fetch` costs, so on a small machine the server being measured gets
 * the cores instead of the client (what `wrk` or `oha` do for HTTP servers).
 * Only what `hookbox serve` answers is understood: no chunked bodies, no
 * redirects.
 *
 * @module
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const HEAD_END = [13, 10, 13, 10];
/** Largest answer head or body this client accepts. */
const MAX_ANSWER = 64 << 20;

/** An answer: status and body bytes. */
export interface RawAnswer {
  status: number;
  body: Uint8Array;
}

/** One keep-alive connection to `http://host:port`. */
export class RawHttpConnection {
  #conn: Deno.TcpConn;
  #buffer = new Uint8Array(64 * 1024);
  #start = 0;
  #end = 0;

  private constructor(conn: Deno.TcpConn) {
    this.#conn = conn;
  }

  /** Connects to the server at `url` (`http:` only). */
  static async open(url: string): Promise<RawHttpConnection> {
    const { hostname, port } = new URL(url);
    const conn = await Deno.connect({ hostname, port: Number(port) });
    conn.setNoDelay(true);
    return new RawHttpConnection(conn);
  }

  /** Sends one request and reads its whole answer. */
  async request(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<RawAnswer> {
    const payload = encoder.encode(body);
    let head = `${method} ${path} HTTP/1.1\r\nhost: load\r\ncontent-length: ${payload.length}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    const headBytes = encoder.encode(`${head}\r\n`);
    const out = new Uint8Array(headBytes.length + payload.length);
    out.set(headBytes);
    out.set(payload, headBytes.length);
    for (let written = 0; written < out.length;) {
      written += await this.#conn.write(out.subarray(written));
    }
    const headEnd = await this.#until(HEAD_END);
    const headText = decoder.decode(this.#buffer.subarray(this.#start, headEnd));
    this.#start = headEnd + HEAD_END.length;
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(headText)?.[1]);
    const length = /\r\ncontent-length: *(\d+)/i.exec(headText)?.[1];
    if (!Number.isInteger(status) || length === undefined) {
      throw new Error(`unexpected answer head: ${JSON.stringify(headText.slice(0, 200))}`);
    }
    const size = Number(length);
    if (size > MAX_ANSWER) throw new Error(`answer of ${size} bytes`);
    while (this.#end - this.#start < size) await this.#fill();
    const answer = this.#buffer.slice(this.#start, this.#start + size);
    this.#start += size;
    return { status, body: answer };
  }

  /** Closes the connection. */
  close(): void {
    this.#conn.close();
  }

  /** Index of `needle` in the unread bytes, reading more until it is there. */
  async #until(needle: number[]): Promise<number> {
    let from = this.#start;
    for (;;) {
      for (let i = from; i + needle.length <= this.#end; i++) {
        if (needle.every((byte, k) => this.#buffer[i + k] === byte)) return i;
      }
      from = Math.max(this.#start, this.#end - needle.length + 1);
      const shift = this.#start;
      await this.#fill();
      from -= shift - this.#start;
    }
  }

  /** Reads more bytes after the unread ones, compacting or growing the buffer. */
  async #fill(): Promise<void> {
    if (this.#start > 0) {
      this.#buffer.copyWithin(0, this.#start, this.#end);
      this.#end -= this.#start;
      this.#start = 0;
    }
    if (this.#end === this.#buffer.length) {
      if (this.#buffer.length >= MAX_ANSWER * 2) throw new Error("answer too large");
      const grown = new Uint8Array(this.#buffer.length * 2);
      grown.set(this.#buffer.subarray(0, this.#end));
      this.#buffer = grown;
    }
    const n = await this.#conn.read(this.#buffer.subarray(this.#end));
    if (n === null) throw new Error("connection closed by the server");
    this.#end += n;
  }
}
