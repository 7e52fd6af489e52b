/**
 * Schema-drift faults (docs/simulator.md, "Faults"): the API's shape changing under a client. Each
 * change applies to every record of one resource in every answer until the faults are reset:
 * `add` puts a field the spec does not list (`value`, or a string when not given), `drop` leaves a
 * field out, `retype` sends a field with another JSON type (`value`, or the number 12345). Pure.
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
] as const;
export type SchemaFaultResource = (typeof SCHEMA_FAULT_RESOURCES)[number];

export const SCHEMA_CHANGE_KINDS = ['add', 'drop', 'retype'] as const;
export type SchemaChangeKind = (typeof SCHEMA_CHANGE_KINDS)[number];

export interface SchemaChange {
  resource: SchemaFaultResource;
  change: SchemaChangeKind;
  /** A top-level field of the record. */
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
    if (typeof record !== 'object' || record === null) continue;
    const fields = record as Record<string, unknown>;
    for (const change of mine) {
      if (change.change === 'drop') delete fields[change.field];
      else if (change.change === 'add') fields[change.field] = change.value ?? 'new in this version';
      else if (Object.hasOwn(fields, change.field)) fields[change.field] = change.value ?? 12345;
    }
  }
  return JSON.stringify(parsed);
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
