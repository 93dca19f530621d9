"use strict";
/**
 * Event input and protocol output for the built-in hooks (SPEC §3).
 *
 * A hook is written as a pure handler: `runHook(name, handler)` reads the
 * event from stdin, calls `handler(event)` and turns its return value into
 * exit code, stdout and stderr; `hookFunction(name, handler)` is the same
 * handler as a function-style hook's default export (the built-in hooks use
 * it). Handlers return `allow()`, `block(reason)` or `respond(fields)`, and
 * call `invalid(message)` for an event they cannot use. Only JSON, strings
 * and `fs.readFileSync(0)` are used, so the same code runs under `node` and
 * compiled to WebAssembly.
 */
const fs = require("fs");

/** An event the hook cannot work with: reported on one line, exit 1. */
class InvalidEvent extends Error {}

/** Let the action go ahead, no output. */
function allow() {
  return { exitCode: 0, stdout: "", stderr: "" };
}

/** Block with `reason` (exit 2, reason on stderr). */
function block(reason) {
  return { exitCode: 2, stdout: "", stderr: reason + "\n" };
}

/** Exit 0 with JSON control fields on stdout (`decision`, `modified_output`, ...). */
function respond(fields) {
  return { exitCode: 0, stdout: JSON.stringify(fields) + "\n", stderr: "" };
}

/** Stop the hook: the event is unusable. */
function invalid(message) {
  throw new InvalidEvent(message);
}

/** Parses the event text; it must be a JSON object. */
function parseEvent(text) {
  if (text.trim() === "") invalid("no event on stdin");
  let event;
  try {
    event = JSON.parse(text);
  } catch {
    // The parser's message differs between engines; keep stderr identical.
    invalid("event is not valid JSON");
  }
  return checkEvent(event);
}

/** The event, which must be a JSON object. */
function checkEvent(event) {
  if (event === null || typeof event !== "object" || Array.isArray(event)) {
    invalid("event must be a JSON object");
  }
  return event;
}

/** Reads a string field; absent or null gives `fallback`, another type is invalid. */
function stringField(object, field, fallback) {
  const value = object[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== "string") invalid("field " + field + " must be a string");
  return value;
}

function oneLine(err) {
  const message = err instanceof Error ? err.message : String(err);
  return message.split("\n")[0];
}

function settle(name, handler, readEvent) {
  try {
    return handler(readEvent()) || allow();
  } catch (err) {
    const kind = err instanceof InvalidEvent ? "" : "internal error: ";
    return { exitCode: 1, stdout: "", stderr: name + ": " + kind + oneLine(err) + "\n" };
  }
}

/** Runs `handler` on the event from stdin and writes the protocol result. */
function runHook(name, handler) {
  let text = "";
  try {
    text = fs.readFileSync(0, "utf8");
  } catch {
    text = "";
  }
  const result = settle(name, handler, () => parseEvent(text));
  if (result.stdout) process.stdout.write(result.stdout);
  if (result.stderr) process.stderr.write(result.stderr);
  process.exitCode = result.exitCode;
}

/**
 * The function-style form of {@link runHook}: `export default
 * hookFunction(name, handler)`. hookbox evaluates the hook's modules once,
 * when the plugin is built, and each call runs only `handler` on the event
 * the engine parsed — the same answers for every JSON event. Malformed stdin
 * never reaches the handler: the engine reports it (exit 1).
 */
function hookFunction(name, handler) {
  return (event) => {
    const result = settle(name, handler, () => checkEvent(event));
    if (result.stdout) process.stdout.write(result.stdout);
    if (result.stderr) process.stderr.write(result.stderr);
    return result.exitCode;
  };
}

module.exports = { allow, block, respond, invalid, stringField, runHook, hookFunction };
