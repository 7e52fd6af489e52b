import { describe, expect, it } from 'vitest';
import { MigrationError, pendingMigrations } from '../../../src/warehouse/migrate.js';

describe('which migrations migrate applies', () => {
  it('the known ones not applied yet, oldest first', () => {
    expect(pendingMigrations(['b_2', 'a_1', 'c_3'], ['a_1'])).toEqual(['b_2', 'c_3']);
    expect(pendingMigrations(['a_1'], ['a_1'])).toEqual([]);
  });

  it('refuses a database with a migration this version does not know, or applied out of order', () => {
    expect(() => pendingMigrations(['a_1'], ['a_1', 'z_9'])).toThrow(MigrationError);
    expect(() => pendingMigrations(['a_1', 'b_2'], ['b_2'])).toThrow(/out of order/);
  });
});
