/**
 * secret-redactor cases.
 *
 * @module
 */
import type { HookCase } from "./_cases.ts";
import { outputEvent } from "./_events.ts";

const hook = "secret-redactor";

function redacted(name: string, output: unknown, modified: unknown, reason: string): HookCase {
  return {
    hook,
    name,
    event: outputEvent(output),
    exitCode: 0,
    stdout: { decision: "allow", modified_output: modified, reason },
  };
}

function untouched(name: string, output: unknown): HookCase {
  return { hook, name, event: outputEvent(output), exitCode: 0 };
}

// Test fixtures: documented example values, not real credentials.
const AWS = "AKIA" + "IOSFODNN7EXAMPLE";
const GH = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789";
const GH_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz";
const SLACK = "xoxb-" + "123456789012-abcdefghijklmnop";
const JWT =
  "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const KEY =
  "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----";

/** secret-redactor: redacted and untouched outputs. */
export const redactorCases: HookCase[] = [
  redacted(
    "redacts an AWS access key",
    `id=${AWS} ok`,
    "id=[REDACTED:aws_access_key] ok",
    "redacted 1 secret (aws_access_key)",
  ),
  redacted(
    "redacts GitHub tokens",
    `${GH} and ${GH_PAT}`,
    "[REDACTED:github_token] and [REDACTED:github_token]",
    "redacted 2 secrets (github_token x2)",
  ),
  redacted(
    "redacts a Slack token",
    `SLACK ${SLACK}`,
    "SLACK [REDACTED:slack_token]",
    "redacted 1 secret (slack_token)",
  ),
  redacted(
    "redacts a private key block",
    `key:\n${KEY}\nafter`,
    "key:\n[REDACTED:private_key]\nafter",
    "redacted 1 secret (private_key)",
  ),
  redacted(
    "redacts an unterminated private key to the end",
    "x\n-----BEGIN PRIVATE KEY-----\nMIIEv",
    "x\n[REDACTED:private_key]",
    "redacted 1 secret (private_key)",
  ),
  redacted("redacts a JWT", `token ${JWT}.`, "token [REDACTED:jwt].", "redacted 1 secret (jwt)"),
  redacted(
    "redacts a bearer token, keeps the scheme",
    "Authorization: Bearer abcdefghijklmnop1234",
    "Authorization: Bearer [REDACTED:bearer_token]",
    "redacted 1 secret (bearer_token)",
  ),
  redacted(
    "redacts password assignments",
    'password=hunter2 DB_PASSWORD: "s3cr3t pass"',
    'password=[REDACTED:password] DB_PASSWORD: "[REDACTED:password]"',
    "redacted 2 secrets (password x2)",
  ),
  redacted(
    "redacts api_key and client_secret values",
    "api_key: sk_live_1234567890 client_secret='abcdefgh1234'",
    "api_key: [REDACTED:credential] client_secret='[REDACTED:credential]'",
    "redacted 2 secrets (credential x2)",
  ),
  redacted(
    "redacts the password in a URL",
    "postgres://app:p4ssw0rd@db:5432/app",
    "postgres://app:[REDACTED:url_credentials]@db:5432/app",
    "redacted 1 secret (url_credentials)",
  ),
  redacted(
    "redacts emails",
    "From: Alice <alice.smith+x@mail.example.co.uk>",
    "From: Alice <[REDACTED:email]>",
    "redacted 1 secret (email)",
  ),
  redacted(
    "redacts Luhn-valid card numbers",
    "visa 4111 1111 1111 1111, amex 378282246310005",
    "visa [REDACTED:credit_card], amex [REDACTED:credit_card]",
    "redacted 2 secrets (credit_card x2)",
  ),
  redacted("redacts US SSNs", "ssn: 123-45-6789", "ssn: [REDACTED:ssn]", "redacted 1 secret (ssn)"),
  redacted(
    "keeps the shape of an object output",
    {
      stdout: `AWS_ACCESS_KEY_ID=${AWS}`,
      exit: 0,
      env: { DB_PASSWORD: "hunter2", HOME: "/root" },
      lines: ["a", "bob@example.com"],
    },
    {
      stdout: "AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key]",
      exit: 0,
      env: { DB_PASSWORD: "[REDACTED:password]", HOME: "/root" },
      lines: ["a", "[REDACTED:email]"],
    },
    "redacted 3 secrets (aws_access_key, password, email)",
  ),
  redacted(
    "redacts values under secret-looking keys whatever they look like",
    [{ api_key: "short", token: "t", secret: "$SECRET", n: 1 }],
    [{ api_key: "[REDACTED:credential]", token: "[REDACTED:credential]", secret: "$SECRET", n: 1 }],
    "redacted 2 secrets (credential x2)",
  ),
  redacted(
    "counts several kinds in one string",
    `key ${AWS} mail bob@example.com card 4111-1111-1111-1111 ssn 078-05-1121`,
    "key [REDACTED:aws_access_key] mail [REDACTED:email] card [REDACTED:credit_card] ssn [REDACTED:ssn]",
    "redacted 4 secrets (aws_access_key, email, credit_card, ssn)",
  ),
  untouched("leaves clean text alone", "total 12\ndrwxr-xr-x 2 user user 4096 src"),
  untouched(
    "leaves Luhn-invalid and prefix-less numbers",
    "order 4111 1111 1111 1112, ts 1700000000000, id 79927398713",
  ),
  untouched(
    "leaves git remotes and retina file names",
    "git@github.com:owner/repo.git icon@2x.png",
  ),
  untouched(
    "leaves placeholders and short token counts",
    'password: ${DB_PASSWORD} api_key=<your key> total_tokens: 1234 "token": "abc"',
  ),
  untouched("leaves invalid SSNs", "000-12-3456 666-12-3456 123-00-4567"),
  untouched("leaves a structured output of clean strings alone", {
    items: ["a", "b", { c: "ok", token_count: "12" }],
    n: 3,
  }),
  untouched("leaves numbers, booleans and null", { n: 4111111111111111, ok: true, v: null }),
  untouched("accepts a missing tool_output", undefined),
];
