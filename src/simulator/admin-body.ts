/** Reading the JSON bodies of admin requests (camelCase names, as in the in-process control). */

export type Body = Record<string, unknown>;
export type AdminRoute = [
  method: string,
  path: RegExp,
  handler: (body: Body, params: string[], query: URLSearchParams) => unknown,
];

export const str = (body: Body, key: string): string | undefined =>
  typeof body[key] === 'string' ? body[key] : undefined;
export const num = (body: Body, key: string, fallback: number): number =>
  typeof body[key] === 'number' ? body[key] : fallback;
export const date = (body: Body, key: string): Date => {
  const value = str(body, key);
  const parsed = value === undefined ? NaN : Date.parse(value);
  if (Number.isNaN(parsed)) throw new RangeError(`${key} must be an ISO 8601 timestamp`);
  return new Date(parsed);
};
/** Drops undefined values so the result fits exactOptionalPropertyTypes. */
type Defined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};
export const defined = <T extends object>(value: T): Defined<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Defined<T>;
