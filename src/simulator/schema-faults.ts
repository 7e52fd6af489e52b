/**
 * Schema-drift faults (docs/simulator.md, "Control surface", `schemaChanges`): the API's shape
 * changing under a client. Each change applies to every record of one resource in every answer
 * until the faults are reset:
 * `add` puts a field the spec does not list (`value`, or a string when not given), `drop` leaves a
 * field out, `retype` sends a field with another JSON type (`value`, or the number 12345). The
 * field is a path: `mood` at the top level, `location.foo` inside a nested object, `open_hours[].note`
 * inside every item of an array; a change whose parent object is absent does nothing. Pure.
 */

/** The resources a change can target, named like the client's drift rows (docs/schema-drift.md). */
export const SCHEMA_FAULT_RESOURCES = [
  'check_ins',
  'restaurants',
  'challenges',
  'balance',
  'payment_intents',
  'payment_intents.list',
  'members',
  'member_statuses',
  'member_wallets',
  'member_tags',
  'member_check_ins',
  'memberships',
  'locations',
  'location_open_hours',
] as const;
export type SchemaFaultResource = (typeof SCHEMA_FAULT_RESOURCES)[number];

export const SCHEMA_CHANGE_KINDS = ['add', 'drop', 'retype'] as const;
export type SchemaChangeKind = (typeof SCHEMA_CHANGE_KINDS)[number];

export interface SchemaChange {
  resource: SchemaFaultResource;
  change: SchemaChangeKind;
  /** A field of the record: `mood`, `location.foo`, `open_hours[].note`. */
  field: string;
  /** `add` / `retype`: the value sent. */
  value?: unknown;
}

/** Where each resource's records sit in a GET answer: the route, and the list key (null: the body). */
const ROUTES: ReadonlyArray<{ pattern: RegExp; resource: SchemaFaultResource; listKey: string | null }> = [
  { pattern: /^\/check_ins$/, resource: 'check_ins', listKey: 'check_ins' },
  { pattern: /^\/restaurants$/, resource: 'restaurants', listKey: 'restaurants' },
  { pattern: /^\/challenges$/, resource: 'challenges', listKey: 'challenges' },
  { pattern: /^\/balance$/, resource: 'balance', listKey: null },
  { pattern: /^\/payment_intents$/, resource: 'payment_intents.list', listKey: 'payment_intents' },
  { pattern: /^\/payment_intents\/[^/]+$/, resource: 'payment_intents', listKey: null },
  { pattern: /^\/users\/me$/, resource: 'members', listKey: null },
  { pattern: /^\/users\/me\/status$/, resource: 'member_statuses', listKey: null },
  { pattern: /^\/users\/me\/wallets$/, resource: 'member_wallets', listKey: 'wallets' },
  { pattern: /^\/users\/me\/tags$/, resource: 'member_tags', listKey: 'tags' },
  { pattern: /^\/users\/me\/check_ins$/, resource: 'member_check_ins', listKey: 'check_ins' },
  { pattern: /^\/users\/me\/memberships$/, resource: 'memberships', listKey: 'memberships' },
  { pattern: /^\/locations\/[^/]+$/, resource: 'locations', listKey: null },
  { pattern: /^\/locations\/[^/]+\/open_hours$/, resource: 'location_open_hours', listKey: null },
];

/** The answer body with the changes for this route applied; the same text when none applies. */
export function applySchemaChanges(path: string, body: string, changes: readonly SchemaChange[]): string {
  if (changes.length === 0) return body;
  const route = ROUTES.find((candidate) => candidate.pattern.test(path));
  if (route === undefined) return body;
  const mine = changes.filter((change) => change.resource === route.resource);
  if (mine.length === 0) return body;
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const records = route.listKey === null ? [parsed] : parsed[route.listKey];
  if (!Array.isArray(records)) return body;
  for (const record of records as unknown[]) {
    for (const change of mine) applyAt(record, change.field.split('.'), change);
  }
  return JSON.stringify(parsed);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Applies `change` at `path` under `value`: `key[]` steps into every item of that array. */
function applyAt(value: unknown, path: readonly string[], change: SchemaChange): void {
  if (!isObject(value)) return;
  const [step, ...rest] = path;
  if (step === undefined) return;
  if (rest.length > 0) {
    const key = step.endsWith('[]') ? step.slice(0, -2) : step;
    const next = value[key];
    if (step.endsWith('[]')) {
      if (Array.isArray(next)) for (const item of next as unknown[]) applyAt(item, rest, change);
    } else applyAt(next, rest, change);
    return;
  }
  if (change.change === 'drop') delete value[step];
  else if (change.change === 'add') value[step] = change.value ?? 'new in this version';
  else if (Object.hasOwn(value, step)) value[step] = change.value ?? 12345;
}

/** Validates `schemaChanges` from an admin request body. */
export function parseSchemaChanges(value: unknown): SchemaChange[] {
  if (!Array.isArray(value)) throw new TypeError('schemaChanges must be an array');
  return value.map((item: unknown, index) => {
    if (typeof item !== 'object' || item === null)
      throw new TypeError(`schemaChanges[${index}] must be an object`);
    const { resource, change, field, value: sent } = item as Record<string, unknown>;
    if (!(SCHEMA_FAULT_RESOURCES as readonly unknown[]).includes(resource))
      throw new TypeError(
        `schemaChanges[${index}].resource must be one of ${SCHEMA_FAULT_RESOURCES.join(', ')}`,
      );
    if (!(SCHEMA_CHANGE_KINDS as readonly unknown[]).includes(change))
      throw new TypeError(`schemaChanges[${index}].change must be one of ${SCHEMA_CHANGE_KINDS.join(', ')}`);
    if (typeof field !== 'string' || field === '')
      throw new TypeError(`schemaChanges[${index}].field must be a non-empty string`);
    return {
      resource: resource as SchemaFaultResource,
      change: change as SchemaChangeKind,
      field,
      ...(sent === undefined ? {} : { value: sent }),
    };
  });
}
