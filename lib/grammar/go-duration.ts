/*
 * CoreDNS reads every duration in a Corefile (reload's interval and jitter among them) with
 * Go's time.ParseDuration, so a check that is to agree with CoreDNS must accept exactly what
 * it accepts: `1h`, `90s`, `1m30s`, `1.5s`, `500ms`, a bare `0`, and refuse `30` or `1S`.
 * This follows Go's src/time/format.go step by step, overflow rules included.
 */
import { ValidationError } from '../errors.js';

const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n], // µ, MICRO SIGN
  ['\u03bcs', 1_000n], // μ, GREEK SMALL LETTER MU
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const LIMIT = 1n << 63n;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

function leadingDigits(s: string): string {
  let i = 0;
  while (isDigit(s[i])) i++;
  return s.slice(0, i);
}

/** Go's leadingInt: null on overflow. */
function leadingInt(digits: string): bigint | null {
  let x = 0n;
  for (const c of digits) {
    if (x > LIMIT / 10n) return null;
    x = x * 10n + BigInt(c);
    if (x > LIMIT) return null;
  }
  return x;
}

/** Go's leadingFraction: digits past what fits are consumed but ignored. */
function leadingFraction(digits: string): { f: bigint; scale: number } {
  let f = 0n;
  let scale = 1;
  let overflow = false;
  for (const c of digits) {
    if (overflow) continue;
    if (f > (LIMIT - 1n) / 10n) {
      overflow = true;
      continue;
    }
    const y = f * 10n + BigInt(c);
    if (y > LIMIT) {
      overflow = true;
      continue;
    }
    f = y;
    scale *= 10;
  }
  return { f, scale };
}

/** Nanoseconds, as Go's time.ParseDuration computes them; null where it returns an error. */
export function parseGoDuration(text: string): bigint | null {
  let s = text;
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') return null;
  let d = 0n;
  while (s !== '') {
    if (s[0] !== '.' && !isDigit(s[0])) return null;
    const intDigits = leadingDigits(s);
    let v = leadingInt(intDigits);
    if (v === null) return null;
    s = s.slice(intDigits.length);
    let fraction = { f: 0n, scale: 1 };
    let fracDigits = '';
    if (s[0] === '.') {
      s = s.slice(1);
      fracDigits = leadingDigits(s);
      fraction = leadingFraction(fracDigits);
      s = s.slice(fracDigits.length);
    }
    if (intDigits === '' && fracDigits === '') return null;
    let u = 0;
    while (u < s.length && s[u] !== '.' && !isDigit(s[u])) u++;
    const unit = UNITS.get(s.slice(0, u));
    if (unit === undefined) return null;
    s = s.slice(u);
    if (v > LIMIT / unit) return null;
    v *= unit;
    if (fraction.f > 0n) {
      // Go computes this part in float64, and so does a JS number: the results agree to the nanosecond.
      v += BigInt(Math.trunc(Number(fraction.f) * (Number(unit) / fraction.scale)));
      if (v > LIMIT) return null;
    }
    d += v;
    if (d > LIMIT) return null;
  }
  if (neg) return -d;
  return d > LIMIT - 1n ? null : d;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/**
 * Every duration flag and config field, in milliseconds: Go's grammar (`90s`, `1m30s`,
 * `500ms`), or a whole number of seconds (a YAML number, or `"5"`, which lbdns always took).
 */
export function parseDurationMs(field: string, value: unknown, minMs: number, maxMs: number): number {
  let ms: number | null = null;
  if (typeof value === 'number') ms = Number.isInteger(value) ? value * 1000 : null;
  else if (typeof value === 'string') {
    const ns = /^[0-9]+$/.test(value) ? BigInt(value) * 1_000_000_000n : parseGoDuration(value);
    ms = ns === null ? null : Number(ns) / 1e6;
  }
  if (ms === null) throw new ValidationError(field, value, 'is not a duration', 'write it as Go does, e.g. "90s", "1m30s", "500ms" or "1h"');
  // Reported as given: "1s", not the 1000 it was converted to.
  if (ms < minMs || ms > maxMs) throw new ValidationError(field, value, `is not from ${formatMs(minMs)} to ${formatMs(maxMs)}`);
  return ms;
}
