/*
 * CoreDNS compiles each `match` regex of a template with Go's regexp.Compile, and a regex it
 * refuses fails plugin setup. Go's RE2 syntax and JavaScript's differ both ways: JavaScript
 * takes lookaround, backreferences and `(?<name>…)`, which Go refuses; Go takes `(?i)`,
 * `(?P<name>…)` and `\pL`, which a JavaScript RegExp refuses. So the check walks the pattern
 * the way Go's regexp/syntax parser (parse.go, with the Perl flags regexp.Compile uses) does,
 * as of Go 1.19, which builds the oldest CoreDNS lbdns supports (1.10.1 in OpenShift 4.13):
 * what later Go added (`(?<name>…)`, loose Unicode class names) is refused here.
 * Go's size and nesting-depth limits are left out: lbdns's largest regex, an alternation of
 * 1,000 names of at most 253 characters, is a tenth of the size limit and nests a few levels.
 * Not re2js: it follows later Go, accepting `(?<name>…)` and Unicode 14 scripts that Go 1.19 refuses.
 */


/** Go's maxRepeat: the largest count in x{n,m}, and the largest product of nested counts. */
const MAX_REPEAT = 1000;

/** Go 1.19's unicode.Categories. */
const CATEGORIES = new Set('C Cc Cf Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs'.split(' '));

/** Go 1.19's unicode.Scripts (Unicode 13.0). */
const SCRIPTS = new Set(
  ('Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali Bhaiksuki Bopomofo Brahmi Braille ' +
    'Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian Chakma Cham Cherokee Chorasmian Common Coptic Cuneiform Cypriot Cyrillic ' +
    'Deseret Devanagari Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan Elymaic Ethiopic Georgian Glagolitic Gothic Grantha Greek ' +
    'Gujarati Gunjala_Gondi Gurmukhi Han Hangul Hanifi_Rohingya Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inherited ' +
    'Inscriptional_Pahlavi Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kayah_Li Kharoshthi Khitan_Small_Script Khmer Khojki ' +
    'Khudawadi Lao Latin Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian Mahajani Makasar Malayalam Mandaic Manichaean Marchen ' +
    'Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar ' +
    'Nabataean Nandinagari New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki Old_Hungarian Old_Italic Old_North_Arabian ' +
    'Old_Permic Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa ' +
    'Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham SignWriting Sinhala Sogdian Sora_Sompeng Soyombo ' +
    'Sundanese Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Takri Tamil Tangut Telugu Thaana Thai Tibetan Tifinagh Tirhuta ' +
    'Ugaritic Vai Wancho Warang_Citi Yezidi Yi Zanabazar_Square').split(' '),
);

const POSIX_CLASSES = new Set(['alnum', 'alpha', 'ascii', 'blank', 'cntrl', 'digit', 'graph', 'lower', 'print', 'punct', 'space', 'upper', 'word', 'xdigit'].flatMap((n) => [`[:${n}:]`, `[:^${n}:]`]));

const PERL_CLASSES = new Set(['d', 'D', 's', 'S', 'w', 'W']);

class Re2Refusal extends Error {}

const refuse = (msg: string): never => {
  throw new Re2Refusal(msg);
};

/** Parse-tree shape, only as far as the repeat-count rule needs it. */
type Node = { readonly kind: 'repeat'; readonly min: number; readonly max: number; readonly sub: Node } | { readonly kind: 'node'; readonly subs: readonly Node[] };

const LEAF: Node = { kind: 'node', subs: [] };

/** Go's repeatIsValid: nested x{n,m} counts must not multiply beyond MAX_REPEAT. */
function repeatIsValid(re: Node, n: number): boolean {
  if (re.kind === 'repeat') {
    let m = re.max;
    if (m === 0) return true;
    if (m < 0) m = re.min;
    if (m > n) return false;
    if (m > 0) n = Math.floor(n / m);
    return repeatIsValid(re.sub, n);
  }
  return re.subs.every((s) => repeatIsValid(s, n));
}

const isAlnum = (c: string): boolean => /^[0-9A-Za-z]$/.test(c);
const isOctal = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '7';
const unhex = (c: string | undefined): number => (c !== undefined && /^[0-9a-fA-F]$/.test(c) ? parseInt(c, 16) : -1);

/** One group level: the alternatives closed by `|` and the sequence being read. */
interface Frame {
  readonly done: Node[];
  current: Node[];
}

class Parser {
  private readonly c: readonly string[];
  private i = 0;
  /** Capturing groups, numbered or named: the indexes `.Match` has beyond the whole match. */
  captures = 0;

  constructor(pattern: string) {
    // Go reads runes; a JavaScript string iterates by code point, which is the same thing here.
    this.c = [...pattern];
  }

  private rest(from = this.i): string {
    return this.c.slice(from).join('');
  }

  parse(): void {
    const frames: Frame[] = [{ done: [], current: [] }];
    const top = (): Frame => frames.at(-1) as Frame;
    let lastWasRepeat = false;
    while (this.i < this.c.length) {
      const ch = this.c[this.i] as string;
      let repeated = false;
      switch (ch) {
        case '(':
          if (this.c[this.i + 1] === '?') {
            if (this.perlFlags()) frames.push({ done: [], current: [] });
          } else {
            this.i++;
            this.captures++;
            frames.push({ done: [], current: [] });
          }
          break;
        case '|':
          top().done.push(...top().current);
          top().current = [];
          this.i++;
          break;
        case ')': {
          if (frames.length < 2) refuse('unexpected )');
          const f = frames.pop() as Frame;
          top().current.push({ kind: 'node', subs: [...f.done, ...f.current] });
          this.i++;
          break;
        }
        case '[':
          this.charClass();
          top().current.push(LEAF);
          break;
        case '*':
        case '+':
        case '?':
          this.repeat(top(), lastWasRepeat, ch, 0, 0, this.i + 1);
          repeated = true;
          break;
        case '{': {
          const r = this.repeatBounds();
          if (r === null) {
            this.i++;
            top().current.push(LEAF);
            break;
          }
          if (r.min < 0 || r.min > MAX_REPEAT || r.max > MAX_REPEAT || (r.max >= 0 && r.min > r.max)) refuse(`invalid repeat count ${this.c.slice(this.i, r.end).join('')}`);
          this.repeat(top(), lastWasRepeat, '{', r.min, r.max, r.end);
          repeated = true;
          break;
        }
        case '\\':
          this.escape(top());
          break;
        default:
          this.i++;
          top().current.push(LEAF);
      }
      lastWasRepeat = repeated;
    }
    if (frames.length !== 1) refuse('missing closing )');
  }

  private repeat(frame: Frame, lastWasRepeat: boolean, op: string, min: number, max: number, end: number): void {
    let after = end;
    if (this.c[after] === '?') after++;
    // Perl refuses stacked operators too; a++ or a*+ (possessive in PCRE) means something RE2 has not.
    if (lastWasRepeat) refuse(`invalid nested repetition operator ${this.c.slice(this.i - 1, after).join('')}: RE2 has no possessive quantifiers`);
    const sub = frame.current.pop();
    if (sub === undefined) refuse(`missing argument to repetition operator ${this.c.slice(this.i, after).join('')}`);
    const node: Node = op === '{' ? { kind: 'repeat', min, max, sub: sub as Node } : { kind: 'node', subs: [sub as Node] };
    if (op === '{' && (min >= 2 || max >= 2) && !repeatIsValid(node, MAX_REPEAT)) refuse(`invalid repeat count: nested counts multiply beyond ${MAX_REPEAT}`);
    frame.current.push(node);
    this.i = after;
  }

  /** Go's parseRepeat: {n}, {n,} or {n,m}; null when the text is no such thing (then `{` is a literal). */
  private repeatBounds(): { min: number; max: number; end: number } | null {
    let j = this.i + 1;
    const int = (): number | null => {
      const start = j;
      if (!/^[0-9]$/.test(this.c[j] ?? '')) return null;
      if (this.c[j] === '0' && /^[0-9]$/.test(this.c[j + 1] ?? '')) return null;
      while (/^[0-9]$/.test(this.c[j] ?? '')) j++;
      const digits = this.c.slice(start, j).join('');
      return digits.length > 8 ? -1 : Number(digits);
    };
    let min = int();
    if (min === null || j >= this.c.length) return null;
    let max = min;
    if (this.c[j] === ',') {
      j++;
      if (j >= this.c.length) return null;
      if (this.c[j] === '}') max = -1;
      else {
        const m = int();
        if (m === null) return null;
        max = m;
        if (max < 0) min = -1;
      }
    }
    if (this.c[j] !== '}') return null;
    return { min, max, end: j + 1 };
  }

  /** `(?…`: flags, a non-capturing group or a named group. True when a group opens. */
  private perlFlags(): boolean {
    const start = this.i;
    const c2 = this.c[start + 2];
    if (c2 === 'P' && this.c[start + 3] === '<' && this.c.length - start > 4) {
      const end = this.c.indexOf('>', start);
      if (end < 0) refuse(`invalid named capture ${this.rest(start)}`);
      const name = this.c.slice(start + 4, end).join('');
      if (!/^[A-Za-z0-9_]+$/.test(name)) refuse(`invalid named capture ${this.c.slice(start, end + 1).join('')}`);
      this.i = end + 1;
      this.captures++;
      return true;
    }
    const three = this.c.slice(start, start + 4).join('');
    if (three.startsWith('(?=') || three.startsWith('(?!')) refuse(`invalid or unsupported Perl syntax ${three.slice(0, 3)}: RE2 has no lookahead`);
    if (three === '(?<=' || three === '(?<!') refuse(`invalid or unsupported Perl syntax ${three}: RE2 has no lookbehind`);
    if (c2 === '<') refuse('invalid or unsupported Perl syntax (?<: write a named group as (?P<name>…), the only form Go 1.19 knows');
    if (c2 === '>') refuse('invalid or unsupported Perl syntax (?>: RE2 has no atomic groups');
    let j = start + 2;
    let sign = 1;
    let sawFlag = false;
    while (j < this.c.length) {
      const c = this.c[j++] as string;
      if ('imsU'.includes(c)) {
        sawFlag = true;
        continue;
      }
      if (c === '-') {
        if (sign < 0) break;
        sign = -1;
        sawFlag = false;
        continue;
      }
      if (c === ':' || c === ')') {
        if (sign < 0 && !sawFlag) break;
        this.i = j;
        return c === ':';
      }
      break;
    }
    return refuse(`invalid or unsupported Perl syntax ${this.c.slice(start, j).join('')}`);
  }

  private escape(frame: Frame): void {
    const next = this.c[this.i + 1];
    if (next !== undefined && 'AbBz'.includes(next)) {
      this.i += 2;
      frame.current.push(LEAF);
      return;
    }
    if (next === 'C') refuse('invalid escape sequence \\C');
    if (next === 'Q') {
      const body = this.c.slice(this.i + 2);
      const end = body.join('').indexOf('\\E');
      const literal = end < 0 ? body : [...body.join('').slice(0, end)];
      for (let k = 0; k < literal.length; k++) frame.current.push(LEAF);
      this.i = end < 0 ? this.c.length : this.i + 2 + literal.length + 2;
      return;
    }
    if (next === 'p' || next === 'P') {
      this.unicodeClass();
      frame.current.push(LEAF);
      return;
    }
    if (next !== undefined && PERL_CLASSES.has(next)) {
      this.i += 2;
      frame.current.push(LEAF);
      return;
    }
    this.singleEscape();
    frame.current.push(LEAF);
  }

  /** Go's parseEscape: one escaped character, in or out of a class. Returns its code point. */
  private singleEscape(): number {
    const start = this.i;
    const c = this.c[this.i + 1];
    if (c === undefined) return refuse('trailing backslash at end of expression');
    this.i += 2;
    const bad = (): never => refuse(`invalid escape sequence ${this.c.slice(start, this.i).join('')}`);
    if (c.codePointAt(0)! < 0x80 && !isAlnum(c)) return c.codePointAt(0)!;
    if (c >= '1' && c <= '7' && !isOctal(this.c[this.i])) {
      return refuse(`invalid escape sequence \\${c}: RE2 has no backreferences`);
    }
    if (c >= '0' && c <= '7') {
      let r = Number(c);
      for (let k = 1; k < 3 && isOctal(this.c[this.i]); k++) r = r * 8 + Number(this.c[this.i++]);
      return r;
    }
    if (c === 'x') {
      if (this.i >= this.c.length) return bad();
      const first = this.c[this.i++];
      if (first === '{') {
        let r = 0;
        let digits = 0;
        for (;;) {
          if (this.i >= this.c.length) return bad();
          const h = this.c[this.i++];
          if (h === '}') break;
          const v = unhex(h);
          if (v < 0) return bad();
          r = r * 16 + v;
          if (r > 0x10ffff) return bad();
          digits++;
        }
        return digits === 0 ? bad() : r;
      }
      const x = unhex(first);
      const y = unhex(this.c[this.i]);
      if (this.i < this.c.length) this.i++;
      return x < 0 || y < 0 ? bad() : x * 16 + y;
    }
    const controls: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11 };
    return controls[c] ?? bad();
  }

  /** `\pL`, `\p{Greek}`, `\P{^Lu}`. */
  private unicodeClass(): void {
    const start = this.i;
    let name: string;
    if (this.c[start + 2] === '{') {
      const end = this.c.indexOf('}', start);
      if (end < 0) refuse(`invalid character class range ${this.rest(start)}`);
      name = this.c.slice(start + 3, end).join('');
      this.i = end + 1;
    } else {
      name = this.c[start + 2] ?? '';
      this.i = Math.min(start + 3, this.c.length);
    }
    if (name.startsWith('^')) name = name.slice(1);
    if (name !== 'Any' && !CATEGORIES.has(name) && !SCRIPTS.has(name)) {
      refuse(`invalid character class range ${this.c.slice(start, this.i).join('')}: not a Unicode category or script Go 1.19 knows (names are case-sensitive)`);
    }
  }

  /** Go's parseClass, from `[` to its `]`. */
  private charClass(): void {
    const whole = this.i;
    this.i++;
    if (this.c[this.i] === '^') this.i++;
    let first = true;
    while (this.i >= this.c.length || this.c[this.i] !== ']' || first) {
      first = false;
      if (this.c[this.i] === '[' && this.c[this.i + 1] === ':' && this.c.length - this.i > 2) {
        const close = this.rest().indexOf(':]', 2);
        if (close >= 0) {
          const name = this.rest().slice(0, close + 2);
          if (!POSIX_CLASSES.has(name)) refuse(`invalid character class range ${name}`);
          this.i += [...name].length;
          continue;
        }
      }
      const next = this.c[this.i + 1];
      if (this.c[this.i] === '\\' && (next === 'p' || next === 'P')) {
        this.unicodeClass();
        continue;
      }
      if (this.c[this.i] === '\\' && next !== undefined && PERL_CLASSES.has(next)) {
        this.i += 2;
        continue;
      }
      const rangeStart = this.i;
      const lo = this.classChar(whole);
      if (this.c[this.i] === '-' && this.i + 1 < this.c.length && this.c[this.i + 1] !== ']') {
        this.i++;
        const hi = this.classChar(whole);
        if (hi < lo) refuse(`invalid character class range ${this.c.slice(rangeStart, this.i).join('')}`);
      }
    }
    this.i++;
  }

  private classChar(whole: number): number {
    const c = this.c[this.i];
    if (c === undefined) return refuse(`missing closing ] in ${this.rest(whole)}`);
    if (c === '\\') return this.singleEscape();
    this.i++;
    return c.codePointAt(0)!;
  }
}

type Re2Result = { readonly error: string } | { readonly captures: number };

/** Why Go's regexp.Compile would refuse `pattern`, or else how many capturing groups it has. */
export function re2Parse(pattern: string): Re2Result {
  const parser = new Parser(pattern);
  try {
    parser.parse();
    return { captures: parser.captures };
  } catch (err) {
    if (!(err instanceof Re2Refusal)) throw err;
    return { error: err.message };
  }
}
