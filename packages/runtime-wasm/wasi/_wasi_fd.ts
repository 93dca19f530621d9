/**
 * File-descriptor and path functions of the WASI shim. Only fds 0 (the event),
 * 1 and 2 (captured) exist; there are no preopens, so every path function
 * answers `ENOTCAPABLE` and every other fd `EBADF`.
 *
 * @module
 */
import { FUEL_PER_BYTE } from "../_fuel.ts";
import { HALTS } from "../instance/_halt.ts";
import type { GuestHost } from "../_host.ts";
import { ERRNO, type WasiFactory } from "./_wasi_errno.ts";

const CHARACTER_DEVICE = 2;
const RIGHTS_STDIO = 0x1ffffffn & ~(1n << 2n) & ~(1n << 5n); // all but fd_seek, fd_tell

const isStdio = (fd: number) => fd >= 0 && fd <= 2;
/** Most iovecs one `fd_read`/`fd_write` may pass (Linux's IOV_MAX). */
export const MAX_IOVS = 1024;

/** `fd_*` functions, each made for an instance's host. */
export const FD_FUNCTIONS: Record<string, WasiFactory> = {
  fd_write: (host) => (fd: number, iovs: number, count: number, out: number) =>
    fdWrite(host, fd, iovs, count, out),
  fd_read: (host) => (fd: number, iovs: number, count: number, out: number) =>
    fdRead(host, fd, iovs, count, out),
  fd_close: () => (fd: number) => (isStdio(fd) ? ERRNO.SUCCESS : ERRNO.BADF),
  fd_fdstat_get: (host) => (fd: number, out: number) => {
    if (!isStdio(fd)) return ERRNO.BADF;
    const view = host.view();
    host.wrote(out, 24);
    view.setUint8(out, CHARACTER_DEVICE);
    view.setUint16(out + 2, 0, true);
    view.setBigUint64(out + 8, RIGHTS_STDIO, true);
    view.setBigUint64(out + 16, 0n, true);
    return ERRNO.SUCCESS;
  },
  fd_filestat_get: (host) => (fd: number, out: number) => {
    if (!isStdio(fd)) return ERRNO.BADF;
    host.wrote(out, 64);
    host.bytes().fill(0, out, out + 64);
    host.view().setUint8(out + 16, CHARACTER_DEVICE);
    return ERRNO.SUCCESS;
  },
  fd_prestat_get: () => () => ERRNO.BADF,
  fd_prestat_dir_name: () => () => ERRNO.BADF,
  fd_seek: () => (fd: number) => (isStdio(fd) ? ERRNO.SPIPE : ERRNO.BADF),
  fd_tell: () => (fd: number) => (isStdio(fd) ? ERRNO.SPIPE : ERRNO.BADF),
  ...Object.fromEntries(
    [
      "advise",
      "allocate",
      "datasync",
      "sync",
      "fdstat_set_flags",
      "fdstat_set_rights",
      "filestat_set_size",
      "filestat_set_times",
      "pread",
      "pwrite",
      "readdir",
      "renumber",
    ].map((name) => [`fd_${name}`, () => unsupported]),
  ),
};

/** `fd_*` functions that exist only for stdio, which does not support them. */
function unsupported(fd: number): number {
  return isStdio(fd) ? ERRNO.NOTSUP : ERRNO.BADF;
}

/** `path_*` functions: no directory is ever preopened. */
export const PATH_FUNCTIONS: Record<string, WasiFactory> = Object.fromEntries(
  [
    "create_directory",
    "filestat_get",
    "filestat_set_times",
    "link",
    "open",
    "readlink",
    "remove_directory",
    "rename",
    "symlink",
    "unlink_file",
  ].map((name) => [`path_${name}`, () => () => ERRNO.NOTCAPABLE]),
);

function fdWrite(host: GuestHost, fd: number, iovs: number, count: number, out: number): number {
  if (fd !== 1 && fd !== 2) return ERRNO.BADF;
  if (count > MAX_IOVS) return ERRNO.INVAL;
  const sink = fd === 1 ? host.stdout : host.stderr;
  const view = host.view();
  const bytes = host.bytes();
  let written = 0;
  for (let i = 0; i < count; i++) {
    const ptr = view.getUint32(iovs + i * 8, true);
    const len = view.getUint32(iovs + i * 8 + 4, true);
    if (ptr + len > bytes.length) return ERRNO.FAULT;
    if (!sink.write(bytes.subarray(ptr, ptr + len))) host.halt(HALTS.output);
    written += len;
  }
  host.meter.charge(count + written * FUEL_PER_BYTE);
  host.wrote(out, 4);
  view.setUint32(out, written, true);
  return ERRNO.SUCCESS;
}

function fdRead(host: GuestHost, fd: number, iovs: number, count: number, out: number): number {
  if (fd !== 0) return ERRNO.BADF;
  if (count > MAX_IOVS) return ERRNO.INVAL;
  const view = host.view();
  const bytes = host.bytes();
  let read = 0;
  for (let i = 0; i < count && host.inputPos < host.input.length; i++) {
    const ptr = view.getUint32(iovs + i * 8, true);
    const len = view.getUint32(iovs + i * 8 + 4, true);
    if (ptr + len > bytes.length) return ERRNO.FAULT;
    const chunk = host.input.subarray(host.inputPos, host.inputPos + len);
    host.wrote(ptr, chunk.length);
    bytes.set(chunk, ptr);
    host.inputPos += chunk.length;
    read += chunk.length;
  }
  host.meter.charge(count + read * FUEL_PER_BYTE);
  host.wrote(out, 4);
  view.setUint32(out, read, true);
  return ERRNO.SUCCESS;
}
