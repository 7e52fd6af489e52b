import type { ColumnType } from 'kysely';

// Column types shared by the table interfaces of src/warehouse/schema.ts. pg returns numeric and
// int8 as strings (exact), timestamptz as Date. Amount columns take digit strings: never JS numbers.

export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type Numeric = ColumnType<string, string | bigint, string | bigint>;
export type Int8 = ColumnType<string, string | number | bigint, string | number | bigint>;
export type Json = ColumnType<unknown, string, string>; // write JSON.stringify'd text: keeps big numbers exact
/** `extra`: a record's unknown fields as JSON text, or null (the default) when it has none. */
export type ExtraJson = ColumnType<unknown, string | null | undefined, string | null>;
export type TextArray = ColumnType<string[], string[], string[]>;
