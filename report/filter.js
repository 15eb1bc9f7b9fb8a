// The filter language of docs/filter.md, ported from sonde's Go package
// filter (filter.go and match.go) rule for rule: the query is read as
// UTF-8 bytes, as Go reads it, so positions and values are the same. The
// facts a term is judged against (an item) are computed by sonde in Go and
// embedded in the page; only the query is parsed here.
"use strict";
const sondeFilter = (() => {
  const enc = new TextEncoder(), dec = new TextDecoder();
  const FIELDS = ["method", "tool", "id", "dir", "kind", "status", "duration"];
  const SP = 32, QUOTE = 34, COLON = 58, MINUS = 45;
  class SyntaxError_ extends Error {
    constructor(pos, msg) { super("filter: " + msg + " (at character " + (pos + 1) + ")"); this.pos = pos; this.msg = msg; }
  }
  const str = (b, i, j) => dec.decode(b.subarray(i, j));
  const lower = (s) => s.toLowerCase();
  const indexByte = (b, from, c) => { for (let k = from; k < b.length; k++) if (b[k] === c) return k - from; return -1; };
  function isInt(v) {
    if (v.startsWith("-")) v = v.slice(1);
    return v !== "" && /^[0-9]+$/.test(v);
  }
  // goQuote is Go's %q for the short strings the messages quote.
  function goQuote(s) {
    let out = '"';
    for (const ch of s) {
      const c = ch.codePointAt(0);
      if (ch === '"' || ch === "\\") out += "\\" + ch;
      else if (c === 7) out += "\\a"; else if (c === 8) out += "\\b"; else if (c === 12) out += "\\f";
      else if (c === 10) out += "\\n"; else if (c === 13) out += "\\r"; else if (c === 9) out += "\\t"; else if (c === 11) out += "\\v";
      else if (c < 32 || c === 127) out += "\\x" + c.toString(16).padStart(2, "0");
      else if (c === 0xfffd && ch !== "\ufffd") out += "\\ufffd";
      else out += ch;
    }
    return out + '"';
  }
  const MAX = (1n << 63n);
  const UNITS = { "ns": 1n, "us": 1000n, "\u00b5s": 1000n, "\u03bcs": 1000n, "ms": 1000000n, "s": 1000000000n, "m": 60000000000n, "h": 3600000000000n };
  // parseDuration is Go's time.ParseDuration over bytes; it returns a
  // BigInt of nanoseconds or null for an error.
  function parseDuration(b) {
    let i = 0, d = 0n, neg = false;
    if (b.length > 0 && (b[0] === MINUS || b[0] === 43)) { neg = b[0] === MINUS; i++; }
    if (b.length - i === 1 && b[i] === 48) return 0n;
    if (i >= b.length) return null;
    const digit = (c) => c >= 48 && c <= 57;
    while (i < b.length) {
      let v = 0n, f = 0n, scale = 1;
      if (!(b[i] === 46 || digit(b[i]))) return null;
      const p0 = i;
      while (i < b.length && digit(b[i])) {
        if (v > MAX / 10n) return null;
        v = v * 10n + BigInt(b[i] - 48);
        if (v > MAX) return null;
        i++;
      }
      const pre = i !== p0;
      let post = false;
      if (i < b.length && b[i] === 46) {
        i++;
        const p1 = i;
        let overflow = false;
        while (i < b.length && digit(b[i])) {
          if (!overflow) {
            if (f > (MAX - 1n) / 10n) overflow = true;
            else {
              const y = f * 10n + BigInt(b[i] - 48);
              if (y > MAX) overflow = true; else { f = y; scale *= 10; }
            }
          }
          i++;
        }
        post = i !== p1;
      }
      if (!pre && !post) return null;
      const u0 = i;
      while (i < b.length && !(b[i] === 46 || digit(b[i]))) i++;
      if (i === u0) return null;
      const unit = UNITS[str(b, u0, i)];
      if (unit === undefined) return null;
      if (v > MAX / unit) return null;
      v *= unit;
      if (f > 0n) {
        v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
        if (v > MAX) return null;
      }
      d += v;
      if (d > MAX) return null;
    }
    if (neg) return -d;
    if (d > MAX - 1n) return null;
    return d;
  }
  // value reads a plain or quoted value at i.
  function value(b, i) {
    if (i < b.length && b[i] === QUOTE) {
      const end = indexByte(b, i + 1, QUOTE);
      if (end < 0) throw new SyntaxError_(i, "a quote that is not closed");
      return { v: str(b, i + 1, i + 1 + end), quoted: true, next: i + 2 + end };
    }
    let end = indexByte(b, i, SP);
    if (end < 0) end = b.length - i;
    return { v: str(b, i, i + end), quoted: false, next: i + end };
  }
  function set(t, v, pos) {
    switch (t.field) {
      case "id": t.value = v; return;
      case "dir":
        v = lower(v);
        if (v !== "in" && v !== "out") throw new SyntaxError_(pos, "dir is in or out");
        break;
      case "kind":
        v = lower(v);
        if (!["request", "response", "notification", "error"].includes(v))
          throw new SyntaxError_(pos, "kind is request, response, notification or error");
        break;
      case "duration": {
        const op = [">=", "<=", ">", "<", "="].find((o) => v.startsWith(o));
        if (op === undefined) throw new SyntaxError_(pos, "duration needs a comparison: >500ms, <2s, >=1s, <=10ms or =0s");
        const rest = v.slice(op.length);
        const d = parseDuration(enc.encode(rest));
        if (d === null) throw new SyntaxError_(pos + op.length, goQuote(rest) + " is not a duration (like 500ms or 2s)");
        t.op = op; t.dur = d;
        return;
      }
    }
    t.value = lower(v);
  }
  // parse is filter.Parse: a list of terms, or a thrown SyntaxError_.
  function parse(s) {
    const b = enc.encode(s), terms = [];
    let i = 0;
    for (;;) {
      while (i < b.length && b[i] === SP) i++;
      if (i >= b.length) return { src: s, terms };
      const start = i, t = { field: "text", not: false, value: "", op: "", dur: 0n };
      if (b[i] === MINUS && i + 1 < b.length && b[i + 1] !== SP) { t.not = true; i++; }
      let j = i;
      while (j < b.length && b[j] >= 97 && b[j] <= 122) j++;
      if (j < b.length && b[j] === COLON && j > i) {
        const name = str(b, i, j);
        if (!FIELDS.includes(name)) throw new SyntaxError_(i, "unknown field " + goQuote(name) + " (fields: " + FIELDS.join(", ") + ")");
        t.field = name;
        i = j + 1;
      }
      let { v, quoted, next } = value(b, i);
      if (v === "") throw new SyntaxError_(start, "a term without a value");
      if (t.field === "id" && (quoted || !isInt(v))) v = '"' + v + '"';
      set(t, v, i);
      terms.push(t);
      i = next;
    }
  }
  const containsFold = (s, sub) => sub === "" || (s || "").toLowerCase().includes(sub);
  function payloadContainsFold(p, utf8ok, sub) {
    if (sub === "") return true;
    if (p.includes(sub)) return true;
    return utf8ok && p.toLowerCase().includes(sub);
  }
  // termMatch is term.match of match.go over an item of the page.
  function termMatch(t, it, payload, utf8ok) {
    switch (t.field) {
      case "method": return containsFold(it.method, t.value);
      case "tool": return containsFold(it.tool, t.value);
      case "id": return (it.id || "") === t.value;
      case "dir": return (it.dir || "") === t.value;
      case "kind": return (it.kind || "") === t.value;
      case "status":
        if (t.value === "error") return !!(it.failed || it.isError);
        if (t.value === "iserror") return !!it.isError;
        return (it.status || []).some((s) => s.toLowerCase() === t.value);
      case "duration": {
        if (!it.hasDur) return false;
        const d = BigInt(it.dur || 0);
        switch (t.op) {
          case ">": return d > t.dur;
          case "<": return d < t.dur;
          case ">=": return d >= t.dur;
          case "<=": return d <= t.dur;
        }
        return d === t.dur;
      }
    }
    return containsFold(it.method, t.value) || containsFold(it.tool, t.value) ||
      containsFold(it.id, t.value) || payloadContainsFold(payload, utf8ok, t.value);
  }
  // match is Filter.Match: every term must match.
  function match(f, it, payload, utf8ok) {
    for (const t of f.terms) if (termMatch(t, it, payload, utf8ok) === t.not) return false;
    return true;
  }
  return { parse, match, parseDuration, SyntaxError: SyntaxError_ };
})();
