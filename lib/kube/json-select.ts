/**
 * Which parts of a JSON document to build: `true` builds the whole value; an object builds
 * only the keys it names, each with its own selection; its `'*'` key applies to every element
 * of an array. A value whose shape does not fit its selection (a string where an object was
 * expected) is built whole, so a malformed answer still reaches the code that reports it.
 */
export type Selection = true | { readonly [key: string]: Selection };

const enum State {
  Value,
  Raw,
  KeyOrEnd,
  Key,
  Colon,
  CommaOrEndObject,
  ElementOrEnd,
  CommaOrEndArray,
  Done,
}

interface Frame {
  readonly selection: { readonly [key: string]: Selection };
  readonly target: Record<string, unknown> | unknown[];
  key: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isOpen = (c: number): boolean => c === 0x7b || c === 0x5b;
const isClose = (c: number): boolean => c === 0x7d || c === 0x5d;
const isDelimiter = (c: number): boolean => c === 0x2c || isClose(c) || isSpace(c);

/**
 * Builds the selected parts of a JSON document from its bytes as they arrive, and nothing
 * else: a list of Nodes is mostly the kubelet's image lists, which this walks over without
 * making a string or an object of them. What is built is parsed by JSON.parse; what is
 * skipped is only checked for balanced brackets and closed strings.
 *
 * Hand-written: the streaming JSON parsers on npm (stream-json, @streamparser/json) make a
 * token of every value, skipped or not, and are several times slower than JSON.parse.
 */
export class JsonSelector {
  private state = State.Value;
  private readonly stack: Frame[] = [];
  /** The selection of the value about to start. */
  private pending: Selection | undefined;
  private result: unknown;
  private offset = 0;

  // A value passed over (`capture` false) or built by JSON.parse (`capture` true).
  private capture = false;
  private rawDepth = 0;
  private inString = false;
  private escaped = false;
  private primitive = false;
  private parts: Buffer[] = [];
  private keyParts: Buffer[] = [];

  /** `onTopLevel` is told of each built member of the document's top object as soon as it is complete. */
  constructor(
    selection: Selection,
    private readonly onTopLevel?: (key: string, value: unknown) => void,
  ) {
    this.pending = selection;
  }

  write(chunk: Buffer): void {
    let i = 0;
    let rawStart = 0;
    const n = chunk.length;
    while (i < n) {
      switch (this.state) {
        case State.Raw: {
          if (this.inString) {
            const end = this.stringEnd(chunk, i);
            if (end < 0) {
              i = n;
              continue;
            }
            i = end;
            this.inString = false;
            if (this.rawDepth === 0) this.finishRaw(chunk, rawStart, i);
            continue;
          }
          const c = chunk[i] as number;
          if (this.primitive) {
            if (isDelimiter(c)) {
              this.finishRaw(chunk, rawStart, i);
              continue;
            }
            i += 1;
            continue;
          }
          i += 1;
          if (c === QUOTE) this.inString = true;
          else if (isOpen(c)) this.rawDepth += 1;
          else if (isClose(c)) {
            this.rawDepth -= 1;
            if (this.rawDepth === 0) this.finishRaw(chunk, rawStart, i);
          }
          continue;
        }
        case State.Key: {
          const end = this.stringEnd(chunk, i);
          this.keyParts.push(chunk.subarray(i, end < 0 ? n : end));
          i = end < 0 ? n : end;
          if (end >= 0) this.finishKey();
          continue;
        }
        default:
          break;
      }
      const c = chunk[i] as number;
      if (isSpace(c)) {
        i += 1;
        continue;
      }
      switch (this.state) {
        case State.Value:
          rawStart = i;
          i = this.startValue(c, i);
          break;
        case State.KeyOrEnd:
          if (c === 0x7d) {
            i += 1;
            this.closeFrame();
          } else if (c === QUOTE) {
            i += 1;
            this.state = State.Key;
          } else this.fail(i, 'a key or }');
          break;
        case State.Colon:
          if (c !== 0x3a) this.fail(i, ':');
          i += 1;
          this.state = State.Value;
          break;
        case State.CommaOrEndObject:
          if (c === 0x2c) this.state = State.KeyOrEnd;
          else if (c === 0x7d) this.closeFrame();
          else this.fail(i, ', or }');
          i += 1;
          break;
        case State.ElementOrEnd:
          if (c === 0x5d) {
            i += 1;
            this.closeFrame();
          } else {
            this.pending = this.elementSelection();
            rawStart = i;
            i = this.startValue(c, i);
          }
          break;
        case State.CommaOrEndArray:
          if (c === 0x2c) {
            this.pending = this.elementSelection();
            this.state = State.Value;
          } else if (c === 0x5d) this.closeFrame();
          else this.fail(i, ', or ]');
          i += 1;
          break;
        case State.Done:
          this.fail(i, 'the end of the document');
          break;
        default:
          break;
      }
    }
    if (this.state === State.Raw && this.capture) this.parts.push(chunk.subarray(rawStart));
    this.offset += n;
  }

  /** The selected parts; throws when the document is incomplete. */
  end(): unknown {
    if (this.state === State.Raw && this.primitive && this.stack.length === 0) this.finishRaw(Buffer.alloc(0), 0, 0);
    if (this.state !== State.Done) throw new Error(`the JSON ends early, after ${this.offset} bytes`);
    return this.result;
  }

  private elementSelection(): Selection | undefined {
    return (this.stack[this.stack.length - 1] as Frame).selection['*'];
  }

  /** At the first byte `c` (index `i`) of a value whose selection is `pending`; returns the next index. */
  private startValue(c: number, i: number): number {
    const selection = this.pending;
    this.pending = undefined;
    if (typeof selection === 'object' && isOpen(c)) {
      const array = c === 0x5b;
      // A selection by key does not fit an array, nor a selection of elements an object.
      if (array === ('*' in selection)) {
        this.stack.push({ selection, target: array ? [] : {}, key: '' });
        this.state = array ? State.ElementOrEnd : State.KeyOrEnd;
        return i + 1;
      }
    }
    this.capture = selection !== undefined;
    this.parts = [];
    this.state = State.Raw;
    this.primitive = c !== QUOTE && !isOpen(c);
    if (this.primitive) return i;
    this.inString = c === QUOTE;
    this.rawDepth = this.inString ? 0 : 1;
    return i + 1;
  }

  private finishRaw(chunk: Buffer, start: number, end: number): void {
    let value: unknown;
    if (this.capture) {
      this.parts.push(chunk.subarray(start, end));
      const text = (this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts)).toString('utf8');
      this.parts = [];
      try {
        value = JSON.parse(text);
      } catch (err) {
        throw new Error(`invalid JSON before byte ${this.offset + end}: ${(err as Error).message}`);
      }
    }
    this.primitive = false;
    this.deliver(value, this.capture);
  }

  /**
   * Inside a string at `i`: the index just after its closing quote, or -1 when it goes on past
   * this chunk (then `escaped` says whether the chunk ended inside an escape).
   */
  private stringEnd(chunk: Buffer, i: number): number {
    let from = i;
    if (this.escaped) {
      this.escaped = false;
      from += 1;
    }
    for (;;) {
      const quote = chunk.indexOf(QUOTE, from);
      // A quote ends the string unless an odd run of backslashes comes before it.
      let run = quote < 0 ? chunk.length : quote;
      const end = run;
      while (run > from && chunk[run - 1] === BACKSLASH) run -= 1;
      const odd = (end - run) % 2 === 1;
      if (quote < 0) {
        this.escaped = odd;
        return -1;
      }
      if (!odd) return quote + 1;
      from = quote + 1;
    }
  }

  private finishKey(): void {
    const bytes = this.keyParts.length === 1 ? (this.keyParts[0] as Buffer) : Buffer.concat(this.keyParts);
    this.keyParts = [];
    const frame = this.stack[this.stack.length - 1] as Frame;
    frame.key = bytes.includes(BACKSLASH) ? (JSON.parse(`"${bytes.toString('utf8')}`) as string) : bytes.toString('utf8', 0, bytes.length - 1);
    this.pending = Object.hasOwn(frame.selection, frame.key) ? frame.selection[frame.key] : undefined;
    this.state = State.Colon;
  }

  private closeFrame(): void {
    const frame = this.stack.pop() as Frame;
    this.deliver(frame.target, true);
  }

  /** A value is complete: it goes into its parent (when it was built) and the parent's state moves on. */
  private deliver(value: unknown, built: boolean): void {
    const parent = this.stack[this.stack.length - 1];
    if (parent === undefined) {
      this.result = value;
      this.state = State.Done;
      return;
    }
    if (Array.isArray(parent.target)) {
      if (built) parent.target.push(value);
      this.state = State.CommaOrEndArray;
    } else {
      if (built) {
        parent.target[parent.key] = value;
        if (this.stack.length === 1) this.onTopLevel?.(parent.key, value);
      }
      this.state = State.CommaOrEndObject;
    }
  }

  private fail(i: number, expected: string): never {
    throw new Error(`invalid JSON at byte ${this.offset + i}: expected ${expected}`);
  }
}
