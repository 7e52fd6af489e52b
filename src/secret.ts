import { inspect } from 'node:util';

const REDACTED = '[redacted]';

/**
 * A value that must never reach a log line, an error message or `status` output.
 * Every way of turning it into text yields "[redacted]"; only `reveal()` gives the value,
 * so a leak needs a deliberate call that a reviewer can grep for.
 */
export class Secret<T = string> {
  readonly #value: T;

  constructor(value: T) {
    this.#value = value;
  }

  reveal(): T {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}
